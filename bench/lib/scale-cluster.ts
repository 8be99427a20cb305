/**
 * The cluster side of bench/manager-scale-up.ts: the embedded cluster (API
 * server, controllers, kubelets) with 30 nodes in 3 zones and the CRDs and
 * namespaces the manager needs, plus what the benchmark reads from the API
 * server's side, cheaply enough not to disturb what it measures:
 *
 * - `pods()`: the benchmark namespace's pods in the store (stored, live =
 *   not deleting, bound = spec.nodeName set, running), kept up to date by a
 *   store listener (no list, no copy);
 * - `tally()`: since the last `reset()`, the API requests by group,
 *   resource, subresource, verb and user agent (the control API's
 *   `requestCounts()`), the admission webhook calls the server sent, pod
 *   DELETE and eviction calls split by whether the pod carries
 *   `workloadspread.io/managed=true` (for an eviction: the pod it names,
 *   looked up when the call is sent), the time each webhook call took as
 *   the API server saw it (by path and operation), and this
 *   process's CPU time (`process.cpuUsage()`).
 *
 * It runs in the benchmark's own process (virtual clock) or alone in a
 * child process (real clock, bench/lib/cluster-child.ts), where the CPU time
 * is that of the cluster alone.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { Clock } from '../../src/clock/clock.ts';
import { domainDisruptionBudgetCrd, workloadSpreadCrd } from '../../src/api/crd.ts';
import type { ServingCertificate } from '../../src/client/loopback-certificates.ts';
import { storageKey } from '../../src/cluster/apiserver/resource-def.ts';
import { defaultControllers, startCluster, type EmbeddedCluster, type RequestCount } from '../../src/cluster/index.ts';
import type { KubeObject } from '../../src/k8s/types.ts';

export const NS = 'bench';
export const MANAGER_NS = 'workloadspread-system';
export const MANAGED_LABEL = 'workloadspread.io/managed';

export interface PodCounts {
  /** Pods of the benchmark namespace in the store (deleting ones included). */
  stored: number;
  /** Not deleting. */
  live: number;
  /** Live with spec.nodeName. */
  bound: number;
  /** Live and Running. */
  running: number;
}

export interface WebhookTally {
  webhook: string;
  path: string;
  operation: string;
  resource: string;
  subresource: string;
  /** For a pod DELETE or eviction: whether the pod carries workloadspread.io/managed=true (`gone`: an eviction of a pod not found); `n/a` for other calls (a CREATE's pod has no label before the webhook adds it). */
  managed: 'yes' | 'no' | 'gone' | 'n/a';
  count: number;
}

export interface Tally {
  requests: RequestCount[];
  webhooks: WebhookTally[];
  /** `path operation` → the duration of every call since the last reset, in ms, as the API server timed it. */
  webhookMs: Record<string, number[]>;
  /** CPU time of this process since the last reset, in ms. */
  cpuMs: { user: number; system: number };
  /** This process's event-loop delay since the last reset (ms): p50, p99 — in every timing taken on it (not the webhook calls' when they are made from the webhook thread). */
  loopDelayMs: [number, number];
}

export interface ConnectionInfo {
  server: string;
  caPem: string;
  token: string;
}

/** What the benchmark asks of the cluster, wherever it runs. */
export interface ClusterSide {
  readonly connection: ConnectionInfo;
  pods(): Promise<PodCounts>;
  reset(): Promise<void>;
  tally(): Promise<Tally>;
  /** What one pod costs every watcher and every write: the mean length of the live pods' stored JSON (0 without pods). Asked once the CPU figures are taken. */
  podBytes(): Promise<number>;
  stop(): Promise<void>;
}

/** `perZone` nodes in each of zones a, b, c (default 10: 30 nodes). */
export function benchNodes(perZone = 10): { name: string; labels: Record<string, string>; capacity: Record<string, string> }[] {
  return ['a', 'b', 'c'].flatMap((z) => Array.from({ length: perZone }, (_, i) => ({ name: `${z}${i}`, labels: { 'topology.kubernetes.io/zone': z }, capacity: { cpu: '64', memory: '256Gi', pods: '250' } })));
}

interface PodState {
  live: boolean;
  bound: boolean;
  running: boolean;
}

function podState(obj: KubeObject): PodState {
  const live = obj.metadata?.deletionTimestamp === undefined || obj.metadata.deletionTimestamp === null;
  const spec = obj['spec'] as { nodeName?: string } | undefined;
  const status = obj['status'] as { phase?: string } | undefined;
  return { live, bound: live && typeof spec?.nodeName === 'string' && spec.nodeName !== '', running: live && status?.phase === 'Running' };
}

const labelsOf = (obj: KubeObject | undefined): Record<string, unknown> => (obj?.metadata?.labels ?? {}) as Record<string, unknown>;

/** The cluster in this process. */
export class LocalCluster implements ClusterSide {
  readonly cluster: EmbeddedCluster;
  readonly connection: ConnectionInfo;
  readonly #pods = new Map<string, PodState>();
  readonly #webhooks = new Map<string, WebhookTally>();
  #webhookMs = new Map<string, number[]>();
  readonly #stops: (() => void)[] = [];
  #cpuMark = process.cpuUsage();
  readonly #loop = monitorEventLoopDelay({ resolution: 10 });

  private constructor(cluster: EmbeddedCluster) {
    this.cluster = cluster;
    const server = cluster.apiServer;
    this.connection = { server: server.url, caPem: server.caPem, token: server.token };
    const core = server.core;
    this.#loop.enable();
    const watch = core.store.watch(storageKey({ group: '', plural: 'pods' }), NS, undefined, (e) => {
      if (e.type === 'DELETED') this.#pods.delete(e.key);
      else this.#pods.set(e.key, podState(e.object));
    });
    if (!watch.ok) throw new Error(`cannot watch the store: ${watch.reason}`);
    this.#stops.push(watch.cancel);
    this.#stops.push(
      server.control.onWebhookCall((call) => {
        let managed: WebhookTally['managed'] = 'n/a';
        if (call.group === '' && call.resource === 'pods' && ((call.operation === 'DELETE' && call.subresource === '') || call.subresource === 'eviction')) {
          // DELETE: the pod is oldObject; CREATE/UPDATE of a pod: object; an eviction: the pod it names.
          const pod = call.subresource === 'eviction' ? core.store.get(storageKey({ group: '', plural: 'pods' }), call.namespace, call.name) : (call.oldObject ?? call.object);
          managed = pod === undefined ? 'gone' : labelsOf(pod)[MANAGED_LABEL] === 'true' ? 'yes' : 'no';
        }
        const key = [call.webhook, call.path, call.operation, call.resource, call.subresource, managed].join('\u0000');
        const line = this.#webhooks.get(key);
        if (line !== undefined) line.count++;
        else this.#webhooks.set(key, { webhook: call.webhook, path: call.path, operation: call.operation, resource: call.resource, subresource: call.subresource, managed, count: 1 });
        const timing = `${call.path} ${call.operation}`;
        return (end) => {
          let list = this.#webhookMs.get(timing);
          if (list === undefined) this.#webhookMs.set(timing, (list = []));
          list.push(end.durationMs);
        };
      }),
    );
  }

  /** `webhookThread`: webhooks are called and timed off the API server's event loop (real clock only; see ClusterOptions). */
  static async start(clock: Clock, certificate: ServingCertificate, kubeletDelayMs: number, nodesPerZone = 10, webhookThread = false): Promise<LocalCluster> {
    const cluster = await startCluster({ clock, certificate, nodes: benchNodes(nodesPerZone), kubeletDelayMs, controllers: defaultControllers(), webhookThread });
    try {
      const control = cluster.apiServer.control;
      // Both CRDs, as the chart installs them (without the budget CRD the manager's budget informer keeps retrying).
      for (const obj of [workloadSpreadCrd(), domainDisruptionBudgetCrd(), namespace(MANAGER_NS), namespace(NS)]) {
        const r = await control.create(obj as KubeObject);
        if (!r.ok) throw new Error(`bench setup: ${r.status.message ?? ''}`);
      }
      return new LocalCluster(cluster);
    } catch (err) {
      await cluster.stop();
      throw err;
    }
  }

  pods(): Promise<PodCounts> {
    return Promise.resolve(this.podCounts());
  }

  podCounts(): PodCounts {
    const counts: PodCounts = { stored: 0, live: 0, bound: 0, running: 0 };
    for (const p of this.#pods.values()) {
      counts.stored++;
      if (p.live) counts.live++;
      if (p.bound) counts.bound++;
      if (p.running) counts.running++;
    }
    return counts;
  }

  reset(): Promise<void> {
    this.cluster.apiServer.control.resetCounters();
    this.#webhooks.clear();
    this.#webhookMs = new Map();
    this.#cpuMark = process.cpuUsage();
    this.#loop.reset();
    return Promise.resolve();
  }

  tally(): Promise<Tally> {
    const cpu = process.cpuUsage(this.#cpuMark);
    return Promise.resolve({
      requests: this.cluster.apiServer.control.requestCounts(),
      webhooks: [...this.#webhooks.values()].map((w) => ({ ...w })),
      webhookMs: Object.fromEntries([...this.#webhookMs].map(([k, v]) => [k, [...v]])),
      cpuMs: { user: cpu.user / 1000, system: cpu.system / 1000 },
      loopDelayMs: [this.#loop.percentile(50) / 1e6, this.#loop.percentile(99) / 1e6],
    });
  }

  podBytes(): Promise<number> {
    const store = this.cluster.apiServer.core.store;
    const key = storageKey({ group: '', plural: 'pods' });
    let bytes = 0;
    let n = 0;
    for (const [name, state] of this.#pods) {
      if (!state.live) continue;
      const obj = store.get(key, NS, name.slice(name.lastIndexOf('/') + 1));
      if (obj === undefined) continue;
      bytes += JSON.stringify(obj).length;
      n++;
    }
    return Promise.resolve(n === 0 ? 0 : bytes / n);
  }

  async stop(): Promise<void> {
    for (const stop of this.#stops.splice(0)) stop();
    this.#loop.disable();
    await this.cluster.stop();
  }
}

function namespace(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
}

/** The cluster in a child process (bench/lib/cluster-child.ts), on the real clock. */
export class RemoteCluster implements ClusterSide {
  readonly connection: ConnectionInfo;
  readonly #child: ChildProcess;
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  #seq = 0;

  private constructor(child: ChildProcess, connection: ConnectionInfo) {
    this.#child = child;
    this.connection = connection;
    child.on('message', (raw) => {
      const m = raw as { id: number; ok: boolean; value?: unknown; error?: string };
      const p = this.#pending.get(m.id);
      if (p === undefined) return;
      this.#pending.delete(m.id);
      if (m.ok) p.resolve(m.value);
      else p.reject(new Error(m.error ?? 'cluster child failed'));
    });
    child.on('exit', (code) => {
      for (const p of this.#pending.values()) p.reject(new Error(`cluster child exited (${code ?? 'signal'})`));
      this.#pending.clear();
    });
  }

  static start(kubeletDelayMs: number, nodesPerZone = 10): Promise<RemoteCluster> {
    const child = fork(fileURLToPath(new URL('./cluster-child.ts', import.meta.url)), [String(kubeletDelayMs), String(nodesPerZone)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`cluster child exited (${code ?? 'signal'}) before it was ready`));
      child.once('exit', onExit);
      child.once('message', (raw) => {
        child.off('exit', onExit);
        const m = raw as { ready?: ConnectionInfo };
        if (m.ready === undefined) {
          child.kill();
          reject(new Error('cluster child: unexpected first message'));
        } else resolve(new RemoteCluster(child, m.ready));
      });
    });
  }

  /** The child's process id (its CPU time is the cluster's). */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  #ask<T>(op: string): Promise<T> {
    const id = ++this.#seq;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.#child.send({ id, op });
    });
  }

  pods(): Promise<PodCounts> {
    return this.#ask('pods');
  }

  reset(): Promise<void> {
    return this.#ask('reset');
  }

  tally(): Promise<Tally> {
    return this.#ask('tally');
  }

  podBytes(): Promise<number> {
    return this.#ask('podBytes');
  }

  async stop(): Promise<void> {
    const exited = new Promise<void>((resolve) => {
      if (this.#child.exitCode !== null) resolve();
      else this.#child.once('exit', () => resolve());
    });
    await this.#ask('stop').catch(() => {});
    await exited;
  }
}
