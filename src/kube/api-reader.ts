/**
 * The manager's reads straight from the API server, for what its caches do
 * not hold (kube/caches.ts is only what the informers hold):
 *
 * - `read(request)`: the reads an admission decision asks for when the cache
 *   view cannot answer (core/cluster-view.ts) — an object of a kind that is
 *   not cached or not watched in the wanted version, found through discovery
 *   (a kind the server does not serve is NotFound), and a pod the cache does
 *   not show yet (just created, or already gone);
 * - `fullPods(pods)`: whole pods for rules that need fields the cache trims
 *   (adoption scoring compares the whole pod with a subset's patch applied),
 *   remembered per UID and resourceVersion so an unchanged pod is read once.
 * Errors are data (`Lookup`). Start at `read`.
 */
import type { ReadRequest } from '../core/cluster-view.ts';
import type { Lookup } from '../k8s/lookup.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { describeError, isNotFound } from '../client/errors.ts';
import type { KubeClient } from '../client/http-client.ts';
import { BUILTIN } from '../client/resources.ts';

/**
 * Objects an admission read from the API server, each with the
 * resourceVersion the cache had then; `get` answers with the read copy while
 * the cache still has that version (it lags), and forgets it once the cache
 * moves (it caught up, or something newer came). Bounded.
 */
export class FresherThanCache {
  static readonly MAX = 1_024;
  readonly #entries = new Map<string, { object: KubeObject; cachedVersion: string | undefined }>();

  remember(key: string, object: KubeObject, cached: KubeObject | undefined): void {
    const cachedVersion = cached?.metadata?.resourceVersion;
    if (cachedVersion !== undefined && cachedVersion === object.metadata?.resourceVersion) return;
    if (this.#entries.size >= FresherThanCache.MAX) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(key, { object, cachedVersion });
  }

  get(key: string, cached: KubeObject | undefined): KubeObject | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.cachedVersion === cached?.metadata?.resourceVersion) return entry.object;
    this.#entries.delete(key);
    return undefined;
  }
}

/** Whole pods remembered for `fullPods` (by UID, valid for one resourceVersion). */
const FULL_POD_MEMORY = 4_096;
/** Full-pod reads in flight at once. */
const READ_CONCURRENCY = 16;

export class ApiReader {
  /** Objects read that the cache has not caught up with (view-reads.ts). */
  readonly fresher = new FresherThanCache();
  readonly #client: KubeClient;
  readonly #fullPods = new Map<string, Pod>();
  readonly #unthrottled: boolean;

  /**
   * `unthrottled`: the reads skip the client-side rate limiter — admission's
   * reader, whose reads the API server waits on (D24); a controller's reader
   * takes its turn with the other requests.
   */
  constructor(client: KubeClient, options: { unthrottled?: boolean } = {}) {
    this.#client = client;
    this.#unthrottled = options.unthrottled === true;
  }

  /** Makes the read an admission decision asked for. */
  read(request: ReadRequest): Promise<Lookup<KubeObject>> {
    return request.kind === 'pod' ? this.pod(request.namespace, request.name) : this.object(request.namespace, request.ref.apiVersion, request.ref.kind, request.ref.name);
  }

  /** One object by apiVersion and kind, through discovery; NotFound when the kind is not served. */
  async object(namespace: string, apiVersion: string, kind: string, name: string): Promise<Lookup<KubeObject>> {
    const resolved = await this.#client.resources.resolve(apiVersion, kind);
    if (!resolved.ok) return resolved.notFound ? { notFound: true } : { error: describeError(resolved.error) };
    try {
      return { found: await this.#client.get<KubeObject>(resolved.ref, name, { namespace, unthrottled: this.#unthrottled }) };
    } catch (err) {
      if (isNotFound(err)) return { notFound: true };
      return { error: describeError(err) };
    }
  }

  /** One pod as the API server has it now. */
  async pod(namespace: string, name: string): Promise<Lookup<Pod>> {
    try {
      return { found: await this.#client.get<Pod>(BUILTIN.pods, name, { namespace, unthrottled: this.#unthrottled }) };
    } catch (err) {
      if (isNotFound(err)) return { notFound: true };
      return { error: `cannot read pod ${namespace}/${name}: ${describeError(err)}` };
    }
  }

  /**
   * The whole pods for these cached ones, in order: read from the API server
   * unless the same resourceVersion was read before. A pod gone meanwhile (or
   * replaced by another with its name) keeps its cached copy.
   */
  async fullPods(pods: readonly Pod[]): Promise<Pod[]> {
    const out = [...pods];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < pods.length) {
        const i = next++;
        const cached = pods[i] as Pod;
        const uid = cached.metadata?.uid ?? '';
        const known = this.#fullPods.get(uid);
        if (known !== undefined && known.metadata?.resourceVersion === cached.metadata?.resourceVersion) {
          out[i] = known;
          continue;
        }
        const read = await this.pod(cached.metadata?.namespace ?? '', cached.metadata?.name ?? '');
        if ('error' in read) throw new Error(read.error);
        if (!('found' in read) || read.found.metadata?.uid !== uid) continue;
        out[i] = read.found;
        this.#fullPods.delete(uid);
        this.#fullPods.set(uid, read.found);
        if (this.#fullPods.size > FULL_POD_MEMORY) this.#fullPods.delete(this.#fullPods.keys().next().value as string);
      }
    };
    await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, pods.length) }, worker));
    return out;
  }
}
