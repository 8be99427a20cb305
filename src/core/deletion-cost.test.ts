import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Subset, WorkloadSpread } from '../api/workloadspread.ts';
import { compareActivePodsWithRanks } from '../k8s/pod-ranking.ts';
import { formatTime } from '../k8s/time.ts';
import type { Pod } from '../k8s/types.ts';
import { computeDeletionCosts, deletionCostPatches, writesDeletionCost } from './deletion-cost.ts';

const T0 = Date.UTC(2026, 0, 1, 0, 0, 0);
const FAKE = 'kruise.io/workloadspread-fake-subset-name';

/** A Running, Ready pod; a larger `age` index means created later (less valuable in ActivePods order). */
function running(name: string, index: number, opts: { phase?: string; deleting?: boolean; cost?: string } = {}): Pod {
  return {
    metadata: {
      name,
      namespace: 'ns',
      creationTimestamp: formatTime(T0 + index * 1000),
      ...(opts.deleting ? { deletionTimestamp: formatTime(T0) } : {}),
      ...(opts.cost === undefined ? {} : { annotations: { 'controller.kubernetes.io/pod-deletion-cost': opts.cost } }),
    },
    spec: { nodeName: 'node-1', containers: [{ name: 'main' }] },
    status: {
      phase: opts.phase ?? 'Running',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: formatTime(T0 + 1_000_000) }],
    },
  };
}

function wsWith(subsets: Subset[]): Pick<WorkloadSpread, 'spec'> {
  return { spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets } };
}

/** `count` pods per subset named `<subset>-<i>`, created in order. */
function podsFor(prefix: string, count: number): Pod[] {
  return Array.from({ length: count }, (_, i) => running(`${prefix}-${i}`, i));
}

function costsOf(costs: Map<string, number>, pods: Pod[]): number[] {
  return pods.map((p) => costs.get(p.metadata.name ?? '') ?? Number.NaN);
}

const repeat = (value: number, times: number): number[] => Array.from({ length: times }, () => value);

describe('writesDeletionCost (D7)', () => {
  const cases: { kind: string; ownedByReplicaSets?: boolean; want: boolean }[] = [
    { kind: 'Deployment', want: true },
    { kind: 'ReplicaSet', want: true },
    { kind: 'CloneSet', want: true },
    { kind: 'StatefulSet', want: false },
    { kind: 'StatefulSet', ownedByReplicaSets: true, want: false },
    { kind: 'Job', want: false },
    { kind: 'Rollout', want: false },
    { kind: 'Rollout', ownedByReplicaSets: true, want: true },
  ];
  for (const c of cases) {
    test(`${c.kind}${c.ownedByReplicaSets ? ' (pods owned by ReplicaSets)' : ''} → ${c.want}`, () => {
      const options = c.ownedByReplicaSets === undefined ? {} : { ownedByReplicaSets: c.ownedByReplicaSets };
      assert.equal(writesDeletionCost({ kind: c.kind }, options), c.want);
    });
  }
  test('no targetRef → false', () => assert.equal(writesDeletionCost(undefined), false));
});

describe('computeDeletionCosts: the worked example of spec §4.5 (n=3)', () => {
  const subsets: Subset[] = [
    { name: 'a', maxReplicas: 10 },
    { name: 'b', maxReplicas: 10 },
    { name: 'c' },
  ];
  const a = podsFor('a', 20);
  const b = podsFor('b', 20);
  const c = podsFor('c', 20);
  const groups = new Map([['a', a], ['b', b], ['c', c]]);

  test('latest version: a 300/-100, b 200/-200, c 100; the newest pods are the surplus', () => {
    const costs = computeDeletionCosts({ ws: wsWith(subsets), byVersion: new Map([['v2', groups]]), latestVersion: 'v2', workloadReplicas: 60 });
    assert.deepEqual(costsOf(costs, a), [...repeat(300, 10), ...repeat(-100, 10)]);
    assert.deepEqual(costsOf(costs, b), [...repeat(200, 10), ...repeat(-200, 10)]);
    assert.deepEqual(costsOf(costs, c), repeat(100, 20));
  });

  test('old version (reverse order): a 100/-300, b 200/-200, c 300', () => {
    const costs = computeDeletionCosts({ ws: wsWith(subsets), byVersion: new Map([['v1', groups]]), latestVersion: 'v2', workloadReplicas: 60 });
    assert.deepEqual(costsOf(costs, a), [...repeat(100, 10), ...repeat(-300, 10)]);
    assert.deepEqual(costsOf(costs, b), [...repeat(200, 10), ...repeat(-200, 10)]);
    assert.deepEqual(costsOf(costs, c), repeat(300, 20));
  });

  test('10/10/10 pods: 300/200/100', () => {
    const ten = new Map([['a', a.slice(0, 10)], ['b', b.slice(0, 10)], ['c', c.slice(0, 10)]]);
    const costs = computeDeletionCosts({ ws: wsWith(subsets), byVersion: new Map([['v', ten]]), latestVersion: 'v', workloadReplicas: 30 });
    assert.deepEqual([costs.get('a-0'), costs.get('b-0'), costs.get('c-0')], [300, 200, 100]);
  });
});

describe('computeDeletionCosts: rules', () => {
  test('FAKE pods of a removed subset: 3 pods, n=1 → -200 (spec §9.11)', () => {
    const fake = podsFor('old-b', 3);
    const byVersion = new Map([['versionIgnored', new Map([['subset-a', podsFor('a', 1)], [FAKE, fake]])]]);
    const costs = computeDeletionCosts({ ws: wsWith([{ name: 'subset-a' }]), byVersion, latestVersion: 'versionIgnored', workloadReplicas: 4 });
    assert.deepEqual(costsOf(costs, fake), [-200, -200, -200]);
    assert.equal(costs.get('a-0'), 100);
  });

  test('FAKE cost is not reversed for old versions', () => {
    const fake = podsFor('f', 1);
    const byVersion = new Map([['old', new Map([[FAKE, fake]])]]);
    const costs = computeDeletionCosts({ ws: wsWith([{ name: 'a' }, { name: 'b' }]), byVersion, latestVersion: 'new', workloadReplicas: 1 });
    assert.equal(costs.get('f-0'), -300);
  });

  test('inactive pods get no cost and do not count against the limit', () => {
    const pods = [running('p0', 0), running('p1', 1, { phase: 'Succeeded' }), running('p2', 2, { deleting: true }), running('p3', 3)];
    const byVersion = new Map([['v', new Map([['a', pods]])]]);
    const costs = computeDeletionCosts({ ws: wsWith([{ name: 'a', maxReplicas: 2 }]), byVersion, latestVersion: 'v', workloadReplicas: 4 });
    assert.deepEqual([...costs.entries()].sort(), [['p0', 100], ['p3', 100]]);
  });

  test('a percent limit resolves against the total workload replicas, rounding up', () => {
    const pods = podsFor('a', 4);
    const byVersion = new Map([['v', new Map([['a', pods]])]]);
    // 30% of 10 → 3: one surplus.
    const costs = computeDeletionCosts({ ws: wsWith([{ name: 'a', maxReplicas: '30%' }, { name: 'b' }]), byVersion, latestVersion: 'v', workloadReplicas: 10 });
    assert.deepEqual(costsOf(costs, pods), [200, 200, 200, -100]);
  });

  test('the surplus is chosen in ActivePods order: a not-ready pod goes before an older ready one', () => {
    const notReady = running('not-ready', 0);
    notReady.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] };
    const pods = [notReady, running('r1', 1), running('r2', 2)];
    const byVersion = new Map([['v', new Map([['a', pods]])]]);
    const costs = computeDeletionCosts({ ws: wsWith([{ name: 'a', maxReplicas: 2 }]), byVersion, latestVersion: 'v', workloadReplicas: 3 });
    assert.deepEqual(costsOf(costs, pods), [-100, 100, 100]);
  });

  test('D2: the minReplicas most valuable pods get 100*(2n-e), above every normal cost', () => {
    const a = podsFor('a', 5);
    const c = podsFor('c', 3);
    const subsets: Subset[] = [{ name: 'a', maxReplicas: 3, minReplicas: 2 }, { name: 'b' }, { name: 'c', minReplicas: 1 }];
    const byVersion = new Map([['v', new Map([['a', a], ['c', c]])]]);
    const costs = computeDeletionCosts({ ws: wsWith(subsets), byVersion, latestVersion: 'v', workloadReplicas: 8 });
    // a: 2 oldest protected (600), 1 normal (300), 2 newest surplus (-100).
    assert.deepEqual(costsOf(costs, a), [600, 600, 300, -100, -100]);
    // c (unlimited, e=2): the oldest protected (400), the rest normal (100).
    assert.deepEqual(costsOf(costs, c), [400, 100, 100]);
  });

  test('D2: protected pods are never counted as surplus, even when the limit resolves below minReplicas', () => {
    const a = podsFor('a', 3);
    const byVersion = new Map([['v', new Map([['a', a]])]]);
    // 10% of 5 → 1, minReplicas 2: 2 protected, the remaining one is surplus.
    const costs = computeDeletionCosts({ ws: wsWith([{ name: 'a', maxReplicas: '10%', minReplicas: 2 }]), byVersion, latestVersion: 'v', workloadReplicas: 5 });
    assert.deepEqual(costsOf(costs, a), [200, 200, -100]);
  });

  test('D2 on an old version uses the reversed index', () => {
    const a = podsFor('a', 2);
    const byVersion = new Map([['old', new Map([['a', a]])]]);
    const costs = computeDeletionCosts({ ws: wsWith([{ name: 'a', minReplicas: 1 }, { name: 'b' }]), byVersion, latestVersion: 'new', workloadReplicas: 2 });
    // e = 1: protected 100*(4-1) = 300, normal 100*(2-1) = 100.
    assert.deepEqual(costsOf(costs, a), [300, 100]);
  });

  test('an unresolvable limit leaves that subset without costs', () => {
    const byVersion = new Map([['v', new Map([['a', podsFor('a', 1)], ['b', podsFor('b', 1)]])]]);
    const costs = computeDeletionCosts({ ws: wsWith([{ name: 'a', maxReplicas: 'x' }, { name: 'b' }]), byVersion, latestVersion: 'v', workloadReplicas: 2 });
    assert.deepEqual([...costs.keys()], ['b-0']);
  });
});

describe('deletionCostPatches (spec §4.5 step 3)', () => {
  const cases: { name: string; current?: string; cost: number; patched: boolean; inactive?: boolean }[] = [
    { name: 'absent annotation, non-zero cost', cost: 100, patched: true },
    { name: 'absent annotation, cost 0: left absent', cost: 0, patched: false },
    { name: 'same value', current: '-100', cost: -100, patched: false },
    { name: 'different value', current: '0', cost: 100, patched: true },
    { name: 'string compare: "+100" differs from 100', current: '+100', cost: 100, patched: true },
    { name: 'inactive pods are never patched', cost: 100, patched: false, inactive: true },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const p = running('p', 0, { ...(c.current === undefined ? {} : { cost: c.current }), ...(c.inactive ? { phase: 'Failed' } : {}) });
      const patches = deletionCostPatches([p], new Map([['p', c.cost]]));
      assert.deepEqual(patches, c.patched ? [{ pod: 'p', cost: c.cost }] : []);
    });
  }
  test('pods without a computed cost are left alone', () => {
    assert.deepEqual(deletionCostPatches([running('p', 0)], new Map()), []);
  });
});

describe('deletion order (property): costs + the ReplicaSet ranking drain surplus, then normal, then minReplicas pods, back to front', () => {
  const subsetArb = fc.record({
    max: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
    min: fc.integer({ min: 0, max: 3 }),
    pods: fc.integer({ min: 0, max: 7 }),
  });
  test('the deletion sequence walks the categories in order', () => {
    fc.assert(
      fc.property(fc.array(subsetArb, { minLength: 1, maxLength: 4 }), fc.integer({ min: 0, max: 3 }), (specs, fakeCount) => {
        const n = specs.length;
        const subsets: Subset[] = specs.map((s, i) => {
          const min = s.max === undefined ? s.min : Math.min(s.min, s.max);
          return { name: `s${i}`, ...(s.max === undefined ? {} : { maxReplicas: s.max }), ...(min > 0 ? { minReplicas: min } : {}) };
        });
        const groups = new Map<string, Pod[]>();
        const subsetOf = new Map<string, number>();
        let counter = 0;
        specs.forEach((s, i) => {
          const pods = Array.from({ length: s.pods }, () => running(`p${counter}`, counter++));
          pods.forEach((p) => subsetOf.set(p.metadata.name ?? '', i));
          groups.set(`s${i}`, pods);
        });
        const fake = Array.from({ length: fakeCount }, () => running(`p${counter}`, counter++));
        fake.forEach((p) => subsetOf.set(p.metadata.name ?? '', n));
        groups.set(FAKE, fake);

        const costs = computeDeletionCosts({ ws: wsWith(subsets), byVersion: new Map([['v', groups]]), latestVersion: 'v', workloadReplicas: counter });
        const all = [...groups.values()].flat().map((p) => {
          const copy = structuredClone(p);
          copy.metadata.annotations = { 'controller.kubernetes.io/pod-deletion-cost': String(costs.get(p.metadata.name ?? '')) };
          return copy;
        });
        const order = [...all].sort((x, y) => compareActivePodsWithRanks({ pod: x, rank: 0 }, { pod: y, rank: 0 }, T0));

        // Category of each pod from its cost: 0 surplus (FAKE first, then subsets back to front),
        // 1 normal (back to front), 2 minReplicas-protected (back to front).
        const rank = (p: Pod): [number, number] => {
          const cost = costs.get(p.metadata.name ?? '') ?? Number.NaN;
          const e = subsetOf.get(p.metadata.name ?? '') ?? -1;
          if (e === n) return [0, 0];
          if (cost < 0) return [0, n - e];
          if (cost > 100 * n) return [2, n - 1 - e];
          return [1, n - 1 - e];
        };
        for (let i = 1; i < order.length; i++) {
          const [c1, s1] = rank(order[i - 1] as Pod);
          const [c2, s2] = rank(order[i] as Pod);
          assert.ok(c1 < c2 || (c1 === c2 && s1 <= s2), `out of order at ${i}`);
        }
        // Counts per subset: surplus = len - max (never eating into the protected), protected = min(min, len).
        specs.forEach((s, i) => {
          const costsHere = (groups.get(`s${i}`) ?? []).map((p) => costs.get(p.metadata.name ?? '') ?? Number.NaN);
          const min = subsets[i]?.minReplicas ?? 0;
          const protectedCount = Math.min(min, s.pods);
          const surplus = s.max === undefined ? 0 : Math.min(Math.max(0, s.pods - s.max), s.pods - protectedCount);
          assert.equal(costsHere.filter((c) => c < 0).length, surplus);
          assert.equal(costsHere.filter((c) => c > 100 * n).length, protectedCount);
        });
      }),
    );
  });
});
