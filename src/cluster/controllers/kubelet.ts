/**
 * The embedded kubelet: one control loop playing the kubelet of every fake
 * node the cluster registered (`registerNode`), through the API server only.
 * Pods bound to any other node — one that never existed, or was removed —
 * are left exactly as they are, as no kubelet would touch them.
 *
 * A pod's life on a node (level-triggered: each sync recomputes the stage
 * from the pod and this kubelet's memory of when it admitted/started it):
 *  1. admitted: Pending, containers waiting `ContainerCreating`, startTime, hostIP;
 *  2. after the node's start delay (cluster `kubeletDelayMs`, or the node's
 *     `startDelayMs`): Running with a pod IP, containers running, Ready — or
 *     Ready only after the largest readinessProbe `initialDelaySeconds`;
 *     a `neverStart` node keeps pods at 1 forever; a `failPods` node fails
 *     them instead (phase Failed, containers terminated `Error`, exit code 1);
 *  3. a pod owned by a Job succeeds `jobPodDurationMs` after it started
 *     (containers terminated `Completed`, exit code 0, Ready False `PodCompleted`);
 *  4. deleted (deletionTimestamp set): the containers stop within
 *     min(grace period, `podStopDelayMs`) — a real container usually exits on
 *     SIGTERM well before its grace period ends — the pod reports its terminal
 *     phase (Succeeded: the containers exited 0 on SIGTERM; a pod that never
 *     started skips this) and the kubelet deletes it with gracePeriodSeconds 0
 *     and a uid precondition, as upstream's status manager does.
 * Status writes are PUTs of `/status` from the informer's copy (optimistic
 * concurrency: a conflict retries the sync), and only when something changed.
 */
import type { Clock } from '../../clock/clock.ts';
import type { Races } from '../../clock/races.ts';
import { describeError, isConflict, isNotFound } from '../../client/errors.ts';
import type { KubeClient } from '../../client/http-client.ts';
import { silentLogger, type Logger } from '../../client/logger.ts';
import { BUILTIN } from '../../client/resources.ts';
import { Informer, objectKey } from '../../client/store.ts';
import { QueueLoop } from '../../client/queue-loop.ts';
import type { Runnable } from '../../client/runnable.ts';
import type { WorkQueue, WorkResult } from '../../client/workqueue.ts';
import { controllerRef } from '../../k8s/owner.ts';
import { asArray, asNumber, asRecord, asString } from '../../k8s/raw-json.ts';
import { parseTime } from '../../k8s/time.ts';
import type { Pod } from '../../k8s/types.ts';
import { NodeAgent, type RegisterResult } from '../kubelet/node-agent.ts';
import { podStatusAt, statusChanged } from '../kubelet/pod-status.ts';
import type { KubeletBehaviour, NodeSpec } from '../../k8s/node-specs.ts';
import { DEFAULT_SETTINGS, type ClusterSettings } from './component.ts';

const NODE_INDEX = 'node';

export interface KubeletOptions {
  client: KubeClient;
  clock: Clock;
  /** Race mode: a random delay before each sync (the cluster's `races`). */
  races?: Races | undefined;
  logger?: Logger;
  settings?: Partial<ClusterSettings>;
  /** Concurrent pod syncs (default 4). */
  workers?: number;
}

/** What this kubelet remembers of a pod it runs (keyed by uid). */
interface PodRuntime {
  admittedAt: number;
  startedAt: number | undefined;
  deletionSeenAt: number | undefined;
}

/** The largest readinessProbe initialDelaySeconds among the containers, in ms. */
function readinessDelayMs(pod: Pod): number {
  let max = 0;
  for (const c of asArray(pod.spec?.containers) ?? []) {
    const delay = asNumber(asRecord(asRecord(c)?.['readinessProbe'])?.['initialDelaySeconds']) ?? 0;
    max = Math.max(max, delay);
  }
  return max * 1000;
}

function runningSince(pod: Pod): number | undefined {
  for (const s of asArray(pod.status?.containerStatuses) ?? []) {
    const t = parseTime(asString(asRecord(asRecord(asRecord(s)?.['state'])?.['running'])?.['startedAt']));
    if (t !== undefined) return t;
  }
  return undefined;
}

const isJobPod = (pod: Pod): boolean => {
  const owner = controllerRef(pod);
  return owner?.kind === 'Job' && owner.apiVersion === 'batch/v1';
};

export class Kubelet implements Runnable {
  readonly name = 'kubelet';
  readonly #client: KubeClient;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #settings: ClusterSettings;
  readonly #workers: number;
  readonly #agents = new Map<string, NodeAgent>();
  readonly #runtimes = new Map<string, PodRuntime>();
  readonly #pods: Informer<Pod>;
  readonly #loop: QueueLoop;
  readonly #queue: WorkQueue<string>;
  #nextIndex = 0;

  constructor(options: KubeletOptions) {
    this.#client = options.client;
    this.#clock = options.clock;
    this.#log = options.logger ?? silentLogger;
    this.#settings = { ...DEFAULT_SETTINGS, ...(options.settings ?? {}) };
    this.#workers = options.workers ?? 4;
    this.#pods = new Informer<Pod>({
      client: this.#client,
      ref: BUILTIN.pods,
      fieldSelector: 'spec.nodeName!=',
      name: 'kubelet-pods',
      log: this.#log,
      indexes: { [NODE_INDEX]: (p) => [p.spec?.nodeName ?? ''] },
    });
    this.#loop = new QueueLoop({
      name: 'kubelet',
      clock: this.#clock,
      log: this.#log,
      races: options.races,
      workers: this.#workers,
      informers: [this.#pods],
      handle: (key) => this.#sync(key),
      // The machines go first: no heartbeat after the kubelet is gone.
      onStopping: async () => {
        await Promise.all([...this.#agents.values()].map((agent) => agent.stop()));
      },
    });
    this.#queue = this.#loop.queue;
    const store = this.#pods.store;
    store.onAdd((p) => this.#queue.add(objectKey(p)));
    store.onUpdate((_old, p) => this.#queue.add(objectKey(p)));
    store.onDelete((p) => {
      this.#forget(p);
    });
  }

  /** Starts watching the pods bound to a node; resolves once that cache is filled and the workers run. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#loop.start(signal);
  }

  /** Stops every node's heartbeats, the workers and the watch; resolves when all are gone. */
  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** Registers a fake node (its Node object and Lease) and starts playing its kubelet. */
  async registerNode(spec: NodeSpec): Promise<RegisterResult> {
    if (this.#agents.has(spec.name)) return { ok: false, error: `node ${spec.name} is already registered` };
    const agent = new NodeAgent({ client: this.#client, clock: this.#clock, logger: this.#log, spec, index: this.#nextIndex++ });
    this.#agents.set(spec.name, agent);
    try {
      await agent.start(this.#loop.signal);
    } catch (err) {
      await agent.stop();
      this.#agents.delete(spec.name);
      return { ok: false, error: err instanceof Error ? err.message : String(err) };
    }
    this.#requeueNode(spec.name);
    return { ok: true };
  }

  /** Stops playing a node's kubelet (its pods are left as they are); true when it was known. */
  unregisterNode(name: string): boolean {
    const agent = this.#agents.get(name);
    if (agent === undefined) return false;
    // Its timers are cancelled at once (the stop's synchronous part); nothing to wait for.
    void agent.stop();
    this.#agents.delete(name);
    return true;
  }

  nodeNames(): string[] {
    return [...this.#agents.keys()];
  }

  behaviour(name: string): KubeletBehaviour | undefined {
    const b = this.#agents.get(name)?.behaviour;
    return b === undefined ? undefined : { ...b };
  }

  /** Changes how a node treats its pods; pods already there are re-evaluated. */
  setBehaviour(name: string, behaviour: KubeletBehaviour): boolean {
    const agent = this.#agents.get(name);
    if (agent === undefined) return false;
    agent.behaviour = { ...agent.behaviour, ...behaviour };
    this.#requeueNode(name);
    return true;
  }

  #requeueNode(name: string): void {
    for (const p of this.#pods.store.byIndex(NODE_INDEX, name)) this.#queue.add(objectKey(p));
  }

  #forget(pod: Pod): void {
    const uid = pod.metadata?.uid ?? '';
    this.#runtimes.delete(uid);
    this.#agents.get(pod.spec?.nodeName ?? '')?.releaseIp(uid);
  }

  async #sync(key: string): Promise<WorkResult | void> {
    const pod = this.#pods.store.getByKey(key);
    if (pod === undefined) return;
    const agent = this.#agents.get(pod.spec?.nodeName ?? '');
    if (agent === undefined) return;
    const uid = pod.metadata.uid ?? '';
    const now = this.#clock.now();
    let rt = this.#runtimes.get(uid);
    if (rt === undefined) {
      const started = pod.status?.phase === 'Running' ? runningSince(pod) : undefined;
      rt = { admittedAt: parseTime(pod.status?.startTime) ?? now, startedAt: started, deletionSeenAt: undefined };
      this.#runtimes.set(uid, rt);
      const ip = asString(pod.status?.['podIP']);
      if (ip !== undefined && ip !== '') agent.adoptIp(uid, ip);
    }
    if (pod.metadata.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null) return this.#terminate(pod, rt, agent, now);
    const phase = pod.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') {
      agent.releaseIp(uid);
      return;
    }

    const ctx = { now, hostIP: agent.hostIP, podIP: '', startTime: rt.admittedAt };
    if (rt.startedAt === undefined) {
      const delay = agent.behaviour.startDelayMs ?? this.#settings.kubeletDelayMs;
      const due = rt.admittedAt + delay;
      if (agent.behaviour.neverStart === true || now < due) {
        await this.#writeStatus(pod, podStatusAt(pod, { kind: 'creating' }, ctx));
        return agent.behaviour.neverStart === true ? undefined : { requeueAfterMs: due - now };
      }
      if (agent.behaviour.failPods === true) {
        await this.#writeStatus(pod, podStatusAt(pod, { kind: 'terminated', phase: 'Failed', startedAt: now, finishedAt: now, exitCode: 1, reason: 'Error' }, ctx));
        agent.releaseIp(uid);
        return;
      }
      rt.startedAt = now;
    }
    const startedAt = rt.startedAt;
    ctx.podIP = agent.allocateIp(uid);
    if (isJobPod(pod)) {
      const doneAt = startedAt + this.#settings.jobPodDurationMs;
      if (now >= doneAt) {
        await this.#writeStatus(pod, podStatusAt(pod, { kind: 'terminated', phase: 'Succeeded', startedAt, finishedAt: now, exitCode: 0, reason: 'Completed' }, ctx));
        agent.releaseIp(uid);
        return;
      }
    }
    const readyAt = startedAt + readinessDelayMs(pod);
    await this.#writeStatus(pod, podStatusAt(pod, { kind: 'running', startedAt, ready: now >= readyAt }, ctx));
    const next = [readyAt, ...(isJobPod(pod) ? [startedAt + this.#settings.jobPodDurationMs] : [])].filter((t) => t > now);
    return next.length === 0 ? undefined : { requeueAfterMs: Math.min(...next) - now };
  }

  async #terminate(pod: Pod, rt: PodRuntime, agent: NodeAgent, now: number): Promise<WorkResult | void> {
    rt.deletionSeenAt ??= now;
    const grace = pod.metadata.deletionGracePeriodSeconds ?? asNumber(pod.spec?.['terminationGracePeriodSeconds']) ?? 30;
    const stopAt = rt.deletionSeenAt + Math.min(grace * 1000, this.#settings.podStopDelayMs);
    if (now < stopAt) return { requeueAfterMs: stopAt - now };
    const phase = pod.status?.phase;
    if (rt.startedAt !== undefined && phase !== 'Succeeded' && phase !== 'Failed') {
      const ctx = { now, hostIP: agent.hostIP, podIP: agent.allocateIp(pod.metadata.uid ?? ''), startTime: rt.admittedAt };
      const written = await this.#writeStatus(pod, podStatusAt(pod, { kind: 'terminated', phase: 'Succeeded', startedAt: rt.startedAt, finishedAt: now, exitCode: 0, reason: 'Completed' }, ctx));
      // The delete waits for the informer to show the terminal status (the next sync).
      if (written) return;
    }
    try {
      await this.#client.delete(BUILTIN.pods, pod.metadata.name ?? '', { namespace: pod.metadata.namespace ?? '', gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid ?? '' } });
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err)) throw err;
    }
  }

  /** PUTs the status when it differs; true when a write happened. Gone pods are fine; conflicts retry the sync. */
  async #writeStatus(pod: Pod, status: Record<string, unknown>): Promise<boolean> {
    if (!statusChanged(pod, status)) return false;
    try {
      await this.#client.updateStatus(BUILTIN.pods, { ...pod, status });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      if (!isConflict(err)) this.#log.warn({ pod: objectKey(pod), err: describeError(err) }, 'pod status update failed');
      throw err;
    }
  }
}
