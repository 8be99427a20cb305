/**
 * `Runnable`: the one lifecycle contract of every long-running part — the
 * manager's servers, caches and leader loops, the embedded cluster's control
 * loops and kubelet, a queue loop. controller-runtime's `manager.Runnable`
 * with an explicit stop, so a part that ends watches and timers says when
 * they are gone (a test file must exit by itself).
 *
 * The contract a runnable keeps:
 * - `start(signal)` starts it and resolves once it serves (a server listens,
 *   a loop's caches have synced and its workers run). `signal` cancels a
 *   start under way, which then rejects with the signal's reason; it does
 *   not stop what already runs — `stop()` does;
 * - it starts at most once: a second `start` returns the first one's promise
 *   and starts nothing;
 * - `stop()` ends every watch, timer, request and worker it started and
 *   resolves when they are gone; every call returns the first call's
 *   promise. Stopped before it started, it has nothing to end; stopped while
 *   starting, it ends what the start has set going so far, and the start
 *   gives up (resolves) without setting anything more going;
 * - a stopped runnable never starts again (`start` resolves at once, doing
 *   nothing): make a new one (the manager builds its leader loops afresh for
 *   every term it leads).
 *
 * `Lifecycle` is that bookkeeping, written once: a runnable hands it the
 * body of its start and of its stop. The stop body runs at once, even while
 * the start body waits (a wait that ignores its signal cannot hold a stop
 * up), so a start body checks `stopping` after each wait before it sets
 * anything going; so does work in flight (a timer, a request) before it
 * arms more. Start at `Lifecycle`.
 */

import { setMaxListeners } from 'node:events';

export interface Runnable {
  /** For logs and diagnostics. */
  readonly name: string;
  /** Starts it; resolves once it serves. `signal` cancels the start (not what already runs). */
  start(signal: AbortSignal): Promise<void>;
  /** Ends everything it started; resolves when all is gone. Idempotent. */
  stop(): Promise<void>;
}

export type LifecyclePhase = 'new' | 'starting' | 'running' | 'failed' | 'stopped';

export class Lifecycle {
  #phase: LifecyclePhase = 'new';
  #start: Promise<void> | undefined;
  #stop: Promise<void> | undefined;
  readonly #stopping = new AbortController();

  get phase(): LifecyclePhase {
    return this.#phase;
  }

  /** True from the moment `stop` is called: work in flight starts nothing new. */
  get stopping(): boolean {
    return this.#stopping.signal.aborted;
  }

  /** Aborts when `stop` is called (the start body's signal includes it). */
  get signal(): AbortSignal {
    return this.#stopping.signal;
  }

  /**
   * Runs `body` once, with a signal that aborts on the caller's `signal` or
   * on `stop`. A body that fails because `stop` was called resolves (the
   * runnable stopped before it served); any other failure rejects, and the
   * phase is `failed` (a stop still ends what it had started).
   */
  start(signal: AbortSignal | undefined, body: (signal: AbortSignal) => Promise<void>): Promise<void> {
    if (this.#start !== undefined) return this.#start;
    if (this.stopping) {
      this.#start = Promise.resolve();
      return this.#start;
    }
    this.#phase = 'starting';
    // Not AbortSignal.any: the listeners on the caller's signal (one the cluster hands every component) go once the start is over.
    const combined = new AbortController();
    // Every wait of the start may listen (an informer each: the garbage collector has dozens).
    setMaxListeners(0, combined.signal);
    const sources = signal === undefined ? [this.#stopping.signal] : [signal, this.#stopping.signal];
    const forward = (source: AbortSignal) => () => combined.abort(source.reason);
    const listeners = sources.map((source) => [source, forward(source)] as const);
    for (const [source, listener] of listeners) {
      if (source.aborted) combined.abort(source.reason);
      else source.addEventListener('abort', listener, { once: true });
    }
    this.#start = (async () => {
      try {
        await body(combined.signal);
        if (!this.stopping) this.#phase = 'running';
      } catch (err) {
        if (this.stopping) return;
        this.#phase = 'failed';
        throw err;
      } finally {
        for (const [source, listener] of listeners) source.removeEventListener('abort', listener);
      }
    })();
    return this.#start;
  }

  /**
   * Marks it stopping (aborting the start's signal) and runs `body` once, at
   * once: synchronously up to its first await. Every call returns the first
   * call's promise.
   */
  stop(body: () => Promise<void> | void): Promise<void> {
    this.#stop ??= this.#runStop(body);
    return this.#stop;
  }

  async #runStop(body: () => Promise<void> | void): Promise<void> {
    this.#phase = 'stopped';
    this.#stopping.abort();
    await body();
  }
}
