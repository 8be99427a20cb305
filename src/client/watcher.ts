/**
 * `Watcher`: keeps a consumer (usually a `Store`) in step with one resource
 * collection through list + watch, and never gives up: it relists on 410,
 * re-watches after clean closes from the last version it saw (bookmarks
 * included), backs off on errors, aborts a silent connection (idle watchdog)
 * and relists periodically as a safety net. The decisions are in
 * `watcher-state.ts`; this file performs them.
 *
 * What the consumer sees (kube-rs's watcher events):
 *   init, initApply(obj)*, initDone(rv)   a complete list: swap contents at initDone
 *   apply(obj), delete(obj)               watch events
 *   bookmark(rv)                          progress without a change
 * Events are delivered one at a time; a returned promise is awaited before
 * the next. Errors never reach the consumer: they go to `onError`/metrics
 * and into the back-off. `stop()` ends everything quietly.
 *
 * Virtual time: a relist runs as one tracked activity; each watch request
 * carries the activity header so the server counts events it writes, and an
 * event is reported consumed only after the consumer returned. Back-off is a
 * foreground timer (recovery is work the system still has to do); the
 * watchdog and resync are background timers.
 *
 * Start reading at `#loop`.
 */
import type { Clock, Timer } from '../clock/clock.ts';
import type { KubeObject } from '../k8s/types.ts';
import { WATCH_BACKOFF, type BackoffPolicy } from './backoff.ts';
import { ApiError, describeError, isGone, retryAfterMs, type Status } from './errors.ts';
import type { KubeClient, Query } from './http-client.ts';
import { silentLogger, type Logger } from './logger.ts';
import type { WatchStreamEvent } from './ndjson.ts';
import { apiVersionOf, pathFor, type ResourceRef } from './resources.ts';
import { afterList, afterWatch, type ListOutcome, type Step, type StepCause, type WatchEnd, type WatchOutcome, type WatcherStateName } from './watcher-state.ts';

export type WatcherEvent =
  | { type: 'init' }
  | { type: 'initApply'; object: KubeObject }
  | { type: 'initDone'; resourceVersion: string }
  | { type: 'apply'; object: KubeObject }
  | { type: 'delete'; object: KubeObject }
  | { type: 'bookmark'; resourceVersion: string };

export type WatcherSink = (event: WatcherEvent) => void | Promise<void>;

/** Counters per transition and request, without a metrics library. */
export interface WatcherMetrics {
  transition?(from: WatcherStateName, to: WatcherStateName, cause: StepCause | 'stop'): void;
  request?(verb: 'list' | 'watch'): void;
  event?(type: WatchStreamEvent['type']): void;
}

export interface WatcherOptions {
  client: KubeClient;
  ref: ResourceRef;
  /** Namespace to watch; omitted for all namespaces (or a cluster-scoped ref). */
  namespace?: string;
  /** Applied to the list and to every watch. */
  labelSelector?: string;
  fieldSelector?: string;
  /** Items per list page (default 500). */
  pageSize?: number;
  /** Server-side watch timeout, drawn uniformly per watch (default 300–600 s, like client-go). */
  watchTimeoutSeconds?: { min: number; max: number };
  /** Added to the watch timeout for the idle watchdog (default 30 s). */
  idleMarginMs?: number;
  backoff?: BackoffPolicy;
  /** Periodic relist (default 30 min; 0 disables). */
  resyncMs?: number;
  /** Randomness for jitter and timeouts (tests pass a fixed one). */
  random?: () => number;
  metrics?: WatcherMetrics;
  log?: Logger;
  /** Shown in logs and activity labels (default the resource name). */
  name?: string;
  /** Every failure, with what happens next. */
  onError?(error: unknown, next: { action: 'list' | 'watch'; delayMs: number }): void;
}

export const DEFAULT_RESYNC_MS = 30 * 60_000;

class WatchAbort {
  constructor(readonly end: WatchEnd) {}
}

export class Watcher {
  readonly #client: KubeClient;
  readonly #clock: Clock;
  readonly #opts: WatcherOptions;
  readonly #sink: WatcherSink;
  readonly #random: () => number;
  readonly #log: Logger;
  readonly #name: string;
  #state: WatcherStateName = 'empty';
  #resourceVersion = '';
  #stop = new AbortController();
  #current: AbortController | undefined;
  #resyncDue = false;
  #resyncTimer: Timer | undefined;
  #loopDone: Promise<void> | undefined;

  constructor(options: WatcherOptions, sink: WatcherSink) {
    this.#client = options.client;
    this.#clock = options.client.clock;
    this.#opts = options;
    this.#sink = sink;
    this.#random = options.random ?? Math.random;
    this.#log = options.log ?? silentLogger;
    this.#name = options.name ?? `${options.ref.resource}${options.namespace !== undefined ? `/${options.namespace}` : ''}`;
  }

  get state(): WatcherStateName {
    return this.#state;
  }

  /** The last resourceVersion seen from a list, an event or a bookmark. */
  get resourceVersion(): string {
    return this.#resourceVersion;
  }

  /** Starts the loop (idempotent). */
  start(): void {
    if (this.#loopDone !== undefined || this.#stop.signal.aborted) return;
    const resyncMs = this.#opts.resyncMs ?? DEFAULT_RESYNC_MS;
    if (resyncMs > 0) {
      this.#resyncTimer = this.#clock.setInterval(
        () => {
          this.#resyncDue = true;
          this.#abortWatch(new WatchAbort('resync'));
        },
        resyncMs,
        { background: true, name: `resync ${this.#name}` },
      );
    }
    this.#loopDone = this.#loop().catch((err: unknown) => {
      this.#log.error({ watcher: this.#name, err: describeError(err) }, 'watcher loop failed');
    });
  }

  /** Stops quietly: no error event, no restart; resolves when requests and timers are gone. */
  async stop(): Promise<void> {
    if (!this.#stop.signal.aborted) this.#stop.abort(new Error('watcher stopped'));
    this.#resyncTimer?.cancel();
    this.#abortWatch(new WatchAbort('closed'));
    await this.#loopDone;
    if (this.#state !== 'stopped') this.#transition('stopped', 'stop');
  }

  #transition(to: WatcherStateName, cause: StepCause | 'stop'): void {
    const from = this.#state;
    this.#state = to;
    this.#opts.metrics?.transition?.(from, to, cause);
  }

  #abortWatch(reason: WatchAbort): void {
    const current = this.#current;
    if (current !== undefined && !current.signal.aborted) current.abort(reason);
  }

  async #loop(): Promise<void> {
    const stop = this.#stop.signal;
    let step: Step = { next: 'list', delayMs: 0, failures: 0, resourceVersion: '', cause: 'start' };
    while (!stop.aborted) {
      if (step.delayMs > 0) {
        this.#transition('backoff', step.cause);
        try {
          await this.#clock.sleep(step.delayMs, stop, { name: `backoff ${this.#name}` });
        } catch {
          break;
        }
      }
      if (this.#resyncDue || step.next === 'list') {
        this.#resyncDue = false;
        this.#transition('listing', step.cause);
        const { outcome, error } = await this.#list();
        if (stop.aborted) break;
        step = afterList(outcome, this.#ctx(step.failures));
        if (error !== undefined) this.#reportError(error, step);
      } else {
        this.#transition('watching', step.cause);
        const { outcome, error } = await this.#watch(step.resourceVersion);
        if (stop.aborted) break;
        if (step.cause === 'listed') outcome.fromList = true;
        step = afterWatch(outcome, this.#ctx(step.failures));
        if (error !== undefined) this.#reportError(error, step);
      }
    }
    this.#transition('stopped', 'stop');
  }

  #ctx(failures: number) {
    return { failures, resourceVersion: this.#resourceVersion, policy: this.#opts.backoff ?? WATCH_BACKOFF, random: this.#random };
  }

  #reportError(error: unknown, step: Step): void {
    const fields = { watcher: this.#name, err: describeError(error), next: step.next, delayMs: step.delayMs };
    // 410 is routine (history compacted): the relist is the remedy, not a problem.
    if (step.cause === 'gone') this.#log.info(fields, 'watch expired, relisting');
    else this.#log.warn(fields, step.cause === 'listFailed' ? 'list failed' : 'watch failed');
    this.#opts.onError?.(error, { action: step.next, delayMs: step.delayMs });
  }

  #selectors(): Query {
    const q: Query = {};
    if (this.#opts.labelSelector !== undefined && this.#opts.labelSelector !== '') q['labelSelector'] = this.#opts.labelSelector;
    if (this.#opts.fieldSelector !== undefined && this.#opts.fieldSelector !== '') q['fieldSelector'] = this.#opts.fieldSelector;
    return q;
  }

  #path(): string {
    const ns = this.#opts.ref.namespaced ? this.#opts.namespace : undefined;
    return pathFor(this.#opts.ref, ns === undefined ? {} : { namespace: ns });
  }

  /** List items come without apiVersion/kind; give them the ref's, as watch events have. */
  #withKind(received: KubeObject): KubeObject {
    let obj = received;
    if (this.#client.watchWithoutManagedFields && obj.metadata?.managedFields !== undefined) {
      const { managedFields: _dropped, ...metadata } = obj.metadata;
      obj = { ...obj, metadata };
    }
    if (obj.apiVersion !== undefined && obj.kind !== undefined) return obj;
    return { ...obj, apiVersion: obj.apiVersion ?? apiVersionOf(this.#opts.ref), kind: obj.kind ?? this.#opts.ref.kind };
  }

  /** One complete paged list, delivered between init and initDone, as one tracked activity. */
  #list(): Promise<{ outcome: ListOutcome; error?: unknown }> {
    return this.#clock.activity.run(`relist ${this.#name}`, async () => {
      const path = this.#path();
      let token: string | undefined;
      let resourceVersion = '';
      try {
        await this.#sink({ type: 'init' });
        do {
          this.#opts.metrics?.request?.('list');
          const query: Query = { ...this.#selectors(), limit: this.#opts.pageSize ?? 500 };
          if (token !== undefined) query['continue'] = token;
          const page = await this.#client.request<{ metadata?: { resourceVersion?: string; continue?: string }; items?: unknown }>({ method: 'GET', path, query, signal: this.#stop.signal });
          if (resourceVersion === '') resourceVersion = page?.metadata?.resourceVersion ?? '';
          const items = Array.isArray(page?.items) ? (page.items as unknown[]) : [];
          for (const item of items) {
            if (typeof item === 'object' && item !== null) await this.#sink({ type: 'initApply', object: this.#withKind(item as KubeObject) });
          }
          const next = page?.metadata?.continue;
          token = typeof next === 'string' && next !== '' ? next : undefined;
        } while (token !== undefined);
        this.#resourceVersion = resourceVersion;
        await this.#sink({ type: 'initDone', resourceVersion });
        return { outcome: { type: 'listed', resourceVersion } };
      } catch (error) {
        const outcome: ListOutcome = { type: 'listFailed' };
        if (error instanceof ApiError) outcome.code = error.code;
        const after = retryAfterMs(error);
        if (after !== undefined) outcome.retryAfterMs = after;
        return { outcome, error };
      }
    });
  }

  /** One watch request, from `from` until it ends; never throws. */
  async #watch(from: string): Promise<{ outcome: WatchOutcome; error?: unknown }> {
    const controller = new AbortController();
    this.#current = controller;
    const onStop = () => controller.abort(new WatchAbort('closed'));
    this.#stop.signal.addEventListener('abort', onStop, { once: true });
    const range = this.#opts.watchTimeoutSeconds ?? { min: 300, max: 600 };
    const timeoutSeconds = Math.round(range.min + (range.max - range.min) * Math.min(1, Math.max(0, this.#random())));
    const idleMs = timeoutSeconds * 1000 + (this.#opts.idleMarginMs ?? 30_000);
    const started = this.#clock.now();
    let lastByte = started;
    let events = 0;
    let progressed = false;
    let failure: { end: WatchEnd; error?: unknown; code?: number } | undefined;

    // One background timer re-armed lazily, instead of a timer per chunk.
    let watchdog: Timer | undefined;
    const arm = (ms: number) => {
      watchdog = this.#clock.setTimeout(
        () => {
          const silent = this.#clock.now() - lastByte;
          if (silent >= idleMs) controller.abort(new WatchAbort('idle'));
          else arm(idleMs - silent);
        },
        ms,
        { background: true, name: `watchdog ${this.#name}` },
      );
    };
    arm(idleMs);

    // Not async: a synchronous sink (the Store) costs no promise per event.
    const onEvent = (ev: WatchStreamEvent): void | Promise<void> => {
      this.#opts.metrics?.event?.(ev.type);
      switch (ev.type) {
        case 'ADDED':
        case 'MODIFIED':
        case 'DELETED': {
          const rv = ev.object.metadata?.resourceVersion;
          if (typeof rv === 'string' && rv !== '') this.#resourceVersion = rv;
          events++;
          const object = this.#withKind(ev.object);
          return this.#sink(ev.type === 'DELETED' ? { type: 'delete', object } : { type: 'apply', object });
        }
        case 'BOOKMARK': {
          const rv = ev.object.metadata?.resourceVersion;
          progressed = true;
          if (typeof rv === 'string' && rv !== '') {
            this.#resourceVersion = rv;
            return this.#sink({ type: 'bookmark', resourceVersion: rv });
          }
          return;
        }
        case 'ERROR': {
          const status: Status = ev.object;
          const err = new ApiError(typeof status.code === 'number' && status.code > 0 ? status.code : 500, status, { method: 'WATCH', path: this.#path() });
          failure = isGone(err) ? { end: 'gone', error: err, code: 410 } : { end: 'error', error: err, code: err.code };
          controller.abort(new WatchAbort(failure.end));
          return;
        }
        case 'MALFORMED':
          failure = { end: 'malformed', error: new Error(`malformed watch line (${ev.error}): ${ev.line.slice(0, 200)}`) };
          controller.abort(new WatchAbort('malformed'));
          return;
      }
    };

    this.#opts.metrics?.request?.('watch');
    const query: Query = { ...this.#selectors(), resourceVersion: from, allowWatchBookmarks: 'true', timeoutSeconds };
    let end: WatchEnd = 'closed';
    let error: unknown;
    try {
      const result = await this.#client.watchStream(this.#path(), query, {
        signal: controller.signal,
        activityStream: this.#client.nextStreamId(`watch-${this.#name}`),
        onData: () => {
          lastByte = this.#clock.now();
        },
        onEvent,
      });
      if (result === 'aborted') {
        const reason: unknown = controller.signal.reason;
        end = reason instanceof WatchAbort ? reason.end : 'closed';
      }
    } catch (err) {
      end = 'error';
      error = err;
    } finally {
      watchdog?.cancel();
      this.#stop.signal.removeEventListener('abort', onStop);
      if (this.#current === controller) this.#current = undefined;
    }
    if (failure !== undefined) {
      end = failure.end;
      error = failure.error;
    }
    const outcome: WatchOutcome = { end, events, progressed: progressed || events > 0, durationMs: this.#clock.now() - started };
    if (end === 'error' && error instanceof ApiError) {
      if (isGone(error)) outcome.end = 'gone';
      outcome.code = error.code;
      const after = retryAfterMs(error);
      if (after !== undefined) outcome.retryAfterMs = after;
    }
    if (failure?.code !== undefined) outcome.code = failure.code;
    if (end === 'idle') error = new Error(`no data for ${idleMs} ms: the watch connection is presumed dead`);
    return error === undefined ? { outcome } : { outcome, error };
  }
}
