/**
 * Kubernetes timestamps. `metav1.Time` serializes with second precision in
 * RFC 3339 UTC ("2026-01-01T00:00:00Z"); sub-second parts are lost on a round
 * trip (spec §1.4), so everything stored goes through `formatTime`.
 * Pure: callers pass the instant (epoch milliseconds); nothing here reads a clock.
 */

/** Formats epoch milliseconds as a second-precision RFC 3339 UTC timestamp (truncating). */
export function formatTime(ms: number): string {
  const seconds = Math.floor(ms / 1000) * 1000;
  return new Date(seconds).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Formats epoch milliseconds with microseconds, as `metav1.MicroTime` does (Lease, events.k8s.io). */
export function formatMicroTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}

/** Parses an RFC 3339 timestamp to epoch milliseconds; undefined when absent or malformed. */
export function parseTime(value: string | null | undefined): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}
