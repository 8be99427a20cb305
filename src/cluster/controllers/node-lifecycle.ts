/**
 * What kube-controller-manager does about nodes, for the embedded cluster:
 *
 * - pod GC of orphans (podgc's gcOrphaned): a pod bound to a node that does
 *   not exist is, after a 40 s quarantine and a fresh GET confirming the node
 *   is gone, marked `DisruptionTarget` (reason DeletionByPodGC), set Failed
 *   when not yet terminal, and force-deleted (gracePeriodSeconds 0). This is
 *   what happens to the pods of a removed node. Upstream finds orphans in a
 *   20 s sweep, i.e. 40–60 s after the node went; here exactly 40 s after the
 *   controller first saw the pod orphaned (a foreground timer: it is work the
 *   cluster still has to do);
 * - the `node.kubernetes.io/unschedulable:NoSchedule` taint follows
 *   `spec.unschedulable` (node lifecycle's TaintNodesByCondition), so a
 *   cordoned node shows it as on a real cluster;
 * - NoExecute taints evict (the taint-eviction controller): a pod on the node
 *   that does not tolerate one is marked `DisruptionTarget` (reason
 *   DeletionByTaintManager) and deleted with its default grace period at once;
 *   one that tolerates them all for a limited `tolerationSeconds` is deleted
 *   when the shortest of those runs out, counted from the taint's `timeAdded`.
 * Not emulated: NotReady/Unreachable detection from missed leases (the fake
 * kubelets never miss one) and node-pressure taints.
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
import { getPodCondition } from '../../k8s/pod.ts';
import { asArray, asRecord } from '../../k8s/raw-json.ts';
import { tolerationToleratesTaint } from '../../k8s/taints.ts';
import { formatTime, parseTime } from '../../k8s/time.ts';
import type { Node, Pod, Taint, Toleration } from '../../k8s/types.ts';
import type { ControllerFactory } from './component.ts';

export const ORPHAN_QUARANTINE_MS = 40_000;
export const UNSCHEDULABLE_TAINT_KEY = 'node.kubernetes.io/unschedulable';
const NODE_INDEX = 'node';

export interface NodeLifecycleOptions {
  client: KubeClient;
  clock: Clock;
  /** Race mode: a random delay before each sync (the cluster's `races`). */
  races?: Races | undefined;
  logger?: Logger;
}

function taintsOf(node: Node | undefined): Taint[] {
  return (asArray(asRecord(node?.spec)?.['taints']) ?? []) as Taint[];
}

/**
 * When a pod on a node with these taints must go: 'now', a clock time, or
 * undefined (never): the NoExecute taints it does not tolerate evict at once;
 * tolerated ones with tolerationSeconds evict at timeAdded + the shortest.
 */
export function evictionTime(pod: Pod, taints: readonly Taint[], now: number): 'now' | number | undefined {
  const tolerations = (asArray(pod.spec?.tolerations) ?? []) as Toleration[];
  let at: number | undefined;
  for (const taint of taints) {
    if (taint?.effect !== 'NoExecute') continue;
    const matching = tolerations.filter((t) => tolerationToleratesTaint(t, taint));
    if (matching.length === 0) return 'now';
    let seconds: number | undefined;
    for (const t of matching) {
      if (typeof t.tolerationSeconds !== 'number') continue;
      seconds = Math.min(seconds ?? Number.POSITIVE_INFINITY, Math.max(0, t.tolerationSeconds));
    }
    if (seconds === undefined) continue;
    const from = parseTime(taint.timeAdded) ?? now;
    at = Math.min(at ?? Number.POSITIVE_INFINITY, from + seconds * 1000);
  }
  return at;
}

type Key = { kind: 'node'; name: string } | { kind: 'pod'; key: string };
const encode = (k: Key): string => (k.kind === 'node' ? `node:${k.name}` : `pod:${k.key}`);

export class NodeLifecycleController implements Runnable {
  readonly name = 'node-lifecycle';
  readonly #client: KubeClient;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #nodes: Informer<Node>;
  readonly #pods: Informer<Pod>;
  readonly #loop: QueueLoop;
  readonly #queue: WorkQueue<string>;
  /** Pod uid → when it was first seen bound to a missing node. */
  readonly #orphanSince = new Map<string, number>();

  constructor(options: NodeLifecycleOptions) {
    this.#client = options.client;
    this.#clock = options.clock;
    this.#log = options.logger ?? silentLogger;
    this.#nodes = new Informer<Node>({ client: this.#client, ref: BUILTIN.nodes, name: 'node-lifecycle-nodes', log: this.#log });
    this.#pods = new Informer<Pod>({
      client: this.#client,
      ref: BUILTIN.pods,
      fieldSelector: 'spec.nodeName!=',
      name: 'node-lifecycle-pods',
      log: this.#log,
      indexes: { [NODE_INDEX]: (p) => [p.spec?.nodeName ?? ''] },
    });
    this.#loop = new QueueLoop({
      name: 'node-lifecycle',
      clock: this.#clock,
      log: this.#log,
      races: options.races,
      workers: 2,
      informers: [this.#nodes, this.#pods],
      handle: (key) => this.#sync(key),
    });
    this.#queue = this.#loop.queue;
    const queueNode = (n: Node) => this.#queue.add(encode({ kind: 'node', name: n.metadata?.name ?? '' }));
    this.#nodes.store.onAdd(queueNode);
    this.#nodes.store.onUpdate((_o, n) => queueNode(n));
    this.#nodes.store.onDelete(queueNode);
    const queuePod = (p: Pod) => this.#queue.add(encode({ kind: 'pod', key: objectKey(p) }));
    this.#pods.store.onAdd(queuePod);
    this.#pods.store.onUpdate((_o, p) => queuePod(p));
    this.#pods.store.onDelete((p) => this.#orphanSince.delete(p.metadata?.uid ?? ''));
  }

  /** Starts the informers; resolves once both caches are filled and the workers run. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#loop.start(signal);
  }

  /** Ends every watch, timer and worker; resolves when all are gone. */
  stop(): Promise<void> {
    return this.#loop.stop();
  }

  #sync(raw: string): Promise<WorkResult | void> {
    if (raw.startsWith('node:')) return this.#syncNode(raw.slice(5));
    return this.#syncPod(raw.slice(4));
  }

  async #syncNode(name: string): Promise<WorkResult | void> {
    const node = this.#nodes.store.get(undefined, name);
    // Every pod of the node is affected by its taints or its disappearance.
    for (const p of this.#pods.store.byIndex(NODE_INDEX, name)) this.#queue.add(encode({ kind: 'pod', key: objectKey(p) }));
    if (node === undefined) return;
    const wantTaint = asRecord(node.spec)?.['unschedulable'] === true;
    const taints = taintsOf(node);
    const hasTaint = taints.some((t) => t.key === UNSCHEDULABLE_TAINT_KEY && t.effect === 'NoSchedule');
    if (wantTaint === hasTaint) return;
    const next = wantTaint ? [...taints, { key: UNSCHEDULABLE_TAINT_KEY, effect: 'NoSchedule' }] : taints.filter((t) => !(t.key === UNSCHEDULABLE_TAINT_KEY && t.effect === 'NoSchedule'));
    const spec = { ...(asRecord(node.spec) ?? {}) };
    if (next.length > 0) spec['taints'] = next;
    else delete spec['taints'];
    try {
      await this.#client.update(BUILTIN.nodes, { ...node, spec });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  async #syncPod(key: string): Promise<WorkResult | void> {
    const pod = this.#pods.store.getByKey(key);
    if (pod === undefined) return;
    const uid = pod.metadata.uid ?? '';
    const nodeName = pod.spec?.nodeName ?? '';
    const node = this.#nodes.store.get(undefined, nodeName);
    const now = this.#clock.now();
    if (node === undefined) return this.#collectOrphan(pod, nodeName, now);
    this.#orphanSince.delete(uid);
    if (pod.metadata.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null) return;
    const phase = pod.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') return;
    const when = evictionTime(pod, taintsOf(node), now);
    if (when === undefined) return;
    if (when !== 'now' && when > now) return { requeueAfterMs: when - now };
    await this.#markDisruption(pod, 'DeletionByTaintManager', 'Taint manager: deleting due to NoExecute taint', false);
    await this.#deletePod(pod, undefined);
  }

  async #collectOrphan(pod: Pod, nodeName: string, now: number): Promise<WorkResult | void> {
    const uid = pod.metadata.uid ?? '';
    const since = this.#orphanSince.get(uid) ?? now;
    this.#orphanSince.set(uid, since);
    const due = since + ORPHAN_QUARANTINE_MS;
    if (now < due) return { requeueAfterMs: due - now };
    // The informer may lag: only a node the API server does not know is really gone.
    try {
      await this.#client.get(BUILTIN.nodes, nodeName);
      this.#orphanSince.delete(uid);
      return;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const phase = pod.status?.phase;
    await this.#markDisruption(pod, 'DeletionByPodGC', 'PodGC: node no longer exists', phase !== 'Succeeded' && phase !== 'Failed');
    // The quarantine record goes with the pod (onDelete): a late update event must not start a new one.
    await this.#deletePod(pod, 0);
  }

  /** Adds the DisruptionTarget condition (and, for pod GC, the Failed phase) before a deletion, as upstream. */
  async #markDisruption(pod: Pod, reason: string, message: string, fail: boolean): Promise<void> {
    if (getPodCondition(pod.status, 'DisruptionTarget')?.status === 'True' && !fail) return;
    const status: Record<string, unknown> = { conditions: [{ type: 'DisruptionTarget', status: 'True', reason, message, lastTransitionTime: formatTime(this.#clock.now()) }] };
    if (fail) status['phase'] = 'Failed';
    try {
      await this.#client.patchStatus(BUILTIN.pods, pod.metadata.name ?? '', { type: 'strategic', body: { status } }, { namespace: pod.metadata.namespace ?? '' });
    } catch (err) {
      if (!isNotFound(err)) this.#log.warn({ pod: objectKey(pod), err: describeError(err) }, 'cannot mark the pod before deleting it');
    }
  }

  async #deletePod(pod: Pod, gracePeriodSeconds: number | undefined): Promise<void> {
    try {
      await this.#client.delete(BUILTIN.pods, pod.metadata.name ?? '', {
        namespace: pod.metadata.namespace ?? '',
        preconditions: { uid: pod.metadata.uid ?? '' },
        ...(gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds }),
      });
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err)) throw err;
    }
  }
}

export const nodeLifecycleController: ControllerFactory = {
  name: 'node-lifecycle',
  create: (ctx) => new NodeLifecycleController({ client: ctx.client, clock: ctx.clock, logger: ctx.logger, races: ctx.races }),
};
