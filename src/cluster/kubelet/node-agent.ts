/**
 * The per-node half of the embedded kubelet: registers one fake node with the
 * API server (its Node object and its `kube-node-lease` Lease), keeps both
 * alive and hands out pod IPs from the node's pod CIDR.
 *
 * Heartbeats are background timers (they never hold a virtual clock's
 * `settle()`), as upstream's kubelet does them:
 * - the Lease's `renewTime` every 10 s (leaseDurationSeconds 40);
 * - the Node's conditions `lastHeartbeatTime` every 40 s, by a strategic
 *   merge patch of `status.conditions` (merge key `type`).
 * A failed heartbeat is logged and retried at the next beat; a Node deleted
 * behind the kubelet's back is not re-registered (a 1.32 kubelet only
 * registers at start-up). An agent is a `Runnable` (client/runnable.ts):
 * `start` registers the node and arms the heartbeats (it rejects, naming the
 * node, when the Node cannot be created), `stop` cancels them.
 * Pod IPs: the lowest free address .2–.254 of the node's /24, released when
 * the pod is gone; deterministic for a given order of pod starts.
 */
import type { Clock, Timer } from '../../clock/clock.ts';
import { describeError, isConflict, isNotFound } from '../../client/errors.ts';
import type { KubeClient } from '../../client/http-client.ts';
import type { Logger } from '../../client/logger.ts';
import { Lifecycle, type Runnable } from '../../client/runnable.ts';
import { BUILTIN } from '../../client/resources.ts';
import { formatMicroTime, formatTime } from '../../k8s/time.ts';
import type { KubeObject, Node } from '../../k8s/types.ts';
import type { KubeletBehaviour, NodeSpec } from '../../k8s/node-specs.ts';
import { behaviourOf, nodeInternalIp, nodeObject, nodePodCidr } from '../nodes.ts';

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
export const LEASE_DURATION_SECONDS = 40;
export const LEASE_RENEW_INTERVAL_MS = 10_000;
export const NODE_STATUS_INTERVAL_MS = 40_000;

const CONDITION_TYPES = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'];

export interface NodeAgentOptions {
  client: KubeClient;
  clock: Clock;
  logger: Logger;
  spec: NodeSpec;
  index: number;
}

export type RegisterResult = { ok: true } | { ok: false; error: string };

export class NodeAgent implements Runnable {
  readonly name: string;
  readonly hostIP: string;
  behaviour: KubeletBehaviour;
  readonly #client: KubeClient;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #spec: NodeSpec;
  readonly #index: number;
  readonly #timers: Timer[] = [];
  readonly #ipsInUse = new Map<string, number>();
  #lease: KubeObject | undefined;
  #uid = '';
  readonly #life = new Lifecycle();

  constructor(options: NodeAgentOptions) {
    this.#client = options.client;
    this.#clock = options.clock;
    this.#log = options.logger;
    this.#spec = options.spec;
    this.#index = options.index;
    this.name = options.spec.name;
    this.hostIP = nodeInternalIp(options.index);
    this.behaviour = behaviourOf(options.spec);
  }

  /** Creates the Node and its Lease, then starts the heartbeats; rejects when the Node cannot be created. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#life.start(signal, async () => {
      try {
        const created = await this.#client.create<Node>(BUILTIN.nodes, nodeObject(this.#spec, this.#index, this.#clock.now()));
        this.#uid = created.metadata?.uid ?? '';
      } catch (err) {
        throw new Error(`cannot register node ${this.name}: ${describeError(err)}`);
      }
      await this.#renewLease();
      if (this.#life.stopping) return;
      this.#timers.push(this.#clock.setInterval(() => this.#renewLease(), LEASE_RENEW_INTERVAL_MS, { background: true, name: `lease ${this.name}` }));
      this.#timers.push(this.#clock.setInterval(() => this.#heartbeat(), NODE_STATUS_INTERVAL_MS, { background: true, name: `node status ${this.name}` }));
    });
  }

  /** Stops the heartbeats (the machine is gone); the API objects stay. */
  stop(): Promise<void> {
    return this.#life.stop(() => {
      for (const t of this.#timers.splice(0)) t.cancel();
    });
  }

  /** Takes the lowest free pod IP for `uid` (the same one again for the same uid). */
  allocateIp(uid: string): string {
    const have = this.#ipsInUse.get(uid);
    const base = nodePodCidr(this.#index).replace(/\.0\/24$/, '');
    if (have !== undefined) return `${base}.${have}`;
    const used = new Set(this.#ipsInUse.values());
    let host = 2;
    while (used.has(host) && host < 254) host++;
    this.#ipsInUse.set(uid, host);
    return `${base}.${host}`;
  }

  /** Marks an address reported by an existing pod as taken (a kubelet restart finds its pods running). */
  adoptIp(uid: string, ip: string): void {
    const base = nodePodCidr(this.#index).replace(/\.0\/24$/, '');
    if (!ip.startsWith(`${base}.`)) return;
    const host = Number(ip.slice(base.length + 1));
    if (Number.isInteger(host)) this.#ipsInUse.set(uid, host);
  }

  releaseIp(uid: string): void {
    this.#ipsInUse.delete(uid);
  }

  #leaseObject(): KubeObject {
    const lease: KubeObject = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.name, namespace: NODE_LEASE_NAMESPACE, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: this.name, uid: this.#uid }] },
      spec: { holderIdentity: this.name, leaseDurationSeconds: LEASE_DURATION_SECONDS, renewTime: formatMicroTime(this.#clock.now()) },
    };
    if (this.#lease?.metadata?.resourceVersion !== undefined) lease.metadata = { ...this.#lease.metadata, ...lease.metadata, resourceVersion: this.#lease.metadata.resourceVersion };
    return lease;
  }

  async #renewLease(): Promise<void> {
    if (this.#life.stopping) return;
    try {
      this.#lease = this.#lease === undefined ? await this.#client.create(BUILTIN.leases, this.#leaseObject(), { namespace: NODE_LEASE_NAMESPACE }) : await this.#client.update(BUILTIN.leases, this.#leaseObject());
    } catch (err) {
      // Someone else wrote it (or deleted it): start again from what the server has.
      if (isConflict(err) || isNotFound(err)) {
        try {
          this.#lease = await this.#client.get(BUILTIN.leases, this.name, { namespace: NODE_LEASE_NAMESPACE });
        } catch {
          this.#lease = undefined;
        }
      }
      if (!this.#life.stopping) this.#log.debug({ node: this.name, err: describeError(err) }, 'lease renewal failed');
    }
  }

  async #heartbeat(): Promise<void> {
    if (this.#life.stopping) return;
    const now = formatTime(this.#clock.now());
    const conditions = CONDITION_TYPES.map((type) => ({ type, lastHeartbeatTime: now }));
    try {
      await this.#client.patchStatus(BUILTIN.nodes, this.name, { type: 'strategic', body: { status: { conditions } } });
    } catch (err) {
      if (!this.#life.stopping) this.#log.debug({ node: this.name, err: describeError(err) }, 'node status heartbeat failed');
    }
  }
}
