/**
 * `WorkloadSpreadController`: informers → event mapping → work queue →
 * reconciler (STYLE §2–§3; spec §4.1).
 *
 * - `start()` waits for the caches, enqueues every WorkloadSpread once,
 *   subscribes the mapping to WorkloadSpread, pod, workload and node events,
 *   runs `workers` loops (default 3, the reference's
 *   `--workloadspread-workers`) and arms a background resync that enqueues
 *   every WorkloadSpread every 5 minutes, the safety net of a level-triggered
 *   controller against a missed event;
 * - the queue de-duplicates keys, never runs one key twice at once, retries
 *   failures with per-key back-off (5 ms → 1000 s) and honours the
 *   reconciler's requeue-after; conflicts are retried quietly;
 * - metrics go through `ControllerMetrics` (controller-runtime's names are
 *   given per hook; the manager implements them with prom-client);
 * - `stop()` unsubscribes, cancels the resync and drains the queue.
 * The manager starts one controller on the elected leader only.
 */
import { randomUUID } from 'node:crypto';
import type { Clock, Timer } from '../clock/clock.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { describeError, isConflict } from '../client/errors.ts';
import { silentLogger, type Logger } from '../client/logger.ts';
import { isTerminalError, WorkQueue, type RateLimit, type WorkQueueMetrics, type WorkResult } from '../client/workqueue.ts';
import type { ManagerCaches } from '../kube/caches.ts';
import type { EngineEventSink } from '../kube/events.ts';
import type { PodWriter } from '../kube/pod-writer.ts';
import type { StatusWriter } from '../kube/status-writer.ts';
import type { WorkloadResolver } from '../kube/workload-resolver.ts';
import type { WorkloadSpreadState } from '../kube/ws-state.ts';
import { EventMapper, workloadSpreadKey, type ChangeType, type MappingView } from './event-mapping.ts';
import { Reconciler, type ReconcilerMetrics } from './reconciler.ts';

export const CONTROLLER_NAME = 'workloadspread';
export const DEFAULT_WORKERS = 3;
export const DEFAULT_RESYNC_MS = 5 * 60_000;

export type ReconcileOutcome = 'success' | 'error' | 'requeue_after';

/**
 * What the controller reports; every hook is optional. Names in brackets are
 * the controller-runtime metrics each hook feeds (label `controller` =
 * `workloadspread`).
 */
export interface ControllerMetrics extends ReconcilerMetrics {
  /** [controller_runtime_reconcile_total{result}] one sync finished. */
  reconcile?(result: ReconcileOutcome): void;
  /** [controller_runtime_reconcile_errors_total] a sync failed (conflicts included: they are retried). */
  reconcileError?(terminal: boolean): void;
  /** [controller_runtime_reconcile_time_seconds] clock seconds one sync took. */
  reconcileTime?(seconds: number): void;
  /** [controller_runtime_active_workers] workers inside a sync now. */
  activeWorkers?(count: number): void;
  /** [workqueue_depth, workqueue_adds_total, workqueue_retries_total, ...] (name `workloadspread`). */
  queue?: WorkQueueMetrics;
}

export interface ControllerOptions {
  caches: ManagerCaches;
  resolver: WorkloadResolver;
  state: WorkloadSpreadState;
  statusWriter: StatusWriter;
  podWriter: PodWriter;
  events: EngineEventSink;
  clock: Clock;
  log?: Logger;
  /** Parallel reconciles (default 3). */
  workers?: number;
  /** Unschedulable recovery window in seconds (D10). */
  recoverySeconds?: number;
  /** Enqueue every WorkloadSpread this often (default 5 min; 0 disables). */
  resyncMs?: number;
  rateLimit?: RateLimit;
  metrics?: ControllerMetrics;
}

export class WorkloadSpreadController {
  readonly queue: WorkQueue<string>;
  readonly reconciler: Reconciler;
  readonly mapper: EventMapper;
  readonly #o: ControllerOptions;
  readonly #log: Logger;
  #unsubscribe: (() => void)[] = [];
  #resync: Timer | undefined;
  #running: Promise<void> | undefined;
  #active = 0;
  #stopped = false;

  constructor(options: ControllerOptions) {
    this.#o = options;
    this.#log = options.log ?? silentLogger;
    this.queue = new WorkQueue<string>({
      clock: options.clock,
      name: CONTROLLER_NAME,
      log: this.#log,
      ...(options.rateLimit === undefined ? {} : { rateLimit: options.rateLimit }),
      ...(options.metrics?.queue === undefined ? {} : { metrics: options.metrics.queue }),
    });
    this.reconciler = new Reconciler({
      caches: options.caches,
      resolver: options.resolver,
      state: options.state,
      statusWriter: options.statusWriter,
      podWriter: options.podWriter,
      events: options.events,
      clock: options.clock,
      log: this.#log,
      ...(options.recoverySeconds === undefined ? {} : { recoverySeconds: options.recoverySeconds }),
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    });
    this.mapper = new EventMapper(mappingView(options.caches, options.resolver));
  }

  /** Adds a WorkloadSpread key (`namespace/name`) to the queue. */
  enqueue(key: string): void {
    this.queue.add(key);
  }

  /** Enqueues every cached WorkloadSpread. */
  enqueueAll(): void {
    for (const key of this.#o.caches.workloadSpreads.keys()) this.queue.add(key);
  }

  /**
   * Waits for the caches, then runs until `stop()`. Resolves once the
   * workers are running (not when they end); `signal` aborts the wait.
   */
  async start(signal?: AbortSignal): Promise<void> {
    if (this.#running !== undefined || this.#stopped) return;
    await this.#o.caches.waitForSync(signal);
    if (this.#stopped) return;
    this.#subscribe();
    this.enqueueAll();
    const every = this.#o.resyncMs ?? DEFAULT_RESYNC_MS;
    if (every > 0) this.#resync = this.#o.clock.setInterval(() => this.enqueueAll(), every, { background: true, name: 'workloadspread resync' });
    this.#running = this.queue.run(this.#o.workers ?? DEFAULT_WORKERS, (key) => this.#handle(key));
    this.#log.info({ workers: this.#o.workers ?? DEFAULT_WORKERS }, 'workloadspread controller started');
  }

  /** Stops taking events, cancels the resync and lets the workers finish what they hold. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const u of this.#unsubscribe) u();
    this.#unsubscribe = [];
    this.#resync?.cancel();
    await this.queue.shutdown({ drain: false });
    await this.#running;
  }

  async #handle(key: string): Promise<WorkResult | void> {
    const metrics = this.#o.metrics;
    const started = this.#o.clock.now();
    this.#active++;
    metrics?.activeWorkers?.(this.#active);
    try {
      const result = await this.reconciler.sync(key, randomUUID());
      metrics?.reconcile?.(result.requeueAfterMs !== undefined ? 'requeue_after' : 'success');
      return result.requeueAfterMs === undefined ? undefined : { requeueAfterMs: result.requeueAfterMs };
    } catch (err) {
      metrics?.reconcile?.('error');
      metrics?.reconcileError?.(isTerminalError(err));
      if (!isConflict(err)) this.#log.debug({ workloadspread: key, err: describeError(err) }, 'reconcile failed');
      throw err;
    } finally {
      this.#active--;
      metrics?.activeWorkers?.(this.#active);
      metrics?.reconcileTime?.((this.#o.clock.now() - started) / 1000);
    }
  }

  #add(keys: readonly string[]): void {
    for (const key of keys) this.queue.add(key);
  }

  #subscribe(): void {
    const { caches } = this.#o;
    const m = this.mapper;
    const ws = (type: ChangeType) => (obj: WorkloadSpread) => {
      if (type === 'delete') this.#o.metrics?.forgetWorkloadSpread?.(obj.metadata?.namespace ?? '', obj.metadata?.name ?? '');
      this.#add(m.forWorkloadSpread(obj));
    };
    this.#unsubscribe.push(
      caches.workloadSpreads.onAdd(ws('add')),
      caches.workloadSpreads.onUpdate((_old, obj) => ws('update')(obj)),
      caches.workloadSpreads.onDelete(ws('delete')),
      caches.pods.onAdd((pod) => this.#add(m.forPod('add', pod))),
      caches.pods.onUpdate((old, pod) => this.#add(m.forPod('update', pod, old))),
      caches.pods.onDelete((pod) => this.#add(m.forPod('delete', pod))),
      caches.nodes.onAdd((node) => this.#add(m.forNode('add', node))),
      caches.nodes.onUpdate((old, node) => this.#add(m.forNode('update', node, old))),
      caches.nodes.onDelete((node) => this.#add(m.forNode('delete', node))),
      caches.onWorkloadEvent((e) => this.#add(m.forWorkload(e.type, e.group, e.kind, e.obj, e.old))),
    );
  }
}

/** The mapper's view over the caches and the resolver's cache-only owner lookup. */
export function mappingView(caches: ManagerCaches, resolver: WorkloadResolver): MappingView {
  return {
    workloadSpreadsForTarget: (ns, group, kind, name) => caches.workloadSpreadsForTarget(ns, group, kind, name),
    listWorkloadSpreads: (ns) => caches.listWorkloadSpreads(ns),
    podsOnNode: (node) => caches.podsOnNode(node),
    whitelist: () => caches.whitelist(),
    ownerLookup: (ns) => resolver.cachedOwnerLookup(ns),
    podVersionOptions: (pod) => resolver.podVersionOptions(pod),
  };
}

/** The key of a WorkloadSpread object. */
export function keyOf(ws: WorkloadSpread): string {
  return workloadSpreadKey(ws.metadata?.namespace ?? '', ws.metadata?.name ?? '');
}
