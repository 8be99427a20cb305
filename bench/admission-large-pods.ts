/**
 * Benchmark: admission of very large pods by the real manager (the
 * starvation findings: a pod template with hundreds of node selector terms
 * used to take seconds to minutes and gigabytes to answer).
 *
 * Run:  npm run bench admission-large      (or)
 *       node --expose-gc --import tsx bench/admission-large-pods.ts [flood=50]
 *
 * The embedded cluster and one manager run in this process on the real clock
 * (leader election at 15 s / 10 s / 2 s); reviews are POSTed straight to the
 * manager's webhook port by a child process (bench/lib/review-sender.ts:
 * the load generator's CPU is not the manager's; keep-alive connections), as the API server sends them, for a ReplicaSet
 * under a WorkloadSpread whose subset ANDs a term into every node selector
 * term of the pod and appends a toleration.
 *
 * Prints (figures only, no assertions):
 * 1. one pod at a time, for shapes from ~1 KB to ~1.5 MB (terms, tolerations,
 *    containers, env entries): the review's size, the time to the answer
 *    (best of 3), the answer's patch operations and size, and the heap
 *    growth while it is served (heapUsed after the answer minus before, no GC
 *    in between: what the request allocated, garbage included), with the
 *    time and heap per KB of pod so linear growth shows as a flat column;
 * 2. `flood` reviews of a pod with 5,000 node selector terms and 5,000
 *    tolerations sent at once while `/healthz` is probed every 10 ms: the
 *    time until all are answered, their latency p50/max, the health probe
 *    latency p50/p99/max, and whether the manager kept its lease.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { realClock } from '../src/clock/clock.ts';
import type { KubeObject } from '../src/k8s/types.ts';
import { HealthProber, startLargePodBed, type PodShape } from '../src/testing/large-pods.ts';
import type { SendOrder, SentAnswer } from './lib/review-sender.ts';

const FLOOD = Number(process.argv[2] ?? 50);
const gc = (globalThis as { gc?: () => void }).gc;

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

const SHAPES: (PodShape & { label: string })[] = [
  { label: 'ordinary pod', terms: 0, tolerations: 0 },
  { label: '100 terms + 100 tolerations', terms: 100, tolerations: 100 },
  { label: '400 terms (the finding)', terms: 400, tolerations: 0 },
  { label: '1,000 tolerations (the finding)', terms: 0, tolerations: 1000 },
  { label: '1,000 terms + 1,000 tolerations', terms: 1000, tolerations: 1000 },
  { label: '5,000 terms + 5,000 tolerations', terms: 5000, tolerations: 5000 },
  { label: '200 containers x 50 env', terms: 0, tolerations: 0, containers: 200, env: 50 },
  { label: '10,000 terms + 5,000 tolerations', terms: 10_000, tolerations: 5000 },
  { label: '15,000 terms + 5,000 tolerations', terms: 15_000, tolerations: 5000 },
];

const sender = fork(fileURLToPath(new URL('./lib/review-sender.ts', import.meta.url)), [], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });

function send(url: string, owner: KubeObject, shape: PodShape, count: number, prefix: string): Promise<SentAnswer[]> {
  return new Promise((resolve, reject) => {
    sender.once('message', (m: SentAnswer[] | { error: string }) => ('error' in m ? reject(new Error(m.error)) : resolve(m)));
    const order: SendOrder = { url, owner, shape, count, prefix };
    sender.send(order);
  });
}

async function main(): Promise<void> {
  const clock = realClock();
  const bed = await startLargePodBed();
  let seq = 0;
  try {
    console.log('one pod at a time (best of 3 for time; heap growth of the best run)');
    console.log(`${'pod'.padEnd(34)} ${'review KB'.padStart(9)} ${'ms'.padStart(8)} ${'µs/KB'.padStart(7)} ${'ops'.padStart(7)} ${'patch KB'.padStart(9)} ${'heap MB'.padStart(8)} ${'heap/KB'.padStart(8)}`);
    for (const shape of SHAPES) {
      let kb = 0;
      let best = { ms: Infinity, heap: 0, ops: 0, patchKb: 0, allowed: false };
      for (let r = 0; r < 3; r++) {
        gc?.();
        const before = process.memoryUsage().heapUsed;
        const [answer] = await send(bed.mutateUrl, bed.owner, shape, 1, `pod-${++seq}`);
        kb = (answer?.reviewBytes ?? 0) / 1024;
        const heap = process.memoryUsage().heapUsed - before;
        if (answer !== undefined && answer.ms < best.ms) best = { ms: answer.ms, heap, ops: answer.ops, patchKb: answer.patchBytes / 1024, allowed: answer.allowed };
      }
      const heapMb = best.heap / 2 ** 20;
      console.log(
        `${shape.label.padEnd(34)} ${kb.toFixed(1).padStart(9)} ${best.ms.toFixed(1).padStart(8)} ${((best.ms * 1000) / kb).toFixed(0).padStart(7)} ${String(best.ops).padStart(7)} ${best.patchKb.toFixed(0).padStart(9)} ${heapMb.toFixed(1).padStart(8)} ${((best.heap / 1024) / kb).toFixed(1).padStart(8)}${best.allowed ? '' : '  (NOT ALLOWED)'}`,
      );
    }

    const floodShape: PodShape = { terms: 5000, tolerations: 5000 };
    const holder = await bed.leaseHolder();
    gc?.();
    const rssBefore = process.memoryUsage().rss;
    const prober = new HealthProber(bed.healthUrl, clock, 10);
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    await clock.sleep(200);
    const started = performance.now();
    let peakRss = rssBefore;
    const sampler = clock.setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }, 20);
    const answers = await send(bed.mutateUrl, bed.owner, floodShape, FLOOD, 'flood');
    const total = performance.now() - started;
    sampler.cancel();
    await clock.sleep(200);
    await prober.stop();
    loop.disable();
    const lat = answers.map((a) => a.ms).sort((a, b) => a - b);
    const health = [...prober.latencies].sort((a, b) => a - b);
    const holderAfter = await bed.leaseHolder();
    console.log(`\n${FLOOD} reviews of a pod with 5,000 terms + 5,000 tolerations (${((answers[0]?.reviewBytes ?? 0) / 1024).toFixed(0)} KB each) at once:`);
    console.log(`  all answered in ${total.toFixed(0)} ms; allowed with a patch: ${answers.filter((a) => a.allowed && a.ops > 0).length}/${FLOOD}; latency p50 ${pct(lat, 50).toFixed(0)} ms, max ${pct(lat, 100).toFixed(0)} ms`);
    console.log(`  /healthz while serving: ${health.length} probes, p50 ${pct(health, 50).toFixed(1)} ms, p99 ${pct(health, 99).toFixed(1)} ms, max ${pct(health, 100).toFixed(1)} ms; failures ${prober.failures.length}`);
    console.log(`  event loop delay (this process: manager + cluster): p50 ${(loop.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms, max ${(loop.max / 1e6).toFixed(1)} ms`);
    console.log(`  RSS before ${(rssBefore / 2 ** 20).toFixed(0)} MB, peak ${(peakRss / 2 ** 20).toFixed(0)} MB`);
    console.log(`  leader before ${holder}, after ${holderAfter}, still leading: ${bed.manager.isLeader()}`);
  } finally {
    await bed.stop();
    sender.disconnect();
  }
}

await main();
