/**
 * Waiting in tests without fixed sleeps (STYLE §15):
 *
 * - `eventually(check, { timeoutMs, intervalMs })` polls on the real clock
 *   until `check` stops throwing (and does not return `false`);
 * - `settleUntil(clock, check)` is its virtual-clock twin: it lets the
 *   system quiesce, checks, and if the check fails moves time to the next
 *   pending timer, so a test never waits longer (in real time) than the
 *   work takes, and virtual time only moves as far as needed.
 * Both fail with the check's last error, so the assertion message says what
 * was still wrong.
 */
import { realClock, type Clock } from '../clock/clock.ts';
import type { VirtualClock } from '../clock/virtual-clock.ts';

export interface EventuallyOptions {
  /** Real milliseconds before giving up (default 10 s). */
  timeoutMs?: number;
  /** Real milliseconds between checks (default 20 ms). */
  intervalMs?: number;
  /** The clock to poll on (default the real clock). */
  clock?: Clock;
}

type Check<T> = () => T | Promise<T>;

async function attempt<T>(check: Check<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  try {
    const value = await check();
    if (value === false) return { ok: false, error: new Error('the check returned false') };
    return { ok: true, value };
  } catch (error) {
    return { ok: false, error };
  }
}

function giveUp(error: unknown, what: string): Error {
  const reason = error instanceof Error ? error.message : String(error);
  return new Error(`${what}: ${reason}`, { cause: error });
}

/** Polls `check` until it passes; resolves with its value. */
export async function eventually<T>(check: Check<T>, options: EventuallyOptions = {}): Promise<T> {
  const clock = options.clock ?? realClock();
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 20;
  const deadline = clock.now() + timeoutMs;
  for (;;) {
    const result = await attempt(check);
    if (result.ok) return result.value;
    if (clock.now() >= deadline) throw giveUp(result.error, `still failing after ${timeoutMs} ms`);
    await clock.sleep(intervalMs);
  }
}

export interface SettleUntilOptions {
  /** Virtual milliseconds before giving up (default 30 minutes). */
  maxMs?: number;
}

/**
 * Runs the virtual clock until `check` passes: quiesce, check, jump to the
 * next pending timer (background ones included), repeat. Resolves with the
 * check's value; rejects when no timer is left or `maxMs` of virtual time passed.
 */
export async function settleUntil<T>(clock: VirtualClock, check: Check<T>, options: SettleUntilOptions = {}): Promise<T> {
  const deadline = clock.now() + (options.maxMs ?? 30 * 60_000);
  for (;;) {
    await clock.quiesce();
    const result = await attempt(check);
    if (result.ok) return result.value;
    const next = clock.pendingTimers().reduce<number | undefined>((min, t) => (min === undefined || t.at < min ? t.at : min), undefined);
    if (next === undefined) throw giveUp(result.error, 'nothing left to run on the virtual clock');
    if (next > deadline) {
      await clock.advanceTo(deadline);
      const last = await attempt(check);
      if (last.ok) return last.value;
      throw giveUp(last.error, `still failing after ${options.maxMs ?? 30 * 60_000} virtual ms`);
    }
    await clock.advanceTo(next);
  }
}
