/**
 * `startCluster`: the whole embedded Kubernetes in one call — the API server
 * on 127.0.0.1, the control loops (`defaultControllers()`: scheduler, node
 * lifecycle and the workload controllers), one kubelet playing every fake
 * node — on one clock (a new `VirtualClock` unless given one), plus the
 * programmatic controls tests, the simulator and the demo use.
 *
 * Every component talks to the API server over HTTPS with a client of its
 * own (user agent `workloadspread-embedded/<component>`); nothing here reaches
 * into the server's storage. They all authenticate with the admin token (a
 * user in `system:masters`, which RBAC never stops), as does the kubeconfig
 * the cluster writes; other identities (ServiceAccount tokens, impersonation)
 * are RBAC's to allow. Start order: API server → controllers (each
 * waits for its informers) → kubelet → nodes → `components` (the seam for the
 * WorkloadSpread manager); `stop()` runs it backwards and leaves no socket,
 * timer or watch behind.
 *
 * Webhook client authentication: `webhookClientCa()` (also handed to every
 * component) makes a client identity on first use — a CA and a certificate
 * it signs — and the API server presents that certificate to every admission
 * webhook (the admission kubeconfig user `*`); a webhook server that trusts
 * the CA authenticates the API server end to end.
 *
 * Node operations act as an operator with kubectl would: `cordon` patches
 * `spec.unschedulable`, `taint` edits `spec.taints` (a NoExecute taint gets
 * `timeAdded`), `removeNode` stops the node's kubelet (the machine is gone)
 * and deletes its Node — its pods are then collected by pod GC after 40 s
 * (node-lifecycle.ts), and their controllers replace them.
 * Race mode (`races`): the API server delays each watch event (in the
 * order of its stream) and each admission webhook call, every control loop
 * and the kubelet wait before each sync, and a virtual clock the cluster
 * makes orders same-instant work by the seed — all by delays drawn from
 * `races` on the clock, so what the manager sees (it is a client like any
 * other) interleaves differently for each seed. Without it, nothing changes.
 * Errors the caller's input can cause come back as data (`ClusterResult`);
 * `startCluster` rejects with `ClusterConfigError` for invalid options.
 */
import type { Clock } from '../clock/clock.ts';
import type { Races } from '../clock/races.ts';
import { VirtualClock, type SettleResult } from '../clock/virtual-clock.ts';
import { connectionFromToken, type Connection } from '../client/config.ts';
import { describeError, isConflict, isNotFound } from '../client/errors.ts';
import { KubeClient } from '../client/http-client.ts';
import { silentLogger, type Logger } from '../client/logger.ts';
import { BUILTIN } from '../client/resources.ts';
import { asArray, asRecord } from '../k8s/raw-json.ts';
import { formatTime } from '../k8s/time.ts';
import type { Node, Taint } from '../k8s/types.ts';
import { generateWebhookClientIdentity, type ServingCertificate, type WebhookClientIdentity } from '../client/loopback-certificates.ts';
import { startApiServer, type ApiServer, type ApiServerPlugin } from './apiserver/server.ts';
import { Kubelet } from './controllers/kubelet.ts';
import { componentUserAgent, DEFAULT_SETTINGS, type ClusterSettings, type Controller, type ControllerFactory } from './controllers/component.ts';
import { defaultControllers } from './controllers/registry.ts';
import { expandNodeSpecs, type KubeletBehaviour, type NodeSpecInput } from '../k8s/node-specs.ts';

export interface ClusterOptions {
  /** Default: a new VirtualClock (time moves only through settle/advance), in race mode with `races`. */
  clock?: Clock;
  /**
   * Race mode: random latencies (watch deliveries, webhook calls, controller
   * syncs) drawn from its seed. A clock passed in orders same-instant work
   * by the seed only if it was made with the same `races`.
   */
  races?: Races;
  /**
   * Admission webhooks are called, and timed, from a worker thread of their
   * own, as a multi-threaded API server calls them (webhook-thread.ts): their
   * timing no longer carries this process's own queue. For clusters on the
   * real clock (a virtual clock stands still while a call is out).
   */
  webhookThread?: boolean;
  nodes?: NodeSpecInput[];
  /** How long a kubelet takes to start a pod (default 2 s of clock time). */
  kubeletDelayMs?: number;
  /** How long a Job's pod runs before it succeeds (default 10 s). */
  jobPodDurationMs?: number;
  /** Upper bound of the time a deleted pod's containers take to stop (default 1 s). */
  podStopDelayMs?: number;
  /** API server port (default: any free one). */
  port?: number;
  /** Only loopback is served. */
  host?: '127.0.0.1';
  /** The control loops to run (default `defaultControllers()`). */
  controllers?: ControllerFactory[];
  /** More components started last and stopped first (the WorkloadSpread manager, a test's own loop). */
  components?: ControllerFactory[];
  logger?: Logger;
  /** Reuse a serving certificate (saves ~0.2 s per cluster in tests). */
  certificate?: ServingCertificate;
  /** API server plug-ins (admission, routes, formatters). */
  plugins?: ApiServerPlugin[];
  /** Cluster/context name in the kubeconfig. */
  name?: string;
  /** The API server's webhook client identity (default: made on first use; pass one to save ~0.2 s per cluster in tests). */
  webhookClientIdentity?: WebhookClientIdentity;
}

export type ClusterResult = { ok: true } | { ok: false; error: string };

export class ClusterConfigError extends Error {
  override readonly name = 'ClusterConfigError';
}

export interface EmbeddedCluster {
  readonly clock: Clock;
  /** The clock when it is virtual (settle/advance need it). */
  readonly virtualClock: VirtualClock | undefined;
  readonly apiServer: ApiServer;
  /** A client with admin credentials (user agent `workloadspread-embedded/admin`). */
  readonly client: KubeClient;
  /** Kubeconfig YAML for kubectl and client libraries. */
  readonly kubeconfig: string;
  readonly settings: ClusterSettings;
  writeKubeconfig(path: string): Promise<void>;
  /** The CA of the client certificate the API server presents to webhooks (made on first use). */
  webhookClientCa(): string;
  /** Another admin client (closed by `stop()`). */
  newClient(userAgent?: string): Promise<KubeClient>;
  /** Registers more fake nodes, in order. */
  addNodes(specs: NodeSpecInput[]): Promise<ClusterResult>;
  removeNode(name: string): Promise<ClusterResult>;
  cordon(name: string): Promise<ClusterResult>;
  uncordon(name: string): Promise<ClusterResult>;
  /** Adds a taint (replacing one with the same key and effect). */
  taint(name: string, taint: Taint): Promise<ClusterResult>;
  /** Removes the taints with `key` (and `effect`, when given). */
  untaint(name: string, key: string, effect?: string): Promise<ClusterResult>;
  setKubeletBehaviour(name: string, behaviour: KubeletBehaviour): ClusterResult;
  /** Names of the nodes this cluster's kubelet plays. */
  nodeNames(): string[];
  /**
   * Lets every component see what happened so far without moving the clock:
   * in race mode the watch events still on their way are delivered at once,
   * then (virtual clock) the components run what that makes due.
   */
  deliverWatchEvents(): Promise<void>;
  /** Virtual clock only: runs until nothing is pending (at most `maxMs` of clock time, default 30 min). */
  settle(maxMs?: number): Promise<SettleResult>;
  /** Virtual clock only: moves time forward by `ms`, running what falls due. */
  advance(ms: number): Promise<void>;
  stop(): Promise<void>;
}

const fail = (error: string): ClusterResult => ({ ok: false, error });
const OK: ClusterResult = { ok: true };

export async function startCluster(options: ClusterOptions = {}): Promise<EmbeddedCluster> {
  if (options.host !== undefined && options.host !== '127.0.0.1') throw new ClusterConfigError(`the embedded cluster only listens on 127.0.0.1, not ${String(options.host)}`);
  const initial = expandNodeSpecs(options.nodes ?? []);
  if (!initial.ok) throw new ClusterConfigError(initial.error);
  for (const [key, value] of [['kubeletDelayMs', options.kubeletDelayMs], ['jobPodDurationMs', options.jobPodDurationMs], ['podStopDelayMs', options.podStopDelayMs]] as const) {
    if (value !== undefined && !(Number.isFinite(value) && value >= 0)) throw new ClusterConfigError(`${key} must be a non-negative number of milliseconds`);
  }
  const races = options.races;
  const clock = options.clock ?? new VirtualClock(undefined, { races });
  const virtualClock = clock instanceof VirtualClock ? clock : undefined;
  const log = options.logger ?? silentLogger;
  const settings: ClusterSettings = {
    kubeletDelayMs: options.kubeletDelayMs ?? DEFAULT_SETTINGS.kubeletDelayMs,
    jobPodDurationMs: options.jobPodDurationMs ?? DEFAULT_SETTINGS.jobPodDurationMs,
    podStopDelayMs: options.podStopDelayMs ?? DEFAULT_SETTINGS.podStopDelayMs,
  };
  const apiServer = await startApiServer({
    clock,
    host: '127.0.0.1',
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.certificate !== undefined ? { certificate: options.certificate } : {}),
    ...(options.plugins !== undefined ? { plugins: options.plugins } : {}),
    ...(options.name !== undefined ? { name: options.name } : {}),
    ...(races !== undefined ? { races } : {}),
    ...(options.webhookThread === true ? { webhookThread: true } : {}),
  });
  const kubeconfig = apiServer.kubeconfig();
  const connections: Connection[] = [];
  const connect = async (userAgent: string, fieldManager: string, component = false): Promise<KubeClient> => {
    // What the kubeconfig says, without parsing it (that would load client-node, seconds on a small machine).
    const result = connectionFromToken({ server: apiServer.url, caPem: apiServer.caPem, token: apiServer.token, source: 'embedded cluster' });
    if (!result.ok) throw new Error(`${result.error.source}: ${result.error.message}`);
    connections.push(result.connection);
    // Components cache objects without managedFields, as kube-controller-manager and kube-scheduler do.
    return new KubeClient(result.connection, { clock, userAgent, fieldManager, ...(component ? { watchWithoutManagedFields: true } : {}) });
  };
  let clientIdentity: WebhookClientIdentity | undefined;
  const webhookClientCa = (): string => {
    if (clientIdentity === undefined) {
      clientIdentity = options.webhookClientIdentity ?? generateWebhookClientIdentity();
      apiServer.control.setWebhookClientCredentials('*', { certPem: clientIdentity.certPem, keyPem: clientIdentity.keyPem });
    }
    return clientIdentity.caPem;
  };
  const running: { name: string; controller: Controller }[] = [];
  // Aborts a component's start still under way when the cluster stops.
  const stopping = new AbortController();
  const stopAll = async () => {
    stopping.abort();
    for (const { name, controller } of running.splice(0).reverse()) {
      try {
        await controller.stop();
      } catch (err) {
        log.error({ component: name, err: describeError(err) }, 'component failed to stop');
      }
    }
    for (const c of connections.splice(0)) c.close();
    await apiServer.close();
  };

  const startComponent = async (factory: ControllerFactory): Promise<Controller> => {
    const client = await connect(componentUserAgent(factory.name), factory.name, true);
    const controller = await factory.create({ client, clock, logger: log, settings, webhookClientCa, races });
    running.push({ name: factory.name, controller });
    await controller.start(stopping.signal);
    return controller;
  };

  let kubelet: Kubelet;
  let admin: KubeClient;
  try {
    admin = await connect(componentUserAgent('admin'), 'workloadspread-embedded');
    for (const factory of options.controllers ?? defaultControllers()) await startComponent(factory);
    const kubeletClient = await connect(componentUserAgent('kubelet'), 'kubelet', true);
    kubelet = new Kubelet({ client: kubeletClient, clock, logger: log, settings, races });
    running.push({ name: 'kubelet', controller: kubelet });
    await kubelet.start(stopping.signal);
  } catch (err) {
    await stopAll();
    throw err;
  }

  const quiet = async () => {
    // On a virtual clock, let every watcher see what just happened before returning (no time passes).
    if (virtualClock !== undefined) await virtualClock.quiesce();
  };

  const addNodes = async (specs: NodeSpecInput[]): Promise<ClusterResult> => {
    const expanded = expandNodeSpecs(specs);
    if (!expanded.ok) return fail(expanded.error);
    for (const spec of expanded.nodes) {
      const r = await kubelet.registerNode(spec);
      if (!r.ok) return r;
    }
    await quiet();
    return OK;
  };

  /** Read-modify-write of a Node, retried on conflicts. */
  const editNode = async (name: string, edit: (node: Node) => Node | undefined): Promise<ClusterResult> => {
    for (let attempt = 0; attempt < 5; attempt++) {
      let node: Node;
      try {
        node = await admin.get<Node>(BUILTIN.nodes, name);
      } catch (err) {
        return fail(isNotFound(err) ? `node ${name} not found` : describeError(err));
      }
      const next = edit(structuredClone(node));
      if (next === undefined) return OK;
      try {
        await admin.update(BUILTIN.nodes, next);
        await quiet();
        return OK;
      } catch (err) {
        if (!isConflict(err)) return fail(describeError(err));
      }
    }
    return fail(`node ${name} kept changing; gave up after 5 attempts`);
  };

  const setTaints = (node: Node, taints: Taint[]): Node => {
    const spec = { ...(asRecord(node.spec) ?? {}) };
    if (taints.length > 0) spec['taints'] = taints;
    else delete spec['taints'];
    return { ...node, spec };
  };
  const taintsOf = (node: Node): Taint[] => (asArray(asRecord(node.spec)?.['taints']) ?? []) as Taint[];

  const cluster: EmbeddedCluster = {
    clock,
    virtualClock,
    apiServer,
    client: admin,
    kubeconfig,
    settings,
    writeKubeconfig: (path) => apiServer.writeKubeconfig(path),
    webhookClientCa,
    newClient: (userAgent) => connect(userAgent ?? componentUserAgent('admin'), 'workloadspread-embedded'),
    addNodes,
    removeNode: async (name) => {
      const known = kubelet.unregisterNode(name);
      try {
        await admin.delete(BUILTIN.nodes, name);
      } catch (err) {
        if (isNotFound(err)) return known ? OK : fail(`node ${name} not found`);
        return fail(describeError(err));
      }
      await quiet();
      return OK;
    },
    cordon: (name) => editNode(name, (n) => (asRecord(n.spec)?.['unschedulable'] === true ? undefined : { ...n, spec: { ...(asRecord(n.spec) ?? {}), unschedulable: true } })),
    uncordon: (name) =>
      editNode(name, (n) => {
        if (asRecord(n.spec)?.['unschedulable'] !== true) return undefined;
        const spec = { ...(asRecord(n.spec) ?? {}) };
        delete spec['unschedulable'];
        return { ...n, spec };
      }),
    taint: (name, taint) => {
      if (typeof taint?.key !== 'string' || taint.key === '') return Promise.resolve(fail('a taint needs a key'));
      if (!['NoSchedule', 'PreferNoSchedule', 'NoExecute'].includes(String(taint.effect))) return Promise.resolve(fail(`invalid taint effect ${JSON.stringify(taint.effect)}`));
      return editNode(name, (n) => {
        const added: Taint = { ...taint };
        if (added.effect === 'NoExecute' && added.timeAdded === undefined) added.timeAdded = formatTime(clock.now());
        const rest = taintsOf(n).filter((t) => !(t.key === taint.key && t.effect === taint.effect));
        return setTaints(n, [...rest, added]);
      });
    },
    untaint: (name, key, effect) =>
      editNode(name, (n) => {
        const taints = taintsOf(n);
        const rest = taints.filter((t) => !(t.key === key && (effect === undefined || t.effect === effect)));
        return rest.length === taints.length ? undefined : setTaints(n, rest);
      }),
    setKubeletBehaviour: (name, behaviour) => (kubelet.setBehaviour(name, behaviour) ? OK : fail(`node ${name} is not played by this cluster's kubelet`)),
    nodeNames: () => kubelet.nodeNames(),
    deliverWatchEvents: async () => {
      apiServer.deliverWatchEvents();
      await quiet();
    },
    settle: (maxMs) => {
      if (virtualClock === undefined) return Promise.reject(new Error('settle() needs a virtual clock'));
      return virtualClock.settle(maxMs);
    },
    advance: (ms) => {
      if (virtualClock === undefined) return Promise.reject(new Error('advance() needs a virtual clock'));
      return virtualClock.advance(ms);
    },
    stop: (() => {
      let stopped: Promise<void> | undefined;
      return () => (stopped ??= stopAll());
    })(),
  };

  try {
    if (initial.nodes.length > 0) {
      const r = await addNodes(initial.nodes);
      if (!r.ok) throw new ClusterConfigError(r.error);
    }
    for (const factory of options.components ?? []) await startComponent(factory);
    await quiet();
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}
