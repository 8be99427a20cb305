/**
 * The decisions of one CloneSet sync, as pure functions of the spec, the
 * active pods it owns, its two revisions and the time (kruise
 * pkg/controller/cloneset/sync: `calculateDiffsWithExpectation`, `Scale`,
 * `Update`). The controller (cloneset.ts) performs what they return.
 *
 * `calculateDiffs` — the numbers everything else follows:
 * - partition P (pods kept at the current revision, cloneset-pods.ts),
 *   maxSurge S (rounded up; 0 while paused), maxUnavailable U (20 % by
 *   default; rounded down when S > 0, up otherwise), scaleStrategy's
 *   maxUnavailable (rounded up; no limit by default);
 * - pods at the update revision ("new") and not ("old"); a pod specified to
 *   delete counts as "to delete", any other unavailable one as unavailable;
 * - surge is used to replace pods specified to delete beyond U, or to move
 *   pods between revisions (old above P, new below replicas − P);
 * - scale up by replicas + surge − pods (at most scaleStrategy's
 *   maxUnavailable − unavailable at once), the old revision's share being
 *   P + old surge − old pods; scale down by pods − to-delete − replicas −
 *   surge; ready pods may be deleted up to U + (pods − replicas) −
 *   unavailable;
 * - update: the old pods above P (or new pods below replicas − P, whichever
 *   is smaller), with U + (pods − replicas) unavailable at most.
 *
 * `planScale` — one round creates or deletes, never both: create what is
 * missing (old revision first); else delete the pods specified to delete;
 * else, when nothing is specified to delete, scale in: the old revision's
 * share from the old pods, the rest from the new ones, each group ranked by
 * the CloneSet order (k8s/cloneset-pod-ranking.ts: deletion cost included),
 * ready pods only within the delete limit.
 * `planUpdate` — when the round scaled nothing: the old pods to recreate at
 * the update revision, least valuable first (the ReplicaSet's ActivePods
 * order), within the update count and the unavailability budget. A recreate
 * marks the pod specified to delete; the next rounds delete it and create
 * its replacement.
 * Not modelled: lifecycle hooks (PreparingDelete/PreparingUpdate), in-place
 * updates (done as recreates), priority/scatter update order, the
 * topology-spread ranker, and rolling back to the current revision
 * (Kruise's CloneSetPartitionRollback gate, off by default).
 */
import { compareActivePods } from '../../k8s/pod-ranking.ts';
import { isCloneSetPodAvailable, rankCloneSetPods } from '../../k8s/cloneset-pod-ranking.ts';
import type { Pod } from '../../k8s/types.ts';
import { isAtRevision, isSpecifiedDelete, partitionReplicas, type CloneSetSpecView } from './cloneset-pods.ts';
import { scaledIntOrPercent } from './int-or-percent.ts';

const MAX_INT32 = 2147483647;

export interface CloneSetDiffs {
  /** Pods to create (≥ 0), before the scale-out limit. */
  scaleUpNum: number;
  /** Of those, at the current revision (may exceed scaleUpNum). */
  scaleUpNumOldRevision: number;
  /** Pods to delete beyond those specified to delete. */
  scaleDownNum: number;
  scaleDownNumOldRevision: number;
  /** Creations allowed now by scaleStrategy.maxUnavailable. */
  scaleUpLimit: number;
  /** Ready pods that may be deleted now. */
  deleteReadyLimit: number;
  useSurge: number;
  useSurgeOldRevision: number;
  /** Pods to move to the update revision (≥ 0: rollback is not modelled). */
  updateNum: number;
  /** Unavailable pods allowed while updating. */
  updateMaxUnavailable: number;
}

function scaled(value: number | string, total: number, roundUp: boolean): number {
  const r = scaledIntOrPercent(value, total, roundUp);
  return r.ok ? r.value : 0;
}

/** The available check of every sync decision (lifecycle Normal, running, ready for minReadySeconds). */
export type AvailableCheck = (pod: Pod, minReadySeconds: number) => boolean;

export function availabilityAt(now: number): AvailableCheck {
  return (pod, minReadySeconds) => isCloneSetPodAvailable(pod, minReadySeconds, now);
}

export function calculateDiffs(spec: CloneSetSpecView, pods: readonly Pod[], updateRevision: string, available: AvailableCheck): CloneSetDiffs {
  const replicas = spec.replicas;
  const partition = partitionReplicas(spec.partition, replicas);
  const maxSurge = spec.maxSurge === undefined || spec.paused ? 0 : scaled(spec.maxSurge, replicas, true);
  const maxUnavailable = scaled(spec.maxUnavailable, replicas, maxSurge === 0);
  const scaleMaxUnavailable = scaled(spec.scaleMaxUnavailable ?? MAX_INT32, replicas, true);

  let newCount = 0;
  let oldCount = 0;
  let totalUnavailable = 0;
  let toDeleteNew = 0;
  let toDeleteOld = 0;
  for (const pod of pods) {
    const isNew = isAtRevision(pod, updateRevision);
    if (isNew) newCount++;
    else oldCount++;
    if (isSpecifiedDelete(spec, pod)) {
      if (isNew) toDeleteNew++;
      else toDeleteOld++;
    } else if (!available(pod, spec.minReadySeconds)) totalUnavailable++;
  }
  // Without the rollback gate pods only ever move to the update revision.
  const updateOldDiff = Math.max(oldCount - partition, 0);
  const updateNewDiff = Math.min(newCount - (replicas - partition), 0);

  let useSurge = 0;
  let useSurgeOldRevision = 0;
  if (maxSurge > 0) {
    let scaleSurge = 0;
    let scaleOldRevisionSurge = 0;
    const toDelete = toDeleteNew + toDeleteOld;
    if (toDelete > 0) {
      scaleSurge = Math.min(Math.max(totalUnavailable + toDelete - maxUnavailable, 0), toDelete);
      if (scaleSurge > toDeleteNew) scaleOldRevisionSurge = scaleSurge - toDeleteNew;
    }
    // Surge for an update needs old pods above the partition and new ones missing below replicas − P;
    // pods only move to the update revision, so none of it is old-revision surge.
    const updateSurge = updateOldDiff > 0 && updateNewDiff < 0 ? Math.min(updateOldDiff, -updateNewDiff) : 0;
    // A round scales or updates, never both: the larger need gets the surge.
    if (scaleSurge >= updateSurge) {
      useSurge = Math.min(maxSurge, scaleSurge);
      useSurgeOldRevision = Math.min(useSurge, scaleOldRevisionSurge);
    } else {
      useSurge = Math.min(maxSurge, updateSurge);
    }
  }

  const expectedTotal = replicas + useSurge;
  const expectedOld = partition + useSurgeOldRevision;
  const d: CloneSetDiffs = {
    scaleUpNum: 0,
    scaleUpNumOldRevision: 0,
    scaleDownNum: 0,
    scaleDownNumOldRevision: 0,
    scaleUpLimit: 0,
    deleteReadyLimit: 0,
    useSurge,
    useSurgeOldRevision,
    updateNum: 0,
    updateMaxUnavailable: 0,
  };
  if (expectedTotal - pods.length > 0) {
    d.scaleUpNum = expectedTotal - pods.length;
    d.scaleUpNumOldRevision = Math.max(expectedOld - oldCount, 0);
    d.scaleUpLimit = Math.min(d.scaleUpNum, Math.max(scaleMaxUnavailable - totalUnavailable, 0));
  }
  const down = pods.length - toDeleteOld - toDeleteNew - expectedTotal;
  if (down > 0) {
    d.scaleDownNum = down;
    d.scaleDownNumOldRevision = Math.max(oldCount - toDeleteOld - expectedOld, 0);
  }
  if (toDeleteNew > 0 || toDeleteOld > 0 || d.scaleDownNum > 0) {
    d.deleteReadyLimit = Math.max(maxUnavailable + (pods.length - replicas) - totalUnavailable, 0);
  }
  d.updateNum = Math.abs(updateOldDiff) <= Math.abs(updateNewDiff) ? updateOldDiff : -updateNewDiff;
  if (d.updateNum !== 0) d.updateMaxUnavailable = maxUnavailable + pods.length - replicas;
  return d;
}

export type ScalePlan =
  /** Create `total` pods, the first `current` of them (at most) at the current revision; `wanted` > total when limited. */
  | { kind: 'create'; total: number; current: number; wanted: number }
  | { kind: 'delete'; pods: Pod[]; reason: 'specified' | 'scale-in' }
  /** Scale-in waits for the pods specified to delete to go first. */
  | { kind: 'wait' }
  | { kind: 'none' };

/** Ready pods pass only while the limit lasts (`deleteReadyLimit`); pods not ready always pass. */
function withinReadyLimit(candidates: readonly Pod[], limit: number, available: AvailableCheck): Pod[] {
  let left = limit;
  const out: Pod[] = [];
  for (const pod of candidates) {
    if (!available(pod, 0)) out.push(pod);
    else if (left > 0) {
      out.push(pod);
      left--;
    }
  }
  return out;
}

/** choosePodsToDelete: the old revision's share from the old pods, the rest from the new, each ranked. */
function choosePodsToDelete(total: number, oldShare: number, oldPods: readonly Pod[], newPods: readonly Pod[], minReadySeconds: number, now: number): Pod[] {
  const choose = (group: readonly Pod[], n: number): Pod[] => (n >= group.length ? [...group] : rankCloneSetPods(group, minReadySeconds, now).slice(0, n));
  if (oldShare >= total) return choose(oldPods, total);
  if (oldShare > 0) return [...choose(oldPods, oldShare), ...choose(newPods, total - oldShare)];
  return choose(newPods, total);
}

/** Scale: what this round creates or deletes. `pods` are the CloneSet's active pods, in a stable order. */
export function planScale(spec: CloneSetSpecView, pods: readonly Pod[], updateRevision: string, now: number, available: AvailableCheck = availabilityAt(now)): ScalePlan {
  const specified = pods.filter((p) => isSpecifiedDelete(spec, p));
  const d = calculateDiffs(spec, pods, updateRevision, available);
  if (d.scaleUpNum > 0) return { kind: 'create', total: d.scaleUpLimit, current: d.scaleUpNumOldRevision, wanted: d.scaleUpNum };
  if (specified.length > 0) {
    const victims = withinReadyLimit(specified, d.deleteReadyLimit, available);
    if (victims.length > 0) return { kind: 'delete', pods: victims, reason: 'specified' };
  }
  if (d.scaleDownNum > 0) {
    if (specified.length > 0) return { kind: 'wait' };
    const oldPods = pods.filter((p) => !isAtRevision(p, updateRevision));
    const newPods = pods.filter((p) => isAtRevision(p, updateRevision));
    const chosen = choosePodsToDelete(d.scaleDownNum, d.scaleDownNumOldRevision, oldPods, newPods, spec.minReadySeconds, now);
    const victims = withinReadyLimit(chosen, d.deleteReadyLimit, available);
    return victims.length > 0 ? { kind: 'delete', pods: victims, reason: 'scale-in' } : { kind: 'none' };
  }
  return { kind: 'none' };
}

/** Update: the pods to recreate at the update revision this round (to be marked specified to delete). */
export function planUpdate(spec: CloneSetSpecView, pods: readonly Pod[], updateRevision: string, now: number, available: AvailableCheck = availabilityAt(now)): Pod[] {
  if (spec.paused) return [];
  const d = calculateDiffs(spec, pods, updateRevision, available);
  if (d.updateNum <= 0) return [];
  const waiting = pods.filter((p) => !isAtRevision(p, updateRevision)).sort(compareActivePods).slice(0, d.updateNum);
  let unavailable = 0;
  let targetUnavailable = 0;
  for (const p of pods) {
    if (available(p, spec.minReadySeconds)) continue;
    unavailable++;
    if (isAtRevision(p, updateRevision)) targetUnavailable++;
  }
  const chosen: Pod[] = [];
  for (const pod of waiting) {
    // Unavailable pods at the update revision (counting the ones chosen now) stay under the limit…
    if (targetUnavailable + chosen.length >= d.updateMaxUnavailable) break;
    // …and so do unavailable pods overall; recreating a pod that is already unavailable adds none.
    if (available(pod, spec.minReadySeconds)) {
      if (unavailable >= d.updateMaxUnavailable) break;
      unavailable++;
    }
    chosen.push(pod);
  }
  return chosen;
}
