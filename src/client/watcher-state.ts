/**
 * The list/watch state machine's decisions, pure (STYLE §4; kube-rs
 * `watcher.rs`, client-go's reflector): given how the last list or watch
 * ended, what to do next, after how long, and from which resourceVersion.
 * `watcher.ts` performs the steps; this file only decides, so every rule is
 * a table row in the tests.
 *
 * Rules:
 * - a list that succeeds → watch from its resourceVersion, failures reset;
 * - a list that fails → back off, list again;
 * - a watch that closes cleanly → re-watch from the last seen version at once,
 *   unless it was "very short" (under a second, no event: client-go's guard
 *   against a server that hangs up immediately), which backs off first;
 * - 410 Gone (HTTP or in-stream) → relist at once; only a watch that started
 *   from a list just made and was gone at once backs off first, so a history
 *   shorter than a list round-trip cannot spin list → watch → 410;
 * - the idle watchdog → re-watch at once (the connection was dead, not the server);
 * - a periodic resync → relist;
 * - other errors → back off (at least the server's Retry-After), then re-watch;
 *   a 4xx other than 429 means our position is not valid any more: relist.
 * An event delivered means progress: the failure count resets.
 */
import { backoffDelay, type BackoffPolicy } from './backoff.ts';

export type WatcherStateName = 'empty' | 'listing' | 'watching' | 'backoff' | 'stopped';

export type ListOutcome = { type: 'listed'; resourceVersion: string } | { type: 'listFailed'; code?: number; retryAfterMs?: number };

export type WatchEnd =
  /** The server ended the stream (EOF, its timeoutSeconds). */
  | 'closed'
  /** 410: the version is too old. */
  | 'gone'
  /** No byte for longer than the idle timeout. */
  | 'idle'
  /** The periodic resync interrupted the watch. */
  | 'resync'
  /** A line that is not a watch event. */
  | 'malformed'
  /** Any other failure (network, HTTP error, in-stream ERROR). */
  | 'error';

export interface WatchOutcome {
  end: WatchEnd;
  /** Events (not bookmarks) delivered by this watch. */
  events: number;
  /** Bytes arrived at all (bookmarks count). */
  progressed: boolean;
  /** How long the watch lasted on the clock. */
  durationMs: number;
  /** The watch started from the resourceVersion of the list just before it. */
  fromList?: boolean;
  /** HTTP or Status code of the failure, when there is one. */
  code?: number;
  retryAfterMs?: number;
}

export type StepCause = 'start' | 'listed' | 'listFailed' | 'watchClosed' | 'shortWatch' | 'gone' | 'idle' | 'resync' | 'malformed' | 'watchFailed';

export interface Step {
  next: 'list' | 'watch';
  /** Back-off before the next request (0 = now). */
  delayMs: number;
  failures: number;
  /** Where the next watch starts ('' before the first list). */
  resourceVersion: string;
  cause: StepCause;
}

export interface StepContext {
  failures: number;
  /** The last resourceVersion seen (list, event or bookmark). */
  resourceVersion: string;
  policy: BackoffPolicy;
  random: () => number;
}

/** Watches shorter than this that delivered nothing count as failures (client-go: one second). */
export const SHORT_WATCH_MS = 1000;

function failed(ctx: StepContext, next: 'list' | 'watch', cause: StepCause, retryAfterMs?: number): Step {
  const failures = ctx.failures + 1;
  const delayMs = Math.max(backoffDelay(ctx.policy, failures, ctx.random), retryAfterMs ?? 0);
  return { next, delayMs, failures, resourceVersion: next === 'list' ? '' : ctx.resourceVersion, cause };
}

export function afterList(outcome: ListOutcome, ctx: StepContext): Step {
  if (outcome.type === 'listed') return { next: 'watch', delayMs: 0, failures: 0, resourceVersion: outcome.resourceVersion, cause: 'listed' };
  return failed(ctx, 'list', 'listFailed', outcome.retryAfterMs);
}

export function afterWatch(outcome: WatchOutcome, ctx: StepContext): Step {
  const progressed = outcome.events > 0;
  const base: StepContext = progressed ? { ...ctx, failures: 0 } : ctx;
  const short = !outcome.progressed && outcome.durationMs < SHORT_WATCH_MS;
  switch (outcome.end) {
    case 'closed':
      if (short) return failed(base, 'watch', 'shortWatch');
      return { next: 'watch', delayMs: 0, failures: base.failures, resourceVersion: ctx.resourceVersion, cause: 'watchClosed' };
    case 'gone':
      if (short && outcome.fromList === true) return failed(base, 'list', 'gone');
      return { next: 'list', delayMs: 0, failures: base.failures, resourceVersion: '', cause: 'gone' };
    case 'idle':
      return { next: 'watch', delayMs: 0, failures: base.failures, resourceVersion: ctx.resourceVersion, cause: 'idle' };
    case 'resync':
      return { next: 'list', delayMs: 0, failures: base.failures, resourceVersion: '', cause: 'resync' };
    case 'malformed':
      return failed(base, 'watch', 'malformed');
    case 'error': {
      const code = outcome.code ?? 0;
      const relist = code >= 400 && code < 500 && code !== 429;
      return failed(base, relist ? 'list' : 'watch', 'watchFailed', outcome.retryAfterMs);
    }
  }
}
