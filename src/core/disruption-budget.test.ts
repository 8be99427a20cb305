import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { DomainStatus } from '../api/disruption-budget.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { formatTime } from '../k8s/time.ts';
import type { Pod } from '../k8s/types.ts';
import { budgetStatusEqual, computeBudgetStatus, desiredHealthy, domainOfPod } from './disruption-budget.ts';
import { budget, node, nodeMap, pod, STORY_1, STORY_2, STORY_3, T0, ZONE } from '../testing/budget-fixtures.ts';

/** Three zones foo, bar, baz with two nodes each; node d1 has no zone label. */
const NODES = nodeMap([node('f1', 'foo'), node('f2', 'foo'), node('b1', 'bar'), node('b2', 'bar'), node('z1', 'baz'), node('z2', 'baz'), node('d1')]);

/** Two Ready pods per zone. */
const SIX = [pod('f-1', { node: 'f1' }), pod('f-2', { node: 'f2' }), pod('b-1', { node: 'b1' }), pod('b-2', { node: 'b2' }), pod('z-1', { node: 'z1' }), pod('z-2', { node: 'z2' })];

type Figures = [name: string, expected: number, current: number, desired: number, allowed: number];
const figures = (domains: readonly DomainStatus[] | undefined): Figures[] =>
  (domains ?? []).map((d) => [d.name, d.expectedPods, d.currentHealthy, d.desiredHealthy, d.disruptionsAllowed]);

const status = (b: ReturnType<typeof budget>, pods: readonly Pod[], ws?: WorkloadSpread, now = T0) => computeBudgetStatus(b, pods, NODES, ws, now);

describe('the KEP-8 stories, with their numbers', () => {
  test('story 1: maxUnavailable 0 outside zone bar — foo and baz are one domain with nothing to spare; bar is not governed', () => {
    const s = status(budget(STORY_1), SIX).status;
    assert.deepEqual(figures(s.domains), [['matching-nodes', 4, 4, 4, 0]]);
    assert.equal(s.mode, 'nodeSelectorTerm');
    assert.equal(s.blockedDomains, 1);
  });
  test('story 2: maxUnavailable 1 per zone — one eviction per zone', () => {
    const s = status(budget(STORY_2), SIX).status;
    assert.deepEqual(figures(s.domains), [
      ['bar', 2, 2, 1, 1],
      ['baz', 2, 2, 1, 1],
      ['foo', 2, 2, 1, 1],
    ]);
    assert.equal(s.mode, `topologyKey=${ZONE}`);
    assert.equal(s.domainCount, 3);
    assert.equal(s.blockedDomains, 0);
  });
  test('story 3: maxUnavailable 1 overall — one eviction in all', () => {
    const s = status(budget(STORY_3), SIX).status;
    assert.deepEqual(figures(s.domains), [['all', 6, 6, 5, 1]]);
    assert.equal(s.mode, 'all');
  });
});

describe('desiredHealthy rounds as a PodDisruptionBudget does (up)', () => {
  const cases: [string, Record<string, unknown>, number, number][] = [
    ['maxUnavailable 1 of 3', { maxUnavailable: 1 }, 3, 2],
    ['maxUnavailable 5 of 3 never goes below 0', { maxUnavailable: 5 }, 3, 0],
    ['maxUnavailable 50% of 3 → 2 may go (1.5 up)', { maxUnavailable: '50%' }, 3, 1],
    ['maxUnavailable 34% of 10 → 4 may go', { maxUnavailable: '34%' }, 10, 6],
    ['maxUnavailable 0%', { maxUnavailable: '0%' }, 7, 7],
    ['minAvailable 2 (an int is taken as is, even above expected)', { minAvailable: 2 }, 1, 2],
    ['minAvailable 50% of 3 → 2 (1.5 up)', { minAvailable: '50%' }, 3, 2],
    ['minAvailable 100% of 4', { minAvailable: '100%' }, 4, 4],
    ['minAvailable 10% of 0', { minAvailable: '10%' }, 0, 0],
  ];
  for (const [name, spec, expected, want] of cases) {
    test(name, () => assert.deepEqual(desiredHealthy(budget(spec), expected), { ok: true, value: want }));
  }
  test('an unreadable amount is an error, not a number', () => {
    assert.equal(desiredHealthy(budget({ maxUnavailable: 'half' }), 3).ok, false);
    assert.equal(desiredHealthy(budget({}), 3).ok, false);
    assert.equal(desiredHealthy(budget({ maxUnavailable: 1, minAvailable: 1 }), 3).ok, false);
  });
});

describe('domainOfPod', () => {
  const b2 = budget(STORY_2);
  const cases: [string, ReturnType<typeof budget>, Pod, string | undefined][] = [
    ['topologyKey: the node label value', b2, pod('p', { node: 'f1' }), 'foo'],
    ['topologyKey: a node without the label is <none>', b2, pod('p', { node: 'd1' }), '<none>'],
    ['topologyKey: a node we do not know is <none>', b2, pod('p', { node: 'gone' }), '<none>'],
    ['topologyKey: an unscheduled pod is not governed', b2, pod('p'), undefined],
    ['nodeSelectorTerm: a matching node', budget(STORY_1), pod('p', { node: 'z1' }), 'matching-nodes'],
    ['nodeSelectorTerm: zone bar is not governed', budget(STORY_1), pod('p', { node: 'b1' }), undefined],
    ['nodeSelectorTerm: a node without a zone is not governed (Exists)', budget(STORY_1), pod('p', { node: 'd1' }), undefined],
    ['nodeSelectorTerm: an unscheduled pod is not governed', budget(STORY_1), pod('p'), undefined],
    ['no mode: all, scheduled or not', budget(STORY_3), pod('p'), 'all'],
    ['workloadSpreadRef: the subset of the marker', budget({ maxUnavailable: 1, workloadSpreadRef: { name: 'web' } }), pod('p', { marker: { name: 'web', subset: 'zone-a' } }), 'zone-a'],
    ['workloadSpreadRef: another WorkloadSpread’s marker is <none>', budget({ maxUnavailable: 1, workloadSpreadRef: { name: 'web' } }), pod('p', { marker: { name: 'api', subset: 'zone-a' } }), '<none>'],
    ['workloadSpreadRef: no marker is <none>', budget({ maxUnavailable: 1, workloadSpreadRef: { name: 'web' } }), pod('p', { node: 'f1' }), '<none>'],
  ];
  for (const [name, b, p, want] of cases) {
    test(name, () => {
      const n = p.spec.nodeName === undefined ? undefined : NODES.get(p.spec.nodeName);
      assert.equal(domainOfPod(b, p, n), want);
    });
  }
});

describe('computeBudgetStatus: one case per rule', () => {
  const b = budget(STORY_2);
  test('terminating pods are expected but not healthy', () => {
    const s = status(b, [pod('f-1', { node: 'f1', terminating: true }), pod('f-2', { node: 'f2' })]).status;
    assert.deepEqual(figures(s.domains), [['foo', 2, 1, 1, 0]]);
  });
  test('finished pods are not expected at all', () => {
    const s = status(b, [pod('f-1', { node: 'f1', phase: 'Succeeded' }), pod('f-2', { node: 'f2', phase: 'Failed' }), pod('f-3', { node: 'f2' })]).status;
    assert.deepEqual(figures(s.domains), [['foo', 1, 1, 0, 1]]);
  });
  test('pods that are not Ready are expected but not healthy', () => {
    const s = status(b, [pod('f-1', { node: 'f1', ready: false }), pod('f-2', { node: 'f2' }), pod('f-3', { node: 'f2' })]).status;
    assert.deepEqual(figures(s.domains), [['foo', 3, 2, 2, 0]]);
  });
  test('pods of other namespaces or labels are ignored', () => {
    const s = status(b, [pod('x', { node: 'f1', namespace: 'other' }), pod('y', { node: 'f1', labels: { app: 'bar' } }), pod('f-1', { node: 'f1' })]).status;
    assert.deepEqual(figures(s.domains), [['foo', 1, 1, 0, 1]]);
  });
  test('pods on a node without the label form the <none> domain; unscheduled pods are left out', () => {
    const s = status(b, [pod('d-1', { node: 'd1' }), pod('d-2', { node: 'd1' }), pod('pending', { phase: 'Pending', ready: false })]).status;
    assert.deepEqual(figures(s.domains), [['<none>', 2, 2, 1, 1]]);
  });
  test('a domain without expected pods allows nothing', () => {
    const s = status(budget({ maxUnavailable: 1 }), []).status;
    assert.deepEqual(figures(s.domains), [['all', 0, 0, 0, 0]]);
    assert.equal(s.blockedDomains, 0, 'an empty domain is not counted as blocked');
  });
  test('observedGeneration follows metadata.generation', () => {
    const s = status(budget(STORY_3, 'g', { metadata: { name: 'g', namespace: 'default', generation: 7 } }), SIX).status;
    assert.equal(s.observedGeneration, 7);
  });
  test('an empty selector selects nothing and says so', () => {
    const s = status(budget({ ...STORY_3, selector: {} }), SIX).status;
    assert.deepEqual(figures(s.domains), [['all', 0, 0, 0, 0]]);
    assert.deepEqual(s.conditions?.map((c) => [c.type, c.status]), [['SpecValid', 'False']]);
  });
  test('an amount that cannot be resolved allows nothing (fail safe) and says why', () => {
    const s = status(budget({ maxUnavailable: 'lots' }), SIX).status;
    assert.deepEqual(figures(s.domains), [['all', 6, 6, 6, 0]]);
    const valid = s.conditions?.find((c) => c.type === 'SpecValid');
    assert.equal(valid?.status, 'False');
    assert.match(valid?.message ?? '', /not a percentage/);
  });
  test('DisruptionAllowed per domain keeps its transition time while unchanged and moves when it flips', () => {
    const first = status(b, SIX.slice(0, 2)).status;
    const stored = budget(STORY_2, 'app-ddb', { status: first });
    const later = computeBudgetStatus(stored, SIX.slice(0, 2), NODES, undefined, T0 + 60_000).status;
    assert.equal(later.domains?.[0]?.conditions?.[0]?.lastTransitionTime, formatTime(T0));
    assert.ok(budgetStatusEqual(first, later), 'an unchanged world gives an equal status');
    const blocked = computeBudgetStatus(stored, [SIX[0] as Pod, pod('f-2', { node: 'f2', ready: false })], NODES, undefined, T0 + 60_000).status;
    assert.deepEqual(blocked.domains?.[0]?.conditions?.map((c) => [c.status, c.reason, c.lastTransitionTime]), [['False', 'InsufficientPods', formatTime(T0 + 60_000)]]);
  });
});

describe('disruptedPods: kept while expected, expiring after 2 minutes', () => {
  const withDisrupted = (entries: Record<string, string>) =>
    budget(STORY_3, 'app-ddb', { status: { observedGeneration: 1, domains: [{ name: 'all', expectedPods: 6, currentHealthy: 6, desiredHealthy: 5, disruptionsAllowed: 1, disruptedPods: entries }] } });
  test('a recent approval is kept: the pod is not healthy, and a requeue is asked for its expiry', () => {
    const r = status(withDisrupted({ 'f-1': formatTime(T0 - 119_000) }), SIX);
    assert.deepEqual(figures(r.status.domains), [['all', 6, 5, 5, 0]]);
    assert.deepEqual(r.status.domains?.[0]?.disruptedPods, { 'f-1': formatTime(T0 - 119_000) });
    assert.equal(r.requeueAfterMs, 1_000);
    assert.deepEqual(r.expired, []);
  });
  test('after 2 minutes the approval expires: dropped, reported, the pod healthy again', () => {
    const r = status(withDisrupted({ 'f-1': formatTime(T0 - 120_000) }), SIX);
    assert.deepEqual(figures(r.status.domains), [['all', 6, 6, 5, 1]]);
    assert.equal(r.status.domains?.[0]?.disruptedPods, undefined);
    assert.deepEqual(r.expired, ['f-1']);
    assert.equal(r.requeueAfterMs, undefined);
  });
  test('entries of pods that are gone or terminating are dropped', () => {
    const pods = [pod('f-1', { node: 'f1', terminating: true }), ...SIX.slice(1)];
    const r = status(withDisrupted({ 'f-1': formatTime(T0), ghost: formatTime(T0) }), pods);
    assert.equal(r.status.domains?.[0]?.disruptedPods, undefined);
    assert.deepEqual(figures(r.status.domains), [['all', 6, 5, 5, 0]]);
    assert.deepEqual(r.expired, []);
  });
  test('an unreadable time counts as expired', () => {
    const r = status(withDisrupted({ 'f-1': 'yesterday' }), SIX);
    assert.deepEqual(r.expired, ['f-1']);
  });
  test('the earliest expiry decides the requeue', () => {
    const r = status(withDisrupted({ 'f-1': formatTime(T0 - 30_000), 'b-1': formatTime(T0 - 90_000) }), SIX);
    assert.equal(r.requeueAfterMs, 30_000);
  });
});

describe('workloadSpreadRef: one domain per subset', () => {
  const ws = { metadata: { name: 'web', namespace: 'default' }, spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets: [{ name: 'zone-b' }, { name: 'zone-a' }, { name: 'empty' }] } } as WorkloadSpread;
  const b = budget({ maxUnavailable: 1, workloadSpreadRef: { name: 'web' } });
  const pods = [
    pod('a-1', { node: 'f1', marker: { name: 'web', subset: 'zone-a' } }),
    pod('a-2', { node: 'f2', marker: { name: 'web', subset: 'zone-a' } }),
    pod('b-1', { node: 'b1', marker: { name: 'web', subset: 'zone-b' } }),
    pod('b-new', { marker: { name: 'web', subset: 'zone-b' }, phase: 'Pending', ready: false }),
    pod('loose', { node: 'z1' }),
  ];
  test('subsets in spec order, empty ones included, then <none>; a pending pod counts in its subset', () => {
    const s = status(b, pods, ws).status;
    assert.deepEqual(figures(s.domains), [
      ['zone-b', 2, 1, 1, 0],
      ['zone-a', 2, 2, 1, 1],
      ['empty', 0, 0, 0, 0],
      ['<none>', 1, 1, 0, 1],
    ]);
    assert.deepEqual(s.conditions?.map((c) => [c.type, c.status]), [['SpecValid', 'True'], ['WorkloadSpreadFound', 'True']]);
    assert.equal(s.mode, 'workloadSpreadRef=web');
  });
  test('a missing WorkloadSpread: domains from the markers only, and the condition says so', () => {
    const s = status(b, pods, undefined).status;
    assert.deepEqual(s.domains?.map((d) => d.name), ['<none>', 'zone-a', 'zone-b']);
    const found = s.conditions?.find((c) => c.type === 'WorkloadSpreadFound');
    assert.deepEqual([found?.status, found?.reason], ['False', 'NotFound']);
    assert.match(found?.message ?? '', /default\/web does not exist/);
  });
});

describe('properties', () => {
  const zones = ['foo', 'bar', 'baz'];
  const arbPods = fc.array(
    fc.record({ zone: fc.constantFrom(...zones, undefined), ready: fc.boolean(), terminating: fc.boolean(), phase: fc.constantFrom('Running', 'Running', 'Pending', 'Succeeded') }),
    { maxLength: 25 },
  );
  const arbAmount = fc.oneof(
    fc.record({ maxUnavailable: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 100 }).map((n) => `${n}%`)) }),
    fc.record({ minAvailable: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 100 }).map((n) => `${n}%`)) }),
  );
  const build = (specs: { zone: string | undefined; ready: boolean; terminating: boolean; phase: string }[]) =>
    specs.map((p, i) => pod(`p-${i}`, { ready: p.ready, terminating: p.terminating, phase: p.phase, ...(p.zone === undefined ? {} : { node: p.zone === 'foo' ? 'f1' : p.zone === 'bar' ? 'b1' : 'z1' }) }));

  test('figures are consistent: healthy ≤ expected, allowed = max(0, healthy − desired), 0 without pods', () => {
    fc.assert(
      fc.property(arbPods, arbAmount, fc.boolean(), (specs, amount, perZone) => {
        const s = status(budget({ ...amount, ...(perZone ? { topologyKey: ZONE } : {}) }), build(specs)).status;
        for (const d of s.domains ?? []) {
          assert.ok(d.currentHealthy <= d.expectedPods);
          assert.ok(d.desiredHealthy >= 0);
          assert.equal(d.disruptionsAllowed, d.expectedPods === 0 ? 0 : Math.max(0, d.currentHealthy - d.desiredHealthy));
        }
        const counted = (s.domains ?? []).reduce((n, d) => n + d.expectedPods, 0);
        const governed = specs.filter((p) => p.phase !== 'Succeeded' && (!perZone || p.zone !== undefined)).length;
        assert.equal(counted, governed, 'every governed pod is in exactly one domain');
      }),
    );
  });
  test('computing again on the result changes nothing (so the controller writes only on change)', () => {
    fc.assert(
      fc.property(arbPods, arbAmount, (specs, amount) => {
        const b = budget({ ...amount, topologyKey: ZONE });
        const pods = build(specs);
        const first = status(b, pods).status;
        const again = computeBudgetStatus({ ...b, status: first }, pods, NODES, undefined, T0 + 5_000).status;
        assert.ok(budgetStatusEqual(first, again));
      }),
    );
  });
});
