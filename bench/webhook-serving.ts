/**
 * Micro-benchmark: the CPU one pod CREATE review costs the process that serves
 * it, in the manager's webhook server and in a bare `node:https` server — the
 * floor of any webhook written for Node.
 *
 * Run:  node --import tsx bench/webhook-serving.ts [reviews=20000] [concurrency=8] [rounds=2]
 *
 * Each server runs in a child process of its own (bench/lib/serving-child.ts);
 * this process sends it `reviews` reviews over `concurrency` keep-alive TLS
 * connections, after 2,000 to warm it, and reads the child's CPU time for them.
 * The two servers take turns, `rounds` times. The review is the one the
 * embedded API server sends for a Deployment's pod, captured from a cluster
 * started for it (bench/lib/captured-review.ts; about 2.9 KB: managed
 * fields, the service-account volume, the default tolerations), each copy
 * with a uid of its own. The manager's
 * handler admits it unchanged, so the figure is serving alone: TLS, HTTP, the
 * body, parsing the review, answering. Prints (figures only, no assertions):
 * CPU per review of each (user and system, µs), the manager's over the bare
 * server's, and what `JSON.parse` of that review costs alone in this process.
 * bench/manager-scale-100.ts's configuration 4 is the same reviews inside the
 * whole manager, under a cluster's load.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { Agent } from 'node:https';
import { fileURLToPath } from 'node:url';
import { postReview } from '../src/testing/large-pods.ts';
import { captureDeploymentPodReview } from './lib/captured-review.ts';
import type { ServingKind } from './lib/serving-child.ts';

const REVIEWS = Number(process.argv[2] ?? 20_000);
const CONCURRENCY = Number(process.argv[3] ?? 8);
const ROUNDS = Math.max(1, Number(process.argv[4] ?? 2));
const WARM = 2_000;

interface CpuUsage {
  user: number;
  system: number;
}

function nextMessage<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(m as T));
    child.once('exit', (code) => reject(new Error(`the serving child exited (${code ?? 'signal'})`)));
  });
}

/** Sends `bodies` over `CONCURRENCY` connections, each connection one review at a time. */
async function sendAll(url: string, bodies: readonly string[], agent: Agent): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < bodies.length) {
      const answer = await postReview(url, bodies[next++] ?? '', agent);
      if (answer.status !== 200 || !answer.allowed) throw new Error(`review answered ${answer.status}: ${answer.message}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
}

async function measure(kind: ServingKind, bodies: readonly string[]): Promise<CpuUsage> {
  const child = fork(fileURLToPath(new URL('./lib/serving-child.ts', import.meta.url)), [kind], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY, rejectUnauthorized: false });
  try {
    const { port } = await nextMessage<{ port: number }>(child);
    const url = `https://127.0.0.1:${port}/mutate-pod`;
    await sendAll(url, bodies.slice(0, WARM), agent);
    child.send('reset');
    await nextMessage<string>(child);
    await sendAll(url, bodies.slice(WARM), agent);
    child.send('cpu');
    return await nextMessage<CpuUsage>(child);
  } finally {
    agent.destroy();
    child.kill();
  }
}

function parseCostUs(body: string): number {
  const bytes = Buffer.from(body);
  const n = 50_000;
  let kept: unknown;
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) kept = JSON.parse(bytes.toString('utf8'));
  const used = process.cpuUsage(start);
  if (kept === undefined) throw new Error('unreachable');
  return (used.user + used.system) / n;
}

const captured = await captureDeploymentPodReview();
const bodies = Array.from({ length: WARM + REVIEWS }, (_, i) => JSON.stringify({ ...captured, request: { ...captured.request, uid: `review-${i}` } }));
const reviewBytes = Buffer.byteLength(bodies[0] ?? '');
console.log(`${REVIEWS} pod CREATE reviews of ${reviewBytes} bytes over ${CONCURRENCY} keep-alive TLS connections, ${ROUNDS} round(s), each server in its own process`);

const results: Record<ServingKind, CpuUsage[]> = { bare: [], manager: [] };
for (let round = 1; round <= ROUNDS; round++) {
  for (const kind of ['bare', 'manager'] as const) {
    const cpu = await measure(kind, bodies);
    results[kind].push(cpu);
    console.log(`  round ${round}, ${kind === 'bare' ? 'bare node:https' : "the manager's server"}: ${((cpu.user + cpu.system) / REVIEWS).toFixed(1)} µs of CPU per review (user ${(cpu.user / REVIEWS).toFixed(1)}, system ${(cpu.system / REVIEWS).toFixed(1)})`);
  }
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? NaN) : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
};
const perReview = (kind: ServingKind): number => median(results[kind].map((c) => (c.user + c.system) / REVIEWS));
const bare = perReview('bare');
const manager = perReview('manager');
console.log('');
console.log(`| per review (median of ${ROUNDS}) | CPU (µs) |`);
console.log('|---|---|');
console.log(`| bare node:https, JSON.parse + JSON.stringify | ${bare.toFixed(1)} |`);
console.log(`| the manager's webhook server, handler admitting unchanged | ${manager.toFixed(1)} |`);
console.log(`| the manager's over the bare server | ${(manager / bare).toFixed(2)} × |`);
console.log(`| JSON.parse of the review alone (in this process, warm) | ${parseCostUs(bodies[0] ?? '').toFixed(1)} |`);
