/**
 * `KubeClient`: JSON over HTTPS to one API server, with typed errors, a
 * request timeout on the clock and no retries (callers decide: a conflict
 * needs a re-read, a 429 a delay, a watcher its own back-off).
 *
 * - `request()` is the one primitive; `get/list/create/update/patch/delete`
 *   and the subresource helpers build paths from `ResourceRef`s on top of it;
 * - `watchStream()` opens a watch and feeds its events, in order, to
 *   `onEvent` (awaited), until the server ends the stream or the signal aborts.
 *
 * Virtual time (clock.ts "Activity"): a request counts as busy while it is
 * being sent and while its answer is read; while the server works on it the
 * caller's own activity is suspended, by waiting on a clock sleep that doubles
 * as the timeout. So a server that delays an answer on the same virtual clock
 * lets time pass, and the timeout fires at its virtual deadline. A watch sends
 * `x-workloadspread-activity: <clock id>:<stream>` so the server counts each
 * event it writes, and this module reports each one consumed only after
 * `onEvent` has finished with it.
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { ACTIVITY_HEADER, type Clock } from '../clock/clock.ts';
import type { KubeObject } from '../k8s/types.ts';
import type { Connection } from './config.ts';
import { ApiError, NetworkError, statusFromBody, type RequestDescription, type Status } from './errors.ts';
import { decodeWatchLine, LineSplitter, type WatchStreamEvent } from './ndjson.ts';
import { evictionFor, pathFor, ResourceResolver, type ResourceRef, type Scale } from './resources.ts';

export type QueryValue = string | number | boolean | undefined;
export type Query = Record<string, QueryValue>;

export interface RequestOptions {
  method: string;
  /** Absolute path on the server, e.g. `/api/v1/namespaces/default/pods`. */
  path: string;
  query?: Query;
  /** Serialized as JSON unless it is a string or Buffer. */
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Overrides the client's default; 0 disables the timeout. */
  timeoutMs?: number;
}

export interface KubeClientOptions {
  clock: Clock;
  /** Sent as `User-Agent` (default `workloadspread`). */
  userAgent?: string;
  /** Default request timeout (default 30 s, on the clock). */
  timeoutMs?: number;
  /** Default `fieldManager` for writes (required by server-side apply). */
  fieldManager?: string;
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
}

export interface WriteOptions extends CallOptions {
  dryRun?: boolean;
  fieldManager?: string;
}

export interface ListOptions extends CallOptions {
  /** Omitted for a namespaced ref: all namespaces. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan';
}

export interface KubeList<T> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[];
}

export interface DeleteOptions extends CallOptions {
  namespace?: string;
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

export interface WatchStreamOptions {
  /** Called once per event, in order; the next event waits for a returned promise. */
  onEvent(event: WatchStreamEvent): void | Promise<void>;
  signal?: AbortSignal;
  /** Stream id for activity accounting on a virtual clock (unique per request). */
  activityStream?: string;
  /** Called when the response head arrives (the watch is established). */
  onOpen?(): void;
  /** Called for every chunk of bytes (idle watchdogs). */
  onData?(): void;
}

/** How a watch stream ended without an error. */
export type WatchStreamEnd = 'closed' | 'aborted';

const DEFAULT_TIMEOUT_MS = 30_000;

function queryString(query: Query | undefined): string {
  if (query === undefined) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.append(key, String(value));
  const s = params.toString();
  return s === '' ? '' : `?${s}`;
}

function retryAfterHeader(res: IncomingMessage): number | undefined {
  const raw = res.headers['retry-after'];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value.trim());
}

export class KubeClient {
  readonly connection: Connection;
  readonly clock: Clock;
  readonly userAgent: string;
  readonly fieldManager: string | undefined;
  /** apiVersion + kind → ResourceRef (built-ins, then cached discovery). */
  readonly resources: ResourceResolver;
  readonly #timeoutMs: number;
  #streamSeq = 0;

  constructor(connection: Connection, options: KubeClientOptions) {
    this.connection = connection;
    this.clock = options.clock;
    this.userAgent = options.userAgent ?? 'workloadspread';
    this.fieldManager = options.fieldManager;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.resources = new ResourceResolver({ getJson: (path) => this.request({ method: 'GET', path }) });
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
  async request<T = unknown>(options: RequestOptions): Promise<T> {
    const desc: RequestDescription = { method: options.method, path: options.path };
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    const deadline = new AbortController();
    let timedOut = false;
    if (timeoutMs > 0) {
      // The clock sleep is the timeout, and while it waits the caller's activity does not count as busy.
      this.clock.sleep(timeoutMs, deadline.signal, { name: `timeout ${options.method} ${options.path}` }).then(
        () => {
          timedOut = true;
          deadline.abort();
        },
        () => {},
      );
    }
    try {
      const { res, text } = await this.#exchange(options, deadline.signal, () => timedOut, desc, timeoutMs);
      const code = res.statusCode ?? 0;
      if (code < 200 || code >= 300) throw new ApiError(code, statusFromBody(code, text), desc, retryAfterHeader(res));
      if (text.trim() === '') return undefined as T;
      try {
        return JSON.parse(text) as T;
      } catch (err) {
        throw new NetworkError('protocol', `the ${code} answer is not JSON`, desc, err);
      }
    } finally {
      if (!deadline.signal.aborted) deadline.abort();
    }
  }

  #exchange(options: RequestOptions, deadline: AbortSignal, timedOut: () => boolean, desc: RequestDescription, timeoutMs: number): Promise<{ res: IncomingMessage; text: string }> {
    return new Promise((resolve, reject) => {
      let endReceive: (() => void) | undefined;
      const fail = (err: unknown) => {
        endReceive?.();
        reject(err);
      };
      this.#open(options, deadline, {
        onResponse: (res) => {
          endReceive = this.clock.activity.begin(`http receive ${desc.method} ${desc.path}`);
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            endReceive?.();
            resolve({ res, text: Buffer.concat(chunks).toString('utf8') });
          });
          res.on('error', (err) => fail(this.#networkError(err, options.signal, timedOut(), desc, timeoutMs)));
        },
        onError: (err) => fail(this.#networkError(err, options.signal, timedOut(), desc, timeoutMs)),
      });
    });
  }

  #networkError(err: unknown, signal: AbortSignal | undefined, timedOut: boolean, desc: RequestDescription, timeoutMs: number): NetworkError {
    if (err instanceof NetworkError) return err;
    if (signal?.aborted === true) return new NetworkError('aborted', 'aborted by the caller', desc, signal.reason);
    if (timedOut) return new NetworkError('timeout', `no answer within ${timeoutMs} ms`, desc, err);
    return new NetworkError('connection', err instanceof Error ? err.message : String(err), desc, err);
  }

  /**
   * Starts the HTTP exchange. The send phase counts as busy until the request
   * is flushed and the event loop had a turn to deliver it to an in-process server.
   */
  #open(options: RequestOptions, deadline: AbortSignal, handlers: { onResponse(res: IncomingMessage): void; onError(err: unknown): void }, extraHeaders: Record<string, string> = {}): void {
    const desc = `${options.method} ${options.path}`;
    const endSend = this.clock.activity.begin(`http send ${desc}`);
    const url = new URL(`${this.connection.server}${options.path}${queryString(options.query)}`);
    let body: Buffer | undefined;
    let contentType = options.contentType;
    if (options.body !== undefined) {
      if (Buffer.isBuffer(options.body)) body = options.body;
      else if (typeof options.body === 'string') body = Buffer.from(options.body, 'utf8');
      else {
        body = Buffer.from(JSON.stringify(options.body), 'utf8');
        contentType ??= 'application/json';
      }
    }
    const signals = [deadline, ...(options.signal !== undefined ? [options.signal] : [])];
    if (signals.some((s) => s.aborted)) {
      endSend();
      handlers.onError(new Error('aborted before sending'));
      return;
    }
    let req: ClientRequest | undefined;
    let settled = false;
    const onAbort = () => req?.destroy(new Error('aborted'));
    const cleanup = () => {
      for (const s of signals) s.removeEventListener('abort', onAbort);
    };
    void this.connection.headers().then(
      (auth) => {
        if (signals.some((s) => s.aborted)) {
          endSend();
          handlers.onError(new Error('aborted before sending'));
          return;
        }
        const headers: Record<string, string> = {
          Accept: 'application/json',
          'User-Agent': this.userAgent,
          ...auth,
          ...(options.headers ?? {}),
          ...extraHeaders,
        };
        if (contentType !== undefined) headers['Content-Type'] = contentType;
        if (body !== undefined) headers['Content-Length'] = String(body.length);
        const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
        req = send(url, { method: options.method, headers, agent: this.connection.agent }, (res) => {
          settled = true;
          // Registered first so the signals are detached before anyone sees the end: aborting
          // afterwards must not touch a socket that went back to the agent's pool.
          res.once('end', cleanup);
          res.once('close', cleanup);
          handlers.onResponse(res);
        });
        req.on('error', (err) => {
          endSend();
          cleanup();
          if (!settled) {
            settled = true;
            handlers.onError(err);
          }
        });
        req.on('finish', () => setImmediate(endSend));
        for (const s of signals) s.addEventListener('abort', onAbort, { once: true });
        req.end(body);
      },
      (err: unknown) => {
        endSend();
        handlers.onError(err);
      },
    );
  }

  // ---- watch ----

  /**
   * Opens a watch on `path` and feeds its events to `onEvent` until the
   * server ends the stream ('closed') or `signal` aborts ('aborted').
   * Rejects with `ApiError` for a non-200 answer and `NetworkError` when the
   * connection fails; an `onEvent` that throws aborts the stream and rejects
   * with its error.
   */
  watchStream(path: string, query: Query, options: WatchStreamOptions): Promise<WatchStreamEnd> {
    const desc: RequestDescription = { method: 'GET', path };
    const activity = this.clock.activity;
    const stream = activity.id !== '' ? options.activityStream : undefined;
    const headers: Record<string, string> = stream !== undefined ? { [ACTIVITY_HEADER]: `${activity.id}:${stream}` } : {};
    const internal = new AbortController();
    const signal = options.signal;
    return new Promise<WatchStreamEnd>((resolve, reject) => {
      let finished = false;
      const finish = (outcome: { end: WatchStreamEnd } | { error: unknown }) => {
        if (finished) return;
        finished = true;
        signal?.removeEventListener('abort', onCallerAbort);
        if (!internal.signal.aborted) internal.abort();
        if (stream !== undefined) activity.closeStream(stream);
        if ('end' in outcome) resolve(outcome.end);
        else reject(outcome.error);
      };
      const onCallerAbort = () => finish({ end: 'aborted' });
      if (signal?.aborted === true) {
        finish({ end: 'aborted' });
        return;
      }
      signal?.addEventListener('abort', onCallerAbort, { once: true });

      const lines = new LineSplitter();
      const queue: string[] = [];
      let draining = false;
      let ended = false;
      let res: IncomingMessage | undefined;
      const drain = async () => {
        if (draining) return;
        draining = true;
        try {
          while (queue.length > 0 && !finished) {
            const line = queue.shift() as string;
            const result = options.onEvent(decodeWatchLine(line));
            if (result instanceof Promise) {
              res?.pause();
              await result;
              res?.resume();
            }
            if (stream !== undefined && !finished) activity.received(stream);
          }
        } catch (err) {
          finish({ error: err });
          return;
        } finally {
          draining = false;
        }
        if (ended && queue.length === 0) finish({ end: 'closed' });
      };
      const enqueue = (batch: string[]) => {
        for (const line of batch) if (line.trim() !== '') queue.push(line);
        void drain();
      };

      this.#open(
        { method: 'GET', path, query: { ...query, watch: 'true' }, timeoutMs: 0 },
        internal.signal,
        {
          onResponse: (r) => {
            res = r;
            const code = r.statusCode ?? 0;
            if (code !== 200) {
              const endReceive = activity.begin(`http receive watch ${path}`);
              const chunks: Buffer[] = [];
              r.on('data', (c: Buffer) => chunks.push(c));
              r.on('end', () => {
                endReceive();
                finish({ error: new ApiError(code, statusFromBody(code, Buffer.concat(chunks).toString('utf8')), desc, retryAfterHeader(r)) });
              });
              r.on('error', (err) => {
                endReceive();
                finish({ error: new NetworkError('connection', err.message, desc, err) });
              });
              return;
            }
            options.onOpen?.();
            r.on('data', (chunk: Buffer) => {
              options.onData?.();
              enqueue(lines.push(chunk));
            });
            r.on('end', () => {
              ended = true;
              const rest = lines.end();
              enqueue(rest !== undefined ? [rest] : []);
            });
            r.on('error', (err) => {
              if (!finished) finish({ error: new NetworkError('connection', err.message, desc, err) });
            });
            r.on('close', () => {
              // A connection that dies mid-stream closes without 'end'.
              if (!ended && !finished) finish({ error: new NetworkError('connection', 'the watch connection closed unexpectedly', desc) });
            });
          },
          onError: (err) => {
            if (signal?.aborted === true) finish({ end: 'aborted' });
            else finish({ error: err instanceof NetworkError ? err : new NetworkError('connection', err instanceof Error ? err.message : String(err), desc, err) });
          },
        },
        headers,
      );
    });
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

  #call(options: CallOptions): Pick<RequestOptions, 'signal' | 'timeoutMs'> {
    const out: Pick<RequestOptions, 'signal' | 'timeoutMs'> = {};
    if (options.signal !== undefined) out.signal = options.signal;
    if (options.timeoutMs !== undefined) out.timeoutMs = options.timeoutMs;
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

  async list<T = KubeObject>(ref: ResourceRef, options: ListOptions = {}): Promise<KubeList<T>> {
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
  async listAll<T = KubeObject>(ref: ResourceRef, options: Omit<ListOptions, 'continue'> = {}): Promise<{ items: T[]; resourceVersion: string }> {
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
  delete(ref: ResourceRef, name: string, options: DeleteOptions = {}): Promise<KubeObject | Status> {
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
    const podRef: ResourceRef = { group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true };
    return this.subresource('POST', podRef, name, 'eviction', evictionFor(namespace, name, options.deleteOptions), { ...options, namespace });
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
