/**
 * Jittered exponential back-off, as a pure function of the failure count so
 * the watcher, the work queue and tests agree on the numbers:
 * delay(n) = min(max, initial * factor^(n-1)) * (1 + jitter * random()), capped at max.
 * With `random = () => 0` the delays are exact (800, 1600, 3200, ... ms),
 * which is how tests assert retry times on the virtual clock.
 */

export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  /** Growth per failure (default 2). */
  factor?: number;
  /** Extra random share of the delay, 0..1 (default 0.25). */
  jitter?: number;
}

/** client-go's reflector: 800 ms doubling to 30 s. */
export const WATCH_BACKOFF: BackoffPolicy = { initialMs: 800, maxMs: 30_000, factor: 2, jitter: 0.25 };

/** The delay before retry number `failures` (1 = first retry); 0 when there was no failure. */
export function backoffDelay(policy: BackoffPolicy, failures: number, random: () => number = Math.random): number {
  if (failures <= 0) return 0;
  const factor = policy.factor ?? 2;
  const jitter = Math.min(1, Math.max(0, policy.jitter ?? 0.25));
  // Capping the exponent keeps the arithmetic finite for absurd failure counts.
  const base = Math.min(policy.maxMs, policy.initialMs * factor ** Math.min(failures - 1, 64));
  const r = Math.min(1, Math.max(0, random()));
  return Math.min(policy.maxMs, Math.round(base * (1 + jitter * r)));
}
