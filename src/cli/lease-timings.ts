/**
 * Leader-election timings, one rule for the manager's flags and the chart's
 * values: client-go refuses a LeaderElectionConfig unless
 * LeaseDuration > RenewDeadline > 1.2 × RetryPeriod > 0. Both callers parse
 * the Go durations themselves (each names its own field); this says what is
 * wrong with the three, or nothing.
 */

/** What the manager runs with when nothing is set (client-go's and controller-runtime's defaults). */
export const DEFAULT_LEASE_TIMINGS = { leaseDuration: '15s', renewDeadline: '10s', retryPeriod: '2s' } as const;

export interface LeaseTimings<T> {
  leaseDuration: T;
  renewDeadline: T;
  retryPeriod: T;
}

/**
 * The first broken ordering rule, worded with the caller's names for the
 * three fields and the texts the user gave; undefined when the timings hold.
 */
export function leaseTimingsProblem(ms: LeaseTimings<number>, label: LeaseTimings<string>, text: LeaseTimings<string>): string | undefined {
  if (ms.retryPeriod < 1) return `${label.retryPeriod} must be longer than 0, got ${text.retryPeriod}`;
  if (ms.leaseDuration <= ms.renewDeadline) return `${label.leaseDuration} (${text.leaseDuration}) must be longer than ${label.renewDeadline} (${text.renewDeadline})`;
  // Integer arithmetic: 1.2 × retry compared exactly.
  if (ms.renewDeadline * 10 <= ms.retryPeriod * 12) return `${label.renewDeadline} (${text.renewDeadline}) must be longer than 1.2 × ${label.retryPeriod} (${text.retryPeriod})`;
  return undefined;
}
