/**
 * Adaptive rescheduling and the `Schedulable` subset condition (spec §4.6,
 * DECISIONS D8 reasons, D10 configurable recovery window).
 *
 * A pod that has sat Pending and unschedulable for longer than
 * `rescheduleCriticalSeconds` (counted from its creation) marks its subset
 * `Schedulable=False/PodUnschedulable` and is deleted, so its replacement is
 * admitted into a later subset. After the recovery window (300 s by default)
 * without new failures the subset turns `True/Sufficient` again.
 *
 * Start at `applySchedulableConditions` (whole status). Invariants:
 * - the last subset is never rescheduled and always reads True;
 * - with rescheduling off (crit ≤ 0) no subset carries the condition;
 * - only the top-level statuses produce pods to delete; the versioned lists get
 *   the same conditions, and their failed pods are discarded;
 * - inputs are never mutated.
 */
import {
  DEFAULT_UNSCHEDULABLE_RECOVERY_SECONDS,
  REASON_POD_UNSCHEDULABLE,
  REASON_SUFFICIENT,
  SUBSET_SCHEDULABLE,
} from '../api/keys.ts';
import type { Subset, SubsetCondition, SubsetStatus, WorkloadSpread, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { deepClone } from '../k8s/json.ts';
import { formatTime, parseTime } from '../k8s/time.ts';
import type { Pod } from '../k8s/types.ts';
import { recoverSchedulableEvent, workloadSpreadRef } from './events.ts';
import type { EngineEvent, WorkloadSpreadRef } from './events.ts';
import { soonerRequeue, statusesByName } from './subset-status.ts';

/** `rescheduleCriticalSeconds` when the strategy is Adaptive and sets it; else 0 (off). */
export function rescheduleCriticalSeconds(ws: Pick<WorkloadSpread, 'spec'>): number {
  const strategy = ws.spec.scheduleStrategy;
  if (strategy?.type !== 'Adaptive') return 0;
  const seconds = strategy.adaptive?.rescheduleCriticalSeconds;
  return typeof seconds === 'number' && Number.isFinite(seconds) ? seconds : 0;
}

export interface ScheduleFailedCheck {
  failed: boolean;
  /** Set when the pod is unschedulable but not yet past the critical time. */
  requeueAfterMs?: number;
}

/**
 * Whether a pod is schedule-failed: Pending, unbound, not deleting,
 * `PodScheduled=False/Unschedulable`, and created more than `criticalSeconds`
 * before `now` (strictly).
 */
export function podScheduleFailed(pod: Pod, criticalSeconds: number, now: number): ScheduleFailedCheck {
  if (pod.metadata?.deletionTimestamp) return { failed: false };
  if (pod.status?.phase !== 'Pending') return { failed: false };
  if (pod.spec?.nodeName) return { failed: false };
  const conditions = Array.isArray(pod.status?.conditions) ? pod.status.conditions : [];
  const unschedulable = conditions.some(
    (c) => c !== null && typeof c === 'object' && c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable',
  );
  if (!unschedulable) return { failed: false };
  const created = parseTime(pod.metadata?.creationTimestamp) ?? 0;
  const deadline = created + criticalSeconds * 1000;
  if (deadline < now) return { failed: true };
  return { failed: false, requeueAfterMs: deadline - now };
}

function schedulableCondition(conditions: unknown): SubsetCondition | undefined {
  if (!Array.isArray(conditions)) return undefined;
  const found = (conditions as unknown[]).find(
    (c) => c !== null && typeof c === 'object' && (c as { type?: unknown }).type === SUBSET_SCHEDULABLE,
  );
  return found === undefined ? undefined : (deepClone(found) as SubsetCondition);
}

function newCondition(status: 'True' | 'False', now: number): SubsetCondition {
  return {
    type: SUBSET_SCHEDULABLE,
    status,
    reason: status === 'True' ? REASON_SUFFICIENT : REASON_POD_UNSCHEDULABLE,
    lastTransitionTime: formatTime(now),
  };
}

/**
 * The condition-setting rule: same status and reason → unchanged; same status,
 * other reason → replaced, keeping the old lastTransitionTime; otherwise
 * replaced as given. Returns a new status.
 */
export function setSubsetCondition(status: SubsetStatus, condition: SubsetCondition): SubsetStatus {
  const conditions = Array.isArray(status.conditions) ? status.conditions : [];
  const current = conditions.find((c) => c.type === condition.type);
  if (current !== undefined && current.status === condition.status && current.reason === condition.reason) {
    return status;
  }
  const next: SubsetCondition = { ...condition };
  if (current !== undefined && current.status === condition.status) {
    if (current.lastTransitionTime === undefined) delete next.lastTransitionTime;
    else next.lastTransitionTime = current.lastTransitionTime;
  }
  return { ...status, conditions: [...conditions.filter((c) => c.type !== condition.type), next] };
}

/** Removes a condition type; the `conditions` field disappears when nothing is left. */
export function removeSubsetCondition(status: SubsetStatus, type: string): SubsetStatus {
  if (!Array.isArray(status.conditions)) return status;
  const rest = status.conditions.filter((c) => c.type !== type);
  const { conditions: _dropped, ...withoutConditions } = status;
  return rest.length > 0 ? { ...withoutConditions, conditions: rest } : withoutConditions;
}

export interface SubsetConditionsInput {
  ws: WorkloadSpreadRef;
  subsets: readonly Subset[];
  /** Freshly computed statuses, in spec order (as `computeSubsetStatuses` returns them). */
  statuses: readonly SubsetStatus[];
  /** The previous list these statuses replace (matched by name). */
  old: readonly SubsetStatus[] | undefined;
  podsOf: (subset: string) => readonly Pod[];
  criticalSeconds: number;
  now: number;
  recoverySeconds?: number;
}

export interface SubsetConditionsResult {
  statuses: SubsetStatus[];
  /** Schedule-failed pods per subset, in pod order. */
  scheduleFailed: { subset: string; pod: Pod }[];
  events: EngineEvent[];
  requeueAfterMs?: number;
}

/** spec §4.6 over one list of subset statuses. */
export function applySubsetConditions(input: SubsetConditionsInput): SubsetConditionsResult {
  const { ws, statuses, criticalSeconds: crit, now } = input;
  const windowMs = (input.recoverySeconds ?? DEFAULT_UNSCHEDULABLE_RECOVERY_SECONDS) * 1000;
  const oldByName = statusesByName(input.old);
  const result: SubsetConditionsResult = { statuses: [], scheduleFailed: [], events: [] };
  let requeue: number | undefined;

  statuses.forEach((computed, i) => {
    if (crit <= 0) {
      result.statuses.push(removeSubsetCondition(computed, SUBSET_SCHEDULABLE));
      return;
    }
    const oldCondition = schedulableCondition(oldByName.get(computed.name)?.conditions);
    let status = removeSubsetCondition(computed, SUBSET_SCHEDULABLE);
    if (i === statuses.length - 1) {
      if (oldCondition !== undefined) status = setSubsetCondition(status, oldCondition);
      result.statuses.push(setSubsetCondition(status, newCondition('True', now)));
      return;
    }

    const failed: Pod[] = [];
    for (const pod of input.podsOf(computed.name)) {
      const check = podScheduleFailed(pod, crit, now);
      if (check.failed) failed.push(pod);
      requeue = soonerRequeue(requeue, check.requeueAfterMs);
    }
    for (const pod of failed) result.scheduleFailed.push({ subset: computed.name, pod });

    if (oldCondition === undefined) {
      result.statuses.push(setSubsetCondition(status, newCondition(failed.length > 0 ? 'False' : 'True', now)));
      return;
    }
    status = setSubsetCondition(status, oldCondition);
    if (failed.length > 0) {
      status = setSubsetCondition(status, newCondition('False', now));
    } else if (oldCondition.status === 'False') {
      // A missing or unreadable transition time counts as long ago: recover now.
      const since = parseTime(oldCondition.lastTransitionTime) ?? Number.NEGATIVE_INFINITY;
      const recoverAt = since + windowMs;
      if (recoverAt < now) {
        result.events.push(recoverSchedulableEvent(ws, computed.name));
        status = setSubsetCondition(status, newCondition('True', now));
      } else {
        requeue = soonerRequeue(requeue, recoverAt - now);
      }
    }
    result.statuses.push(status);
  });

  if (requeue !== undefined) result.requeueAfterMs = requeue;
  return result;
}

export interface SchedulableConditionsInput {
  ws: WorkloadSpread;
  /** The status from `computeWorkloadSpreadStatus`. */
  status: WorkloadSpreadStatus;
  bySubset: ReadonlyMap<string, readonly Pod[]>;
  byVersion: ReadonlyMap<string, ReadonlyMap<string, readonly Pod[]>>;
  now: number;
  /** The unschedulable recovery window (D10); default 300. */
  recoverySeconds?: number;
}

export interface SchedulableConditionsResult {
  status: WorkloadSpreadStatus;
  /** The top-level schedule-failed pods with their subsets: deleted after the status write (DeletePodFailed when that fails). */
  scheduleFailed: { subset: string; pod: Pod }[];
  events: EngineEvent[];
  requeueAfterMs?: number;
}

/** spec §4.6 over the whole status: top level, then each version. */
export function applySchedulableConditions(input: SchedulableConditionsInput): SchedulableConditionsResult {
  const { ws, status, now } = input;
  const ref = workloadSpreadRef(ws);
  const subsets = ws.spec.subsets;
  const crit = rescheduleCriticalSeconds(ws);
  const oldStatus: Partial<WorkloadSpreadStatus> =
    ws.status !== null && typeof ws.status === 'object' ? ws.status : {};
  const common = { ws: ref, subsets, criticalSeconds: crit, now };
  const withWindow = input.recoverySeconds === undefined ? common : { ...common, recoverySeconds: input.recoverySeconds };
  const noPods: readonly Pod[] = [];

  const top = applySubsetConditions({
    ...withWindow,
    statuses: status.subsetStatuses ?? [],
    old: oldStatus.subsetStatuses,
    podsOf: (name) => input.bySubset.get(name) ?? noPods,
  });
  const events = [...top.events];
  let requeue = top.requeueAfterMs;

  const next: WorkloadSpreadStatus = { ...status };
  if (status.subsetStatuses !== undefined) next.subsetStatuses = top.statuses;
  if (status.versionedSubsetStatuses !== undefined) {
    const oldVersioned =
      oldStatus.versionedSubsetStatuses !== null && typeof oldStatus.versionedSubsetStatuses === 'object'
        ? oldStatus.versionedSubsetStatuses
        : {};
    const versioned: Record<string, SubsetStatus[]> = {};
    for (const [version, list] of Object.entries(status.versionedSubsetStatuses)) {
      const groups = input.byVersion.get(version);
      const r = applySubsetConditions({
        ...withWindow,
        statuses: list,
        old: oldVersioned[version],
        podsOf: (name) => groups?.get(name) ?? noPods,
      });
      versioned[version] = r.statuses;
      events.push(...r.events);
      requeue = soonerRequeue(requeue, r.requeueAfterMs);
    }
    next.versionedSubsetStatuses = versioned;
  }

  const result: SchedulableConditionsResult = {
    status: next,
    scheduleFailed: top.scheduleFailed,
    events,
  };
  if (requeue !== undefined) result.requeueAfterMs = requeue;
  return result;
}
