import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Subset, WorkloadSpread } from '../api/workloadspread.ts';
import { planSpread, type PlanStep } from './plan.ts';

function ws(subsets: Subset[], kind = 'Deployment', apiVersion = 'apps/v1'): WorkloadSpread {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'WorkloadSpread',
    metadata: { name: 'ws', namespace: 'default' },
    spec: { targetRef: { apiVersion, kind, name: 'web' }, subsets },
  };
}

function plan(spread: WorkloadSpread, counts: number[]): PlanStep[] {
  const outcome = planSpread(spread, counts);
  assert.equal(outcome.ok, true, outcome.ok ? '' : outcome.error);
  return outcome.ok ? outcome.result.steps : [];
}

function pods(step: PlanStep | undefined): Record<string, number> {
  return Object.fromEntries(Object.entries(step?.subsets ?? {}).map(([k, v]) => [k, v.pods]));
}

describe('planSpread', () => {
  test('elastic: max 2 then unlimited, 2 -> 6 -> 2 leaves 2/0 with costs 200/100', () => {
    const steps = plan(ws([{ name: 'a', maxReplicas: 2 }, { name: 'b' }]), [2, 6, 2]);
    assert.deepEqual(pods(steps[1]), { a: 2, b: 4 });
    assert.deepEqual(steps[1]?.subsets.a?.costs, [200]);
    assert.deepEqual(steps[1]?.subsets.b?.costs, [100]);
    assert.deepEqual(pods(steps[2]), { a: 2, b: 0 });
    assert.deepEqual(steps[2]?.subsets.b, { limit: null, pods: 0, costs: [] });
  });

  test('percentages 20/30/50 resolve against the current count (spec §5.3), rounding up', () => {
    const steps = plan(ws([{ name: 'a', maxReplicas: '20%' }, { name: 'b', maxReplicas: '30%' }, { name: 'c', maxReplicas: '50%' }]), [10, 5]);
    assert.deepEqual(pods(steps[0]), { a: 2, b: 3, c: 5 });
    assert.deepEqual(Object.values(steps[0]?.subsets ?? {}).map((s) => s.limit), [2, 3, 5]);
    assert.deepEqual(Object.values(steps[1]?.subsets ?? {}).map((s) => s.limit), [1, 2, 3]);
    // Scale-in removes the surplus of each subset first (c's, then b's, then a's), then normal pods back to front.
    assert.deepEqual(pods(steps[1]), { a: 1, b: 2, c: 2 });
    assert.equal(steps[1]?.unassigned, 0);
  });

  test('1:1:3 by percent keeps the ratio through scale-up and scale-down (D17 balanced costs)', () => {
    const spread = ws([{ name: 'a', maxReplicas: '20%' }, { name: 'b', maxReplicas: '20%' }, { name: 'c', maxReplicas: '60%' }]);
    const steps = plan(spread, [5, 50, 10, 5, 20, 4]);
    assert.deepEqual(pods(steps[0]), { a: 1, b: 1, c: 3 });
    assert.deepEqual(pods(steps[1]), { a: 10, b: 10, c: 30 });
    assert.deepEqual(pods(steps[2]), { a: 2, b: 2, c: 6 });
    assert.deepEqual(pods(steps[3]), { a: 1, b: 1, c: 3 });
    assert.deepEqual(pods(steps[5]), { a: 1, b: 1, c: 2 });
    // Every pod has its own cost, the front subset's first pod the highest.
    const costs = Object.values(steps[2]?.subsets ?? {}).map((s) => s.costs);
    assert.deepEqual(costs.map((c) => c.length), [2, 2, 6]);
    assert.equal(Math.max(...costs.flat()), costs[0]?.at(-1));
  });

  test('D19: a scale-in uses the costs in place; an integer spec keeps the reference order (back subset first)', () => {
    const steps = plan(ws([{ name: 'a', maxReplicas: 3 }, { name: 'b', maxReplicas: 3 }, { name: 'c' }]), [9, 4]);
    assert.deepEqual(pods(steps[1]), { a: 3, b: 1, c: 0 });
    assert.deepEqual(Object.values(steps[1]?.subsets ?? {}).map((s) => s.costs), [[300], [200], []]);
  });

  test('pods no subset can take are reported unplaced (D11), never counted in a subset over its limit', () => {
    // Two subsets of 2 pods each and 6 replicas: 2 pods fit no subset. Where they land depends on the cluster's nodes.
    const steps = plan(ws([{ name: 'a', maxReplicas: 2 }, { name: 'b', maxReplicas: 2 }]), [6, 8, 3]);
    assert.deepEqual(pods(steps[0]), { a: 2, b: 2 });
    assert.deepEqual([steps[0]?.placed, steps[0]?.unplaced, steps[0]?.unassigned], [4, 2, 2]);
    assert.deepEqual(Object.values(steps[0]?.subsets ?? {}).map((s) => s.costs), [[200], [100]]);
    assert.deepEqual(pods(steps[1]), { a: 2, b: 2 });
    assert.equal(steps[1]?.unplaced, 4);
    // On scale-in the pods in no subset go first (no node, as a cluster ranks pods in no subset or over a limit first), then b's (cost 100).
    assert.deepEqual(pods(steps[2]), { a: 2, b: 1 });
    assert.equal(steps[2]?.unplaced, 0);
  });

  test('a subset never gains pods beyond its limit: random specs and scale sequences', () => {
    const subsetArb = fc.record({ max: fc.option(fc.oneof(fc.integer({ min: 0, max: 6 }), fc.integer({ min: 1, max: 100 }).map((p) => `${p}%`)), { nil: undefined }), min: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }) });
    fc.assert(
      fc.property(fc.array(subsetArb, { minLength: 1, maxLength: 4 }), fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 6 }), (specs, counts) => {
        const subsets: Subset[] = specs.map((s, i) => ({ name: `s${i}`, ...(s.max === undefined ? {} : { maxReplicas: s.max }), ...(s.min === undefined ? {} : { minReplicas: s.min }) }));
        fc.pre(subsets.every((s) => s.minReplicas === undefined || typeof s.maxReplicas !== 'number' || s.minReplicas <= s.maxReplicas));
        const outcome = planSpread(ws(subsets), counts);
        assert.ok(outcome.ok, outcome.ok ? '' : outcome.error);
        let before: Record<string, number> = {};
        for (const step of outcome.result.steps) {
          for (const [name, s] of Object.entries(step.subsets)) {
            // Over its limit only with pods that were already there (a scale-in keeps what it does not remove).
            if (s.limit !== null && s.pods > s.limit) assert.ok(s.pods <= (before[name] ?? 0), `${name}: ${s.pods} pods over its limit ${s.limit} after ${before[name] ?? 0} (${JSON.stringify({ subsets, counts })})`);
          }
          assert.equal(step.placed + step.unplaced, step.replicas);
          assert.equal(step.placed, Object.values(step.subsets).reduce((n, s) => n + s.pods, 0));
          before = pods(step);
        }
      }),
      { numRuns: 200, seed: 20260101 },
    );
  });

  test('StatefulSet targets follow the ordinals and get no deletion cost', () => {
    const spread = ws([{ name: 'a', maxReplicas: 5 }, { name: 'b', maxReplicas: 5 }, { name: 'c' }], 'StatefulSet');
    const steps = plan(spread, [12, 7]);
    assert.deepEqual(pods(steps[0]), { a: 5, b: 5, c: 2 });
    assert.deepEqual(pods(steps[1]), { a: 5, b: 2, c: 0 }); // highest ordinals go first
    assert.ok(Object.values(steps[0]?.subsets ?? {}).every((s) => s.costs.length === 0));
  });

  test('minReplicas: filled first on scale-out, removed last on scale-in (D2)', () => {
    const spread = ws([{ name: 'spot', maxReplicas: 8 }, { name: 'on-demand', minReplicas: 2 }]);
    const steps = plan(spread, [3, 12, 3]);
    assert.deepEqual(pods(steps[0]), { spot: 1, 'on-demand': 2 });
    assert.deepEqual(pods(steps[1]), { spot: 8, 'on-demand': 4 });
    assert.deepEqual(steps[1]?.subsets['on-demand']?.costs, [100, 300]);
    assert.deepEqual(pods(steps[2]), { spot: 1, 'on-demand': 2 });
  });

  test('the same input gives the same plan', () => {
    const spread = ws([{ name: 'a', maxReplicas: '34%' }, { name: 'b', maxReplicas: '33%' }, { name: 'c', maxReplicas: '33%' }]);
    assert.deepEqual(planSpread(spread, [10, 3, 20]), planSpread(spread, [10, 3, 20]));
    const steps = plan(spread, [10]);
    assert.deepEqual(pods(steps[0]), { a: 4, b: 4, c: 2 }); // caps 4/4/4 sum to 12 > 10 (#877)
  });

  test('bad counts are an error, not a crash', () => {
    const outcome = planSpread(ws([{ name: 'a' }]), [-1]);
    assert.equal(outcome.ok, false);
  });
});
