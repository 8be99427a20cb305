/**
 * The pure half of the Job controller (k8s.io/kubernetes pkg/controller/job):
 * how a Job's spec is read, its status shape and conditions, completion
 * indexes and their interval strings, the pod-failure back-off, and the
 * per-pod rules (finished, failed, finish time, which active pods to remove).
 * No I/O; time is a parameter.
 *
 * Invariants:
 * - a nil `parallelism` counts as 1, a nil `backoffLimit` as 6 (the API defaults);
 * - a Job is finished once it has a `Complete` or `Failed` condition that is True;
 * - completion indexes are kept as sorted, merged intervals and printed as
 *   upstream prints them ("0,2-4");
 * - the back-off before replacing failed pods is 10 s doubling per failure
 *   since the last success, capped at 10 minutes, counted from the last failure.
 * Start at `jobView`, `readStatus` / `wireStatus` and `BackoffRecord`.
 */
import { compareActivePods } from '../../k8s/pod-ranking.ts';
import { podPhase } from '../../k8s/pod.ts';
import { asArray, asNumber, asRecord, asString } from '../../k8s/raw-json.ts';
import { formatTime, parseTime } from '../../k8s/time.ts';
import type { KubeObject, Pod } from '../../k8s/types.ts';

export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';
export const JOB_COMPLETION_INDEX = 'batch.kubernetes.io/job-completion-index';
export const JOB_COMPLETION_INDEX_ENV = 'JOB_COMPLETION_INDEX';
export const JOB_CONTROLLER_MANAGED_BY = 'kubernetes.io/job-controller';
export const DEFAULT_POD_FAILURE_BACKOFF_MS = 10_000;
export const MAX_POD_FAILURE_BACKOFF_MS = 10 * 60_000;
/** Bounds `status.uncountedTerminatedPods` and the work of one sync, as upstream. */
export const MAX_UNCOUNTED_PODS = 500;
export const MAX_POD_CREATE_DELETE_PER_SYNC = 500;
export const UNKNOWN_INDEX = -1;

// ---- spec ----

export interface JobView {
  parallelism: number;
  completions: number | undefined;
  backoffLimit: number;
  activeDeadlineSeconds: number | undefined;
  ttlSecondsAfterFinished: number | undefined;
  indexed: boolean;
  /** A completion mode this controller does not know: the Job is left alone. */
  unknownMode: boolean;
  suspended: boolean;
  /** podReplacementPolicy Failed: terminating pods are not replaced until they are gone. */
  onlyReplaceFailed: boolean;
  restartPolicy: string;
  /** `spec.managedBy` naming another controller. */
  managedElsewhere: boolean;
}

const nonNegative = (v: unknown): number | undefined => {
  const n = asNumber(v);
  return n === undefined ? undefined : Math.max(0, Math.trunc(n));
};

export function jobView(job: KubeObject): JobView {
  const spec = asRecord(job['spec']) ?? {};
  const mode = asString(spec['completionMode']) ?? 'NonIndexed';
  const managedBy = asString(spec['managedBy']);
  return {
    parallelism: nonNegative(spec['parallelism']) ?? 1,
    completions: nonNegative(spec['completions']),
    backoffLimit: nonNegative(spec['backoffLimit']) ?? 6,
    activeDeadlineSeconds: nonNegative(spec['activeDeadlineSeconds']),
    ttlSecondsAfterFinished: nonNegative(spec['ttlSecondsAfterFinished']),
    indexed: mode === 'Indexed' && nonNegative(spec['completions']) !== undefined,
    unknownMode: mode !== 'NonIndexed' && mode !== 'Indexed',
    suspended: spec['suspend'] === true,
    onlyReplaceFailed: spec['podReplacementPolicy'] === 'Failed' || asRecord(spec['podFailurePolicy']) !== undefined,
    restartPolicy: asString(asRecord(asRecord(spec['template'])?.['spec'])?.['restartPolicy']) ?? '',
    managedElsewhere: managedBy !== undefined && managedBy !== JOB_CONTROLLER_MANAGED_BY,
  };
}

// ---- status ----

export interface JobCondition {
  type: string;
  status: string;
  lastProbeTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface JobStatus {
  conditions: JobCondition[];
  startTime?: string;
  completionTime?: string;
  active: number;
  succeeded: number;
  failed: number;
  terminating?: number;
  ready?: number;
  completedIndexes: string;
  uncounted: { succeeded: string[]; failed: string[] };
  /** Fields we do not manage, kept as they are. */
  rest: Record<string, unknown>;
}

const MANAGED = new Set(['conditions', 'startTime', 'completionTime', 'active', 'succeeded', 'failed', 'terminating', 'ready', 'completedIndexes', 'uncountedTerminatedPods']);

const uidList = (v: unknown): string[] => (asArray(v) ?? []).filter((x): x is string => typeof x === 'string');

export function readStatus(job: KubeObject): JobStatus {
  const s = asRecord(job['status']) ?? {};
  const uncounted = asRecord(s['uncountedTerminatedPods']) ?? {};
  const status: JobStatus = {
    conditions: (asArray(s['conditions']) ?? []).filter((c): c is JobCondition => asRecord(c) !== undefined && typeof (c as JobCondition).type === 'string').map((c) => ({ ...c })),
    active: nonNegative(s['active']) ?? 0,
    succeeded: nonNegative(s['succeeded']) ?? 0,
    failed: nonNegative(s['failed']) ?? 0,
    completedIndexes: asString(s['completedIndexes']) ?? '',
    uncounted: { succeeded: uidList(uncounted['succeeded']), failed: uidList(uncounted['failed']) },
    rest: Object.fromEntries(Object.entries(s).filter(([k]) => !MANAGED.has(k))),
  };
  const start = asString(s['startTime']);
  if (start !== undefined) status.startTime = start;
  const completion = asString(s['completionTime']);
  if (completion !== undefined) status.completionTime = completion;
  const terminating = nonNegative(s['terminating']);
  if (terminating !== undefined) status.terminating = terminating;
  const ready = nonNegative(s['ready']);
  if (ready !== undefined) status.ready = ready;
  return status;
}

/** The status as Go serializes batch/v1 JobStatus (omitempty counters, pointers present once set). */
export function wireStatus(s: JobStatus): Record<string, unknown> {
  const out: Record<string, unknown> = { ...s.rest };
  if (s.conditions.length > 0) out['conditions'] = s.conditions;
  if (s.startTime !== undefined) out['startTime'] = s.startTime;
  if (s.completionTime !== undefined) out['completionTime'] = s.completionTime;
  if (s.active !== 0) out['active'] = s.active;
  if (s.succeeded !== 0) out['succeeded'] = s.succeeded;
  if (s.failed !== 0) out['failed'] = s.failed;
  if (s.completedIndexes !== '') out['completedIndexes'] = s.completedIndexes;
  const uncounted: Record<string, unknown> = {};
  if (s.uncounted.succeeded.length > 0) uncounted['succeeded'] = s.uncounted.succeeded;
  if (s.uncounted.failed.length > 0) uncounted['failed'] = s.uncounted.failed;
  out['uncountedTerminatedPods'] = uncounted;
  if (s.terminating !== undefined) out['terminating'] = s.terminating;
  if (s.ready !== undefined) out['ready'] = s.ready;
  return out;
}

// ---- conditions ----

export function newCondition(type: string, status: string, reason: string, message: string, now: number): JobCondition {
  const t = formatTime(now);
  const c: JobCondition = { type, status, lastProbeTime: t, lastTransitionTime: t };
  if (reason !== '') c.reason = reason;
  if (message !== '') c.message = message;
  return c;
}

export function findCondition(conditions: readonly JobCondition[], type: string): JobCondition | undefined {
  return conditions.find((c) => c.type === type);
}

const isTrue = (conditions: readonly JobCondition[], type: string): boolean => findCondition(conditions, type)?.status === 'True';

/** util.IsJobFinished. */
export function isJobFinished(job: KubeObject): boolean {
  const c = readStatus(job).conditions;
  return isTrue(c, 'Complete') || isTrue(c, 'Failed');
}

/** When the Job finished (its Complete or Failed condition), for ttlSecondsAfterFinished. */
export function finishTime(job: KubeObject): number | undefined {
  const s = readStatus(job);
  for (const c of s.conditions) {
    if ((c.type === 'Complete' || c.type === 'Failed') && c.status === 'True') return parseTime(c.lastTransitionTime ?? null) ?? parseTime(s.completionTime ?? null);
  }
  return undefined;
}

/**
 * ensureJobConditionStatus: sets a condition; a new one is only added when it
 * is not False (nothing → False says nothing). Answers whether the list changed.
 */
export function ensureCondition(conditions: JobCondition[], type: string, status: string, reason: string, message: string, now: number): boolean {
  const i = conditions.findIndex((c) => c.type === type);
  const existing = conditions[i];
  if (existing !== undefined) {
    if (existing.status === status && (existing.reason ?? '') === reason && (existing.message ?? '') === message) return false;
    conditions[i] = newCondition(type, status, reason, message, now);
    return true;
  }
  if (status === 'False') return false;
  conditions.push(newCondition(type, status, reason, message, now));
  return true;
}

// ---- pods ----

export function hasTrackingFinalizer(pod: KubeObject): boolean {
  return (pod.metadata?.finalizers ?? []).includes(JOB_TRACKING_FINALIZER);
}

export function isTerminating(obj: KubeObject): boolean {
  const ts: unknown = obj.metadata?.deletionTimestamp;
  return ts !== undefined && ts !== null;
}

/** isPodFailed: Failed, or (unless only failed pods are replaced) deleted before it succeeded. */
export function isPodFailed(pod: Pod, view: JobView): boolean {
  const phase = podPhase(pod);
  if (phase === 'Failed') return true;
  if (view.onlyReplaceFailed) return false;
  return isTerminating(pod) && phase !== 'Succeeded';
}

/** controller.CountTerminatingPods: being deleted and not yet finished. */
export function isTerminatingUnfinished(pod: Pod): boolean {
  const phase = podPhase(pod);
  return isTerminating(pod) && phase !== 'Failed' && phase !== 'Succeeded';
}

export function completionIndexOf(pod: KubeObject): number {
  const raw = pod.metadata?.annotations?.[JOB_COMPLETION_INDEX] ?? pod.metadata?.labels?.[JOB_COMPLETION_INDEX];
  if (raw === undefined || !/^\d+$/.test(raw)) return UNKNOWN_INDEX;
  const n = Number(raw);
  return Number.isSafeInteger(n) ? n : UNKNOWN_INDEX;
}

/** getFinishedTime: last container termination, else Ready turning False, else deletion start, else creation. */
export function podFinishTime(pod: Pod): number {
  const statuses = asArray(pod.status?.containerStatuses) ?? [];
  let latest: number | undefined;
  let allTerminated = statuses.length > 0;
  for (const cs of statuses) {
    const finished = parseTime(asString(asRecord(asRecord(asRecord(cs)?.['state'])?.['terminated'])?.['finishedAt']) ?? null);
    if (finished === undefined) allTerminated = false;
    else if (latest === undefined || finished > latest) latest = finished;
  }
  if (allTerminated && latest !== undefined) return latest;
  for (const c of asArray(pod.status?.conditions) ?? []) {
    const cond = asRecord(c);
    if (cond?.['type'] === 'Ready' && cond['status'] === 'False') {
      const t = parseTime(asString(cond['lastTransitionTime']) ?? null);
      if (t !== undefined) return t;
    }
  }
  const deletion = parseTime(pod.metadata?.deletionTimestamp ?? null);
  if (deletion !== undefined) return deletion - (pod.metadata?.deletionGracePeriodSeconds ?? 0) * 1000;
  return parseTime(pod.metadata?.creationTimestamp ?? null) ?? 0;
}

/** pastBackoffLimitOnFailure: with restartPolicy OnFailure, container restarts count as failures. */
export function pastBackoffLimitOnFailure(view: JobView, pods: readonly Pod[]): boolean {
  if (view.restartPolicy !== 'OnFailure') return false;
  let restarts = 0;
  for (const pod of pods) {
    const phase = podPhase(pod);
    if (phase !== 'Running' && phase !== 'Pending') continue;
    for (const list of [pod.status?.initContainerStatuses, pod.status?.containerStatuses]) {
      for (const cs of asArray(list) ?? []) restarts += nonNegative(asRecord(cs)?.['restartCount']) ?? 0;
    }
  }
  return view.backoffLimit === 0 ? restarts > 0 : restarts >= view.backoffLimit;
}

/**
 * activePodsForRemoval: for Indexed Jobs first the pods with an invalid or
 * duplicated index (keeping the most valuable of each index), then the least
 * valuable active pods (controller.ActivePods order: unscheduled, pending,
 * not ready, ... first).
 */
export function activePodsForRemoval(view: JobView, pods: readonly Pod[], atLeast: number): Pod[] {
  const rm: Pod[] = [];
  let left: Pod[] = [...pods];
  if (view.indexed) {
    left = [];
    const byIndex = new Map<number, Pod[]>();
    for (const p of pods) {
      const ix = completionIndexOf(p);
      if (ix === UNKNOWN_INDEX || ix >= (view.completions ?? 0)) rm.push(p);
      else byIndex.set(ix, [...(byIndex.get(ix) ?? []), p]);
    }
    for (const ix of [...byIndex.keys()].sort((a, b) => a - b)) {
      const group = [...(byIndex.get(ix) ?? [])].sort(compareActivePods);
      rm.push(...group.slice(0, -1));
      left.push(...group.slice(-1));
    }
  }
  if (rm.length < atLeast) rm.push(...[...left].sort(compareActivePods).slice(0, atLeast - rm.length));
  return rm;
}

// ---- completion indexes ----

/** Sorted, de-duplicated indexes from upstream's interval string ("0,2-4"), those below `completions` only. */
export function parseIndexes(text: string, completions: number): number[] {
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (m === null) continue;
    const first = Number(m[1]);
    const last = m[2] === undefined ? first : Number(m[2]);
    for (let i = first; i <= Math.min(last, completions - 1); i++) out.add(i);
  }
  return [...out].sort((a, b) => a - b);
}

/** orderedIntervals.String(): "0,2-4". */
export function formatIndexes(indexes: Iterable<number>): string {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === (sorted[j] as number) + 1) j++;
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** firstPendingIndexes: the lowest `count` indexes in [0, completions) nobody has succeeded at or is running. */
export function firstPendingIndexes(taken: ReadonlySet<number>, count: number, completions: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < completions && out.length < count; i++) if (!taken.has(i)) out.push(i);
  return out;
}

// ---- pod failure back-off ----

export interface BackoffRecord {
  failuresAfterLastSuccess: number;
  lastFailureTime: number | undefined;
}

/**
 * newBackoffRecord: folds newly finished pods into the record. A success
 * resets the count to the failures that finished after the latest success.
 */
export function nextBackoffRecord(record: BackoffRecord, newSucceeded: readonly Pod[], newFailed: readonly Pod[]): BackoffRecord {
  const failedTimes = newFailed.map(podFinishTime).sort((a, b) => a - b);
  if (newSucceeded.length === 0) {
    if (failedTimes.length === 0) return record;
    return { failuresAfterLastSuccess: record.failuresAfterLastSuccess + failedTimes.length, lastFailureTime: failedTimes[failedTimes.length - 1] };
  }
  const lastSuccess = Math.max(...newSucceeded.map(podFinishTime));
  const after = failedTimes.filter((t) => t > lastSuccess);
  return { failuresAfterLastSuccess: after.length, lastFailureTime: after.length > 0 ? after[after.length - 1] : undefined };
}

/** getRemainingTime: how long pod creation must still wait after the failures in `record`. */
export function backoffRemainingMs(record: BackoffRecord, now: number, base = DEFAULT_POD_FAILURE_BACKOFF_MS, max = MAX_POD_FAILURE_BACKOFF_MS): number {
  if (record.failuresAfterLastSuccess === 0 || record.lastFailureTime === undefined) return 0;
  let delay = base;
  for (let i = 1; i < record.failuresAfterLastSuccess; i++) {
    delay *= 2;
    if (delay >= max) {
      delay = max;
      break;
    }
  }
  const elapsed = now - record.lastFailureTime;
  return delay < elapsed ? 0 : delay - elapsed;
}
