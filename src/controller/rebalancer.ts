/**
 * `Rebalancer`: the leader's rebalance loop (DECISIONS D18), for the
 * WorkloadSpreads whose annotation `workloadspread.io/rebalance` is "true".
 * It moves pods one eviction at a time so that every subset is within its
 * limit and pods are back in the highest-priority subsets with room; core's
 * `planRebalance` decides, this loop applies.
 *
 * - Keys are WorkloadSpread `namespace/name`s, level-triggered: a sync
 *   re-reads the caches (the freshest copy of the WorkloadSpread, its pods,
 *   nodes, owners) and decides from what it observes. Enqueued by any change
 *   of a WorkloadSpread; by any change of a pod — readiness included, which
 *   the reconciler's mapping ignores — of a WorkloadSpread that asks for
 *   rebalancing; by node changes that can make room (added, deleted,
 *   cordoned/uncordoned, taints, labels, allocatable); and every 5 minutes.
 * - A move is `POST pods/<name>/eviction` with the pod's UID as a
 *   precondition, so PodDisruptionBudgets and DomainDisruptionBudgets decide
 *   (the eviction passes the validating webhook like any other). A refusal
 *   (429) holds further attempts back for 5 s, doubling up to 2 minutes, even
 *   when pod events arrive meanwhile; the move resumes once an attempt passes.
 * - What it is doing is written to `status.rebalance` (pending pods, moves in
 *   flight, the reason and since when) under the per-WorkloadSpread lock,
 *   merged into the freshest copy, only when it changed. Never while evicting:
 *   the eviction's admission takes the same lock.
 * - Events on the WorkloadSpread: Normal `Rebalancing` per eviction (pod,
 *   from-subset, to-subset); Warning `RebalanceBlocked` when a wanted move
 *   cannot be made, once per reason and message — the stored status is the
 *   memory, so a blocked move does not repeat its Warning on every look, nor
 *   after a new leader takes over.
 * - Switched off (annotation removed or "false"): `status.rebalance` is
 *   removed, nothing is evicted.
 * Start at `sync`.
 */
import type { Clock } from '../clock/clock.ts';
import { FAKE_SUBSET_NAME } from '../api/keys.ts';
import { rebalanceRequested, rebalanceSettings } from '../api/rebalance-settings.ts';
import { GROUP, isRebalanceReason, KIND, type RebalanceStatus, type WorkloadSpread, type WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { rebalanceBlockedEvent, rebalancingEvent, workloadSpreadRef } from '../core/events.ts';
import { readMarker } from '../core/marker.ts';
import { blockedIsNews, moveRecord, planRebalance, rebalanceStatus, type PlannedMove, type RebalanceOutcome } from '../core/rebalance.ts';
import { deepEqual } from '../k8s/json.ts';
import type { Node, ObjectMeta, Pod } from '../k8s/types.ts';
import { describeError, isConflict, isNotFound, isTooManyRequests } from '../client/errors.ts';
import { silentLogger, withFields, type Logger } from '../client/logger.ts';
import { keyOf as storeKey } from '../client/store.ts';
import { TerminalError, type RateLimit, type WorkQueue, type WorkQueueMetrics, type WorkResult } from '../client/workqueue.ts';
import type { ManagerCaches } from '../kube/caches.ts';
import type { EngineEventSink } from '../kube/events.ts';
import type { StatusWriter } from '../kube/status-writer.ts';
import type { WorkloadResolver } from '../kube/workload-resolver.ts';
import { parseKey } from './event-mapping.ts';
import { QueueLoop } from '../client/queue-loop.ts';
import type { Runnable } from '../client/runnable.ts';

export const REBALANCER_NAME = 'rebalance';
/** controller-runtime's keys on every line of the loop (the object's namespace and name are added per sync). */
export const REBALANCER_LOG_FIELDS = { controller: REBALANCER_NAME, controllerGroup: GROUP, controllerKind: KIND } as const;

function keyFields(key: string): { namespace?: string; name?: string } {
  const parsed = parseKey(key);
  return parsed === undefined ? {} : { namespace: parsed.namespace, name: parsed.name };
}
export const DEFAULT_REBALANCE_WORKERS = 2;
export const DEFAULT_REBALANCE_RESYNC_MS = 5 * 60_000;
/** After a refused eviction: the first wait, doubled per refusal up to the cap. */
export const EVICTION_BACKOFF_MS = 5_000;
export const EVICTION_BACKOFF_MAX_MS = 120_000;
/** The evicted pod was already gone: look again this soon. */
const GONE_RETRY_MS = 1_000;

export type EvictionResult = 'evicted' | 'refused' | 'failed';

export interface RebalancerMetrics {
  /** One eviction attempted: `evicted`, `refused` (429, a disruption budget) or `failed`. */
  rebalanceEviction?(namespace: string, workloadSpread: string, result: EvictionResult): void;
  /** After a look: pods out of place and moves in flight. */
  rebalanceState?(namespace: string, workloadSpread: string, pending: number, inFlight: number): void;
  /** Rebalancing is off or the WorkloadSpread is gone: drop its series. */
  forgetRebalance?(namespace: string, workloadSpread: string): void;
  queue?: WorkQueueMetrics;
}

/** What evicts a pod (the manager's client: `KubeClient.evict`). */
export interface Evictor {
  evict(namespace: string, name: string, options: { deleteOptions?: Record<string, unknown> }): Promise<unknown>;
}

export interface RebalancerOptions {
  caches: ManagerCaches;
  resolver: WorkloadResolver;
  statusWriter: StatusWriter;
  evictor: Evictor;
  events: EngineEventSink;
  clock: Clock;
  log?: Logger;
  workers?: number;
  resyncMs?: number;
  rateLimit?: RateLimit;
  metrics?: RebalancerMetrics;
}

interface Backoff {
  refusals: number;
  retryAt: number;
}

export interface RebalanceSyncResult {
  /** What the look ended with (the status reason), or `off` / `gone`. */
  result: string;
  requeueAfterMs?: number;
  /** The requeue only reports a wait that lasted: it must not hold a virtual clock's settle(). */
  background?: boolean;
}

export class Rebalancer implements Runnable {
  readonly name: string;
  readonly queue: WorkQueue<string>;
  readonly #o: RebalancerOptions;
  readonly #log: Logger;
  readonly #loop: QueueLoop;
  /** Refused evictions per WorkloadSpread key (process memory: a new leader starts without a hold). */
  readonly #backoff = new Map<string, Backoff>();

  constructor(options: RebalancerOptions) {
    this.#o = options;
    this.#log = options.log ?? silentLogger;
    this.#loop = new QueueLoop({
      name: REBALANCER_NAME,
      clock: options.clock,
      log: this.#log,
      workers: options.workers ?? DEFAULT_REBALANCE_WORKERS,
      turnPerSync: true,
      resyncMs: options.resyncMs ?? DEFAULT_REBALANCE_RESYNC_MS,
      ...(options.rateLimit === undefined ? {} : { rateLimit: options.rateLimit }),
      ...(options.metrics?.queue === undefined ? {} : { queueMetrics: options.metrics.queue }),
      waitForSync: (signal) => options.caches.waitForSync(signal),
      subscribe: (add) => this.#subscribe(add),
      keys: () => this.#keys(),
      handle: (key, context) => this.#handle(key, context.signal),
    });
    this.name = this.#loop.name;
    this.queue = this.#loop.queue;
  }

  /** Waits for the caches, then runs until `stop()`. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#loop.start(signal);
  }

  stop(): Promise<void> {
    return this.#loop.stop();
  }

  async #handle(key: string, signal: AbortSignal): Promise<WorkResult | void> {
    try {
      const { requeueAfterMs, background } = await this.sync(key, signal);
      if (requeueAfterMs === undefined) return undefined;
      return background === true ? { requeueAfterMs, background } : { requeueAfterMs };
    } catch (err) {
      if (!isConflict(err)) this.#log.debug({ ...keyFields(key), err: describeError(err) }, 'rebalance sync failed');
      throw err;
    }
  }

  /** One look at the WorkloadSpread `namespace/name` (see the module comment). Throws to be retried. */
  /** One rebalance pass of `key`; `signal` (aborted when the loop stops) is checked before every eviction and status write. */
  async sync(key: string, signal?: AbortSignal): Promise<RebalanceSyncResult> {
    const parsed = parseKey(key);
    if (parsed === undefined) throw new TerminalError(`malformed WorkloadSpread key ${JSON.stringify(key)}`);
    const { namespace, name } = parsed;
    const { caches, statusWriter, clock, metrics } = this.#o;
    const log = withFields(this.#log, { namespace, name });
    const cached = caches.getWorkloadSpread(namespace, name);
    const ws = statusWriter.freshest(cached, namespace, name);
    if (ws === undefined || cached === undefined || isDeleting(ws)) {
      this.#backoff.delete(key);
      metrics?.forgetRebalance?.(namespace, name);
      return { result: 'gone' };
    }
    if (!rebalanceRequested(ws)) {
      this.#backoff.delete(key);
      metrics?.forgetRebalance?.(namespace, name);
      if (ws.status?.rebalance !== undefined) await this.#writeRebalance(ws, undefined, signal);
      return { result: 'off' };
    }

    const now = clock.now();
    const previous = ws.status?.rebalance;
    const settings = rebalanceSettings(ws);
    let outcome: RebalanceOutcome & { blocked: boolean };
    let requeueAfterMs: number | undefined;
    let wakeAfterMs: number | undefined;
    let moved: PlannedMove | undefined;
    if (!settings.ok || !settings.settings.enabled) {
      // Asked for (the annotation is there and not "false"), but with a value that is not valid.
      const error = settings.ok ? `annotation value not understood` : settings.error;
      outcome = { reason: 'InvalidSettings', message: error, moves: previous?.moves ?? [], pending: previous?.pending ?? 0, blocked: true };
    } else {
      const resolved = await this.#o.resolver.resolveForReconcile(ws);
      if (!resolved.ok) throw new Error(`resolve the workload of ${key}: ${resolved.error}`);
      const inputs = resolved.inputs;
      const plan = planRebalance({
        ws,
        maxInFlight: settings.settings.maxInFlight,
        pods: inputs.pods,
        workloadReplicas: inputs.workloadReplicas,
        replacesPods: inputs.writeDeletionCost,
        view: caches.view,
        now,
      });
      requeueAfterMs = plan.requeueAfterMs;
      wakeAfterMs = plan.wakeAfterMs;
      for (const done of plan.completed) log.info({ pod: `${namespace}/${done.pod}`, from: done.from, to: done.to }, 'move complete');
      if (plan.next.kind === 'none') {
        outcome = { reason: plan.next.reason, message: plan.next.message, moves: plan.inFlight, pending: plan.pending, blocked: plan.next.blocked };
      } else {
        const move = plan.next.move;
        const hold = this.#backoff.get(key);
        if (hold !== undefined && hold.retryAt > now) {
          // Refused a moment ago: keep saying so until the hold ends, whatever woke us.
          const reason = isRebalanceReason(previous?.reason) ? previous.reason : 'EvictionRefused';
          outcome = { reason, message: previous?.message ?? '', moves: plan.inFlight, pending: plan.pending, blocked: false };
          requeueAfterMs = sooner(requeueAfterMs, hold.retryAt - now);
        } else {
          // A replica that is stopping (it lost its lease) starts no eviction.
          signal?.throwIfAborted();
          const evicted = await this.#evict(namespace, move, log);
          if (evicted.result !== 'gone') metrics?.rebalanceEviction?.(namespace, name, evicted.result);
          if (evicted.result === 'evicted') {
            this.#backoff.delete(key);
            moved = move;
            outcome = {
              reason: 'Moving',
              message: `evicted pod ${namespace}/${move.pod} from ${subsetLabel(move.from)}; its replacement goes to subset ${move.to}`,
              moves: [...plan.inFlight, moveRecord(move, clock.now())],
              pending: plan.pending,
              blocked: false,
            };
          } else if (evicted.result === 'refused' || evicted.result === 'failed') {
            const refusals = (hold?.refusals ?? 0) + 1;
            const wait = Math.min(EVICTION_BACKOFF_MAX_MS, EVICTION_BACKOFF_MS * 2 ** (refusals - 1));
            this.#backoff.set(key, { refusals, retryAt: now + wait });
            requeueAfterMs = sooner(requeueAfterMs, wait);
            const reason = evicted.result === 'refused' ? 'EvictionRefused' : 'EvictionFailed';
            const verb = evicted.result === 'refused' ? 'was refused' : 'failed';
            outcome = { reason, message: `the eviction of pod ${namespace}/${move.pod} (${subsetLabel(move.from)} → subset ${move.to}) ${verb}: ${evicted.message}`, moves: plan.inFlight, pending: plan.pending, blocked: true };
          } else {
            outcome = { reason: 'WaitingForStatus', message: `pod ${namespace}/${move.pod} is already gone`, moves: plan.inFlight, pending: plan.pending, blocked: false };
            requeueAfterMs = sooner(requeueAfterMs, GONE_RETRY_MS);
          }
        }
      }
    }

    const status = rebalanceStatus(previous, outcome, clock.now());
    await this.#writeRebalance(ws, status, signal);
    const ref = workloadSpreadRef(ws);
    if (moved !== undefined) this.#o.events.record(rebalancingEvent(ref, moved.pod, moved.from, moved.to), [ws]);
    if (outcome.blocked && blockedIsNews(previous, outcome)) {
      log.info({ reason: outcome.reason, message: outcome.message }, 'rebalancing blocked');
      this.#o.events.record(rebalanceBlockedEvent(ref, outcome.reason, outcome.message), [ws]);
    }
    metrics?.rebalanceState?.(namespace, name, status.pending, status.moves?.length ?? 0);
    if (requeueAfterMs !== undefined) return { result: outcome.reason, requeueAfterMs: wakeAfterMs === undefined ? requeueAfterMs : Math.min(requeueAfterMs, wakeAfterMs) };
    return wakeAfterMs === undefined ? { result: outcome.reason } : { result: outcome.reason, requeueAfterMs: wakeAfterMs, background: true };
  }

  async #evict(namespace: string, move: PlannedMove, log: Logger): Promise<{ result: 'evicted' | 'gone' } | { result: 'refused' | 'failed'; message: string }> {
    const deleteOptions = move.uid === undefined ? undefined : { preconditions: { uid: move.uid } };
    try {
      await this.#o.evictor.evict(namespace, move.pod, deleteOptions === undefined ? {} : { deleteOptions });
      log.info({ pod: `${namespace}/${move.pod}`, from: move.from, to: move.to }, 'evicted a pod to rebalance');
      return { result: 'evicted' };
    } catch (err) {
      if (isNotFound(err)) return { result: 'gone' };
      const message = apiMessage(err);
      if (isTooManyRequests(err)) {
        log.info({ pod: `${namespace}/${move.pod}`, err: message }, 'eviction refused (disruption budget)');
        return { result: 'refused', message };
      }
      log.warn({ pod: `${namespace}/${move.pod}`, err: message }, 'eviction failed');
      return { result: 'failed', message };
    }
  }

  /**
   * Sets (or, with undefined, removes) `status.rebalance` on the freshest
   * copy, under the per-WorkloadSpread lock; nothing is written when it is
   * already so. A conflict is thrown (the queue retries quietly).
   */
  async #writeRebalance(ws: WorkloadSpread, rebalance: RebalanceStatus | undefined, signal: AbortSignal | undefined): Promise<void> {
    const { statusWriter, caches } = this.#o;
    const namespace = ws.metadata.namespace ?? '';
    const name = ws.metadata.name ?? '';
    const uid = ws.metadata.uid ?? `${namespace}/${name}`;
    await statusWriter.state.withLock(uid, async () => {
      const fresh = statusWriter.freshest(caches.getWorkloadSpread(namespace, name), namespace, name) ?? ws;
      if (deepEqual(fresh.status?.rebalance, rebalance)) return;
      const status: WorkloadSpreadStatus = { ...(fresh.status ?? {}) };
      if (rebalance === undefined) delete status.rebalance;
      else status.rebalance = rebalance;
      signal?.throwIfAborted();
      const written = await statusWriter.writeStatus(fresh, status, 'controller');
      if (written.ok || written.reason === 'NotFound') return;
      throw written.error instanceof Error ? written.error : new Error(written.message);
    });
  }

  // ---- what wakes a WorkloadSpread up ----

  /** Per namespace, the keys of the WorkloadSpreads that ask for rebalancing or carry its status (kept from their events). */
  readonly #concerned = new Map<string, Set<string>>();

  /** Keys of the WorkloadSpreads that ask for rebalancing or still carry its status. */
  #keys(): string[] {
    const out: string[] = [];
    for (const key of this.#o.caches.workloadSpreads.keys()) {
      const parsed = parseKey(key);
      const ws = parsed === undefined ? undefined : this.#o.caches.getWorkloadSpread(parsed.namespace, parsed.name);
      if (ws !== undefined && concerned(ws)) out.push(key);
    }
    return out;
  }

  #subscribe(add: (keys: Iterable<string>) => void): (() => void)[] {
    const { caches } = this.#o;
    const self = (ws: { metadata?: ObjectMeta }) => add([storeKey(ws.metadata?.namespace, ws.metadata?.name ?? '')]);
    const forPod = (pod: Pod) => add(this.keysForPod(pod));
    const forNode = () => add(this.#keys());
    this.#concerned.clear();
    for (const key of this.#keys()) this.#concern(key, true);
    const track = (obj: { metadata?: ObjectMeta }, present: boolean) => {
      const key = storeKey(obj.metadata?.namespace, obj.metadata?.name ?? '');
      const parsed = parseKey(key);
      const ws = parsed === undefined ? undefined : caches.getWorkloadSpread(parsed.namespace, parsed.name);
      this.#concern(key, present && ws !== undefined && concerned(ws));
    };
    return [
      caches.workloadSpreads.onAdd((ws) => {
        track(ws, true);
        self(ws);
      }),
      caches.workloadSpreads.onUpdate((_old, ws) => {
        track(ws, true);
        self(ws);
      }),
      caches.workloadSpreads.onDelete((ws) => {
        track(ws, false);
        self(ws);
      }),
      caches.pods.onAdd(forPod),
      caches.pods.onUpdate((old, pod) => {
        // Most namespaces have no WorkloadSpread that rebalances: then no pod event concerns this loop.
        if (this.#concerned.has(pod.metadata?.namespace ?? '')) add(new Set([...this.keysForPod(old), ...this.keysForPod(pod)]));
      }),
      caches.pods.onDelete(forPod),
      caches.nodes.onAdd(forNode),
      caches.nodes.onUpdate((old, node) => {
        if (nodeRoomChanged(old, node)) forNode();
      }),
      caches.nodes.onDelete(forNode),
    ];
  }

  /** Keeps the keys of concerned WorkloadSpreads by namespace (a pod event looks up only its namespace). */
  #concern(key: string, yes: boolean): void {
    const parsed = parseKey(key);
    if (parsed === undefined) return;
    let keys = this.#concerned.get(parsed.namespace);
    if (yes) {
      if (keys === undefined) this.#concerned.set(parsed.namespace, (keys = new Set()));
      keys.add(key);
    } else if (keys !== undefined) {
      keys.delete(key);
      if (keys.size === 0) this.#concerned.delete(parsed.namespace);
    }
  }

  /**
   * The WorkloadSpreads a pod change may concern: the one its marker names,
   * when it asks for rebalancing; for a pod without a marker (not placed yet,
   * or in no subset), every such WorkloadSpread of its namespace.
   */
  keysForPod(pod: Pod): string[] {
    const namespace = pod.metadata?.namespace ?? '';
    const keys = this.#concerned.get(namespace);
    if (keys === undefined) return [];
    const marker = readMarker(pod);
    if (marker !== undefined && marker.name !== '') {
      const key = storeKey(namespace, marker.name);
      return keys.has(key) ? [key] : [];
    }
    return [...keys];
  }
}

function concerned(ws: WorkloadSpread): boolean {
  return rebalanceRequested(ws) || ws.status?.rebalance !== undefined;
}

function isDeleting(ws: WorkloadSpread): boolean {
  const ts = ws.metadata?.deletionTimestamp;
  return ts !== undefined && ts !== null && ts !== '';
}

function sooner(a: number | undefined, b: number): number {
  return a === undefined ? b : Math.min(a, b);
}

function subsetLabel(subset: string): string {
  return subset === FAKE_SUBSET_NAME ? 'no subset' : `subset ${subset}`;
}

/** The API server's message (what a budget said), else the error's description. */
function apiMessage(err: unknown): string {
  const status = (err as { status?: { message?: unknown } } | null)?.status;
  return typeof status?.message === 'string' && status.message !== '' ? status.message : describeError(err);
}

/** Whether a node update can change where pods fit: schedulability, taints, labels or allocatable. */
function nodeRoomChanged(old: Node, node: Node): boolean {
  return (
    !deepEqual(old.spec?.unschedulable ?? false, node.spec?.unschedulable ?? false) ||
    !deepEqual(old.spec?.taints ?? [], node.spec?.taints ?? []) ||
    !deepEqual(old.metadata?.labels ?? {}, node.metadata?.labels ?? {}) ||
    !deepEqual(old.status?.allocatable ?? {}, node.status?.allocatable ?? {})
  );
}
