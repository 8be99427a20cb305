/**
 * DomainDisruptionBudget enforcement wired to `src/kube/` (D14): the budget
 * sources over the manager's caches and the budget cache, and one group
 * commit of budget records over the budget status writer (the same machinery
 * as the WorkloadSpread reservations, with its own queues and lock).
 * Start at `budgetEnforcementFromKube`.
 */
import type { Clock } from '../clock/clock.ts';
import type { Logger } from '../client/logger.ts';
import type { DomainDisruptionBudget, DomainDisruptionBudgetStatus } from '../api/disruption-budget.ts';
import type { BudgetCache } from '../kube/budget-cache.ts';
import type { BudgetStatusWriter } from '../kube/budget-status-writer.ts';
import type { ManagerCaches } from '../kube/caches.ts';
import type { BudgetEnforcementDeps, BudgetEnforcementMetrics, BudgetSources } from './budget-eviction.ts';
import { GroupCommit, type GroupCommitMetrics } from './group-commit.ts';
import { writerCommitStore } from './kube-sources.ts';

export function kubeBudgetSources(caches: ManagerCaches, budgets: BudgetCache): BudgetSources {
  return {
    budgets: (namespace) => budgets.budgetsIn(namespace),
    node: (name) => caches.getNode(name),
    pods: (namespace) => caches.pods.list(namespace),
    workloadSpread: (namespace, name) => caches.getWorkloadSpread(namespace, name),
  };
}

export interface KubeBudgetOptions {
  clock: Clock;
  caches: ManagerCaches;
  budgets: BudgetCache;
  writer: BudgetStatusWriter;
  metrics?: BudgetEnforcementMetrics & GroupCommitMetrics;
  log?: Logger;
  /** Conflicting writes one eviction survives (default 4). */
  attempts?: number;
  random?: () => number;
}

export function budgetEnforcementFromKube(options: KubeBudgetOptions): BudgetEnforcementDeps {
  const commit = new GroupCommit<DomainDisruptionBudget, DomainDisruptionBudgetStatus>({
    clock: options.clock,
    store: writerCommitStore(options.writer, (namespace, name) => options.budgets.get(namespace, name)),
    kind: 'DomainDisruptionBudget',
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    ...(options.log === undefined ? {} : { log: options.log }),
    ...(options.attempts === undefined ? {} : { attempts: options.attempts }),
    ...(options.random === undefined ? {} : { random: options.random }),
  });
  const deps: BudgetEnforcementDeps = { clock: options.clock, sources: kubeBudgetSources(options.caches, options.budgets), commit };
  if (options.metrics !== undefined) deps.metrics = options.metrics;
  if (options.log !== undefined) deps.log = options.log;
  return deps;
}
