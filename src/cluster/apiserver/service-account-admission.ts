/**
 * The ServiceAccount admission plug-in (k8s.io/kubernetes/plugin/pkg/admission/serviceaccount),
 * for pods CREATE:
 *
 * - `spec.serviceAccountName` defaults to `default` (or to the deprecated
 *   `spec.serviceAccount` alias), and the alias is kept equal to it, as the
 *   v1 conversion shows it;
 * - the account must exist: 403 `error looking up service account <ns>/<name>:
 *   serviceaccount "<name>" not found`; the `default` account is created with
 *   each namespace, asynchronously, so its lookup is retried a few times as
 *   upstream's is;
 * - unless automounting is off (pod first, then account), every container
 *   and init container mounts a projected `kube-api-access-<random>` volume
 *   (token, kube-root-ca.crt, namespace) at
 *   /var/run/secrets/kubernetes.io/serviceaccount;
 * - the account's imagePullSecrets are copied when the pod names none.
 * Mirror pods (static pods of a kubelet) are left alone.
 */
import { asArray, asRecord, asString } from '../../k8s/raw-json.ts';
import type { KubeObject } from '../../k8s/types.ts';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.ts';
import type { Status } from './errors.ts';
import { randomNameSuffix } from './operations.ts';
import { admissionForbidden } from './priority-admission.ts';
import type { ObjectStore } from './storage.ts';

export const SERVICE_ACCOUNT_PLUGIN = 'ServiceAccount';
export const SERVICE_ACCOUNT_ORDER = 110;
export const DEFAULT_SERVICE_ACCOUNT_NAME = 'default';
export const TOKEN_VOLUME_PREFIX = 'kube-api-access-';
export const TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';
/** Bound tokens in projected volumes: one hour plus the 7 s upstream adds to spot stale tokens. */
const TOKEN_EXPIRATION_SECONDS = 3607;
/** How many times the `default` account is looked up again before giving up (upstream: 10). */
const DEFAULT_ACCOUNT_ATTEMPTS = 10;

function isPodRequest(a: AdmissionAttributes): boolean {
  return a.subresource === '' && a.resource.group === '' && a.resource.plural === 'pods' && a.operation === 'CREATE' && a.object !== undefined;
}

function isMirrorPod(pod: KubeObject): boolean {
  return asRecord(pod.metadata?.annotations)?.[MIRROR_POD_ANNOTATION] !== undefined;
}

/** The projected volume of the service account token (serviceaccount.TokenVolumeSource). */
export function tokenVolumeSource(): Record<string, unknown> {
  return {
    defaultMode: 420,
    sources: [
      { serviceAccountToken: { expirationSeconds: TOKEN_EXPIRATION_SECONDS, path: 'token' } },
      { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ],
  };
}

function mountToken(spec: Record<string, unknown>): void {
  const volumes = (asArray(spec['volumes']) ?? []).map(asRecord).filter((v): v is Record<string, unknown> => v !== undefined);
  const existing = volumes.find((v) => (asString(v['name']) ?? '').startsWith(TOKEN_VOLUME_PREFIX));
  const volumeName = existing !== undefined ? (asString(existing['name']) ?? '') : `${TOKEN_VOLUME_PREFIX}${randomNameSuffix()}`;
  let needsVolume = false;
  for (const key of ['initContainers', 'containers']) {
    for (const c of asArray(spec[key]) ?? []) {
      const container = asRecord(c);
      if (container === undefined) continue;
      const mounts = asArray(container['volumeMounts']) ?? [];
      if (mounts.some((m) => asRecord(m)?.['mountPath'] === TOKEN_MOUNT_PATH)) continue;
      container['volumeMounts'] = [...mounts, { name: volumeName, readOnly: true, mountPath: TOKEN_MOUNT_PATH }];
      needsVolume = true;
    }
  }
  if (existing === undefined && needsVolume) spec['volumes'] = [...(asArray(spec['volumes']) ?? []), { name: volumeName, projected: tokenVolumeSource() }];
}

function lookupError(a: AdmissionAttributes, name: string): Status {
  return admissionForbidden(a, `error looking up service account ${a.namespace}/${name}: serviceaccount ${JSON.stringify(name)} not found`);
}

/** Lets in-flight work of the server (the namespace's default account) finish. */
function yieldToPendingWork(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export function serviceAccountAdmission(store: ObjectStore): AdmissionPlugin {
  const lookup = async (namespace: string, name: string): Promise<KubeObject | undefined> => {
    const attempts = name === DEFAULT_SERVICE_ACCOUNT_NAME ? DEFAULT_ACCOUNT_ATTEMPTS : 1;
    for (let i = 0; i < attempts; i++) {
      if (i > 0) await yieldToPendingWork();
      const sa = store.get('/serviceaccounts', namespace, name);
      if (sa !== undefined) return sa;
    }
    return undefined;
  };
  return {
    name: SERVICE_ACCOUNT_PLUGIN,
    order: SERVICE_ACCOUNT_ORDER,
    mutate: async (a) => {
      if (!isPodRequest(a)) return undefined;
      const pod = a.object as KubeObject;
      if (isMirrorPod(pod)) return undefined;
      const spec = asRecord(pod['spec']) ?? {};
      pod['spec'] = spec;
      let name = asString(spec['serviceAccountName']) ?? '';
      if (name === '') name = asString(spec['serviceAccount']) ?? '';
      if (name === '') name = DEFAULT_SERVICE_ACCOUNT_NAME;
      spec['serviceAccountName'] = name;
      spec['serviceAccount'] = name;
      const sa = await lookup(a.namespace, name);
      if (sa === undefined) return { allowed: false, status: lookupError(a, name) };
      const automount = typeof spec['automountServiceAccountToken'] === 'boolean' ? spec['automountServiceAccountToken'] : sa['automountServiceAccountToken'] !== false;
      if (automount) mountToken(spec);
      const pullSecrets = asArray(spec['imagePullSecrets']) ?? [];
      const saSecrets = asArray(sa['imagePullSecrets']) ?? [];
      if (pullSecrets.length === 0 && saSecrets.length > 0) spec['imagePullSecrets'] = saSecrets.map((s) => ({ name: asString(asRecord(s)?.['name']) ?? '' }));
      return undefined;
    },
    validate: async (a) => {
      if (!isPodRequest(a)) return undefined;
      const pod = a.object as KubeObject;
      const spec = asRecord(pod['spec']) ?? {};
      const name = asString(spec['serviceAccountName']) ?? '';
      if (isMirrorPod(pod)) {
        return name === '' ? undefined : { allowed: false, status: admissionForbidden(a, 'a mirror pod may not reference service accounts') };
      }
      if (name === '') {
        return { allowed: false, status: admissionForbidden(a, `no service account specified for pod ${a.namespace}/${asString(pod.metadata?.name) ?? ''}`) };
      }
      if ((await lookup(a.namespace, name)) === undefined) return { allowed: false, status: lookupError(a, name) };
      return undefined;
    },
  };
}
