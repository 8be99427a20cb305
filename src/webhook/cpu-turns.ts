/**
 * Turns on the event loop for CPU-heavy steps of large admission reviews, so
 * that no request holds the one thread the process has for long: health
 * probes, lease renewals, watch events and small admissions are served
 * between any two turns.
 *
 * `take()` resolves one waiter per turn of the event loop (a `setImmediate`,
 * which runs after the loop has polled for I/O), first come first served.
 * The waiter's synchronous work runs right after its turn is granted; the
 * next waiter is granted a turn only in the next loop iteration, after the
 * I/O that arrived meanwhile was handled. A large review takes a turn before
 * each heavy step (parse, decide and inject, diff, encode), so the longest
 * time the loop spends away from I/O is one step of one review, which grows
 * with that review's size alone (webhook/server.ts bounds the size).
 *
 * Not a timer: nothing waits for time here, only for the loop to come round.
 */

export class CpuTurns {
  readonly #waiting: (() => void)[] = [];
  #scheduled = false;

  /** Resolves when it is this caller's turn. */
  take(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#waiting.push(resolve);
      this.#schedule();
    });
  }

  /** Callers waiting for a turn now. */
  waiting(): number {
    return this.#waiting.length;
  }

  #schedule(): void {
    if (this.#scheduled || this.#waiting.length === 0) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#waiting.shift()?.();
      // Scheduled from inside the check phase, the next grant runs in the next loop iteration.
      this.#schedule();
    });
  }
}

/**
 * At most `limit` large reviews are worked on at once; the others wait with
 * only their raw body in memory. Bounds the memory of a flood of large
 * reviews by `limit` parsed pods instead of by the flood's size, and keeps a
 * second large review computing while the first waits for a status write.
 */
export class ReviewSlots {
  readonly #limit: number;
  #busy = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`the limit of concurrent large reviews must be a positive integer, got ${limit}`);
    this.#limit = limit;
  }

  /** Resolves with the function that gives the slot back (call it exactly once). */
  async acquire(): Promise<() => void> {
    if (this.#busy >= this.#limit) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#busy++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      // The slot passes straight to the next waiter, so #busy stays the same.
      if (next !== undefined) next();
      else this.#busy--;
    };
  }

  /** Reviews in a slot now, and waiting for one. */
  load(): { busy: number; waiting: number } {
    return { busy: this.#busy, waiting: this.#waiting.length };
  }
}

/** What admission reads of a review's caller: whether it is gone. An AbortSignal is one. */
export interface CallerGone {
  readonly aborted: boolean;
}

/** What a handler learns about the request it serves, besides the review. */
export interface AdmissionContext {
  /** Aborted when the caller is gone (the API server gave up waiting): work for it is wasted. */
  readonly signal: CallerGone;
  /** Waits for a turn before a CPU-heavy step; resolves at once for small reviews. */
  turn(): Promise<void>;
}

const NEVER: CallerGone = Object.freeze({ aborted: false });

/** A context for callers outside the server (tests, tools): never aborted, no waiting. */
export const IMMEDIATE_CONTEXT: AdmissionContext = Object.freeze({ signal: NEVER, turn: () => Promise.resolve() });
