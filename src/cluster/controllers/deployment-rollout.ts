/**
 * The effectful half of the Deployment controller's sync (k8s.io/kubernetes
 * pkg/controller/deployment sync.go, rolling.go, recreate.go, progress.go):
 * given a Deployment and the ReplicaSets it owns (private copies, edited as
 * upstream edits its deep copies), decide with deployment-util.ts /
 * deployment-status.ts and write through the API:
 * - `allReplicaSets`: the new set (found or created, with its revision:
 *   deployment-new-replicaset.ts) and the old ones;
 * - `scale`: proportional scaling on a replicas change or while paused;
 * - `rolloutRolling` / `rolloutRecreate`; `cleanup` of old sets beyond
 *   `revisionHistoryLimit`; `syncRolloutStatus` / `syncStatusOnly`.
 * Status writes keep the resourceVersion the server answered (see
 * deployment-new-replicaset.ts).
 * Start at `rolloutRolling`.
 */
import type { Clock } from '../../clock/clock.ts';
import { isNotFound } from '../../client/errors.ts';
import type { EventRecorder } from '../../client/event-recorder.ts';
import type { KubeClient } from '../../client/http-client.ts';
import type { Logger } from '../../client/logger.ts';
import { BUILTIN } from '../../client/resources.ts';
import { deepEqual } from '../../k8s/json.ts';
import type { KubeObject, Pod } from '../../k8s/types.ts';
import {
  PROGRESSING,
  REASON,
  deploymentComplete,
  getCondition,
  newCondition,
  rolloutStatus,
  calculateStatus,
  setCondition,
  statusOf,
  wireStatus,
} from './deployment-status.ts';
import {
  activeReplicaSets,
  byCreationTimestamp,
  byRevision,
  desiredReplicasAnnotation,
  findActiveOrLatest,
  isPaused,
  isRollingUpdate,
  isSaturated,
  maxSurge,
  maxUnavailable,
  newRSNewReplicas,
  proportionalScale,
  progressDeadlineSeconds,
  replicasAnnotationsNeedUpdate,
  revisionHistoryLimit,
  setReplicasAnnotations,
  specOf,
  statusNumber,
  sumSpecReplicas,
  sumStatus,
} from './deployment-util.ts';
import { NewReplicaSetSync } from './deployment-new-replicaset.ts';
import { specReplicas } from './replicaset-status.ts';

export interface RolloutDeps {
  client: KubeClient;
  clock: Clock;
  recorder: EventRecorder | undefined;
  log: Logger;
  /** The cached ReplicaSet, for the already-exists path of creation. */
  cachedReplicaSet(namespace: string, name: string): KubeObject | undefined;
  /** Look at `d` again after `ms` (a progress-deadline check; replaces any pending one). */
  progressCheckAfter(d: KubeObject, ms: number): void;
  /** No progress check is due for `d` any more (complete, timed out, or its status is about to change). */
  cancelProgressCheck(d: KubeObject): void;
  requeueRateLimited(d: KubeObject): void;
}

/** Pods by the uid of the ReplicaSet controlling them (every set of the Deployment has an entry). */
export type PodMap = Map<string, Pod[]>;

const ns = (obj: KubeObject): string => obj.metadata?.namespace ?? '';
const nameOf = (obj: KubeObject): string => obj.metadata?.name ?? '';
const deleting = (obj: KubeObject): boolean => obj.metadata?.deletionTimestamp !== undefined && obj.metadata.deletionTimestamp !== null;

export class DeploymentRollout {
  readonly #deps: RolloutDeps;
  readonly #revisions: NewReplicaSetSync;

  constructor(deps: RolloutDeps) {
    this.#deps = deps;
    this.#revisions = new NewReplicaSetSync(deps);
  }

  get #now(): number {
    return this.#deps.clock.now();
  }

  #event(d: KubeObject, type: 'Normal' | 'Warning', reason: string, note: string): void {
    this.#deps.recorder?.record(d, { type, reason, note, action: reason === 'ScalingReplicaSet' ? 'Scale' : 'Sync' });
  }

  /** PUT the Deployment's status (see deployment-revision.ts). */
  updateStatus(d: KubeObject): Promise<void> {
    return this.#revisions.updateStatus(d);
  }

  #setStatus(d: KubeObject, status: unknown): void {
    d['status'] = status;
  }

  /** getAllReplicaSetsAndSyncRevision: the new set (maybe created) and every old one. */
  allReplicaSets(d: KubeObject, rsList: KubeObject[], create: boolean): Promise<{ newRS: KubeObject | undefined; oldRSs: KubeObject[] }> {
    return this.#revisions.allReplicaSets(d, rsList, create);
  }

  // ---- scaling one set ----

  /** scaleReplicaSetAndRecordEvent: no-op at the requested size; answers whether it scaled and the set as written. */
  async scaleAndRecord(rs: KubeObject, size: number, d: KubeObject): Promise<{ scaled: boolean; rs: KubeObject }> {
    if (specReplicas(rs) === size) return { scaled: false, rs };
    return this.scaleReplicaSet(rs, size, d, specReplicas(rs) < size ? 'up' : 'down');
  }

  /** scaleReplicaSet: writes the size and the replica annotations when either is stale. */
  async scaleReplicaSet(rs: KubeObject, size: number, d: KubeObject, operation: string): Promise<{ scaled: boolean; rs: KubeObject }> {
    const desired = specReplicas(d);
    const max = desired + maxSurge(d);
    const sizeNeedsUpdate = specReplicas(rs) !== size;
    if (!sizeNeedsUpdate && !replicasAnnotationsNeedUpdate(rs, desired, max)) return { scaled: false, rs };
    const oldSize = specReplicas(rs);
    const copy = structuredClone(rs);
    copy['spec'] = { ...specOf(copy), replicas: size };
    setReplicasAnnotations(copy, desired, max);
    const updated = await this.#deps.client.update<KubeObject>(BUILTIN.replicasets, copy);
    if (sizeNeedsUpdate) this.#event(d, 'Normal', 'ScalingReplicaSet', `Scaled ${operation} replica set ${nameOf(updated)} to ${size} from ${oldSize}`);
    return { scaled: sizeNeedsUpdate, rs: updated };
  }

  // ---- scaling events and pauses ----

  /** isScalingEvent: an active set whose desired-replicas annotation differs from spec.replicas. */
  async isScalingEvent(d: KubeObject, rsList: KubeObject[]): Promise<boolean> {
    const { newRS, oldRSs } = await this.allReplicaSets(d, rsList, false);
    return activeReplicaSets([...oldRSs, newRS]).some((rs) => {
      const desired = desiredReplicasAnnotation(rs);
      return desired !== undefined && desired !== specReplicas(d);
    });
  }

  /** sync: scale (proportionally when needed), clean up while paused, write status. */
  async sync(d: KubeObject, rsList: KubeObject[]): Promise<void> {
    const { newRS, oldRSs } = await this.allReplicaSets(d, rsList, false);
    await this.scale(d, newRS, oldRSs);
    if (isPaused(d)) await this.cleanup(oldRSs, d);
    await this.syncDeploymentStatus([...oldRSs, newRS], newRS, d);
  }

  /** scale: the single active set takes all; a saturated new set empties the old; otherwise proportional. */
  async scale(d: KubeObject, newRS: KubeObject | undefined, oldRSs: KubeObject[]): Promise<void> {
    const replicas = specReplicas(d);
    const activeOrLatest = findActiveOrLatest(newRS, oldRSs);
    if (activeOrLatest !== undefined) {
      if (specReplicas(activeOrLatest) !== replicas) await this.scaleAndRecord(activeOrLatest, replicas, d);
      return;
    }
    if (isSaturated(d, newRS)) {
      for (const old of activeReplicaSets(oldRSs)) await this.scaleAndRecord(old, 0, d);
      return;
    }
    if (!isRollingUpdate(d)) return;
    const plan = proportionalScale(d, activeReplicaSets([...oldRSs, newRS]));
    // One set at a time, stopping at the first failure: the next sync starts over from what was written.
    for (const { rs, size } of plan.sizes) await this.scaleReplicaSet(rs, size, d, plan.operation);
  }

  /** checkPausedConditions: Progressing=Unknown DeploymentPaused / DeploymentResumed, unless timed out. */
  async checkPausedConditions(d: KubeObject): Promise<void> {
    if (progressDeadlineSeconds(d) === undefined) return;
    const status = statusOf(d);
    const cond = getCondition(status, PROGRESSING);
    if (cond?.reason === REASON.timedOut) return;
    const pausedCondExists = cond?.reason === REASON.paused;
    if (isPaused(d) && !pausedCondExists) setCondition(status, newCondition(PROGRESSING, 'Unknown', REASON.paused, 'Deployment is paused', this.#now));
    else if (!isPaused(d) && pausedCondExists) setCondition(status, newCondition(PROGRESSING, 'Unknown', REASON.resumed, 'Deployment is resumed', this.#now));
    else return;
    this.#setStatus(d, status);
    await this.updateStatus(d);
  }

  // ---- RollingUpdate ----

  async rolloutRolling(d: KubeObject, rsList: KubeObject[]): Promise<void> {
    const { newRS, oldRSs } = await this.allReplicaSets(d, rsList, true);
    if (newRS === undefined) return;
    const allRSs = [...oldRSs, newRS];
    if (await this.#reconcileNewReplicaSet(allRSs, newRS, d)) return this.syncRolloutStatus(allRSs, newRS, d);
    if (await this.#reconcileOldReplicaSets(allRSs, activeReplicaSets(oldRSs), newRS, d)) return this.syncRolloutStatus(allRSs, newRS, d);
    if (deploymentComplete(d, statusOf(d))) await this.cleanup(oldRSs, d);
    return this.syncRolloutStatus(allRSs, newRS, d);
  }

  async #reconcileNewReplicaSet(allRSs: KubeObject[], newRS: KubeObject, d: KubeObject): Promise<boolean> {
    const replicas = specReplicas(d);
    if (specReplicas(newRS) === replicas) return false;
    if (specReplicas(newRS) > replicas) return (await this.scaleAndRecord(newRS, replicas, d)).scaled;
    const count = newRSNewReplicas(d, allRSs, newRS);
    if (!count.ok) throw new Error(count.error);
    return (await this.scaleAndRecord(newRS, count.value, d)).scaled;
  }

  async #reconcileOldReplicaSets(allRSs: KubeObject[], oldRSs: KubeObject[], newRS: KubeObject, d: KubeObject): Promise<boolean> {
    if (sumSpecReplicas(oldRSs) === 0) return false;
    const minAvailable = specReplicas(d) - maxUnavailable(d);
    const newUnavailable = specReplicas(newRS) - statusNumber(newRS, 'availableReplicas');
    const maxScaledDown = sumSpecReplicas(allRSs) - minAvailable - newUnavailable;
    if (maxScaledDown <= 0) return false;
    // Unhealthy replicas first: they block the rollout and their removal costs no availability.
    let cleaned: { oldRSs: KubeObject[]; count: number };
    try {
      cleaned = await this.#cleanupUnhealthyReplicas(oldRSs, d, maxScaledDown);
    } catch {
      return false;
    }
    let scaledDown: number;
    try {
      scaledDown = await this.#scaleDownOldForRollingUpdate([...cleaned.oldRSs, newRS], cleaned.oldRSs, d);
    } catch {
      return false;
    }
    return cleaned.count + scaledDown > 0;
  }

  async #cleanupUnhealthyReplicas(oldRSs: KubeObject[], d: KubeObject, maxCleanup: number): Promise<{ oldRSs: KubeObject[]; count: number }> {
    const sorted = [...oldRSs].sort(byCreationTimestamp);
    let total = 0;
    for (const [i, rs] of sorted.entries()) {
      if (total >= maxCleanup) break;
      const size = specReplicas(rs);
      const available = statusNumber(rs, 'availableReplicas');
      if (size === 0 || size === available) continue;
      const count = Math.min(maxCleanup - total, size - available);
      // A status read before the set's last scale-down can count more available replicas than it may have:
      // never "clean up" upwards (upstream refuses the same way, and the rollout waits for the next sync).
      if (size - count > size) throw new Error(`when cleaning up unhealthy replicas, got invalid request to scale down ${rs.metadata?.namespace ?? ''}/${rs.metadata?.name ?? ''} ${size} -> ${size - count}`);
      const result = await this.scaleAndRecord(rs, size - count, d);
      total += count;
      sorted[i] = result.rs;
    }
    return { oldRSs: sorted, count: total };
  }

  async #scaleDownOldForRollingUpdate(allRSs: KubeObject[], oldRSs: KubeObject[], d: KubeObject): Promise<number> {
    const minAvailable = specReplicas(d) - maxUnavailable(d);
    const available = sumStatus(allRSs, 'availableReplicas');
    if (available <= minAvailable) return 0;
    const target = available - minAvailable;
    let total = 0;
    for (const rs of [...oldRSs].sort(byCreationTimestamp)) {
      if (total >= target) break;
      if (specReplicas(rs) === 0) continue;
      const count = Math.min(specReplicas(rs), target - total);
      if (count < 0) throw new Error(`when scaling down old replica set, got invalid request to scale down ${rs.metadata?.namespace ?? ''}/${rs.metadata?.name ?? ''} ${specReplicas(rs)} -> ${specReplicas(rs) - count}`);
      await this.scaleAndRecord(rs, specReplicas(rs) - count, d);
      total += count;
    }
    return total;
  }

  // ---- Recreate ----

  async rolloutRecreate(d: KubeObject, rsList: KubeObject[], podMap: PodMap): Promise<void> {
    let { newRS, oldRSs } = await this.allReplicaSets(d, rsList, false);
    let allRSs: (KubeObject | undefined)[];
    let scaledDown = false;
    for (const [i, rs] of oldRSs.entries()) {
      if (specReplicas(rs) === 0) continue;
      const result = await this.scaleAndRecord(rs, 0, d);
      if (result.scaled) {
        oldRSs[i] = result.rs;
        scaledDown = true;
      }
    }
    allRSs = [...oldRSs, newRS];
    if (scaledDown) return this.syncRolloutStatus(allRSs, newRS, d);
    if (oldPodsRunning(newRS, oldRSs, podMap)) return this.syncRolloutStatus(allRSs, newRS, d);
    if (newRS === undefined) {
      ({ newRS, oldRSs } = await this.allReplicaSets(d, rsList, true));
      allRSs = [...oldRSs, newRS];
    }
    if (newRS !== undefined) await this.scaleAndRecord(newRS, specReplicas(d), d);
    if (deploymentComplete(d, statusOf(d))) await this.cleanup(oldRSs, d);
    return this.syncRolloutStatus(allRSs, newRS, d);
  }

  // ---- history and status ----

  /** cleanupDeployment: delete the oldest idle old sets beyond revisionHistoryLimit. */
  async cleanup(oldRSs: KubeObject[], d: KubeObject): Promise<void> {
    const limit = revisionHistoryLimit(d);
    if (limit === undefined) return;
    const cleanable = oldRSs.filter((rs) => !deleting(rs));
    const diff = cleanable.length - limit;
    if (diff <= 0) return;
    cleanable.sort(byRevision);
    for (const rs of cleanable.slice(0, diff)) {
      const generation = rs.metadata?.generation ?? 0;
      if (statusNumber(rs, 'replicas') !== 0 || specReplicas(rs) !== 0 || generation > statusNumber(rs, 'observedGeneration') || deleting(rs)) continue;
      try {
        await this.#deps.client.delete(BUILTIN.replicasets, nameOf(rs), { namespace: ns(rs) });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }

  /** syncDeploymentStatus: counts and Available only; written when different. */
  async syncDeploymentStatus(allRSs: (KubeObject | undefined)[], newRS: KubeObject | undefined, d: KubeObject): Promise<void> {
    const status = calculateStatus(allRSs, newRS, d, this.#now);
    if (deepEqual(wireStatus(statusOf(d)), wireStatus(status))) return;
    this.#setStatus(d, status);
    await this.updateStatus(d);
  }

  async syncStatusOnly(d: KubeObject, rsList: KubeObject[]): Promise<void> {
    const { newRS, oldRSs } = await this.allReplicaSets(d, rsList, false);
    await this.syncDeploymentStatus([...oldRSs, newRS], newRS, d);
  }

  /** syncRolloutStatus: status with the Progressing condition; without a change, maybe a progress check later. */
  async syncRolloutStatus(allRSs: (KubeObject | undefined)[], newRS: KubeObject | undefined, d: KubeObject): Promise<void> {
    const next = rolloutStatus(allRSs, newRS, d, this.#now);
    // A changed status comes back through the watch and is judged again then.
    this.#deps.cancelProgressCheck(d);
    if (next.unchanged) {
      if (next.requeue === 'now') this.#deps.requeueRateLimited(d);
      else if (next.requeue !== undefined) this.#deps.progressCheckAfter(d, next.requeue);
      return;
    }
    this.#setStatus(d, next.status);
    await this.updateStatus(d);
  }
}

/** oldPodsRunning: old sets still report replicas, or a pod of an old set is not finished. */
export function oldPodsRunning(newRS: KubeObject | undefined, oldRSs: KubeObject[], podMap: PodMap): boolean {
  if (sumStatus(oldRSs, 'replicas') > 0) return true;
  for (const [uid, pods] of podMap) {
    if (newRS !== undefined && newRS.metadata?.uid === uid) continue;
    for (const pod of pods) {
      const phase = pod.status?.phase;
      if (phase === 'Failed' || phase === 'Succeeded') continue;
      return true;
    }
  }
  return false;
}
