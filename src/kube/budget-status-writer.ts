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
import { DDB_API_VERSION, DDB_KIND } from '../api/disruption-budget.ts';
import { describeError, isConflict, isNotFound } from '../client/errors.ts';
import type { KubeClient } from '../client/http-client.ts';
import { DDB_REF } from './budget-cache.ts';
import { WorkloadSpreadState } from './ws-state.ts';

export type BudgetWriteResult =
  | { ok: true; ws: DomainDisruptionBudget }
  | { ok: false; reason: 'Conflict' | 'NotFound' | 'Error'; message: string; error: unknown };

export type BudgetReadResult = { ok: true; ws: DomainDisruptionBudget } | { ok: false; reason: 'NotFound' | 'Error'; message: string; error: unknown };

/** Who writes, for metrics. */
export type BudgetWriteSource = 'webhook' | 'controller';

export interface BudgetStatusWriterMetrics {
  budgetStatusWrite?(source: BudgetWriteSource, result: 'ok' | 'Conflict' | 'NotFound' | 'Error'): void;
}

/** The per-process state of budgets: locks by UID and the last copies written. */
export type BudgetState = WorkloadSpreadState<DomainDisruptionBudget>;

export function newBudgetState(): BudgetState {
  return new WorkloadSpreadState<DomainDisruptionBudget>();
}

export class BudgetStatusWriter {
  readonly state: BudgetState;
  readonly #client: KubeClient;
  readonly #metrics: BudgetStatusWriterMetrics;

  constructor(options: { client: KubeClient; state?: BudgetState; metrics?: BudgetStatusWriterMetrics }) {
    this.#client = options.client;
    this.state = options.state ?? newBudgetState();
    this.#metrics = options.metrics ?? {};
  }

  /** The freshest in-process copy: `cached` (the informer's) or the last one this process wrote or read. */
  freshest(cached: DomainDisruptionBudget | undefined, namespace: string, name: string): DomainDisruptionBudget | undefined {
    return this.state.freshest(cached, namespace, name);
  }

  /** Replaces the status of `budget` with `status`, conditional on `budget`'s resourceVersion. */
  async writeStatus(budget: DomainDisruptionBudget, status: DomainDisruptionBudgetStatus, source: BudgetWriteSource): Promise<BudgetWriteResult> {
    const meta = budget.metadata ?? {};
    const namespace = meta.namespace ?? '';
    const name = meta.name ?? '';
    if (name === '' || typeof meta.resourceVersion !== 'string' || meta.resourceVersion === '') {
      const error = new Error(`DomainDisruptionBudget ${namespace}/${name} has no name or resourceVersion: refusing an unconditional status write`);
      this.#metrics.budgetStatusWrite?.(source, 'Error');
      return { ok: false, reason: 'Error', message: error.message, error };
    }
    const body = { apiVersion: budget.apiVersion ?? DDB_API_VERSION, kind: budget.kind ?? DDB_KIND, metadata: meta, spec: budget.spec, status };
    try {
      const stored = await this.#client.updateStatus<DomainDisruptionBudget>(DDB_REF, body);
      this.state.remember(stored);
      this.#metrics.budgetStatusWrite?.(source, 'ok');
      return { ok: true, ws: stored };
    } catch (error) {
      const reason = isConflict(error) ? 'Conflict' : isNotFound(error) ? 'NotFound' : 'Error';
      if (reason === 'NotFound') this.state.forget(namespace, name);
      this.#metrics.budgetStatusWrite?.(source, reason);
      return { ok: false, reason, message: describeError(error), error };
    }
  }

  /** Reads the budget straight from the API server (after a conflict the caches may lag). */
  async getFresh(namespace: string, name: string): Promise<BudgetReadResult> {
    try {
      const budget = await this.#client.get<DomainDisruptionBudget>(DDB_REF, name, { namespace });
      this.state.remember(budget);
      return { ok: true, ws: budget };
    } catch (error) {
      if (isNotFound(error)) {
        this.state.forget(namespace, name);
        return { ok: false, reason: 'NotFound', message: describeError(error), error };
      }
      return { ok: false, reason: 'Error', message: describeError(error), error };
    }
  }
}
