/**
 * `simulate --kubeconfig FILE`: the same scenario against an existing
 * cluster, on the real clock. What changes compared with the embedded
 * backend (docs/scenarios.md, "Against a real cluster"):
 *
 * - The manager must already run there: the WorkloadSpread CRD and the
 *   manager's mutating webhook configuration must exist, else the run
 *   stops before touching anything, saying what is missing.
 * - The scenario's nodes are created as fake Node objects labelled
 *   `workloadspread.io/simulated=true`, and this process plays their
 *   kubelet — the embedded kubelet (src/cluster/controllers/kubelet.ts),
 *   which only speaks the Kubernetes API: bound pods become Running and
 *   Ready after `kubeletDelay`. A node name that exists and is not a
 *   simulated node is refused; a simulated leftover of an earlier run is
 *   replaced. Node operations of the steps only touch simulated nodes.
 * - `advance` waits real time; `settle` polls until the facts hold
 *   (settle-judgement.ts: every WorkloadSpread's status describes its pods,
 *   every workload finished its rollout — what a quiet period cannot tell,
 *   since the manager holds back status writes admission does not need) and
 *   the observed state has not changed for a quiet period (the longer of
 *   `cluster.quietPeriod` and the kubelet delay plus a second), at most its
 *   timeout, which then names what was still awaited.
 * - `stop()` (also on failure and Ctrl-C) deletes the nodes, force-deletes
 *   pods left bound to them, and stops the kubelet.
 */
import { realClock, type Clock } from '../clock/clock.ts';
import { connectionFromFiles, type Connection } from '../client/config.ts';
import { describeError, isNotFound } from '../client/errors.ts';
import { KubeClient } from '../client/http-client.ts';
import { silentLogger, type Logger } from '../client/logger.ts';
import { BUILTIN } from '../client/resources.ts';
import { Kubelet } from '../cluster/index.ts';
import type { NodeSpec } from '../k8s/node-specs.ts';
import { asArray, asRecord, asString } from '../k8s/raw-json.ts';
import { formatTime } from '../k8s/time.ts';
import type { KubeObject, Node, Pod, Taint } from '../k8s/types.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import { MUTATING_CONFIGURATION_NAME } from '../webhook/registration.ts';
import { failed, ok, withJudgement, type BackendResult, type SettleOutcome, type SettleProbe, type SimBackend } from './backend.ts';
import type { Scenario } from './scenario.ts';

export const SIMULATED_NODE_LABEL = 'workloadspread.io/simulated';
export const SIMULATE_USER_AGENT = 'workloadspread-simulate';
const POLL_MS = 250;
/** `advance` longer than this prints a warning: it really waits. */
export const LONG_ADVANCE_MS = 60_000;

export interface LiveBackendOptions {
  /** Path of the kubeconfig file. */
  kubeconfig: string;
  /** A context of that file other than its current-context. */
  context?: string;
  log?: Logger;
  /** Called with a one-line warning (long waits). */
  warn?: (message: string) => void;
  /** Default: the real clock (tests may pass another real-time clock). */
  clock?: Clock;
}

/**
 * Why the cluster cannot run scenarios (`problem`), or the manager's
 * namespace when its webhook is reached through a Service (where its
 * whitelist config map lives).
 */
async function checkManager(client: KubeClient): Promise<{ problem?: string; managerNamespace?: string }> {
  const crd = `${WORKLOADSPREAD_REF.resource}.${WORKLOADSPREAD_REF.group}`;
  try {
    await client.get(BUILTIN.customresourcedefinitions, crd);
  } catch (err) {
    if (isNotFound(err)) return { problem: `the WorkloadSpread CRD (${crd}) is not installed in this cluster; install the manager first (docs/operations.md)` };
    return { problem: `cannot reach the cluster: ${describeError(err)}` };
  }
  let configuration: KubeObject;
  try {
    configuration = await client.get<KubeObject>(BUILTIN.mutatingwebhookconfigurations, MUTATING_CONFIGURATION_NAME);
  } catch (err) {
    if (isNotFound(err)) return { problem: `no WorkloadSpread manager runs in this cluster: the MutatingWebhookConfiguration ${MUTATING_CONFIGURATION_NAME} does not exist; install the manager first (docs/operations.md)` };
    return { problem: `cannot read the webhook configurations: ${describeError(err)}` };
  }
  for (const w of asArray(configuration['webhooks']) ?? []) {
    const namespace = asString(asRecord(asRecord(asRecord(w)?.['clientConfig'])?.['service'])?.['namespace']);
    if (namespace !== undefined && namespace !== '') return { managerNamespace: namespace };
  }
  return {};
}

const taintsOf = (node: Node): Taint[] => (asArray(asRecord(node.spec)?.['taints']) ?? []) as Taint[];

class LiveBackend implements SimBackend {
  readonly mode = 'kubeconfig' as const;
  managerNamespace: string | undefined;
  readonly client: KubeClient;
  readonly clock: Clock;
  readonly #connection: Connection;
  readonly #kubelet: Kubelet;
  readonly #nodes = new Set<string>();
  readonly #quietMs: number;
  readonly #log: Logger;
  readonly #warn: (message: string) => void;
  #stopped: Promise<void> | undefined;

  constructor(client: KubeClient, connection: Connection, kubelet: Kubelet, quietMs: number, log: Logger, warn: (m: string) => void) {
    this.client = client;
    this.clock = client.clock;
    this.#connection = connection;
    this.#kubelet = kubelet;
    this.#quietMs = quietMs;
    this.#log = log;
    this.#warn = warn;
  }

  async addNodes(specs: NodeSpec[]): Promise<BackendResult> {
    for (const spec of specs) {
      try {
        const existing = await this.client.get<Node>(BUILTIN.nodes, spec.name);
        if (existing.metadata?.labels?.[SIMULATED_NODE_LABEL] !== 'true') return failed(`node ${spec.name} already exists in the cluster and is not a simulated node; rename it in the scenario`);
        // A leftover of an interrupted run.
        await this.client.delete(BUILTIN.nodes, spec.name);
      } catch (err) {
        if (!isNotFound(err)) return failed(`cannot read node ${spec.name}: ${describeError(err)}`);
      }
      const labelled: NodeSpec = { ...spec, labels: { ...(spec.labels ?? {}), [SIMULATED_NODE_LABEL]: 'true' } };
      this.#nodes.add(spec.name);
      const r = await this.#kubelet.registerNode(labelled);
      if (!r.ok) {
        this.#nodes.delete(spec.name);
        return r;
      }
    }
    return ok;
  }

  async removeNode(name: string): Promise<BackendResult> {
    if (!this.#nodes.has(name)) return failed(`node ${name} is not one of the scenario's nodes`);
    this.#kubelet.unregisterNode(name);
    this.#nodes.delete(name);
    try {
      await this.client.delete(BUILTIN.nodes, name);
    } catch (err) {
      if (!isNotFound(err)) return failed(describeError(err));
    }
    return ok;
  }

  /** Read-modify-write of one of the scenario's nodes. */
  async #editNode(name: string, edit: (node: Node) => Node | undefined): Promise<BackendResult> {
    if (!this.#nodes.has(name)) return failed(`node ${name} is not one of the scenario's nodes`);
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        const node = await this.client.get<Node>(BUILTIN.nodes, name);
        const next = edit(structuredClone(node));
        if (next === undefined) return ok;
        await this.client.update(BUILTIN.nodes, next);
        return ok;
      } catch (err) {
        if ((err as { code?: number }).code !== 409) return failed(describeError(err));
      }
    }
    return failed(`node ${name} kept changing; gave up after 5 attempts`);
  }

  cordon(name: string): Promise<BackendResult> {
    return this.#editNode(name, (n) => (asRecord(n.spec)?.['unschedulable'] === true ? undefined : { ...n, spec: { ...(asRecord(n.spec) ?? {}), unschedulable: true } }));
  }

  uncordon(name: string): Promise<BackendResult> {
    return this.#editNode(name, (n) => {
      const spec = { ...(asRecord(n.spec) ?? {}) };
      if (spec['unschedulable'] !== true) return undefined;
      delete spec['unschedulable'];
      return { ...n, spec };
    });
  }

  taint(name: string, taint: Taint): Promise<BackendResult> {
    return this.#editNode(name, (n) => {
      const added: Taint = { ...taint };
      if (added.effect === 'NoExecute' && added.timeAdded === undefined) added.timeAdded = formatTime(this.clock.now());
      const rest = taintsOf(n).filter((t) => !(t.key === taint.key && t.effect === taint.effect));
      return { ...n, spec: { ...(asRecord(n.spec) ?? {}), taints: [...rest, added] } };
    });
  }

  untaint(name: string, key: string, effect?: string): Promise<BackendResult> {
    return this.#editNode(name, (n) => {
      const taints = taintsOf(n);
      const rest = taints.filter((t) => !(t.key === key && (effect === undefined || t.effect === effect)));
      if (rest.length === taints.length) return undefined;
      const spec = { ...(asRecord(n.spec) ?? {}) };
      if (rest.length > 0) spec['taints'] = rest;
      else delete spec['taints'];
      return { ...n, spec };
    });
  }

  async quiesce(): Promise<void> {}

  async deliver(): Promise<void> {}

  perform<T>(work: () => Promise<T>): Promise<T> {
    return work();
  }

  async settle(timeoutMs: number, probe: SettleProbe, signal?: AbortSignal): Promise<SettleOutcome> {
    const start = this.clock.now();
    let last = await probe.look();
    let changedAt = start;
    for (;;) {
      const now = this.clock.now();
      if (last.judgement.settled && now - changedAt >= this.#quietMs) return withJudgement({ quiescent: true, elapsedMs: now - start }, last.judgement);
      if (now - start >= timeoutMs) {
        const outcome = withJudgement({ quiescent: false, elapsedMs: now - start }, last.judgement);
        // The facts held, but the cluster kept changing.
        return last.judgement.settled ? { ...outcome, waitingFor: [`the cluster to stop changing for ${Math.round(this.#quietMs / 100) / 10} s`] } : outcome;
      }
      await this.clock.sleep(POLL_MS, signal);
      const current = await probe.look();
      if (current.fingerprint !== last.fingerprint) changedAt = this.clock.now();
      last = current;
    }
  }

  async advance(ms: number, signal?: AbortSignal): Promise<void> {
    if (ms > LONG_ADVANCE_MS) this.#warn(`advance: waiting ${Math.round(ms / 1000)} s of real time (--kubeconfig mode runs on the real clock)`);
    await this.clock.sleep(ms, signal);
  }

  stop(): Promise<void> {
    this.#stopped ??= this.#cleanUp();
    return this.#stopped;
  }

  async #cleanUp(): Promise<void> {
    const names = [...this.#nodes];
    for (const name of names) {
      this.#kubelet.unregisterNode(name);
      try {
        await this.client.delete(BUILTIN.nodes, name);
      } catch (err) {
        if (!isNotFound(err)) this.#log.warn({ node: name, err: describeError(err) }, 'cannot delete a simulated node');
      }
    }
    this.#nodes.clear();
    // Pods still bound to the deleted nodes have no kubelet left to confirm their end.
    for (const name of names) {
      try {
        const pods = await this.client.list<Pod>(BUILTIN.pods, { fieldSelector: `spec.nodeName=${name}` });
        for (const p of pods.items) {
          await this.client.delete(BUILTIN.pods, p.metadata?.name ?? '', { namespace: p.metadata?.namespace ?? '', gracePeriodSeconds: 0 }).catch(() => {});
        }
      } catch (err) {
        this.#log.warn({ node: name, err: describeError(err) }, 'cannot clean up the pods of a simulated node');
      }
    }
    await this.#kubelet.stop().catch(() => {});
    this.#connection.close();
  }
}

/** Connects, checks that the manager runs, starts the kubelet and registers the scenario's nodes. */
export async function startLiveBackend(scenario: Scenario, options: LiveBackendOptions): Promise<SimBackend> {
  const log = options.log ?? silentLogger;
  const loaded = await connectionFromFiles([options.kubeconfig], options.context === undefined ? {} : { context: options.context });
  if (!loaded.ok) throw new Error(`${loaded.error.source}: ${loaded.error.message}`);
  const connection = loaded.connection;
  const clock = options.clock ?? realClock();
  const client = new KubeClient(connection, { clock, userAgent: SIMULATE_USER_AGENT, fieldManager: SIMULATE_USER_AGENT });
  const c = scenario.cluster;
  const kubelet = new Kubelet({
    client,
    clock,
    logger: log,
    settings: { kubeletDelayMs: c.kubeletDelayMs, ...(c.jobPodDurationMs === undefined ? {} : { jobPodDurationMs: c.jobPodDurationMs }), ...(c.podStopDelayMs === undefined ? {} : { podStopDelayMs: c.podStopDelayMs }) },
  });
  const backend = new LiveBackend(client, connection, kubelet, Math.max(c.quietPeriodMs, c.kubeletDelayMs + 1_000), log, options.warn ?? (() => {}));
  try {
    const checked = await checkManager(client);
    if (checked.problem !== undefined) throw new Error(checked.problem);
    backend.managerNamespace = checked.managerNamespace;
    await kubelet.start();
    const added = await backend.addNodes(scenario.nodes);
    if (!added.ok) throw new Error(added.error);
    return backend;
  } catch (err) {
    await backend.stop();
    throw err;
  }
}
