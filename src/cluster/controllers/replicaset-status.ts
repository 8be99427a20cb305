/**
 * What the ReplicaSet controller writes to `status` (k8s.io/kubernetes
 * pkg/controller/replicaset/replica_set_utils.go), as pure functions of the
 * ReplicaSet, its active pods, the outcome of the last create/delete round
 * and the time:
 * - replicas: active pods it owns; fullyLabeledReplicas: those carrying every
 *   template label; readyReplicas; availableReplicas: ready for at least
 *   minReadySeconds (`isPodAvailable`);
 * - the `ReplicaFailure` condition: set (FailedCreate / FailedDelete) when the
 *   round failed and no such condition exists yet, removed after a clean round;
 * - observedGeneration is stamped by the caller when it writes.
 * `statusNeedsWrite` is upstream's "nothing changed" short-cut.
 */
import { deepEqual } from '../../k8s/json.ts';
import { getPodCondition, isPodReady } from '../../k8s/pod.ts';
import { asArray, asNumber, asRecord } from '../../k8s/raw-json.ts';
import { selectorFromSet } from '../../k8s/label-selector.ts';
import { formatTime, parseTime } from '../../k8s/time.ts';
import type { KubeObject, Pod } from '../../k8s/types.ts';

export const REPLICA_FAILURE = 'ReplicaFailure';

export interface ReplicaSetCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface ReplicaSetStatus {
  replicas: number;
  fullyLabeledReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  observedGeneration?: number;
  conditions?: ReplicaSetCondition[];
  [key: string]: unknown;
}

/** `spec.replicas` (defaulted to 1 by the API server; a malformed value reads as 0). */
export function specReplicas(obj: KubeObject): number {
  const n = asNumber(asRecord(obj['spec'])?.['replicas']);
  return n !== undefined && Number.isInteger(n) && n >= 0 ? n : 0;
}

export function minReadySeconds(obj: KubeObject): number {
  const n = asNumber(asRecord(obj['spec'])?.['minReadySeconds']);
  return n !== undefined && n > 0 ? n : 0;
}

/** podutil.IsPodAvailable: ready, and ready for longer than minReadySeconds (strictly) at `now`. */
export function isPodAvailable(pod: Pod, minReady: number, now: number): boolean {
  if (!isPodReady(pod)) return false;
  if (minReady <= 0) return true;
  const since = parseTime(getPodCondition(pod.status, 'Ready')?.lastTransitionTime);
  return since !== undefined && since + minReady * 1000 < now;
}

/** The status as the API server holds it, tolerating missing or malformed fields. */
export function currentStatus(rs: KubeObject): ReplicaSetStatus {
  const s = asRecord(rs['status']) ?? {};
  const status: ReplicaSetStatus = { ...s, replicas: asNumber(s['replicas']) ?? 0 };
  const conditions = asArray(s['conditions']);
  if (conditions !== undefined) status.conditions = conditions.filter((c): c is ReplicaSetCondition => asRecord(c) !== undefined) ;
  else delete status.conditions;
  return status;
}

export function getCondition(status: ReplicaSetStatus, type: string): ReplicaSetCondition | undefined {
  return status.conditions?.find((c) => c.type === type);
}

/** SetCondition: no-op when status and reason are unchanged; otherwise replaces the condition of that type. */
export function setCondition(status: ReplicaSetStatus, condition: ReplicaSetCondition): void {
  const current = getCondition(status, condition.type);
  if (current !== undefined && current.status === condition.status && current.reason === condition.reason) return;
  status.conditions = [...(status.conditions ?? []).filter((c) => c.type !== condition.type), condition];
}

export function removeCondition(status: ReplicaSetStatus, type: string): void {
  if (status.conditions === undefined) return;
  status.conditions = status.conditions.filter((c) => c.type !== type);
}

export interface RoundOutcome {
  /** The create/delete round failed with this message. */
  error?: string;
}

/** calculateStatus: the status the controller wants, from its active, claimed pods. */
export function calculateStatus(rs: KubeObject, pods: readonly Pod[], outcome: RoundOutcome, now: number): ReplicaSetStatus {
  const status = currentStatus(rs);
  const templateLabels = asRecord(asRecord(asRecord(rs['spec'])?.['template'])?.['metadata'])?.['labels'];
  const templateSelector = selectorFromSet(asRecord(templateLabels) as Record<string, string> | undefined);
  const minReady = minReadySeconds(rs);
  let fullyLabeled = 0;
  let ready = 0;
  let available = 0;
  for (const pod of pods) {
    if (templateSelector.matches(pod.metadata?.labels)) fullyLabeled++;
    if (isPodReady(pod)) {
      ready++;
      if (isPodAvailable(pod, minReady, now)) available++;
    }
  }
  const failure = getCondition(status, REPLICA_FAILURE);
  if (outcome.error !== undefined && failure === undefined) {
    const diff = pods.length - specReplicas(rs);
    const reason = diff < 0 ? 'FailedCreate' : diff > 0 ? 'FailedDelete' : '';
    setCondition(status, { type: REPLICA_FAILURE, status: 'True', lastTransitionTime: formatTime(now), reason, message: outcome.error });
  } else if (outcome.error === undefined && failure !== undefined) {
    removeCondition(status, REPLICA_FAILURE);
  }
  status.replicas = pods.length;
  status.fullyLabeledReplicas = fullyLabeled;
  status.readyReplicas = ready;
  status.availableReplicas = available;
  return status;
}

/** False when the counts, conditions and observedGeneration already are what `next` says. */
export function statusNeedsWrite(rs: KubeObject, next: ReplicaSetStatus): boolean {
  const cur = currentStatus(rs);
  const generation = rs.metadata?.generation ?? 0;
  return !(
    cur.replicas === next.replicas &&
    (cur.fullyLabeledReplicas ?? 0) === (next.fullyLabeledReplicas ?? 0) &&
    (cur.readyReplicas ?? 0) === (next.readyReplicas ?? 0) &&
    (cur.availableReplicas ?? 0) === (next.availableReplicas ?? 0) &&
    (cur.observedGeneration ?? 0) === generation &&
    deepEqual(cur.conditions ?? [], next.conditions ?? [])
  );
}
