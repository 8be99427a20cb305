/**
 * What kube-controller-manager keeps in every active namespace, done by the
 * server itself: the `default` ServiceAccount (serviceaccounts controller)
 * and the `kube-root-ca.crt` ConfigMap holding the cluster CA
 * (root-ca-cert-publisher). Both are created when a namespace appears and
 * re-created when deleted, never in a Terminating namespace.
 */
import { asRecord, asString } from '../../k8s/raw-json.ts';
import type { KubeObject } from '../../k8s/types.ts';
import type { ObjectOperations } from './operations.ts';
import type { RequestContext } from './resource-def.ts';
import type { ResourceRegistry } from './resources.ts';
import type { StoreEvent } from './storage.ts';

export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
export const DEFAULT_SERVICE_ACCOUNT = 'default';

export interface NamespaceDefaultsDeps {
  ops: ObjectOperations;
  registry: ResourceRegistry;
  /** The cluster CA (PEM); without it no kube-root-ca.crt ConfigMap is published. */
  caPem: string | undefined;
  track: (label: string, fn: () => Promise<void>) => void;
  systemContext: () => RequestContext;
}

export class NamespaceDefaults {
  readonly #deps: NamespaceDefaultsDeps;

  constructor(deps: NamespaceDefaultsDeps) {
    this.#deps = deps;
  }

  onEvent(e: StoreEvent): void {
    if (e.resource === '/namespaces' && e.type === 'ADDED') {
      this.#ensure(asString(e.object.metadata?.name) ?? '');
      return;
    }
    const name = asString(e.object.metadata?.name);
    const ours = (e.resource === '/serviceaccounts' && name === DEFAULT_SERVICE_ACCOUNT) || (e.resource === '/configmaps' && name === ROOT_CA_CONFIGMAP);
    if (e.type === 'DELETED' && ours) this.#ensure(e.namespace);
  }

  #ensure(namespace: string): void {
    if (namespace === '') return;
    this.#deps.track(`namespace defaults ${namespace}`, async () => {
      const { ops, registry } = this.#deps;
      const ns = ops.store.get('/namespaces', '', namespace);
      if (ns === undefined || ns.metadata?.deletionTimestamp !== undefined || asString(asRecord(ns.status)?.['phase']) === 'Terminating') return;
      const sa = registry.get('', 'v1', 'serviceaccounts');
      if (sa !== undefined && ops.store.get('/serviceaccounts', namespace, DEFAULT_SERVICE_ACCOUNT) === undefined) {
        await ops.create(sa, namespace, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: DEFAULT_SERVICE_ACCOUNT } }, this.#deps.systemContext());
      }
      const cm = registry.get('', 'v1', 'configmaps');
      const caPem = this.#deps.caPem;
      if (cm !== undefined && caPem !== undefined && ops.store.get('/configmaps', namespace, ROOT_CA_CONFIGMAP) === undefined) {
        const body: KubeObject = {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: ROOT_CA_CONFIGMAP, annotations: { 'kubernetes.io/description': 'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.' } },
          data: { 'ca.crt': caPem },
        };
        await ops.create(cm, namespace, body, this.#deps.systemContext());
      }
    });
  }
}
