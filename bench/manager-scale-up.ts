/**
 * Benchmark: a Deployment scaled from 0 to N pods on the embedded cluster,
 * (1) with no manager, (2) with the manager running but no WorkloadSpread for
 * the Deployment, (3) with the manager and a 3-subset WorkloadSpread
 * (a max 30%, b max 30%, c unlimited, one zone each) — each in a fresh
 * cluster, first on the virtual clock, then on the real clock.
 *
 * Run:  node --expose-gc --import tsx bench/manager-scale-up.ts [pods=1000] [real=1]
 *       (or `npm run bench manager-scale-up`)
 *
 * Prints (figures only, no assertions):
 * - virtual clock: wall ms until all N pods exist (pods/s) and until settled,
 *   the virtual seconds until all exist, all run and nothing is left to do,
 *   API requests per pod, WorkloadSpread status writes and webhook conflicts;
 * - real clock (kubelet start delay 20 ms): wall ms until all N pods exist
 *   (pod-creation throughput, what admission slows down) and until all run;
 * - the ratios of (3) and (2) to (1);
 * - for (2) and (3) on the real clock: admission latency p50/p90/p99/max of
 *   the pod CREATE webhook (as the manager measured it, i.e. excluding the
 *   API server's TLS round trip; (2) is the cost of the webhook pipeline
 *   alone), and for (3) the group-commit batch sizes (how many admissions
 *   each status write carried).
 */
import { cpus, loadavg } from 'node:os';
import { domainDisruptionBudgetCrd, workloadSpreadCrd } from '../src/api/crd.ts';
import { realClock, type Clock } from '../src/clock/clock.ts';
import { VirtualClock } from '../src/clock/virtual-clock.ts';
import { BUILTIN } from '../src/client/resources.ts';
import { generateServingCertificate } from '../src/cluster/apiserver/certs.ts';
import { startCluster, type EmbeddedCluster } from '../src/cluster/cluster.ts';
import { defaultControllers } from '../src/cluster/controllers/registry.ts';
import type { KubeObject } from '../src/k8s/types.ts';
import { WORKLOADSPREAD_REF } from '../src/kube/refs.ts';
import { startManager, type Manager } from '../src/manager/manager.ts';
import { ManagerMetrics } from '../src/manager/metrics.ts';

const PODS = Number(process.argv[2] ?? 1000);
const REAL = (process.argv[3] ?? '1') !== '0';
const NS = 'bench';
const MANAGER_NS = 'workloadspread-system';
const certificate = generateServingCertificate();

type Config = 'no manager' | 'manager, no WorkloadSpread' | 'manager + 3-subset WorkloadSpread';
const CONFIGS: Config[] = ['no manager', 'manager, no WorkloadSpread', 'manager + 3-subset WorkloadSpread'];

interface Run {
  config: Config;
  createdMs: number;
  settledMs: number;
  virtualS?: number;
  createdVirtualS?: number;
  runningVirtualS?: number;
  requests: number;
  conflicts: number;
  statusWrites: number;
  latencies: number[];
  batches: number[];
}

function nodes(): { name: string; labels: Record<string, string>; capacity: Record<string, string> }[] {
  return ['a', 'b', 'c'].flatMap((z) => Array.from({ length: 10 }, (_, i) => ({ name: `${z}${i}`, labels: { 'topology.kubernetes.io/zone': z }, capacity: { cpu: '64', memory: '256Gi', pods: '250' } })));
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

async function activePods(c: EmbeddedCluster): Promise<{ created: number; running: number }> {
  const r = c.apiServer.control.list('v1', 'Pod', NS);
  if (!r.ok) return { created: 0, running: 0 };
  const items = r.value.items as { status?: { phase?: string }; metadata?: { deletionTimestamp?: string } }[];
  const live = items.filter((p) => p.metadata?.deletionTimestamp === undefined);
  return { created: live.length, running: live.filter((p) => p.status?.phase === 'Running').length };
}

async function runOnce(config: Config, clock: Clock): Promise<Run> {
  const virtual = clock instanceof VirtualClock ? clock : undefined;
  const c = await startCluster({ clock, certificate, nodes: nodes(), kubeletDelayMs: virtual === undefined ? 20 : 2_000, controllers: defaultControllers() });
  let manager: Manager | undefined;
  const latencies: number[] = [];
  const batches: number[] = [];
  let conflicts = 0;
  try {
    // Both CRDs, as the chart installs them (without the budget CRD the manager's budget informer keeps retrying).
    await c.apiServer.control.create(workloadSpreadCrd() as KubeObject);
    await c.apiServer.control.create(domainDisruptionBudgetCrd() as KubeObject);
    await c.client.create(BUILTIN.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: MANAGER_NS } });
    await c.client.create(BUILTIN.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    if (config !== 'no manager') {
      const metrics = new ManagerMetrics({ processMetrics: false });
      const admission = metrics.webhook.admission;
      metrics.webhook.admission = (webhook, operation, result, seconds) => {
        if (webhook === '/mutate-pod') latencies.push(seconds * 1000);
        admission?.(webhook, operation, result, seconds);
      };
      const batchSize = metrics.webhook.batchSize;
      metrics.webhook.batchSize = (n) => {
        batches.push(n);
        batchSize?.(n);
      };
      const conflict = metrics.webhook.conflict;
      metrics.webhook.conflict = () => {
        conflicts++;
        conflict?.();
      };
      manager = startManager({ client: await c.newClient('workloadspread-manager/bench'), clock, namespace: MANAGER_NS, identity: 'bench', metrics, leaderElection: false, webhook: { host: '127.0.0.1', port: 0, url: (own) => own, register: true } });
      if (virtual !== undefined) while (!manager.isReady()) await virtual.advance(100);
      await manager.ready;
    }
    if (config === 'manager + 3-subset WorkloadSpread') {
      const term = (z: string) => ({ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [z] }] });
      await c.client.create(WORKLOADSPREAD_REF, {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'WorkloadSpread',
        metadata: { name: 'spread', namespace: NS },
        spec: {
          targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
          subsets: [
            { name: 'a', requiredNodeSelectorTerm: term('a'), maxReplicas: '30%' },
            { name: 'b', requiredNodeSelectorTerm: term('b'), maxReplicas: '30%' },
            { name: 'c', requiredNodeSelectorTerm: term('c') },
          ],
        },
      });
    }
    await c.client.create(BUILTIN.deployments, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: NS },
      spec: { replicas: 0, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'nginx:1.27', resources: { requests: { cpu: '100m', memory: '128Mi' } } }] } } },
    });
    if (virtual !== undefined) await c.settle();
    else await realClock().sleep(500);
    latencies.length = 0;
    batches.length = 0;
    conflicts = 0;
    c.apiServer.control.resetCounters();

    const wall = performance.now();
    const virtualStart = clock.now();
    await c.client.scale(BUILTIN.deployments, 'web', PODS, { namespace: NS });
    let createdMs = NaN;
    let settledMs: number;
    let createdVirtualS: number | undefined;
    let runningVirtualS: number | undefined;
    if (virtual !== undefined) {
      // Steps of 100 ms of virtual time (each runs everything due to quiescence), noting when all pods
      // exist and when all run; then settle, which also runs out the controller's requeue timers.
      for (;;) {
        await virtual.quiesce();
        const { created, running } = await activePods(c);
        if (created >= PODS && createdVirtualS === undefined) {
          createdMs = performance.now() - wall;
          createdVirtualS = (clock.now() - virtualStart) / 1000;
        }
        if (running >= PODS) {
          runningVirtualS = (clock.now() - virtualStart) / 1000;
          break;
        }
        if (clock.now() - virtualStart > 60 * 60_000) throw new Error(`${config}: only ${created} created / ${running} running after an hour of virtual time`);
        await virtual.advance(100);
      }
      await c.settle(60 * 60_000);
      settledMs = performance.now() - wall;
    } else {
      for (;;) {
        const { created, running } = await activePods(c);
        if (created >= PODS && Number.isNaN(createdMs)) createdMs = performance.now() - wall;
        if (running >= PODS) break;
        if (performance.now() - wall > 15 * 60_000) throw new Error(`${config}: only ${created} created / ${running} running after 15 min`);
        await realClock().sleep(20);
      }
      settledMs = performance.now() - wall;
    }
    const ctl = c.apiServer.control;
    return {
      config,
      createdMs,
      settledMs,
      ...(virtual === undefined ? {} : { virtualS: (clock.now() - virtualStart) / 1000 }),
      ...(createdVirtualS === undefined ? {} : { createdVirtualS }),
      ...(runningVirtualS === undefined ? {} : { runningVirtualS }),
      conflicts,
      requests: ctl.requestCount({}),
      statusWrites: ctl.requestCount({ resource: 'workloadspreads', subresource: 'status', verb: 'update' }),
      latencies,
      batches,
    };
  } finally {
    await manager?.stop();
    await c.stop();
  }
}

function report(runs: Run[], label: string): void {
  console.log(`\n${label}`);
  const base = runs[0];
  for (const r of runs) {
    const created = Number.isNaN(r.createdMs) ? '' : `all ${PODS} created in ${r.createdMs.toFixed(0)} ms (${((PODS * 1000) / r.createdMs).toFixed(0)} pods/s), `;
    const virtual =
      r.virtualS === undefined ? '' : ` (virtual: all created at ${r.createdVirtualS?.toFixed(1)} s, all running at ${r.runningVirtualS?.toFixed(1)} s, quiet at ${r.virtualS.toFixed(1)} s)`;
    const settled = r.virtualS === undefined ? 'all running' : 'settled';
    console.log(`  ${r.config}: ${created}${settled} after ${r.settledMs.toFixed(0)} ms wall${virtual}; ${(r.requests / PODS).toFixed(1)} API requests/pod, ${r.statusWrites} WorkloadSpread status writes (${r.conflicts} webhook conflicts)`);
  }
  if (base !== undefined) {
    for (const r of runs.slice(1)) {
      const time = Number.isNaN(r.createdMs) ? r.settledMs / base.settledMs : r.createdMs / base.createdMs;
      const virtualRatio =
        r.createdVirtualS === undefined || base.createdVirtualS === undefined || base.createdVirtualS === 0 ? '' : `; virtual time until all created ${(r.createdVirtualS / base.createdVirtualS).toFixed(2)}×`;
      console.log(`  ratio ${r.config} / no manager: ${time.toFixed(2)}× the wall time until all created (${(1 / time).toFixed(2)}× the pod-creation throughput)${virtualRatio}`);
    }
  }
  for (const r of runs) {
    if (r.latencies.length === 0 || label.includes('virtual')) continue;
    const s = [...r.latencies].sort((x, y) => x - y);
    console.log(`  admission latency of pod CREATE, ${r.config} (${s.length} reviews, manager-side, ms clock): p50 ${percentile(s, 50).toFixed(0)} ms, p90 ${percentile(s, 90).toFixed(0)} ms, p99 ${percentile(s, 99).toFixed(0)} ms, max ${(s.at(-1) ?? NaN).toFixed(0)} ms`);
  }
  const spread = runs.at(-1);
  if (spread !== undefined && spread.batches.length > 0) {
    const b = [...spread.batches].sort((x, y) => x - y);
    const sum = b.reduce((x, y) => x + y, 0);
    console.log(`  group commit: ${b.length} status writes carried ${sum} reservations (mean ${(sum / b.length).toFixed(1)}, p50 ${percentile(b, 50)}, p90 ${percentile(b, 90)}, max ${b.at(-1)}) — without it, one write per reservation`);
  }
}

async function main(): Promise<void> {
  console.log(`Deployment 0 → ${PODS} pods, 30 nodes in 3 zones; WorkloadSpread a 30% / b 30% / c rest`);
  console.log(`(${cpus().length} CPUs, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}: the API server, controllers, kubelets and manager share this one process)`);
  const virtualRuns: Run[] = [];
  for (const config of CONFIGS) virtualRuns.push(await runOnce(config, new VirtualClock(Date.UTC(2026, 0, 1), { realWaitMs: 30 * 60_000 })));
  report(virtualRuns, 'virtual clock (kubelet start 2 s)');
  if (!REAL) return;
  const realRuns: Run[] = [];
  for (const config of CONFIGS) realRuns.push(await runOnce(config, realClock()));
  report(realRuns, 'real clock (kubelet start 20 ms)');
}

await main();
