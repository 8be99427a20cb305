/**
 * The ReplicaSet controller of the embedded cluster (k8s.io/kubernetes
 * pkg/controller/replicaset), talking to the API server only through HTTP and
 * watches: informers on ReplicaSets and Pods → event handlers map changes to
 * ReplicaSet keys → a rate-limited work queue → `sync(key)`, which re-reads
 * the caches and computes everything from observed state.
 *
 * One sync, as upstream's syncReplicaSet:
 * 1. the set's active pods (its own and the orphans of its namespace) are
 *    claimed: matching orphans adopted, owned pods that stopped matching
 *    released (controller-ref-manager.ts);
 * 2. only when its expectations are satisfied (expectations.ts) and it is not
 *    being deleted, the difference to `spec.replicas` is closed: creations in
 *    slow-start batches (slow-start.ts), at most `burstReplicas` per round;
 *    deletions, in parallel, of the pods ranked first by the upstream
 *    scale-down order, where the co-location rank counts the pods of every
 *    ReplicaSet with the same controller (`getIndirectlyRelatedPods`);
 * 3. status is written (replicaset-status.ts) with `ReplicaFailure` when the
 *    round failed; a set whose pods are ready but not yet available after
 *    minReadySeconds is looked at again then.
 * A failed round throws, so the key comes back with the queue's exponential
 * back-off: a webhook that rejects every pod costs one create per attempt.
 * Start reading at `#sync`.
 */
import type { Clock } from '../../clock/clock.ts';
import type { Races } from '../../clock/races.ts';
import { describeError, isNotFound, isTimeout, ApiError } from '../../client/errors.ts';
import type { EventRecorder } from '../../client/event-recorder.ts';
import type { KubeClient } from '../../client/http-client.ts';
import { silentLogger, type Logger } from '../../client/logger.ts';
import { BUILTIN } from '../../client/resources.ts';
import { Informer, objectKey } from '../../client/store.ts';
import { QueueLoop } from '../../client/queue-loop.ts';
import type { Runnable } from '../../client/runnable.ts';
import type { WorkQueue } from '../../client/workqueue.ts';
import { deepEqual } from '../../k8s/json.ts';
import { labelSelectorAsSelector, type Selector } from '../../k8s/label-selector.ts';
import { controllerRef, ownerReferenceFor } from '../../k8s/owner.ts';
import { isPodActive, isPodReady } from '../../k8s/pod.ts';
import { podsToDeleteOnScaleDown } from '../../k8s/pod-ranking.ts';
import { asRecord } from '../../k8s/raw-json.ts';
import type { KubeObject, LabelSelector, OwnerReference, Pod } from '../../k8s/types.ts';
import { componentClient, componentRecorder } from './component-client.ts';
import { claimObjects } from './controller-ref-manager.ts';
import { ControllerExpectations } from './expectations.ts';
import { calculateStatus, minReadySeconds, specReplicas, statusNeedsWrite, type ReplicaSetStatus } from './replicaset-status.ts';
import type { ControllerFactory } from './component.ts';
import { slowStartBatch, SLOW_START_INITIAL_BATCH_SIZE, type SlowStartResult } from './slow-start.ts';

export const REPLICASET_CONTROLLER = 'replicaset-controller';
/** Upstream's cap on creations or deletions per sync. */
export const BURST_REPLICAS = 500;
/** Index of pods and ReplicaSets by their controller's uid ('' for orphans). */
export const CONTROLLER_UID_INDEX = 'controllerUid';
const STATUS_UPDATE_RETRIES = 1;

export interface ReplicaSetControllerOptions {
  client: KubeClient;
  clock: Clock;
  /** Race mode: a random delay before each sync (the cluster's `races`). */
  races?: Races | undefined;
  logger?: Logger;
  /** Concurrent syncs (default 5, kube-controller-manager's `--concurrent-replicaset-syncs`). */
  workers?: number;
  /** Creations or deletions per sync at most (default 500). */
  burstReplicas?: number;
  /** Write SuccessfulCreate / FailedCreate / SuccessfulDelete events (default true). */
  recordEvents?: boolean;
  /** Told after each round of creations (diagnostics, metrics and tests). */
  onCreateRound?: (key: string, result: SlowStartResult) => void;
}

function controllerUidOf(obj: KubeObject): string[] {
  return [controllerRef(obj)?.uid ?? ''];
}

function selectorOf(obj: KubeObject): LabelSelector | undefined {
  return asRecord(obj['spec'])?.['selector'] as LabelSelector | undefined;
}

function isDeleting(obj: KubeObject): boolean {
  const ts = obj.metadata?.deletionTimestamp;
  return ts !== undefined && ts !== null;
}

/** An error whose Status says the namespace is being deleted: creating there is pointless, not a failure. */
function namespaceTerminating(err: unknown): boolean {
  return err instanceof ApiError && (err.status.details?.causes ?? []).some((c) => c.reason === 'NamespaceTerminating');
}

export class ReplicaSetController implements Runnable {
  readonly name = REPLICASET_CONTROLLER;
  readonly expectations: ControllerExpectations;
  readonly #client: KubeClient;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #workers: number;
  readonly #burst: number;
  readonly #recorder: EventRecorder | undefined;
  readonly #onCreateRound: ((key: string, result: SlowStartResult) => void) | undefined;
  readonly #rsInformer: Informer;
  readonly #podInformer: Informer<Pod>;
  readonly #loop: QueueLoop;
  readonly #queue: WorkQueue<string>;

  constructor(options: ReplicaSetControllerOptions) {
    this.#clock = options.clock;
    this.#client = componentClient(options.client, options.clock, REPLICASET_CONTROLLER);
    this.#log = options.logger ?? silentLogger;
    this.#workers = options.workers ?? 5;
    this.#burst = options.burstReplicas ?? BURST_REPLICAS;
    this.#recorder = options.recordEvents === false ? undefined : componentRecorder(this.#client, REPLICASET_CONTROLLER, options.logger);
    this.#onCreateRound = options.onCreateRound;
    this.expectations = new ControllerExpectations(() => this.#clock.now());
    const common = { client: this.#client, log: this.#log, indexes: { [CONTROLLER_UID_INDEX]: controllerUidOf } };
    this.#rsInformer = new Informer({ ...common, ref: BUILTIN.replicasets, name: `${REPLICASET_CONTROLLER} replicasets` });
    this.#podInformer = new Informer<Pod>({ ...common, ref: BUILTIN.pods, name: `${REPLICASET_CONTROLLER} pods` });
    this.#loop = new QueueLoop({
      name: REPLICASET_CONTROLLER,
      clock: this.#clock,
      log: this.#log,
      races: options.races,
      workers: this.#workers,
      informers: [this.#rsInformer, this.#podInformer],
      handle: (key) => this.#sync(key),
    });
    this.#queue = this.#loop.queue;
    this.#wireHandlers();
  }

  /** Starts the informers; resolves once both caches are filled and the workers run. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#loop.start(signal);
  }

  /** Ends every watch, timer and worker; resolves when all are gone. */
  stop(): Promise<void> {
    return this.#loop.stop();
  }

  hasSynced(): boolean {
    return this.#rsInformer.store.hasSynced() && this.#podInformer.store.hasSynced();
  }

  // ---- event handlers: map changes to ReplicaSet keys ----

  #wireHandlers(): void {
    const rsStore = this.#rsInformer.store;
    rsStore.onAdd((rs) => this.#queue.add(objectKey(rs)));
    rsStore.onUpdate((old, cur) => {
      // A set deleted and recreated under the same name between two observations.
      if (old.metadata?.uid !== cur.metadata?.uid) this.expectations.delete(objectKey(old));
      this.#queue.add(objectKey(cur));
    });
    rsStore.onDelete((rs) => {
      this.expectations.delete(objectKey(rs));
      this.#queue.add(objectKey(rs));
    });
    const podStore = this.#podInformer.store;
    podStore.onAdd((pod) => this.#podAdded(pod));
    podStore.onUpdate((old, cur) => this.#podUpdated(old, cur));
    podStore.onDelete((pod) => this.#podDeleted(pod));
  }

  #resolve(namespace: string, ref: OwnerReference | undefined): KubeObject | undefined {
    if (ref?.kind !== 'ReplicaSet') return undefined;
    const rs = this.#rsInformer.store.get(namespace, ref.name);
    return rs !== undefined && rs.metadata?.uid === ref.uid ? rs : undefined;
  }

  /** ReplicaSets of the pod's namespace whose (non-empty) selector matches it: candidates to adopt an orphan. */
  #podReplicaSets(pod: Pod): KubeObject[] {
    const ns = pod.metadata?.namespace ?? '';
    return this.#rsInformer.store.list(ns).filter((rs) => {
      const sel = labelSelectorAsSelector(selectorOf(rs));
      return sel.ok && !sel.selector.empty && sel.selector.matches(pod.metadata?.labels);
    });
  }

  #podAdded(pod: Pod): void {
    if (isDeleting(pod)) {
      // A pod that shows up already terminating (e.g. after a relist) counts as a deletion.
      this.#podDeleted(pod);
      return;
    }
    const ref = controllerRef(pod);
    if (ref !== undefined) {
      const rs = this.#resolve(pod.metadata?.namespace ?? '', ref);
      if (rs === undefined) return;
      this.expectations.creationObserved(objectKey(rs));
      this.#queue.add(objectKey(rs));
      return;
    }
    for (const rs of this.#podReplicaSets(pod)) this.#queue.add(objectKey(rs));
  }

  #podUpdated(old: Pod, cur: Pod): void {
    const labelsChanged = !deepEqual(old.metadata?.labels ?? {}, cur.metadata?.labels ?? {});
    if (isDeleting(cur)) {
      // Graceful deletion: the pod is as good as gone for the set.
      this.#podDeleted(cur);
      if (labelsChanged) this.#podDeleted(old);
      return;
    }
    const oldRef = controllerRef(old);
    const curRef = controllerRef(cur);
    const refChanged = !deepEqual(oldRef ?? null, curRef ?? null);
    const ns = cur.metadata?.namespace ?? '';
    if (refChanged && oldRef !== undefined) {
      const rs = this.#resolve(ns, oldRef);
      if (rs !== undefined) this.#queue.add(objectKey(rs));
    }
    if (curRef !== undefined) {
      const rs = this.#resolve(ns, curRef);
      if (rs === undefined) return;
      this.#queue.add(objectKey(rs));
      const minReady = minReadySeconds(rs);
      // The second added on top avoids landing a hair before the pod counts as available.
      if (!isPodReady(old) && isPodReady(cur) && minReady > 0) this.#queue.addAfter(objectKey(rs), minReady * 1000 + 1000);
      return;
    }
    if (labelsChanged || refChanged) for (const rs of this.#podReplicaSets(cur)) this.#queue.add(objectKey(rs));
  }

  #podDeleted(pod: Pod): void {
    const rs = this.#resolve(pod.metadata?.namespace ?? '', controllerRef(pod));
    if (rs === undefined) return;
    const key = objectKey(rs);
    this.expectations.deletionObserved(key, objectKey(pod));
    this.#queue.add(key);
  }

  // ---- sync ----

  async #sync(key: string): Promise<void> {
    const rs = this.#rsInformer.store.getByKey(key);
    if (rs === undefined) {
      this.expectations.delete(key);
      return;
    }
    const needsSync = this.expectations.satisfied(key);
    const sel = labelSelectorAsSelector(selectorOf(rs));
    if (!sel.ok) {
      // Upstream gives up on the key: a broken selector will not heal by retrying.
      this.#log.error({ replicaset: key, err: sel.error }, 'invalid selector');
      return;
    }
    const claim = await claimObjects(this.#candidatePods(rs), {
      client: this.#client,
      controller: rs,
      controllerRef: BUILTIN.replicasets,
      objectRef: BUILTIN.pods,
      selector: sel.selector,
    });
    if (claim.errors.length > 0) throw claim.errors[0];
    let roundError: unknown;
    if (needsSync && !isDeleting(rs)) roundError = await this.#manageReplicas(key, rs, claim.claimed);
    const status = calculateStatus(rs, claim.claimed, roundError === undefined ? {} : { error: describeError(roundError) }, this.#clock.now());
    const written = await this.#writeStatus(rs, status);
    const want = specReplicas(rs);
    const minReady = minReadySeconds(rs);
    if (roundError === undefined && minReady > 0 && (written.readyReplicas ?? 0) === want && (written.availableReplicas ?? 0) !== want) {
      this.#queue.addAfter(key, minReady * 1000);
    }
    if (roundError !== undefined) throw roundError;
  }

  /** Active pods the set owns plus the orphans of its namespace (`FilterPodsByOwner` with orphans). */
  #candidatePods(rs: KubeObject): Pod[] {
    const ns = rs.metadata?.namespace ?? '';
    const store = this.#podInformer.store;
    const owned = store.byIndex(CONTROLLER_UID_INDEX, rs.metadata?.uid ?? '');
    const orphans = store.byIndex(CONTROLLER_UID_INDEX, '');
    return [...owned, ...orphans].filter((p) => (p.metadata?.namespace ?? '') === ns && isPodActive(p));
  }

  /** Creates or deletes toward `spec.replicas`; answers the round's error, if any. */
  async #manageReplicas(key: string, rs: KubeObject, pods: Pod[]): Promise<unknown> {
    const diff = pods.length - specReplicas(rs);
    if (diff < 0) {
      const count = Math.min(-diff, this.#burst);
      this.expectations.expectCreations(key, count);
      const result = await slowStartBatch(count, SLOW_START_INITIAL_BATCH_SIZE, () => this.#createPod(rs));
      // Pods never attempted (or refused) will not show up in the watch: stop waiting for them.
      for (let i = result.successes; i < count; i++) this.expectations.creationObserved(key);
      this.#onCreateRound?.(key, result);
      return result.error;
    }
    if (diff > 0) {
      const count = Math.min(diff, this.#burst);
      const victims = podsToDeleteOnScaleDown(pods, this.#relatedPods(rs), count, this.#clock.now());
      this.expectations.expectDeletions(key, victims.map((p) => objectKey(p)));
      const errors = await Promise.all(victims.map((p) => this.#deletePod(key, rs, p)));
      return errors.find((e) => e !== undefined);
    }
    return undefined;
  }

  /** Pods of every ReplicaSet controlled by the same owner as `rs` (itself included), each once. */
  #relatedPods(rs: KubeObject): Pod[] {
    const owner = controllerRef(rs);
    if (owner === undefined || owner.uid === '') return [];
    const seen = new Set<string>();
    const related: Pod[] = [];
    for (const sibling of this.#rsInformer.store.byIndex(CONTROLLER_UID_INDEX, owner.uid)) {
      const sel = labelSelectorAsSelector(selectorOf(sibling));
      if (!sel.ok) continue;
      for (const pod of this.#podsMatching(sibling.metadata?.namespace ?? '', sel.selector)) {
        const uid = pod.metadata?.uid ?? objectKey(pod);
        if (seen.has(uid)) continue;
        seen.add(uid);
        related.push(pod);
      }
    }
    return related;
  }

  #podsMatching(namespace: string, selector: Selector): Pod[] {
    return this.#podInformer.store.list(namespace).filter((p) => selector.matches(p.metadata?.labels));
  }

  /** A pod from the template (controller.GetPodFromTemplate), named `<set>-<random>`. */
  #podFor(rs: KubeObject): Pod | undefined {
    const template = asRecord(asRecord(rs['spec'])?.['template']) ?? {};
    const meta = asRecord(template['metadata']) ?? {};
    const labels = asRecord(meta['labels']);
    if (labels === undefined || Object.keys(labels).length === 0) return undefined;
    const metadata: Pod['metadata'] = {
      generateName: `${rs.metadata?.name ?? ''}-`,
      namespace: rs.metadata?.namespace ?? '',
      labels: { ...(labels as Record<string, string>) },
      ownerReferences: [ownerReferenceFor(rs)],
    };
    const annotations = asRecord(meta['annotations']);
    if (annotations !== undefined) metadata.annotations = { ...(annotations as Record<string, string>) };
    if (Array.isArray(meta['finalizers'])) metadata.finalizers = [...(meta['finalizers'] as string[])];
    return { apiVersion: 'v1', kind: 'Pod', metadata, spec: structuredClone(asRecord(template['spec']) ?? {}) as unknown as Pod['spec'] };
  }

  async #createPod(rs: KubeObject): Promise<void> {
    const pod = this.#podFor(rs);
    if (pod === undefined) throw new Error('unable to create pods, no labels');
    try {
      const created = await this.#client.create<Pod>(BUILTIN.pods, pod, { namespace: pod.metadata.namespace ?? '' });
      this.#recorder?.record(rs, { type: 'Normal', reason: 'SuccessfulCreate', note: `Created pod: ${created.metadata?.name ?? ''}`, action: 'Create' });
    } catch (err) {
      if (namespaceTerminating(err)) return;
      if (!isTimeout(err)) this.#recorder?.record(rs, { type: 'Warning', reason: 'FailedCreate', note: `Error creating: ${describeError(err)}`, action: 'Create' });
      throw err;
    }
  }

  /** Deletes one chosen pod; answers the error that should fail the round (a pod already gone is not one). */
  async #deletePod(key: string, rs: KubeObject, pod: Pod): Promise<unknown> {
    const name = pod.metadata?.name ?? '';
    try {
      await this.#client.delete(BUILTIN.pods, name, { namespace: pod.metadata?.namespace ?? '' });
      this.#recorder?.record(rs, { type: 'Normal', reason: 'SuccessfulDelete', note: `Deleted pod: ${name}`, action: 'Delete' });
      return undefined;
    } catch (err) {
      // The deletion will never be observed through the watch as one we caused.
      this.expectations.deletionObserved(key, objectKey(pod));
      if (isNotFound(err)) return undefined;
      this.#recorder?.record(rs, { type: 'Warning', reason: 'FailedDelete', note: `Error deleting: ${describeError(err)}`, action: 'Delete' });
      return err;
    }
  }

  /** PUT /status when something changed; one re-read and retry on failure, as upstream. */
  async #writeStatus(rs: KubeObject, status: ReplicaSetStatus): Promise<ReplicaSetStatus> {
    if (!statusNeedsWrite(rs, status)) return status;
    const body = wireStatus({ ...status, observedGeneration: rs.metadata?.generation ?? 0 });
    let current = rs;
    for (let attempt = 0; ; attempt++) {
      try {
        const updated = await this.#client.updateStatus<KubeObject>(BUILTIN.replicasets, { ...current, status: body });
        return (asRecord(updated['status']) as ReplicaSetStatus | undefined) ?? body;
      } catch (err) {
        if (attempt >= STATUS_UPDATE_RETRIES) throw err;
        current = await this.#client.get(BUILTIN.replicasets, current.metadata?.name ?? '', { namespace: current.metadata?.namespace ?? '' });
      }
    }
  }
}

/** Status as Go would serialize it: optional counters and conditions omitted when zero or empty. */
function wireStatus(status: ReplicaSetStatus): ReplicaSetStatus {
  const out: ReplicaSetStatus = { ...status };
  for (const k of ['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'observedGeneration'] as const) {
    if (out[k] === 0 || out[k] === undefined) delete out[k];
  }
  if (out.conditions !== undefined && out.conditions.length === 0) delete out.conditions;
  return out;
}

/** The ReplicaSet controller as a component of the embedded cluster (registry.ts). */
export const replicaSetController: ControllerFactory = {
  name: REPLICASET_CONTROLLER,
  create: (context) => new ReplicaSetController({ client: context.client, clock: context.clock, logger: context.logger, races: context.races }),
};
