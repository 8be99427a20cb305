/**
 * The Job controller of the embedded cluster (k8s.io/kubernetes
 * pkg/controller/job, batch/v1), talking to the API server only through HTTP
 * and watches: informers on Jobs and Pods → handlers map changes to Job keys
 * (pod events batched by 1 s, spec changes at once, as upstream) → work
 * queue → `#syncJob(key)`; a second queue strips the tracking finalizer from
 * pods that lost their Job.
 *
 * Pods are `<job>-<random>` (Indexed: `<job>-<index>-<random>`, with the
 * `batch.kubernetes.io/job-completion-index` annotation and label, hostname
 * and JOB_COMPLETION_INDEX), carry the template's labels (the API server adds
 * job-name / controller-uid) and the `batch.kubernetes.io/job-tracking`
 * finalizer. Finished pods are counted exactly once, as upstream: a finished
 * pod's uid is first written to `status.uncountedTerminatedPods`, then its
 * finalizer is removed, then it moves to `succeeded` / `failed`.
 *
 * One sync (upstream's syncJob with JobPodReplacementPolicy and JobManagedBy
 * on, Kubernetes ≥ 1.31): claim pods; count active, ready, terminating and
 * newly finished pods; a Job past `backoffLimit` (or its restarts, with
 * OnFailure) or `activeDeadlineSeconds` gets `FailureTarget` and its active
 * pods are deleted, one that reached its completions gets
 * `SuccessCriteriaMet`; once no pod is terminating and nothing is uncounted
 * the terminal `Failed` / `Complete` condition (and `completionTime`) follow.
 * Otherwise `#manageJob` creates up to min(parallelism, remaining
 * completions) pods in slow-start batches (after the failure back-off: 10 s
 * doubling) or deletes surplus ones, with expectations so a slow watch never
 * causes double work. `suspend` deletes active pods; `ttlSecondsAfterFinished`
 * (upstream's separate TTL controller) deletes a finished Job, foreground.
 * Not emulated: podFailurePolicy rules, backoffLimitPerIndex/maxFailedIndexes
 * and successPolicy are ignored (their fields are kept, nothing acts on them).
 * Module map: job-state.ts (spec, status, conditions, indexes, back-off;
 * pure), job-tracking.ts (the sync's context and the count-once accounting;
 * pure), job-pods.ts (pod template, adoption, pod writes).
 * Start reading at `#syncJob`.
 */
import type { Clock } from '../../clock/clock.ts';
import type { Races } from '../../clock/races.ts';
import { describeError, isNotFound } from '../../client/errors.ts';
import type { EventRecorder } from '../../client/event-recorder.ts';
import type { KubeClient } from '../../client/http-client.ts';
import { silentLogger, type Logger } from '../../client/logger.ts';
import { BUILTIN } from '../../client/resources.ts';
import { Informer, objectKey } from '../../client/store.ts';
import { QueueLoop } from '../../client/queue-loop.ts';
import type { Runnable } from '../../client/runnable.ts';
import type { WorkQueue, WorkResult } from '../../client/workqueue.ts';
import { deepClone, deepEqual } from '../../k8s/json.ts';
import { labelSelectorAsSelector } from '../../k8s/label-selector.ts';
import { controllerRef } from '../../k8s/owner.ts';
import { isPodReady } from '../../k8s/pod.ts';
import { asRecord } from '../../k8s/raw-json.ts';
import { formatTime, parseTime } from '../../k8s/time.ts';
import type { KubeObject, LabelSelector, OwnerReference, Pod } from '../../k8s/types.ts';
import { componentClient, componentRecorder } from './component-client.ts';
import { ControllerExpectations } from './expectations.ts';
import type { ControllerFactory } from './component.ts';
import { claimJobPods, deletePods, jobPod, removeTrackingFinalizer } from './job-pods.ts';
import {
  activePodsForRemoval,
  backoffRemainingMs,
  completionIndexOf,
  ensureCondition,
  finishTime,
  firstPendingIndexes,
  hasTrackingFinalizer,
  isJobFinished,
  isTerminating,
  isTerminatingUnfinished,
  jobView,
  MAX_POD_CREATE_DELETE_PER_SYNC,
  newCondition,
  readStatus,
  wireStatus,
  type BackoffRecord,
  type JobView,
} from './job-state.ts';
import { cleanUncounted, enactFinished, FinalizerExpectations, newSyncContext, planFinalizerRemoval, type SyncContext } from './job-tracking.ts';
import { slowStartBatch } from './slow-start.ts';

export const JOB_CONTROLLER = 'job-controller';

/** The Job controller as a component of the embedded cluster (registry.ts). */
export const jobController: ControllerFactory = {
  name: JOB_CONTROLLER,
  create: (ctx) => new JobController({ client: ctx.client, clock: ctx.clock, logger: ctx.logger, races: ctx.races }),
};
/** Pod events reach a Job after this delay, so bursts become one sync (syncJobBatchPeriod). */
export const SYNC_JOB_BATCH_PERIOD_MS = 1000;

export interface JobControllerOptions {
  client: KubeClient;
  clock: Clock;
  /** Race mode: a random delay before each sync (the cluster's `races`). */
  races?: Races | undefined;
  logger?: Logger;
  /** Concurrent syncs (default 5, `--concurrent-job-syncs`). */
  workers?: number;
  /** Write Completed / BackoffLimitExceeded / SuccessfulCreate ... events (default true). */
  recordEvents?: boolean;
}

const CONTROLLER_UID_INDEX = 'controllerUid';
const controllerUidOf = (obj: KubeObject): string[] => [controllerRef(obj)?.uid ?? ''];
const selectorOf = (obj: KubeObject): LabelSelector | undefined => asRecord(obj['spec'])?.['selector'] as LabelSelector | undefined;
const uidOf = (obj: KubeObject): string => obj.metadata?.uid ?? '';

export class JobController implements Runnable {
  readonly name = JOB_CONTROLLER;
  readonly expectations: ControllerExpectations;
  readonly #finalizers = new FinalizerExpectations();
  readonly #backoff = new Map<string, BackoffRecord>();
  readonly #client: KubeClient;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #workers: number;
  readonly #recorder: EventRecorder | undefined;
  readonly #jobs: Informer;
  readonly #pods: Informer<Pod>;
  /** Jobs; owns the informers. */
  readonly #loop: QueueLoop;
  /** Pods with the tracking finalizer whose Job is gone (one worker). */
  readonly #orphanLoop: QueueLoop;
  readonly #queue: WorkQueue<string>;
  readonly #orphans: WorkQueue<string>;

  constructor(options: JobControllerOptions) {
    this.#clock = options.clock;
    this.#client = componentClient(options.client, options.clock, JOB_CONTROLLER);
    this.#log = options.logger ?? silentLogger;
    this.#workers = options.workers ?? 5;
    this.#recorder = options.recordEvents === false ? undefined : componentRecorder(this.#client, JOB_CONTROLLER, options.logger);
    this.expectations = new ControllerExpectations(() => this.#clock.now());
    // DefaultJobApiBackOff / MaxJobApiBackOff: failed syncs retry after 1 s, doubling up to a minute.
    const rateLimit = { baseMs: 1000, maxMs: 60_000 };
    const common = { client: this.#client, log: this.#log, indexes: { [CONTROLLER_UID_INDEX]: controllerUidOf } };
    this.#jobs = new Informer({ ...common, ref: BUILTIN.jobs, name: `${JOB_CONTROLLER} jobs` });
    this.#pods = new Informer<Pod>({ ...common, ref: BUILTIN.pods, name: `${JOB_CONTROLLER} pods` });
    const loop = { clock: this.#clock, log: this.#log, rateLimit, races: options.races };
    this.#loop = new QueueLoop({ ...loop, name: JOB_CONTROLLER, workers: this.#workers, informers: [this.#jobs, this.#pods], handle: (key) => this.#syncJob(key) });
    this.#orphanLoop = new QueueLoop({
      ...loop,
      name: `${JOB_CONTROLLER} orphan pods`,
      workers: 1,
      waitForSync: async (signal) => {
        await Promise.all([this.#jobs.waitForSync(signal), this.#pods.waitForSync(signal)]);
      },
      handle: (key) => this.#syncOrphanPod(key),
    });
    this.#queue = this.#loop.queue;
    this.#orphans = this.#orphanLoop.queue;
    this.#wireHandlers();
  }

  /** Starts the informers; resolves once both caches are filled and the workers of both queues run. */
  async start(signal?: AbortSignal): Promise<void> {
    await Promise.all([this.#loop.start(signal), this.#orphanLoop.start(signal)]);
  }

  /** Ends every watch, timer and worker; resolves when all are gone. */
  async stop(): Promise<void> {
    await Promise.all([this.#loop.stop(), this.#orphanLoop.stop()]);
  }

  hasSynced(): boolean {
    return this.#jobs.store.hasSynced() && this.#pods.store.hasSynced();
  }

  // ---- event handlers ----

  #wireHandlers(): void {
    const jobs = this.#jobs.store;
    jobs.onAdd((job) => this.#queue.add(objectKey(job)));
    jobs.onUpdate((old, cur) => this.#jobUpdated(old, cur));
    jobs.onDelete((job) => {
      this.#queue.add(objectKey(job));
      this.#cleanupPodFinalizers(job);
    });
    const pods = this.#pods.store;
    pods.onAdd((pod) => this.#podAdded(pod));
    pods.onUpdate((old, cur) => this.#podUpdated(old, cur));
    pods.onDelete((pod) => this.#podDeleted(pod, true));
  }

  #jobUpdated(old: KubeObject, cur: KubeObject): void {
    const key = objectKey(cur);
    if (old.metadata?.uid !== cur.metadata?.uid) {
      this.expectations.delete(key);
      this.#finalizers.delete(key);
    }
    if ((old.metadata?.generation ?? 0) === (cur.metadata?.generation ?? 0)) this.#queue.addAfter(key, SYNC_JOB_BATCH_PERIOD_MS);
    else this.#queue.add(key);
    if (isJobFinished(cur)) this.#cleanupPodFinalizers(cur);
    const start = parseTime(readStatus(cur).startTime ?? null);
    const ads = jobView(cur).activeDeadlineSeconds;
    if (start !== undefined && ads !== undefined && ads !== jobView(old).activeDeadlineSeconds) {
      this.#queue.addAfter(key, start + ads * 1000 - this.#clock.now());
    }
  }

  #resolve(namespace: string, ref: OwnerReference | undefined): KubeObject | undefined {
    if (ref?.kind !== 'Job') return undefined;
    const job = this.#jobs.store.get(namespace, ref.name);
    return job !== undefined && uidOf(job) === ref.uid ? job : undefined;
  }

  #jobsMatching(pod: Pod): KubeObject[] {
    return this.#jobs.store.list(pod.metadata?.namespace ?? '').filter((job) => {
      const sel = labelSelectorAsSelector(selectorOf(job));
      return sel.ok && !sel.selector.empty && sel.selector.matches(pod.metadata?.labels);
    });
  }

  #batched(job: KubeObject): void {
    this.#queue.addAfter(objectKey(job), SYNC_JOB_BATCH_PERIOD_MS);
  }

  #podAdded(pod: Pod): void {
    if (isTerminating(pod)) {
      this.#podDeleted(pod, false);
      return;
    }
    const ref = controllerRef(pod);
    if (ref !== undefined) {
      const job = this.#resolve(pod.metadata?.namespace ?? '', ref);
      if (job === undefined) return;
      this.expectations.creationObserved(objectKey(job));
      this.#batched(job);
      return;
    }
    if (hasTrackingFinalizer(pod)) this.#orphans.add(objectKey(pod));
    for (const job of this.#jobsMatching(pod)) this.#batched(job);
  }

  #podUpdated(old: Pod, cur: Pod): void {
    if (isTerminating(cur)) {
      this.#podDeleted(cur, false);
      return;
    }
    const ns = cur.metadata?.namespace ?? '';
    const finalizerRemoved = !hasTrackingFinalizer(cur);
    const curRef = controllerRef(cur);
    const oldRef = controllerRef(old);
    const refChanged = !deepEqual(curRef ?? null, oldRef ?? null);
    if (refChanged && oldRef !== undefined) {
      const job = this.#resolve(ns, oldRef);
      if (job !== undefined) {
        if (finalizerRemoved) this.#finalizers.observed(objectKey(job), uidOf(cur));
        this.#batched(job);
      }
    }
    if (curRef !== undefined) {
      const job = this.#resolve(ns, curRef);
      if (job === undefined) return;
      if (finalizerRemoved) this.#finalizers.observed(objectKey(job), uidOf(cur));
      this.#batched(job);
      return;
    }
    if (hasTrackingFinalizer(cur)) this.#orphans.add(objectKey(cur));
    if (refChanged || !deepEqual(old.metadata?.labels ?? {}, cur.metadata?.labels ?? {})) for (const job of this.#jobsMatching(cur)) this.#batched(job);
  }

  /** deletePod: `final` is the watch's delete; otherwise the pod just got its deletionTimestamp. */
  #podDeleted(pod: Pod, final: boolean): void {
    const ref = controllerRef(pod);
    const hasFinalizer = hasTrackingFinalizer(pod);
    if (ref === undefined) {
      if (hasFinalizer) this.#orphans.add(objectKey(pod));
      return;
    }
    const job = this.#resolve(pod.metadata?.namespace ?? '', ref);
    if (job === undefined || isJobFinished(job)) {
      if (hasFinalizer) this.#orphans.add(objectKey(pod));
      return;
    }
    const key = objectKey(job);
    this.expectations.deletionObserved(key, objectKey(pod));
    if (final || !hasFinalizer) this.#finalizers.observed(key, uidOf(pod));
    this.#batched(job);
  }

  /** The Job is gone or finished: its pods' finalizers must not keep them around. */
  #cleanupPodFinalizers(job: KubeObject): void {
    for (const pod of this.#pods.store.byIndex(CONTROLLER_UID_INDEX, uidOf(job))) if (hasTrackingFinalizer(pod)) this.#orphans.add(objectKey(pod));
  }

  // ---- orphan pods ----

  async #syncOrphanPod(key: string): Promise<void> {
    const pod = this.#pods.store.getByKey(key);
    if (pod === undefined || !hasTrackingFinalizer(pod)) return;
    const ref = controllerRef(pod);
    if (ref !== undefined) {
      if (ref.kind !== 'Job' || ref.apiVersion !== 'batch/v1') return;
      const job = this.#resolve(pod.metadata?.namespace ?? '', ref);
      if (job !== undefined && !isJobFinished(job)) return;
    }
    await removeTrackingFinalizer(this.#client, pod).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
  }

  // ---- sync ----

  async #syncJob(key: string): Promise<WorkResult | void> {
    const shared = this.#jobs.store.getByKey(key);
    if (shared === undefined) {
      this.expectations.delete(key);
      this.#finalizers.delete(key);
      this.#backoff.delete(key);
      return;
    }
    const view = jobView(shared);
    if (view.managedElsewhere) return;
    if (isJobFinished(shared)) {
      this.#backoff.delete(key);
      return this.#expireFinished(shared, view);
    }
    if (view.unknownMode) {
      this.#recorder?.record(shared, { type: 'Warning', reason: 'UnknownCompletionMode', note: 'Skipped Job sync because completion mode is unknown', action: 'Sync' });
      return;
    }
    const job = deepClone(shared);
    const now = this.#clock.now();
    const satisfied = this.expectations.satisfied(key);
    const pods = await this.#podsForJob(job);
    const { ctx, deadlineLeftMs } = newSyncContext({ key, job, view, pods, expectedRemovals: this.#finalizers.get(key), backoff: this.#backoff.get(key), now });
    const status = ctx.status;
    if (deadlineLeftMs !== undefined) this.#queue.addAfter(key, deadlineLeftMs);
    let active = ctx.activePods.length;
    const activePods = ctx.activePods;

    let manageError: unknown;
    let suspendChanged = false;
    if (ctx.finished !== undefined) {
      const r = await deletePods(this.#client, activePods);
      if (r.deleted !== active || !satisfied) ctx.finished = undefined;
      active -= r.deleted;
      ctx.terminating += r.deleted;
      ctx.ready -= r.deletedReady;
      manageError = r.error;
    } else {
      let managed = false;
      if (satisfied && !isTerminating(job)) {
        const r = await this.#manageJob(ctx);
        active = r.active;
        manageError = r.error;
        managed = true;
      }
      const complete = view.completions === undefined ? ctx.succeeded > 0 && active === 0 : ctx.succeeded >= view.completions && active === 0;
      if (complete) ctx.finished = newCondition('SuccessCriteriaMet', 'True', 'CompletionsReached', 'Reached expected number of succeeded pods', now);
      else if (managed) {
        if (view.suspended) {
          suspendChanged = ensureCondition(status.conditions, 'Suspended', 'True', 'JobSuspended', 'Job suspended', now);
          if (suspendChanged) this.#event(job, 'Normal', 'Suspended', 'Job suspended');
        } else {
          suspendChanged = ensureCondition(status.conditions, 'Suspended', 'False', 'JobResumed', 'Job resumed', now);
          if (suspendChanged) {
            this.#event(job, 'Normal', 'Resumed', 'Job resumed');
            // activeDeadlineSeconds counts time spent active: a resumed Job starts its clock again.
            status.startTime = formatTime(now);
          }
        }
      }
    }
    const needsUpdate = suspendChanged || active !== status.active || ctx.ready !== status.ready || ctx.terminating !== status.terminating;
    status.active = active;
    status.ready = ctx.ready;
    status.terminating = ctx.terminating;
    await this.#trackStatusAndRemoveFinalizers(ctx, needsUpdate);
    if (manageError !== undefined) throw manageError;
  }

  /** getPodsForJob: the pods the Job owns, after adopting matching orphans and releasing strays. */
  #podsForJob(job: KubeObject): Promise<Pod[]> {
    const sel = labelSelectorAsSelector(selectorOf(job));
    if (!sel.ok) throw new Error(`couldn't convert Job selector: ${sel.error}`);
    const ns = job.metadata?.namespace ?? '';
    const store = this.#pods.store;
    const candidates = [...store.byIndex(CONTROLLER_UID_INDEX, uidOf(job)), ...store.byIndex(CONTROLLER_UID_INDEX, '')].filter((p) => (p.metadata?.namespace ?? '') === ns);
    return claimJobPods(this.#client, job, sel.selector, candidates);
  }

  /** manageJob: create or delete pods toward the number the Job wants running. */
  async #manageJob(ctx: SyncContext): Promise<{ active: number; error?: unknown }> {
    const { view, job, key } = ctx;
    let active = ctx.activePods.length;
    if (view.suspended) {
      const victims = activePodsForRemoval(view, ctx.activePods, active);
      const r = await this.#deleteJobPods(ctx, victims);
      return { active: active - r.removed, error: r.error };
    }
    let wantActive: number;
    if (view.completions === undefined) wantActive = ctx.succeeded > 0 ? active : view.parallelism;
    else wantActive = Math.max(0, Math.min(view.completions - ctx.succeeded, view.parallelism));
    const victims = activePodsForRemoval(view, ctx.activePods, Math.max(0, active - wantActive)).slice(0, MAX_POD_CREATE_DELETE_PER_SYNC);
    if (victims.length > 0) {
      const r = await this.#deleteJobPods(ctx, victims);
      return { active: active - r.removed, error: r.error };
    }
    const terminatingCount = view.onlyReplaceFailed ? ctx.terminating : 0;
    let diff = wantActive - terminatingCount - active;
    if (diff <= 0) return { active };
    const wait = backoffRemainingMs(ctx.backoff, this.#clock.now());
    if (wait > 0) {
      this.#queue.addAfter(key, Math.max(wait, SYNC_JOB_BATCH_PERIOD_MS));
      return { active };
    }
    diff = Math.min(diff, MAX_POD_CREATE_DELETE_PER_SYNC);
    let indexes: number[] = [];
    if (view.indexed) {
      const taken = new Set(ctx.succeededIndexes);
      for (const p of ctx.activePods) taken.add(completionIndexOf(p));
      if (view.onlyReplaceFailed) for (const p of ctx.pods.filter(isTerminatingUnfinished)) taken.add(completionIndexOf(p));
      indexes = firstPendingIndexes(taken, diff, view.completions ?? 0);
      diff = indexes.length;
      if (diff === 0) return { active };
    }
    this.expectations.expectCreations(key, diff);
    active += diff;
    let next = 0;
    const result = await slowStartBatch(diff, 1, async () => {
      const index = view.indexed ? indexes[next++] : undefined;
      try {
        await this.#createPod(job, index);
      } catch (err) {
        this.expectations.creationObserved(key);
        active--;
        throw err;
      }
    });
    const attempted = result.batches.reduce((a, b) => a + b, 0);
    for (let i = attempted; i < diff; i++) {
      // Never attempted after a failed batch: the watch will not bring them.
      this.expectations.creationObserved(key);
      active--;
    }
    return result.error === undefined ? { active } : { active, error: result.error };
  }

  /** A pod from the Job's template (with the tracking finalizer; Indexed: with its index). */
  async #createPod(job: KubeObject, index: number | undefined): Promise<void> {
    const ns = job.metadata?.namespace ?? '';
    const pod = jobPod(job, index);
    try {
      const created = await this.#client.create<Pod>(BUILTIN.pods, pod, { namespace: ns });
      this.#event(job, 'Normal', 'SuccessfulCreate', `Created pod: ${created.metadata?.name ?? ''}`);
    } catch (err) {
      this.#event(job, 'Warning', 'FailedCreate', `Error creating: ${describeError(err)}`);
      throw err;
    }
  }

  /** deleteJobPods: finalizer off first (the pod is counted as failed by this sync), then DELETE. */
  async #deleteJobPods(ctx: SyncContext, pods: Pod[]): Promise<{ removed: number; error?: unknown }> {
    this.expectations.expectDeletions(ctx.key, pods.map((p) => objectKey(p)));
    let removed = 0;
    let removedReady = 0;
    let error: unknown;
    await Promise.all(
      pods.map(async (pod) => {
        try {
          if (hasTrackingFinalizer(pod)) await removeTrackingFinalizer(this.#client, pod);
          await this.#client.delete(BUILTIN.pods, pod.metadata?.name ?? '', { namespace: pod.metadata?.namespace ?? '' });
          removed++;
          if (isPodReady(pod)) removedReady++;
          this.#event(ctx.job, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata?.name ?? ''}`);
        } catch (err) {
          this.expectations.deletionObserved(ctx.key, objectKey(pod));
          if (isNotFound(err)) removed++;
          else error ??= err;
        }
      }),
    );
    ctx.terminating += removed;
    ctx.ready -= removedReady;
    return error === undefined ? { removed } : { removed, error };
  }

  /**
   * trackJobStatusAndRemoveFinalizers: finished pods → uncounted list (flush) →
   * finalizers removed → counters; then the interim and terminal conditions.
   */
  async #trackStatusAndRemoveFinalizers(ctx: SyncContext, needsFlushIn: boolean): Promise<void> {
    const { view, status } = ctx;
    const now = this.#clock.now();
    const plan = planFinalizerRemoval(ctx, now);
    let needsFlush = needsFlushIn || plan.needsFlush;
    const { toRemove, withFinalizer, reachedMax } = plan;
    // flushUncountedAndRemoveFinalizers
    if (needsFlush) {
      await this.#writeStatus(ctx);
      this.#backoff.set(ctx.key, ctx.backoff);
      needsFlush = false;
    }
    let removalError: unknown;
    if (toRemove.length > 0) {
      this.#finalizers.expect(ctx.key, toRemove.map(uidOf));
      await Promise.all(
        toRemove.map(async (pod) => {
          try {
            await removeTrackingFinalizer(this.#client, pod);
            withFinalizer.delete(uidOf(pod));
          } catch (err) {
            this.#finalizers.observed(ctx.key, uidOf(pod));
            if (isNotFound(err)) withFinalizer.delete(uidOf(pod));
            else removalError ??= err;
          }
        }),
      );
    }
    if (cleanUncounted(status, withFinalizer)) needsFlush = true;
    if (removalError !== undefined) {
      if (needsFlush) await this.#writeStatus(ctx);
      throw removalError;
    }
    const finished = !reachedMax && enactFinished(ctx, now);
    if (finished) needsFlush = true;
    if (needsFlush) {
      await this.#writeStatus(ctx);
      if (finished && ctx.finished !== undefined) {
        if (ctx.finished.type === 'Complete') {
          if (view.completions !== undefined && status.succeeded > view.completions) this.#event(ctx.job, 'Warning', 'TooManySucceededPods', 'Too many succeeded pods running after completion count reached');
          this.#event(ctx.job, 'Normal', 'Completed', 'Job completed');
        } else this.#event(ctx.job, 'Warning', ctx.finished.reason ?? 'Failed', ctx.finished.message ?? '');
      }
    }
  }

  /** PUT /status; the answer (new resourceVersion) becomes the Job of the rest of the sync. */
  async #writeStatus(ctx: SyncContext): Promise<void> {
    const updated = await this.#client.updateStatus<KubeObject>(BUILTIN.jobs, { ...ctx.job, status: wireStatus(ctx.status) });
    ctx.job = { ...ctx.job, metadata: { ...ctx.job.metadata, resourceVersion: updated.metadata?.resourceVersion ?? ctx.job.metadata?.resourceVersion ?? '' } };
  }

  /** ttlSecondsAfterFinished (the TTL-after-finished controller): delete the finished Job, foreground. */
  async #expireFinished(job: KubeObject, view: JobView): Promise<WorkResult | void> {
    const ttl = view.ttlSecondsAfterFinished;
    if (ttl === undefined || isTerminating(job)) return;
    const finishedAt = finishTime(job);
    if (finishedAt === undefined) return;
    const left = finishedAt + ttl * 1000 - this.#clock.now();
    if (left > 0) return { requeueAfterMs: left };
    try {
      await this.#client.delete(BUILTIN.jobs, job.metadata?.name ?? '', { namespace: job.metadata?.namespace ?? '', propagationPolicy: 'Foreground', preconditions: { uid: uidOf(job), resourceVersion: job.metadata?.resourceVersion ?? '' } });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  #event(job: KubeObject, type: 'Normal' | 'Warning', reason: string, note: string): void {
    this.#recorder?.record(job, { type, reason, note, action: 'Sync' });
  }
}
