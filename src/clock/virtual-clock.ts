/**
 * A virtual clock: time stands still until someone advances it, and then
 * jumps straight to the next timer, so ten minutes of cluster life replay in
 * milliseconds of wall time.
 *
 * Invariant: time only moves when the system is quiescent, i.e. no tracked
 * activity is running. Tracked activities are
 *   - timer callbacks (automatically, until the promise they return settles),
 *   - work reported with `activity.begin()` / `activity.run()` (a request being
 *     served, a queue item being reconciled),
 *   - watch events written on a tracked stream and not yet consumed
 *     (`sent` / `received`, accounted per stream).
 * A tracked activity that sleeps on this clock is not busy while it sleeps
 * (found through AsyncLocalStorage), so a retry loop with back-off inside a
 * request does not block the time it is waiting for; nor while it waits for
 * another flow through `activity.waitFor` (a lock whose holder sleeps).
 *
 * Race mode (`options.races`): work that falls due at the same instant runs
 * in an order the races' seed decides (a random rank per timer) instead of
 * the order it was scheduled in; without it, (time, creation) order.
 *
 * Start reading at `settle()` and `advance()`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { Activity, Clock, Timer, TimerOptions } from './clock.ts';
import type { Races } from './races.ts';

const CLOSED_STREAMS_KEPT = 10_000;

interface VirtualTimer {
  at: number;
  /** Orders timers due at the same instant before `seq` does: 0 unless in race mode. */
  rank: number;
  seq: number;
  fn: () => void | Promise<void>;
  background: boolean;
  name: string;
  interval?: number;
  cancelled: boolean;
}

interface Token {
  label: string;
  /** Flows of this activity that are running (not sleeping on the clock). */
  running: number;
  done: boolean;
}

export interface SettleResult {
  /** False when the virtual deadline was reached with foreground timers still pending. */
  quiescent: boolean;
  /** Virtual milliseconds that passed. */
  elapsedMs: number;
}

export class QuiescenceTimeout extends Error {
  constructor(readonly busy: string[]) {
    super(`the virtual clock waited too long (real time) for: ${busy.slice(0, 20).join(', ') || 'nothing visible'}`);
  }
}

export class VirtualClock implements Clock {
  readonly virtual = true;
  readonly activity: Activity;
  #now: number;
  #seq = 0;
  #timers: VirtualTimer[] = [];
  #busy = 0;
  /** Callers of `quiesce` still waiting (`quiesceAll` waits for them). */
  #quiescing = 0;
  /** How many times a tracked activity stopped being busy (quiesce looks again when this moved). */
  #ends = 0;
  #labels = new Map<number, string>();
  #labelSeq = 0;
  #streams = new Map<string, number>();
  /** Streams whose reader is gone: a late write on them (a server that has not seen the close yet) is not work. */
  #closedStreams = new Set<string>();
  #idleWaiters: (() => void)[] = [];
  #tokens = new AsyncLocalStorage<Token>();
  #realWaitMs: number;
  readonly #races: Races | undefined;

  /**
   * @param start epoch ms the clock starts at (default 2026-01-01T00:00:00Z)
   * @param options.realWaitMs how long (real time) to wait for a busy system before failing
   * @param options.races race mode: timers due at the same instant fire in an order drawn from its seed
   */
  constructor(start = Date.UTC(2026, 0, 1), options: { realWaitMs?: number; races?: Races | undefined } = {}) {
    this.#now = start;
    this.#realWaitMs = options.realWaitMs ?? 60_000;
    this.#races = options.races;
    const id = `vclock-${randomUUID()}`;
    this.activity = {
      id,
      begin: (label) => this.#begin(label),
      run: (label, fn) => this.#run(label, fn),
      waitFor: <T>(promise: Promise<T>): Promise<T> => {
        const token = this.#tokens.getStore();
        this.#suspend(token);
        return promise.finally(() => this.#resume(token));
      },
      sent: (stream) => {
        if (this.#closedStreams.has(stream)) return;
        this.#streams.set(stream, (this.#streams.get(stream) ?? 0) + 1);
        this.#busy++;
      },
      received: (stream) => {
        const n = this.#streams.get(stream) ?? 0;
        if (n <= 0) return;
        this.#streams.set(stream, n - 1);
        this.#decrement();
      },
      closeStream: (stream) => {
        const n = this.#streams.get(stream) ?? 0;
        this.#streams.delete(stream);
        this.#closedStreams.add(stream);
        // Late writes come right after a close; remembering the most recent closes is enough.
        if (this.#closedStreams.size > CLOSED_STREAMS_KEPT) {
          const oldest = this.#closedStreams.values().next();
          if (oldest.done !== true) this.#closedStreams.delete(oldest.value);
        }
        for (let i = 0; i < n; i++) this.#decrement();
      },
    };
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void | Promise<void>, ms: number, options: TimerOptions = {}): Timer {
    return this.#add(fn, ms, options, undefined);
  }

  setInterval(fn: () => void | Promise<void>, ms: number, options: TimerOptions = {}): Timer {
    return this.#add(fn, ms, options, Math.max(1, ms));
  }

  sleep(ms: number, signal?: AbortSignal, options: TimerOptions = {}): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const token = this.#tokens.getStore();
      this.#suspend(token);
      const onAbort = () => {
        timer.cancel();
        this.#resume(token);
        reject(signal?.reason);
      };
      const timer = this.#add(
        () => {
          signal?.removeEventListener('abort', onAbort);
          this.#resume(token);
          resolve();
        },
        ms,
        { name: options.name ?? 'sleep', background: options.background ?? false },
        undefined,
        false,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Number of tracked activities and unconsumed watch events right now. */
  get busy(): number {
    return this.#busy;
  }

  /** Labels of what is busy, for diagnostics. */
  busyLabels(): string[] {
    const streams = [...this.#streams].filter(([, n]) => n > 0).map(([s, n]) => `watch ${s} (${n} unread)`);
    return [...this.#labels.values(), ...streams];
  }

  /** Pending timers (for diagnostics and tests). */
  pendingTimers(): { at: number; name: string; background: boolean }[] {
    return this.#timers.filter((t) => !t.cancelled).map((t) => ({ at: t.at, name: t.name, background: t.background }));
  }

  /**
   * Waits (real time) until nothing tracked is running and every timer that is
   * already due has fired. Time does not move.
   */
  async quiesce(): Promise<void> {
    this.#quiescing++;
    try {
      await this.#quiesce();
    } finally {
      this.#quiescing--;
    }
  }

  /**
   * `quiesce`, and also until no other caller of `quiesce` is still waiting
   * and the flows those waits release have had their turn: a flow driving the
   * clock on behalf of work that itself waits for quiescence (the embedded
   * cluster's "let every watcher see it" after a write) calls this before it
   * moves time, so the work goes on first, always — time never moves in
   * between by the luck of which wait ended first. Time does not move.
   */
  async quiesceAll(): Promise<void> {
    const started = performance.now();
    for (;;) {
      await this.quiesce();
      if (this.#quiescing === 0) {
        // A wait that just ended continues in microtasks and I/O callbacks: one more turn for them.
        await new Promise((r) => setImmediate(r));
        if (this.#quiescing === 0 && this.#busy === 0 && !this.#hasDue()) return;
      }
      if (performance.now() - started > this.#realWaitMs) throw new QuiescenceTimeout(this.busyLabels());
    }
  }

  async #quiesce(): Promise<void> {
    const started = performance.now();
    for (;;) {
      if (this.#fireDue()) continue;
      if (this.#busy > 0) {
        await this.#waitIdle(started);
        continue;
      }
      // Let I/O callbacks that are already queued (socket data) run, then look again.
      const ends = this.#ends;
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      // Work that began and ended in those turns (a server answering at once) may have left
      // bytes on their way to a caller that is not busy meanwhile: give them their turns too.
      if (this.#busy === 0 && !this.#hasDue() && this.#ends === ends) return;
      if (performance.now() - started > this.#realWaitMs) throw new QuiescenceTimeout(this.busyLabels());
    }
  }

  /**
   * Moves time forward by `ms`, firing every timer that falls due on the way,
   * in order. Aborting `signal` stops it between two timers (rejecting with
   * the signal's reason); the event loop gets a turn at every timer, so a
   * signal handler runs promptly however far the target is.
   */
  async advance(ms: number, signal?: AbortSignal): Promise<void> {
    await this.advanceTo(this.#now + Math.max(0, ms), signal);
  }

  async advanceTo(target: number, signal?: AbortSignal): Promise<void> {
    await this.quiesce();
    for (;;) {
      signal?.throwIfAborted();
      const next = this.#peek();
      if (next === undefined || next.at > target) break;
      this.#now = Math.max(this.#now, next.at);
      await this.quiesce();
    }
    if (target > this.#now) this.#now = target;
    await this.quiesce();
  }

  /**
   * Runs until the system is quiescent and no foreground timer is pending,
   * jumping from timer to timer (background timers fire on the way but are
   * never waited for). Stops at `maxMs` of virtual time (default 30 minutes).
   */
  async settle(maxMs = 30 * 60_000): Promise<SettleResult> {
    const start = this.#now;
    const deadline = start + maxMs;
    for (;;) {
      await this.quiesce();
      const next = this.#nextForeground();
      if (next === undefined) return { quiescent: true, elapsedMs: this.#now - start };
      if (next.at > deadline) {
        await this.advanceTo(deadline);
        return { quiescent: false, elapsedMs: this.#now - start };
      }
      await this.advanceTo(next.at);
    }
  }

  // ---- internals ----

  #add(fn: () => void | Promise<void>, ms: number, options: TimerOptions, interval: number | undefined, tracked = true): Timer {
    const delay = Number.isFinite(ms) ? Math.max(0, ms) : 0;
    const name = options.name ?? 'anonymous';
    const timer: VirtualTimer = {
      at: this.#now + delay,
      rank: this.#races?.rank(name) ?? 0,
      seq: this.#seq++,
      fn: tracked ? () => this.#run(`timer ${options.name ?? 'anonymous'}`, async () => fn()) : fn,
      background: options.background ?? false,
      name,
      cancelled: false,
    };
    if (interval !== undefined) timer.interval = interval;
    this.#insert(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  #insert(timer: VirtualTimer): void {
    // Binary insertion keeps timers ordered by (at, rank, seq): firing order is deterministic.
    let lo = 0;
    let hi = this.#timers.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const t = this.#timers[mid]!;
      if (t.at < timer.at || (t.at === timer.at && (t.rank < timer.rank || (t.rank === timer.rank && t.seq < timer.seq)))) lo = mid + 1;
      else hi = mid;
    }
    this.#timers.splice(lo, 0, timer);
  }

  #peek(): VirtualTimer | undefined {
    while (this.#timers.length > 0 && this.#timers[0]!.cancelled) this.#timers.shift();
    return this.#timers[0];
  }

  #nextForeground(): VirtualTimer | undefined {
    return this.#timers.find((t) => !t.cancelled && !t.background);
  }

  #hasDue(): boolean {
    const next = this.#peek();
    return next !== undefined && next.at <= this.#now;
  }

  /** Fires every timer due now; true when at least one fired. */
  #fireDue(): boolean {
    let fired = false;
    for (;;) {
      const next = this.#peek();
      if (next === undefined || next.at > this.#now) return fired;
      this.#timers.shift();
      fired = true;
      if (next.interval !== undefined && !next.cancelled) {
        // Re-arm the same object, so the handle returned to the caller cancels future runs too.
        next.at += next.interval;
        next.rank = this.#races?.rank(next.name) ?? 0;
        next.seq = this.#seq++;
        this.#insert(next);
      }
      try {
        const result = next.fn();
        if (result instanceof Promise) result.catch(() => {});
      } catch {
        // A throwing timer callback must not stop time; the component logs its own errors.
      }
    }
  }

  #begin(label: string): () => void {
    const id = this.#labelSeq++;
    this.#labels.set(id, label);
    this.#busy++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#labels.delete(id);
      this.#decrement();
    };
  }

  #run<T>(label: string, fn: () => Promise<T>): Promise<T> {
    const token: Token = { label, running: 1, done: false };
    const id = this.#labelSeq++;
    this.#labels.set(id, label);
    this.#busy++;
    const finish = () => {
      token.done = true;
      this.#labels.delete(id);
      if (token.running > 0) this.#decrement();
    };
    let promise: Promise<T>;
    try {
      promise = this.#tokens.run(token, fn);
    } catch (err) {
      finish();
      return Promise.reject(err);
    }
    return promise.finally(finish);
  }

  #suspend(token: Token | undefined): void {
    if (token === undefined || token.done) return;
    token.running--;
    if (token.running === 0) this.#decrement();
  }

  #resume(token: Token | undefined): void {
    if (token === undefined || token.done) return;
    token.running++;
    if (token.running === 1) this.#busy++;
  }

  #decrement(): void {
    this.#busy--;
    this.#ends++;
    if (this.#busy <= 0) {
      this.#busy = Math.max(0, this.#busy);
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  #waitIdle(started: number): Promise<void> {
    const remaining = this.#realWaitMs - (performance.now() - started);
    if (remaining <= 0) return Promise.reject(new QuiescenceTimeout(this.busyLabels()));
    return new Promise<void>((resolve, reject) => {
      // A real timer is right here: this guards against a component that never reports idle.
      const guard = setTimeout(() => reject(new QuiescenceTimeout(this.busyLabels())), remaining);
      this.#idleWaiters.push(() => {
        clearTimeout(guard);
        resolve();
      });
    });
  }
}
