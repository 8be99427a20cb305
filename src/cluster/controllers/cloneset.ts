/**
 * OpenKruise's CloneSet controller (`apps.kruise.io/v1alpha1`, kruise
 * pkg/controller/cloneset) in the embedded cluster, talking to the API
 * server only through HTTP and watches: informers on CloneSets, and — from
 * the first CloneSet on — on Pods and ControllerRevisions → handlers map
 * changes to CloneSet keys → work queue → `#sync(key)`. On start it installs
 * the CloneSet CRD (cloneset-crd.ts) unless one exists, as a cluster with
 * Kruise installed would have it.
 *
 * One sync, as kruise's doReconcile:
 * 1. nothing while creations or deletions it asked for are not yet seen
 *    (expectations.ts) or pods it patched are not yet seen at that version
 *    (resource-version-expectations.ts);
 * 2. its active pods: the ones it owns, minus those whose labels stopped
 *    matching the selector (released; a CloneSet never adopts orphans);
 * 3. revisions (controller-revisions.ts / controller-history.ts): the update
 *    revision is the live template's, the current one `status.currentRevision`'s;
 * 4. scale (cloneset-plan.ts `planScale`): create the missing pods, the
 *    partition's share at the current revision, named `<set>-<id>`; else
 *    delete the pods specified to delete (`scaleStrategy.podsToDelete` or
 *    the `apps.kruise.io/specified-delete` label); else scale in, the pods
 *    chosen by the CloneSet order with pod-deletion-cost
 *    (k8s/cloneset-pod-ranking.ts);
 * 5. only when the round scaled nothing, update (`planUpdate`): mark old
 *    pods beyond the partition specified to delete, within maxUnavailable —
 *    later rounds delete them and create their replacements at the update
 *    revision (maxSurge creates the replacements first). ReCreate only:
 *    InPlaceIfPossible / InPlaceOnly sets are updated the same way;
 * 6. status (cloneset-status.ts) when it changed; names in `podsToDelete`
 *    that match no active pod are removed from the spec; old revisions
 *    beyond `revisionHistoryLimit` that no pod uses are deleted.
 * A failed round throws, so the key comes back with the queue's back-off.
 * Not emulated: lifecycle hooks, PVCs from volumeClaimTemplates, image
 * pre-download, the topology-spread scale-in ranker, priority/scatter
 * update order. Start reading at `#sync`.
 */
import { randomInt } from 'node:crypto';
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
import { byName } from '../../k8s/by-name.ts';
import { isCloneSetPodUpdateReady } from '../../k8s/cloneset-pod-ranking.ts';
import { deepEqual } from '../../k8s/json.ts';
import { labelSelectorAsSelector, type Selector } from '../../k8s/label-selector.ts';
import { controllerRef } from '../../k8s/owner.ts';
import { isPodActive, isPodReady, podReadyTime } from '../../k8s/pod.ts';
import { asRecord } from '../../k8s/raw-json.ts';
import type { KubeObject, LabelSelector, OwnerReference, Pod } from '../../k8s/types.ts';
import { CLONESET_REF, ensureCloneSetCrd } from './cloneset-crd.ts';
import { planScale, planUpdate } from './cloneset-plan.ts';
import { CLONESET_API_VERSION, CLONESET_KIND, cloneSetSpec, isAtRevision, newCloneSetPod, newInstanceIds, SPECIFIED_DELETE_LABEL, type CloneSetSpecView } from './cloneset-pods.ts';
import { calculateStatus, truncatePodsToDelete, writeCloneSetStatus } from './cloneset-status.ts';
import { componentClient, componentRecorder } from './component-client.ts';
import type { ControllerFactory } from './component.ts';
import { resolveSetRevisions, truncateSetHistory, type SetRevisions } from './controller-history.ts';
import { claimObjects } from './controller-ref-manager.ts';
import { applyRevision, nameOf, newControllerRevision, sortRevisions, type ControllerRevision } from './controller-revisions.ts';
import { ControllerExpectations } from './expectations.ts';
import { ResourceVersionExpectations } from './resource-version-expectations.ts';
import { slowStartBatch, SLOW_START_INITIAL_BATCH_SIZE } from './slow-start.ts';

export const CLONESET_CONTROLLER = 'cloneset-controller';
const CONTROLLER_UID_INDEX = 'controllerUid';
const OWNER = { apiVersion: CLONESET_API_VERSION, kind: CLONESET_KIND };

export interface CloneSetControllerOptions {
  client: KubeClient;
  clock: Clock;
  /** Race mode: a random delay before each sync (the cluster's `races`). */
  races?: Races | undefined;
  logger?: Logger;
  /** Concurrent syncs (default 3, kruise-manager's `--cloneset-workers`). */
  workers?: number;
  /** Write SuccessfulCreate / SuccessfulDelete / … events (default true). */
  recordEvents?: boolean;
  /** A number in [0, 1) for instance ids (default: crypto-random). */
  random?: () => number;
}

const controllerUidOf = (obj: KubeObject): string[] => [controllerRef(obj)?.uid ?? ''];
const selectorOf = (obj: KubeObject): LabelSelector | undefined => asRecord(obj['spec'])?.['selector'] as LabelSelector | undefined;
const isDeleting = (obj: KubeObject): boolean => obj.metadata?.deletionTimestamp !== undefined && obj.metadata?.deletionTimestamp !== null;

export class CloneSetController implements Runnable {
  readonly name = CLONESET_CONTROLLER;
  readonly expectations: ControllerExpectations;
  readonly #written: ResourceVersionExpectations;
  readonly #client: KubeClient;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #workers: number;
  readonly #random: () => number;
  readonly #recorder: EventRecorder | undefined;
  readonly #sets: Informer;
  readonly #pods: Informer<Pod>;
  readonly #revisions: Informer<ControllerRevision>;
  readonly #loop: QueueLoop;
  readonly #queue: WorkQueue<string>;
  #podsWatched: Promise<void> | undefined;

  constructor(options: CloneSetControllerOptions) {
    this.#clock = options.clock;
    this.#client = componentClient(options.client, options.clock, CLONESET_CONTROLLER);
    this.#log = options.logger ?? silentLogger;
    this.#workers = options.workers ?? 3;
    this.#random = options.random ?? (() => randomInt(1 << 30) / (1 << 30));
    this.#recorder = options.recordEvents === false ? undefined : componentRecorder(this.#client, CLONESET_CONTROLLER, options.logger);
    this.expectations = new ControllerExpectations(() => this.#clock.now());
    this.#written = new ResourceVersionExpectations(() => this.#clock.now());
    const common = { client: this.#client, log: this.#log, indexes: { [CONTROLLER_UID_INDEX]: controllerUidOf } };
    this.#sets = new Informer({ ...common, ref: CLONESET_REF, name: `${CLONESET_CONTROLLER} clonesets` });
    this.#pods = new Informer<Pod>({ ...common, ref: BUILTIN.pods, name: `${CLONESET_CONTROLLER} pods` });
    this.#revisions = new Informer<ControllerRevision>({ ...common, ref: BUILTIN.controllerrevisions, name: `${CLONESET_CONTROLLER} controllerrevisions` });
    this.#loop = new QueueLoop({
      name: CLONESET_CONTROLLER,
      clock: this.#clock,
      log: this.#log,
      races: options.races,
      workers: this.#workers,
      // Not owned by the loop: pods and revisions are watched only once there is a CloneSet (`#watchPods`).
      waitForSync: async (signal) => {
        await ensureCloneSetCrd(this.#client);
        signal.throwIfAborted();
        this.#sets.start();
        await this.#sets.waitForSync(signal);
      },
      handle: (key) => this.#sync(key),
      onStopped: async () => {
        await Promise.all([this.#sets.stop(), this.#pods.stop(), this.#revisions.stop()]);
      },
    });
    this.#queue = this.#loop.queue;
    this.#wireHandlers();
  }

  /** Installs the CRD if missing and starts watching CloneSets; resolves once that cache is filled and the workers run. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#loop.start(signal);
  }

  /** Ends every watch, timer and worker; resolves when all are gone. */
  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** Pods and revisions are watched only once there is a CloneSet: a cluster without one pays nothing. */
  #watchPods(): Promise<void> {
    this.#podsWatched ??= (async () => {
      this.#pods.start();
      this.#revisions.start();
      await Promise.all([this.#pods.waitForSync(), this.#revisions.waitForSync()]);
    })();
    return this.#podsWatched;
  }

  // ---- event handlers: map changes to CloneSet keys ----

  #wireHandlers(): void {
    const sets = this.#sets.store;
    sets.onAdd((cs) => {
      void this.#watchPods();
      this.#queue.add(objectKey(cs));
    });
    sets.onUpdate((old, cur) => {
      if (old.metadata?.uid !== cur.metadata?.uid) this.#forget(objectKey(old));
      this.#queue.add(objectKey(cur));
    });
    sets.onDelete((cs) => {
      this.#forget(objectKey(cs));
      this.#queue.add(objectKey(cs));
    });
    const pods = this.#pods.store;
    pods.onAdd((pod) => {
      if (isDeleting(pod)) return this.#podGone(pod);
      const cs = this.#resolve(pod.metadata?.namespace ?? '', controllerRef(pod));
      if (cs === undefined) return;
      this.expectations.creationObserved(objectKey(cs));
      this.#queue.add(objectKey(cs));
    });
    pods.onUpdate((old, cur) => {
      const ns = cur.metadata?.namespace ?? '';
      const oldRef = controllerRef(old);
      const curRef = controllerRef(cur);
      if (oldRef !== undefined && !deepEqual(oldRef, curRef ?? null)) {
        const prev = this.#resolve(ns, oldRef);
        if (prev !== undefined) this.#queue.add(objectKey(prev));
      }
      if (isDeleting(cur)) return this.#podGone(cur);
      const cs = this.#resolve(ns, curRef);
      if (cs !== undefined) this.#queue.add(objectKey(cs));
    });
    pods.onDelete((pod) => this.#podGone(pod));
  }

  #forget(key: string): void {
    this.expectations.delete(key);
    this.#written.delete(key);
  }

  #resolve(namespace: string, ref: OwnerReference | undefined): KubeObject | undefined {
    if (ref?.kind !== CLONESET_KIND) return undefined;
    const cs = this.#sets.store.get(namespace, ref.name);
    return cs !== undefined && cs.metadata?.uid === ref.uid ? cs : undefined;
  }

  #podGone(pod: Pod): void {
    const cs = this.#resolve(pod.metadata?.namespace ?? '', controllerRef(pod));
    if (cs === undefined) return;
    this.expectations.deletionObserved(objectKey(cs), objectKey(pod));
    this.#queue.add(objectKey(cs));
  }

  // ---- sync ----

  async #sync(key: string): Promise<WorkResult | void> {
    const cs = this.#sets.store.getByKey(key);
    if (cs === undefined) return this.#forget(key);
    const sel = labelSelectorAsSelector(selectorOf(cs));
    if (!sel.ok) {
      // Kruise gives up on the key: retrying cannot fix a broken selector.
      this.#log.error({ cloneset: key, err: sel.error }, 'invalid selector');
      return;
    }
    const templateLabels = asRecord(asRecord(asRecord(cs['spec'])?.['template'])?.['metadata'])?.['labels'] as Record<string, string> | undefined;
    if (sel.selector.empty || !sel.selector.matches(templateLabels)) {
      // Kruise's validating webhook refuses such a set; here the pods it made would be released as
      // soon as they exist, and replaced, without end.
      this.#event(cs, 'Warning', 'InvalidSelector', '`selector` does not match template `labels`: no pods are created');
      return;
    }
    await this.#watchPods();
    // The pods' own watch events sync the set again once the writes show up.
    if (!this.expectations.satisfied(key)) return;
    const spec = cloneSetSpec(cs);
    const pods = await this.#claimPods(cs, sel.selector);
    const sorted = sortRevisions(this.#revisionsOf(cs));
    const revisions = await resolveSetRevisions(this.#client, cs, CLONESET_KIND, sorted, (n, collisions) => newControllerRevision(cs, OWNER, n, collisions));
    if (!this.#written.satisfied(key, pods)) return;

    let scaleError: unknown;
    let updateError: unknown;
    if (!isDeleting(cs)) {
      let scaled = false;
      try {
        scaled = await this.#scale(key, cs, spec, pods, revisions);
      } catch (err) {
        scaleError = err;
      }
      if (!scaled) {
        try {
          await this.#update(key, cs, spec, pods, revisions);
        } catch (err) {
          updateError = err;
        }
      }
    }
    const now = this.#clock.now();
    const status = calculateStatus(cs, {
      spec,
      pods,
      currentRevision: nameOf(revisions.current),
      updateRevision: nameOf(revisions.update),
      collisionCount: revisions.collisionCount,
      labelSelector: sel.selector.toString(),
      now,
      ...(scaleError === undefined ? {} : { scaleError: describeError(scaleError) }),
      ...(updateError === undefined ? {} : { updateError: describeError(updateError) }),
    });
    await writeCloneSetStatus(this.#client, cs, status);
    await truncatePodsToDelete(this.#client, cs, spec, pods).catch((err: unknown) => this.#log.warn({ cloneset: key, err: describeError(err) }, 'cannot truncate podsToDelete'));
    const live = new Set([nameOf(revisions.current), nameOf(revisions.update), ...sorted.filter((r) => pods.some((p) => isAtRevision(p, nameOf(r)))).map(nameOf)]);
    await truncateSetHistory(this.#client, cs, spec.revisionHistoryLimit, live, sorted).catch((err: unknown) => this.#log.warn({ cloneset: key, err: describeError(err) }, 'cannot truncate history'));
    const failure = scaleError ?? updateError;
    if (failure !== undefined) throw failure;
    return this.#availabilityRecheck(spec, pods, now);
  }

  /** Looks again exactly when the first ready pod becomes available (Kruise: minReadySeconds later). */
  #availabilityRecheck(spec: CloneSetSpecView, pods: readonly Pod[], now: number): WorkResult | void {
    if (spec.minReadySeconds <= 0) return;
    let next: number | undefined;
    for (const p of pods) {
      if (!isPodReady(p) || isCloneSetPodUpdateReady(p, spec.minReadySeconds, now)) continue;
      const at = (podReadyTime(p) ?? now) + spec.minReadySeconds * 1000 + 1;
      if (next === undefined || at < next) next = at;
    }
    if (next !== undefined) return { requeueAfterMs: Math.max(1, next - now) };
  }

  /** The active pods the set owns, by name; owned pods that stopped matching are released. */
  async #claimPods(cs: KubeObject, selector: Selector): Promise<Pod[]> {
    const ns = cs.metadata?.namespace ?? '';
    const owned = this.#pods.store.byIndex(CONTROLLER_UID_INDEX, cs.metadata?.uid ?? '').filter((p) => (p.metadata?.namespace ?? '') === ns && isPodActive(p));
    const claim = await claimObjects(owned, { client: this.#client, controller: cs, controllerRef: CLONESET_REF, objectRef: BUILTIN.pods, selector });
    if (claim.errors.length > 0) throw claim.errors[0];
    return claim.claimed.sort(byName);
  }

  #revisionsOf(cs: KubeObject): ControllerRevision[] {
    return this.#revisions.store.byIndex(CONTROLLER_UID_INDEX, cs.metadata?.uid ?? '').filter((r) => (r.metadata?.namespace ?? '') === (cs.metadata?.namespace ?? ''));
  }

  /** One round of scaling; true when it changed something (then no update this round). */
  async #scale(key: string, cs: KubeObject, spec: CloneSetSpecView, pods: readonly Pod[], revisions: SetRevisions): Promise<boolean> {
    const plan = planScale(spec, pods, nameOf(revisions.update), this.#clock.now());
    if (plan.kind === 'create') {
      if (plan.wanted > plan.total) this.#event(cs, 'Warning', 'ScaleUpLimited', `scaleUp is limited because of scaleStrategy.maxUnavailable, limit: ${plan.total}`);
      return (await this.#createPods(key, cs, pods, plan.total, plan.current, revisions)) > 0;
    }
    if (plan.kind === 'delete') return this.#deletePods(key, cs, plan.pods);
    return false;
  }

  /** createPods: `total` pods, the first `current` (at most) at the current revision, in slow-start batches. */
  async #createPods(key: string, cs: KubeObject, pods: readonly Pod[], total: number, current: number, revisions: SetRevisions): Promise<number> {
    if (total <= 0) return 0;
    const ids = newInstanceIds(total, pods, this.#random);
    const atCurrent = Math.min(current, total);
    const currentSet = applyRevision(cs, revisions.current);
    const updateSet = applyRevision(cs, revisions.update);
    const queue = ids.map((id, i) => (i < atCurrent ? newCloneSetPod(currentSet, nameOf(revisions.current), id) : newCloneSetPod(updateSet, nameOf(revisions.update), id)));
    this.expectations.expectCreations(key, total);
    const result = await slowStartBatch(total, SLOW_START_INITIAL_BATCH_SIZE, async () => {
      const pod = queue.shift();
      if (pod === undefined) return;
      try {
        await this.#client.create<Pod>(BUILTIN.pods, pod, { namespace: pod.metadata.namespace ?? '' });
        this.#event(cs, 'Normal', 'SuccessfulCreate', `succeed to create pod ${pod.metadata.name ?? ''}`);
      } catch (err) {
        this.#event(cs, 'Warning', 'FailedCreate', `failed to create pod: ${describeError(err)}`);
        throw err;
      }
    });
    // Pods never attempted (or refused) will not show up in the watch: stop waiting for them.
    for (let i = result.successes; i < total; i++) this.expectations.creationObserved(key);
    if (result.error !== undefined && result.successes === 0) throw result.error;
    if (result.error !== undefined) this.#log.warn({ cloneset: key, err: describeError(result.error) }, 'some pods were not created');
    return result.successes;
  }

  /** deletePods: one by one; the first failure ends the round (and fails it). */
  async #deletePods(key: string, cs: KubeObject, victims: readonly Pod[]): Promise<boolean> {
    this.expectations.expectDeletions(key, victims.map((p) => objectKey(p)));
    let deleted = 0;
    for (const [i, pod] of victims.entries()) {
      const name = pod.metadata?.name ?? '';
      try {
        await this.#client.delete(BUILTIN.pods, name, { namespace: pod.metadata?.namespace ?? '' });
        deleted++;
        this.#event(cs, 'Normal', 'SuccessfulDelete', `succeed to delete pod ${name}`);
      } catch (err) {
        // A pod already gone, or this one and the ones not attempted: never observed as our deletions.
        if (isNotFound(err)) {
          this.expectations.deletionObserved(key, objectKey(pod));
          continue;
        }
        for (const rest of victims.slice(i)) this.expectations.deletionObserved(key, objectKey(rest));
        this.#event(cs, 'Warning', 'FailedDelete', `failed to delete pod ${name}: ${describeError(err)}`);
        throw err;
      }
    }
    return deleted > 0;
  }

  /** One round of updating: the chosen old pods are marked to be recreated. */
  async #update(key: string, cs: KubeObject, spec: CloneSetSpecView, pods: readonly Pod[], revisions: SetRevisions): Promise<void> {
    const update = nameOf(revisions.update);
    for (const pod of planUpdate(spec, pods, update, this.#clock.now())) {
      if (pod.metadata?.labels?.[SPECIFIED_DELETE_LABEL] !== undefined) continue;
      const name = pod.metadata?.name ?? '';
      try {
        const body = { metadata: { labels: { [SPECIFIED_DELETE_LABEL]: 'true' } } };
        const patched = await this.#client.patch<Pod>(BUILTIN.pods, name, { type: 'merge', body }, { namespace: pod.metadata?.namespace ?? '' });
        this.#written.expect(key, patched);
        this.#event(cs, 'Normal', 'SuccessfulUpdatePodReCreate', `successfully patch pod ${name} specified-delete for update(revision ${update})`);
      } catch (err) {
        if (isNotFound(err)) continue;
        this.#event(cs, 'Warning', 'FailedUpdatePodReCreate', `failed to patch pod specified-delete ${name} for update(revision ${update}): ${describeError(err)}`);
        throw err;
      }
    }
  }

  #event(cs: KubeObject, type: 'Normal' | 'Warning', reason: string, note: string): void {
    this.#recorder?.record({ ...cs, apiVersion: CLONESET_API_VERSION, kind: CLONESET_KIND }, { type, reason, note, action: reason });
  }
}

/** The CloneSet controller as a component of the embedded cluster (registry.ts). */
export const cloneSetController: ControllerFactory = {
  name: CLONESET_CONTROLLER,
  create: (context) => {
    const races = context.races;
    // Race mode: instance ids (the pods' names) drawn from the seed, so that a seed replays the same pods.
    return new CloneSetController({ client: context.client, clock: context.clock, logger: context.logger, races, ...(races === undefined ? {} : { random: () => races.rank(`${CLONESET_CONTROLLER} instance ids`) }) });
  },
};
