/**
 * The embedded kube-scheduler: places pods that name no node, through the
 * API server only (informers + `pods/binding`), with the decisions of
 * ../scheduling/ (filters.ts, scores.ts: upstream's default profile).
 *
 * Loop: pod, node, ReplicaSet, StatefulSet and Service informers feed a
 * `SchedulerCache` (node resources + the pods on each node) and a one-worker
 * `WorkQueue` of pod keys (upstream runs one scheduling cycle at a time).
 * A cycle re-reads the pod, filters and scores every node and then
 *  - fits: *assumes* the pod on the node (the next cycle already sees its
 *    requests), binds asynchronously (`POST pods/<name>/binding`, which sets
 *    PodScheduled=True), records `Scheduled`; a failed binding forgets the
 *    assumption and retries after the back-off;
 *  - fits nowhere: PodScheduled=False reason Unschedulable with upstream's
 *    message (filters.ts), a `FailedScheduling` Warning, and the pod waits in
 *    the "unschedulable" set until a cluster event may help it, as upstream's
 *    queue with queueing hints does: a node added; a node whose allocatable,
 *    labels, taints or unschedulable flag changed (for pods rejected by the
 *    plugin that reads it); a bound pod deleted or finished (for pods rejected
 *    for resources or ports); the pod's own spec or labels changing. It is
 *    then retried once its back-off has passed (1 s doubling per attempt, at
 *    most 10 s), and anyway after 5 minutes (upstream's leftover flush, a
 *    background timer here so an unschedulable pod never holds `settle()`).
 *
 * Not emulated (documented in the closing note): preemption (a pod that only
 * fits by evicting lower-priority pods waits instead), PodTopologySpread
 * DoNotSchedule, inter-pod (anti-)affinity, volumes, the priority order of
 * the active queue (pods are tried in arrival order), and upstream's
 * random choice between equally good nodes (the first by name wins).
 */
import type { Clock, Timer } from '../../clock/clock.ts';
import type { Races } from '../../clock/races.ts';
import { describeError, isConflict, isNotFound } from '../../client/errors.ts';
import { EventRecorder } from '../../client/event-recorder.ts';
import type { KubeClient } from '../../client/http-client.ts';
import { silentLogger, type Logger } from '../../client/logger.ts';
import { BUILTIN } from '../../client/resources.ts';
import { Informer } from '../../client/store.ts';
import { QueueLoop } from '../../client/queue-loop.ts';
import type { Runnable } from '../../client/runnable.ts';
import type { WorkQueue } from '../../client/workqueue.ts';
import { deepEqual } from '../../k8s/json.ts';
import { controllerRef } from '../../k8s/owner.ts';
import { getPodCondition } from '../../k8s/pod.ts';
import { asArray, asRecord } from '../../k8s/raw-json.ts';
import { formatTime } from '../../k8s/time.ts';
import type { KubeObject, Node, Pod } from '../../k8s/types.ts';
import { findFeasibleNodes, unschedulableMessage } from '../scheduling/filters.ts';
import { podKeyOf, podRecord, SchedulerCache } from '../scheduling/node-info.ts';
import { selectHost } from '../scheduling/scores.ts';
import { defaultSelector } from '../scheduling/topology-spread.ts';
import type { ControllerFactory } from './component.ts';

export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';
export const INITIAL_BACKOFF_MS = 1_000;
export const MAX_BACKOFF_MS = 10_000;
/** Unschedulable pods are retried after this long even without an event. */
export const MAX_UNSCHEDULABLE_MS = 5 * 60_000;
const FLUSH_INTERVAL_MS = 30_000;

/** Upstream's calculateBackoffDuration: 1 s, doubled per further attempt, capped at 10 s. */
export function backoffFor(attempts: number): number {
  let d = INITIAL_BACKOFF_MS;
  for (let i = 1; i < attempts; i++) {
    if (d > MAX_BACKOFF_MS - d) return MAX_BACKOFF_MS;
    d += d;
  }
  return d;
}

interface PodQueueState {
  uid: string;
  attempts: number;
  /** Clock ms before which the pod is not tried again. */
  backoffUntil: number;
  /** Set while the pod waits for a cluster event. */
  unschedulableSince: number | undefined;
  rejectedBy: Set<string>;
}

export interface SchedulerOptions {
  client: KubeClient;
  clock: Clock;
  /** Race mode: a random delay before each sync (the cluster's `races`). */
  races?: Races | undefined;
  logger?: Logger;
  /** The `spec.schedulerName` this scheduler serves (default `default-scheduler`). */
  schedulerName?: string;
}

const isAssigned = (pod: Pod): boolean => (pod.spec?.nodeName ?? '') !== '';
const isTerminating = (pod: Pod): boolean => pod.metadata?.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null;

/** Keeps what the scheduler reads of a ReplicaSet/StatefulSet/Service: its selector. */
function selectorOnly(obj: KubeObject): KubeObject {
  const m = obj.metadata ?? {};
  const meta: KubeObject['metadata'] = {};
  for (const k of ['name', 'namespace', 'uid', 'resourceVersion'] as const) if (m[k] !== undefined) (meta as Record<string, unknown>)[k] = m[k];
  return { apiVersion: obj.apiVersion, kind: obj.kind, metadata: meta, spec: { selector: asRecord(obj['spec'])?.['selector'] } } as KubeObject;
}

/** What a scheduler re-reads when a pod object changes: everything but status and bookkeeping. */
function schedulingRelevant(pod: Pod): unknown {
  const { resourceVersion: _rv, managedFields: _mf, generation: _g, ...meta } = pod.metadata ?? {};
  return { meta, spec: pod.spec };
}

export class Scheduler implements Runnable {
  readonly name = 'scheduler';
  readonly #client: KubeClient;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #name: string;
  readonly #cache = new SchedulerCache();
  readonly #state = new Map<string, PodQueueState>();
  readonly #loop: QueueLoop;
  readonly #queue: WorkQueue<string>;
  readonly #recorder: EventRecorder;
  readonly #pods: Informer<Pod>;
  readonly #nodes: Informer<Node>;
  readonly #replicaSets: Informer;
  readonly #statefulSets: Informer;
  readonly #services: Informer;
  readonly #binds = new Set<Promise<void>>();
  #flushTimer: Timer | undefined;

  constructor(options: SchedulerOptions) {
    this.#client = options.client;
    this.#clock = options.clock;
    this.#log = options.logger ?? silentLogger;
    this.#name = options.schedulerName ?? DEFAULT_SCHEDULER_NAME;
    this.#recorder = new EventRecorder({ client: this.#client, reportingController: this.#name, reportingInstance: `${this.#name}-embedded`, log: this.#log });
    const log = this.#log;
    // Finished pods hold no resources: upstream's scheduler does not even watch them.
    this.#pods = new Informer<Pod>({ client: this.#client, ref: BUILTIN.pods, fieldSelector: 'status.phase!=Succeeded,status.phase!=Failed', name: 'scheduler-pods', log });
    this.#nodes = new Informer<Node>({ client: this.#client, ref: BUILTIN.nodes, name: 'scheduler-nodes', log });
    this.#replicaSets = new Informer({ client: this.#client, ref: BUILTIN.replicasets, transform: selectorOnly, name: 'scheduler-replicasets', log });
    this.#statefulSets = new Informer({ client: this.#client, ref: BUILTIN.statefulsets, transform: selectorOnly, name: 'scheduler-statefulsets', log });
    this.#services = new Informer({ client: this.#client, ref: BUILTIN.services, transform: selectorOnly, name: 'scheduler-services', log });
    this.#loop = new QueueLoop({
      name: 'scheduler',
      clock: this.#clock,
      log: this.#log,
      races: options.races,
      // Upstream runs one scheduling cycle at a time.
      workers: 1,
      informers: [this.#nodes, this.#pods, this.#replicaSets, this.#statefulSets, this.#services],
      handle: (key) => this.#scheduleOne(key),
      onRunning: () => {
        this.#flushTimer = this.#clock.setInterval(() => this.#flushLeftovers(), FLUSH_INTERVAL_MS, { background: true, name: 'scheduler flush unschedulable' });
      },
      onStopping: () => this.#flushTimer?.cancel(),
      onStopped: async () => {
        // Bindings still on their way, then the events they recorded.
        await Promise.all([...this.#binds]);
        await this.#recorder.flush();
      },
    });
    this.#queue = this.#loop.queue;
    this.#wireEvents();
  }

  /** Starts the informers; resolves once every cache is filled and the scheduling loop runs. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#loop.start(signal);
  }

  /** Ends every watch, timer, binding in flight and worker; resolves when all are gone. */
  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** Pods waiting for a cluster event (for tests and diagnostics). */
  unschedulablePods(): string[] {
    return [...this.#state].filter(([, s]) => s.unschedulableSince !== undefined).map(([k]) => k);
  }

  // ---- events → keys ----

  #wireEvents(): void {
    const pods = this.#pods.store;
    pods.onAdd((pod) => {
      if (isAssigned(pod)) this.#cache.addPod(pod);
      else if (this.#responsibleFor(pod)) this.#queue.add(podKeyOf(pod));
    });
    pods.onUpdate((old, pod) => {
      const key = podKeyOf(pod);
      if (isAssigned(pod)) {
        this.#cache.addPod(pod);
        if (!isAssigned(old)) this.#state.delete(key);
        return;
      }
      if (!this.#responsibleFor(pod)) {
        this.#state.delete(key);
        return;
      }
      // Our own status writes come back as updates: only a change to what scheduling reads counts.
      if (deepEqual(schedulingRelevant(old), schedulingRelevant(pod))) return;
      const state = this.#state.get(key);
      if (state !== undefined) state.unschedulableSince = undefined;
      this.#enqueue(key);
    });
    pods.onDelete((pod) => {
      const key = podKeyOf(pod);
      const wasPlaced = isAssigned(pod) || this.#cache.isAssumed(key);
      this.#cache.removePod(key);
      this.#state.delete(key);
      if (wasPlaced) this.#moveUnschedulable(['NodeResourcesFit', 'NodePorts']);
    });

    const nodes = this.#nodes.store;
    nodes.onAdd((node) => {
      this.#cache.setNode(node);
      this.#moveUnschedulable(undefined);
    });
    nodes.onUpdate((old, node) => {
      this.#cache.setNode(node);
      const plugins = nodeChangePlugins(old, node);
      if (plugins.length > 0) this.#moveUnschedulable(plugins);
    });
    nodes.onDelete((node) => this.#cache.removeNode(node.metadata?.name ?? ''));
  }

  #responsibleFor(pod: Pod): boolean {
    if (isAssigned(pod) || isTerminating(pod)) return false;
    if ((pod.spec?.schedulerName ?? DEFAULT_SCHEDULER_NAME) !== this.#name) return false;
    // Gated pods wait until every scheduling gate is removed (an update then queues them).
    return (asArray(pod.spec?.['schedulingGates']) ?? []).length === 0;
  }

  /** Queues a key now, or when its back-off ends. */
  #enqueue(key: string): void {
    const wait = (this.#state.get(key)?.backoffUntil ?? 0) - this.#clock.now();
    if (wait > 0) this.#queue.addAfter(key, wait);
    else this.#queue.add(key);
  }

  /** Moves unschedulable pods that one of `plugins` rejected (all of them when undefined) back to the queue. */
  #moveUnschedulable(plugins: string[] | undefined): void {
    for (const [key, state] of this.#state) {
      if (state.unschedulableSince === undefined) continue;
      if (plugins !== undefined && !plugins.some((p) => state.rejectedBy.has(p))) continue;
      state.unschedulableSince = undefined;
      this.#enqueue(key);
    }
  }

  #flushLeftovers(): void {
    const now = this.#clock.now();
    for (const [key, state] of this.#state) {
      if (state.unschedulableSince === undefined || now - state.unschedulableSince < MAX_UNSCHEDULABLE_MS) continue;
      state.unschedulableSince = undefined;
      this.#enqueue(key);
    }
  }

  // ---- the scheduling cycle ----

  async #scheduleOne(key: string): Promise<void> {
    const pod = this.#pods.store.getByKey(key);
    if (pod === undefined || !this.#responsibleFor(pod)) {
      this.#state.delete(key);
      return;
    }
    // Binding in flight: the informer will report the pod bound (or the bind will fail and requeue).
    if (this.#cache.isAssumed(key)) return;
    let state = this.#state.get(key);
    if (state === undefined || state.uid !== (pod.metadata.uid ?? '')) {
      state = { uid: pod.metadata.uid ?? '', attempts: 0, backoffUntil: 0, unschedulableSince: undefined, rejectedBy: new Set() };
      this.#state.set(key, state);
    }
    const now = this.#clock.now();
    if (state.backoffUntil > now) {
      this.#queue.addAfter(key, state.backoffUntil - now);
      return;
    }
    if (state.unschedulableSince !== undefined) return;
    state.attempts++;

    const record = podRecord(pod, '', true);
    const nodes = this.#cache.nodes();
    const { feasible, diagnosis } = findFeasibleNodes(pod, record, nodes);
    const choice = selectHost({ pod, record, feasible, allNodes: nodes, spreadSelector: this.#spreadSelector(pod) });
    if (choice !== undefined) {
      this.#cache.assume(pod, choice.node);
      this.#bind(pod, choice.node, state);
      return;
    }
    // Marked before any await: an event arriving while we write must find the pod waiting for it.
    state.unschedulableSince = now;
    state.backoffUntil = now + backoffFor(state.attempts);
    state.rejectedBy = diagnosis.rejectedBy;
    if (diagnosis.numAllNodes === 0) state.rejectedBy = new Set(['NodeAdd']);
    const message = unschedulableMessage(pod, diagnosis);
    this.#recorder.record(pod, { type: 'Warning', reason: 'FailedScheduling', note: message, action: 'Scheduling' });
    await this.#markUnschedulable(pod, message);
  }

  #spreadSelector(pod: Pod) {
    const namespace = pod.metadata?.namespace ?? '';
    const owner = controllerRef(pod);
    let ownerObject: KubeObject | undefined;
    if (owner !== undefined && owner.apiVersion === 'apps/v1') {
      if (owner.kind === 'ReplicaSet') ownerObject = this.#replicaSets.store.get(namespace, owner.name);
      else if (owner.kind === 'StatefulSet') ownerObject = this.#statefulSets.store.get(namespace, owner.name);
    }
    return defaultSelector(pod, { services: this.#services.store.list(namespace), owner: ownerObject });
  }

  /** PodScheduled=False/Unschedulable, written only when it changes (upstream's updatePod). */
  async #markUnschedulable(pod: Pod, message: string): Promise<void> {
    const current = getPodCondition(pod.status, 'PodScheduled');
    if (current?.status === 'False' && current.reason === 'Unschedulable' && current.message === message) return;
    const lastTransitionTime = current?.status === 'False' && current.lastTransitionTime !== undefined ? current.lastTransitionTime : formatTime(this.#clock.now());
    const condition = { type: 'PodScheduled', status: 'False', lastProbeTime: null, lastTransitionTime, reason: 'Unschedulable', message };
    try {
      await this.#client.patchStatus(BUILTIN.pods, pod.metadata.name ?? '', { type: 'strategic', body: { status: { conditions: [condition] } } }, { namespace: pod.metadata.namespace ?? '' });
    } catch (err) {
      if (!isNotFound(err)) this.#log.warn({ pod: podKeyOf(pod), err: describeError(err) }, 'cannot mark the pod unschedulable');
    }
  }

  /** The binding cycle, off the scheduling loop (as upstream's goroutine), as one tracked activity. */
  #bind(pod: Pod, node: string, state: PodQueueState): void {
    const key = podKeyOf(pod);
    const namespace = pod.metadata.namespace ?? '';
    const name = pod.metadata.name ?? '';
    const binding = { apiVersion: 'v1', kind: 'Binding', metadata: { name, namespace, uid: pod.metadata.uid }, target: { apiVersion: 'v1', kind: 'Node', name: node } };
    const job = this.#clock.activity
      .run(`bind ${key}`, async () => {
        try {
          await this.#client.subresource('POST', BUILTIN.pods, name, 'binding', binding, { namespace });
          this.#recorder.record(pod, { type: 'Normal', reason: 'Scheduled', note: `Successfully assigned ${namespace}/${name} to ${node}`, action: 'Binding' });
        } catch (err) {
          this.#cache.forget(key);
          // Gone, or already bound by someone else: nothing left to schedule.
          if (isNotFound(err) || isConflict(err) || this.#loop.stopping) return;
          this.#log.warn({ pod: key, node, err: describeError(err) }, 'binding failed, will retry');
          this.#recorder.record(pod, { type: 'Warning', reason: 'FailedScheduling', note: `Binding rejected: ${describeError(err)}`, action: 'Scheduling' });
          state.backoffUntil = this.#clock.now() + backoffFor(state.attempts);
          this.#enqueue(key);
        }
      })
      .finally(() => this.#binds.delete(job));
    this.#binds.add(job);
  }
}

/** Which filter plugins a node update can change the verdict of (upstream's node update event kinds). */
export function nodeChangePlugins(old: Node, node: Node): string[] {
  const plugins: string[] = [];
  const spec = (n: Node) => asRecord(n.spec) ?? {};
  const status = (n: Node) => asRecord(n.status) ?? {};
  if (!deepEqual(status(old)['allocatable'], status(node)['allocatable'])) plugins.push('NodeResourcesFit');
  if (!deepEqual(old.metadata?.labels ?? {}, node.metadata?.labels ?? {})) plugins.push('NodeAffinity');
  if (!deepEqual(spec(old)['taints'] ?? [], spec(node)['taints'] ?? [])) plugins.push('TaintToleration');
  if ((spec(old)['unschedulable'] === true) !== (spec(node)['unschedulable'] === true)) plugins.push('NodeUnschedulable');
  return plugins;
}

export const schedulerController: ControllerFactory = {
  name: 'scheduler',
  create: (ctx) => new Scheduler({ client: ctx.client, clock: ctx.clock, logger: ctx.logger, races: ctx.races }),
};
