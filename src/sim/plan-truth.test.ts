/**
 * D19: `plan` tells the truth. Random WorkloadSpreads (2–4 subsets, by
 * percentage or by count, the last one sometimes unlimited, sometimes a
 * minReplicas) and random scale sequences are run twice: through `plan`
 * (core/plan.ts, the engine alone) and through `simulate` on the embedded
 * cluster with the real manager (its ReplicaSet controller ranking pods by
 * the deletion costs the manager wrote). One zone per subset with room for
 * every pod, so both place the pods where the spread says.
 *
 * Every step must end with the same pods per subset, except for the pods
 * `plan` reports unplaced (no subset could take them: D11). In the cluster
 * those are scheduled onto some zone and adopted into its subset, which plan
 * cannot know; so in the cluster each subset holds at least plan's pods, and
 * what it holds beyond them (plus the pods in no subset) is exactly plan's
 * unplaced count. Where plan reports none unplaced, the counts are equal.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { validateWorkloadSpread } from '../api/validation.ts';
import type { Subset, WorkloadSpread } from '../api/workloadspread.ts';
import { generateServingCertificate } from '../client/loopback-certificates.ts';
import { planSpread } from '../core/plan.ts';
import { runScenario } from './runner.ts';
import { scenarioFromValue } from './scenario.ts';
import { summarizeSpreads } from './spread-summary.ts';

const certificate = generateServingCertificate();

interface Case {
  subsets: Subset[];
  counts: number[];
}

const percentSpecArb: fc.Arbitrary<Subset[]> = fc
  .record({ k: fc.integer({ min: 2, max: 4 }), cuts: fc.array(fc.integer({ min: 1, max: 99 }), { minLength: 3, maxLength: 3 }), lastUnset: fc.boolean() })
  .map(({ k, cuts, lastUnset }) => {
    // k percentages summing to 100 (cuts of [0,100]), or k−1 of them plus an unset last subset.
    const limited = lastUnset ? k - 1 : k;
    const points = [...new Set(cuts.slice(0, limited - 1))].sort((a, b) => a - b);
    const bounds = [0, ...points, lastUnset ? Math.min(100, (points.at(-1) ?? 0) + 30) : 100];
    const subsets: Subset[] = [];
    for (let i = 1; i < bounds.length; i++) subsets.push({ name: `s${i - 1}`, maxReplicas: `${(bounds[i] ?? 0) - (bounds[i - 1] ?? 0)}%` });
    if (lastUnset) subsets.push({ name: `s${subsets.length}` });
    return subsets;
  });

const countSpecArb: fc.Arbitrary<Subset[]> = fc
  .record({ limits: fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 2, maxLength: 4 }), lastUnset: fc.boolean(), min: fc.option(fc.integer({ min: 1, max: 2 }), { nil: undefined }) })
  .map(({ limits, lastUnset, min }) =>
    limits.map((m, i): Subset => {
      const unset = lastUnset && i === limits.length - 1;
      const subset: Subset = unset ? { name: `s${i}` } : { name: `s${i}`, maxReplicas: m };
      if (min !== undefined && i === 0 && (unset || min <= m)) subset.minReplicas = min;
      return subset;
    }),
  );

const caseArb: fc.Arbitrary<Case> = fc.record({
  subsets: fc.oneof(percentSpecArb, countSpecArb),
  counts: fc.array(fc.integer({ min: 0, max: 16 }), { minLength: 3, maxLength: 5 }),
});

function workloadSpread(subsets: Subset[]): WorkloadSpread {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'WorkloadSpread',
    metadata: { name: 'spread', namespace: 'default' },
    spec: {
      targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'app' },
      subsets: subsets.map((s, i) => ({ ...s, requiredNodeSelectorTerm: { matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [`zone-${i}`] }] } })),
    },
  };
}

function scenario(c: Case): unknown {
  return {
    name: 'plan-truth',
    nodes: c.subsets.map((_, i) => ({ namePrefix: `zone-${i}-`, count: 1, labels: { 'topology.kubernetes.io/zone': `zone-${i}` }, capacity: { pods: 100 } })),
    objects: [
      workloadSpread(c.subsets),
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'app' },
        spec: { replicas: 0, selector: { matchLabels: { app: 'app' } }, template: { metadata: { labels: { app: 'app' } }, spec: { containers: [{ name: 'main', image: 'nginx' }] } } },
      },
    ],
    steps: c.counts.map((replicas) => ({ scale: { kind: 'Deployment', name: 'app', replicas } })),
  };
}

describe('plan predicts what the cluster does', () => {
  test('random specs and scale sequences: plan and simulate end every step with the same pods per subset, apart from the pods plan shows unplaced', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const ws = workloadSpread(c.subsets);
        fc.pre(validateWorkloadSpread(ws).length === 0);
        const planned = planSpread(ws, c.counts);
        assert.ok(planned.ok, !planned.ok ? planned.error : '');
        const parsed = scenarioFromValue(scenario(c));
        assert.ok(parsed.ok, !parsed.ok ? JSON.stringify(parsed.problems) : '');
        const run = await runScenario(parsed.scenario, { certificate });
        assert.equal(run.error, undefined, run.error);
        c.counts.forEach((replicas, i) => {
          const step = run.steps[i];
          assert.ok(step !== undefined && step.error === undefined, step?.error);
          const spread = summarizeSpreads(step)[0];
          const simulated = Object.fromEntries((spread?.subsets ?? []).map((s) => [s.name, s.pods]));
          const predicted = planned.result.steps[i];
          assert.ok(predicted !== undefined);
          const placed = Object.fromEntries(Object.entries(predicted.subsets).map(([name, s]) => [name, s.pods]));
          const where = `step ${i + 1} (scale to ${replicas}) of ${JSON.stringify(c)}: simulated ${JSON.stringify(simulated)} + ${spread?.unassigned.pods ?? 0} in no subset, planned ${JSON.stringify(placed)} + ${predicted.unplaced} unplaced`;
          if (predicted.unplaced === 0) {
            assert.deepEqual(simulated, placed, where);
            return;
          }
          let beyond = spread?.unassigned.pods ?? 0;
          for (const [name, pods] of Object.entries(placed)) {
            assert.ok((simulated[name] ?? 0) >= pods, where);
            beyond += (simulated[name] ?? 0) - pods;
          }
          assert.equal(beyond, predicted.unplaced, where);
        });
      }),
      // The first case always runs: two subsets of 2 pods each and nothing else, so pods are left unplaced.
      { examples: [[{ subsets: [{ name: 's0', maxReplicas: 2 }, { name: 's1', maxReplicas: 2 }], counts: [6, 3, 8] }]], numRuns: Number(process.env['WS_PLAN_TRUTH_RUNS'] ?? 8), seed: Number(process.env['WS_PLAN_TRUTH_SEED'] ?? 20261124), endOnFailure: true },
    );
  });
});
