/**
 * Time for every effectful component (DESIGN.md "Time").
 *
 * Components never call `Date.now()` or `setTimeout` themselves: they receive a
 * `Clock`. Production passes `realClock()`; the embedded cluster and the
 * simulator pass a `VirtualClock` (virtual-clock.ts), on which minutes pass in
 * milliseconds. This file and virtual-clock.ts are the only places allowed to
 * touch the host's timers.
 *
 * Activity: on a virtual clock, time may only jump when the system is
 * quiescent. Components report the async work they do (a request being
 * served, a queue item being processed, a watch event not yet consumed) to
 * `clock.activity`; on the real clock the tracker does nothing.
 */

export interface Timer {
  cancel(): void;
}

export interface TimerOptions {
  /**
   * Periodic housekeeping (lease renewal, heartbeats, resyncs, bookmarks).
   * `VirtualClock.settle()` does not wait for background timers: a cluster
   * whose only pending timers are background ones is quiescent.
   */
  background?: boolean;
  /** Shown in diagnostics when the virtual clock waits for something. */
  name?: string;
}

export interface Activity {
  /** Marks the start of async work; call the returned function exactly once when it ends. */
  begin(label: string): () => void;
  /** Runs `fn` as one tracked activity (its sleeps on the clock do not count as busy). */
  run<T>(label: string, fn: () => Promise<T>): Promise<T>;
  /**
   * Awaits what another flow will deliver (a lock it holds, a result it
   * computes): like a sleep, the waiting does not count as busy, so the flow
   * being waited for can sleep on a virtual clock without stopping time.
   */
  waitFor<T>(promise: Promise<T>): Promise<T>;
  /** A watch event was written on a tracked stream. */
  sent(stream: string): void;
  /** A watch event of a tracked stream was consumed by its reader. */
  received(stream: string): void;
  /** The reader of a tracked stream is gone: forget what it did not consume. */
  closeStream(stream: string): void;
  /** An identifier that servers compare to decide whether a stream is tracked by this clock. */
  readonly id: string;
}

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  setTimeout(fn: () => void | Promise<void>, ms: number, options?: TimerOptions): Timer;
  setInterval(fn: () => void | Promise<void>, ms: number, options?: TimerOptions): Timer;
  /** Resolves after `ms`; rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal, options?: TimerOptions): Promise<void>;
  readonly activity: Activity;
  /** True for virtual clocks (tests and the simulator). */
  readonly virtual: boolean;
}

/** HTTP header our watchers send so that an in-process API server can account for watch deliveries. */
export const ACTIVITY_HEADER = 'x-workloadspread-activity';

/**
 * HTTP header (`<clock id>:<stream>`) on every request a client on a virtual
 * clock sends: the client counts the request as one unsent event of that
 * stream until an in-process server on the same clock has started its own
 * tracked activity for it (`received`), or until the answer's head arrives
 * (`closeStream`). Between the client's flush and the server's first look
 * at the bytes the system is therefore never seen as idle. Both ends are in
 * handoff.ts: the clients' requests to the API server and the API server's
 * admission reviews to webhooks carry it.
 */
export const REQUEST_ACTIVITY_HEADER = 'x-workloadspread-request';

const noopActivity: Activity = {
  begin: () => () => {},
  run: (_label, fn) => fn(),
  waitFor: (promise) => promise,
  sent: () => {},
  received: () => {},
  closeStream: () => {},
  id: '',
};

/** The host's clock. */
export function realClock(): Clock {
  return {
    now: () => Date.now(),
    setTimeout(fn, ms) {
      const handle = setTimeout(() => void fn(), Math.max(0, ms));
      return { cancel: () => clearTimeout(handle) };
    },
    setInterval(fn, ms) {
      const handle = setInterval(() => void fn(), Math.max(1, ms));
      return { cancel: () => clearInterval(handle) };
    },
    sleep(ms, signal) {
      return new Promise<void>((resolve, reject) => {
        if (signal?.aborted) {
          reject(signal.reason);
          return;
        }
        const handle = setTimeout(() => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        }, Math.max(0, ms));
        const onAbort = () => {
          clearTimeout(handle);
          reject(signal?.reason);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
    activity: noopActivity,
    virtual: false,
  };
}
