/**
 * The manager as it is published, for the scale benchmarks: the compiled
 * `dist/` (built here when missing or older than the sources) started as
 * `workloadspread manager` in its own process — no tsx, its own heap and
 * event loop — against the benchmark's cluster, with its webhooks registered
 * by URL. Everything is read from outside, as an operator would: CPU time
 * and RSS from /proc, admission latency, status writes and the heap from its
 * Prometheus `/metrics`. Used by bench/manager-scale-100.ts (`manager=dist`).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { realClock } from '../../src/clock/clock.ts';
import { renderKubeconfig } from '../../src/client/kubeconfig.ts';
import { MANAGER_NS, type ConnectionInfo } from './scale-cluster.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLK_TCK = 100;

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** Builds dist/ (`npm run build`) unless it is newer than every source file. */
export function ensureBuilt(): void {
  const entry = join(ROOT, 'dist/cli/entry.js');
  let built = 0;
  try {
    built = statSync(entry).mtimeMs;
  } catch {
    // not built
  }
  if (built > newestMtime(join(ROOT, 'src'))) return;
  console.log('  building dist/ (npm run build) for the published-build manager …');
  const r = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('npm run build failed');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

function httpText(url: string): Promise<{ code: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = get(url, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

/** One series of a Prometheus text exposition: its value, or undefined. */
export function sampleOf(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest !== '' && rest[0] !== '{' && rest[0] !== ' ') continue;
    if (!Object.entries(labels).every(([k, v]) => rest.includes(`${k}="${v}"`))) continue;
    return Number(rest.slice(rest.lastIndexOf(' ') + 1));
  }
  return undefined;
}

/** The sum of every series of `name` with these labels (e.g. a counter over all its other labels). */
export function sumOf(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/** A histogram's cumulative buckets `[le, count]` (ascending), summed over every series with these labels. */
export function bucketsOf(text: string, name: string, labels: Record<string, string>): [number, number][] {
  const byLe = new Map<number, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}_bucket{`)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    const raw = /le="([^"]+)"/.exec(line)?.[1] ?? '';
    const le = raw === '+Inf' ? Number.POSITIVE_INFINITY : Number(raw);
    byLe.set(le, (byLe.get(le) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return [...byLe].sort((a, b) => a[0] - b[0]);
}

/** Subtracts an earlier reading of the same buckets (the phase's own observations). */
export function bucketsSince(now: [number, number][], before: [number, number][]): [number, number][] {
  return now.map(([le, n]) => [le, n - (before.find(([b]) => b === le)?.[1] ?? 0)]);
}

/** histogram_quantile: the `q` quantile of cumulative buckets, interpolated linearly within a bucket (seconds). */
export function quantileOf(buckets: [number, number][], q: number): number {
  const total = buckets[buckets.length - 1]?.[1] ?? 0;
  if (total === 0) return NaN;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const [le, count] of buckets) {
    if (count >= rank) {
      if (!Number.isFinite(le)) return prevLe;
      return prevLe + ((le - prevLe) * (rank - prevCount)) / Math.max(1, count - prevCount);
    }
    prevLe = le;
    prevCount = count;
  }
  return prevLe;
}

export interface DistManager {
  readonly pid: number;
  /** Its admission webhook server (HTTPS, a self-signed certificate) and health endpoint. */
  readonly webhookUrl: string;
  readonly healthUrl: string;
  /** CPU time (user + system) of the process so far, ms. */
  cpuMs(): number;
  /** The same for its main thread alone (the JavaScript; the rest is V8's compiler and garbage-collector threads), ms. */
  mainThreadCpuMs(): number;
  /** Milliseconds the main thread has spent runnable but waiting for a CPU (/proc/PID/task/PID/schedstat; NaN without schedstats). */
  mainThreadWaitMs(): number;
  /** Resident set size now, MB. */
  rssMb(): number;
  /** Runs a full garbage collection in the manager (bench/lib/gc-on-signal.cjs) and waits a moment for it. */
  collectGarbage(): Promise<void>;
  metrics(): Promise<string>;
  stop(): Promise<void>;
}

/** user + system CPU of a process or thread, ms. */
function statCpuMs(path: string): number {
  const fields = readFileSync(path, 'utf8').split(') ')[1]?.split(' ') ?? [];
  // utime and stime are fields 14 and 15 of /proc/PID/stat (11 and 12 after the command).
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

/**
 * Starts `node dist/cli/entry.js manager` against the cluster (one replica, no leader election), ready when /readyz says so.
 * `cwd`: the manager's working directory (where `--perf-prof` writes its jitdump); the repository by default.
 */
export async function startDistManager(connection: ConnectionInfo, extraArgs: string[] = [], nodeArgs: string[] = [], cwd: string = ROOT): Promise<DistManager> {
  ensureBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'ws-bench-manager-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, renderKubeconfig({ name: 'bench', server: connection.server, caPem: connection.caPem, token: connection.token }), { mode: 0o600 });
  const [webhookPort, metricsPort, healthPort] = [await freePort(), await freePort(), await freePort()];
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--expose-gc',
      `--require=${join(ROOT, 'bench/lib/gc-on-signal.cjs')}`,
      ...nodeArgs,
      join(ROOT, 'dist/cli/entry.js'),
      'manager',
      `--kubeconfig=${kubeconfig}`,
      `--namespace=${MANAGER_NS}`,
      '--webhook-host=127.0.0.1',
      `--webhook-port=${webhookPort}`,
      `--webhook-url=https://127.0.0.1:${webhookPort}`,
      '--register-webhooks',
      `--metrics-addr=127.0.0.1:${metricsPort}`,
      `--health-addr=127.0.0.1:${healthPort}`,
      '--log-level=warn',
      ...extraArgs,
    ],
    { cwd, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const pid = child.pid ?? 0;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = performance.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the published-build manager exited (${child.exitCode}) before it was ready`);
    const ready = await httpText(`http://127.0.0.1:${healthPort}/readyz`).catch(() => ({ code: 0, body: '' }));
    if (ready.code === 200) break;
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error('the published-build manager was not ready within 120 s');
    }
    await realClock().sleep(200);
  }
  return {
    pid,
    webhookUrl: `https://127.0.0.1:${webhookPort}`,
    healthUrl: `http://127.0.0.1:${healthPort}/healthz`,
    cpuMs: () => statCpuMs(`/proc/${pid}/stat`),
    mainThreadCpuMs: () => statCpuMs(`/proc/${pid}/task/${pid}/stat`),
    mainThreadWaitMs: () => {
      // schedstat: time on a CPU, time waiting on a run queue (both ns), timeslices.
      const fields = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').trim().split(' ');
      return Number(fields[1]) / 1e6;
    },
    rssMb: () => {
      const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:')) ?? '';
      return Number(/(\d+)/.exec(line)?.[1] ?? NaN) / 1024;
    },
    collectGarbage: async () => {
      child.kill('SIGUSR2');
      await realClock().sleep(1_000);
    },
    metrics: async () => (await httpText(`http://127.0.0.1:${metricsPort}/metrics`)).body,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
