/**
 * Writing a DomainDisruptionBudget's status (D14): `PUT .../status` with the
 * resourceVersion of the copy the decision was made from, so that two
 * replicas approving evictions in the same domain cannot both succeed (the
 * second gets 409 and decides again on the fresh copy). The eviction webhook
 * writes `disruptedPods` records; the budget controller writes the counts.
 *
 * Both share, per process, one `WorkloadSpreadState` of budgets: the lock per
 * budget UID (a controller write and a webhook record never race in-process)
 * and the last copy written or read fresh, so a decision starts from the
 * newest copy even before the informer has caught up with our own write.
 * Results are data, with the shapes the group commit expects.
 */
import type { DomainDisruptionBudget, DomainDisruptionBudgetStatus } from '../api/disruption-budget.ts';
import type { KubeClient } from '../client/http-client.ts';
import { DDB_REF } from './budget-cache.ts';
import { ConditionalStatusWriter, type ReadResult, type StatusWriteFailureReason, type StatusWriteSource, type WriteResult } from './status-writer.ts';
import { WorkloadSpreadState } from './ws-state.ts';

export type BudgetWriteResult = WriteResult<DomainDisruptionBudget>;

export type BudgetReadResult = ReadResult<DomainDisruptionBudget>;

/** Who writes, for metrics. */
export type BudgetWriteSource = StatusWriteSource;

export interface BudgetStatusWriterMetrics {
  budgetStatusWrite?(source: BudgetWriteSource, result: 'ok' | StatusWriteFailureReason): void;
}

/** The per-process state of budgets: locks by UID and the last copies written. */
export type BudgetState = WorkloadSpreadState<DomainDisruptionBudget>;

export function newBudgetState(): BudgetState {
  return new WorkloadSpreadState<DomainDisruptionBudget>();
}

export class BudgetStatusWriter extends ConditionalStatusWriter<DomainDisruptionBudget, DomainDisruptionBudgetStatus> {
  constructor(options: { client: KubeClient; state?: BudgetState; metrics?: BudgetStatusWriterMetrics }) {
    const metrics = options.metrics ?? {};
    super(options.client, DDB_REF, options.state ?? newBudgetState(), (source, result) => metrics.budgetStatusWrite?.(source, result));
  }
}
