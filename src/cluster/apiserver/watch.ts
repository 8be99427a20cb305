/**
 * Watch streams (`?watch=true`, `/watch/...`): newline-delimited JSON
 * `{"type":...,"object":...}` events, one write (chunk) per event, with the
 * semantics of the API server's watch cache (k8s.io/apiserver storage/cacher):
 *
 * - resourceVersion unset or "0": an ADDED event per current object, then live;
 *   `sendInitialEvents=true` adds the `k8s.io/initial-events-end` bookmark;
 * - resourceVersion N: the events after N, replayed from history, then live;
 *   N older than the history → HTTP 200 and one in-stream ERROR (410 Expired,
 *   `too old resource version: N (M)`), then the stream ends;
 * - selectors apply per event to the new and the previous state: an object
 *   that starts matching arrives as ADDED, one that stops as DELETED (its
 *   previous state at the event's resourceVersion), as the cacher does;
 * - `allowWatchBookmarks`: a BOOKMARK (kind, apiVersion, resourceVersion)
 *   every minute of clock time, on a background timer;
 * - `timeoutSeconds` (default 30 minutes, upstream's min-request-timeout)
 *   ends the stream cleanly, on a background timer.
 * Race mode (`delay`): each event (bookmarks included) is written a random
 * clock time after it happened, never before the event ahead of it on the
 * same stream — a stream keeps its order, as a real watch does; an event
 * still waiting when the stream ends is not sent (the reader watches again
 * from the last resourceVersion it saw and gets it then); `flush()` writes
 * the waiting events at once.
 * Activity: when the request names a stream of this server's clock
 * (`x-workloadspread-activity: <clock id>:<stream>`), every event written is
 * reported with `clock.activity.sent(stream)`; the in-process reader reports
 * `received`, so the virtual clock waits until watchers consumed their events.
 */
import type { ServerResponse } from 'node:http';
import type { Clock, Timer } from '../../clock/clock.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { expired, statusError, timeout, type Status } from './errors.ts';
import { matchesSelectors, type Selectors } from './list.ts';
import type { ObjectOperations } from './operations.ts';
import { apiVersionOf, storageKey, type ResourceDef } from './resource-def.ts';
import { objectJson } from './serialize.ts';
import type { StoreEvent } from './storage.ts';

export const DEFAULT_WATCH_TIMEOUT_MS = 30 * 60_000;
export const BOOKMARK_INTERVAL_MS = 60_000;

export interface WatchOptions {
  def: ResourceDef;
  /** Namespace to watch; '' or undefined for all. */
  namespace: string | undefined;
  selectors: Selectors;
  resourceVersion: string;
  sendInitialEvents: boolean;
  allowBookmarks: boolean;
  timeoutMs: number;
  /** Stream id for activity accounting, when the reader runs on this server's clock. */
  activityStream: string | undefined;
  /** Re-encodes the object of an event (e.g. as a Table row); undefined keeps the object. */
  transform?: (type: string, obj: KubeObject) => unknown;
  /** Race mode: the clock milliseconds the next event takes to reach the reader. */
  delay?: () => number;
}

/** One open watch stream. */
export class WatchSession {
  readonly #ops: ObjectOperations;
  readonly #clock: Clock;
  readonly #res: ServerResponse;
  readonly #opts: WatchOptions;
  #cancel: (() => void) | undefined;
  #timers: Timer[] = [];
  #closed = false;
  /** Race mode: lines waiting for their delivery time, in stream order, and the timer of the first. */
  #queued: { at: number; line: string }[] = [];
  #delivery: Timer | undefined;
  readonly #onClose: (session: WatchSession) => void;

  constructor(ops: ObjectOperations, clock: Clock, res: ServerResponse, opts: WatchOptions, onClose: (session: WatchSession) => void) {
    this.#ops = ops;
    this.#clock = clock;
    this.#res = res;
    this.#opts = opts;
    this.#onClose = onClose;
    res.on('close', () => this.close());
  }

  /** Sends the response head and the initial or replayed events, then follows the store live. */
  start(): void {
    const res = this.#res;
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    const { def, namespace } = this.#opts;
    const resource = storageKey(def);
    const rv = this.#opts.resourceVersion;
    const fromScratch = this.#opts.sendInitialEvents || rv === '' || rv === '0';
    let from: number;
    if (fromScratch) {
      const store = this.#ops.store;
      from = store.resourceVersion;
      for (const stored of store.list(resource, namespace)) {
        const obj = this.#ops.served(def, stored);
        if (matchesSelectors(def, obj, this.#opts.selectors)) this.#send('ADDED', obj);
      }
      if (this.#opts.sendInitialEvents) this.#sendBookmark(true);
    } else {
      from = /^[0-9]+$/.test(rv) ? Number(rv) : NaN;
      if (Number.isNaN(from)) {
        this.#fail(statusError(400, 'BadRequest', `invalid resource version: ${rv}`));
        return;
      }
    }
    const started = this.#ops.store.watch(resource, namespace, from, (e) => this.#onEvent(e));
    if (!started.ok) {
      if (started.reason === 'tooOld') this.#fail(expired(`too old resource version: ${from} (${started.oldest})`));
      else this.#fail(timeout(`Too large resource version: ${from}, current: ${started.current}`, 1));
      return;
    }
    this.#cancel = started.cancel;
    if (this.#closed) return;
    if (this.#opts.allowBookmarks) {
      this.#timers.push(this.#clock.setInterval(() => this.#sendBookmark(false), BOOKMARK_INTERVAL_MS, { background: true, name: 'watch bookmark' }));
    }
    this.#timers.push(this.#clock.setTimeout(() => this.close(), this.#opts.timeoutMs, { background: true, name: 'watch timeout' }));
  }

  /** Ends the stream cleanly (the client sees EOF). Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#cancel?.();
    for (const t of this.#timers) t.cancel();
    this.#timers = [];
    this.#delivery?.cancel();
    this.#delivery = undefined;
    this.#queued = [];
    if (!this.#res.writableEnded && !this.#res.destroyed) {
      // The end of a tracked stream is news its reader has yet to act on (it will watch again):
      // counted like an event, and settled when the reader closes the stream.
      if (this.#opts.activityStream !== undefined) this.#clock.activity.sent(this.#opts.activityStream);
      this.#res.end();
    }
    this.#onClose(this);
  }

  #onEvent(e: StoreEvent): void {
    const { def, selectors } = this.#opts;
    const cur = e.type === 'DELETED' ? undefined : this.#ops.served(def, e.object);
    const prev = e.prev === undefined ? undefined : this.#ops.served(def, e.prev);
    const curPasses = cur !== undefined && matchesSelectors(def, cur, selectors);
    const prevPasses = prev !== undefined && matchesSelectors(def, prev, selectors);
    if (curPasses && cur !== undefined) {
      this.#send(prevPasses ? 'MODIFIED' : 'ADDED', cur);
    } else if (prevPasses && prev !== undefined) {
      const gone = e.type === 'DELETED' ? this.#ops.served(def, e.object) : { ...prev, metadata: { ...prev.metadata, resourceVersion: String(e.rv) } };
      this.#send('DELETED', gone);
    }
  }

  #send(type: string, obj: KubeObject): void {
    const replaced = this.#opts.transform?.(type, obj);
    this.#write(`{"type":"${type}","object":${replaced === undefined ? objectJson(obj) : JSON.stringify(replaced)}}\n`);
  }

  #sendBookmark(initialEventsEnd: boolean): void {
    const metadata: Record<string, unknown> = { resourceVersion: String(this.#ops.store.resourceVersion) };
    if (initialEventsEnd) metadata['annotations'] = { 'k8s.io/initial-events-end': 'true' };
    const { def } = this.#opts;
    this.#write(`{"type":"BOOKMARK","object":${JSON.stringify({ kind: def.kind, apiVersion: apiVersionOf(def), metadata })}}\n`);
  }

  #fail(status: Status): void {
    // Only before the first event: nothing is queued ahead of it.
    this.#writeNow(`{"type":"ERROR","object":${JSON.stringify(status)}}\n`);
    this.close();
  }

  #write(line: string): void {
    const delay = this.#opts.delay;
    if (delay === undefined) {
      this.#writeNow(line);
      return;
    }
    if (this.#closed) return;
    const now = this.#clock.now();
    const last = this.#queued.at(-1)?.at ?? now;
    const at = Math.max(last, now + delay());
    if (at <= now && this.#queued.length === 0) {
      this.#writeNow(line);
      return;
    }
    this.#queued.push({ at, line });
    if (this.#delivery === undefined) this.#armDelivery();
  }

  /** Race mode: writes every queued event now, in order, as if its delay had passed (the simulator's setup). */
  flush(): void {
    this.#delivery?.cancel();
    this.#delivery = undefined;
    for (const { line } of this.#queued.splice(0)) this.#writeNow(line);
  }

  /** Writes the queued lines that are due, in order, then waits for the next one. */
  #armDelivery(): void {
    const first = this.#queued[0];
    if (first === undefined || this.#closed) return;
    this.#delivery = this.#clock.setTimeout(
      () => {
        this.#delivery = undefined;
        const now = this.#clock.now();
        while (this.#queued.length > 0 && this.#queued[0]!.at <= now) this.#writeNow(this.#queued.shift()!.line);
        this.#armDelivery();
      },
      first.at - this.#clock.now(),
      { name: 'watch delivery' },
    );
  }

  #writeNow(line: string): void {
    if (this.#closed || this.#res.writableEnded || this.#res.destroyed) return;
    this.#res.write(line);
    if (this.#opts.activityStream !== undefined) this.#clock.activity.sent(this.#opts.activityStream);
  }
}
