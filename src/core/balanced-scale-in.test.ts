/**
 * D17 as a property: for random valid specs (1–6 subsets; limits all
 * percentages or all counts, unset subsets anywhere the validation allows,
 * minReplicas) and N ≤ 200 pods admitted as the webhook admits them, the
 * deletion costs the controller computes at N, with the embedded ReplicaSet
 * controller's own ranking (`podsToDeleteOnScaleDown`) and no controller sync
 * in between, keep every subset within its limit at every size n of any
 * scale-in sequence — whenever a set of n of those pods within the limits
 * exists. Integer-only specs get exactly the reference's cost values.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FAKE_SUBSET_NAME, POD_DELETION_COST_ANNOTATION } from '../api/keys.ts';
import { validateWorkloadSpread } from '../api/validation.ts';
import type { Subset, WorkloadSpread } from '../api/workloadspread.ts';
import { podsToDeleteOnScaleDown } from '../k8s/pod-ranking.ts';
import { formatTime } from '../k8s/time.ts';
import type { Pod } from '../k8s/types.ts';
import { groupPodsBySubset } from './adoption.ts';
import { computeDeletionCosts } from './deletion-cost.ts';
import { injectSubset } from './inject.ts';
import { markedSubset } from './marker.ts';
import { resolveMaxReplicas } from './percent.ts';
import { chooseSubset } from './subset-choice.ts';
import { specArb } from '../testing/spec-arbitraries.ts';

const T0 = Date.UTC(2026, 0, 1);
const V = 'h1';

function spread(subsets: Subset[]): WorkloadSpread {
  return { metadata: { name: 'ws', namespace: 'ns', uid: 'u' }, spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets } };
}

/** N pods admitted one by one as the webhook admits them (Running and Ready at once, one node each). */
function admitted(ws: WorkloadSpread, replicas: number): Pod[] {
  let current: WorkloadSpread = ws;
  const pods: Pod[] = [];
  for (let i = 0; i < replicas; i++) {
    const at = formatTime(T0 + i * 1000);
    const template: Pod = {
      metadata: { name: `p${String(i).padStart(3, '0')}`, namespace: 'ns', creationTimestamp: at, labels: { 'pod-template-hash': V }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-h1', uid: 'rs', controller: true }] },
      spec: { containers: [{ name: 'main' }] },
    };
    const choice = chooseSubset({ ws: current, pod: template, version: V, workloadReplicas: () => ({ ok: true, replicas }), now: T0 + i * 1000, newUid: () => `u${i}` });
    let pod = template;
    if (choice.kind === 'chosen') {
      if (choice.status !== undefined) current = { ...current, status: choice.status };
      const injected = injectSubset(template, current, choice.subset, choice.uid);
      if (injected.ok) pod = injected.pod;
    }
    pod.spec.nodeName = `node-${i}`;
    pod.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: at }] };
    pods.push(pod);
  }
  return pods;
}

/** The limit of each subset at n (Infinity when unset); D2's minimum wins over it. */
function caps(subsets: readonly Subset[], n: number): number[] {
  return subsets.map((s) => {
    const limit = resolveMaxReplicas(s.maxReplicas, n) ?? 0;
    return Math.max(limit < 0 ? Number.POSITIVE_INFINITY : limit, s.minReplicas ?? 0);
  });
}

describe('D17 (property): a scale-in keeps every subset within its limit whenever the pods allow it', () => {
  test('random specs, N ≤ 200, random scale-in sequences, the ReplicaSet ranking, no sync in between', () => {
    fc.assert(
      fc.property(specArb, fc.integer({ min: 1, max: 200 }), fc.array(fc.integer({ min: 0, max: 199 }), { minLength: 1, maxLength: 6 }), (subsets, N, downs) => {
        const ws = spread(subsets);
        fc.pre(validateWorkloadSpread(ws).length === 0);
        const pods = admitted(ws, N);
        const grouped = groupPodsBySubset({ ws, pods, nodeByName: () => undefined, workloadReplicas: N });
        const costs = computeDeletionCosts({ ws, byVersion: grouped.byVersion, latestVersion: V, workloadReplicas: N });
        let live = pods.map((p) => ({ ...p, metadata: { ...p.metadata, annotations: { ...p.metadata.annotations, [POD_DELETION_COST_ANNOTATION]: String(costs.get(p.metadata.name ?? '') ?? 0) } } }));
        const subsetOf = (p: Pod): number => subsets.findIndex((s) => s.name === markedSubset(p, 'ws'));
        const available = subsets.map((_, i) => pods.filter((p) => subsetOf(p) === i).length);
        const unplaced = pods.filter((p) => subsetOf(p) < 0).length;
        const sizes = [...new Set(downs.map((d) => d % N))].sort((a, b) => b - a);
        for (const n of sizes) {
          const victims = podsToDeleteOnScaleDown(live, live, live.length - n, T0 + 1_000_000);
          const gone = new Set(victims);
          live = live.filter((p) => !gone.has(p));
          const cap = caps(subsets, n);
          // Reachable: n of the original pods exist with every subset within its limit.
          const reachable = available.reduce((sum, a, i) => sum + Math.min(a, cap[i] ?? 0), 0) + unplaced >= n;
          if (!reachable) continue;
          subsets.forEach((s, i) => {
            const held = live.filter((p) => subsetOf(p) === i).length;
            assert.ok(held <= (cap[i] ?? 0), `${s.name} holds ${held} > ${cap[i]} at n=${n} (N=${N}, ${JSON.stringify(subsets)})`);
          });
        }
      }),
      { numRuns: Number(process.env['WS_D17_RUNS'] ?? 300) },
    );
  });

  test('integer-only specs: every cost is one of the reference values of its subset', () => {
    fc.assert(
      fc.property(specArb, fc.integer({ min: 1, max: 120 }), (subsets, N) => {
        fc.pre(subsets.every((s) => typeof s.maxReplicas !== 'string'));
        const ws = spread(subsets);
        fc.pre(validateWorkloadSpread(ws).length === 0);
        const pods = admitted(ws, N);
        const grouped = groupPodsBySubset({ ws, pods, nodeByName: () => undefined, workloadReplicas: N });
        const costs = computeDeletionCosts({ ws, byVersion: grouped.byVersion, latestVersion: V, workloadReplicas: N });
        const n = subsets.length;
        for (const [subset, members] of grouped.bySubset) {
          const e = subsets.findIndex((s) => s.name === subset);
          const allowed = subset === FAKE_SUBSET_NAME ? [-100 * (n + 1)] : [100 * (n - e), -100 * (e + 1), 100 * (2 * n - e)];
          for (const p of members) assert.ok(allowed.includes(costs.get(p.metadata.name ?? '') ?? Number.NaN), `${p.metadata.name} in ${subset}: ${costs.get(p.metadata.name ?? '')}`);
        }
      }),
      { numRuns: 200 },
    );
  });
});
