/**
 * One reconcile of a WorkloadSpread (spec §4.2), applying core's
 * `planReconcile` through the kube layer. `sync(key)` returns when to look
 * again, or throws to be retried with back-off (conflicts quietly: the work
 * queue logs them at debug level).
 *
 * Order, as the reference:
 * 1. read the WorkloadSpread (the freshest of cache and our own last write);
 *    gone or deleting → drop the process-local copy and stop;
 * 2. resolve the workload, its replicas and pods from the caches; pods that
 *    may be adopted (no marker of this WorkloadSpread, bound to a node) are
 *    re-read in full, because adoption scoring compares the whole pod with
 *    the subset patch applied (the cache keeps a trimmed pod);
 * 3. latest workload version NotFound (a new ReplicaSet not created yet) →
 *    adoptions only, look again in a second, no status write;
 * 4. adopt (metadata patches), then write deletion costs that must change
 *    (D7, D21) and the managed label where a placed pod lacks it, one merge
 *    patch per pod (a failure → `PatchPodDeletionCostFailed` and the sync
 *    fails before the status);
 * 5. under the per-WorkloadSpread lock, re-plan against the freshest copy if
 *    the webhook wrote meanwhile, and write the status only when it changed
 *    (D9), conditionally on its resourceVersion;
 * 6. delete the schedule-failed pods (UID precondition); a failure →
 *    `DeletePodFailed` and a retry;
 * 7. record the plan's events; requeue after the plan's smallest delay.
 * A WorkloadSpread whose target does not exist yet gets a status with 0
 * replicas. One WorkloadSpread per workload (core/target-conflict.ts): a
 * duplicate that another one takes precedence over gets only
 * `DuplicateTarget=True` (and a Warning event when it first does), and no
 * pod writes; once it counts again, the normal status replaces the condition.
 * Start at `sync`.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock/clock.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { deleteUnschedulablePodFailedEvent, patchDeletionCostFailedEvent, workloadSpreadRef, type EngineEvent } from '../core/events.ts';
import { markedSubset, readMarker } from '../core/marker.ts';
import { duplicateReadiness, readyChanged, readyStatus } from '../core/ready-condition.ts';
import { planReconcile, type ReconcilePlan } from '../core/reconcile-plan.ts';
import { admissionNeedsWrite } from '../core/status-urgency.ts';
import { duplicateTargetStatus, precedingWorkloadSpread } from '../core/target-conflict.ts';
import { apiVersionGroup } from '../k8s/pod.ts';
import { deepEqual } from '../k8s/json.ts';
import type { Pod } from '../k8s/types.ts';
import { silentLogger, withFields, type Logger } from '../client/logger.ts';
import { TerminalError } from '../client/workqueue.ts';
import { ApiReader } from '../kube/api-reader.ts';
import type { ManagerCaches } from '../kube/caches.ts';
import type { EngineEventSink } from '../kube/events.ts';
import type { PodWriter } from '../kube/pod-writer.ts';
import type { StatusWriter } from '../kube/status-writer.ts';
import type { ReconcileInputs, WorkloadResolver } from '../kube/workload-resolver.ts';
import type { WorkloadSpreadState } from '../kube/ws-state.ts';
import { parseKey, workloadSpreadKey } from './event-mapping.ts';
import { subsetReadings, type SubsetReading } from './subset-readings.ts';

/** How soon to look again when the latest workload version is not there yet. */
export const LATEST_VERSION_RETRY_MS = 1_000;
/**
 * Added to every requeue-after: expiries are checked strictly ("t + 15 s <
 * now"), so a sync exactly at the deadline would find nothing expired and ask
 * for no further requeue (a zero delay counts as none). On a virtual clock
 * that instant is hit exactly.
 */
export const REQUEUE_MARGIN_MS = 1;
/** Pod writes in flight at once during one sync. */
const POD_WRITE_CONCURRENCY = 16;
/**
 * Longest a status change that admission does not read (core/status-urgency.ts:
 * reserved pods showing up, observed deletions, ready/placed counts) is held
 * back, so that a burst of pod events costs a few status writes, not one per
 * pod. `kubectl get ws` and `status.subsetStatuses[].replicas` lag by at most this.
 */
export const STATUS_HOLD_MS = 5_000;

export interface ReconcilerMetrics {
  /** Every subset's state after a sync that computed a status (subset-readings.ts). */
  subsets?(namespace: string, workloadSpread: string, readings: SubsetReading[]): void;
  /** The WorkloadSpread is gone: drop its series. */
  forgetWorkloadSpread?(namespace: string, workloadSpread: string): void;
}

export interface ReconcilerOptions {
  caches: ManagerCaches;
  /** Reads of whole pods (default: one over the caches' client). */
  reader?: ApiReader;
  resolver: WorkloadResolver;
  state: WorkloadSpreadState;
  statusWriter: StatusWriter;
  podWriter: PodWriter;
  events: EngineEventSink;
  clock: Clock;
  log?: Logger;
  /** Unschedulable recovery window in seconds (D10; default 300). */
  recoverySeconds?: number;
  metrics?: ReconcilerMetrics;
  /** How long status changes admission does not read may wait (default STATUS_HOLD_MS; 0 writes every change at once). */
  statusHoldMs?: number;
  /**
   * How many pod events have been mapped to a WorkloadSpread key so far (the
   * controller counts them). A sync that sees the count move while it works
   * does not turn the WorkloadSpread Ready: the next sync, already queued,
   * judges those pods. Absent: every sync's pods count as current.
   */
  podEvents?: (key: string) => number;
}

/** What one sync knows beside the WorkloadSpread: its key, whether the workload exists, the pod-event count it started from. */
interface SyncContext {
  key: string;
  workloadFound: boolean;
  podEventsAtStart: number | undefined;
}

export interface SyncResult {
  requeueAfterMs?: number;
}

/** Runs `fn` over `items` with at most `limit` in flight; resolves with the results in order. */
async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

export class Reconciler {
  readonly #o: ReconcilerOptions;
  readonly #log: Logger;
  readonly #reader: ApiReader;
  /** Per WorkloadSpread uid: since when a status change admission does not read has been held back. */
  readonly #heldSince = new Map<string, number>();
  /** Per WorkloadSpread key: the resourceVersion of this controller's last status write (`wroteLast`). */
  readonly #ownWrites = new Map<string, string>();

  constructor(options: ReconcilerOptions) {
    this.#o = options;
    this.#log = options.log ?? silentLogger;
    this.#reader = options.reader ?? new ApiReader(options.caches.client);
  }

  /**
   * Whether `resourceVersion` is this controller's own last status write of
   * `key`: the watch event that brings it back needs no sync (D25) — the
   * sync that wrote it saw the same pods and asked for its own requeue, and
   * a change of the pods comes with its own event.
   */
  wroteLast(key: string, resourceVersion: string | undefined): boolean {
    return resourceVersion !== undefined && resourceVersion !== '' && this.#ownWrites.get(key) === resourceVersion;
  }

  /** Drops what is kept for a WorkloadSpread that is gone. */
  forget(key: string): void {
    this.#ownWrites.delete(key);
  }

  #wrote(namespace: string, name: string, ws: WorkloadSpread): void {
    const rv = ws.metadata?.resourceVersion;
    if (rv !== undefined && rv !== '') this.#ownWrites.set(workloadSpreadKey(namespace, name), rv);
  }

  /**
   * One reconcile of `key`. `signal` (the controller's, aborted when it
   * stops) is checked before each write: a sync under way when this replica
   * stops leading writes nothing more.
   */
  async sync(key: string, reconcileID: string = randomUUID(), signal?: AbortSignal): Promise<SyncResult> {
    const parsed = parseKey(key);
    if (parsed === undefined) throw new TerminalError(`malformed WorkloadSpread key ${JSON.stringify(key)}`);
    const { namespace, name } = parsed;
    const log = withFields(this.#log, { namespace, name, reconcileID });
    const { caches, state } = this.#o;
    const podEventsAtStart = this.#o.podEvents?.(key);

    const ws = state.freshest(caches.getWorkloadSpread(namespace, name), namespace, name);
    if (ws === undefined || isDeleting(ws) || caches.getWorkloadSpread(namespace, name) === undefined) {
      state.forget(namespace, name);
      if (ws?.metadata?.uid !== undefined) this.#heldSince.delete(ws.metadata.uid);
      this.#o.metrics?.forgetWorkloadSpread?.(namespace, name);
      log.debug({}, 'WorkloadSpread gone or deleting');
      return {};
    }
    // One WorkloadSpread per workload: a duplicate that another one takes precedence over only gets its condition.
    const ref = ws.spec?.targetRef;
    const group = apiVersionGroup(ref?.apiVersion ?? '');
    const winner = ref !== undefined && ref !== null && group.ok ? precedingWorkloadSpread(ws, caches.workloadSpreadsForTarget(namespace, group.group, ref.kind, ref.name)) : undefined;
    if (winner !== undefined) {
      signal?.throwIfAborted();
      await this.#markDuplicate(ws, winner, log);
      return {};
    }

    const resolved = await this.#o.resolver.resolveForReconcile(ws);
    if (!resolved.ok) throw new Error(`resolve the workload of ${key}: ${resolved.error}`);
    const inputs = resolved.inputs;
    const pods = await this.#withFullAdoptionCandidates(ws, inputs.pods);
    const ctx: SyncContext = { key, workloadFound: inputs.workload !== undefined, podEventsAtStart };

    if (inputs.writeDeletionCost && !inputs.latestVersion.ok) {
      if (!inputs.latestVersion.notFound) throw new Error(`latest version of ${key}'s workload: ${inputs.latestVersion.error}`);
      const plan = this.#plan(ctx, ws, inputs, pods, false);
      signal?.throwIfAborted();
      await this.#adopt(namespace, plan, pods, log);
      log.debug({ reason: inputs.latestVersion.error }, 'latest workload version not found yet, looking again soon');
      return { requeueAfterMs: LATEST_VERSION_RETRY_MS };
    }

    const plan = this.#plan(ctx, ws, inputs, pods, inputs.writeDeletionCost);
    signal?.throwIfAborted();
    await this.#adopt(namespace, plan, pods, log);
    if (plan.error !== undefined) {
      // Only validation-rejected input gets here (an unresolvable maxReplicas): retrying cannot help until the spec changes.
      throw new TerminalError(`${key}: ${plan.error}`);
    }
    signal?.throwIfAborted();
    await this.#writePodMetadata(ws, plan, pods, log);

    signal?.throwIfAborted();
    const final = await this.#writeStatus(ctx, ws, inputs, pods, plan, log);
    signal?.throwIfAborted();
    const failures = await this.#deleteScheduleFailed(ws, final, pods, log);
    this.#o.events.recordAll(final.events, [ws]);
    this.#o.metrics?.subsets?.(namespace, name, subsetReadings(ws, final.status, pods, inputs.workloadReplicas));
    if (failures > 0) throw new Error(`${failures} schedule-failed pod(s) of ${key} could not be deleted`);
    return final.requeueAfterMs === undefined ? {} : { requeueAfterMs: final.requeueAfterMs + REQUEUE_MARGIN_MS };
  }

  /** Whether no pod event reached this sync's key since the sync started. */
  #podsCurrent(ctx: SyncContext): boolean {
    return ctx.podEventsAtStart === undefined || this.#o.podEvents?.(ctx.key) === ctx.podEventsAtStart;
  }

  #plan(ctx: SyncContext, ws: WorkloadSpread, inputs: ReconcileInputs, pods: Pod[], writeDeletionCost: boolean, podsCurrent = this.#podsCurrent(ctx)): ReconcilePlan {
    return planReconcile({
      ws,
      pods,
      nodeByName: (n) => this.#o.caches.getNode(n),
      workloadReplicas: inputs.workloadReplicas,
      latestVersion: inputs.latestVersion.ok ? inputs.latestVersion.version : '',
      now: this.#o.clock.now(),
      writeDeletionCost,
      podVersionOptions: inputs.podVersionOptions,
      workloadFound: ctx.workloadFound,
      podsCurrent,
      ...(this.#o.recoverySeconds === undefined ? {} : { recoverySeconds: this.#o.recoverySeconds }),
    });
  }

  /**
   * Replaces the cached (trimmed) copy of every pod adoption may score with
   * the full pod: those not marked for this WorkloadSpread and a subset,
   * bound to a node. A pod gone meanwhile keeps its cached copy.
   */
  async #withFullAdoptionCandidates(ws: WorkloadSpread, pods: readonly Pod[]): Promise<Pod[]> {
    const name = ws.metadata.name ?? '';
    const wanted: number[] = [];
    for (let i = 0; i < pods.length; i++) {
      const pod = pods[i] as Pod;
      if (markedSubset(pod, name) === undefined && typeof pod.spec?.nodeName === 'string' && pod.spec.nodeName !== '') wanted.push(i);
    }
    if (wanted.length === 0) return [...pods];
    const full = await this.#reader.fullPods(wanted.map((i) => pods[i] as Pod));
    const out = [...pods];
    wanted.forEach((i, k) => (out[i] = full[k] as Pod));
    return out;
  }

  async #adopt(namespace: string, plan: ReconcilePlan, pods: readonly Pod[], log: Logger): Promise<void> {
    if (plan.adoptions.length === 0) return;
    const uidOf = new Map(pods.map((p) => [p.metadata?.name ?? '', p.metadata?.uid]));
    const results = await mapLimit(plan.adoptions, POD_WRITE_CONCURRENCY, (a) => this.#o.podWriter.adopt(namespace, a.pod, uidOf.get(a.pod), a.patch));
    let failed = 0;
    results.forEach((r, i) => {
      const adoption = plan.adoptions[i];
      if (r.ok) {
        log.info({ pod: adoption?.pod ?? '', subset: adoption?.subset }, 'adopted pod');
      } else if (!r.notFound) {
        failed++;
        log.warn({ pod: adoption?.pod ?? '', err: r.message }, 'adoption patch failed');
      }
    });
    if (failed > 0) throw new Error(`${failed} adoption patch(es) failed`);
  }

  /**
   * The plan's pod metadata writes: one merge patch per pod carrying its new
   * deletion cost and/or the managed label. A failed cost write is recorded
   * as `PatchPodDeletionCostFailed`; any failure fails the sync before the
   * status is written.
   */
  async #writePodMetadata(ws: WorkloadSpread, plan: ReconcilePlan, pods: readonly Pod[], log: Logger): Promise<void> {
    if (plan.deletionCostPatches.length === 0 && plan.labelPatches.length === 0) return;
    const byName = new Map(pods.map((p) => [p.metadata?.name ?? '', p]));
    const changes = new Map<string, { cost?: number; managed?: boolean }>();
    for (const p of plan.deletionCostPatches) changes.set(p.pod, { cost: p.cost });
    for (const name of plan.labelPatches) changes.set(name, { ...changes.get(name), managed: true });
    const namespace = ws.metadata?.namespace ?? '';
    const work = [...changes];
    const results = await mapLimit(work, POD_WRITE_CONCURRENCY, async ([name, change]) => {
      const pod = byName.get(name);
      return pod === undefined ? { ok: true as const } : this.#o.podWriter.patchMetadata(pod, change);
    });
    const events: EngineEvent[] = [];
    let failed = 0;
    results.forEach((r, i) => {
      const [name, change] = work[i] ?? ['', {}];
      if (r.ok || r.notFound) return;
      failed++;
      log.warn({ pod: name, ...(change.cost === undefined ? {} : { cost: change.cost }), err: r.message }, 'pod metadata patch failed');
      const pod = byName.get(name);
      if (change.cost !== undefined) events.push(patchDeletionCostFailedEvent(workloadSpreadRef(ws), { namespace, name }, (pod === undefined ? undefined : readMarker(pod)?.subset) ?? '', change.cost));
    });
    if (events.length > 0) this.#o.events.recordAll(events, [ws]);
    if (failed > 0) throw new Error(`${failed} pod metadata patch(es) failed`);
  }

  /**
   * Writes the status under the per-WorkloadSpread lock, re-planning against
   * the freshest copy when the webhook wrote since the plan was made (the pods
   * are the same; only the stored reservations differ). Returns the plan whose
   * status was written (or found unchanged).
   */
  async #writeStatus(ctx: SyncContext, ws: WorkloadSpread, inputs: ReconcileInputs, pods: Pod[], plan: ReconcilePlan, log: Logger): Promise<ReconcilePlan> {
    const uid = ws.metadata?.uid ?? `${ws.metadata?.namespace ?? ''}/${ws.metadata?.name ?? ''}`;
    return this.#o.state.withLock(uid, async () => {
      const namespace = ws.metadata?.namespace ?? '';
      const name = ws.metadata?.name ?? '';
      const fresh = this.#o.state.freshest(this.#o.caches.getWorkloadSpread(namespace, name), namespace, name) ?? ws;
      let final = plan;
      let base = ws;
      if (fresh.metadata?.resourceVersion !== ws.metadata?.resourceVersion) {
        base = fresh;
        final = this.#plan(ctx, fresh, inputs, pods, false);
        final = { ...final, deletionCostPatches: [], labelPatches: [] };
      } else if (readyStatus(final.status) === 'True' && readyStatus(base.status) !== 'True' && !this.#podsCurrent(ctx)) {
        // Pods moved on while this sync worked: it does not get to say Ready; the sync those events queued will.
        final = { ...this.#plan(ctx, base, inputs, pods, false, false), deletionCostPatches: [], labelPatches: [] };
      }
      if (!final.statusChanged) {
        this.#heldSince.delete(uid);
        return final;
      }
      const hold = this.#holdFor(uid, base, final);
      if (hold > 0) {
        log.debug({ holdMs: hold }, 'status change admission does not read, held back');
        return { ...final, requeueAfterMs: Math.min(final.requeueAfterMs ?? hold, hold) };
      }
      this.#heldSince.delete(uid);
      const written = await this.#o.statusWriter.writeStatus(base, final.status, 'controller');
      if (!written.ok) {
        if (written.reason === 'NotFound') {
          log.debug({}, 'WorkloadSpread deleted during the sync');
          return { ...final, events: [], scheduleFailed: [] };
        }
        // Conflicts are thrown as the API error itself, so the queue retries them quietly.
        throw written.error instanceof Error ? written.error : new Error(written.message);
      }
      this.#wrote(namespace, name, written.ws);
      log.debug({ resourceVersion: written.ws.metadata?.resourceVersion }, 'status written');
      return final;
    });
  }

  /**
   * How much longer the plan's status change may wait (0: write now): a
   * change admission reads is written at once; any other waits at most
   * `statusHoldMs` from when it was first held back, and goes out with the
   * next change admission reads if that comes first.
   */
  #holdFor(uid: string, base: WorkloadSpread, plan: ReconcilePlan): number {
    const holdMs = this.#o.statusHoldMs ?? STATUS_HOLD_MS;
    if (holdMs <= 0 || admissionNeedsWrite(base.spec?.subsets ?? [], base.status ?? undefined, plan.status)) return 0;
    // What kubectl wait and GitOps health checks read goes out at once too, so READY is never older than the counts beside it.
    if (readyChanged(base.status ?? undefined, plan.status)) return 0;
    const now = this.#o.clock.now();
    const since = this.#heldSince.get(uid) ?? now;
    this.#heldSince.set(uid, since);
    return Math.max(0, since + holdMs - now);
  }

  /** A duplicate of the workload's WorkloadSpread: DuplicateTarget=True, nothing else (core/target-conflict.ts). */
  async #markDuplicate(ws: WorkloadSpread, winner: WorkloadSpread, log: Logger): Promise<void> {
    const uid = ws.metadata?.uid ?? `${ws.metadata?.namespace ?? ''}/${ws.metadata?.name ?? ''}`;
    await this.#o.state.withLock(uid, async () => {
      const namespace = ws.metadata?.namespace ?? '';
      const name = ws.metadata?.name ?? '';
      const base = this.#o.state.freshest(this.#o.caches.getWorkloadSpread(namespace, name), namespace, name) ?? ws;
      const duplicate = duplicateTargetStatus(base, winner, this.#o.clock.now());
      const { event } = duplicate;
      const status = duplicateReadiness(base, duplicate.status, this.#o.clock.now());
      if (deepEqual(status, base.status ?? undefined)) return;
      const written = await this.#o.statusWriter.writeStatus(base, status, 'controller');
      if (!written.ok) {
        if (written.reason === 'NotFound') return;
        throw written.error instanceof Error ? written.error : new Error(written.message);
      }
      this.#wrote(namespace, name, written.ws);
      if (event !== undefined) {
        log.warn({ winner: winner.metadata?.name }, 'another WorkloadSpread spreads the same workload and takes precedence; this one is ignored');
        this.#o.events.record(event, [ws]);
      }
    });
  }

  async #deleteScheduleFailed(ws: WorkloadSpread, plan: ReconcilePlan, pods: readonly Pod[], log: Logger): Promise<number> {
    if (plan.scheduleFailed.length === 0) return 0;
    const namespace = ws.metadata?.namespace ?? '';
    const uidOf = new Map(pods.map((p) => [p.metadata?.name ?? '', p.metadata?.uid]));
    const results = await mapLimit(plan.scheduleFailed, POD_WRITE_CONCURRENCY, (f) => this.#o.podWriter.deletePod(namespace, f.pod, uidOf.get(f.pod)));
    let failures = 0;
    results.forEach((r, i) => {
      const f = plan.scheduleFailed[i];
      if (f === undefined) return;
      if (r.ok) {
        if (r.skipped !== true) log.info({ pod: f.pod, subset: f.subset }, 'deleted unschedulable pod');
        return;
      }
      failures++;
      log.warn({ pod: f.pod, err: r.message }, 'deleting an unschedulable pod failed');
      this.#o.events.record(deleteUnschedulablePodFailedEvent(workloadSpreadRef(ws), { namespace, name: f.pod }, f.subset), [ws]);
    });
    return failures;
  }
}

function isDeleting(ws: WorkloadSpread): boolean {
  const ts = ws.metadata?.deletionTimestamp;
  return ts !== undefined && ts !== null && ts !== '';
}

