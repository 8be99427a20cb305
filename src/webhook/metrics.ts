/**
 * The webhook's metrics hooks. The manager implements them with prom-client
 * (names in the issue: admission latency histogram by operation and result,
 * group-commit batch size, status-write conflicts, NoSubsetAvailable count);
 * every hook is optional so tests and tools pass `{}`.
 */
import type { GroupCommitMetrics } from './group-commit.ts';

export type AdmissionResult = 'allowed' | 'patched' | 'denied' | 'errored';

export interface WebhookMetrics extends GroupCommitMetrics {
  /** One review answered: which webhook path, the operation, the result, and seconds on the manager's clock. */
  admission?(webhook: string, operation: string, result: AdmissionResult, seconds: number): void;
  /** A review the server could not read (400) or that was too large (413). */
  badRequest?(webhook: string, code: number): void;
  /** D11: a pod admitted without a subset because none had quota. */
  noSubsetAvailable?(namespace: string, workloadspread: string): void;
  /** The serving certificate was (re)loaded. */
  certificateLoaded?(notAfterMs: number): void;
}
