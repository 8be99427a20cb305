/**
 * The Deployment controller of the embedded cluster (k8s.io/kubernetes
 * pkg/controller/deployment), talking to the API server only through HTTP and
 * watches: informers on Deployments, ReplicaSets and Pods → handlers map
 * changes to Deployment keys → a rate-limited work queue → `#sync(key)`.
 *
 * One sync, as upstream's syncDeployment: claim the ReplicaSets matching the
 * selector (adopting orphans, releasing the ones that stopped matching), then
 * - being deleted → status only;
 * - the Progressing condition follows pause / resume;
 * - paused, or `spec.replicas` differs from an active set's desired-replicas
 *   annotation (a scaling event) → `sync`: proportional scaling, no rollout;
 * - otherwise the strategy: RollingUpdate or Recreate (deployment-rollout.ts).
 * A Deployment that keeps failing is dropped after 15 retries (upstream's
 * maxRetries) until its next change. The ReplicaSets it creates are named
 * `<name>-<pod-template-hash>` (pod-template-hash.ts; hash values differ from
 * a real cluster's). Not emulated: the `deprecated.deployment.rollback.to`
 * annotation of extensions/v1beta1 (apps/v1 has no rollbackTo; `kubectl
 * rollout undo` edits the template, which this controller handles).
 * Start reading at `#sync`.
 */
import type { Clock, Timer } from '../../clock/clock.ts';
import type { Races } from '../../clock/races.ts';
import { describeError } from '../../client/errors.ts';
import type { EventRecorder } from '../../client/event-recorder.ts';
import type { KubeClient } from '../../client/http-client.ts';
import { silentLogger, type Logger } from '../../client/logger.ts';
import { BUILTIN } from '../../client/resources.ts';
import { Informer, objectKey } from '../../client/store.ts';
import { QueueLoop } from '../../client/queue-loop.ts';
import type { Runnable } from '../../client/runnable.ts';
import type { WorkQueue } from '../../client/workqueue.ts';
import { deepEqual } from '../../k8s/json.ts';
import { labelSelectorAsSelector } from '../../k8s/label-selector.ts';
import { controllerRef } from '../../k8s/owner.ts';
import type { KubeObject, LabelSelector, OwnerReference, Pod } from '../../k8s/types.ts';
import { componentClient, componentRecorder } from './component-client.ts';
import { claimObjects } from './controller-ref-manager.ts';
import { DeploymentRollout, type PodMap } from './deployment-rollout.ts';
import { statusOf } from './deployment-status.ts';
import { isPaused, isRecreate, isRollingUpdate, specOf } from './deployment-util.ts';
import type { ControllerFactory } from './component.ts';

export const DEPLOYMENT_CONTROLLER = 'deployment-controller';
/** Failed syncs of one Deployment retried before it is dropped until its next change. */
export const MAX_RETRIES = 15;
const CONTROLLER_UID_INDEX = 'controllerUid';

export interface DeploymentControllerOptions {
  client: KubeClient;
  clock: Clock;
  /** Race mode: a random delay before each sync (the cluster's `races`). */
  races?: Races | undefined;
  logger?: Logger;
  /** Concurrent syncs (default 5, kube-controller-manager's `--concurrent-deployment-syncs`). */
  workers?: number;
  /** Write ScalingReplicaSet and other events (default true). */
  recordEvents?: boolean;
}

const selectorOf = (obj: KubeObject): LabelSelector | undefined => specOf(obj)['selector'] as LabelSelector | undefined;
const deleting = (obj: KubeObject): boolean => obj.metadata?.deletionTimestamp !== undefined && obj.metadata.deletionTimestamp !== null;

export class DeploymentController implements Runnable {
  readonly name = DEPLOYMENT_CONTROLLER;
  readonly #client: KubeClient;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #workers: number;
  readonly #recorder: EventRecorder | undefined;
  readonly #dInformer: Informer;
  readonly #rsInformer: Informer;
  readonly #podInformer: Informer<Pod>;
  readonly #loop: QueueLoop;
  readonly #queue: WorkQueue<string>;
  readonly #rollout: DeploymentRollout;
  /** Pending progress-deadline checks by key (see `#scheduleProgressCheck`). */
  readonly #progressChecks = new Map<string, Timer>();

  constructor(options: DeploymentControllerOptions) {
    this.#clock = options.clock;
    this.#client = componentClient(options.client, options.clock, DEPLOYMENT_CONTROLLER);
    this.#log = options.logger ?? silentLogger;
    this.#workers = options.workers ?? 5;
    this.#recorder = options.recordEvents === false ? undefined : componentRecorder(this.#client, DEPLOYMENT_CONTROLLER, options.logger);
    const common = { client: this.#client, log: this.#log };
    const byController = { [CONTROLLER_UID_INDEX]: (obj: KubeObject) => [controllerRef(obj)?.uid ?? ''] };
    this.#dInformer = new Informer({ ...common, ref: BUILTIN.deployments, name: `${DEPLOYMENT_CONTROLLER} deployments` });
    this.#rsInformer = new Informer({ ...common, ref: BUILTIN.replicasets, name: `${DEPLOYMENT_CONTROLLER} replicasets`, indexes: byController });
    this.#podInformer = new Informer<Pod>({ ...common, ref: BUILTIN.pods, name: `${DEPLOYMENT_CONTROLLER} pods`, indexes: byController });
    this.#loop = new QueueLoop({
      name: DEPLOYMENT_CONTROLLER,
      clock: this.#clock,
      log: this.#log,
      races: options.races,
      workers: this.#workers,
      informers: [this.#dInformer, this.#rsInformer, this.#podInformer],
      handle: (key, ctx) => this.#handle(key, ctx.retries),
      onStopping: () => {
        for (const timer of this.#progressChecks.values()) timer.cancel();
        this.#progressChecks.clear();
      },
    });
    this.#queue = this.#loop.queue;
    this.#rollout = new DeploymentRollout({
      client: this.#client,
      clock: this.#clock,
      recorder: this.#recorder,
      log: this.#log,
      cachedReplicaSet: (namespace, name) => this.#rsInformer.store.get(namespace, name),
      progressCheckAfter: (d, ms) => this.#scheduleProgressCheck(objectKey(d), ms),
      cancelProgressCheck: (d) => this.#cancelProgressCheck(objectKey(d)),
      requeueRateLimited: (d) => this.#queue.addRateLimited(objectKey(d)),
    });
    this.#wireHandlers();
  }

  /** Starts the informers; resolves once every cache is filled and the workers run. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#loop.start(signal);
  }

  /** Ends every watch, timer (progress checks included) and worker; resolves when all are gone. */
  stop(): Promise<void> {
    return this.#loop.stop();
  }

  hasSynced(): boolean {
    return this.#dInformer.store.hasSynced() && this.#rsInformer.store.hasSynced() && this.#podInformer.store.hasSynced();
  }

  // ---- event handlers ----

  #wireHandlers(): void {
    const enqueue = (d: KubeObject) => this.#queue.add(objectKey(d));
    this.#dInformer.store.onAdd(enqueue);
    this.#dInformer.store.onUpdate((_old, cur) => enqueue(cur));
    this.#dInformer.store.onDelete((d) => {
      this.#cancelProgressCheck(objectKey(d));
      enqueue(d);
    });
    const rsStore = this.#rsInformer.store;
    rsStore.onAdd((rs) => {
      if (deleting(rs)) return this.#replicaSetDeleted(rs);
      const ref = controllerRef(rs);
      if (ref !== undefined) {
        const d = this.#resolve(rs.metadata?.namespace ?? '', ref);
        if (d !== undefined) enqueue(d);
        return;
      }
      for (const d of this.#deploymentsMatching(rs)) enqueue(d);
    });
    rsStore.onUpdate((old, cur) => {
      const ns = cur.metadata?.namespace ?? '';
      const oldRef = controllerRef(old);
      const curRef = controllerRef(cur);
      const refChanged = !deepEqual(oldRef ?? null, curRef ?? null);
      if (refChanged && oldRef !== undefined) {
        const d = this.#resolve(ns, oldRef);
        if (d !== undefined) enqueue(d);
      }
      if (curRef !== undefined) {
        const d = this.#resolve(ns, curRef);
        if (d !== undefined) enqueue(d);
        return;
      }
      const labelsChanged = !deepEqual(old.metadata?.labels ?? {}, cur.metadata?.labels ?? {});
      if (labelsChanged || refChanged) for (const d of this.#deploymentsMatching(cur)) enqueue(d);
    });
    rsStore.onDelete((rs) => this.#replicaSetDeleted(rs));
    this.#podInformer.store.onDelete((pod) => this.#podDeleted(pod));
  }

  #resolve(namespace: string, ref: OwnerReference | undefined): KubeObject | undefined {
    if (ref?.kind !== 'Deployment') return undefined;
    const d = this.#dInformer.store.get(namespace, ref.name);
    return d !== undefined && d.metadata?.uid === ref.uid ? d : undefined;
  }

  /** Deployments of the set's namespace whose (non-empty) selector matches its labels. */
  #deploymentsMatching(rs: KubeObject): KubeObject[] {
    return this.#dInformer.store.list(rs.metadata?.namespace ?? '').filter((d) => {
      const sel = labelSelectorAsSelector(selectorOf(d));
      return sel.ok && !sel.selector.empty && sel.selector.matches(rs.metadata?.labels);
    });
  }

  #replicaSetDeleted(rs: KubeObject): void {
    const d = this.#resolve(rs.metadata?.namespace ?? '', controllerRef(rs));
    if (d !== undefined) this.#queue.add(objectKey(d));
  }

  /** A Recreate rollout waits for the old pods to be gone: the last one going away wakes it. */
  #podDeleted(pod: Pod): void {
    const ns = pod.metadata?.namespace ?? '';
    const ref = controllerRef(pod);
    if (ref?.kind !== 'ReplicaSet') return;
    const rs = this.#rsInformer.store.get(ns, ref.name);
    if (rs === undefined || rs.metadata?.uid !== ref.uid) return;
    const d = this.#resolve(ns, controllerRef(rs));
    if (d === undefined || !isRecreate(d)) return;
    const podMap = this.#podMap(d, this.#ownedReplicaSets(d));
    let pods = 0;
    for (const list of podMap.values()) pods += list.length;
    if (pods === 0) this.#queue.add(objectKey(d));
  }

  /**
   * Upstream re-queues a rollout without progress for when its deadline
   * passes. Ours is a foreground timer that a later sync cancels once the
   * check is moot, so a virtual clock's settle() waits for a stuck rollout
   * to time out but does not jump ahead for one that completed meanwhile.
   */
  #scheduleProgressCheck(key: string, ms: number): void {
    this.#cancelProgressCheck(key);
    if (this.#loop.stopping) return;
    const timer = this.#clock.setTimeout(
      () => {
        if (this.#progressChecks.get(key) !== timer) return;
        this.#progressChecks.delete(key);
        this.#queue.add(key);
      },
      ms,
      { name: `${DEPLOYMENT_CONTROLLER} progress check ${key}` },
    );
    this.#progressChecks.set(key, timer);
  }

  #cancelProgressCheck(key: string): void {
    this.#progressChecks.get(key)?.cancel();
    this.#progressChecks.delete(key);
  }

  // ---- sync ----

  async #handle(key: string, retries: number): Promise<void> {
    try {
      await this.#sync(key);
    } catch (err) {
      if (retries < MAX_RETRIES) throw err;
      this.#log.warn({ deployment: key, err: describeError(err) }, 'dropping deployment out of the queue');
    }
  }

  async #sync(key: string): Promise<void> {
    const cached = this.#dInformer.store.getByKey(key);
    if (cached === undefined) return;
    const d = structuredClone(cached);
    const sel = labelSelectorAsSelector(selectorOf(d));
    if (!sel.ok) throw new Error(`deployment ${key} has invalid label selector: ${sel.error}`);
    if (sel.selector.empty) {
      this.#recorder?.record(d, { type: 'Warning', reason: 'SelectingAll', note: 'This deployment is selecting all pods. A non-empty selector is required.', action: 'Sync' });
      const status = statusOf(d);
      if ((status.observedGeneration ?? 0) < (d.metadata?.generation ?? 0)) {
        d['status'] = { ...status, observedGeneration: d.metadata?.generation ?? 0 };
        await this.#rollout.updateStatus(d);
      }
      return;
    }
    const rsList = await this.#claimReplicaSets(d, sel.selector);
    const podMap = this.#podMap(d, rsList);
    if (deleting(d)) return this.#rollout.syncStatusOnly(d, rsList);
    await this.#rollout.checkPausedConditions(d);
    if (isPaused(d)) return this.#rollout.sync(d, rsList);
    if (await this.#rollout.isScalingEvent(d, rsList)) return this.#rollout.sync(d, rsList);
    if (isRecreate(d)) return this.#rollout.rolloutRecreate(d, rsList, podMap);
    if (isRollingUpdate(d)) return this.#rollout.rolloutRolling(d, rsList);
    throw new Error(`unexpected deployment strategy type: ${String((specOf(d)['strategy'] as { type?: unknown } | undefined)?.type)}`);
  }

  /** getReplicaSetsForDeployment: the namespace's sets, adopted or released by selector; private copies. */
  async #claimReplicaSets(d: KubeObject, selector: Parameters<typeof claimObjects>[1]['selector']): Promise<KubeObject[]> {
    const candidates = this.#rsInformer.store.list(d.metadata?.namespace ?? '');
    const claim = await claimObjects(candidates, { client: this.#client, controller: d, controllerRef: BUILTIN.deployments, objectRef: BUILTIN.replicasets, selector });
    if (claim.errors.length > 0) throw claim.errors[0];
    return claim.claimed.map((rs) => structuredClone(rs));
  }

  #ownedReplicaSets(d: KubeObject): KubeObject[] {
    return this.#rsInformer.store.byIndex(CONTROLLER_UID_INDEX, d.metadata?.uid ?? '');
  }

  /** getPodMapForDeployment: pods matching the Deployment's selector, by the uid of their ReplicaSet. */
  #podMap(d: KubeObject, rsList: readonly KubeObject[]): PodMap {
    const map: PodMap = new Map();
    for (const rs of rsList) map.set(rs.metadata?.uid ?? '', []);
    const sel = labelSelectorAsSelector(selectorOf(d));
    if (!sel.ok) return map;
    for (const pod of this.#podInformer.store.list(d.metadata?.namespace ?? '')) {
      if (!sel.selector.matches(pod.metadata?.labels)) continue;
      const uid = controllerRef(pod)?.uid;
      if (uid !== undefined) map.get(uid)?.push(pod);
    }
    return map;
  }
}

/** The Deployment controller as a component of the embedded cluster (registry.ts). */
export const deploymentController: ControllerFactory = {
  name: DEPLOYMENT_CONTROLLER,
  create: (context) => new DeploymentController({ client: context.client, clock: context.clock, logger: context.logger, races: context.races }),
};
