import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compareActivePods, compareActivePodsWithRanks, podsToDeleteOnScaleDown, rankPodsForScaleDown, sortActivePods, type RankedPod } from './pod-ranking.ts';
import { isPodReady, podDeletionCost } from './pod.ts';
import { formatTime } from './time.ts';
import type { Pod } from './types.ts';

const T0 = Date.parse('2026-01-01T00:00:00Z');

interface Opts {
  uid?: string | undefined;
  node?: string | undefined;
  phase?: string | undefined;
  ready?: boolean | undefined;
  /** seconds after T0 at which the pod became ready */
  readyAt?: number | undefined;
  restarts?: number | undefined;
  /** seconds after T0 at which the pod was created */
  createdAt?: number | undefined;
  cost?: string | undefined;
}

function mk(o: Opts): Pod {
  const conditions = o.ready
    ? [{ type: 'Ready', status: 'True', ...(o.readyAt !== undefined ? { lastTransitionTime: formatTime(T0 + o.readyAt * 1000) } : {}) }]
    : [{ type: 'Ready', status: 'False' }];
  return {
    metadata: {
      name: o.uid ?? 'p',
      uid: o.uid ?? 'p',
      ...(o.createdAt !== undefined ? { creationTimestamp: formatTime(T0 + o.createdAt * 1000) } : {}),
      ...(o.cost !== undefined ? { annotations: { 'controller.kubernetes.io/pod-deletion-cost': o.cost } } : {}),
    },
    spec: { containers: [{ name: 'c' }], ...(o.node !== undefined ? { nodeName: o.node } : {}) },
    status: {
      ...(o.phase !== undefined ? { phase: o.phase } : {}),
      conditions,
      containerStatuses: [{ name: 'c', ready: !!o.ready, restartCount: o.restarts ?? 0 }],
    },
  };
}

const base: Opts = { node: 'n1', phase: 'Running', ready: true, readyAt: 100, createdAt: 50 };

describe('compareActivePods: one case per rule (first argument is the less valuable)', () => {
  const cases: [string, Opts, Opts][] = [
    ['1. unassigned < assigned', { ...base, node: '' }, base],
    ['2. Pending < Unknown', { ...base, phase: 'Pending', ready: false }, { ...base, phase: 'Unknown', ready: false }],
    ['2. Unknown < Running', { ...base, phase: 'Unknown' }, base],
    ['2. empty phase counts as Pending (< Unknown)', { ...base, phase: undefined, ready: false }, { ...base, phase: 'Unknown', ready: false }],
    ['3. not ready < ready', { ...base, ready: false }, base],
    ['4. both ready: more recently ready is smaller', { ...base, readyAt: 200 }, { ...base, readyAt: 100 }],
    ['4. a missing ready time is smallest', { ...base, readyAt: undefined }, { ...base, readyAt: 900 }],
    ['5. more restarts is smaller', { ...base, restarts: 3 }, { ...base, restarts: 1 }],
    ['6. newer is smaller', { ...base, createdAt: 60 }, base],
    ['6. a missing creation time is smallest', { ...base, createdAt: undefined }, { ...base, createdAt: 900 }],
  ];
  for (const [name, a, b] of cases) {
    test(name, () => {
      assert.equal(compareActivePods(mk(a), mk(b)), -1);
      assert.equal(compareActivePods(mk(b), mk(a)), 1);
    });
  }

  test('earlier rules win over later ones', () => {
    // not ready but old beats ready but new: readiness decides before age
    assert.equal(compareActivePods(mk({ ...base, ready: false, createdAt: 0 }), mk({ ...base, createdAt: 900 })), -1);
    // ready time decides before restarts
    assert.equal(compareActivePods(mk({ ...base, readyAt: 200, restarts: 0 }), mk({ ...base, readyAt: 100, restarts: 9 })), -1);
  });
  test('identical pods compare equal, whatever their UIDs', () => {
    assert.equal(compareActivePods(mk({ ...base, uid: 'a' }), mk({ ...base, uid: 'b' })), 0);
  });
  test('the deletion-cost annotation is ignored by this order', () => {
    assert.equal(compareActivePods(mk({ ...base, cost: '-100' }), mk({ ...base, cost: '100' })), 0);
  });
});

describe('sortActivePods', () => {
  test('the order of a stable sort by compareActivePods, whatever the pods (property)', () => {
    const opts = fc.record({
      node: fc.constantFrom('', 'n1', 'n2'),
      phase: fc.constantFrom(undefined, 'Pending', 'Unknown', 'Running'),
      ready: fc.boolean(),
      readyAt: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
      restarts: fc.integer({ min: 0, max: 2 }),
      createdAt: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(opts, { maxLength: 12 }), (list) => {
        const pods = list.map((o, i) => mk({ ...o, uid: `p${i}` }));
        assert.deepEqual(sortActivePods(pods).map((p) => p.metadata?.uid), [...pods].sort(compareActivePods).map((p) => p.metadata?.uid));
      }),
    );
  });
});

describe('compareActivePodsWithRanks: one case per rule', () => {
  const now = T0 + 10_000 * 1000;
  const r = (o: Opts, rank = 0): RankedPod => ({ pod: mk(o), rank });
  const cases: [string, RankedPod, RankedPod][] = [
    ['1. unassigned < assigned', r({ ...base, node: '' }), r(base)],
    ['2. Pending < Running', r({ ...base, phase: 'Pending', ready: false }), r({ ...base, ready: false })],
    ['3. not ready < ready', r({ ...base, ready: false, cost: '1000' }), r(base)],
    ['4. lower deletion cost first', r({ ...base, cost: '-100', readyAt: 0 }), r({ ...base, cost: '100', readyAt: 9000 })],
    ['4. an invalid cost counts as 0', r({ ...base, cost: '+5' }), r({ ...base, cost: '1' })],
    ['5. higher rank first', r(base, 3), r(base, 1)],
    ['6. ready for a shorter time first (different buckets)', r({ ...base, readyAt: 9990, uid: 'z' }), r({ ...base, readyAt: 100, uid: 'a' })],
    ['6. zero ready time first', r({ ...base, readyAt: undefined, uid: 'z' }), r({ ...base, readyAt: 9999, uid: 'a' })],
    ['6. same bucket: lower UID first', r({ ...base, readyAt: 100, uid: 'a' }), r({ ...base, readyAt: 101, uid: 'b' })],
    ['7. more restarts first', r({ ...base, restarts: 2 }), r({ ...base, restarts: 1 })],
    ['8. newer first (different buckets)', r({ ...base, createdAt: 9000, uid: 'z' }), r({ ...base, createdAt: 10, uid: 'a' })],
    ['8. same bucket: lower UID first', r({ ...base, createdAt: 10, uid: 'a' }), r({ ...base, createdAt: 11, uid: 'b' })],
    ['8. missing creation time first', r({ ...base, createdAt: undefined, uid: 'z' }), r({ ...base, createdAt: 10, uid: 'a' })],
  ];
  for (const [name, a, b] of cases) {
    test(name, () => {
      assert.equal(compareActivePodsWithRanks(a, b, now), -1);
      assert.equal(compareActivePodsWithRanks(b, a, now), 1);
    });
  }

  test('the logarithmic bucket boundary is floor(log2(nanoseconds))', () => {
    // 2^36 ns = 68.719476736 s. Two pods ready one second apart:
    const young = r({ ...base, readyAt: 1, uid: 'z' });
    const old = r({ ...base, readyAt: 0, uid: 'a' });
    // 67.719 s and 68.719 s ago: both below 2^36 ns → same bucket → lower UID first
    assert.equal(compareActivePodsWithRanks(old, young, T0 + 68_719), -1);
    // 67.720 s and 68.720 s ago: the older crosses into the next bucket → the younger goes first
    assert.equal(compareActivePodsWithRanks(young, old, T0 + 68_720), -1);
  });

  test('equal pods with equal UIDs compare equal; equal times never reach the UID', () => {
    assert.equal(compareActivePodsWithRanks(r({ ...base, uid: 'x' }), r({ ...base, uid: 'x' }), now), 0);
    assert.equal(compareActivePodsWithRanks(r({ ...base, uid: 'a' }), r({ ...base, uid: 'b' }), now), 0);
  });
});

describe('scale-down selection', () => {
  test('spec §4.5 worked example: costs 300/−100, 200/−200, 100 → scale down by 30 removes b⁻, a⁻, then c', () => {
    const pods: Pod[] = [];
    const add = (subset: string, n: number, cost: number) => {
      for (let i = 0; i < n; i++) pods.push(mk({ ...base, uid: `${subset}-${cost}-${String(i).padStart(2, '0')}`, cost: String(cost) }));
    };
    add('a', 10, 300);
    add('a', 10, -100);
    add('b', 10, 200);
    add('b', 10, -200);
    add('c', 20, 100);
    const now = T0 + 3600_000;
    const victims = podsToDeleteOnScaleDown(pods, pods, 30, now);
    const costs = victims.map((p) => podDeletionCost(p));
    assert.deepEqual(costs, [...Array(10).fill(-200), ...Array(10).fill(-100), ...Array(10).fill(100)]);
    // 10/10/10 pods with costs 300/200/100: deletion goes c → b → a
    const even = [...pods.filter((p) => [300, 200, 100].includes(podDeletionCost(p)))].slice(0, 30);
    const order = rankPodsForScaleDown(even, even, now).map((p) => podDeletionCost(p));
    assert.deepEqual(order, [...Array(10).fill(100), ...Array(10).fill(200), ...Array(10).fill(300)]);
  });

  test('rank counts active related pods on the same node', () => {
    const crowded = mk({ ...base, uid: 'crowded', node: 'n1' });
    const alone = mk({ ...base, uid: 'alone', node: 'n2' });
    const sibling = mk({ ...base, uid: 'sibling', node: 'n1' });
    const deadSibling = { ...mk({ ...base, uid: 'dead', node: 'n2' }), status: { phase: 'Failed' } };
    const related = [crowded, alone, sibling, deadSibling, mk({ ...base, uid: 's2', node: 'n2', phase: 'Succeeded' })];
    assert.deepEqual(
      rankPodsForScaleDown([alone, crowded], related, T0).map((p) => p.metadata.uid),
      ['crowded', 'alone'],
    );
  });

  test('diff bounds: nothing for diff ≤ 0, everything (unsorted) when diff covers all pods', () => {
    const pods = [mk({ ...base, uid: 'b' }), mk({ ...base, uid: 'a', node: '' })];
    assert.deepEqual(podsToDeleteOnScaleDown(pods, pods, 0, T0), []);
    assert.deepEqual(podsToDeleteOnScaleDown(pods, pods, -1, T0), []);
    assert.deepEqual(podsToDeleteOnScaleDown(pods, pods, 5, T0), pods);
    assert.deepEqual(podsToDeleteOnScaleDown(pods, pods, 1, T0).map((p) => p.metadata.uid), ['a']);
  });
});

describe('order properties', () => {
  const opts: fc.Arbitrary<Opts> = fc.record({
    uid: fc.constantFrom('a', 'b', 'c', 'd'),
    node: fc.constantFrom('', 'n1', 'n2'),
    phase: fc.constantFrom(undefined, 'Pending', 'Running', 'Unknown'),
    ready: fc.boolean(),
    readyAt: fc.option(fc.integer({ min: 0, max: 5000 }), { nil: undefined }),
    restarts: fc.integer({ min: 0, max: 3 }),
    createdAt: fc.option(fc.integer({ min: 0, max: 5000 }), { nil: undefined }),
    cost: fc.option(fc.constantFrom('-100', '0', '100', 'junk'), { nil: undefined }),
  });
  const now = T0 + 6000 * 1000;

  test('compareActivePods is antisymmetric and transitive (a total preorder)', () => {
    fc.assert(
      fc.property(opts, opts, opts, (x, y, z) => {
        const [a, b, c] = [mk(x), mk(y), mk(z)];
        assert.equal(Math.sign(compareActivePods(a, b)), -Math.sign(compareActivePods(b, a)) || 0, 'antisymmetric (-0 read as 0)');
        assert.equal(compareActivePods(a, a), 0);
        if (compareActivePods(a, b) <= 0 && compareActivePods(b, c) <= 0) assert.ok(compareActivePods(a, c) <= 0);
      }),
    );
  });

  test('compareActivePodsWithRanks is antisymmetric', () => {
    fc.assert(
      fc.property(opts, opts, fc.nat(3), fc.nat(3), (x, y, rx, ry) => {
        const a = { pod: mk(x), rank: rx };
        const b = { pod: mk(y), rank: ry };
        assert.equal(Math.sign(compareActivePodsWithRanks(a, b, now)), -Math.sign(compareActivePodsWithRanks(b, a, now)) || 0, 'antisymmetric (-0 read as 0)');
        assert.equal(compareActivePodsWithRanks(a, a, now), 0);
      }),
    );
  });

  test('scale-down order always respects rules 1–5 (placement, phase, readiness, cost, rank)', () => {
    fc.assert(
      fc.property(fc.array(opts, { maxLength: 12 }), (list) => {
        const pods = list.map(mk);
        const ranked = rankPodsForScaleDown(pods, pods, now);
        const onNode = (p: Pod) => pods.filter((q) => q.spec.nodeName === p.spec.nodeName || (!q.spec.nodeName && !p.spec.nodeName)).length;
        const key = (p: Pod): number[] => [
          p.spec.nodeName ? 1 : 0,
          p.status?.phase === 'Running' ? 2 : p.status?.phase === 'Unknown' ? 1 : 0,
          isPodReady(p) ? 1 : 0,
          podDeletionCost(p),
          -onNode(p),
        ];
        for (let i = 1; i < ranked.length; i++) {
          const prev = key(ranked[i - 1] as Pod);
          const cur = key(ranked[i] as Pod);
          const firstDiff = prev.findIndex((v, j) => v !== cur[j]);
          if (firstDiff >= 0) assert.ok((prev[firstDiff] as number) < (cur[firstDiff] as number), `${prev} before ${cur}`);
        }
      }),
    );
  });
});
