/**
 * The manager's DomainDisruptionBudget half (D14), composed apart from
 * manager.ts so that file only wires it: the budget informer (started with
 * the caches, never waited for — a cluster without the budget CRD still gets
 * a ready manager, and the webhook fails closed only while the CRD is served
 * but not listed yet), one status writer and per-budget lock shared by the
 * eviction webhook (every replica) and the budget controller (the leader
 * only), the enforcement handed to `webhookFromKube`, and the metrics hooks.
 * Start at `ManagerBudgets`.
 */
import type { Clock } from '../clock/clock.ts';
import type { EventRecorder } from '../client/event-recorder.ts';
import type { KubeClient } from '../client/http-client.ts';
import { withFields, type Logger } from '../client/logger.ts';
import type { WatcherOptions } from '../client/watcher.ts';
import { BudgetController } from '../controller/budget-controller.ts';
import { BudgetCache } from '../kube/budget-cache.ts';
import { BudgetStatusWriter } from '../kube/budget-status-writer.ts';
import type { ManagerCaches } from '../kube/caches.ts';
import type { BudgetEnforcementDeps } from '../webhook/budget-eviction.ts';
import { budgetEnforcementFromKube } from '../webhook/budget-kube.ts';
import type { ManagerMetrics } from './metrics.ts';

export interface BudgetSettings {
  /** `--guard-pod-deletion`: budgets are checked on pod DELETE too, not only on evictions. */
  guardPodDeletion?: boolean;
  /** How long a domain stays blocked before a DisruptionBlocked Warning (default 10 minutes). */
  blockedThresholdMs?: number;
  /** Budget controller workers (default 2). */
  workers?: number;
}

export interface ManagerBudgetsOptions {
  client: KubeClient;
  clock: Clock;
  caches: ManagerCaches;
  log: Logger;
  /** The controller's recorder (DisruptionBlocked / DisruptionUnblocked). */
  recorder: EventRecorder;
  metrics: ManagerMetrics;
  watcher?: Partial<Pick<WatcherOptions, 'metrics' | 'resyncMs'>>;
  settings?: BudgetSettings;
}

export class ManagerBudgets {
  readonly cache: BudgetCache;
  readonly writer: BudgetStatusWriter;
  readonly enforcement: BudgetEnforcementDeps;
  readonly guardPodDeletion: boolean;
  readonly #o: ManagerBudgetsOptions;

  constructor(options: ManagerBudgetsOptions) {
    this.#o = options;
    const settings = options.settings ?? {};
    this.guardPodDeletion = settings.guardPodDeletion ?? false;
    this.cache = new BudgetCache({
      client: options.client,
      log: withFields(options.log, { logger: 'caches' }),
      ...(options.watcher === undefined ? {} : { watcher: options.watcher }),
      ...(options.caches.namespaces === undefined ? {} : { namespaces: options.caches.namespaces }),
    });
    this.writer = new BudgetStatusWriter({ client: options.client, metrics: options.metrics.budgets });
    this.enforcement = budgetEnforcementFromKube({
      clock: options.clock,
      caches: options.caches,
      budgets: this.cache,
      writer: this.writer,
      metrics: options.metrics.budgets,
      log: withFields(options.log, { logger: 'webhook' }),
    });
  }

  start(): void {
    this.cache.start();
  }

  /** A controller for the leader (start it, stop it when leadership ends). */
  newController(): BudgetController {
    const settings = this.#o.settings ?? {};
    return new BudgetController({
      caches: this.#o.caches,
      budgets: this.cache,
      writer: this.writer,
      clock: this.#o.clock,
      recorder: this.#o.recorder,
      log: withFields(this.#o.log, { logger: 'controller' }),
      metrics: this.#o.metrics.budgets,
      ...(settings.workers === undefined ? {} : { workers: settings.workers }),
      ...(settings.blockedThresholdMs === undefined ? {} : { blockedThresholdMs: settings.blockedThresholdMs }),
    });
  }

  stop(): Promise<void> {
    return this.cache.stop();
  }
}
