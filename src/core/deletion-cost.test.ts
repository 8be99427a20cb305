import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Subset, WorkloadSpread } from '../api/workloadspread.ts';
import { compareActivePodsWithRanks } from '../k8s/pod-ranking.ts';
import { formatTime } from '../k8s/time.ts';
import type { Pod } from '../k8s/types.ts';
import { balancedCost, birthCost, computeDeletionCosts, costsByPlace, deletionCostPatches, planDeletionCosts, writesDeletionCost } from './deletion-cost.ts';
import { CREATE_POD_TIMEOUT_MS } from '../api/keys.ts';

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
const MAX = 2147483647;

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

  test('a percent limit on an older version resolves against the total workload replicas, rounding up (reference costs)', () => {
    const pods = podsFor('a', 4);
    const byVersion = new Map([['old', new Map([['a', pods]])]]);
    // 30% of 10 → 3: one surplus; older versions keep the reference's costs, mirrored (e = 1).
    const costs = computeDeletionCosts({ ws: wsWith([{ name: 'a', maxReplicas: '30%' }, { name: 'b' }]), byVersion, latestVersion: 'v', workloadReplicas: 10 });
    assert.deepEqual(costsOf(costs, pods), [100, 100, 100, -200]);
  });

  test('D17: a percent limit on the latest version ranks its pods by share; the one beyond 30% of 10 comes last', () => {
    const pods = podsFor('a', 4);
    const byVersion = new Map([['v', new Map([['a', pods]])]]);
    const costs = computeDeletionCosts({ ws: wsWith([{ name: 'a', maxReplicas: '30%' }, { name: 'b' }]), byVersion, latestVersion: 'v', workloadReplicas: 10 });
    // Ranks 0, 3.33, 6.67, 10 → R = 0, 333, 666, 1000; key R·2 + 0; TOP = 2^31-1-2.
    assert.deepEqual(costsOf(costs, pods), [MAX - 2, MAX - 2 - 666, MAX - 2 - 1332, MAX - 2 - 2000]);
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
    const byVersion = new Map([['old', new Map([['a', a]])]]);
    // 10% of 5 → 1, minReplicas 2: 2 protected, the remaining one is surplus.
    const costs = computeDeletionCosts({ ws: wsWith([{ name: 'a', maxReplicas: '10%', minReplicas: 2 }]), byVersion, latestVersion: 'v', workloadReplicas: 5 });
    assert.deepEqual(costsOf(costs, a), [200, 200, -100]);
  });

  test('D17 + D2: the minReplicas most valuable pods of a balanced subset get 2^31-1-i, above every balanced cost', () => {
    const a = podsFor('a', 3);
    const byVersion = new Map([['v', new Map([['a', a]])]]);
    const costs = computeDeletionCosts({ ws: wsWith([{ name: 'a', maxReplicas: '10%', minReplicas: 2 }]), byVersion, latestVersion: 'v', workloadReplicas: 5 });
    // j = 3: rank 20 → R 2000, TOP = 2^31-1-1.
    assert.deepEqual(costsOf(costs, a), [MAX, MAX, MAX - 1 - 2000]);
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

describe('D17: balanced costs (a percentage limit)', () => {
  /** Pods of each subset (oldest first), their costs, and which subsets a ReplicaSet keeps at each size. */
  function balanced(limits: (number | string | undefined)[], counts: number[], replicas = counts.reduce((a, b) => a + b, 0), mins: number[] = []) {
    const subsets: Subset[] = limits.map((m, i) => ({ name: `s${i}`, ...(m === undefined ? {} : { maxReplicas: m }), ...((mins[i] ?? 0) > 0 ? { minReplicas: mins[i] } : {}) }));
    let seq = 0;
    const groups = new Map(subsets.map((s, i) => [s.name, Array.from({ length: counts[i] ?? 0 }, () => running(`${s.name}-${seq}`, seq++))]));
    const costs = computeDeletionCosts({ ws: wsWith(subsets), byVersion: new Map([['v', groups]]), latestVersion: 'v', workloadReplicas: replicas });
    const all = [...groups.values()].flat().map((p) => {
      const copy = structuredClone(p);
      copy.metadata.annotations = { 'controller.kubernetes.io/pod-deletion-cost': String(costs.get(p.metadata.name ?? '')) };
      return copy;
    });
    // The upstream scale-down order (least valuable first), as the ReplicaSet controller ranks them.
    const order = [...all].sort((x, y) => compareActivePodsWithRanks({ pod: x, rank: 0 }, { pod: y, rank: 0 }, T0));
    const keptAt = (n: number): number[] => {
      const kept = order.slice(order.length - n);
      return subsets.map((s) => kept.filter((p) => p.metadata.name?.startsWith(`${s.name}-`)).length);
    };
    return { groups, costs, keptAt };
  }

  test('the worked example, 20/20/60 % at 10 replicas: scaled to 5 → 1/1/3, to 4 → 1/1/2, to 8 → 2/2/4', () => {
    const { keptAt, costs, groups } = balanced(['20%', '20%', '60%'], [2, 2, 6]);
    const top = MAX - 3;
    assert.deepEqual(costsOf(costs, groups.get('s0') ?? []), [top, top - 1500]);
    assert.deepEqual(costsOf(costs, groups.get('s1') ?? []), [top - 1, top - 1501]);
    assert.deepEqual(costsOf(costs, groups.get('s2') ?? []), [top - 2, top - 500, top - 1001, top - 1502, top - 2000, top - 2501]);
    assert.deepEqual(keptAt(5), [1, 1, 3]);
    assert.deepEqual(keptAt(4), [1, 1, 2]);
    assert.deepEqual(keptAt(2), [1, 1, 0]);
    assert.deepEqual(keptAt(8), [2, 2, 4]);
  });

  test('the issue figures: 1:1:3 from 15 and from 20; 34/33/33 % of 10 → 4 stays within its caps', () => {
    assert.deepEqual(balanced(['20%', '20%', '60%'], [3, 3, 9]).keptAt(5), [1, 1, 3]);
    const from20 = balanced(['20%', '20%', '60%'], [4, 4, 12]).keptAt(4);
    assert.ok(from20[0]! <= 1 && from20[1]! <= 1 && from20[2]! <= 3, JSON.stringify(from20));
    const kept = balanced(['34%', '33%', '33%'], [4, 4, 2]).keptAt(4);
    assert.ok(kept.every((k) => k <= 2), JSON.stringify(kept));
  });

  test('an unset subset (the rest): 30/30/rest at 10 → 4 keeps 2/1/1, within 2/2 at every size', () => {
    const { keptAt, costs, groups } = balanced(['30%', '30%', undefined], [3, 3, 4]);
    // The rest's pods are needed from sizes 3, 6, 9, 10: ranks 2, 5, 8, 9 → R·3 + 2.
    const top = MAX - 3;
    assert.deepEqual(costsOf(costs, groups.get('s2') ?? []), [top - 602, top - 1502, top - 2402, top - 2702]);
    assert.deepEqual(keptAt(4), [2, 1, 1]);
    for (let n = 1; n <= 10; n++) {
      const k = keptAt(n);
      assert.ok(k[0]! <= Math.ceil(0.3 * n) && k[1]! <= Math.ceil(0.3 * n), `n=${n}: ${JSON.stringify(k)}`);
    }
  });

  test('an elastic overflow after 100 % is kept only while the limited subsets cannot hold the count: removed first', () => {
    const { keptAt } = balanced(['50%', '50%', undefined], [5, 5, 3]);
    assert.deepEqual(keptAt(12), [5, 5, 2]);
    assert.deepEqual(keptAt(10), [5, 5, 0]);
    assert.deepEqual(keptAt(6), [3, 3, 0]);
  });

  test('a limited subset short of pods: the unset pods stand in for it on the way down (within the limits at every size)', () => {
    // zone-a could not schedule: 2 pods; zone-b 5; the elastic pool took 6.
    const { keptAt } = balanced(['50%', '50%', undefined], [2, 5, 6]);
    for (let n = 1; n <= 13; n++) {
      const [a, b] = keptAt(n);
      assert.ok(a! <= Math.ceil(n / 2) && b! <= Math.ceil(n / 2), `n=${n}: ${JSON.stringify(keptAt(n))}`);
    }
  });

  test('a "0%" subset is below every balanced cost, back first', () => {
    const { costs, groups } = balanced(['0%', '100%'], [2, 2]);
    assert.deepEqual(costsOf(costs, groups.get('s0') ?? []), [2, 2]);
  });

  test('integer-only specs keep the reference values (compatibility)', () => {
    const { costs, groups } = balanced([10, 10, undefined], [20, 20, 20]);
    assert.deepEqual(costsOf(costs, groups.get('s0') ?? []), [...repeat(300, 10), ...repeat(-100, 10)]);
    assert.deepEqual(costsOf(costs, groups.get('s2') ?? []), repeat(100, 20));
  });

  test('a scale-out re-costs no existing pod: new pods rank last in their subset', () => {
    const before = balanced(['20%', '20%', '60%'], [2, 2, 6]);
    const after = balanced(['20%', '20%', '60%'], [10, 10, 30]);
    // Same names for the first pods of each subset? Names differ by sequence; compare by position within the subset.
    for (const s of ['s0', 's1', 's2']) {
      const was = costsOf(before.costs, before.groups.get(s) ?? []);
      const now = costsOf(after.costs, after.groups.get(s) ?? []).slice(0, was.length);
      assert.deepEqual(now, was, s);
    }
  });

  test('costs stay int32; a rank too deep for the range is clamped to S+1', () => {
    const { costs } = balanced(['1%', '99%'], [2_000, 1], 200_000);
    assert.ok([...costs.values()].every((c) => Number.isInteger(c) && c >= -(2 ** 31) && c <= MAX));
    // The 300,000th pod of a 1 % subset of 10: rank 2.99·10^7 % → key 3·10^10, past the range.
    assert.equal(balancedCost({ num: 1, den: 1 }, 300_000, 0, 10), 11);
    assert.equal(balancedCost({ num: 1, den: 1 }, 20_000, 9, 10), MAX - 10 - (10_000 * 19_999 * 10 + 9));
  });
});

describe('D21: balanced places stick to the pods that hold them', () => {
  const subsets: Subset[] = [{ name: 'a', maxReplicas: '50%' }, { name: 'b', maxReplicas: '50%' }];
  const ws = wsWith(subsets);
  const annotate = (pods: Pod[], costs: Map<string, number>): Pod[] =>
    pods.map((p) => ({ ...p, metadata: { ...p.metadata, annotations: { 'controller.kubernetes.io/pod-deletion-cost': String(costs.get(p.metadata.name ?? '')) } } }));

  test('a pod that falls behind in value (not ready any more) keeps its place: nothing to re-cost', () => {
    const a = podsFor('a', 3);
    const first = computeDeletionCosts({ ws, byVersion: new Map([['v', new Map([['a', a]])]]), latestVersion: 'v', workloadReplicas: 6 });
    const held = annotate(a, first);
    held[0]!.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] };
    const again = computeDeletionCosts({ ws, byVersion: new Map([['v', new Map([['a', held]])]]), latestVersion: 'v', workloadReplicas: 6 });
    assert.deepEqual(deletionCostPatches(held, again), []);
    assert.deepEqual([...again.entries()].sort(), [...first.entries()].sort());
  });

  test('a pod without a valid place takes the best free one; duplicates are resolved in value order', () => {
    const a = podsFor('a', 3);
    const first = computeDeletionCosts({ ws, byVersion: new Map([['v', new Map([['a', a]])]]), latestVersion: 'v', workloadReplicas: 6 });
    const held = annotate(a, first);
    // The oldest two claim the same place (a duplicate); the third has none.
    held[1]!.metadata.annotations = { ...held[0]!.metadata.annotations };
    delete held[2]!.metadata.annotations;
    const again = computeDeletionCosts({ ws, byVersion: new Map([['v', new Map([['a', held]])]]), latestVersion: 'v', workloadReplicas: 6 });
    assert.deepEqual([...again.values()].sort(), [...first.values()].sort(), 'every place is held once');
    assert.equal(again.get(held[0]!.metadata.name ?? ''), first.get(a[0]!.metadata.name ?? ''), 'the most valuable keeps its place');
  });

  test('integer specs are ranked afresh, as the reference ranks them', () => {
    const a = podsFor('a', 3);
    const spec = wsWith([{ name: 'a', maxReplicas: 2 }, { name: 'b' }]);
    const first = computeDeletionCosts({ ws: spec, byVersion: new Map([['v', new Map([['a', a]])]]), latestVersion: 'v', workloadReplicas: 3 });
    assert.deepEqual(costsOf(first, a), [200, 200, -100]);
    const held = annotate(a, first);
    held[0]!.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] };
    const again = computeDeletionCosts({ ws: spec, byVersion: new Map([['v', new Map([['a', held]])]]), latestVersion: 'v', workloadReplicas: 3 });
    assert.deepEqual(costsOf(again, held), [-100, 200, 200], 'the not-ready pod is the surplus now');
  });
});

describe('D21: a place outside this sync\'s table is held while the workload moves', () => {
  // 30 % / 30 % / rest, 10 replicas: a's places 1..3, b's 1..3, c's 1..4.
  const ws = wsWith([{ name: 'a', maxReplicas: '30%' }, { name: 'b', maxReplicas: '30%' }, { name: 'c' }]);
  const withCost = (pod: Pod, cost: number): Pod => ({ ...pod, metadata: { ...pod.metadata, annotations: { 'controller.kubernetes.io/pod-deletion-cost': String(cost) } } });
  const costOf = (pod: Pod | undefined): number => Number(pod?.metadata.annotations?.['controller.kubernetes.io/pod-deletion-cost']);
  /** Every pod of a full 3/3/4 spread with the cost it was born with. */
  function full(): Map<string, Pod[]> {
    const groups = new Map([['a', podsFor('a', 3)], ['b', podsFor('b', 3)], ['c', podsFor('c', 4)]]);
    const costs = computeDeletionCosts({ ws, byVersion: new Map([['v', groups]]), latestVersion: 'v', workloadReplicas: 10 });
    return new Map([...groups].map(([k, pods]) => [k, pods.map((p) => withCost(p, costs.get(p.metadata.name ?? '') ?? Number.NaN))]));
  }
  /** The spread with the named pods not (yet, or any more) visible. */
  function without(names: string[]): Map<string, Pod[]> {
    return new Map([...full()].map(([k, pods]) => [k, pods.filter((p) => !names.includes(p.metadata.name ?? ''))]));
  }
  const plan = (groups: Map<string, Pod[]>, workloadReplicas: number, now: number) =>
    planDeletionCosts({ ws, byVersion: new Map([['v', groups]]), latestVersion: 'v', workloadReplicas, now });
  const patchesOf = (groups: Map<string, Pod[]>, costs: Map<string, number>) => deletionCostPatches([...groups.values()].flat(), costs);
  // podsFor creates pod i at T0 + i s.
  const young = T0 + 5_000;
  const old = T0 + 5_000 + CREATE_POD_TIMEOUT_MS;

  test('scale-out: young pods whose earlier siblings are not visible yet keep their places; no write until they age', () => {
    // a-1 (a's place 2) and c-2 (c's place 3) were admitted before a-2 and c-3 but are not created yet;
    // a-2 and c-3 hold places beyond the visible pods, and c's places (which depend on a's count) shifted.
    const groups = without(['a-1', 'c-2']);
    const p = plan(groups, 10, young);
    assert.deepEqual(patchesOf(groups, p.costs), []);
    const recheck = p.recheckAfterMs ?? Number.NaN;
    assert.ok(recheck > 0 && recheck <= CREATE_POD_TIMEOUT_MS, `recheck after ${recheck} ms`);
    assert.deepEqual(patchesOf(groups, plan(groups, 10, young + recheck - 1).costs), [], 'still held just before the recheck');
    assert.notDeepEqual(patchesOf(groups, plan(groups, 10, old).costs), [], 'moved once the window has passed');
    // They arrive with their own places: nothing to write.
    const all = full();
    const settled = plan(all, 10, young);
    assert.deepEqual(patchesOf(all, settled.costs), []);
    assert.equal(settled.recheckAfterMs, undefined);
  });

  test('a gap that outlives the creation window is filled: the pod beyond moves into it', () => {
    const groups = without(['c-2']);
    const p = plan(groups, 9, old);
    assert.deepEqual(patchesOf(groups, p.costs), [{ pod: 'c-3', cost: costOf(full().get('c')?.[2]) }]);
    assert.equal(p.recheckAfterMs, undefined);
  });

  test('scale-in: while more pods are active than the replicas, old pods keep their places', () => {
    // Scaling 10 → 4: the workload controller has removed a-1 and c-2 so far; a-2 and c-3 go next.
    const groups = without(['a-1', 'c-2']);
    assert.deepEqual(patchesOf(groups, plan(groups, 4, old).costs), []);
    // Settled at 8 with the gaps (the pods beyond were not removed): they are filled.
    const moved = patchesOf(groups, plan(groups, 8, old).costs).map((x) => x.pod);
    assert.ok(moved.includes('a-2') && moved.includes('c-3'), moved.join(' '));
  });

  test('terminating pods do not count as active: a settled scale-in fills its gaps', () => {
    const groups = full();
    const c = groups.get('c') ?? [];
    groups.set('c', c.map((pod, i) => (i === 1 ? { ...pod, metadata: { ...pod.metadata, deletionTimestamp: formatTime(old) } } : pod)));
    assert.deepEqual(patchesOf(groups, plan(groups, 9, old).costs).map((x) => x.pod), ['c-3']);
  });

  test('only a place of the pod\'s own subset is held, and by one pod', () => {
    const groups = without(['a-1', 'a-2']);
    const aPlaceSeven = balancedCost({ num: 30, den: 1 }, 7, 0, 3);
    const extra = [
      withCost(running('a-x', 6), costOf(groups.get('b')?.[1])), // b's place 2
      withCost(running('a-y', 7), aPlaceSeven),
      withCost(running('a-z', 8), aPlaceSeven), // the same place again
      withCost(running('a-w', 9), 12_345), // no place of any subset
    ];
    groups.set('a', [...(groups.get('a') ?? []), ...extra]);
    const p = plan(groups, 12, T0 + 10_000); // 12 active pods: no scale-in; the extras are young
    assert.deepEqual(patchesOf(groups, p.costs).map((x) => x.pod).sort(), ['a-w', 'a-x', 'a-z'], 'a-y keeps place 7; the others take free places');
    assert.equal(p.costs.get('a-y'), aPlaceSeven);
  });

  test('without `now` every such pod is moved at once (tables, the reference\'s one-shot view)', () => {
    const groups = without(['c-2']);
    const p = planDeletionCosts({ ws, byVersion: new Map([['v', groups]]), latestVersion: 'v', workloadReplicas: 10 });
    assert.deepEqual(patchesOf(groups, p.costs).map((x) => x.pod), ['c-3']);
  });
});

describe('birthCost computes one place of costsByPlace', () => {
  const limitArb = fc.oneof(
    fc.constant(undefined),
    fc.integer({ min: 0, max: 40 }),
    fc.integer({ min: 0, max: 100 }).map((p) => `${p}%`),
    fc.constant('bad'),
  );
  const subsetsArb = fc.array(fc.record({ limit: limitArb, min: fc.integer({ min: 0, max: 4 }) }), { minLength: 1, maxLength: 6 }).map((xs) =>
    xs.map(({ limit, min }, i): Subset => ({ name: `s${i}`, ...(limit !== undefined ? { maxReplicas: limit } : {}), ...(min > 0 ? { minReplicas: min } : {}) })),
  );

  test('two unset subsets share the needed places: the one with more places left first, the front one on a tie', () => {
    // a 50 % beside two unset subsets, 2/2/2 pods: a holds 1, 1, 2, 2, 2, 2 places at sizes 1..6, so an unset
    // place is needed from sizes 2, 4, 5 and 6; ties at sizes 2 and 5 go to the front subset (u1).
    const ws = { spec: { subsets: [{ name: 'a', maxReplicas: '50%' }, { name: 'u1' }, { name: 'u2' }] } } as Pick<WorkloadSpread, 'spec'>;
    const top = 2 ** 31 - 1 - 3;
    const rank = (n: number, i: number) => top - (100 * (n - 1) * 3 + i);
    const table = costsByPlace(ws, [2, 2, 2], 6, true);
    assert.deepEqual(table[1], [rank(2, 1), rank(5, 1)]);
    assert.deepEqual(table[2], [rank(4, 2), rank(6, 2)]);
    assert.equal(birthCost(ws, 'u1', [2, 2, 2], 6, true), rank(5, 1));
    assert.equal(birthCost(ws, 'u2', [2, 2, 2], 6, true), rank(6, 2));
  });

  test('every subset, any counts, replicas and version (also limits validation refuses: mixed, unparseable, several unset)', () => {
    fc.assert(
      fc.property(subsetsArb, fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 6, maxLength: 6 }), fc.integer({ min: 0, max: 120 }), fc.boolean(), (subsets, rawCounts, replicas, latest) => {
        const ws = { spec: { subsets } } as Pick<WorkloadSpread, 'spec'>;
        const counts = subsets.map((_, i) => rawCounts[i] ?? 0);
        const table = costsByPlace(ws, counts, replicas, latest);
        subsets.forEach((s, i) => {
          const count = counts[i] ?? 0;
          const expected = count < 1 ? undefined : table[i]?.[count - 1];
          assert.equal(birthCost(ws, s.name, counts, replicas, latest), expected, `subset ${s.name}, counts ${counts.join('/')}`);
        });
      }),
      { numRuns: 3000 },
    );
  });
});
