/**
 * Benchmark: what the WorkloadSpread manager costs the API server when a
 * Deployment is scaled 0 → N pods (default 1,000) and back N → N/2 → 0, in
 * three configurations, each in a fresh embedded cluster (30 nodes, 3 zones):
 *   (1) no manager; (2) the manager running, no WorkloadSpread for the
 *   Deployment; (3) the manager and a 3-subset WorkloadSpread (a max 30 %,
 *   b max 30 %, c the rest, one zone each).
 *
 * Run:  npm run bench manager-scale-up      (or `npm run bench manager-`)
 *       node --expose-gc --import tsx bench/manager-scale-up.ts [pods=1000] [real=1] [runs=3]
 *       (real=0 skips the real-clock pass; its figures then print as n/a;
 *       runs: runs of each configuration per pass, interleaved, the tables
 *       showing each one's median run and the time ratios taken of medians —
 *       one run of each varies by ±30 % on a shared 2-CPU machine)
 *
 * Two passes, three configurations each:
 * - virtual clock (kubelet start 2 s): cluster, manager and benchmark share
 *   one process and one VirtualClock; times are virtual seconds and the wall
 *   ms the run took; the CPU figure is the whole process's;
 * - real clock (kubelet start 20 ms): the cluster (API server, controllers,
 *   kubelets) runs alone in a child process (bench/lib/cluster-child.ts),
 *   the manager in this process behind its HTTPS webhook, as a manager runs
 *   outside a real control plane; the CPU figures are each process's own.
 *
 * Prints, per pass (figures only, no assertions; nothing here makes the
 * process exit non-zero):
 * - time until all N pods are bound (spec.nodeName set), and the CPU time
 *   until then and until the cluster is quiet again; the mean size of a
 *   stored pod (what each write and watch event of a pod carries);
 * - API requests per pod during the scale-out, by resource[/subresource] and
 *   verb, all clients together (as the API server counted them), the writes
 *   per pod (create/update/patch/delete of anything) with node heartbeats
 *   (Leases, Node status) apart, since they depend on elapsed time only;
 * - the manager's own writes: WorkloadSpread status writes by writer (the
 *   webhook's group commit vs the controller, from the manager's status-writer
 *   metrics hook) and result, pod PATCHes (deletion cost, labels), Events;
 * - admission webhook calls by path, operation and resource, as the API
 *   server sent them (counted in the API server's webhook dispatcher), pod
 *   calls split by the label workloadspread.io/managed=true;
 * - real clock: pod-CREATE admission latency p50/p90/p99/max (manager-side,
 *   /mutate-pod) and the latency of one WorkloadSpread status write (the
 *   manager's PUT .../status, timed around the client call) p50/p99;
 * - scale-in N → N/2 → 0: time, CPU, writes per pod (by resource and
 *   verb) and the DELETE/eviction webhook calls split by the managed label;
 * and at the end, one block with the ratios issue 13's "Done when" names,
 * each with its target and PASS/FAIL.
 */
import { cpus, loadavg } from 'node:os';
import { realClock, type Clock } from '../src/clock/clock.ts';
import { VirtualClock } from '../src/clock/virtual-clock.ts';
import { connectionFromToken } from '../src/client/config.ts';
import { KubeClient } from '../src/client/http-client.ts';
import { BUILTIN } from '../src/client/resources.ts';
import { generateServingCertificate } from '../src/client/loopback-certificates.ts';
import type { RequestCount } from '../src/cluster/index.ts';
import { WORKLOADSPREAD_REF } from '../src/kube/refs.ts';
import { startManager, type Manager } from '../src/manager/manager.ts';
import { ManagerMetrics } from '../src/manager/metrics.ts';
import { clientFor, MANAGER_AGENT, newFigures, startBenchManager, type ManagerFigures } from './lib/bench-manager.ts';
import { LocalCluster, NS, RemoteCluster, type ClusterSide, type Tally, type WebhookTally } from './lib/scale-cluster.ts';

const PODS = Number(process.argv[2] ?? 1000);
const REAL = (process.argv[3] ?? '1') !== '0';
/** Runs of each configuration per pass, interleaved (1, 2, 3, 1, 2, 3, …); the tables show each configuration's median run. */
const REPS = Math.max(1, Number(process.argv[4] ?? 3));
const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
/** Background writes that depend on elapsed time only (kubelet heartbeats): counted apart. */
const isHeartbeat = (r: { resource: string }): boolean => r.resource === 'leases' || r.resource === 'nodes';
const certificate = generateServingCertificate();

type Config = 'no manager' | 'manager, no WorkloadSpread' | 'manager + WorkloadSpread';
const CONFIGS: Config[] = ['no manager', 'manager, no WorkloadSpread', 'manager + WorkloadSpread'];
type Mode = 'virtual' | 'real';

interface Run {
  config: Config;
  mode: Mode;
  boundWallMs: number;
  boundVirtualS?: number;
  quietVirtualS?: number;
  /** CPU of the cluster side (virtual: the whole process) from the scale request until all bound / until quiet. */
  clusterCpuBoundMs: number;
  clusterCpuQuietMs: number;
  /** Real clock: this process (manager + driver) from the scale request until quiet. */
  managerCpuMs?: number;
  out: Tally;
  outManager: ManagerFigures;
  /** Mean stored pod size once the scale-out is quiet (`ClusterSide.podBytes`). */
  podBytes: number;
  scaleInWallMs: number;
  scaleInVirtualS?: number;
  in: Tally;
  inManager: ManagerFigures;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

const cpuMs = (t: Tally): number => t.cpuMs.user + t.cpuMs.system;
const sum = (lines: { count: number }[]): number => lines.reduce((s, l) => s + l.count, 0);
const writes = (t: Tally): RequestCount[] => t.requests.filter((r) => WRITE_VERBS.has(r.verb));
const podWrites = (t: Tally): number => sum(writes(t).filter((r) => !isHeartbeat(r)));
const managerLines = (t: Tally): RequestCount[] => t.requests.filter((r) => r.userAgent === MANAGER_AGENT);
const managerPodPatches = (t: Tally): number => sum(managerLines(t).filter((r) => r.resource === 'pods' && r.subresource === '' && r.verb === 'patch'));
const deleteCalls = (t: Tally, managed?: WebhookTally['managed']): number =>
  sum(t.webhooks.filter((w) => w.resource === 'pods' && ((w.operation === 'DELETE' && w.subresource === '') || w.subresource === 'eviction') && (managed === undefined || w.managed === managed)));

async function runOnce(config: Config, mode: Mode): Promise<Run> {
  const virtual = mode === 'virtual' ? new VirtualClock(Date.UTC(2026, 0, 1), { realWaitMs: 30 * 60_000 }) : undefined;
  const clock: Clock = virtual ?? realClock();
  const side: ClusterSide = virtual !== undefined ? await LocalCluster.start(virtual, certificate, 2_000) : await RemoteCluster.start(20);
  const admin = clientFor(side.connection, clock, 'bench/admin');
  let figures = newFigures();
  let manager: Manager | undefined;
  const sleep = (ms: number) => realClock().sleep(ms);
  /** Virtual: lets everything due run, then moves 100 ms on. Real: waits 20 ms. */
  const step = async () => {
    if (virtual !== undefined) {
      await virtual.quiesce();
      await virtual.advance(100);
    } else await sleep(20);
  };
  const waitFor = async (what: string, done: (p: Awaited<ReturnType<ClusterSide['pods']>>) => boolean): Promise<void> => {
    const started = performance.now();
    for (;;) {
      if (virtual !== undefined) await virtual.quiesce();
      const p = await side.pods();
      if (done(p)) return;
      if (performance.now() - started > 15 * 60_000) throw new Error(`${config} (${mode}): ${what} not reached after 15 min: ${JSON.stringify(p)}`);
      await step();
    }
  };
  /** Virtual: settles. Real: waits until no request but node heartbeats came for 1 s. */
  const quiet = async () => {
    if (virtual !== undefined) {
      await virtual.settle(60 * 60_000);
      return;
    }
    const count = async () => sum((await side.tally()).requests.filter((r) => !isHeartbeat(r)));
    let last = await count();
    let since = performance.now();
    while (performance.now() - since < 1_000) {
      await sleep(100);
      const n = await count();
      if (n !== last) {
        last = n;
        since = performance.now();
      }
    }
  };
  const scale = (replicas: number) => admin.scale(BUILTIN.deployments, 'web', replicas, { namespace: NS });
  try {
    if (config !== 'no manager') {
      manager = startBenchManager(side.connection, clock, () => figures);
      if (virtual !== undefined) while (!manager.isReady()) await virtual.advance(100);
      await manager.ready;
    }
    if (config === 'manager + WorkloadSpread') {
      const term = (z: string) => ({ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [z] }] });
      await admin.create(WORKLOADSPREAD_REF, {
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
    await admin.create(BUILTIN.deployments, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: NS },
      spec: { replicas: 0, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'nginx:1.27', resources: { requests: { cpu: '100m', memory: '128Mi' } } }] } } },
    });
    if (virtual !== undefined) await virtual.settle();
    else await sleep(500);

    // ---- scale-out ----
    await side.reset();
    figures = newFigures();
    const outFigures = figures;
    const managerCpu = process.cpuUsage();
    const wall = performance.now();
    const virtualStart = clock.now();
    await scale(PODS);
    await waitFor(`all ${PODS} bound`, (p) => p.bound >= PODS);
    const boundWallMs = performance.now() - wall;
    const boundVirtualS = (clock.now() - virtualStart) / 1000;
    const atBound = await side.tally();
    await waitFor(`all ${PODS} running`, (p) => p.running >= PODS);
    await quiet();
    const quietVirtualS = (clock.now() - virtualStart) / 1000;
    const out = await side.tally();
    const managerCpuUsed = process.cpuUsage(managerCpu);
    const podBytes = await side.podBytes();

    // ---- scale-in: N → N/2 → 0, each step until the pods are gone ----
    await side.reset();
    figures = newFigures();
    const inFigures = figures;
    const inWall = performance.now();
    const inVirtualStart = clock.now();
    await scale(Math.floor(PODS / 2));
    await waitFor(`${Math.floor(PODS / 2)} pods left`, (p) => p.stored <= Math.floor(PODS / 2));
    await scale(0);
    await waitFor('no pod left', (p) => p.stored === 0);
    const scaleInWallMs = performance.now() - inWall;
    const scaleInVirtualS = (clock.now() - inVirtualStart) / 1000;
    await quiet();
    const inTally = await side.tally();

    return {
      config,
      mode,
      boundWallMs,
      ...(virtual !== undefined ? { boundVirtualS, quietVirtualS, scaleInVirtualS } : { managerCpuMs: (managerCpuUsed.user + managerCpuUsed.system) / 1000 }),
      clusterCpuBoundMs: cpuMs(atBound),
      clusterCpuQuietMs: cpuMs(out),
      out,
      outManager: outFigures,
      podBytes,
      scaleInWallMs,
      in: inTally,
      inManager: inFigures,
    };
  } finally {
    await manager?.stop();
    await side.stop();
  }
}

// ---- printing ----

const SHORT: Record<Config, string> = { 'no manager': '(1) no manager', 'manager, no WorkloadSpread': '(2) manager, no WS', 'manager + WorkloadSpread': '(3) manager + WS' };
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
const f0 = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : 'n/a');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');

function table(title: string, rows: [string, ...string[]][], runs: Run[]): void {
  const head = [title, ...runs.map((r) => SHORT[r.config])];
  const width = Math.max(head[0]?.length ?? 0, ...rows.map((r) => r[0].length));
  const cols = runs.map((_, i) => Math.max(head[i + 1]?.length ?? 0, ...rows.map((r) => r[i + 1]?.length ?? 0)));
  const line = (cells: string[]) => `  ${(cells[0] ?? '').padEnd(width)}  ${cells.slice(1).map((c, i) => c.padStart(cols[i] ?? 0)).join('  ')}`;
  console.log(line(head));
  for (const r of rows) console.log(line(r));
}

const label = (r: { resource: string; subresource: string; verb: string }) => `${r.resource}${r.subresource === '' ? '' : `/${r.subresource}`} ${r.verb}`;

/** Per-pod figures of request lines grouped by resource/subresource/verb, one row per group present in any run. */
function requestRows(runs: Run[], pick: (r: Run) => RequestCount[], perPod = true): [string, ...string[]][] {
  const keys = new Map<string, number>();
  for (const r of runs) for (const l of pick(r)) keys.set(label(l), (keys.get(label(l)) ?? 0) + l.count);
  const ordered = [...keys.entries()].sort((a, b) => b[1] - a[1]).map(([k]) => k);
  return ordered.map((k) => [`  ${k}`, ...runs.map((r) => {
    const n = sum(pick(r).filter((l) => label(l) === k));
    return perPod ? f2(n / PODS) : String(n);
  })]);
}

function webhookRows(runs: Run[], pick: (r: Run) => WebhookTally[]): [string, ...string[]][] {
  const key = (w: WebhookTally) => `  ${w.path} ${w.operation} ${w.resource}${w.subresource === '' ? '' : `/${w.subresource}`}${w.managed === 'n/a' ? '' : ` (managed=${w.managed})`}`;
  const keys = new Set<string>();
  for (const r of runs) for (const w of pick(r)) keys.add(key(w));
  return [...keys].sort().map((k) => [k, ...runs.map((r) => String(sum(pick(r).filter((w) => key(w) === k))))]);
}

function statusWriteCells(runs: Run[], m: (r: Run) => ManagerFigures, source: string): string[] {
  return runs.map((r) => {
    if (r.config === 'no manager') return '–';
    const entries = [...m(r).statusWrites.entries()].filter(([k]) => k.startsWith(`${source} `));
    const total = entries.reduce((s, [, n]) => s + n, 0);
    const failed = entries.filter(([k]) => !k.endsWith(' ok')).map(([k, n]) => `${n} ${k.slice(source.length + 1)}`);
    return `${total}${failed.length > 0 ? ` (${failed.join(', ')})` : ''}`;
  });
}

function report(runs: Run[], mode: Mode): void {
  const virtual = mode === 'virtual';
  console.log(`\n### ${virtual ? 'virtual clock (kubelet start 2 s; cluster, manager and benchmark in one process)' : 'real clock (kubelet start 20 ms; the cluster in a child process, the manager in this one)'}`);
  const rows: [string, ...string[]][] = [];
  rows.push([`time until all ${PODS} bound, wall ms`, ...runs.map((r) => f0(r.boundWallMs))]);
  if (virtual) {
    rows.push(['  virtual s until all bound', ...runs.map((r) => f2(r.boundVirtualS ?? NaN))]);
    rows.push(['  virtual s until quiet (all running, nothing left to do)', ...runs.map((r) => f2(r.quietVirtualS ?? NaN))]);
    rows.push(['CPU ms until all bound (whole process: cluster + manager + bench)', ...runs.map((r) => f0(r.clusterCpuBoundMs))]);
    rows.push(['CPU ms until quiet (whole process)', ...runs.map((r) => f0(r.clusterCpuQuietMs))]);
  } else {
    rows.push(['cluster process CPU ms until all bound (API server + controllers + kubelets)', ...runs.map((r) => f0(r.clusterCpuBoundMs))]);
    rows.push(['cluster process CPU ms until quiet', ...runs.map((r) => f0(r.clusterCpuQuietMs))]);
    rows.push(['bench process CPU ms until quiet (manager + driver)', ...runs.map((r) => f0(r.managerCpuMs ?? NaN))]);
  }
  // Larger pods (the injected affinity, marker, cost and label) cost every write and watch event more.
  rows.push(['stored pod JSON, mean bytes once all are running', ...runs.map((r) => f0(r.podBytes))]);
  table(`scale-out 0 → ${PODS}`, rows, runs);

  console.log('');
  const reqRows = requestRows(runs, (r) => r.out.requests);
  reqRows.push(['  all requests', ...runs.map((r) => f2(sum(r.out.requests) / PODS))]);
  reqRows.push(['writes (create/update/patch/delete), node heartbeats apart', ...runs.map((r) => f2(podWrites(r.out) / PODS))]);
  reqRows.push(['  node heartbeats (Lease renewals, Node status)', ...runs.map((r) => f2(sum(writes(r.out).filter(isHeartbeat)) / PODS))]);
  table('API requests per pod, scale-out (all clients)', reqRows, runs);

  console.log('');
  const mRows: [string, ...string[]][] = [];
  mRows.push(['WorkloadSpread status writes by the webhook (group commit)', ...statusWriteCells(runs, (r) => r.outManager, 'webhook')]);
  mRows.push(['WorkloadSpread status writes by the controller', ...statusWriteCells(runs, (r) => r.outManager, 'controller')]);
  mRows.push(['  (API server count: workloadspreads/status update)', ...runs.map((r) => String(sum(managerLines(r.out).filter((l) => l.resource === 'workloadspreads' && l.subresource === 'status'))))]);
  mRows.push(['pod PATCHes by the manager (deletion cost, labels)', ...runs.map((r) => (r.config === 'no manager' ? '–' : String(managerPodPatches(r.out))))]);
  mRows.push(['all manager writes per pod', ...runs.map((r) => (r.config === 'no manager' ? '–' : f2(sum(managerLines(r.out).filter((l) => WRITE_VERBS.has(l.verb))) / PODS)))]);
  mRows.push(['group-commit conflicts (webhook)', ...runs.map((r) => (r.config === 'no manager' ? '–' : String(r.outManager.conflicts)))]);
  mRows.push(...requestRows(runs, (r) => managerLines(r.out), false).map(([k, ...v]): [string, ...string[]] => [`  manager: ${k.trim()}`, ...v]));
  table('the manager, scale-out (counts)', mRows, runs);
  const spread = runs.find((r) => r.config === 'manager + WorkloadSpread');
  if (spread !== undefined && spread.outManager.batches.length > 0) {
    const b = [...spread.outManager.batches].sort((x, y) => x - y);
    const total = b.reduce((x, y) => x + y, 0);
    console.log(`  group commit (3): ${b.length} webhook status writes carried ${total} reservations (mean ${(total / b.length).toFixed(1)}, p50 ${percentile(b, 50)}, p90 ${percentile(b, 90)}, max ${b.at(-1)})`);
  }

  console.log('');
  const wRows = webhookRows(runs, (r) => r.out.webhooks);
  if (wRows.length === 0) wRows.push(['  (none)', ...runs.map(() => '0')]);
  table('webhook calls the API server sent, scale-out', wRows, runs);

  if (!virtual) {
    console.log('');
    for (const r of runs) {
      if (r.config === 'no manager') continue;
      const a = [...r.outManager.admissionMs].sort((x, y) => x - y);
      const s = [...r.outManager.statusWriteMs].sort((x, y) => x - y);
      const statusText = s.length === 0 ? 'no WorkloadSpread status write' : `one WorkloadSpread status write (${s.length} PUTs, webhook and controller): p50 ${f1(percentile(s, 50))} ms, p99 ${f1(percentile(s, 99))} ms`;
      console.log(`  ${SHORT[r.config]}: pod CREATE admission (${a.length} reviews, manager-side, ms clock): p50 ${f1(percentile(a, 50))} ms, p90 ${f1(percentile(a, 90))} ms, p99 ${f1(percentile(a, 99))} ms, max ${f1(a.at(-1) ?? NaN)} ms; ${statusText}`);
    }
  }

  console.log('');
  const iRows: [string, ...string[]][] = [];
  iRows.push([`time ${PODS} → ${Math.floor(PODS / 2)} → 0 until the pods are gone, wall ms`, ...runs.map((r) => f0(r.scaleInWallMs))]);
  if (virtual) iRows.push(['  virtual s', ...runs.map((r) => f2(r.scaleInVirtualS ?? NaN))]);
  iRows.push([`${virtual ? 'CPU ms (whole process)' : 'cluster process CPU ms'}, until quiet`, ...runs.map((r) => f0(cpuMs(r.in)))]);
  iRows.push(['writes per pod, node heartbeats apart', ...runs.map((r) => f2(podWrites(r.in) / PODS))]);
  iRows.push(['pod DELETE/eviction webhook calls, pods with workloadspread.io/managed=true', ...runs.map((r) => String(deleteCalls(r.in, 'yes')))]);
  iRows.push(['pod DELETE/eviction webhook calls, pods without it', ...runs.map((r) => String(deleteCalls(r.in) - deleteCalls(r.in, 'yes')))]);
  iRows.push(['pod PATCHes by the manager', ...runs.map((r) => (r.config === 'no manager' ? '–' : String(managerPodPatches(r.in))))]);
  iRows.push(['WorkloadSpread status writes (webhook / controller)', ...runs.map((r) => (r.config === 'no manager' ? '–' : `${statusWriteCells([r], (x) => x.inManager, 'webhook')[0]} / ${statusWriteCells([r], (x) => x.inManager, 'controller')[0]}`))]);
  iRows.push(...webhookRows(runs, (r) => r.in.webhooks));
  table('scale-in', iRows, runs);

  console.log('');
  const inReq = requestRows(runs, (r) => r.in.requests.filter((l) => WRITE_VERBS.has(l.verb) && !isHeartbeat(l)));
  table('API writes per pod, scale-in (all clients, node heartbeats apart)', inReq, runs);
}

function verdict(ok: boolean | undefined, target: string): string {
  if (target === '') return '    ';
  return ok === undefined ? 'n/a ' : ok ? 'PASS' : 'FAIL';
}

function doneWhen(virtualPass: Pass, realPass: Pass | undefined): void {
  const virtualRuns = virtualPass.medians;
  const realRuns = realPass?.medians;
  const get = (runs: Run[] | undefined, c: Config) => runs?.find((r) => r.config === c);
  const everyRun = [...virtualPass.all, ...(realPass?.all ?? [])];
  const medianOf = (pass: Pass | undefined, c: Config, pick: (r: Run) => number) => median((pass?.all ?? []).filter((r) => r.config === c).map(pick));
  const lines: [string, string, string, boolean | undefined][] = [];
  for (const [name, runs] of [['virtual', virtualRuns], ['real', realRuns]] as const) {
    const floor = get(runs, 'manager, no WorkloadSpread');
    const ws = get(runs, 'manager + WorkloadSpread');
    if (floor === undefined || ws === undefined) {
      lines.push([`writes/pod (3) − writes/pod (2), ${name} clock`, 'n/a (pass skipped)', '≤ 0.05', undefined]);
      continue;
    }
    const d = podWrites(ws.out) / PODS - podWrites(floor.out) / PODS;
    lines.push([`writes/pod (3) − writes/pod (2), ${name} clock (node heartbeats apart)`, f2(d), '≤ 0.05', d <= 0.05]);
  }
  for (const [name, runs, pass] of [['virtual', virtualRuns, virtualPass], ['real', realRuns, realPass]] as const) {
    const floor = get(runs, 'manager, no WorkloadSpread');
    const ws = get(runs, 'manager + WorkloadSpread');
    const ratio = floor === undefined || ws === undefined ? NaN : medianOf(pass, 'manager + WorkloadSpread', (r) => r.boundWallMs) / medianOf(pass, 'manager, no WorkloadSpread', (r) => r.boundWallMs);
    const what = name === 'virtual' ? 'wall ms (the manager\'s CPU shares the process with the cluster)' : 'wall ms';
    lines.push([`time to all bound (3) / (2), ${name}-clock pass, ${what}, medians of ${REPS}`, Number.isNaN(ratio) ? 'n/a (pass skipped)' : f2(ratio), '≤ 1.10', Number.isNaN(ratio) ? undefined : ratio <= 1.1]);
    if (name === 'virtual' && floor?.boundVirtualS !== undefined && ws?.boundVirtualS !== undefined) {
      // Admission, scheduling and binding take no virtual time unless something waits on the clock.
      const v = floor.boundVirtualS === 0 ? (ws.boundVirtualS === 0 ? 1 : Infinity) : ws.boundVirtualS / floor.boundVirtualS;
      lines.push([`time to all bound (3) / (2), virtual seconds (${f2(ws.boundVirtualS)} s / ${f2(floor.boundVirtualS)} s)`, f2(v), '≤ 1.10', v <= 1.1]);
    }
  }
  {
    let outside = 0;
    for (const r of everyRun) {
      if (r.config === 'manager, no WorkloadSpread') outside += deleteCalls(r.in) + deleteCalls(r.out);
      if (r.config === 'manager + WorkloadSpread') outside += deleteCalls(r.in) - deleteCalls(r.in, 'yes') + deleteCalls(r.out) - deleteCalls(r.out, 'yes');
    }
    lines.push(['pod DELETE/eviction webhook calls for pods outside every WorkloadSpread ((2) all, (3) unlabelled; every run)', String(outside), '= 0', outside === 0]);
  }
  {
    const ws = get(realRuns, 'manager + WorkloadSpread');
    if (ws === undefined) lines.push(['admission p99 / status-write p99, real clock (3)', 'n/a (real pass skipped)', '≤ 2', undefined]);
    else {
      const a = percentile([...ws.outManager.admissionMs].sort((x, y) => x - y), 99);
      const s = percentile([...ws.outManager.statusWriteMs].sort((x, y) => x - y), 99);
      const ratio = a / s;
      lines.push([`admission p99 / status-write p99, real clock (3): ${f1(a)} ms / ${f1(s)} ms`, f2(ratio), '≤ 2', Number.isFinite(ratio) ? ratio <= 2 : undefined]);
    }
  }
  {
    const spread = everyRun.filter((r) => r.config === 'manager + WorkloadSpread');
    const patches = spread.reduce((n, r) => n + managerPodPatches(r.out), 0);
    lines.push([`pod PATCHes by the manager during the scale-out (3), all ${spread.length} runs`, spread.length > 0 ? String(patches) : 'n/a', '= 0', spread.length > 0 ? patches === 0 : undefined]);
    const inPatches = spread.reduce((n, r) => n + managerPodPatches(r.in), 0);
    lines.push([`  (not a target) pod PATCHes by the manager during the scale-in (3), all ${spread.length} runs`, spread.length > 0 ? String(inPatches) : 'n/a', '', undefined]);
  }
  if (realPass !== undefined) {
    // Not a target here; on a real control plane: kube-apiserver CPU ≤ 1.1 × the floor run's.
    const r = medianOf(realPass, 'manager + WorkloadSpread', (x) => x.clusterCpuBoundMs) / medianOf(realPass, 'manager, no WorkloadSpread', (x) => x.clusterCpuBoundMs);
    lines.push([`  (not a target) cluster process CPU until bound (3) / (2), real clock, medians of ${REPS}`, f2(r), '', undefined]);
  }
  console.log('\n### issue 13 "Done when" (figures only; the benchmark asserts nothing)');
  const width = Math.max(...lines.map((l) => l[0].length));
  for (const [what, value, target, ok] of lines) console.log(`  ${verdict(ok, target)}  ${what.padEnd(width)}  ${value.padStart(8)}${target === '' ? '' : `  target ${target}`}`);
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? NaN) : ((s[mid - 1] ?? NaN) + (s[mid] ?? NaN)) / 2;
};

/** Every run of a pass, and each configuration's median run (by time until all bound) for the tables. */
interface Pass {
  all: Run[];
  medians: Run[];
}

async function runPass(mode: Mode): Promise<Pass> {
  const all: Run[] = [];
  for (let rep = 0; rep < REPS; rep++) for (const config of CONFIGS) all.push(await runOnce(config, mode));
  const medians = CONFIGS.map((config) => {
    const runs = all.filter((r) => r.config === config).sort((a, b) => a.boundWallMs - b.boundWallMs);
    return runs[Math.floor((runs.length - 1) / 2)] as Run;
  });
  return { all, medians };
}

/** The spread of the repeated runs: each configuration's times and CPU, and the (3)/(2) ratios of their medians. */
function repetitions(pass: Pass, mode: Mode): void {
  if (REPS === 1) return;
  console.log(`\n  ${REPS} runs of each configuration, interleaved (the tables above show each one's median run):`);
  for (const config of CONFIGS) {
    const runs = pass.all.filter((r) => r.config === config);
    const cpu = mode === 'real' ? `; cluster CPU ms until bound ${runs.map((r) => f0(r.clusterCpuBoundMs)).join(', ')}; manager CPU ms ${runs.map((r) => f0(r.managerCpuMs ?? NaN)).join(', ')}` : `; CPU ms until bound ${runs.map((r) => f0(r.clusterCpuBoundMs)).join(', ')}`;
    console.log(`    ${SHORT[config].padEnd(20)} wall ms until bound ${runs.map((r) => f0(r.boundWallMs)).join(', ')} (median ${f0(median(runs.map((r) => r.boundWallMs)))})${cpu}`);
  }
  const ratio = (pick: (r: Run) => number) =>
    median(pass.all.filter((r) => r.config === 'manager + WorkloadSpread').map(pick)) / median(pass.all.filter((r) => r.config === 'manager, no WorkloadSpread').map(pick));
  console.log(`    medians (3)/(2): time until bound ${f2(ratio((r) => r.boundWallMs))}, ${mode === 'real' ? 'cluster process' : 'whole process'} CPU until bound ${f2(ratio((r) => r.clusterCpuBoundMs))}`);
}

async function main(): Promise<void> {
  const started = performance.now();
  console.log(`Deployment 0 → ${PODS} → ${Math.floor(PODS / 2)} → 0 pods, 30 nodes in 3 zones; WorkloadSpread a 30% / b 30% / c rest; ${REPS} run(s) of each configuration per pass`);
  console.log(`(${cpus().length} CPUs, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')})`);
  const virtual = await runPass('virtual');
  report(virtual.medians, 'virtual');
  repetitions(virtual, 'virtual');
  let real: Pass | undefined;
  if (REAL) {
    real = await runPass('real');
    report(real.medians, 'real');
    repetitions(real, 'real');
  }
  doneWhen(virtual, real);
  console.log(`\n(benchmark took ${((performance.now() - started) / 1000).toFixed(0)} s wall; load average now ${loadavg().map((l) => l.toFixed(1)).join(' ')})`);
}

await main();
