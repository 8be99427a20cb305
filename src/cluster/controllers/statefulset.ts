/**
 * The StatefulSet controller of the embedded cluster (k8s.io/kubernetes
 * pkg/controller/statefulset), talking to the API server only through HTTP
 * and watches: informers on StatefulSets, Pods and ControllerRevisions →
 * handlers map changes to set keys → work queue → `#sync(key)`, which
 * recomputes everything from the caches.
 *
 * One sync, as upstream's syncStatefulSet / UpdateStatefulSet:
 * 1. orphan ControllerRevisions matching the selector are adopted; the set's
 *    pods are claimed (adopt matching orphans named `<set>-<n>`, release the
 *    ones that stopped matching);
 * 2. revisions (statefulset-revisions.ts): the update revision is the one
 *    equal to the live template (created, or renumbered on a rollback), the
 *    current revision the one `status.currentRevision` names;
 * 3. pods (`#updatePods`): ordinals in [start, start+replicas) are replicas,
 *    higher ones condemned. OrderedReady ("monotonic") creates the lowest
 *    missing ordinal only once every lower one is Running and Ready, deletes
 *    condemned pods from the highest down, one at a time, each only after
 *    the previous is gone; Parallel does both at once (slow-start batches).
 *    Failed or Succeeded replicas are deleted and recreated. RollingUpdate
 *    then deletes, from the highest ordinal down to `partition`, the first
 *    pod not at the update revision, waiting for each replacement to become
 *    healthy; with `maxUnavailable` (upstream's MaxUnavailableStatefulSet
 *    gate, honoured when the field is set) up to that many at a time.
 *    OnDelete only recreates pods the user deletes, at the update revision;
 * 4. status (`replicas`, `readyReplicas`, `availableReplicas`,
 *    `currentReplicas`, `updatedReplicas`, revisions, `collisionCount`,
 *    `observedGeneration`) is written when it changed; a finished rolling
 *    update makes the update revision current; old revisions beyond
 *    `revisionHistoryLimit` that no pod uses are deleted.
 * Not emulated (the embedded cluster has no storage): volumeClaimTemplates
 * create no PVCs and add no claim volumes to pods, and
 * persistentVolumeClaimRetentionPolicy is ignored. No expectations, as
 * upstream: pod names are fixed, so a create the cache has not caught up with
 * answers AlreadyExists, which only ends the round (the pod's own watch event
 * syncs the set again).
 * Module map: statefulset-pods.ts (identity, predicates, the pod of an
 * ordinal, counters), statefulset-revisions.ts (revision data, hash, order),
 * statefulset-history.ts (revision writes), statefulset-status.ts (status).
 * Start reading at `#sync`.
 */
import type { Clock } from '../../clock/clock.ts';
import type { Races } from '../../clock/races.ts';
import { describeError, isAlreadyExists, isNotFound } from '../../client/errors.ts';
import type { EventRecorder } from '../../client/event-recorder.ts';
import type { KubeClient } from '../../client/http-client.ts';
import { silentLogger, type Logger } from '../../client/logger.ts';
import { BUILTIN } from '../../client/resources.ts';
import { Informer, objectKey } from '../../client/store.ts';
import { QueueLoop } from '../../client/queue-loop.ts';
import type { Runnable } from '../../client/runnable.ts';
import type { WorkQueue, WorkResult } from '../../client/workqueue.ts';
import { deepEqual } from '../../k8s/json.ts';
import { labelSelectorAsSelector, type Selector } from '../../k8s/label-selector.ts';
import { controllerRef, ownerReferenceFor } from '../../k8s/owner.ts';
import { podReadyTime } from '../../k8s/pod.ts';
import { asRecord } from '../../k8s/raw-json.ts';
import type { KubeObject, LabelSelector, OwnerReference, Pod } from '../../k8s/types.ts';
import { componentClient, componentRecorder } from './component-client.ts';
import type { ControllerFactory } from './component.ts';
import { claimDecision } from './controller-ref-manager.ts';
import { scaledIntOrPercent } from './int-or-percent.ts';
import { slowStartBatch } from './slow-start.ts';
import {
  isCreated,
  isFailed,
  isHealthy,
  isMemberOf,
  isRunningAndAvailable,
  isRunningAndReady,
  isSucceeded,
  isTerminating,
  missingIdentityLabels,
  newStatefulSetPod,
  ordinalOf,
  replicaCounts,
  revisionOf,
  specView,
  type StatefulSetSpecView,
} from './statefulset-pods.ts';
import { adoptOrphanRevisions, resolveRevisions, truncateHistory } from './statefulset-history.ts';
import { applyRevision, nameOf, sortRevisions, type ControllerRevision } from './statefulset-revisions.ts';
import { writeStatefulSetStatus, type StatefulSetStatus } from './statefulset-status.ts';

export const STATEFULSET_CONTROLLER = 'statefulset-controller';

/** The StatefulSet controller as a component of the embedded cluster (registry.ts). */
export const statefulSetController: ControllerFactory = {
  name: STATEFULSET_CONTROLLER,
  create: (ctx) => new StatefulSetController({ client: ctx.client, clock: ctx.clock, logger: ctx.logger, races: ctx.races }),
};

export interface StatefulSetControllerOptions {
  client: KubeClient;
  clock: Clock;
  /** Race mode: a random delay before each sync (the cluster's `races`). */
  races?: Races | undefined;
  logger?: Logger;
  /** Concurrent syncs (default 5, `--concurrent-statefulset-syncs`). */
  workers?: number;
  /** Write SuccessfulCreate / SuccessfulDelete / RecreatingFailedPod events (default true). */
  recordEvents?: boolean;
}

const CONTROLLER_UID_INDEX = 'controllerUid';
const controllerUidOf = (obj: KubeObject): string[] => [controllerRef(obj)?.uid ?? ''];
const selectorOf = (obj: KubeObject): LabelSelector | undefined => asRecord(obj['spec'])?.['selector'] as LabelSelector | undefined;

/** Stops a round early: every lower ordinal must become healthy (or a pod must go) first. */
type Exit = boolean;

export class StatefulSetController implements Runnable {
  readonly name = STATEFULSET_CONTROLLER;
  readonly #client: KubeClient;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #workers: number;
  readonly #recorder: EventRecorder | undefined;
  readonly #sets: Informer;
  readonly #pods: Informer<Pod>;
  readonly #revisions: Informer<ControllerRevision>;
  readonly #loop: QueueLoop;
  readonly #queue: WorkQueue<string>;

  constructor(options: StatefulSetControllerOptions) {
    this.#clock = options.clock;
    this.#client = componentClient(options.client, options.clock, STATEFULSET_CONTROLLER);
    this.#log = options.logger ?? silentLogger;
    this.#workers = options.workers ?? 5;
    this.#recorder = options.recordEvents === false ? undefined : componentRecorder(this.#client, STATEFULSET_CONTROLLER, options.logger);
    const common = { client: this.#client, log: this.#log, indexes: { [CONTROLLER_UID_INDEX]: controllerUidOf } };
    this.#sets = new Informer({ ...common, ref: BUILTIN.statefulsets, name: `${STATEFULSET_CONTROLLER} statefulsets` });
    this.#pods = new Informer<Pod>({ ...common, ref: BUILTIN.pods, name: `${STATEFULSET_CONTROLLER} pods` });
    this.#revisions = new Informer<ControllerRevision>({ ...common, ref: BUILTIN.controllerrevisions, name: `${STATEFULSET_CONTROLLER} controllerrevisions` });
    this.#loop = new QueueLoop({
      name: STATEFULSET_CONTROLLER,
      clock: this.#clock,
      log: this.#log,
      races: options.races,
      workers: this.#workers,
      informers: [this.#sets, this.#pods, this.#revisions],
      handle: (key) => this.#sync(key),
    });
    this.#queue = this.#loop.queue;
    this.#wireHandlers();
  }

  /** Starts the informers; resolves once every cache is filled and the workers run. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#loop.start(signal);
  }

  /** Ends every watch, timer and worker; resolves when all are gone. */
  stop(): Promise<void> {
    return this.#loop.stop();
  }

  hasSynced(): boolean {
    return this.#sets.store.hasSynced() && this.#pods.store.hasSynced() && this.#revisions.store.hasSynced();
  }

  // ---- event handlers: map changes to set keys ----

  #wireHandlers(): void {
    const sets = this.#sets.store;
    sets.onAdd((s) => this.#queue.add(objectKey(s)));
    sets.onUpdate((_old, cur) => this.#queue.add(objectKey(cur)));
    sets.onDelete((s) => this.#queue.add(objectKey(s)));
    const pods = this.#pods.store;
    pods.onAdd((pod) => this.#podChanged(undefined, pod));
    pods.onUpdate((old, cur) => this.#podChanged(old, cur));
    pods.onDelete((pod) => {
      const set = this.#resolve(pod.metadata?.namespace ?? '', controllerRef(pod));
      if (set !== undefined) this.#queue.add(objectKey(set));
    });
  }

  #resolve(namespace: string, ref: OwnerReference | undefined): KubeObject | undefined {
    if (ref?.kind !== 'StatefulSet') return undefined;
    const set = this.#sets.store.get(namespace, ref.name);
    return set !== undefined && set.metadata?.uid === ref.uid ? set : undefined;
  }

  /** addPod / updatePod: the owner, or for an orphan every set whose selector matches it. */
  #podChanged(old: Pod | undefined, cur: Pod): void {
    const ns = cur.metadata?.namespace ?? '';
    const curRef = controllerRef(cur);
    const oldRef = old === undefined ? undefined : controllerRef(old);
    const refChanged = old !== undefined && !deepEqual(oldRef ?? null, curRef ?? null);
    if (refChanged && oldRef !== undefined) {
      const prev = this.#resolve(ns, oldRef);
      if (prev !== undefined) this.#queue.add(objectKey(prev));
    }
    if (curRef !== undefined) {
      const set = this.#resolve(ns, curRef);
      if (set !== undefined) this.#queue.add(objectKey(set));
      return;
    }
    const labelsChanged = old === undefined || !deepEqual(old.metadata?.labels ?? {}, cur.metadata?.labels ?? {});
    if (!labelsChanged && !refChanged) return;
    for (const set of this.#sets.store.list(ns)) {
      const sel = labelSelectorAsSelector(selectorOf(set));
      if (sel.ok && !sel.selector.empty && sel.selector.matches(cur.metadata?.labels)) this.#queue.add(objectKey(set));
    }
  }

  // ---- sync ----

  async #sync(key: string): Promise<WorkResult | void> {
    const set = this.#sets.store.getByKey(key);
    if (set === undefined) return;
    const sel = labelSelectorAsSelector(selectorOf(set));
    if (!sel.ok) {
      // Upstream records the error and gives up on the key: retrying cannot fix a broken selector.
      this.#log.error({ statefulset: key, err: sel.error }, 'invalid selector');
      return;
    }
    const spec = specView(set);
    await adoptOrphanRevisions(this.#client, set, this.#listRevisions(set, sel.selector).filter((r) => controllerRef(r) === undefined));
    const pods = await this.#claimPods(set, sel.selector);
    await this.#updateStatefulSet(set, spec, sel.selector, pods);
    // Upstream looks again minReadySeconds later; we look exactly when the first ready pod becomes available.
    const now = this.#clock.now();
    let next: number | undefined;
    for (const p of pods) {
      if (spec.minReadySeconds <= 0 || !isRunningAndReady(p) || isRunningAndAvailable(p, spec.minReadySeconds, now)) continue;
      const at = (podReadyTime(p) ?? now) + spec.minReadySeconds * 1000 + 1;
      if (next === undefined || at < next) next = at;
    }
    if (next !== undefined) return { requeueAfterMs: Math.max(1, next - now) };
  }

  /** ControllerRevisions of the namespace matching the selector that are ours or nobody's. */
  #listRevisions(set: KubeObject, selector: Selector): ControllerRevision[] {
    const uid = set.metadata?.uid ?? '';
    return this.#revisions.store.list(set.metadata?.namespace ?? '').filter((r) => {
      if (!selector.matches(r.metadata?.labels)) return false;
      const ref = controllerRef(r);
      return ref === undefined || ref.uid === uid;
    });
  }

  /** getPodsForStatefulSet: ClaimPods with the "named after the set" filter. */
  async #claimPods(set: KubeObject, selector: Selector): Promise<Pod[]> {
    const ns = set.metadata?.namespace ?? '';
    const name = set.metadata?.name ?? '';
    const uid = set.metadata?.uid ?? '';
    const store = this.#pods.store;
    const candidates = [...store.byIndex(CONTROLLER_UID_INDEX, uid), ...store.byIndex(CONTROLLER_UID_INDEX, '')].filter((p) => (p.metadata?.namespace ?? '') === ns);
    const claimed: Pod[] = [];
    let recheck: Promise<void> | undefined;
    for (const pod of candidates) {
      const action = claimDecision(pod, set, selector.matches(pod.metadata?.labels) && isMemberOf(name, pod));
      const podName = pod.metadata?.name ?? '';
      try {
        if (action === 'claimed') claimed.push(pod);
        else if (action === 'release') {
          const body = { metadata: { ownerReferences: [{ $patch: 'delete', uid }], uid: pod.metadata?.uid } };
          await this.#client.patch(BUILTIN.pods, podName, { type: 'strategic', body }, { namespace: ns });
        } else if (action === 'adopt') {
          recheck ??= this.#recheck(set);
          await recheck;
          const body = { metadata: { ownerReferences: [ownerReferenceFor({ ...set, apiVersion: 'apps/v1', kind: 'StatefulSet' })], uid: pod.metadata?.uid } };
          await this.#client.patch(BUILTIN.pods, podName, { type: 'strategic', body }, { namespace: ns });
          claimed.push(pod);
        }
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    return claimed;
  }

  /** RecheckDeletionTimestamp: a set deleted or replaced since the cache saw it adopts nothing. */
  async #recheck(set: KubeObject): Promise<void> {
    const ns = set.metadata?.namespace ?? '';
    const fresh = await this.#client.get(BUILTIN.statefulsets, set.metadata?.name ?? '', { namespace: ns });
    if (fresh.metadata?.uid !== set.metadata?.uid) throw new Error(`original StatefulSet ${ns}/${set.metadata?.name ?? ''} is gone`);
    if (isTerminating(fresh)) throw new Error(`StatefulSet ${ns}/${set.metadata?.name ?? ''} has just been deleted`);
  }

  /** UpdateStatefulSet: revisions, pods, status, history. Answers the status written (or that would be). */
  async #updateStatefulSet(set: KubeObject, spec: StatefulSetSpecView, selector: Selector, pods: Pod[]): Promise<void> {
    const revisions = sortRevisions(this.#listRevisions(set, selector));
    const resolved = await resolveRevisions(this.#client, set, revisions);
    const { current, update, collisionCount } = resolved;
    let status: StatefulSetStatus | undefined;
    let failure: unknown;
    try {
      status = await this.#updatePods(set, spec, current, update, collisionCount, pods);
    } catch (err) {
      failure = err;
    }
    if (status !== undefined) status = await writeStatefulSetStatus(this.#client, set, status, !spec.onDelete);
    await truncateHistory(this.#client, set, spec.revisionHistoryLimit, pods, revisions, resolved);
    if (failure !== undefined) throw failure;
  }

  /**
   * updateStatefulSet: creates, recreates and deletes pods toward the spec, in
   * the order the pod management policy and update strategy allow, and
   * answers the status to record.
   */
  async #updatePods(set: KubeObject, spec: StatefulSetSpecView, current: ControllerRevision, update: ControllerRevision, collisionCount: number, pods: Pod[]): Promise<StatefulSetStatus> {
    const now = this.#clock.now();
    const currentSet = applyRevision(set, current);
    const updateSet = applyRevision(set, update);
    const base = { observedGeneration: set.metadata?.generation ?? 0, currentRevision: nameOf(current), updateRevision: nameOf(update), collisionCount };
    const statusOf = (lists: Pod[][]): StatefulSetStatus => ({ ...base, ...replicaCounts(lists.flat(), spec.minReadySeconds, base.currentRevision, base.updateRevision, now) });

    const end = spec.start + spec.replicas - 1;
    const replicas: (Pod | undefined)[] = new Array<Pod | undefined>(spec.replicas).fill(undefined);
    const condemned: Pod[] = [];
    for (const pod of pods) {
      const ord = ordinalOf(pod);
      if (ord >= spec.start && ord <= end) replicas[ord - spec.start] = pod;
      else if (ord >= 0) condemned.push(pod);
    }
    const setStatus = asRecord(set['status']) ?? {};
    const statusCurrentReplicas = typeof setStatus['currentReplicas'] === 'number' ? setStatus['currentReplicas'] : 0;
    const versioned = (ord: number): Pod => {
      // newVersionedStatefulSetPod: below the partition (or, without a rollingUpdate block, below the current count) pods stay at the current revision.
      const ru = spec.rollingUpdate;
      const keepCurrent = (!spec.onDelete && ru === undefined && ord < spec.start + statusCurrentReplicas) || (ru !== undefined && ord < spec.start + ru.partition);
      return keepCurrent ? newStatefulSetPod(currentSet, ord, nameOf(current)) : newStatefulSetPod(updateSet, ord, nameOf(update));
    };
    const live: Pod[] = replicas.map((p, i) => p ?? versioned(spec.start + i));
    condemned.sort((a, b) => ordinalOf(b) - ordinalOf(a));

    let status = statusOf([pods]);
    const firstUnhealthy = live.find((p) => !isHealthy(p)) ?? [...condemned].reverse().find((p) => !isHealthy(p));
    if (isTerminating(set)) return status;
    const monotonic = !spec.parallel;

    if (await this.#runForAll(live.length, (i) => this.#processReplica(set, live, i, monotonic, spec, now), monotonic)) return statusOf([live, condemned]);
    if (await this.#runForAll(condemned.length, (i) => this.#processCondemned(set, condemned, i, firstUnhealthy, monotonic, spec, now), monotonic)) return statusOf([live, condemned]);
    status = statusOf([live, condemned]);
    if (spec.onDelete) return status;

    const updateMin = spec.rollingUpdate?.partition ?? 0;
    const updateName = nameOf(update);
    if (spec.rollingUpdate?.maxUnavailable !== undefined) {
      const scaled = scaledIntOrPercent(spec.rollingUpdate.maxUnavailable, spec.replicas, false);
      if (!scaled.ok) throw new Error(scaled.error);
      const maxUnavailable = Math.max(1, scaled.value);
      const unavailable = live.filter((p) => !isHealthy(p)).length;
      if (unavailable >= maxUnavailable) return status;
      let budget = maxUnavailable - unavailable;
      for (let target = live.length - 1; target >= updateMin && budget > 0; target--) {
        const pod = live[target] as Pod;
        if (revisionOf(pod) !== updateName && !isTerminating(pod)) {
          await this.#deletePod(set, pod, 'update');
          budget--;
          status.currentReplicas--;
        }
      }
      return status;
    }
    for (let target = live.length - 1; target >= updateMin; target--) {
      const pod = live[target] as Pod;
      if (revisionOf(pod) !== updateName && !isTerminating(pod)) {
        await this.#deletePod(set, pod, 'update');
        status.currentReplicas--;
        return status;
      }
      if (!isHealthy(pod)) return status;
    }
    return status;
  }

  /** runForAll: in order, stopping at the first "exit", or (Parallel) in slow-start batches. */
  async #runForAll(count: number, fn: (i: number) => Promise<Exit>, monotonic: boolean): Promise<Exit> {
    if (monotonic) {
      for (let i = 0; i < count; i++) if (await fn(i)) return true;
      return false;
    }
    let next = 0;
    const result = await slowStartBatch(count, 1, async () => {
      await fn(next++);
    });
    if (result.error !== undefined) throw result.error;
    return false;
  }

  /** processReplica: recreate finished pods, create missing ones, wait for health (OrderedReady), fix identity labels. */
  async #processReplica(set: KubeObject, live: Pod[], i: number, monotonic: boolean, spec: StatefulSetSpecView, now: number): Promise<Exit> {
    const pod = live[i] as Pod;
    if (isFailed(pod) || isSucceeded(pod)) {
      if (!isTerminating(pod)) {
        this.#recorder?.record(set, { type: 'Warning', reason: 'RecreatingFailedPod', note: `StatefulSet ${set.metadata?.namespace ?? ''}/${set.metadata?.name ?? ''} is recreating failed Pod ${pod.metadata?.name ?? ''}`, action: 'Recreate' });
        await this.#deletePod(set, pod, 'recreate');
      }
      // The replacement is created once the old pod is gone from the cache.
      return true;
    }
    if (!isCreated(pod)) {
      const created = await this.#createPod(set, pod);
      if (!created || monotonic) return true;
    }
    if (isTerminating(pod) && monotonic) return true;
    if (!isRunningAndReady(pod) && monotonic) return true;
    if (!isRunningAndAvailable(pod, spec.minReadySeconds, now) && monotonic) return true;
    const missing = isCreated(pod) ? missingIdentityLabels(pod) : {};
    if (Object.keys(missing).length > 0) {
      await this.#client.patch(BUILTIN.pods, pod.metadata?.name ?? '', { type: 'merge', body: { metadata: { labels: missing } } }, { namespace: pod.metadata?.namespace ?? '' });
    }
    return false;
  }

  /** processCondemned: scale down, highest ordinal first; OrderedReady waits for every predecessor's health. */
  async #processCondemned(set: KubeObject, condemned: Pod[], i: number, firstUnhealthy: Pod | undefined, monotonic: boolean, spec: StatefulSetSpecView, now: number): Promise<Exit> {
    const pod = condemned[i] as Pod;
    if (isTerminating(pod)) return monotonic;
    if (!isRunningAndReady(pod) && monotonic && pod !== firstUnhealthy) return true;
    if (!isRunningAndAvailable(pod, spec.minReadySeconds, now) && monotonic && pod !== firstUnhealthy) return true;
    await this.#deletePod(set, pod, 'scale down');
    return true;
  }

  /** Creates one pod; false when the cache has not seen a pod that already exists under that name. */
  async #createPod(set: KubeObject, pod: Pod): Promise<boolean> {
    const name = pod.metadata.name ?? '';
    try {
      await this.#client.create(BUILTIN.pods, pod, { namespace: pod.metadata.namespace ?? '' });
    } catch (err) {
      if (isAlreadyExists(err)) return false;
      this.#recorder?.record(set, { type: 'Warning', reason: 'FailedCreate', note: `create Pod ${name} in StatefulSet ${set.metadata?.name ?? ''} failed error: ${describeError(err)}`, action: 'Create' });
      throw err;
    }
    this.#recorder?.record(set, { type: 'Normal', reason: 'SuccessfulCreate', note: `create Pod ${name} in StatefulSet ${set.metadata?.name ?? ''} successful`, action: 'Create' });
    return true;
  }

  async #deletePod(set: KubeObject, pod: Pod, why: string): Promise<void> {
    const name = pod.metadata?.name ?? '';
    try {
      await this.#client.delete(BUILTIN.pods, name, { namespace: pod.metadata?.namespace ?? '' });
    } catch (err) {
      if (isNotFound(err)) return;
      this.#recorder?.record(set, { type: 'Warning', reason: 'FailedDelete', note: `delete Pod ${name} in StatefulSet ${set.metadata?.name ?? ''} failed error: ${describeError(err)}`, action: 'Delete' });
      throw err;
    }
    this.#log.debug({ statefulset: objectKey(set), pod: name, why }, 'deleted pod');
    this.#recorder?.record(set, { type: 'Normal', reason: 'SuccessfulDelete', note: `delete Pod ${name} in StatefulSet ${set.metadata?.name ?? ''} successful`, action: 'Delete' });
  }
}

