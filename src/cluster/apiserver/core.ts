/**
 * The API server without its HTTP front: registry, store, admission chain,
 * the write pipeline, the in-server controllers (CRDs, namespaces) and the
 * objects every cluster starts with. The HTTP server (server.ts) and the test
 * control API (control.ts) both drive this object; extensions receive it.
 *
 * Extension points (all plain fields or methods, no subclassing):
 * - `registry.register(def)` / `registry.setSubresourceHandler(...)`;
 * - `admission.register(plugin)` (mutating and validating phases); the
 *   built-in plug-ins, the admission webhooks and the eviction/binding
 *   subresources are installed by admission-setup.ts;
 * - `customResourceStrategy` — wraps the strategy of each served CRD version
 *   (schema validation, pruning, defaulting);
 * - `routes.push(route)` — extra HTTP paths (e.g. `/openapi/v2`);
 * - `formatters.push(formatter)` — alternative response encodings (e.g. Table);
 * - `store.watch(undefined, ...)` — every write, for in-process controllers.
 * Authorization (`authorizer`), the ServiceAccount tokens (`serviceAccountTokens`, with the
 * `serviceaccounts/token` subresource) and the authenticator over them and the static tokens
 * (`staticTokens`, filled by the HTTP front) live here too, so TokenReview answers from it.
 */
import type { Clock } from '../../clock/clock.ts';
import type { Races } from '../../clock/races.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { AdmissionChain } from './admission.ts';
import { Authenticator } from './authentication.ts';
import { Authorizer } from './authorization.ts';
import { ClusterRoleAggregation } from './clusterrole-aggregation.ts';
import type { ApiServerHost, ResponseFormatter, Route } from './extension-host.ts';
import { installAdmission } from './admission-setup.ts';
import type { AdmissionWebhooks } from './admission-webhooks.ts';
import { builtinResources } from './builtin-resources.ts';
import { CrdController, type CustomResourceStrategyFactory } from './crd-controller.ts';
import { SERVER_VERSION } from './discovery.ts';
import { finalizeSubresource, namespaceLifecycleAdmission, NamespaceController } from './namespace-lifecycle.ts';
import { NamespaceDefaults } from './namespace-defaults.ts';
import { installOpenApi } from './openapi/openapi.ts';
import { ObjectOperations, seededIdentities } from './operations.ts';
import type { RequestContext, ResourceDef, UserInfo } from './resource-def.ts';
import { ResourceRegistry } from './resources.ts';
import { ObjectStore } from './storage.ts';
import { installCustomResourceSchemas } from './custom-resource-schema.ts';
import { ServiceAllocator } from './strategies/service.ts';
import { installTablePrinting } from './table/table.ts';
import { SYSTEM_PRIORITY_CLASSES } from './strategies/policy.ts';
import { ServiceAccountTokens, TokenRequestHandler } from './service-account-tokens.ts';
import { BOOTSTRAP_RBAC, RBAC_GROUP } from './strategies/rbac.ts';

export const SYSTEM_USER: UserInfo = { username: 'system:apiserver', uid: 'apiserver', groups: ['system:masters', 'system:authenticated'] };

export const INITIAL_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

export interface ApiServerCoreOptions {
  clock: Clock;
  /** Events kept for watch resume and consistent pagination (default 10,000). */
  historyLimit?: number;
  /** The cluster CA, published in every namespace as the kube-root-ca.crt ConfigMap. */
  caPem?: string;
  /** Race mode: random latencies for watch events and admission webhook calls. */
  races?: Races;
  /** Admission webhooks are called from a worker thread of their own (webhook-thread.ts); for servers on the real clock. */
  webhookThread?: boolean;
}

export class ApiServerCore implements ApiServerHost {
  readonly clock: Clock;
  /** Race mode (undefined: none): watch deliveries and webhook calls take random clock time. */
  readonly races: Races | undefined;
  /** Admission webhooks are called from a worker thread (webhook-thread.ts). */
  readonly webhookThread: boolean;
  readonly registry = new ResourceRegistry();
  readonly store: ObjectStore;
  readonly admission = new AdmissionChain();
  readonly ops: ObjectOperations;
  readonly serviceAllocator = new ServiceAllocator();
  readonly routes: Route[] = [];
  readonly formatters: ResponseFormatter[] = [];
  /** Admission webhooks (and where service references lead): admission-webhooks.ts. */
  readonly webhooks: AdmissionWebhooks;
  /** `system:masters`, then RBAC over the stored roles and bindings (authorization.ts). */
  readonly authorizer: Authorizer;
  /** The ServiceAccount tokens this server issues (TokenRequest) and accepts (service-account-tokens.ts). */
  readonly serviceAccountTokens: ServiceAccountTokens;
  /** Bearer tokens and who they are: the admin's, users tests add (read at every request). */
  readonly staticTokens = new Map<string, UserInfo>();
  /** Who a bearer token is (authentication.ts): requests, and TokenReview. */
  readonly authenticator: Authenticator;
  /** The strategy of a custom resource version: the base one unless an extension wraps it. */
  customResourceStrategy: CustomResourceStrategyFactory = (_crd, _version, base) => base;
  readonly #pending = new Set<Promise<void>>();

  constructor(options: ApiServerCoreOptions) {
    this.clock = options.clock;
    this.races = options.races;
    this.webhookThread = options.webhookThread === true;
    this.store = new ObjectStore(options.historyLimit === undefined ? {} : { historyLimit: options.historyLimit });
    this.ops = new ObjectOperations({
      store: this.store,
      registry: this.registry,
      admission: this.admission,
      now: () => this.clock.now(),
      ...(this.races === undefined ? {} : { identities: seededIdentities(this.races) }),
    });
    this.authorizer = new Authorizer(this.store);
    this.serviceAccountTokens = new ServiceAccountTokens({ store: this.store, clock: this.clock });
    this.authenticator = new Authenticator({ tokens: this.staticTokens, serviceAccounts: this.serviceAccountTokens, authorizer: this.authorizer });
    for (const def of builtinResources({ serviceAllocator: this.serviceAllocator, authorizer: this.authorizer, authenticator: this.authenticator })) this.registry.register(def);
    this.registry.setSubresourceHandler('', 'v1', 'namespaces', 'finalize', finalizeSubresource(this.ops, this.registry));
    this.registry.setSubresourceHandler('', 'v1', 'serviceaccounts', 'token', new TokenRequestHandler({ tokens: this.serviceAccountTokens, store: this.store, now: () => this.clock.now() }));
    this.admission.register(namespaceLifecycleAdmission(this.ops));
    this.webhooks = installAdmission(this);
    installCustomResourceSchemas(this);
    installTablePrinting(this);
    installOpenApi(this);

    const track = (label: string, fn: () => Promise<void>) => this.track(label, fn);
    const systemContext = () => this.systemContext();
    const crds = new CrdController({ ops: this.ops, registry: this.registry, strategyFor: () => this.customResourceStrategy, now: () => this.clock.now(), track, systemContext });
    const namespaces = new NamespaceController({ ops: this.ops, registry: this.registry, track, systemContext });
    const defaults = new NamespaceDefaults({ ops: this.ops, registry: this.registry, caPem: options.caPem, track, systemContext });
    const aggregation = new ClusterRoleAggregation({ ops: this.ops, registry: this.registry, track, systemContext });
    this.store.watch(undefined, undefined, undefined, (e) => {
      crds.onEvent(e);
      namespaces.onEvent(e);
      defaults.onEvent(e);
      aggregation.onEvent(e);
      if (e.type === 'DELETED' && e.resource === '/services') this.serviceAllocator.release(e.object);
    });
  }

  /** A context for the server's own writes (controllers, bootstrap). */
  systemContext(dryRun = false): RequestContext {
    // Recorded in managedFields as the real server's own writes are: manager `kube-apiserver`.
    return { user: SYSTEM_USER, dryRun, warnings: [], userAgent: `kube-apiserver/${SERVER_VERSION.gitVersion}` };
  }

  /** Runs follow-up work of the in-server controllers as a tracked activity. */
  track(label: string, fn: () => Promise<void>): void {
    const p = this.clock.activity.run(label, fn).catch(() => {});
    this.#pending.add(p);
    void p.finally(() => this.#pending.delete(p));
  }

  /** Resolves when the in-server controllers have nothing running. */
  async idle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  /** The resource of an apiVersion + kind (e.g. for manifests), if served. */
  resourceFor(apiVersion: string, kind: string): ResourceDef | undefined {
    const slash = apiVersion.lastIndexOf('/');
    const group = slash >= 0 ? apiVersion.slice(0, slash) : '';
    const version = slash >= 0 ? apiVersion.slice(slash + 1) : apiVersion;
    return this.registry.byKind(group, version, kind);
  }

  /**
   * Creates what every cluster starts with: namespaces (each with its `default`
   * ServiceAccount and kube-root-ca.crt), system priority classes, the bootstrap RBAC roles
   * and bindings (`cluster-admin` for system:masters, discovery for everyone: strategies/rbac.ts),
   * the `kubernetes` Service.
   */
  async bootstrap(): Promise<void> {
    const ctx = this.systemContext();
    const ns = this.registry.get('', 'v1', 'namespaces');
    for (const name of INITIAL_NAMESPACES) {
      if (ns !== undefined) await this.ops.create(ns, '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, ctx);
    }
    const pc = this.registry.get('scheduling.k8s.io', 'v1', 'priorityclasses');
    for (const c of SYSTEM_PRIORITY_CLASSES) {
      if (pc !== undefined) {
        await this.ops.create(pc, '', { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: c.name }, value: c.value, description: c.description }, ctx);
      }
    }
    for (const { plural, object } of BOOTSTRAP_RBAC) {
      const def = this.registry.get(RBAC_GROUP, 'v1', plural);
      if (def !== undefined) await this.ops.create(def, '', structuredClone(object), ctx);
    }
    const svc = this.registry.get('', 'v1', 'services');
    if (svc !== undefined) {
      await this.ops.create(
        svc,
        'default',
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'kubernetes', labels: { component: 'apiserver', provider: 'kubernetes' } },
          spec: { type: 'ClusterIP', ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 }], sessionAffinity: 'None' },
        },
        ctx,
      );
    }
    await this.idle();
  }
}
