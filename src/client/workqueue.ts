/**
 * `WorkQueue<K>`: the typed work queue of level-triggered controllers
 * (STYLE §3; client-go's workqueue, controller-runtime's reconcile loop).
 *
 * Invariants:
 * - a key is queued at most once (adding a queued key is a no-op);
 * - a key is never handed to two workers at once; a key added while it is
 *   being processed is queued again once, when `done` is called;
 * - every key added is processed at least once after its last add (unless
 *   the queue is shut down first);
 * - `addAfter` keeps the earliest pending time per key; `addRateLimited`
 *   waits 5 ms · 2^n (n = failures of the key so far) up to 1000 s, until
 *   `forget`, and at least as long as an overall token bucket asks (10 per
 *   second after a burst of 100): client-go's default controller rate
 *   limiter, the larger of the two;
 * - one difference from client-go, on purpose: a failure while a retry of the
 *   key is already waiting does not count (the waiting retry stands). Events
 *   run a key between its retries — pods becoming ready while a webhook is
 *   down — and while the cause lasts those runs fail too; counted, each
 *   doubled the next delay (15 failures in the first 5 s of an outage put the
 *   retry 164 s out). So the retry after an outage comes at most about as long
 *   after it ended as it lasted;
 * - after `shutdown()`, adds are ignored, delayed adds are cancelled, and the
 *   workers finish what is queued (drain) before `run()` resolves.
 *
 * `run(workers, handler)` is the controller loop: the handler returns
 * `{ requeueAfterMs }` (forget, then add after the delay), returns nothing
 * (forget) or throws (rate-limited requeue; an error with `terminal: true`
 * is logged and not retried; conflicts requeue quietly).
 *
 * Turns (`turnPerSync`, the manager's loops): a worker starts each item on a
 * turn of the event loop of its own (setImmediate), so a batch of keys — a
 * resync, or the WorkloadSpreads a burst of pod events concerns — holds the
 * loop for one sync at a time, and an admission review or a probe that
 * arrived meanwhile is served in between. Without it, keys queued together
 * run back to back in microtasks. The embedded cluster's loops stand for
 * controllers in processes of their own and do without: in its one busy
 * process a turn per sync slowed the whole cluster.
 *
 * Virtual time: each item runs inside `clock.activity.run` (its turn
 * included), and an idle worker receives a key synchronously when it is
 * added, so between "ready" and "running" there are only microtasks: the
 * clock cannot jump past ready work. A key therefore waits only while every worker is inside a handler,
 * which is busy unless it sleeps on the clock (a back-off, a request waiting
 * for a server that delays on the same clock); then time must move for the
 * queue to move, so waiting keys deliberately do NOT count as busy (that
 * would deadlock the virtual clock). Delays are clock timers (foreground, or
 * background for periodic requeues).
 *
 * Race mode (`races`, the embedded cluster's controllers only): before each
 * sync a worker waits a delay drawn for the queue's name on the clock, as a
 * controller that is slow to get to its work would; the key stays taken.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Clock, Timer } from '../clock/clock.ts';
import type { Races } from '../clock/races.ts';
import { describeError, isConflict } from './errors.ts';
import { objectFields, silentLogger, type Logger } from './logger.ts';

export interface RateLimit {
  baseMs: number;
  maxMs: number;
  /** An overall token bucket over every retry of the queue: `qps` tokens a second, at most `burst` saved up. */
  bucket?: { qps: number; burst: number };
}

/** client-go's DefaultControllerRateLimiter (controller-runtime's default): per key 5 ms doubling to 1000 s, overall 10 qps after a burst of 100. */
export const DEFAULT_RATE_LIMIT: RateLimit = { baseMs: 5, maxMs: 1_000_000, bucket: { qps: 10, burst: 100 } };

/** golang.org/x/time/rate's reservation: a token is taken at once; the delay is how long until the bucket is no longer in debt. */
class TokenBucket {
  #tokens: number;
  #at: number;
  constructor(
    readonly qps: number,
    readonly burst: number,
    now: number,
  ) {
    this.#tokens = burst;
    this.#at = now;
  }

  /** Takes a token; answers the milliseconds until it is really there. */
  reserve(now: number): number {
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#at) * this.qps) / 1000);
    this.#at = now;
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : Math.ceil((-this.#tokens * 1000) / this.qps);
  }
}

export interface WorkQueueMetrics {
  depth?(depth: number): void;
  adds?(): void;
  retries?(): void;
  /** Clock milliseconds between a key's (first) add and a worker taking it. */
  latency?(ms: number): void;
  /** Clock milliseconds a handler ran. */
  workDuration?(ms: number): void;
  /** Handler failures, terminal or to be retried. */
  errors?(terminal: boolean): void;
}

export interface WorkQueueOptions {
  clock: Clock;
  /** For logs and activity labels. */
  name?: string;
  rateLimit?: RateLimit;
  metrics?: WorkQueueMetrics;
  log?: Logger;
  /** Race mode: a random delay (drawn for the queue's name) before each sync. */
  races?: Races | undefined;
  /** Start each sync on an event-loop turn of its own, so I/O that arrived meanwhile is served between syncs. */
  turnPerSync?: boolean;
}

export interface WorkResult {
  /** Process the key again after this many milliseconds. */
  requeueAfterMs?: number;
  /** The requeue is housekeeping (a periodic resync): do not hold a virtual clock's settle() for it. */
  background?: boolean;
}

export interface WorkContext {
  /** Aborted when the queue shuts down without draining. */
  signal: AbortSignal;
  /** Failures of this key so far (0 on a fresh key). */
  retries: number;
}

export type WorkHandler<K> = (key: K, context: WorkContext) => Promise<WorkResult | void> | WorkResult | void;

/** An error the handler throws to say "retrying will not help". */
export class TerminalError extends Error {
  override readonly name = 'TerminalError';
  readonly terminal = true;
}

export function isTerminalError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { terminal?: unknown }).terminal === true;
}

interface Delayed {
  at: number;
  background: boolean;
  /** Scheduled by `addRateLimited` (a retry after a failure). */
  retry: boolean;
  timer: Timer;
}

export class WorkQueue<K> {
  readonly #clock: Clock;
  readonly #name: string;
  readonly #limit: RateLimit;
  readonly #metrics: WorkQueueMetrics;
  readonly #log: Logger;
  readonly #races: Races | undefined;
  readonly #turnPerSync: boolean;
  #queue: K[] = [];
  readonly #dirty = new Set<K>();
  readonly #processing = new Set<K>();
  readonly #addedAt = new Map<K, number>();
  readonly #failures = new Map<K, number>();
  readonly #delayed = new Map<K, Delayed>();
  readonly #bucket: TokenBucket | undefined;
  #getters: ((key: K | undefined) => void)[] = [];
  #shuttingDown = false;
  #workers: Promise<void>[] = [];
  readonly #abort = new AbortController();

  constructor(options: WorkQueueOptions) {
    this.#clock = options.clock;
    this.#name = options.name ?? 'queue';
    this.#limit = options.rateLimit ?? DEFAULT_RATE_LIMIT;
    const bucket = this.#limit.bucket;
    this.#bucket = bucket === undefined ? undefined : new TokenBucket(bucket.qps, bucket.burst, this.#clock.now());
    this.#metrics = options.metrics ?? {};
    this.#log = options.log ?? silentLogger;
    this.#races = options.races;
    this.#turnPerSync = options.turnPerSync === true;
  }

  /** Keys waiting for a worker. */
  get length(): number {
    return this.#queue.length;
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** True while `key` is queued, being processed, or waiting for a delayed add. */
  has(key: K): boolean {
    return this.#dirty.has(key) || this.#processing.has(key) || this.#delayed.has(key);
  }

  add(key: K): void {
    if (this.#shuttingDown) return;
    this.#metrics.adds?.();
    if (this.#dirty.has(key)) return;
    this.#dirty.add(key);
    if (!this.#addedAt.has(key)) this.#addedAt.set(key, this.#clock.now());
    if (this.#processing.has(key)) return;
    const getter = this.#getters.shift();
    if (getter !== undefined) {
      this.#take(key);
      getter(key);
      return;
    }
    this.#queue.push(key);
    this.#changed();
  }

  /** Adds `key` after `ms` on the clock; a pending earlier add of the key wins. */
  addAfter(key: K, ms: number, options: { background?: boolean } = {}): void {
    this.#addAfter(key, ms, options.background ?? false, false);
  }

  #addAfter(key: K, ms: number, background: boolean, retry: boolean): void {
    if (this.#shuttingDown) return;
    if (!(ms > 0)) {
      this.add(key);
      return;
    }
    const at = this.#clock.now() + ms;
    const pending = this.#delayed.get(key);
    if (pending !== undefined) {
      if (pending.at < at || (pending.at === at && (!pending.background || background))) return;
      pending.timer.cancel();
    }
    const timer = this.#clock.setTimeout(
      () => {
        if (this.#delayed.get(key)?.timer !== timer) return;
        this.#delayed.delete(key);
        this.add(key);
      },
      ms,
      { background, name: `${this.#name} requeue` },
    );
    this.#delayed.set(key, { at, background, retry, timer });
  }

  /**
   * Adds `key` after its exponential back-off (and the overall bucket's
   * delay), and counts a failure — unless a retry of the key is already
   * waiting: that one stands, and this failure does not count.
   */
  addRateLimited(key: K): void {
    if (this.#shuttingDown) return;
    this.#metrics.retries?.();
    if (this.#delayed.get(key)?.retry === true) return;
    const failures = this.#failures.get(key) ?? 0;
    this.#failures.set(key, failures + 1);
    const overall = this.#bucket?.reserve(this.#clock.now()) ?? 0;
    this.#addAfter(key, Math.max(this.backoffFor(failures), overall), false, true);
  }

  /** The delay `addRateLimited` uses after `failures` failures. */
  backoffFor(failures: number): number {
    return Math.min(this.#limit.maxMs, this.#limit.baseMs * 2 ** Math.min(failures, 64));
  }

  /** Clears the failure count of `key`. */
  forget(key: K): void {
    this.#failures.delete(key);
  }

  numRequeues(key: K): number {
    return this.#failures.get(key) ?? 0;
  }

  /**
   * The next key (marking it as processing); undefined once the queue is shut
   * down and drained. Pair each key with `done(key)`.
   */
  get(): Promise<K | undefined> {
    const key = this.#queue.shift();
    if (key !== undefined) {
      this.#take(key);
      this.#changed();
      return Promise.resolve(key);
    }
    if (this.#shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#getters.push(resolve));
  }

  /** Ends processing of `key`; queues it again if it was added meanwhile. */
  done(key: K): void {
    this.#processing.delete(key);
    if (this.#abort.signal.aborted) this.#dirty.delete(key);
    if (!this.#dirty.has(key)) return;
    const getter = this.#getters.shift();
    if (getter !== undefined) {
      this.#take(key);
      getter(key);
      return;
    }
    this.#queue.push(key);
    this.#changed();
  }

  /**
   * Runs `workers` loops that take keys and call `handler` until shutdown;
   * resolves when they have all exited.
   */
  run(workers: number, handler: WorkHandler<K>): Promise<void> {
    const loops: Promise<void>[] = [];
    for (let i = 0; i < Math.max(1, Math.floor(workers)); i++) {
      loops.push(
        (async () => {
          for (;;) {
            const key = await this.get();
            if (key === undefined) return;
            await this.#process(key, handler);
          }
        })(),
      );
    }
    const all = Promise.all(loops).then(() => {});
    this.#workers.push(all);
    return all;
  }

  /**
   * Stops accepting keys and cancels delayed adds. With `drain` (default) the
   * workers process what is queued first; without, the queue is dropped and
   * handlers see their signal aborted. Resolves when every worker has exited.
   */
  async shutdown(options: { drain?: boolean } = {}): Promise<void> {
    this.#shuttingDown = true;
    for (const d of this.#delayed.values()) d.timer.cancel();
    this.#delayed.clear();
    if (options.drain === false) {
      for (const key of this.#queue) this.#dirty.delete(key);
      this.#queue = [];
      this.#abort.abort(new Error(`work queue ${this.#name} shut down`));
    }
    const getters = this.#getters;
    this.#getters = [];
    for (const g of getters) g(undefined);
    this.#changed();
    await Promise.all(this.#workers);
  }

  // ---- internals ----

  #take(key: K): void {
    this.#dirty.delete(key);
    this.#processing.add(key);
    const added = this.#addedAt.get(key);
    this.#addedAt.delete(key);
    if (added !== undefined) this.#metrics.latency?.(this.#clock.now() - added);
  }

  async #process(key: K, handler: WorkHandler<K>): Promise<void> {
    await this.#clock.activity.run(`${this.#name} ${String(key)}`, async () => {
      if (this.#turnPerSync) await nextTurn();
      if (this.#races !== undefined && !(await this.#raceDelay())) {
        this.done(key);
        return;
      }
      const started = this.#clock.now();
      try {
        const result = await handler(key, { signal: this.#abort.signal, retries: this.numRequeues(key) });
        this.forget(key);
        const after = result?.requeueAfterMs;
        if (after !== undefined && after >= 0) this.addAfter(key, after, result?.background === true ? { background: true } : {});
      } catch (err) {
        const terminal = isTerminalError(err);
        this.#metrics.errors?.(terminal);
        const fields = { queue: this.#name, ...(typeof key === 'string' ? objectFields(key) : { key: String(key) }), err: describeError(err) };
        if (terminal) {
          this.forget(key);
          this.#log.error(fields, 'terminal error, not retrying');
        } else {
          this.#log[isConflict(err) ? 'debug' : 'warn']({ ...fields, retries: this.numRequeues(key) + 1 }, 'processing failed, will retry');
          this.addRateLimited(key);
        }
      } finally {
        this.#metrics.workDuration?.(this.#clock.now() - started);
        this.done(key);
      }
    });
  }

  /** Race mode: waits the drawn delay; false when the queue shut down without draining meanwhile. */
  async #raceDelay(): Promise<boolean> {
    const ms = this.#races?.delay('sync', this.#name) ?? 0;
    if (ms <= 0) return true;
    try {
      await this.#clock.sleep(ms, this.#abort.signal, { name: `${this.#name} race delay` });
      return true;
    } catch {
      return false;
    }
  }

  #changed(): void {
    this.#metrics.depth?.(this.#queue.length);
  }
}
