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
import { GROUP, KIND, type WorkloadSpread } from '../api/workloadspread.ts';
import type { ObjectMeta } from '../k8s/types.ts';
import { describeError, isConflict } from '../client/errors.ts';
import { objectFields, silentLogger, withFields, type Logger } from '../client/logger.ts';
import { isTerminalError, type RateLimit, type WorkQueue, type WorkQueueMetrics, type WorkResult } from '../client/workqueue.ts';
import type { ManagerCaches } from '../kube/caches.ts';
import type { WorkloadResolver } from '../kube/workload-resolver.ts';
import { EventMapper, onlyStatusChanged, workloadSpreadKey, type ChangeType, type MappingView } from './event-mapping.ts';
import { QueueLoop } from '../client/queue-loop.ts';
import type { Runnable } from '../client/runnable.ts';
import type { Timer } from '../clock/clock.ts';
import { Reconciler, type ReconcilerMetrics, type ReconcilerOptions } from './reconciler.ts';

export const CONTROLLER_NAME = 'workloadspread';
/** On every line of this controller (controller-runtime's keys). */
export const CONTROLLER_LOG_FIELDS = { controller: CONTROLLER_NAME, controllerGroup: GROUP, controllerKind: KIND } as const;
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

/** The reconciler's options (caches, writers, clock, recovery window) plus the loop's. */
export interface ControllerOptions extends ReconcilerOptions {
  /** Parallel reconciles (default 3). */
  workers?: number;
  /** Enqueue every WorkloadSpread this often (default 5 min; 0 disables). */
  resyncMs?: number;
  rateLimit?: RateLimit;
  metrics?: ControllerMetrics;
  /** Delay between a pod event and the sync it triggers (default POD_EVENT_BATCH_MS; 0: at once). */
  podEventBatchMs?: number;
  /** Longest a burst of pod events waits for its sync (default POD_EVENT_MAX_WAIT_MS). */
  podEventMaxWaitMs?: number;
}

/**
 * Pod events reach their WorkloadSpread once they have paused this long, so
 * a burst of pod creations, bindings and readiness changes becomes a few
 * syncs instead of one per event (each sync looks at every pod of the
 * workload; see POD_EVENT_MAX_WAIT_MS). The Job
 * controller does the same (syncJobBatchPeriod, 1 s). A WorkloadSpread
 * update that changed only its status (the webhook's reservations during a
 * burst, a hand edit) waits the same period, and the controller's own
 * write brings no sync at all (D25). Other
 * WorkloadSpread events and workload events sync at once; admission never
 * waits for a sync (the webhook books what it decides itself).
 */
export const POD_EVENT_BATCH_MS = 1_000;

/**
 * While events keep coming (each one less than POD_EVENT_BATCH_MS after the
 * one before), the sync they wait for moves with the last of them, but never
 * further than this after the first: a burst of pod events becomes one sync
 * every few seconds instead of one a second, and a single event still syncs
 * POD_EVENT_BATCH_MS after it happened (D25).
 */
export const POD_EVENT_MAX_WAIT_MS = 5_000;

/** Events of one key waiting for their sync: when the first and the last came, and the timer that looks again. */
interface PendingBatch {
  first: number;
  last: number;
  timer: Timer;
}

export class WorkloadSpreadController implements Runnable {
  readonly name: string;
  readonly queue: WorkQueue<string>;
  readonly reconciler: Reconciler;
  readonly mapper: EventMapper;
  readonly #o: ControllerOptions;
  readonly #log: Logger;
  readonly #loop: QueueLoop;
  #active = 0;
  /** Pod events mapped to each WorkloadSpread key so far (the reconciler's `podEvents`); dropped with the WorkloadSpread. */
  readonly #podEvents = new Map<string, number>();
  /** Keys whose batched events wait for their sync (see `#batched`). */
  readonly #batches = new Map<string, PendingBatch>();

  constructor(options: ControllerOptions) {
    this.#o = options;
    this.#log = withFields(options.log ?? silentLogger, CONTROLLER_LOG_FIELDS);
    this.#loop = new QueueLoop({
      name: CONTROLLER_NAME,
      clock: options.clock,
      log: this.#log,
      workers: options.workers ?? DEFAULT_WORKERS,
      turnPerSync: true,
      resyncMs: options.resyncMs ?? DEFAULT_RESYNC_MS,
      ...(options.rateLimit === undefined ? {} : { rateLimit: options.rateLimit }),
      ...(options.metrics?.queue === undefined ? {} : { queueMetrics: options.metrics.queue }),
      waitForSync: (signal) => options.caches.waitForSync(signal),
      subscribe: (add) => this.#subscribe(add),
      keys: () => options.caches.workloadSpreads.keys(),
      handle: (key, context) => this.#handle(key, context.signal),
    });
    this.name = this.#loop.name;
    this.queue = this.#loop.queue;
    this.reconciler = new Reconciler({ ...options, log: this.#log, podEvents: (key) => this.#podEvents.get(key) ?? 0 });
    this.mapper = new EventMapper(mappingView(options.caches, options.resolver));
  }

  /** Adds a WorkloadSpread key (`namespace/name`) to the queue. */
  enqueue(key: string): void {
    this.queue.add(key);
  }

  /** Enqueues every cached WorkloadSpread. */
  enqueueAll(): void {
    this.#loop.enqueueAll();
  }

  /**
   * Waits for the caches, then runs until `stop()`. Resolves once the
   * workers are running (not when they end); `signal` aborts the wait.
   */
  start(signal?: AbortSignal): Promise<void> {
    return this.#loop.start(signal);
  }

  /** Stops taking events, cancels the resync and the batches still waiting, and lets the workers finish what they hold. */
  stop(): Promise<void> {
    for (const batch of this.#batches.values()) batch.timer.cancel();
    this.#batches.clear();
    return this.#loop.stop();
  }

  async #handle(key: string, signal: AbortSignal): Promise<WorkResult | void> {
    const metrics = this.#o.metrics;
    const started = this.#o.clock.now();
    this.#active++;
    metrics?.activeWorkers?.(this.#active);
    try {
      const result = await this.reconciler.sync(key, randomUUID(), signal);
      metrics?.reconcile?.(result.requeueAfterMs !== undefined ? 'requeue_after' : 'success');
      return result.requeueAfterMs === undefined ? undefined : { requeueAfterMs: result.requeueAfterMs };
    } catch (err) {
      metrics?.reconcile?.('error');
      metrics?.reconcileError?.(isTerminalError(err));
      if (!isConflict(err)) this.#log.debug({ ...objectFields(key), err: describeError(err) }, 'reconcile failed');
      throw err;
    } finally {
      this.#active--;
      metrics?.activeWorkers?.(this.#active);
      metrics?.reconcileTime?.((this.#o.clock.now() - started) / 1000);
    }
  }

  #addPodEvent(keys: Iterable<string>): void {
    const list = [...keys];
    for (const key of list) this.#podEvents.set(key, (this.#podEvents.get(key) ?? 0) + 1);
    this.#batched(list);
  }

  /**
   * Adds each key once its events have paused for the batch period, or the
   * maximum wait after the first of them has passed, whichever comes first
   * (at once when the period is 0). The timer is armed once per batch and
   * looks again when it fires, so an event costs a map lookup, not a timer.
   */
  #batched(keys: Iterable<string>): void {
    const quiet = this.#o.podEventBatchMs ?? POD_EVENT_BATCH_MS;
    if (quiet <= 0) {
      for (const key of keys) this.queue.add(key);
      return;
    }
    const now = this.#o.clock.now();
    for (const key of keys) {
      const pending = this.#batches.get(key);
      if (pending !== undefined) pending.last = now;
      else this.#batches.set(key, { first: now, last: now, timer: this.#batchTimer(key, quiet) });
    }
  }

  #batchTimer(key: string, ms: number): Timer {
    return this.#o.clock.setTimeout(() => {
      const pending = this.#batches.get(key);
      if (pending === undefined) return;
      const quiet = this.#o.podEventBatchMs ?? POD_EVENT_BATCH_MS;
      const due = Math.min(pending.last + quiet, pending.first + Math.max(quiet, this.#o.podEventMaxWaitMs ?? POD_EVENT_MAX_WAIT_MS));
      const now = this.#o.clock.now();
      if (due > now) {
        pending.timer = this.#batchTimer(key, due - now);
        return;
      }
      this.#batches.delete(key);
      this.queue.add(key);
    }, ms);
  }

  #subscribe(add: (keys: Iterable<string>) => void): (() => void)[] {
    const { caches } = this.#o;
    const m = this.mapper;
    const ws = (type: ChangeType) => (obj: { metadata?: ObjectMeta }) => {
      if (type === 'delete') {
        const key = workloadSpreadKey(obj.metadata?.namespace ?? '', obj.metadata?.name ?? '');
        this.#o.metrics?.forgetWorkloadSpread?.(obj.metadata?.namespace ?? '', obj.metadata?.name ?? '');
        this.#podEvents.delete(key);
        this.reconciler.forget(key);
      }
      add(m.forWorkloadSpread(obj));
    };
    return [
      caches.workloadSpreads.onAdd(ws('add')),
      // D25: a change of the status alone (the webhook's reservations, a hand edit) waits out the batch period like a pod event; this controller's own write needs no sync.
      caches.workloadSpreads.onUpdate((old, obj) => {
        if (!onlyStatusChanged(old, obj)) ws('update')(obj);
        else if (!this.reconciler.wroteLast(workloadSpreadKey(obj.metadata?.namespace ?? '', obj.metadata?.name ?? ''), obj.metadata?.resourceVersion)) this.#batched(m.forWorkloadSpread(obj));
      }),
      caches.workloadSpreads.onDelete(ws('delete')),
      // Pod events reach a WorkloadSpread once they pause for POD_EVENT_BATCH_MS (at most POD_EVENT_MAX_WAIT_MS after the first), so a burst of them becomes a few syncs (the Job controller batches with syncJobBatchPeriod).
      caches.pods.onAdd((pod) => this.#addPodEvent(m.forPod('add', pod))),
      caches.pods.onUpdate((old, pod) => this.#addPodEvent(m.forPod('update', pod, old))),
      caches.pods.onDelete((pod) => this.#addPodEvent(m.forPod('delete', pod))),
      caches.nodes.onAdd((node) => add(m.forNode('add', node))),
      caches.nodes.onUpdate((old, node) => add(m.forNode('update', node, old))),
      caches.nodes.onDelete((node) => add(m.forNode('delete', node))),
      caches.onWorkloadEvent((e) => add(m.forWorkload(e.type, e.group, e.kind, e.obj, e.old))),
    ];
  }
}

/**
 * The mapper's view over the caches alone: an owner the caches cannot answer
 * for is an error there (the event is mapped without it), never a read.
 */
export function mappingView(caches: ManagerCaches, resolver: WorkloadResolver): MappingView {
  return {
    workloadSpreadsForTarget: (ns, group, kind, name) => caches.workloadSpreadsForTarget(ns, group, kind, name),
    listWorkloadSpreads: (ns) => caches.listWorkloadSpreads(ns),
    podsOnNode: (node) => caches.podsOnNode(node),
    whitelist: () => caches.whitelist(),
    ownerLookup: (ns) => (ref) => {
      const answer = caches.view.object(ns, ref);
      return 'read' in answer ? { error: `${ref.kind} is not cached` } : answer;
    },
    podVersionOptions: (pod) => resolver.podVersionOptions(pod),
  };
}

/** The key of a WorkloadSpread object. */
export function keyOf(ws: WorkloadSpread): string {
  return workloadSpreadKey(ws.metadata?.namespace ?? '', ws.metadata?.name ?? '');
}
