/**
 * Kubernetes timestamps. `metav1.Time` serializes with second precision in
 * RFC 3339 UTC ("2026-01-01T00:00:00Z"); sub-second parts are lost on a round
 * trip (spec §1.4), so everything stored goes through `formatTime`.
 * Pure: callers pass the instant (epoch milliseconds); nothing here reads a clock.
 */
import { boundedMemo } from './memo.ts';

/** Formats epoch milliseconds as a second-precision RFC 3339 UTC timestamp (truncating). */
export function formatTime(ms: number): string {
  const seconds = Math.floor(ms / 1000) * 1000;
  return new Date(seconds).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Formats epoch milliseconds with microseconds, as `metav1.MicroTime` does (Lease, events.k8s.io). */
export function formatMicroTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}

/**
 * Timestamps parsed lately. Pods created or made ready in the same second
 * share one string, and ranking pods (ActivePods order) parses each several
 * times per comparison, so a burst of 1,000 pods parses a few hundred
 * distinct strings a million times.
 */
const parseTimeText = boundedMemo(
  4096,
  (value: string) => value,
  (value: string): number | undefined => {
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? undefined : ms;
  },
);

/** Parses an RFC 3339 timestamp to epoch milliseconds; undefined when absent or malformed. */
export function parseTime(value: string | null | undefined): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  return parseTimeText(value);
}
