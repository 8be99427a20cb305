/**
 * Benchmark: `workloadspread plan` (core/plan.ts, the engine alone) for
 * growing replica counts, to show how its time grows with the pods.
 *
 * Run:  node --expose-gc --import tsx bench/plan.ts [max=100000]
 *       (or `npm run bench plan`)
 *
 * Prints (figures only, no assertions), per spec shape and replica count N:
 * the time of one plan of the sequence N, N/2, N (a scale-out from 0, a
 * scale-in, a scale-out), the time per pod, and the ratio to the previous
 * row (with time growing as n log n, doubling N a little more than doubles
 * the time; quadratic growth quadruples it). Counts grow by 4x up to `max`
 * (the CLI's maximum is 100,000).
 *
 * Shapes: `elastic` (max 100, then unlimited: the README's use case),
 * `ratio` (1:1:3 by percent: D17's balanced costs), `over` (two subsets of 2
 * pods each and nothing else: all but 4 pods fit no subset).
 */
import { cpus, loadavg } from 'node:os';
import type { Subset, WorkloadSpread } from '../src/api/workloadspread.ts';
import { planSpread } from '../src/core/plan.ts';

const MAX = Number(process.argv[2] ?? 100_000);

function ws(subsets: Subset[]): WorkloadSpread {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'WorkloadSpread',
    metadata: { name: 'bench', namespace: 'default' },
    spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets },
  };
}

const zone = (z: string) => ({ matchExpressions: [{ key: 'zone', operator: 'In' as const, values: [z] }] });
const SHAPES: Record<string, WorkloadSpread> = {
  elastic: ws([
    { name: 'normal', maxReplicas: 100, requiredNodeSelectorTerm: zone('a') },
    { name: 'elastic', requiredNodeSelectorTerm: zone('b') },
  ]),
  ratio: ws([
    { name: 'a', maxReplicas: '20%', requiredNodeSelectorTerm: zone('a') },
    { name: 'b', maxReplicas: '20%', requiredNodeSelectorTerm: zone('b') },
    { name: 'c', maxReplicas: '60%', requiredNodeSelectorTerm: zone('c') },
  ]),
  over: ws([
    { name: 'a', maxReplicas: 2, requiredNodeSelectorTerm: zone('a') },
    { name: 'b', maxReplicas: 2, requiredNodeSelectorTerm: zone('b') },
  ]),
};

const counts: number[] = [];
for (let n = 1_000; n < MAX; n *= 4) counts.push(n);
counts.push(MAX);

console.log(`plan: ${cpus().length} CPUs, load ${loadavg()[0]?.toFixed(2)}; sequence N, N/2, N per run`);
console.log('shape     replicas        time    per pod   ratio to previous');
for (const [name, spread] of Object.entries(SHAPES)) {
  let previous: number | undefined;
  for (const n of counts) {
    globalThis.gc?.();
    const started = process.hrtime.bigint();
    const outcome = planSpread(spread, [n, Math.floor(n / 2), n]);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    if (!outcome.ok) throw new Error(outcome.error);
    const perPod = (ms * 1000) / (n * 2);
    console.log(`${name.padEnd(9)} ${String(n).padStart(8)} ${`${(ms / 1000).toFixed(2)} s`.padStart(11)} ${`${perPod.toFixed(1)} µs`.padStart(10)}   ${previous === undefined ? '-' : `${(ms / previous).toFixed(1)}x for ${(n / (counts[counts.indexOf(n) - 1] ?? n)).toFixed(0)}x the pods`}`);
    previous = ms;
  }
}
