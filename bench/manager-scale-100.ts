/**
 * Benchmark: ten thousand pods under a hundred WorkloadSpreads. The shape of
 * the real-cluster measurement: 100 Deployments × 100 replicas scaled from 0
 * at once on ~100 nodes over 3 zones, then each scaled in to 30, in three
 * configurations — (1) no manager, (2) the manager without any
 * WorkloadSpread, (3) the manager with one WorkloadSpread per Deployment (a
 * third int 30/30/rest, a third percent 20 %/30 %/rest, a third Adaptive
 * own 40 + elastic) — run interleaved.
 *
 * Run:  npm run bench manager-scale-100
 *       node --expose-gc --import tsx bench/manager-scale-100.ts [deployments=100] [replicas=100] [runs=1] [profile=0] [scaleInTo=30] [configs=123] [manager=dist]
 *       (profile=1 writes CPU profiles of this process — the manager — for
 *       the scale-out and the scale-in of configuration (3) to
 *       /tmp/workloadspread-bench-profiles/ and prints their top functions;
 *       configs: which to run, e.g. 3 or 23; 4 adds (2) with --webhook-scope=cluster,
 *       a manager that reviews every pod's CREATE and changes none — the
 *       floor of the real-cluster table;
 *       manager: `dist` (default) runs the published build, `dist/` as
 *       `workloadspread manager` in its own process, measured from outside
 *       (/proc, its /metrics; with profile=1 a --cpu-prof of the whole run
 *       of every manager configuration, CPU.<configuration number>.*.cpuprofile);
 *       `tsx` runs it in this process through tsx, with exact latencies);
 *       profile=perf (published build only) records the manager's CPU with
 *       Linux perf in the scale-out and the scale-in of every manager
 *       configuration and prints, per phase, its CPU by thread and by kind of
 *       work (JavaScript, TurboFan compiling, garbage collection, JSON,
 *       kernel, other native) and the main thread's heaviest functions —
 *       CPU time, where profile=1's V8 profiles count wall-clock time, a wait
 *       for a CPU included)
 *
 * WS_BENCH_HEAPSNAPSHOT=1 (with manager=dist) writes a heap snapshot of the
 * manager once the scale-out has settled (after a GC), into the repository's
 * directory, to compare what (2) and (3) keep.
 *
 * The embedded cluster runs alone in a child process on the real clock
 * (bench/lib/cluster-child.ts; kubelet start 20 ms), the manager in a process
 * of its own (or this one) behind its HTTPS webhook, as a manager runs
 * outside a real control plane, so each process's CPU time is its own.
 *
 * Prints (figures only, no assertions; nothing here makes the process exit
 * non-zero), per configuration (median run): time until all pods are bound,
 * pods created per second, cluster CPU, manager CPU (until the cluster is
 * quiet) and per pod (split by thread, and how long its main thread waited
 * for a CPU while runnable: on a shared 2-core machine that wait, not the
 * handler, is most of a review's latency), pod CREATE webhook latency as the API server saw it
 * (mean, p50, p99; timed on the embedded API server's webhook thread, as
 * kube-apiserver times a call on a goroutine of its own, so its own event
 * loop's queue is not in it) and inside the handler (p50, p90, p99), WorkloadSpread
 * status writes by writer, the scale-in's time, DELETE/eviction reviews per
 * deleted pod and cluster CPU, the manager's RSS and heap once settled (after
 * a GC) and per pod; then the ratios the issue names with their targets, and
 * the correctness checks of (3): every subset within its limit, the exact
 * split of each kind, every status equal to the pods.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { realClock } from '../src/clock/clock.ts';
import type { KubeClient } from '../src/client/http-client.ts';
import { BUILTIN } from '../src/client/resources.ts';
import type { WorkloadSpread } from '../src/api/workloadspread.ts';
import type { Pod } from '../src/k8s/types.ts';
import { WORKLOADSPREAD_REF } from '../src/kube/refs.ts';
import type { Manager } from '../src/manager/manager.ts';
import { clientFor, newFigures, startBenchManager, type ManagerFigures } from './lib/bench-manager.ts';
import { bucketsOf, bucketsSince, quantileOf, sampleOf, startDistManager, sumOf, type DistManager } from './lib/dist-manager.ts';
import { AdmissionProbe } from './lib/admission-probe.ts';
import { PERF_NODE_ARGS, perfUnavailable, printCompiles, printSummary, recordProcess, summarize, turboFanCompiles, type PerfRecording, type TurboFanCompiles } from './lib/perf-profile.ts';
import { NS, RemoteCluster, type Tally } from './lib/scale-cluster.ts';

const DEPLOYMENTS = Number(process.argv[2] ?? 100);
const REPLICAS = Number(process.argv[3] ?? 100);
const REPS = Math.max(1, Number(process.argv[4] ?? 1));
const PROFILE = (process.argv[5] ?? '0') === '1';
/** `profile=perf`: CPU-time profiles of the published-build manager with Linux perf (bench/lib/perf-profile.ts). */
const PERF_ASKED = (process.argv[5] ?? '0') === 'perf';
const SCALE_IN_TO = Number(process.argv[6] ?? 30);
const ONLY = process.argv[7] ?? '123';
const DIST = (process.argv[8] ?? 'dist') === 'dist';
const PODS = DEPLOYMENTS * REPLICAS;
/** Why profile=perf records nothing here (undefined: it records). */
const PERF_MISSING = PERF_ASKED ? (DIST ? perfUnavailable() : 'perf profiles the published build only (manager=dist)') : undefined;
const PERF = PERF_ASKED && PERF_MISSING === undefined;
const NODES_PER_ZONE = 34;
const PROFILE_DIR = '/tmp/workloadspread-bench-profiles';
/** How long the manager idles after the scale-out before its RSS is read again. */
const IDLE_MS = 30_000;
const MARKER = 'apps.kruise.io/matched-workloadspread';

type Config = '(1) no manager' | '(2) manager, no WS' | '(3) manager + WS' | '(4) manager, no WS, every pod reviewed';
/** (4): (2) with `--webhook-scope=cluster`, so every pod's CREATE reaches the manager's webhook and is answered unchanged (DELETEs of unlabelled pods still do not) — the floor of the real-cluster table, measured before the pod webhooks reached only namespaces with a WorkloadSpread. Published build only. */
const CONFIGS: Config[] = (['(1) no manager', '(2) manager, no WS', '(3) manager + WS', '(4) manager, no WS, every pod reviewed'] as const).filter((c) => ONLY.includes(c.charAt(1)));
type Kind = 'int' | 'percent' | 'adaptive';

const kindOf = (i: number): Kind => (['int', 'percent', 'adaptive'] as const)[i % 3] ?? 'int';
const name = (i: number): string => `web-${String(i).padStart(3, '0')}`;
const zone = (...zones: string[]) => ({ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: zones }] });

function spreadSpec(i: number): WorkloadSpread['spec'] {
  const targetRef = { apiVersion: 'apps/v1', kind: 'Deployment', name: name(i) };
  switch (kindOf(i)) {
    case 'int':
      return { targetRef, subsets: [{ name: 'a', requiredNodeSelectorTerm: zone('a'), maxReplicas: 30 }, { name: 'b', requiredNodeSelectorTerm: zone('b'), maxReplicas: 30 }, { name: 'c', requiredNodeSelectorTerm: zone('c') }] };
    case 'percent':
      return { targetRef, subsets: [{ name: 'a', requiredNodeSelectorTerm: zone('a'), maxReplicas: '20%' }, { name: 'b', requiredNodeSelectorTerm: zone('b'), maxReplicas: '30%' }, { name: 'c', requiredNodeSelectorTerm: zone('c') }] };
    case 'adaptive':
      return {
        targetRef,
        scheduleStrategy: { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 30 } },
        subsets: [{ name: 'own', requiredNodeSelectorTerm: zone('a'), maxReplicas: 40 }, { name: 'elastic', requiredNodeSelectorTerm: zone('b', 'c') }],
      };
  }
}

/** The split each kind must show at `replicas` (the reference's placement and scale-in order). */
function expectedSplit(kind: Kind, replicas: number): Record<string, number> {
  switch (kind) {
    case 'int': {
      const a = Math.min(30, replicas);
      const b = Math.min(30, replicas - a);
      return { a, b, c: replicas - a - b };
    }
    case 'percent': {
      const a = Math.ceil(0.2 * replicas);
      const b = Math.min(Math.ceil(0.3 * replicas), replicas - a);
      return { a, b, c: replicas - a - b };
    }
    case 'adaptive': {
      const own = Math.min(40, replicas);
      return { own, elastic: replicas - own };
    }
  }
}

/** What a phase measured of the manager, however it ran. */
interface ManagerSide {
  /** pod CREATE handler time p50/p90/p99 (ms). */
  handler: [number, number, number];
  /** Status writes by writer. */
  webhookWrites: number;
  controllerWrites: number;
  conflicts: number;
  /** Reconciles the controllers ran (dist only). */
  reconciles: number;
  /** The manager's PUT requests (its status writes) p50/p99 (ms), as its client timed them (dist only). */
  putMs: [number, number];
}

interface PhaseFigures {
  mgr: ManagerSide;
  wallMs: number;
  /** Until every pod exists (scale-out only). */
  createdMs: number;
  clusterCpuMs: number;
  managerCpuMs: number;
  /** Of which its main thread (published build only; NaN otherwise). */
  managerMainCpuMs: number;
  /** How long the manager's main thread waited for a CPU while runnable (dist only). */
  managerMainWaitMs: number;
  tally: Tally;
  manager: ManagerFigures;
  /** An unloaded caller's timings of the manager's webhook and health endpoint during the phase (dist only; bench/lib/admission-probe.ts). */
  probe: { reviewMs: number[]; healthMs: number[]; failures: number };
  /** Seconds the manager's client-side rate limiter made requests wait in the phase, and how many waited. */
  limiterWaitS: number;
  limiterWaits: number;
}

interface Run {
  config: Config;
  out: PhaseFigures;
  in: PhaseFigures;
  rssMb: number;
  heapMb: number;
  /** V8's committed heap, its new space, and memory outside the heap (buffers, TLS) at settle (MB; dist only). */
  committedMb: [number, number, number];
  /** RSS after IDLE_MS more without work and a GC (MB; dist only). */
  idleRssMb: number;
  checks: string[];
}

const pct = (sorted: number[], p: number): number => (sorted.length === 0 ? NaN : (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN));
const sorted = (a: number[]): number[] => [...a].sort((x, y) => x - y);
const mean = (a: number[]): number => (a.length === 0 ? NaN : a.reduce((s, x) => s + x, 0) / a.length);
const cpuOf = (t: Tally): number => t.cpuMs.user + t.cpuMs.system;
const cpuNow = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

function subsetOf(pod: Pod): { ws: string; subset: string } | undefined {
  const raw = pod.metadata.annotations?.[MARKER];
  if (raw === undefined) return undefined;
  try {
    const m = JSON.parse(raw) as { name?: string; subset?: string };
    return { ws: m.name ?? '', subset: m.subset ?? '' };
  } catch {
    return undefined;
  }
}

/** (3)'s correctness at `replicas` per Deployment: exact split per kind, no subset over its limit, status = pods. */
async function check(admin: KubeClient, replicas: number): Promise<string[]> {
  const problems: string[] = [];
  const pods = (await admin.list<Pod>(BUILTIN.pods, { namespace: NS })).items.filter((p) => p.metadata.deletionTimestamp === undefined);
  const counts = new Map<string, Map<string, number>>();
  for (const p of pods) {
    const at = subsetOf(p);
    const ws = at?.ws ?? `(none) ${p.metadata.labels?.['app'] ?? ''}`;
    const bySubset = counts.get(ws) ?? new Map<string, number>();
    counts.set(ws, bySubset);
    bySubset.set(at?.subset ?? '', (bySubset.get(at?.subset ?? '') ?? 0) + 1);
  }
  const spreads = (await admin.list<WorkloadSpread>(WORKLOADSPREAD_REF, { namespace: NS })).items;
  for (let i = 0; i < DEPLOYMENTS; i++) {
    const ws = spreads.find((s) => s.metadata.name === name(i));
    const want = expectedSplit(kindOf(i), replicas);
    const have = Object.fromEntries(counts.get(name(i)) ?? []);
    for (const [subset, n] of Object.entries(want)) if ((have[subset] ?? 0) !== n) problems.push(`${name(i)} (${kindOf(i)}): subset ${subset} has ${have[subset] ?? 0} pods, want ${n}`);
    for (const s of ws?.status?.subsetStatuses ?? []) {
      if (s.replicas !== (have[s.name] ?? 0)) problems.push(`${name(i)}: status says ${s.replicas} in ${s.name}, the pods say ${have[s.name] ?? 0}`);
    }
  }
  const unplaced = [...counts.keys()].filter((k) => k.startsWith('(none)'));
  if (unplaced.length > 0) problems.push(`pods without a subset: ${unplaced.join(', ')}`);
  return problems;
}

/** The perf recordings of this run, summarized once every configuration has run (perf inject and script take CPU). */
const perfProfiles: { label: string; recording: PerfRecording }[] = [];
/** TurboFan's compiles of the project's functions over each profiled manager's life (its jitdump). */
const perfCompiles: { label: string; compiled: TurboFanCompiles }[] = [];

async function profiled<T>(session: Session | undefined, file: string, work: () => Promise<T>): Promise<T> {
  if (session === undefined) return work();
  await session.post('Profiler.start');
  try {
    return await work();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(PROFILE_DIR, { recursive: true });
    writeFileSync(`${PROFILE_DIR}/${file}`, JSON.stringify(profile));
    printTop(profile as Profile, file);
  }
}

interface Profile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

function printTop(profile: Profile, file: string): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const n = byId.get(id);
    if (n === undefined) return;
    const key = `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(src|node_modules)\//, '$1/')}:${n.callFrame.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  const total = [...self.values()].reduce((s, x) => s + x, 0);
  console.log(`\n  profile ${file}: ${total.toFixed(0)} ms sampled; top functions by self time:`);
  for (const [k, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`    ${ms.toFixed(0).padStart(7)} ms ${((100 * ms) / total).toFixed(1).padStart(5)} %  ${k}`);
}

async function runOnce(config: Config, session: Session | undefined): Promise<Run> {
  const clock = realClock();
  const side = await RemoteCluster.start(20, NODES_PER_ZONE);
  const admin = clientFor(side.connection, clock, 'bench/admin');
  let figures = newFigures();
  let manager: Manager | undefined;
  let dist: DistManager | undefined;
  const cpuMs = (): number => (dist !== undefined ? dist.cpuMs() : cpuNow());
  const mainCpuMs = (): number => (dist !== undefined ? dist.mainThreadCpuMs() : NaN);
  const mainWaitMs = (): number => (dist !== undefined ? dist.mainThreadWaitMs() : NaN);
  const managerReading = async (): Promise<string> => (dist !== undefined ? dist.metrics() : '');
  const sleep = (ms: number) => clock.sleep(ms);
  const waitFor = async (what: string, done: (p: Awaited<ReturnType<RemoteCluster['pods']>>) => boolean): Promise<void> => {
    const started = performance.now();
    for (;;) {
      const p = await side.pods();
      if (done(p)) return;
      if (performance.now() - started > 20 * 60_000) throw new Error(`${config}: ${what} not reached after 20 min: ${JSON.stringify(p)}`);
      await sleep(50);
    }
  };
  const quiet = async () => {
    const count = async () => (await side.tally()).requests.filter((r) => r.resource !== 'leases' && r.resource !== 'nodes').reduce((s, r) => s + r.count, 0);
    let last = await count();
    let since = performance.now();
    while (performance.now() - since < 2_000) {
      await sleep(200);
      const n = await count();
      if (n !== last) {
        last = n;
        since = performance.now();
      }
    }
  };
  const scaleAll = (replicas: number) => Promise.all(Array.from({ length: DEPLOYMENTS }, (_, i) => admin.scale(BUILTIN.deployments, name(i), replicas, { namespace: NS })));
  try {
    if (config !== '(1) no manager') {
      if (DIST) {
        // Every manager configuration is profiled, so (3) can be compared with its floor function by function.
        const profileArgs = PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=CPU.${config.slice(1, 2)}.${Date.now()}.cpuprofile`] : [];
        if (PERF) mkdirSync(PROFILE_DIR, { recursive: true });
        dist = await startDistManager(
          side.connection,
          config === '(4) manager, no WS, every pod reviewed' ? ['--webhook-scope=cluster'] : [],
          [...profileArgs, ...(PERF ? PERF_NODE_ARGS : []), ...(process.env['WS_BENCH_HEAPSNAPSHOT'] === '1' ? ['--heapsnapshot-signal=SIGUSR1'] : [])],
          // --perf-prof writes the manager's jitdump into its working directory.
          PERF ? PROFILE_DIR : undefined,
        );
      } else {
        if (config === '(4) manager, no WS, every pod reviewed') throw new Error('configuration (4) runs the published build only (manager=dist)');
        manager = startBenchManager(side.connection, clock, () => figures);
        await manager.ready;
      }
    }
    for (let i = 0; i < DEPLOYMENTS; i++) {
      if (config === '(3) manager + WS') {
        await admin.create(WORKLOADSPREAD_REF, { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'WorkloadSpread', metadata: { name: name(i), namespace: NS }, spec: spreadSpec(i) });
      }
      await admin.create(BUILTIN.deployments, {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: name(i), namespace: NS },
        spec: { replicas: 0, selector: { matchLabels: { app: name(i) } }, template: { metadata: { labels: { app: name(i) } }, spec: { containers: [{ name: 'main', image: 'nginx:1.27', resources: { requests: { cpu: '10m', memory: '16Mi' } } }] } } },
      });
    }
    await quiet();

    const phase = async (label: string, target: number, done: (p: Awaited<ReturnType<RemoteCluster['pods']>>) => boolean, created?: (p: Awaited<ReturnType<RemoteCluster['pods']>>) => boolean): Promise<PhaseFigures> => {
      await side.reset();
      figures = newFigures();
      const mine = figures;
      const before = await managerReading();
      const cpu0 = cpuMs();
      const main0 = mainCpuMs();
      const wait0 = mainWaitMs();
      const wall = performance.now();
      const recording = PERF && dist !== undefined ? recordProcess(dist.pid, `${PROFILE_DIR}/perf.${config.charAt(1)}.${label}.data`) : undefined;
      let createdMs = NaN;
      const probe = dist === undefined ? undefined : new AdmissionProbe(clock, dist.webhookUrl, dist.healthUrl, NS, 100);
      return profiled(config === '(3) manager + WS' && !DIST ? session : undefined, `${label}.cpuprofile`, async () => {
        await scaleAll(target);
        await waitFor(label, (p) => {
          if (Number.isNaN(createdMs) && created?.(p) === true) createdMs = performance.now() - wall;
          return done(p);
        });
        const wallMs = performance.now() - wall;
        if (recording !== undefined) {
          await recording.stop();
          perfProfiles.push({ label: `${config} ${label}`, recording });
        }
        const clusterCpuMs = cpuOf(await side.tally());
        await probe?.stop();
        await quiet();
        const tally = await side.tally();
        const managerCpuMs = cpuMs() - cpu0;
        const managerMainCpuMs = mainCpuMs() - main0;
        const managerMainWaitMs = mainWaitMs() - wait0;
        const after = await managerReading();
        const limiter = (text: string, suffix: string) => sumOf(text, `rest_client_rate_limiter_duration_seconds_${suffix}`, {});
        return {
          wallMs,
          createdMs,
          clusterCpuMs,
          managerCpuMs,
          managerMainCpuMs,
          managerMainWaitMs,
          tally,
          manager: mine,
          mgr: dist !== undefined ? fromMetrics(before, after) : fromFigures(mine),
          probe: { reviewMs: sorted(probe?.reviewMs ?? []), healthMs: sorted(probe?.healthMs ?? []), failures: probe?.failures.length ?? 0 },
          limiterWaitS: limiter(after, 'sum') - limiter(before, 'sum'),
          limiterWaits: limiter(after, 'count') - limiter(before, 'count'),
        };
      });
    };
    const out = await phase('scale-out', REPLICAS, (p) => p.bound >= PODS, (p) => p.stored >= PODS);
    const checks: string[] = [];
    if (config === '(3) manager + WS') checks.push(...(await check(admin, REPLICAS)).map((c) => `after the scale-out: ${c}`));
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    await dist?.collectGarbage();
    if (process.env['WS_BENCH_HEAPSNAPSHOT'] === '1' && dist !== undefined) {
      process.kill(dist.pid, 'SIGUSR1');
      await sleep(15_000);
    }
    const settled = dist === undefined ? '' : await dist.metrics();
    const mem = dist !== undefined ? { rss: dist.rssMb() * 2 ** 20, heapUsed: sampleOf(settled, 'nodejs_heap_size_used_bytes') ?? NaN } : process.memoryUsage();
    const mb = (name: string, labels: Record<string, string> = {}) => (sampleOf(settled, name, labels) ?? NaN) / 2 ** 20;
    const committedMb: [number, number, number] = [mb('nodejs_heap_size_total_bytes'), mb('nodejs_heap_space_size_total_bytes', { space: 'new' }), mb('nodejs_external_memory_bytes')];
    // V8 gives back heap pages it committed during the burst only once the process has been idle a while (its memory reducer).
    let idleRssMb = NaN;
    if (dist !== undefined) {
      await sleep(IDLE_MS);
      await dist.collectGarbage();
      idleRssMb = dist.rssMb();
    }
    const inFigures = await phase('scale-in', SCALE_IN_TO, (p) => p.stored <= DEPLOYMENTS * SCALE_IN_TO);
    if (config === '(3) manager + WS') checks.push(...(await check(admin, SCALE_IN_TO)).map((c) => `after the scale-in: ${c}`));
    return { config, out, in: inFigures, rssMb: mem.rss / 2 ** 20, heapMb: mem.heapUsed / 2 ** 20, committedMb, idleRssMb, checks };
  } finally {
    await manager?.stop();
    await dist?.stop();
    const compiled = PERF && dist !== undefined ? turboFanCompiles(PROFILE_DIR, dist.pid) : undefined;
    if (compiled !== undefined) perfCompiles.push({ label: config, compiled });
    await side.stop();
  }
}

function fromFigures(m: ManagerFigures): ManagerSide {
  const a = sorted(m.admissionMs);
  const writes = (source: string) => [...m.statusWrites].filter(([k]) => k.startsWith(source)).reduce((s, [, n]) => s + n, 0);
  return { handler: [pct(a, 50), pct(a, 90), pct(a, 99)], webhookWrites: writes('webhook'), controllerWrites: writes('controller'), conflicts: m.conflicts, reconciles: NaN, putMs: [NaN, NaN] };
}

/** The same figures from two readings of the manager's /metrics (the phase's own observations). */
function fromMetrics(before: string, after: string): ManagerSide {
  const labels = { webhook: '/mutate-pod', operation: 'CREATE' };
  const buckets = bucketsSince(bucketsOf(after, 'workloadspread_admission_duration_seconds', labels), bucketsOf(before, 'workloadspread_admission_duration_seconds', labels));
  const ms = (q: number) => quantileOf(buckets, q) * 1000;
  const delta = (name: string, l: Record<string, string>) => sumOf(after, name, l) - sumOf(before, name, l);
  return {
    handler: [ms(0.5), ms(0.9), ms(0.99)],
    webhookWrites: delta('workloadspread_status_writes_total', { source: 'webhook' }),
    controllerWrites: delta('workloadspread_status_writes_total', { source: 'controller' }),
    conflicts: delta('workloadspread_status_write_conflicts_total', {}),
    reconciles: delta('controller_runtime_reconcile_total', {}),
    putMs: ((puts) => [quantileOf(puts, 0.5) * 1000, quantileOf(puts, 0.99) * 1000] as [number, number])(
      bucketsSince(bucketsOf(after, 'rest_client_request_duration_seconds', { verb: 'PUT' }), bucketsOf(before, 'rest_client_request_duration_seconds', { verb: 'PUT' })),
    ),
  };
}

const f0 = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : 'n/a');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');

/** The manager's API requests in one phase, per pod (`pods`: the phase's pods; default all): reads / writes, then the writes by verb and resource. */
function managerRequests(r: Run, phase: PhaseFigures, pods = PODS): string {
  if (r.config === '(1) no manager') return '–';
  const mine = phase.tally.requests.filter((q) => q.userAgent.startsWith('workloadspread-manager') && q.verb !== 'watch' && q.resource !== 'leases');
  const reads = mine.filter((q) => q.verb === 'get' || q.verb === 'list').reduce((n, q) => n + q.count, 0);
  const writes = new Map<string, number>();
  for (const q of mine) {
    if (q.verb === 'get' || q.verb === 'list') continue;
    const what = `${q.verb} ${q.resource}${q.subresource === '' ? '' : `/${q.subresource}`}`;
    writes.set(what, (writes.get(what) ?? 0) + q.count);
  }
  const detail = [...writes].sort((a, b) => b[1] - a[1]).map(([what, n]) => `${what} ${n}`).join(', ');
  return `${f2(reads / pods)} / ${f2((mine.reduce((n, q) => n + q.count, 0) - reads) / pods)}${detail === '' ? '' : ` (${detail})`}`;
}

function printTable(runs: Run[]): void {
  const deleted = DEPLOYMENTS * (REPLICAS - SCALE_IN_TO);
  const reviewsOf = (t: Tally) => t.webhooks.filter((w) => w.resource === 'pods' && ((w.operation === 'DELETE' && w.subresource === '') || w.subresource === 'eviction')).reduce((s, w) => s + w.count, 0);
  const createMs = (t: Tally) => sorted(t.webhookMs['/mutate-pod CREATE'] ?? []);
  const rows: [string, (r: Run) => string][] = [
    ['all pods bound (s)', (r) => f1(r.out.wallMs / 1000)],
    ['pods created per second', (r) => f0(PODS / (r.out.createdMs / 1000))],
    ['cluster CPU until bound (s)', (r) => f1(r.out.clusterCpuMs / 1000)],
    ['manager CPU until quiet (s)', (r) => (r.config === '(1) no manager' ? '–' : f1(r.out.managerCpuMs / 1000))],
    ['manager CPU per pod (ms)', (r) => (r.config === '(1) no manager' ? '–' : f2(r.out.managerCpuMs / PODS))],
    ['  of which the main thread / V8\'s compiler and GC threads (ms)', (r) => (r.config === '(1) no manager' ? '–' : `${f2(r.out.managerMainCpuMs / PODS)} / ${f2((r.out.managerCpuMs - r.out.managerMainCpuMs) / PODS)}`)],
    ['  the main thread runnable but waiting for a CPU, per pod (ms)', (r) => (r.config === '(1) no manager' ? '–' : f2(r.out.managerMainWaitMs / PODS))],
    ['pod CREATE webhook seen by the API server: mean (ms)', (r) => f1(mean(createMs(r.out.tally)))],
    ['  p50 / p99 (ms)', (r) => `${f1(pct(createMs(r.out.tally), 50))} / ${f1(pct(createMs(r.out.tally), 99))}`],
    ['  the embedded API server\'s own event-loop delay p50 / p99 (ms; not in the above)', (r) => `${f1(r.out.tally.loopDelayMs[0])} / ${f1(r.out.tally.loopDelayMs[1])}`],
    ['pod CREATE review from an unloaded caller: p50 / p99 (ms)', (r) => (r.out.probe.reviewMs.length === 0 ? '–' : `${f1(pct(r.out.probe.reviewMs, 50))} / ${f1(pct(r.out.probe.reviewMs, 99))}`)],
    ['manager /healthz from an unloaded caller: p50 / p99 (ms)', (r) => (r.out.probe.healthMs.length === 0 ? '–' : `${f1(pct(r.out.probe.healthMs, 50))} / ${f1(pct(r.out.probe.healthMs, 99))}`)],
    ['same, inside the handler: p50 / p90 / p99 (ms)', (r) => {
      const [p50, p90, p99] = r.out.mgr.handler;
      return Number.isFinite(p50) ? `${f1(p50)} / ${f1(p90)} / ${f1(p99)}` : '–';
    }],
    ['WorkloadSpread status writes: webhook / controller', (r) => `${r.out.mgr.webhookWrites} / ${r.out.mgr.controllerWrites}`],
    ['status write conflicts', (r) => String(r.out.mgr.conflicts)],
    ['status write (PUT) as the manager timed it: p50 / p99 (ms)', (r) => `${f1(r.out.mgr.putMs[0])} / ${f1(r.out.mgr.putMs[1])}`],
    ['reconciles in the scale-out', (r) => f0(r.out.mgr.reconciles)],
    ['manager API requests in the scale-out: reads / writes per pod (watches, leases not counted)', (r) => managerRequests(r, r.out)],
    ['client rate limiter: requests that waited / seconds waited', (r) => `${f0(r.out.limiterWaits)} / ${f1(r.out.limiterWaitS)}`],
    [`scale-in ${REPLICAS} → ${SCALE_IN_TO}, until the surplus is gone (s)`, (r) => f1(r.in.wallMs / 1000)],
    ['manager API requests in the scale-in: reads / writes per deleted pod (watches, leases not counted)', (r) => managerRequests(r, r.in, deleted)],
    ['DELETE/eviction reviews per deleted pod', (r) => f2(reviewsOf(r.in.tally) / deleted)],
    ['  seen by the API server: p50 / p99 (ms)', (r) => {
      const a = sorted(r.in.tally.webhookMs['/validate-pod DELETE'] ?? []);
      return a.length === 0 ? '–' : `${f1(pct(a, 50))} / ${f1(pct(a, 99))}`;
    }],
    ['cluster CPU in the scale-in (s)', (r) => f1(r.in.clusterCpuMs / 1000)],
    ['manager CPU in the scale-in (s)', (r) => (r.config === '(1) no manager' ? '–' : f1(r.in.managerCpuMs / 1000))],
    ['manager RSS / heap settled (MB)', (r) => (r.config === '(1) no manager' ? '–' : `${f0(r.rssMb)} / ${f0(r.heapMb)}`)],
    ['  V8 heap committed / its new space / outside the heap (MB)', (r) => (r.config === '(1) no manager' ? '–' : r.committedMb.map(f0).join(' / '))],
    [`  RSS after ${IDLE_MS / 1000} s more idle (MB)`, (r) => (r.config === '(1) no manager' ? '–' : f0(r.idleRssMb))],
  ];
  const width = Math.max(...rows.map(([l]) => l.length));
  const cells = rows.map(([, fn]) => runs.map(fn));
  const cols = runs.map((r, i) => Math.max(r.config.length, ...cells.map((c) => c[i]?.length ?? 0)));
  console.log(`\n| ${PODS.toLocaleString('en-US')} pods`.padEnd(width + 2) + ' | ' + runs.map((r, i) => r.config.padStart(cols[i] ?? 0)).join(' | ') + ' |');
  rows.forEach(([l], j) => console.log(`| ${l.padEnd(width)} | ${runs.map((_, i) => (cells[j]?.[i] ?? '').padStart(cols[i] ?? 0)).join(' | ')} |`));
}

function median(runs: Run[], config: Config): Run | undefined {
  const mine = runs.filter((r) => r.config === config).sort((a, b) => a.out.wallMs - b.out.wallMs);
  return mine[Math.floor((mine.length - 1) / 2)];
}

async function main(): Promise<void> {
  console.log(`${DEPLOYMENTS} Deployments × ${REPLICAS} replicas on ${NODES_PER_ZONE * 3} nodes, scale-in to ${SCALE_IN_TO}; ${REPS} run(s) of each configuration, interleaved; the manager ${DIST ? 'as published (dist/, its own process)' : 'in this process through tsx'}`);
  if (PERF_MISSING !== undefined) console.log(`  profile=perf: no profiles — ${PERF_MISSING}`);
  const session = PROFILE ? new Session() : undefined;
  session?.connect();
  if (session !== undefined) await session.post('Profiler.enable');
  const runs: Run[] = [];
  for (let rep = 0; rep < REPS; rep++) {
    for (const config of CONFIGS) {
      const started = performance.now();
      const run = await runOnce(config, session);
      runs.push(run);
      console.log(`  ${config}: run ${rep + 1} bound in ${f1(run.out.wallMs / 1000)} s, scale-in ${f1(run.in.wallMs / 1000)} s (${f0((performance.now() - started) / 1000)} s in all)`);
    }
  }
  const picked = CONFIGS.map((c) => median(runs, c)).filter((r): r is Run => r !== undefined);
  printTable(picked);
  const none = picked.find((r) => r.config === '(1) no manager');
  const floor = picked.find((r) => r.config === '(2) manager, no WS');
  const ws = picked.find((r) => r.config === '(3) manager + WS');
  if (ws !== undefined && floor === undefined) console.log(`\n(3) alone: manager CPU per pod ${f2(ws.out.managerCpuMs / PODS)} ms; handler p99 ${f1(ws.out.mgr.handler[2])} ms; correctness: ${ws.checks.length === 0 ? 'exact' : ws.checks.slice(0, 5).join('; ')}`);
  if (floor !== undefined && ws !== undefined) {
    const createFloor = sorted(floor.out.tally.webhookMs['/mutate-pod CREATE'] ?? []);
    const createWs = sorted(ws.out.tally.webhookMs['/mutate-pod CREATE'] ?? []);
    const [handlerP50, , handlerP99] = ws.out.mgr.handler;
    const reviews = ws.in.tally.webhooks.filter((w) => w.resource === 'pods' && ((w.operation === 'DELETE' && w.subresource === '') || w.subresource === 'eviction')).reduce((s, w) => s + w.count, 0);
    const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');
    const boundRatio = ws.out.wallMs / floor.out.wallMs;
    const cpuRatio = ws.out.managerCpuMs / floor.out.managerCpuMs;
    const seenP50 = pct(createWs, 50);
    const handlerFloor = Math.max(handlerP50, 1);
    const perDeleted = reviews / (DEPLOYMENTS * (REPLICAS - SCALE_IN_TO));
    const rssPerPodKb = ((ws.rssMb - floor.rssMb) * 1024) / PODS;
    console.log('\nDone when (issue 25):');
    console.log(`  time to all bound (3)/(2) = ${f2(boundRatio)} (target ≤ 1.1) ${verdict(boundRatio <= 1.1)}${none === undefined ? '' : `; (2)/(1) = ${f2(floor.out.wallMs / none.out.wallMs)}`}`);
    console.log(`  manager CPU per pod (3)/(2) = ${f2(cpuRatio)} (target ≤ 2) ${verdict(cpuRatio <= 2)}`);
    console.log(`  admission p99 inside the handler = ${f1(handlerP99)} ms (target ≤ 50 ms) ${verdict(handlerP99 <= 50)}`);
    console.log(`  webhook latency seen by the API server p50 = ${f1(seenP50)} ms vs the handler's ${f1(handlerP50)} ms (target ≤ 2 ×, the handler's counted as ≥ 1 ms) ${verdict(seenP50 <= 2 * handlerFloor)}; floor (2): ${f1(pct(createFloor, 50))} ms; timed on the API server's webhook thread (its event loop's delay, p50 ${f1(ws.out.tally.loopDelayMs[0])} ms, is not in it)`);
    const probeP50 = pct(ws.out.probe.reviewMs, 50);
    if (ws.out.probe.reviewMs.length > 0) console.log(`  the same from an unloaded caller: p50 = ${f1(probeP50)} ms, p99 ${f1(pct(ws.out.probe.reviewMs, 99))} ms (target ≤ 2 × the handler's) ${verdict(probeP50 <= 2 * handlerFloor)}; /healthz p99 ${f1(pct(ws.out.probe.healthMs, 99))} ms; ${ws.out.probe.failures} probe failures`);
    console.log(`  DELETE reviews per deleted pod = ${f2(perDeleted)} (target ≤ 1.1) ${verdict(perDeleted <= 1.1)}`);
    console.log(`  RSS per pod above (2) = ${f2(rssPerPodKb)} KiB (target ≤ 1 KiB) ${verdict(rssPerPodKb <= 1)}; after ${IDLE_MS / 1000} s idle ${f2(((ws.idleRssMb - floor.idleRssMb) * 1024) / PODS)} KiB; live heap per pod above (2) = ${f2(((ws.heapMb - floor.heapMb) * 1024) / PODS)} KiB; committed heap ${f2(((ws.committedMb[0] - floor.committedMb[0]) * 1024) / PODS)} KiB`);
    const every = picked.find((r) => r.config === '(4) manager, no WS, every pod reviewed');
    if (every !== undefined) {
      const ratio4 = ws.out.managerCpuMs / every.out.managerCpuMs;
      console.log(`  against (4), a manager that reviews every pod and changes none (the real-cluster table's floor): manager CPU per pod (3)/(4) = ${f2(ratio4)} (${f2(every.out.managerCpuMs / PODS)} ms) ${verdict(ratio4 <= 2)}; all bound (3)/(4) = ${f2(ws.out.wallMs / every.out.wallMs)}; RSS per pod above (4) = ${f2(((ws.rssMb - every.rssMb) * 1024) / PODS)} KiB`);
      // What the API server sees of a webhook that does nothing: the part of the latency no handler can remove on this machine.
      const seenEvery = pct(sorted(every.out.tally.webhookMs['/mutate-pod CREATE'] ?? []), 50);
      console.log(`  (4)'s webhook seen by the API server: p50 = ${f1(seenEvery)} ms for a handler's p50 of ${f1(every.out.mgr.handler[0])} ms (${f1(seenEvery / Math.max(every.out.mgr.handler[0], 1))} × the handler's, counted as ≥ 1 ms); (3) − (4) = ${f1(seenP50 - seenEvery)} ms`);
    }
    console.log(`  correctness of (3): ${ws.checks.length === 0 ? 'every split exact, no subset over its limit, every status equal to the pods' : `${ws.checks.length} problems:\n    ${ws.checks.slice(0, 20).join('\n    ')}`}`);
  }
  session?.disconnect();
  for (const { label, recording } of perfProfiles) printSummary(`${label} (${recording.file})`, summarize(recording), PODS);
  for (const { label, compiled } of perfCompiles) printCompiles(label, compiled);
  if (PROFILE && DIST) {
    for (const file of readdirSync(PROFILE_DIR).filter((f) => f.endsWith('.cpuprofile') && f.startsWith('CPU.'))) {
      printTop(JSON.parse(readFileSync(`${PROFILE_DIR}/${file}`, 'utf8')) as Profile, file);
    }
  }
}

await main();
