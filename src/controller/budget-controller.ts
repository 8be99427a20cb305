/**
 * `BudgetController`: keeps every DomainDisruptionBudget's status true (D14),
 * as the disruption controller keeps a PodDisruptionBudget's — run by the
 * elected leader beside the WorkloadSpread controller, over the same caches.
 *
 * - Keys are budget `namespace/name`s. Budget events map to themselves; a
 *   pod event to the budgets of its namespace selecting the pod (old or new
 *   labels); a node event that can move pods between domains (added,
 *   deleted, labels changed) to every budget naming domains by node
 *   (topologyKey, nodeSelectorTerm); a WorkloadSpread event to the budgets
 *   whose workloadSpreadRef names it. A resync every 5 minutes is the
 *   safety net.
 * - One sync: core's `computeBudgetStatus` from the freshest copy (the
 *   informer's, or the one this process wrote — the eviction webhook's
 *   records included), written through `/status` only when it changed,
 *   conditionally on the copy's resourceVersion, under the per-budget lock
 *   the webhook's records use; a conflict re-reads from the API server and
 *   recomputes, so a controller write never erases a record another replica
 *   just stored. Requeued at the next disruptedPods expiry.
 * - Events (core's `domainBlockages`): Warning `DisruptionBlocked` once a
 *   domain has allowed no disruption for `blockedThresholdMs` (default 10
 *   minutes) although it could; Normal `DisruptionUnblocked` when a domain we
 *   warned about allows one again. Which domains were warned about is
 *   remembered by this process only: a new leader warns again (the recorder
 *   aggregates repeats into a series).
 * Start at `start` and `sync`.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock/clock.ts';
import { DDB_API_VERSION, DDB_GROUP, DDB_KIND, EVENT_DISRUPTION_BLOCKED, EVENT_DISRUPTION_UNBLOCKED, type DomainDisruptionBudget } from '../api/disruption-budget.ts';
import { budgetSelects, budgetStatusEqual, computeBudgetStatus, domainMode } from '../core/disruption-budget.ts';
import { DEFAULT_BLOCKED_THRESHOLD_MS, domainBlockages, type DomainBlockage } from '../core/disruption-blockage.ts';
import { describeError, isConflict } from '../client/errors.ts';
import type { EventRecorder } from '../client/event-recorder.ts';
import { objectFields, silentLogger, withFields, type Logger } from '../client/logger.ts';
import type { RateLimit, WorkQueue, WorkQueueMetrics, WorkResult } from '../client/workqueue.ts';
import type { BudgetCache } from '../kube/budget-cache.ts';
import type { BudgetStatusWriter } from '../kube/budget-status-writer.ts';
import type { ManagerCaches } from '../kube/caches.ts';
import type { Node, ObjectMeta, Pod } from '../k8s/types.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { keyOf as storeKey } from '../client/store.ts';
import { QueueLoop } from '../client/queue-loop.ts';
import type { Runnable } from '../client/runnable.ts';

export const BUDGET_CONTROLLER_NAME = 'domaindisruptionbudget';
/** On every line of this controller (controller-runtime's keys). */
export const BUDGET_CONTROLLER_LOG_FIELDS = { controller: BUDGET_CONTROLLER_NAME, controllerGroup: DDB_GROUP, controllerKind: DDB_KIND } as const;
export const DEFAULT_BUDGET_WORKERS = 2;
export const DEFAULT_BUDGET_RESYNC_MS = 5 * 60_000;
/** Status writes one sync tries before it fails (and is retried with back-off). */
const WRITE_ATTEMPTS = 3;
/** Expiries are compared strictly: look again just after the deadline. */
const REQUEUE_MARGIN_MS = 1;

export type BudgetSyncResult = 'unchanged' | 'written' | 'gone';

export interface BudgetControllerMetrics {
  /** One sync finished (or failed: 'error'). */
  budgetSync?(result: BudgetSyncResult | 'error'): void;
  /** The budget is gone: drop the series naming it. */
  forgetBudget?(namespace: string, name: string): void;
  queue?: WorkQueueMetrics;
}

export interface BudgetControllerOptions {
  caches: ManagerCaches;
  budgets: BudgetCache;
  writer: BudgetStatusWriter;
  clock: Clock;
  /** Events about budgets (undefined: none). */
  recorder?: EventRecorder;
  log?: Logger;
  workers?: number;
  /** How long a domain stays blocked before a Warning (default 10 minutes). */
  blockedThresholdMs?: number;
  resyncMs?: number;
  rateLimit?: RateLimit;
  metrics?: BudgetControllerMetrics;
}

export class BudgetController implements Runnable {
  readonly name: string;
  readonly queue: WorkQueue<string>;
  readonly #o: BudgetControllerOptions;
  readonly #log: Logger;
  /** Domains warned about, per budget key. */
  readonly #warned = new Map<string, Set<string>>();
  readonly #loop: QueueLoop;

  constructor(options: BudgetControllerOptions) {
    this.#o = options;
    this.#log = withFields(options.log ?? silentLogger, BUDGET_CONTROLLER_LOG_FIELDS);
    this.#loop = new QueueLoop({
      name: BUDGET_CONTROLLER_NAME,
      clock: options.clock,
      log: this.#log,
      workers: options.workers ?? DEFAULT_BUDGET_WORKERS,
      turnPerSync: true,
      resyncMs: options.resyncMs ?? DEFAULT_BUDGET_RESYNC_MS,
      ...(options.rateLimit === undefined ? {} : { rateLimit: options.rateLimit }),
      ...(options.metrics?.queue === undefined ? {} : { queueMetrics: options.metrics.queue }),
      // Not the budgets: without the CRD there is simply nothing to do, and budgets listed later arrive as adds.
      waitForSync: (signal) => options.caches.waitForSync(signal),
      subscribe: (add) => this.#subscribe(add),
      keys: () => options.budgets.keys(),
      handle: (key, context) => this.#handle(key, context.signal),
    });
    this.name = this.#loop.name;
    this.queue = this.#loop.queue;
  }

  enqueueAll(): void {
    this.#loop.enqueueAll();
  }

  /** Waits for the manager's caches, then runs until `stop()`. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#loop.start(signal);
  }

  stop(): Promise<void> {
    return this.#loop.stop();
  }

  async #handle(key: string, signal: AbortSignal): Promise<WorkResult | void> {
    const log = withFields(this.#log, { ...objectFields(key), reconcileID: randomUUID() });
    try {
      const { result, requeueAfterMs, background } = await this.sync(key, log, signal);
      this.#o.metrics?.budgetSync?.(result);
      if (requeueAfterMs === undefined) return undefined;
      return background === true ? { requeueAfterMs, background } : { requeueAfterMs };
    } catch (err) {
      this.#o.metrics?.budgetSync?.('error');
      if (!isConflict(err)) log.debug({ err: describeError(err) }, 'budget sync failed');
      throw err;
    }
  }

  /** One reconcile of the budget `namespace/name` (see the module comment). Throws to be retried. */
  async sync(key: string, log: Logger = withFields(this.#log, objectFields(key)), signal?: AbortSignal): Promise<{ result: BudgetSyncResult; requeueAfterMs?: number; background?: boolean }> {
    const slash = key.indexOf('/');
    const namespace = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const { budgets, writer, clock } = this.#o;
    const cached = budgets.get(namespace, name);
    if (cached === undefined || typeof cached.metadata?.deletionTimestamp === 'string') {
      writer.state.forget(namespace, name);
      this.#warned.delete(key);
      this.#o.metrics?.forgetBudget?.(namespace, name);
      return { result: 'gone' };
    }
    const uid = cached.metadata?.uid ?? key;
    const outcome = await writer.state.withLock(uid, async () => {
      let current = writer.freshest(cached, namespace, name) as DomainDisruptionBudget;
      for (let attempt = 1; ; attempt++) {
        const computed = computeBudgetStatus(current, this.#o.caches.pods.list(namespace), (n) => this.#o.caches.getNode(n), this.#workloadSpreadOf(current), clock.now());
        if (budgetStatusEqual(current.status, computed.status)) return { result: 'unchanged' as const, budget: current, requeue: computed.requeueAfterMs };
        // Stopping (no longer leading): nothing more is written.
        signal?.throwIfAborted();
        const written = await writer.writeStatus(current, computed.status, 'controller');
        if (written.ok) {
          if (computed.expired.length > 0) log.debug({ pods: computed.expired }, 'approved evictions expired without the pods being deleted');
          return { result: 'written' as const, budget: written.ws, requeue: computed.requeueAfterMs };
        }
        if (written.reason === 'NotFound') return { result: 'gone' as const, budget: undefined, requeue: undefined };
        if (written.reason !== 'Conflict' || attempt >= WRITE_ATTEMPTS) throw written.error;
        const fresh = await writer.getFresh(namespace, name);
        if (!fresh.ok) {
          if (fresh.reason === 'NotFound') return { result: 'gone' as const, budget: undefined, requeue: undefined };
          throw fresh.error;
        }
        current = fresh.ws;
      }
    });
    if (outcome.budget === undefined) {
      this.#warned.delete(key);
      return { result: 'gone' };
    }
    const alertIn = this.#events(key, outcome.budget);
    const statusIn = outcome.requeue === undefined ? undefined : outcome.requeue + REQUEUE_MARGIN_MS;
    if (statusIn !== undefined) return { result: outcome.result, requeueAfterMs: alertIn === undefined ? statusIn : Math.min(statusIn, alertIn) };
    // Only an Event may become due: a look later that must not hold a virtual clock's settle() (a
    // domain that recovers meanwhile leaves nothing to wait for; advancing the clock still fires it).
    return alertIn === undefined ? { result: outcome.result } : { result: outcome.result, requeueAfterMs: alertIn, background: true };
  }

  #workloadSpreadOf(budget: DomainDisruptionBudget): WorkloadSpread | undefined {
    const mode = domainMode(budget);
    return mode.kind === 'workloadSpreadRef' ? this.#o.caches.getWorkloadSpread(budget.metadata?.namespace ?? '', mode.name) : undefined;
  }

  /** Records the blocked/unblocked Events; returns when the next blockage becomes due. */
  #events(key: string, budget: DomainDisruptionBudget): number | undefined {
    const report = domainBlockages(budget.status, this.#o.clock.now(), this.#o.blockedThresholdMs ?? DEFAULT_BLOCKED_THRESHOLD_MS);
    const warned = this.#warned.get(key) ?? new Set<string>();
    const due = new Map(report.blocked.filter((b) => b.due).map((b) => [b.domain, b] as const));
    const stillBlocked = new Set(report.blocked.map((b) => b.domain));
    for (const [domain, b] of due) {
      if (warned.has(domain)) continue;
      warned.add(domain);
      this.#record(budget, 'Warning', EVENT_DISRUPTION_BLOCKED, blockedNote(b, this.#o.clock.now()));
    }
    for (const domain of [...warned]) {
      if (stillBlocked.has(domain)) continue;
      warned.delete(domain);
      this.#record(budget, 'Normal', EVENT_DISRUPTION_UNBLOCKED, `domain ${JSON.stringify(domain)} allows disruptions again`);
    }
    if (warned.size > 0) this.#warned.set(key, warned);
    else this.#warned.delete(key);
    return report.nextDueInMs === undefined ? undefined : report.nextDueInMs + REQUEUE_MARGIN_MS;
  }

  #record(budget: DomainDisruptionBudget, type: 'Normal' | 'Warning', reason: string, note: string): void {
    const m = budget.metadata ?? {};
    const regarding = { apiVersion: DDB_API_VERSION, kind: DDB_KIND, name: m.name ?? '', namespace: m.namespace ?? '', ...(m.uid === undefined ? {} : { uid: m.uid }) };
    this.#o.recorder?.record(regarding, { type, reason, note, action: 'Reconcile' });
  }

  #subscribe(add: (keys: Iterable<string>) => void): (() => void)[] {
    const { caches, budgets } = this.#o;
    const self = (b: DomainDisruptionBudget) => add([budgetKeyOf(b)]);
    return [
      budgets.store.onAdd(self),
      budgets.store.onUpdate((_old, b) => self(b)),
      budgets.store.onDelete(self),
      caches.pods.onAdd((pod) => add(this.budgetsForPod(pod))),
      caches.pods.onUpdate((old, pod) => add(new Set([...this.budgetsForPod(old), ...this.budgetsForPod(pod)]))),
      caches.pods.onDelete((pod) => add(this.budgetsForPod(pod))),
      caches.nodes.onAdd(() => add(this.budgetsByNode())),
      caches.nodes.onUpdate((old, node) => {
        if (nodeLabelsChanged(old, node)) add(this.budgetsByNode());
      }),
      caches.nodes.onDelete(() => add(this.budgetsByNode())),
      caches.workloadSpreads.onAdd((ws) => add(this.budgetsForWorkloadSpread(ws))),
      caches.workloadSpreads.onUpdate((_old, ws) => add(this.budgetsForWorkloadSpread(ws))),
      caches.workloadSpreads.onDelete((ws) => add(this.budgetsForWorkloadSpread(ws))),
    ];
  }

  /** Keys of the budgets selecting the pod. */
  budgetsForPod(pod: Pod): string[] {
    const namespace = pod.metadata?.namespace ?? '';
    return this.#o.budgets.store
      .list(namespace)
      .filter((b) => budgetSelects(b, pod))
      .map(budgetKeyOf);
  }

  /** Keys of the budgets whose domains depend on node labels. */
  budgetsByNode(): string[] {
    return this.#o.budgets.store
      .list()
      .filter((b) => {
        const kind = domainMode(b).kind;
        return kind === 'topologyKey' || kind === 'nodeSelectorTerm';
      })
      .map(budgetKeyOf);
  }

  /** Keys of the budgets whose workloadSpreadRef names the WorkloadSpread. */
  budgetsForWorkloadSpread(ws: { metadata?: ObjectMeta }): string[] {
    const namespace = ws.metadata?.namespace ?? '';
    return this.#o.budgets.store
      .list(namespace)
      .filter((b) => {
        const mode = domainMode(b);
        return mode.kind === 'workloadSpreadRef' && mode.name === ws.metadata?.name;
      })
      .map(budgetKeyOf);
  }
}

function budgetKeyOf(budget: DomainDisruptionBudget): string {
  return storeKey(budget.metadata?.namespace, budget.metadata?.name ?? '');
}

function nodeLabelsChanged(old: Node, node: Node): boolean {
  const a = old.metadata?.labels ?? {};
  const b = node.metadata?.labels ?? {};
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if (a[k] !== b[k]) return true;
  return false;
}

function blockedNote(b: DomainBlockage, now: number): string {
  const minutes = Math.floor((now - b.since) / 60_000);
  return `domain ${JSON.stringify(b.domain)} has allowed no disruption for ${minutes} min: ${b.currentHealthy} of ${b.expectedPods} pods healthy, ${b.desiredHealthy} required; evictions there are refused until pods recover`;
}
