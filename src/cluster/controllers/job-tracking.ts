/**
 * How the Job controller counts finished pods exactly once (upstream's
 * trackJobStatusAndRemoveFinalizers, the pure part). Pods carry the
 * `batch.kubernetes.io/job-tracking` finalizer while they may still change a
 * counter: a finished pod's uid first goes to `status.uncountedTerminatedPods`
 * (written), then its finalizer is removed, and only a uid whose finalizer is
 * gone moves from the uncounted list to `succeeded` / `failed`. A crash (or a
 * failed write) anywhere in between loses nothing and counts nothing twice.
 *
 * `SyncContext` is upstream's syncJobCtx: what one sync computed. The
 * functions here mutate its `status` and `finished` and answer what the
 * controller must write; job.ts performs the writes.
 * Start at `newSyncContext` and `planFinalizerRemoval`.
 */
import { isPodActive, isPodReady, podPhase } from '../../k8s/pod.ts';
import { formatTime, parseTime } from '../../k8s/time.ts';
import type { KubeObject, Pod } from '../../k8s/types.ts';
import {
  completionIndexOf,
  ensureCondition,
  findCondition,
  formatIndexes,
  hasTrackingFinalizer,
  isPodFailed,
  isTerminating,
  isTerminatingUnfinished,
  MAX_UNCOUNTED_PODS,
  newCondition,
  nextBackoffRecord,
  parseIndexes,
  pastBackoffLimitOnFailure,
  readStatus,
  UNKNOWN_INDEX,
  type BackoffRecord,
  type JobCondition,
  type JobStatus,
  type JobView,
} from './job-state.ts';

/** Everything one sync computes about a Job (upstream's syncJobCtx). */
export interface SyncContext {
  key: string;
  job: KubeObject;
  view: JobView;
  status: JobStatus;
  pods: Pod[];
  activePods: Pod[];
  ready: number;
  terminating: number;
  succeeded: number;
  failed: number;
  uncountedSucceeded: Set<string>;
  uncountedFailed: Set<string>;
  /** Pods whose finalizer removal was asked for and not yet observed: already counted. */
  expectedRemovals: Set<string>;
  prevSucceededIndexes: Set<number>;
  succeededIndexes: Set<number>;
  /** The condition the Job is heading for (interim first, then terminal). */
  finished: JobCondition | undefined;
  backoff: BackoffRecord;
}

const uidOf = (obj: KubeObject): string => obj.metadata?.uid ?? '';

/** uidTrackingExpectations: pods whose finalizer removal the controller has asked for and not yet seen. */
export class FinalizerExpectations {
  readonly #byJob = new Map<string, Set<string>>();
  get(key: string): Set<string> {
    return new Set(this.#byJob.get(key) ?? []);
  }
  expect(key: string, uids: readonly string[]): void {
    const set = this.#byJob.get(key) ?? new Set<string>();
    for (const u of uids) set.add(u);
    this.#byJob.set(key, set);
  }
  observed(key: string, uid: string): void {
    this.#byJob.get(key)?.delete(uid);
  }
  delete(key: string): void {
    this.#byJob.delete(key);
  }
}

export interface SyncInput {
  key: string;
  /** A private copy of the cached Job (the sync edits its status). */
  job: KubeObject;
  view: JobView;
  /** The pods the Job owns (after adoption). */
  pods: Pod[];
  expectedRemovals: Set<string>;
  backoff: BackoffRecord | undefined;
  now: number;
}

/**
 * The first part of syncJob: counters (status + newly finished + uncounted),
 * startTime, the back-off record, and the condition the Job is heading for —
 * an existing SuccessCriteriaMet or FailureTarget, else BackoffLimitExceeded
 * (failures over backoffLimit, or restarts with OnFailure) or
 * DeadlineExceeded. `deadlineLeftMs` says when to look again for the deadline.
 */
export function newSyncContext(input: SyncInput): { ctx: SyncContext; deadlineLeftMs: number | undefined } {
  const { key, job, view, pods, now } = input;
  const status = readStatus(job);
  const activePods = pods.filter(isPodActive);
  const ctx: SyncContext = {
    key,
    job,
    view,
    status,
    pods,
    activePods,
    ready: activePods.filter((p) => isPodReady(p)).length,
    terminating: pods.filter(isTerminatingUnfinished).length,
    succeeded: 0,
    failed: 0,
    uncountedSucceeded: new Set(status.uncounted.succeeded),
    uncountedFailed: new Set(status.uncounted.failed),
    expectedRemovals: input.expectedRemovals,
    prevSucceededIndexes: new Set(),
    succeededIndexes: new Set(),
    finished: undefined,
    backoff: { failuresAfterLastSuccess: 0, lastFailureTime: undefined },
  };
  const newSucceeded = newFinishedPods(ctx, ctx.uncountedSucceeded, (p) => podPhase(p) === 'Succeeded');
  const newFailed = newFinishedPods(ctx, ctx.uncountedFailed, (p) => isPodFailed(p, view));
  ctx.succeeded = status.succeeded + newSucceeded.length + ctx.uncountedSucceeded.size;
  ctx.failed = status.failed + newFailed.length + ctx.uncountedFailed.size;
  if (status.startTime === undefined && !view.suspended) status.startTime = formatTime(now);
  ctx.backoff = nextBackoffRecord(input.backoff ?? { failuresAfterLastSuccess: 0, lastFailureTime: undefined }, newSucceeded, newFailed);

  let deadlineLeftMs: number | undefined;
  const met = findCondition(status.conditions, 'SuccessCriteriaMet');
  if (met?.status === 'True') ctx.finished = met;
  if (ctx.finished === undefined) {
    const target = findCondition(status.conditions, 'FailureTarget');
    if (target?.status === 'True') ctx.finished = newCondition('Failed', 'True', target.reason ?? '', target.message ?? '', now);
  }
  if (ctx.finished === undefined) {
    const start = parseTime(status.startTime ?? null);
    if (ctx.failed > view.backoffLimit || pastBackoffLimitOnFailure(view, pods)) {
      ctx.finished = newCondition('FailureTarget', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit', now);
    } else if (view.activeDeadlineSeconds !== undefined && !view.suspended && start !== undefined) {
      const left = start + view.activeDeadlineSeconds * 1000 - now;
      if (left <= 0) ctx.finished = newCondition('FailureTarget', 'True', 'DeadlineExceeded', 'Job was active longer than specified deadline', now);
      else deadlineLeftMs = left;
    }
  }
  if (view.indexed) {
    const completions = view.completions ?? 0;
    ctx.prevSucceededIndexes = new Set(parseIndexes(status.completedIndexes, completions));
    ctx.succeededIndexes = new Set(ctx.prevSucceededIndexes);
    for (const p of pods) {
      const ix = completionIndexOf(p);
      if (podPhase(p) === 'Succeeded' && hasTrackingFinalizer(p) && ix !== UNKNOWN_INDEX && ix < completions) ctx.succeededIndexes.add(ix);
    }
    ctx.succeeded = ctx.succeededIndexes.size;
  }
  return { ctx, deadlineLeftMs };
}

/** getValidPodsWithFilter: finished pods still carrying the finalizer and not yet in the uncounted list. */
export function newFinishedPods(ctx: SyncContext, uncounted: ReadonlySet<string>, filter: (p: Pod) => boolean): Pod[] {
  return ctx.pods.filter((p) => {
    const uid = uidOf(p);
    if (!hasTrackingFinalizer(p) || uncounted.has(uid) || ctx.expectedRemovals.has(uid)) return false;
    if (ctx.view.indexed) {
      const ix = completionIndexOf(p);
      if (ix === UNKNOWN_INDEX || ix >= (ctx.view.completions ?? 0)) return false;
    }
    return filter(p);
  });
}

/** cleanUncountedPodsWithoutFinalizers: uids whose finalizer is gone move from the list to the counters. */
export function cleanUncounted(status: JobStatus, withFinalizer: ReadonlySet<string>): boolean {
  let changed = false;
  for (const which of ['succeeded', 'failed'] as const) {
    const keep = status.uncounted[which].filter((uid) => withFinalizer.has(uid));
    const gone = status.uncounted[which].length - keep.length;
    if (gone > 0) {
      status[which] += gone;
      status.uncounted[which] = keep;
      changed = true;
    }
  }
  return changed;
}

export interface FinalizerPlan {
  /** Pods whose finalizer goes once the status (with their uids) is written. */
  toRemove: Pod[];
  /** Uids that still carry the finalizer (the controller deletes the ones it removes). */
  withFinalizer: Set<string>;
  needsFlush: boolean;
  /** MaxUncountedPods reached: the rest waits for the next sync, and the Job cannot finish in this one. */
  reachedMax: boolean;
}

/**
 * The first half of trackJobStatusAndRemoveFinalizers: which finished pods
 * enter the uncounted lists (or, Indexed, completedIndexes), whose
 * finalizers may go (every pod's once the Job is finishing or deleted), and
 * the interim condition (FailureTarget / SuccessCriteriaMet) recorded before
 * any finalizer is removed, with `finished` turned into its terminal form.
 */
export function planFinalizerRemoval(ctx: SyncContext, now: number): FinalizerPlan {
  const { view, status } = ctx;
  let needsFlush = false;
  const pods = view.indexed ? [...ctx.pods].sort((a, b) => completionIndexOf(a) - completionIndexOf(b)) : ctx.pods;
  const withFinalizer = new Set(pods.filter((p) => hasTrackingFinalizer(p) && !ctx.expectedRemovals.has(uidOf(p))).map(uidOf));
  if (cleanUncounted(status, withFinalizer)) needsFlush = true;
  const toRemove: Pod[] = [];
  const newSucceededIndexes: number[] = [];
  let reachedMax = false;
  for (const pod of pods) {
    const uid = uidOf(pod);
    if (!hasTrackingFinalizer(pod) || ctx.expectedRemovals.has(uid)) continue;
    const failed = isPodFailed(pod, view);
    const canRemove = isTerminating(ctx.job) || ctx.finished !== undefined || podPhase(pod) === 'Succeeded' || failed;
    if (!canRemove) continue;
    toRemove.push(pod);
    const ix = completionIndexOf(pod);
    const validIndex = ix !== UNKNOWN_INDEX && ix < (view.completions ?? 0);
    if (podPhase(pod) === 'Succeeded' && !ctx.uncountedFailed.has(uid)) {
      if (view.indexed) {
        if (validIndex && !ctx.prevSucceededIndexes.has(ix)) {
          newSucceededIndexes.push(ix);
          needsFlush = true;
        }
      } else if (!ctx.uncountedSucceeded.has(uid)) {
        status.uncounted.succeeded.push(uid);
        needsFlush = true;
      }
    } else if (failed || (ctx.finished !== undefined && ctx.finished.type !== 'SuccessCriteriaMet')) {
      // A Job that is failing counts every pod it stops as failed.
      if (!ctx.uncountedFailed.has(uid) && (!view.indexed || validIndex)) {
        status.uncounted.failed.push(uid);
        needsFlush = true;
      }
    }
    if (newSucceededIndexes.length + status.uncounted.succeeded.length + status.uncounted.failed.length >= MAX_UNCOUNTED_PODS) {
      reachedMax = true;
      break;
    }
  }
  if (view.indexed) {
    for (const ix of newSucceededIndexes) ctx.succeededIndexes.add(ix);
    const text = formatIndexes(ctx.succeededIndexes);
    if (text !== status.completedIndexes) needsFlush = true;
    status.succeeded = ctx.succeededIndexes.size;
    status.completedIndexes = text;
  }
  if (ctx.finished?.type === 'FailureTarget') {
    status.conditions.push(ctx.finished);
    needsFlush = true;
    ctx.finished = newCondition('Failed', 'True', ctx.finished.reason ?? '', ctx.finished.message ?? '', now);
  }
  if (ctx.finished?.type === 'SuccessCriteriaMet') {
    if (findCondition(status.conditions, 'SuccessCriteriaMet') === undefined) {
      status.conditions.push(ctx.finished);
      needsFlush = true;
    }
    ctx.finished = newCondition('Complete', 'True', ctx.finished.reason ?? '', ctx.finished.message ?? '', now);
  }
  return { toRemove, withFinalizer, needsFlush, reachedMax };
}

/**
 * enactJobFinished: the terminal condition (and completionTime) once nothing
 * is left uncounted and no pod is still terminating. Answers whether it was set.
 */
export function enactFinished(ctx: SyncContext, now: number): boolean {
  const { status, finished } = ctx;
  if (finished === undefined) return false;
  if (status.uncounted.succeeded.length + status.uncounted.failed.length > 0 || ctx.terminating > 0) return false;
  ensureCondition(status.conditions, finished.type, finished.status, finished.reason ?? '', finished.message ?? '', now);
  if (finished.type === 'Complete') status.completionTime = finished.lastTransitionTime ?? formatTime(now);
  return true;
}
