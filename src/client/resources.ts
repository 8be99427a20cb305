/**
 * Naming resources on the wire: a `ResourceRef` (group, version, plural,
 * kind, scope) is everything needed to build a REST path, so every helper of
 * the client takes one instead of an apiVersion/kind pair.
 *
 * - `BUILTIN` holds the refs of the built-in kinds this project uses;
 * - `refForKind(apiVersion, kind)` finds a built-in one without a request;
 * - `ResourceResolver` resolves anything else (custom workloads, CRDs) through
 *   discovery, `GET /api/v1` or `GET /apis/<group>/<version>`, one request per
 *   group-version, cached. A miss refetches once, because a CRD may have been
 *   installed since the list was cached (upstream's deferred RESTMapper resets
 *   on a miss for the same reason).
 * Paths follow k8s.io/apiserver's layout:
 *   /api/v1[/namespaces/<ns>]/<plural>[/<name>[/<subresource>]]
 *   /apis/<group>/<version>[/namespaces/<ns>]/<plural>[/<name>[/<subresource>]]
 */

export interface ResourceRef {
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  /** The plural resource name used in paths (`pods`, `deployments`). */
  readonly resource: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

export interface PathOptions {
  /** Ignored for cluster-scoped refs; omitted means all namespaces for a collection. */
  namespace?: string;
  name?: string;
  subresource?: string;
}

export function apiVersionOf(ref: Pick<ResourceRef, 'group' | 'version'>): string {
  return ref.group === '' ? ref.version : `${ref.group}/${ref.version}`;
}

/** Splits `apps/v1` into group and version; `v1` is the core group. */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** The discovery path of a group-version: `/api/v1` or `/apis/<group>/<version>`. */
export function groupVersionPath(ref: Pick<ResourceRef, 'group' | 'version'>): string {
  return ref.group === '' ? `/api/${ref.version}` : `/apis/${ref.group}/${ref.version}`;
}

/**
 * The REST path of a collection, an object or a subresource. The namespace,
 * name and subresource are URL-encoded, so odd input cannot escape the path.
 */
export function pathFor(ref: ResourceRef, options: PathOptions = {}): string {
  let path = groupVersionPath(ref);
  if (ref.namespaced && options.namespace !== undefined && options.namespace !== '') path += `/namespaces/${encodeURIComponent(options.namespace)}`;
  path += `/${ref.resource}`;
  if (options.name !== undefined && options.name !== '') {
    path += `/${encodeURIComponent(options.name)}`;
    if (options.subresource !== undefined && options.subresource !== '') path += `/${encodeURIComponent(options.subresource)}`;
  }
  return path;
}

const ref = (group: string, version: string, resource: string, kind: string, namespaced: boolean): ResourceRef => Object.freeze({ group, version, resource, kind, namespaced });

/** The built-in resources the project reads or writes. */
export const BUILTIN = Object.freeze({
  pods: ref('', 'v1', 'pods', 'Pod', true),
  nodes: ref('', 'v1', 'nodes', 'Node', false),
  namespaces: ref('', 'v1', 'namespaces', 'Namespace', false),
  events: ref('', 'v1', 'events', 'Event', true),
  eventsV1: ref('events.k8s.io', 'v1', 'events', 'Event', true),
  configmaps: ref('', 'v1', 'configmaps', 'ConfigMap', true),
  secrets: ref('', 'v1', 'secrets', 'Secret', true),
  services: ref('', 'v1', 'services', 'Service', true),
  serviceaccounts: ref('', 'v1', 'serviceaccounts', 'ServiceAccount', true),
  deployments: ref('apps', 'v1', 'deployments', 'Deployment', true),
  replicasets: ref('apps', 'v1', 'replicasets', 'ReplicaSet', true),
  statefulsets: ref('apps', 'v1', 'statefulsets', 'StatefulSet', true),
  controllerrevisions: ref('apps', 'v1', 'controllerrevisions', 'ControllerRevision', true),
  jobs: ref('batch', 'v1', 'jobs', 'Job', true),
  leases: ref('coordination.k8s.io', 'v1', 'leases', 'Lease', true),
  poddisruptionbudgets: ref('policy', 'v1', 'poddisruptionbudgets', 'PodDisruptionBudget', true),
  priorityclasses: ref('scheduling.k8s.io', 'v1', 'priorityclasses', 'PriorityClass', false),
  customresourcedefinitions: ref('apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', false),
  mutatingwebhookconfigurations: ref('admissionregistration.k8s.io', 'v1', 'mutatingwebhookconfigurations', 'MutatingWebhookConfiguration', false),
  validatingwebhookconfigurations: ref('admissionregistration.k8s.io', 'v1', 'validatingwebhookconfigurations', 'ValidatingWebhookConfiguration', false),
});

/** The `scale` subresource's object: `autoscaling/v1` `Scale`. */
export const SCALE_API_VERSION = 'autoscaling/v1';
export const SCALE_KIND = 'Scale';

export interface Scale {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; uid?: string; [key: string]: unknown };
  spec?: { replicas?: number };
  status?: { replicas?: number; selector?: string };
}

/** The `policy/v1` Eviction body for `pods/<name>/eviction`. */
export function evictionFor(namespace: string, name: string, deleteOptions?: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } };
  if (deleteOptions !== undefined) body['deleteOptions'] = deleteOptions;
  return body;
}

const BY_KIND = new Map<string, ResourceRef>(Object.values(BUILTIN).map((r) => [`${apiVersionOf(r)}|${r.kind}`, r]));

/** The built-in ref serving `kind` in `apiVersion`, without any request. */
export function refForKind(apiVersion: string, kind: string): ResourceRef | undefined {
  return BY_KIND.get(`${apiVersion}|${kind}`);
}

/** What the resolver needs from a client: one JSON GET. */
export interface DiscoveryFetcher {
  getJson(path: string): Promise<unknown>;
}

export type ResolveResult = { ok: true; ref: ResourceRef } | { ok: false; error: unknown; notFound: boolean };

interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

/** Reads an APIResourceList, ignoring malformed entries and subresources (`deployments/scale`). */
function parseResourceList(doc: unknown): ApiResource[] {
  const list = (doc as { resources?: unknown } | null)?.resources;
  if (!Array.isArray(list)) return [];
  const out: ApiResource[] = [];
  for (const entry of list) {
    const r = entry as { name?: unknown; kind?: unknown; namespaced?: unknown } | null;
    if (typeof r?.name !== 'string' || typeof r.kind !== 'string' || r.name.includes('/')) continue;
    out.push({ name: r.name, kind: r.kind, namespaced: r.namespaced === true });
  }
  return out;
}

/** Resolves apiVersion + kind to a ref: the built-in table first, then cached discovery. */
export class ResourceResolver {
  readonly #fetcher: DiscoveryFetcher;
  readonly #cache = new Map<string, Promise<ApiResource[]>>();

  constructor(fetcher: DiscoveryFetcher) {
    this.#fetcher = fetcher;
  }

  async resolve(apiVersion: string, kind: string): Promise<ResolveResult> {
    const builtin = refForKind(apiVersion, kind);
    if (builtin !== undefined) return { ok: true, ref: builtin };
    const gv = parseApiVersion(apiVersion);
    if (gv.version === '' || kind === '') return { ok: false, error: new Error(`cannot resolve kind ${JSON.stringify(kind)} in ${JSON.stringify(apiVersion)}`), notFound: true };
    for (let attempt = 0; attempt < 2; attempt++) {
      let resources: ApiResource[];
      try {
        resources = await this.#groupVersion(gv, attempt > 0);
      } catch (error) {
        const status = (error as { code?: unknown }).code;
        return { ok: false, error, notFound: status === 404 };
      }
      const found = resources.find((r) => r.kind === kind);
      if (found !== undefined) return { ok: true, ref: ref(gv.group, gv.version, found.name, kind, found.namespaced) };
    }
    return { ok: false, error: new Error(`the server does not serve kind ${kind} in ${apiVersion}`), notFound: true };
  }

  /** Forgets cached discovery (all, or one group-version). */
  invalidate(apiVersion?: string): void {
    if (apiVersion === undefined) this.#cache.clear();
    else this.#cache.delete(apiVersion);
  }

  #groupVersion(gv: { group: string; version: string }, refresh: boolean): Promise<ApiResource[]> {
    const key = apiVersionOf(gv);
    let entry = refresh ? undefined : this.#cache.get(key);
    if (entry === undefined) {
      entry = this.#fetcher.getJson(groupVersionPath(gv)).then(parseResourceList);
      this.#cache.set(key, entry);
      // A failed fetch is not remembered: the next call asks again.
      entry.catch(() => {
        if (this.#cache.get(key) === entry) this.#cache.delete(key);
      });
    }
    return entry;
  }
}
