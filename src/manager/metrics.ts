/**
 * `ManagerMetrics`: the manager's one prom-client `Registry`, and the
 * implementations of every metrics hook the lower layers expose: the work
 * queue and the watchers (src/client), the controller and its reconciler
 * (src/controller), the status writer (src/kube) and the admission webhook
 * with its group commit (src/webhook).
 *
 * Names follow controller-runtime and client-go where a metric exists there,
 * so existing dashboards and alerts work unchanged:
 *   controller_runtime_reconcile_total{controller,result}
 *   controller_runtime_reconcile_errors_total{controller}
 *   controller_runtime_terminal_reconcile_errors_total{controller}
 *   controller_runtime_reconcile_time_seconds{controller}
 *   controller_runtime_active_workers{controller}
 *   controller_runtime_max_concurrent_reconciles{controller}
 *   controller_runtime_webhook_requests_total{webhook,code}
 *   controller_runtime_webhook_latency_seconds{webhook}
 *   workqueue_depth / workqueue_adds_total / workqueue_retries_total{name,controller}
 *   workqueue_queue_duration_seconds / workqueue_work_duration_seconds{name,controller}
 *   leader_election_master_status{name}
 *   rest_client_requests_total{code,method,host}
 *   rest_client_request_duration_seconds{verb,host}
 *   rest_client_rate_limiter_duration_seconds (the client-side limiter's waits)
 * the per-subset gauges with the names kruise-state-metrics gives them
 * (`kruise_` dropped) where it has them —
 *   workloadspread_spec_subsets_max_replicas, workloadspread_status_subset_replicas,
 *   workloadspread_status_subset_replicas_missing
 * — and in their style for the rest (`…_replicas_ready`, `…_creating_pods`,
 * `…_deleting_pods`, `…_schedulable`), labelled `namespace`, `workloadspread`,
 * `subset`; and `workloadspread_*` for what else is ours
 * (docs/operations.md "Metrics" lists every series).
 * Node's default process metrics (`process_*`, `nodejs_*`) are registered too.
 *
 * Invariants: one instance per manager (several managers in one process —
 * tests — never share series); a series that names a WorkloadSpread is
 * removed when the WorkloadSpread is gone. Durations arrive in clock time,
 * so on a virtual clock they are virtual seconds. Start at the constructor.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RequestMetrics } from '../client/transport.ts';
import type { WatcherMetrics } from '../client/watcher.ts';
import type { WorkQueueMetrics } from '../client/workqueue.ts';
import { BUDGET_CONTROLLER_NAME, type BudgetControllerMetrics } from '../controller/budget-controller.ts';
import { CONTROLLER_NAME, type ControllerMetrics } from '../controller/controller.ts';
import { REBALANCER_NAME, type RebalancerMetrics } from '../controller/rebalancer.ts';
import type { BudgetStatusWriterMetrics } from '../kube/budget-status-writer.ts';
import type { StatusWriterMetrics } from '../kube/status-writer.ts';
import type { BudgetEnforcementMetrics } from '../webhook/budget-eviction.ts';
import type { WebhookMetrics } from '../webhook/metrics.ts';
import type { SubsetReading } from '../controller/subset-readings.ts';
import { VERSION } from './defaults.ts';

/** controller-runtime's buckets for reconcile time, in seconds. */
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20,
  25, 30, 40, 50, 60,
];
/** client-go's work queue buckets: 10 ns to 10 s, by factors of ten. */
const QUEUE_BUCKETS = Array.from({ length: 10 }, (_, i) => 1e-8 * 10 ** i);
/** Admission latency: a webhook has 10 s before the API server gives up on it. */
const ADMISSION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Admissions carried by one status write (D13). */
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];
/** client-go's buckets for rest_client_request_duration_seconds. */
const REST_CLIENT_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

/** The per-subset gauges: metric name → what it reads (null: no series, e.g. the limit of an unlimited subset). */
const SUBSET_GAUGES: readonly { name: string; help: string; read: (r: SubsetReading) => number | null }[] = [
  { name: 'workloadspread_spec_subsets_max_replicas', help: 'The subset\'s maxReplicas, resolved against the workload\'s replicas (no series when unlimited)', read: (r) => r.limit },
  { name: 'workloadspread_status_subset_replicas', help: 'Active pods placed in the subset, as of the last reconcile', read: (r) => r.pods },
  { name: 'workloadspread_status_subset_replicas_ready', help: 'Ready pods placed in the subset, as of the last reconcile', read: (r) => r.ready },
  { name: 'workloadspread_status_subset_replicas_missing', help: 'Quota left in the subset (missingReplicas; no series when unlimited)', read: (r) => r.missing },
  { name: 'workloadspread_status_subset_creating_pods', help: 'Admissions into the subset not yet seen as pods (creatingPods)', read: (r) => r.creating },
  { name: 'workloadspread_status_subset_deleting_pods', help: 'Deletions from the subset not yet seen done (deletingPods)', read: (r) => r.deleting },
  { name: 'workloadspread_status_subset_schedulable', help: '1 unless the subset\'s Schedulable condition is False (Adaptive rescheduling gave up on it)', read: (r) => (r.schedulable ? 1 : 0) },
];

export interface ManagerMetricsOptions {
  /** Register Node's default process metrics (default true). */
  processMetrics?: boolean;
}

export class ManagerMetrics {
  readonly registry = new Registry();
  /** Hooks for `WorkloadSpreadController` (the queue's under `queue`). */
  readonly controller: ControllerMetrics;
  /** Hooks for the admission server, the pod handlers and the group commit. */
  readonly webhook: WebhookMetrics;
  /** Hooks for the informers' watchers (all resources share them). */
  readonly watcher: WatcherMetrics;
  readonly statusWriter: StatusWriterMetrics;
  /** Hooks for the manager's API client: client-go's rest_client_* series. */
  readonly restClient: RequestMetrics;
  /** The client-side rate limiter waited this long for a token (client-go's rest_client_rate_limiter_duration_seconds). */
  readonly rateLimiterWait: (seconds: number) => void;
  /** Hooks for DomainDisruptionBudget enforcement, status writes and the budget controller (D14). */
  readonly budgets: BudgetEnforcementMetrics & BudgetStatusWriterMetrics & BudgetControllerMetrics;
  /** Hooks for the rebalance loop (D18). */
  readonly rebalance: RebalancerMetrics;

  readonly #leader: Gauge<'name'>;
  readonly #maxReconciles: Gauge<'controller'>;
  /** Subset names with per-subset series, by `namespace/name`. */
  readonly #subsetSeries = new Map<string, Set<string>>();

  constructor(options: ManagerMetricsOptions = {}) {
    const registers = [this.registry];
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });

    // ---- controller (controller-runtime names) ----
    const controller = CONTROLLER_NAME;
    const reconcileTotal = new Counter({ name: 'controller_runtime_reconcile_total', help: 'Total number of reconciliations per controller', labelNames: ['controller', 'result'] as const, registers });
    for (const result of ['success', 'error', 'requeue_after']) reconcileTotal.inc({ controller, result }, 0);
    const reconcileErrors = new Counter({ name: 'controller_runtime_reconcile_errors_total', help: 'Total number of reconciliation errors per controller', labelNames: ['controller'] as const, registers });
    reconcileErrors.inc({ controller }, 0);
    const terminalErrors = new Counter({ name: 'controller_runtime_terminal_reconcile_errors_total', help: 'Total number of terminal reconciliation errors per controller', labelNames: ['controller'] as const, registers });
    terminalErrors.inc({ controller }, 0);
    const reconcileTime = new Histogram({ name: 'controller_runtime_reconcile_time_seconds', help: 'Length of time per reconciliation per controller', labelNames: ['controller'] as const, buckets: RECONCILE_BUCKETS, registers });
    const activeWorkers = new Gauge({ name: 'controller_runtime_active_workers', help: 'Number of currently used workers per controller', labelNames: ['controller'] as const, registers });
    activeWorkers.set({ controller }, 0);
    this.#maxReconciles = new Gauge({ name: 'controller_runtime_max_concurrent_reconciles', help: 'Maximum number of concurrent reconciles per controller', labelNames: ['controller'] as const, registers });

    const queue = { name: controller, controller };
    const depth = new Gauge({ name: 'workqueue_depth', help: 'Current depth of workqueue', labelNames: ['name', 'controller'] as const, registers });
    depth.set(queue, 0);
    const adds = new Counter({ name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue', labelNames: ['name', 'controller'] as const, registers });
    adds.inc(queue, 0);
    const retries = new Counter({ name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue', labelNames: ['name', 'controller'] as const, registers });
    retries.inc(queue, 0);
    const queueDuration = new Histogram({ name: 'workqueue_queue_duration_seconds', help: 'How long in seconds an item stays in workqueue before being requested', labelNames: ['name', 'controller'] as const, buckets: QUEUE_BUCKETS, registers });
    const workDuration = new Histogram({ name: 'workqueue_work_duration_seconds', help: 'How long in seconds processing an item from workqueue takes', labelNames: ['name', 'controller'] as const, buckets: QUEUE_BUCKETS, registers });

    const subsetGauges = SUBSET_GAUGES.map((g) => ({ ...g, gauge: new Gauge({ name: g.name, help: g.help, labelNames: ['namespace', 'workloadspread', 'subset'] as const, registers }) }));
    const removeSubset = (namespace: string, workloadspread: string, subset: string) => {
      for (const g of subsetGauges) g.gauge.remove({ namespace, workloadspread, subset });
    };

    const queueHooks: WorkQueueMetrics = {
      depth: (n) => depth.set(queue, n),
      adds: () => adds.inc(queue),
      retries: () => retries.inc(queue),
      latency: (ms) => queueDuration.observe(queue, ms / 1000),
      workDuration: (ms) => workDuration.observe(queue, ms / 1000),
      // Failures are counted once, by the controller's reconcileError hook (the same events).
      errors: () => {},
    };
    this.controller = {
      queue: queueHooks,
      reconcile: (result) => reconcileTotal.inc({ controller, result }),
      reconcileError: (terminal) => {
        reconcileErrors.inc({ controller });
        if (terminal) terminalErrors.inc({ controller });
      },
      reconcileTime: (seconds) => reconcileTime.observe({ controller }, seconds),
      activeWorkers: (n) => activeWorkers.set({ controller }, n),
      subsets: (namespace, workloadspread, readings) => {
        const key = `${namespace}/${workloadspread}`;
        const now = new Set(readings.map((r) => r.subset));
        // A subset taken out of the spec takes its series with it.
        for (const subset of this.#subsetSeries.get(key) ?? []) if (!now.has(subset)) removeSubset(namespace, workloadspread, subset);
        this.#subsetSeries.set(key, now);
        for (const r of readings) {
          const labels = { namespace, workloadspread, subset: r.subset };
          for (const g of subsetGauges) {
            const value = g.read(r);
            if (value === null) g.gauge.remove(labels);
            else g.gauge.set(labels, value);
          }
        }
      },
      forgetWorkloadSpread: (namespace, workloadspread) => {
        const key = `${namespace}/${workloadspread}`;
        for (const subset of this.#subsetSeries.get(key) ?? []) removeSubset(namespace, workloadspread, subset);
        this.#subsetSeries.delete(key);
        noSubset.remove({ namespace, workloadspread });
      },
    };

    // ---- admission ----
    const webhookRequests = new Counter({ name: 'controller_runtime_webhook_requests_total', help: 'Total number of admission requests by HTTP status code', labelNames: ['webhook', 'code'] as const, registers });
    const webhookLatency = new Histogram({ name: 'controller_runtime_webhook_latency_seconds', help: 'Histogram of the latency of processing admission requests', labelNames: ['webhook'] as const, buckets: ADMISSION_BUCKETS, registers });
    const admissionDuration = new Histogram({
      name: 'workloadspread_admission_duration_seconds',
      help: 'Time to answer an admission review, by webhook path, operation and result (allowed, patched, denied, errored)',
      labelNames: ['webhook', 'operation', 'result'] as const,
      buckets: ADMISSION_BUCKETS,
      registers,
    });
    const batchSize = new Histogram({ name: 'workloadspread_group_commit_batch_size', help: 'Admissions whose status changes one WorkloadSpread status write carried (D13)', buckets: BATCH_BUCKETS, registers });
    const conflicts = new Counter({ name: 'workloadspread_status_write_conflicts_total', help: 'WorkloadSpread status writes refused with 409 Conflict (retried), by writer', labelNames: ['source'] as const, registers });
    for (const source of ['webhook', 'controller']) conflicts.inc({ source }, 0);
    const noSubset = new Counter({ name: 'workloadspread_no_subset_available_total', help: 'Pods admitted without a subset because none had quota (D11)', labelNames: ['namespace', 'workloadspread'] as const, registers });
    const certNotAfter = new Gauge({ name: 'workloadspread_webhook_certificate_not_after_timestamp_seconds', help: 'Expiry of the serving certificate in use (Unix seconds)', registers });
    this.webhook = {
      admission: (webhook, operation, result, seconds) => {
        admissionDuration.observe({ webhook, operation, result }, seconds);
        webhookLatency.observe({ webhook }, seconds);
        webhookRequests.inc({ webhook, code: '200' });
      },
      badRequest: (webhook, code) => webhookRequests.inc({ webhook, code: String(code) }),
      noSubsetAvailable: (namespace, workloadspread) => noSubset.inc({ namespace, workloadspread }),
      certificateLoaded: (notAfterMs) => certNotAfter.set(Math.floor(notAfterMs / 1000)),
      batchSize: (n) => batchSize.observe(n),
      conflict: () => conflicts.inc({ source: 'webhook' }),
    };

    // ---- status writes (both writers; the webhook's conflicts are counted by the group commit above) ----
    const statusWrites = new Counter({ name: 'workloadspread_status_writes_total', help: 'WorkloadSpread status writes, by writer and result (ok, Conflict, NotFound, Error)', labelNames: ['source', 'result'] as const, registers });
    this.statusWriter = {
      statusWrite: (source, result) => {
        statusWrites.inc({ source, result });
        if (source === 'controller' && result === 'Conflict') conflicts.inc({ source });
      },
    };

    // ---- watchers ----
    const watchRequests = new Counter({ name: 'workloadspread_watcher_requests_total', help: 'List and watch requests the informers sent', labelNames: ['verb'] as const, registers });
    const watchEvents = new Counter({ name: 'workloadspread_watcher_events_total', help: 'Watch events the informers received, by type', labelNames: ['type'] as const, registers });
    const transitions = new Counter({ name: 'workloadspread_watcher_transitions_total', help: 'Watcher state changes, by cause (gone = 410 relist, idle = watchdog, resync, ...)', labelNames: ['from', 'to', 'cause'] as const, registers });
    this.watcher = {
      request: (verb) => watchRequests.inc({ verb }),
      event: (type) => watchEvents.inc({ type }),
      transition: (from, to, cause) => transitions.inc({ from, to, cause }),
    };

    // ---- DomainDisruptionBudgets (D14) ----
    const evictions = new Counter({
      name: 'workloadspread_budget_evictions_total',
      help: 'Evictions (and guarded deletions) decided for a DomainDisruptionBudget governing the pod, by result (allowed, denied, failed = refused because the record could not be stored)',
      labelNames: ['namespace', 'budget', 'result'] as const,
      registers,
    });
    const budgetWrites = new Counter({ name: 'workloadspread_budget_status_writes_total', help: 'DomainDisruptionBudget status writes, by writer and result (ok, Conflict, NotFound, Error)', labelNames: ['source', 'result'] as const, registers });
    const budgetSyncs = new Counter({ name: 'workloadspread_budget_syncs_total', help: 'DomainDisruptionBudget controller syncs, by result (unchanged, written, gone, error)', labelNames: ['result'] as const, registers });
    for (const result of ['unchanged', 'written', 'gone', 'error']) budgetSyncs.inc({ result }, 0);
    const budgetQueue = { name: BUDGET_CONTROLLER_NAME, controller: BUDGET_CONTROLLER_NAME };
    depth.set(budgetQueue, 0);
    this.budgets = {
      budgetEviction: (namespace, budget, result) => evictions.inc({ namespace, budget, result }),
      budgetStatusWrite: (source, result) => budgetWrites.inc({ source, result }),
      budgetSync: (result) => budgetSyncs.inc({ result }),
      forgetBudget: (namespace, budget) => {
        for (const result of ['allowed', 'denied', 'failed']) evictions.remove({ namespace, budget, result });
      },
      queue: {
        depth: (n) => depth.set(budgetQueue, n),
        adds: () => adds.inc(budgetQueue),
        retries: () => retries.inc(budgetQueue),
        latency: (ms) => queueDuration.observe(budgetQueue, ms / 1000),
        workDuration: (ms) => workDuration.observe(budgetQueue, ms / 1000),
        errors: () => {},
      },
    };

    // ---- the manager's own API requests (client-go's names and labels) ----
    const restRequests = new Counter({ name: 'rest_client_requests_total', help: 'Number of HTTP requests, partitioned by status code, method, and host.', labelNames: ['code', 'method', 'host'] as const, registers });
    const restLatency = new Histogram({ name: 'rest_client_request_duration_seconds', help: 'Request latency in seconds. Broken down by verb, and host.', labelNames: ['verb', 'host'] as const, buckets: REST_CLIENT_BUCKETS, registers });
    this.restClient = {
      request: (method, host, code, seconds) => {
        restRequests.inc({ code, method, host });
        restLatency.observe({ verb: method, host }, seconds);
      },
    };
    const limiterWait = new Histogram({ name: 'rest_client_rate_limiter_duration_seconds', help: 'Client side rate limiter latency in seconds.', buckets: REST_CLIENT_BUCKETS, registers });
    this.rateLimiterWait = (seconds) => limiterWait.observe(seconds);

    // ---- what runs ----
    const buildInfo = new Gauge({ name: 'workloadspread_build_info', help: 'Always 1; the labels say which release and which Node.js runs', labelNames: ['version', 'nodejs_version'] as const, registers });
    buildInfo.set({ version: VERSION, nodejs_version: process.version }, 1);

    // ---- rebalancing (D18) ----
    const rebalanceEvictions = new Counter({
      name: 'workloadspread_rebalance_evictions_total',
      help: 'Evictions the rebalancer sent, by result (evicted, refused = 429 from a disruption budget, failed)',
      labelNames: ['namespace', 'workloadspread', 'result'] as const,
      registers,
    });
    const rebalancePending = new Gauge({ name: 'workloadspread_rebalance_pending_pods', help: 'Pods not in the subset the spec wants them in, as of the last rebalance look (WorkloadSpreads with rebalancing on)', labelNames: ['namespace', 'workloadspread'] as const, registers });
    const rebalanceInFlight = new Gauge({ name: 'workloadspread_rebalance_moves_in_flight', help: 'Moves (evictions) whose replacement is not Ready yet', labelNames: ['namespace', 'workloadspread'] as const, registers });
    const rebalanceQueue = { name: REBALANCER_NAME, controller: REBALANCER_NAME };
    depth.set(rebalanceQueue, 0);
    this.rebalance = {
      rebalanceEviction: (namespace, workloadspread, result) => rebalanceEvictions.inc({ namespace, workloadspread, result }),
      rebalanceState: (namespace, workloadspread, pending, inFlight) => {
        rebalancePending.set({ namespace, workloadspread }, pending);
        rebalanceInFlight.set({ namespace, workloadspread }, inFlight);
      },
      forgetRebalance: (namespace, workloadspread) => {
        rebalancePending.remove({ namespace, workloadspread });
        rebalanceInFlight.remove({ namespace, workloadspread });
        for (const result of ['evicted', 'refused', 'failed']) rebalanceEvictions.remove({ namespace, workloadspread, result });
      },
      queue: {
        depth: (n) => depth.set(rebalanceQueue, n),
        adds: () => adds.inc(rebalanceQueue),
        retries: () => retries.inc(rebalanceQueue),
        latency: (ms) => queueDuration.observe(rebalanceQueue, ms / 1000),
        workDuration: (ms) => workDuration.observe(rebalanceQueue, ms / 1000),
        errors: () => {},
      },
    };

    this.#leader = new Gauge({ name: 'leader_election_master_status', help: '1 while this replica holds the lease named, else 0', labelNames: ['name'] as const, registers });
  }

  /** Whether this replica leads (the controller runs) under the lease `name`. */
  leading(name: string, leading: boolean): void {
    this.#leader.set({ name }, leading ? 1 : 0);
  }

  /** The controller's worker count. */
  maxConcurrentReconciles(workers: number): void {
    this.#maxReconciles.set({ controller: CONTROLLER_NAME }, workers);
  }

  /** The exposition text for `/metrics`. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
