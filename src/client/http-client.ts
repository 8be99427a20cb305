/**
 * `KubeClient`: JSON over HTTPS to one API server, with typed errors, a
 * request timeout on the clock and no retries (callers decide: a conflict
 * needs a re-read, a 429 a delay, a watcher its own back-off).
 *
 * - `request()` is the one primitive (transport.ts, which also explains how
 *   requests are accounted on a virtual clock);
 * - `get/list/create/update/patch/delete` and the subresource helpers build
 *   paths from `ResourceRef`s on top of it;
 * - `watchStream()` opens a watch (watch-stream.ts).
 */
import type { Clock } from '../clock/clock.ts';
import type { KubeObject } from '../k8s/types.ts';
import type { DeleteOptions, ListOptions } from '../k8s/wire.ts';
import type { Connection } from './config.ts';
import type { Status } from './errors.ts';
import { BUILTIN, evictionFor, pathFor, ResourceResolver, type ResourceRef, type Scale } from './resources.ts';
import { HttpTransport, type Query, type RequestMetrics, type RequestOptions, type RequestTrace } from './transport.ts';
import { openWatchStream, type WatchStreamEnd, type WatchStreamOptions } from './watch-stream.ts';
import { TokenBucket, type RateLimitSettings } from './rate-limit.ts';

export type { Query, QueryValue, RequestMetrics, RequestOptions, RequestTrace } from './transport.ts';
export type { WatchStreamEnd, WatchStreamOptions } from './watch-stream.ts';

export interface KubeClientOptions {
  clock: Clock;
  /** Sent as `User-Agent` (default `workloadspread`). */
  userAgent?: string;
  /** Default request timeout (default 30 s, on the clock). */
  timeoutMs?: number;
  /** Default `fieldManager` for writes (required by server-side apply). */
  fieldManager?: string;
  /**
   * Watchers on this client hand their caches objects without
   * `metadata.managedFields` (what kube-controller-manager's and
   * kube-scheduler's informers do: nothing they run reads them).
   */
  watchWithoutManagedFields?: boolean;
  /** Told of every request and answer (`-v` logs). */
  trace?: RequestTrace;
  /** Client-side rate limiting of every request and watch start (default none; the manager sets controller-runtime's 20/30). */
  rateLimit?: RateLimitSettings;
}

export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';

export const PATCH_CONTENT_TYPE: Readonly<Record<PatchType, string>> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

export interface JsonPatchOperation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: unknown;
  from?: string;
}

export type Patch = { type: 'merge' | 'strategic' | 'apply'; body: unknown } | { type: 'json'; ops: JsonPatchOperation[] };

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /**
   * Not held back by the client-side rate limiter (still counted): for the
   * requests a caller waits on while the API server waits on it — admission's
   * reads and the status writes made under the per-object lock admission
   * takes (docs/decisions.md D24).
   */
  unthrottled?: boolean;
}

export interface WriteOptions extends CallOptions {
  dryRun?: boolean;
  fieldManager?: string;
}

/** A list call: the wire's list options (k8s/wire.ts), where, and the call's own options. */
export interface ListCallOptions extends CallOptions, ListOptions {
  /** Omitted for a namespaced ref: all namespaces. */
  namespace?: string;
}

export interface KubeList<T> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[];
}

/** A delete call: the wire's delete options (k8s/wire.ts, all but the deprecated orphanDependents), where, dry run, and the call's own options. */
export interface DeleteCallOptions extends CallOptions, Omit<DeleteOptions, 'orphanDependents'> {
  namespace?: string;
  dryRun?: boolean;
}

const DEFAULT_TIMEOUT_MS = 30_000;

export class KubeClient {
  readonly connection: Connection;
  readonly clock: Clock;
  readonly userAgent: string;
  readonly fieldManager: string | undefined;
  readonly watchWithoutManagedFields: boolean;
  /** apiVersion + kind → ResourceRef (built-ins, then cached discovery). */
  readonly resources: ResourceResolver;
  readonly #transport: HttpTransport;
  #streamSeq = 0;

  constructor(connection: Connection, options: KubeClientOptions) {
    this.connection = connection;
    this.clock = options.clock;
    this.userAgent = options.userAgent ?? 'workloadspread';
    this.fieldManager = options.fieldManager;
    this.watchWithoutManagedFields = options.watchWithoutManagedFields ?? false;
    this.#transport = new HttpTransport(connection, options.clock, this.userAgent, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    this.#transport.trace = options.trace;
    if (options.rateLimit !== undefined && options.rateLimit.qps > 0) this.#transport.limiter = new TokenBucket(options.clock, options.rateLimit);
    this.resources = new ResourceResolver({ getJson: (path) => this.request({ method: 'GET', path }) });
  }

  /** The client-side rate limiter (undefined: none). */
  get rateLimiter(): TokenBucket | undefined {
    return this.#transport.limiter;
  }

  /** Counts every request (and watch) of this client from now on: `rest_client_*` of the manager's metrics. */
  instrument(metrics: RequestMetrics): void {
    if (!this.#transport.metrics.includes(metrics)) this.#transport.metrics.push(metrics);
  }

  /** The default namespace of the connection (context or service account). */
  get namespace(): string {
    return this.connection.namespace;
  }

  /** A fresh stream id for `watchStream`'s activity accounting. */
  nextStreamId(prefix: string): string {
    return `${prefix}-${++this.#streamSeq}`;
  }

  /** Sends one request; resolves with the parsed JSON body, rejects with `ApiError` or `NetworkError`. */
  request<T = unknown>(options: RequestOptions): Promise<T> {
    return this.#transport.request<T>(options);
  }

  /**
   * Opens a watch on `path` and feeds its events to `onEvent` until the
   * server ends the stream ('closed') or `signal` aborts ('aborted'); see watch-stream.ts.
   */
  watchStream(path: string, query: Query, options: WatchStreamOptions): Promise<WatchStreamEnd> {
    return openWatchStream(this.#transport, path, query, options);
  }

  // ---- resource helpers ----

  #ns(ref: ResourceRef, namespace: string | undefined): string | undefined {
    if (!ref.namespaced) return undefined;
    return namespace !== undefined && namespace !== '' ? namespace : this.connection.namespace;
  }

  #write(options: WriteOptions): Query {
    const q: Query = {};
    if (options.dryRun === true) q['dryRun'] = 'All';
    const fm = options.fieldManager ?? this.fieldManager;
    if (fm !== undefined) q['fieldManager'] = fm;
    return q;
  }

  #call(options: CallOptions): Pick<RequestOptions, 'signal' | 'timeoutMs' | 'unthrottled'> {
    const out: Pick<RequestOptions, 'signal' | 'timeoutMs' | 'unthrottled'> = {};
    if (options.signal !== undefined) out.signal = options.signal;
    if (options.timeoutMs !== undefined) out.timeoutMs = options.timeoutMs;
    if (options.unthrottled === true) out.unthrottled = true;
    return out;
  }

  /** GET for the resolver (discovery documents). */
  getJson(path: string): Promise<unknown> {
    return this.request({ method: 'GET', path });
  }

  get<T = KubeObject>(ref: ResourceRef, name: string, options: CallOptions & { namespace?: string; subresource?: string } = {}): Promise<T> {
    const path = pathFor(ref, { ...optional('namespace', this.#ns(ref, options.namespace)), name, ...optional('subresource', options.subresource) });
    return this.request<T>({ method: 'GET', path, ...this.#call(options) });
  }

  async list<T = KubeObject>(ref: ResourceRef, options: ListCallOptions = {}): Promise<KubeList<T>> {
    const query: Query = {
      labelSelector: nonEmpty(options.labelSelector),
      fieldSelector: nonEmpty(options.fieldSelector),
      limit: options.limit,
      continue: nonEmpty(options.continue),
      resourceVersion: options.resourceVersion,
      resourceVersionMatch: options.resourceVersionMatch,
    };
    const path = pathFor(ref, optional('namespace', ref.namespaced ? options.namespace : undefined));
    const list = await this.request<KubeList<T>>({ method: 'GET', path, query, ...this.#call(options) });
    return { ...list, metadata: list?.metadata ?? {}, items: Array.isArray(list?.items) ? list.items : [] };
  }

  /** Every page of a list; `resourceVersion` is the first page's (the snapshot's). */
  async listAll<T = KubeObject>(ref: ResourceRef, options: Omit<ListCallOptions, 'continue'> = {}): Promise<{ items: T[]; resourceVersion: string }> {
    const items: T[] = [];
    let token: string | undefined;
    let resourceVersion = '';
    do {
      const page = await this.list<T>(ref, { ...options, ...optional('continue', token) });
      if (resourceVersion === '') resourceVersion = page.metadata.resourceVersion ?? '';
      items.push(...page.items);
      token = nonEmpty(page.metadata.continue);
    } while (token !== undefined);
    return { items, resourceVersion };
  }

  /** POST a new object (namespace from the options, the object, then the connection). */
  create<T = KubeObject>(ref: ResourceRef, obj: unknown, options: WriteOptions & { namespace?: string } = {}): Promise<T> {
    const ns = this.#ns(ref, options.namespace ?? metaOf(obj).namespace);
    return this.request<T>({ method: 'POST', path: pathFor(ref, optional('namespace', ns)), body: obj, query: this.#write(options), ...this.#call(options) });
  }

  /** PUT the object (optimistic concurrency through its `metadata.resourceVersion`). */
  update<T = KubeObject>(ref: ResourceRef, obj: unknown, options: WriteOptions & { subresource?: string } = {}): Promise<T> {
    const meta = metaOf(obj);
    const path = pathFor(ref, { ...optional('namespace', this.#ns(ref, meta.namespace)), name: meta.name ?? '', ...optional('subresource', options.subresource) });
    return this.request<T>({ method: 'PUT', path, body: obj, query: this.#write(options), ...this.#call(options) });
  }

  /** PUT to `/status`. */
  updateStatus<T = KubeObject>(ref: ResourceRef, obj: unknown, options: WriteOptions = {}): Promise<T> {
    return this.update<T>(ref, obj, { ...options, subresource: 'status' });
  }

  patch<T = KubeObject>(ref: ResourceRef, name: string, patch: Patch, options: WriteOptions & { namespace?: string; subresource?: string; force?: boolean } = {}): Promise<T> {
    const path = pathFor(ref, { ...optional('namespace', this.#ns(ref, options.namespace)), name, ...optional('subresource', options.subresource) });
    const query = this.#write(options);
    if (options.force === true) query['force'] = 'true';
    const body = patch.type === 'json' ? patch.ops : patch.body;
    return this.request<T>({ method: 'PATCH', path, body: JSON.stringify(body), contentType: PATCH_CONTENT_TYPE[patch.type], query, ...this.#call(options) });
  }

  /** PATCH to `/status`. */
  patchStatus<T = KubeObject>(ref: ResourceRef, name: string, patch: Patch, options: WriteOptions & { namespace?: string } = {}): Promise<T> {
    return this.patch<T>(ref, name, patch, { ...options, subresource: 'status' });
  }

  /** DELETE; resolves with the deleted object (or the object with a deletionTimestamp, or a Status). */
  delete(ref: ResourceRef, name: string, options: DeleteCallOptions = {}): Promise<KubeObject | Status> {
    const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions' };
    if (options.propagationPolicy !== undefined) body['propagationPolicy'] = options.propagationPolicy;
    if (options.gracePeriodSeconds !== undefined) body['gracePeriodSeconds'] = options.gracePeriodSeconds;
    if (options.preconditions !== undefined) body['preconditions'] = options.preconditions;
    if (options.dryRun === true) body['dryRun'] = ['All'];
    const path = pathFor(ref, { ...optional('namespace', this.#ns(ref, options.namespace)), name });
    return this.request<KubeObject | Status>({ method: 'DELETE', path, body, ...this.#call(options) });
  }

  /** Any other subresource call (`binding`, `eviction`, custom ones). */
  subresource<T = unknown>(method: 'GET' | 'POST' | 'PUT' | 'PATCH', ref: ResourceRef, name: string, subresource: string, body?: unknown, options: WriteOptions & { namespace?: string; contentType?: string } = {}): Promise<T> {
    const path = pathFor(ref, { ...optional('namespace', this.#ns(ref, options.namespace)), name, subresource });
    const req: RequestOptions = { method, path, query: method === 'GET' ? {} : this.#write(options), ...this.#call(options) };
    if (body !== undefined) req.body = body;
    if (options.contentType !== undefined) req.contentType = options.contentType;
    return this.request<T>(req);
  }

  getScale(ref: ResourceRef, name: string, options: CallOptions & { namespace?: string } = {}): Promise<Scale> {
    return this.get<Scale>(ref, name, { ...options, subresource: 'scale' });
  }

  /** Sets `spec.replicas` through the scale subresource (a merge patch). */
  scale(ref: ResourceRef, name: string, replicas: number, options: WriteOptions & { namespace?: string } = {}): Promise<Scale> {
    return this.patch<Scale>(ref, name, { type: 'merge', body: { spec: { replicas } } }, { ...options, subresource: 'scale' });
  }

  /** POST `pods/<name>/eviction` (a PodDisruptionBudget may refuse with 429). */
  evict(namespace: string, name: string, options: WriteOptions & { deleteOptions?: Record<string, unknown> } = {}): Promise<unknown> {
    return this.subresource('POST', BUILTIN.pods, name, 'eviction', evictionFor(namespace, name, options.deleteOptions), { ...options, namespace });
  }
}

function metaOf(obj: unknown): { name?: string; namespace?: string } {
  const meta = (obj as { metadata?: { name?: unknown; namespace?: unknown } } | null)?.metadata;
  const out: { name?: string; namespace?: string } = {};
  if (typeof meta?.name === 'string') out.name = meta.name;
  if (typeof meta?.namespace === 'string') out.namespace = meta.namespace;
  return out;
}

function nonEmpty(s: string | undefined): string | undefined {
  return s === undefined || s === '' ? undefined : s;
}

/** `{ [key]: value }` when value is defined, `{}` otherwise (exactOptionalPropertyTypes). */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
