/**
 * Deployment status and conditions (k8s.io/kubernetes pkg/controller/deployment
 * sync.go calculateStatus, progress.go, util's condition helpers), pure:
 * - `calculateStatus`: counts summed over the ReplicaSets (replicas, updated,
 *   ready, available from their status; unavailable from spec minus available)
 *   and the `Available` condition (MinimumReplicasAvailable when at least
 *   replicas − maxUnavailable are available);
 * - `rolloutStatus`: the `Progressing` condition of syncRolloutStatus —
 *   NewReplicaSetAvailable when complete, ReplicaSetUpdated (only
 *   lastUpdateTime moves) while progress is seen, ProgressDeadlineExceeded
 *   once lastUpdateTime + progressDeadlineSeconds has passed — plus the copy
 *   of a ReplicaSet's ReplicaFailure, and when to look again (requeueStuck);
 * - `setCondition` keeps lastTransitionTime while the status does not change
 *   and does nothing when status and reason are the same.
 * Time is the `now` argument (epoch ms); stored times have second precision.
 */
import { deepEqual } from '../../k8s/json.ts';
import { asArray, asNumber, asRecord } from '../../k8s/raw-json.ts';
import { formatTime, parseTime } from '../../k8s/time.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { maxUnavailable, progressDeadlineSeconds, sumSpecReplicas, sumStatus } from './deployment-util.ts';
import { specReplicas } from './replicaset-status.ts';

export const AVAILABLE = 'Available';
export const PROGRESSING = 'Progressing';
export const REPLICA_FAILURE = 'ReplicaFailure';

export const REASON = Object.freeze({
  minimumReplicasAvailable: 'MinimumReplicasAvailable',
  minimumReplicasUnavailable: 'MinimumReplicasUnavailable',
  replicaSetUpdated: 'ReplicaSetUpdated',
  failedRSCreate: 'ReplicaSetCreateError',
  newReplicaSetCreated: 'NewReplicaSetCreated',
  foundNewReplicaSet: 'FoundNewReplicaSet',
  newReplicaSetAvailable: 'NewReplicaSetAvailable',
  timedOut: 'ProgressDeadlineExceeded',
  paused: 'DeploymentPaused',
  resumed: 'DeploymentResumed',
});

export interface DeploymentCondition {
  type: string;
  status: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface DeploymentStatus {
  observedGeneration?: number;
  replicas?: number;
  updatedReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  unavailableReplicas?: number;
  conditions?: DeploymentCondition[];
  collisionCount?: number;
  [key: string]: unknown;
}

/** The Deployment's status as stored, tolerating malformed fields (never shared with the input). */
export function statusOf(d: KubeObject): DeploymentStatus {
  const s = structuredClone(asRecord(d['status']) ?? {}) as DeploymentStatus;
  const conditions = asArray(s.conditions);
  if (conditions === undefined) delete s.conditions;
  else s.conditions = conditions.filter((c): c is DeploymentCondition => asRecord(c) !== undefined);
  return s;
}

export function newCondition(type: string, status: string, reason: string, message: string, now: number): DeploymentCondition {
  const t = formatTime(now);
  return { type, status, lastUpdateTime: t, lastTransitionTime: t, reason, message };
}

export function getCondition(status: DeploymentStatus, type: string): DeploymentCondition | undefined {
  return status.conditions?.find((c) => c.type === type);
}

export function setCondition(status: DeploymentStatus, condition: DeploymentCondition): void {
  const current = getCondition(status, condition.type);
  if (current !== undefined && current.status === condition.status && current.reason === condition.reason) return;
  const next = { ...condition };
  if (current !== undefined && current.status === condition.status && current.lastTransitionTime !== undefined) next.lastTransitionTime = current.lastTransitionTime;
  status.conditions = [...(status.conditions ?? []).filter((c) => c.type !== condition.type), next];
}

export function removeCondition(status: DeploymentStatus, type: string): void {
  if (status.conditions !== undefined) status.conditions = status.conditions.filter((c) => c.type !== type);
}

/** calculateStatus: the counts of all sets and the Available condition; other conditions carried over. */
export function calculateStatus(allRSs: readonly (KubeObject | undefined)[], newRS: KubeObject | undefined, d: KubeObject, now: number): DeploymentStatus {
  const current = statusOf(d);
  const available = sumStatus(allRSs, 'availableReplicas');
  const status: DeploymentStatus = {
    observedGeneration: d.metadata?.generation ?? 0,
    replicas: sumStatus(allRSs, 'replicas'),
    updatedReplicas: sumStatus([newRS], 'replicas'),
    readyReplicas: sumStatus(allRSs, 'readyReplicas'),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, sumSpecReplicas(allRSs) - available),
  };
  if (current.collisionCount !== undefined) status.collisionCount = current.collisionCount;
  if (current.conditions !== undefined) status.conditions = current.conditions.map((c) => ({ ...c }));
  if (available >= specReplicas(d) - maxUnavailable(d)) {
    setCondition(status, newCondition(AVAILABLE, 'True', REASON.minimumReplicasAvailable, 'Deployment has minimum availability.', now));
  } else {
    setCondition(status, newCondition(AVAILABLE, 'False', REASON.minimumReplicasUnavailable, 'Deployment does not have minimum availability.', now));
  }
  return status;
}

/** DeploymentComplete: every replica updated and available, and the latest spec observed. */
export function deploymentComplete(d: KubeObject, status: DeploymentStatus): boolean {
  const replicas = specReplicas(d);
  return (status.updatedReplicas ?? 0) === replicas && (status.replicas ?? 0) === replicas && (status.availableReplicas ?? 0) === replicas && (status.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0);
}

/** DeploymentProgressing: more updated, ready or available replicas, or fewer old ones, than the stored status says. */
export function deploymentProgressing(d: KubeObject, next: DeploymentStatus): boolean {
  const old = statusOf(d);
  const oldOld = (old.replicas ?? 0) - (old.updatedReplicas ?? 0);
  const newOld = (next.replicas ?? 0) - (next.updatedReplicas ?? 0);
  return (
    (next.updatedReplicas ?? 0) > (old.updatedReplicas ?? 0) ||
    newOld < oldOld ||
    (next.readyReplicas ?? 0) > (old.readyReplicas ?? 0) ||
    (next.availableReplicas ?? 0) > (old.availableReplicas ?? 0)
  );
}

/** DeploymentTimedOut: the Progressing condition has not been updated for longer than the deadline. */
export function deploymentTimedOut(d: KubeObject, status: DeploymentStatus, now: number): boolean {
  const deadline = progressDeadlineSeconds(d);
  if (deadline === undefined) return false;
  const cond = getCondition(status, PROGRESSING);
  if (cond === undefined || cond.reason === REASON.newReplicaSetAvailable) return false;
  if (cond.reason === REASON.timedOut) return true;
  const from = parseTime(cond.lastUpdateTime);
  return from !== undefined && from + deadline * 1000 < now;
}

/** ReplicaFailure conditions of the new set first, else of any set, as Deployment conditions. */
function replicaFailures(allRSs: readonly (KubeObject | undefined)[], newRS: KubeObject | undefined): DeploymentCondition[] {
  const of = (rs: KubeObject | undefined): DeploymentCondition[] =>
    (asArray(asRecord(rs?.['status'])?.['conditions']) ?? [])
      .map((c) => asRecord(c))
      .filter((c): c is Record<string, unknown> => c !== undefined && c['type'] === REPLICA_FAILURE)
      .map((c) => {
        const t = typeof c['lastTransitionTime'] === 'string' ? c['lastTransitionTime'] : undefined;
        const cond: DeploymentCondition = { type: REPLICA_FAILURE, status: String(c['status'] ?? ''), reason: String(c['reason'] ?? ''), message: String(c['message'] ?? '') };
        if (t !== undefined) {
          cond.lastTransitionTime = t;
          cond.lastUpdateTime = t;
        }
        return cond;
      });
  const fromNew = of(newRS);
  return fromNew.length > 0 ? fromNew : allRSs.flatMap(of);
}

export interface RolloutStatus {
  status: DeploymentStatus;
  /** Nothing differs from the stored status: no write. */
  unchanged: boolean;
  /** When unchanged and a progress check is due: 'now' (rate-limited) or after this many ms. */
  requeue?: 'now' | number;
}

/** syncRolloutStatus's decision: the status to write and, when none, when to check progress again. */
export function rolloutStatus(allRSs: readonly (KubeObject | undefined)[], newRS: KubeObject | undefined, d: KubeObject, now: number): RolloutStatus {
  const status = calculateStatus(allRSs, newRS, d, now);
  const deadline = progressDeadlineSeconds(d);
  if (deadline === undefined) removeCondition(status, PROGRESSING);
  const currentCond = getCondition(statusOf(d), PROGRESSING);
  const name = d.metadata?.name ?? '';
  const what = newRS !== undefined ? `ReplicaSet "${newRS.metadata?.name ?? ''}"` : `Deployment "${name}"`;
  const complete = (status.replicas ?? 0) === (status.updatedReplicas ?? 0) && currentCond?.reason === REASON.newReplicaSetAvailable;
  if (deadline !== undefined && !complete) {
    if (deploymentComplete(d, status)) {
      setCondition(status, newCondition(PROGRESSING, 'True', REASON.newReplicaSetAvailable, `${what} has successfully progressed.`, now));
    } else if (deploymentProgressing(d, status)) {
      const cond = newCondition(PROGRESSING, 'True', REASON.replicaSetUpdated, `${what} is progressing.`, now);
      if (currentCond !== undefined) {
        if (currentCond.status === 'True' && currentCond.lastTransitionTime !== undefined) cond.lastTransitionTime = currentCond.lastTransitionTime;
        removeCondition(status, PROGRESSING);
      }
      setCondition(status, cond);
    } else if (deploymentTimedOut(d, status, now)) {
      setCondition(status, newCondition(PROGRESSING, 'False', REASON.timedOut, `${what} has timed out progressing.`, now));
    }
  }
  const failures = replicaFailures(allRSs, newRS);
  if (failures[0] !== undefined) setCondition(status, failures[0]);
  else removeCondition(status, REPLICA_FAILURE);
  if (!deepEqual(wireStatus(statusOf(d)), wireStatus(status))) return { status, unchanged: false };
  const requeue = stuckRequeue(d, status, now);
  return requeue === undefined ? { status, unchanged: true } : { status, unchanged: true, requeue };
}

/** requeueStuckDeployment: when a rollout without progress should be checked against its deadline. */
function stuckRequeue(d: KubeObject, status: DeploymentStatus, now: number): 'now' | number | undefined {
  const deadline = progressDeadlineSeconds(d);
  const cond = getCondition(statusOf(d), PROGRESSING);
  if (deadline === undefined || cond === undefined) return undefined;
  if (deploymentComplete(d, status) || cond.reason === REASON.timedOut) return undefined;
  const lastUpdate = parseTime(cond.lastUpdateTime) ?? now;
  const after = lastUpdate + deadline * 1000 - now;
  // A second on top so the check does not land just before the deadline passes.
  return after < 1000 ? 'now' : after + 1000;
}

/** The status as Go serializes it: zero counters and empty conditions omitted (collisionCount kept when set). */
export function wireStatus(status: DeploymentStatus): DeploymentStatus {
  const out: DeploymentStatus = { ...status };
  for (const k of ['observedGeneration', 'replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas', 'terminatingReplicas'] as const) {
    const v = asNumber(out[k]);
    if (v === 0 || v === undefined) delete out[k];
  }
  if (out.conditions !== undefined && out.conditions.length === 0) delete out.conditions;
  return out;
}
