/**
 * The CloneSet scale-in order (kruise utils/pod_sorter.go): one case per
 * rule, the losing pod better on every later rule so each case proves
 * precedence; where it differs from the ReplicaSet's order; the same-node
 * ranker; and properties: the comparator is a total preorder, and the pods
 * chosen for a scale-in never rank after a pod kept on rules 1–5.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { cloneSetPodsToDelete, compareCloneSetPods, isCloneSetPodAvailable, isCloneSetPodUpdateReady, rankCloneSetPods, sameNodeRanks } from './cloneset-pod-ranking.ts';
import { compareActivePodsWithRanks } from './pod-ranking.ts';
import { isPodReady, podDeletionCost } from './pod.ts';
import { formatTime } from './time.ts';
import type { Pod } from './types.ts';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const NOW = T0 + 10_000 * 1000;

interface Opts {
  name?: string;
  node?: string;
  phase?: string | undefined;
  ready?: boolean;
  /** seconds after T0 at which the pod became ready */
  readyAt?: number | undefined;
  restarts?: number;
  createdAt?: number | undefined;
  cost?: string | undefined;
  lifecycle?: string;
  inPlaceReady?: 'True' | 'False';
}

function mk(o: Opts): Pod {
  const conditions: Record<string, unknown>[] = o.ready === false ? [{ type: 'Ready', status: 'False' }] : [{ type: 'Ready', status: 'True', ...(o.readyAt === undefined ? {} : { lastTransitionTime: formatTime(T0 + o.readyAt * 1000) }) }];
  if (o.inPlaceReady !== undefined) conditions.push({ type: 'InPlaceUpdateReady', status: o.inPlaceReady });
  return {
    metadata: {
      name: o.name ?? 'p',
      uid: o.name ?? 'p',
      ...(o.createdAt === undefined ? {} : { creationTimestamp: formatTime(T0 + o.createdAt * 1000) }),
      ...(o.cost === undefined ? {} : { annotations: { 'controller.kubernetes.io/pod-deletion-cost': o.cost } }),
      ...(o.lifecycle === undefined ? {} : { labels: { 'lifecycle.apps.kruise.io/state': o.lifecycle } }),
    },
    spec: { containers: [{ name: 'c' }], ...(o.node === '' ? {} : { nodeName: o.node ?? 'n1' }) },
    status: { ...(o.phase === undefined ? {} : { phase: o.phase }), conditions, containerStatuses: [{ name: 'c', ready: o.ready !== false, restartCount: o.restarts ?? 0 }] },
  } as unknown as Pod;
}

const base: Opts = { phase: 'Running', readyAt: 100, createdAt: 50 };
const NO_RANKS = new Map<Pod, number>();
const availableAfter = (minReadySeconds: number) => (p: Pod) => isCloneSetPodAvailable(p, minReadySeconds, NOW);

describe('compareCloneSetPods: one case per rule (first argument goes first)', () => {
  const cases: [string, Opts, Opts, ((p: Pod) => boolean)?][] = [
    ['1. unassigned < assigned', { ...base, node: '', cost: '1000' }, base],
    ['2. Pending < Unknown', { ...base, phase: 'Pending', ready: false }, { ...base, phase: 'Unknown', ready: false }],
    ['2. Unknown < Running', { ...base, phase: 'Unknown', cost: '1000' }, base],
    ['3. not available < available (minReadySeconds), before the deletion cost', { ...base, readyAt: 9_990, cost: '1000' }, { ...base, readyAt: 100 }, availableAfter(60)],
    ['3. a lifecycle state other than Normal is not available', { ...base, lifecycle: 'PreparingDelete', cost: '1000' }, { ...base, lifecycle: 'Normal' }, availableAfter(0)],
    ['3. not ready < ready', { ...base, ready: false, cost: '1000' }, base],
    ['4. lower deletion cost first', { ...base, cost: '-100', readyAt: 0, restarts: 0 }, { ...base, cost: '100', readyAt: 9000, restarts: 5 }],
    ['4. an invalid cost counts as 0', { ...base, cost: '+5' }, { ...base, cost: '1' }],
    ['6. ready more recently first (exact times, no buckets)', { ...base, readyAt: 101 }, { ...base, readyAt: 100 }],
    ['6. a missing ready time first', { ...base, readyAt: undefined }, { ...base, readyAt: 9999 }],
    ['7. more restarts first', { ...base, restarts: 2 }, { ...base, restarts: 1, createdAt: 0 }],
    ['8. newer first (exact times)', { ...base, createdAt: 51 }, base],
    ['8. a missing creation time first', { ...base, createdAt: undefined }, base],
  ];
  for (const [name, a, b, available] of cases) {
    test(name, () => {
      const [pa, pb] = [mk(a), mk(b)];
      assert.equal(compareCloneSetPods(pa, pb, NO_RANKS, available), -1);
      assert.equal(compareCloneSetPods(pb, pa, NO_RANKS, available), 1);
    });
  }

  test('5. higher same-node rank first, after the cost', () => {
    const [a, b, c] = [mk({ ...base, name: 'a' }), mk({ ...base, name: 'b' }), mk({ ...base, name: 'c', cost: '-1' })];
    const ranks = new Map([[a, 2], [b, 1], [c, 5]]);
    assert.equal(compareCloneSetPods(a, b, ranks), -1);
    assert.equal(compareCloneSetPods(c, a, new Map([[a, 9]])), -1, 'the cost decides before the rank');
  });

  test('differs from the ReplicaSet order: a lower cost does not save a pod that is not yet available', () => {
    const young = mk({ ...base, name: 'young', readyAt: 9_990, cost: '500' });
    const old = mk({ ...base, name: 'old', readyAt: 100, cost: '100' });
    assert.equal(compareActivePodsWithRanks({ pod: old, rank: 0 }, { pod: young, rank: 0 }, NOW), -1, 'ReplicaSet: the cost decides');
    assert.deepEqual(rankCloneSetPods([old, young], 60, NOW).map((p) => p.metadata.name), ['young', 'old'], 'CloneSet with minReadySeconds 60: availability decides');
    assert.deepEqual(rankCloneSetPods([old, young], 0, NOW).map((p) => p.metadata.name), ['old', 'young'], 'without minReadySeconds both are available: the cost decides');
  });
});

describe('sameNodeRanks', () => {
  test('on a node with n pods the most valuable gets 0, the others n−1 … 1; pods alone or unassigned get none', () => {
    const n1 = [mk({ ...base, name: 'old', createdAt: 10 }), mk({ ...base, name: 'mid', createdAt: 20 }), mk({ ...base, name: 'new', createdAt: 30 })];
    const alone = mk({ ...base, name: 'alone', node: 'n2' });
    const pending = [mk({ ...base, name: 'u1', node: '', ready: false, phase: 'Pending' }), mk({ ...base, name: 'u2', node: '', ready: false, phase: 'Pending' })];
    const ranks = sameNodeRanks([...n1, alone, ...pending]);
    assert.deepEqual(
      [...ranks].map(([p, r]) => [p.metadata.name, r]).sort(),
      [['mid', 1], ['new', 2]],
    );
  });

  test('scale-in prefers the crowded node at equal cost', () => {
    const crowded = [mk({ ...base, name: 'c1', node: 'n1' }), mk({ ...base, name: 'c2', node: 'n1' })];
    const alone = mk({ ...base, name: 'a1', node: 'n2', createdAt: 60 });
    assert.deepEqual(cloneSetPodsToDelete([alone, ...crowded], 1, 0, NOW).map((p) => p.metadata.name), ['c1']);
  });
});

describe('availability', () => {
  test('running, ready for longer than minReadySeconds, in-place condition not False; lifecycle only for availability', () => {
    assert.equal(isCloneSetPodUpdateReady(mk(base), 0, NOW), true);
    assert.equal(isCloneSetPodUpdateReady(mk({ ...base, phase: 'Pending' }), 0, NOW), false);
    assert.equal(isCloneSetPodUpdateReady(mk({ ...base, readyAt: 9_940 }), 60, NOW), false, 'exactly 60 s is not longer than 60 s');
    assert.equal(isCloneSetPodUpdateReady(mk({ ...base, readyAt: 9_939 }), 60, NOW), true);
    assert.equal(isCloneSetPodUpdateReady(mk({ ...base, inPlaceReady: 'False' }), 0, NOW), false);
    assert.equal(isCloneSetPodUpdateReady(mk({ ...base, lifecycle: 'PreparingUpdate' }), 0, NOW), true);
    assert.equal(isCloneSetPodAvailable(mk({ ...base, lifecycle: 'PreparingUpdate' }), 0, NOW), false);
    assert.equal(isCloneSetPodAvailable(mk({ ...base, lifecycle: 'Normal' }), 0, NOW), true);
  });
});

describe('cloneSetPodsToDelete', () => {
  test('nothing for diff ≤ 0; every pod, unsorted, when diff covers them; otherwise the lowest costs', () => {
    const pods = [300, 100, 200].map((c) => mk({ ...base, name: `p${c}`, cost: String(c) }));
    assert.deepEqual(cloneSetPodsToDelete(pods, 0, 0, NOW), []);
    assert.deepEqual(cloneSetPodsToDelete(pods, 3, 0, NOW), pods);
    assert.deepEqual(cloneSetPodsToDelete(pods, 2, 0, NOW).map((p) => podDeletionCost(p)), [100, 200]);
  });
});

describe('order properties', () => {
  const opts: fc.Arbitrary<Opts> = fc.record({
    name: fc.constantFrom('a', 'b', 'c', 'd'),
    node: fc.constantFrom('', 'n1', 'n2'),
    phase: fc.constantFrom(undefined, 'Pending', 'Running', 'Unknown'),
    ready: fc.boolean(),
    readyAt: fc.option(fc.integer({ min: 0, max: 9_999 }), { nil: undefined }),
    restarts: fc.integer({ min: 0, max: 3 }),
    createdAt: fc.option(fc.integer({ min: 0, max: 9_999 }), { nil: undefined }),
    cost: fc.option(fc.constantFrom('-100', '0', '100', 'junk'), { nil: undefined }),
    lifecycle: fc.constantFrom('Normal', 'PreparingDelete'),
  });

  test('the comparator is a total preorder (antisymmetric, transitive), with or without availability', () => {
    fc.assert(
      fc.property(opts, opts, opts, fc.nat(3), fc.nat(3), fc.nat(3), fc.constantFrom(0, 60), (x, y, z, rx, ry, rz, minReady) => {
        const [a, b, c] = [mk(x), mk(y), mk(z)];
        const ranks = new Map([[a, rx], [b, ry], [c, rz]]);
        const available = availableAfter(minReady);
        const cmp = (p: Pod, q: Pod) => compareCloneSetPods(p, q, ranks, available);
        assert.equal(Math.sign(cmp(a, b)), -Math.sign(cmp(b, a)) || 0);
        assert.equal(cmp(a, a), 0);
        if (cmp(a, b) <= 0 && cmp(b, c) <= 0) assert.ok(cmp(a, c) <= 0);
      }),
    );
  });

  test('a scale-in never deletes a pod a kept pod beats on placement, phase, availability, readiness or cost', () => {
    fc.assert(
      fc.property(fc.array(opts, { minLength: 1, maxLength: 12 }), fc.nat(12), fc.constantFrom(0, 60), (list, diff, minReady) => {
        const pods = list.map((o, i) => mk({ ...o, name: `p${i}` }));
        const chosen = new Set(cloneSetPodsToDelete(pods, diff, minReady, NOW));
        assert.equal(chosen.size, Math.min(diff, pods.length));
        const key = (p: Pod): number[] => [
          p.spec?.nodeName === undefined ? 0 : 1,
          p.status?.phase === 'Running' ? 2 : p.status?.phase === 'Unknown' ? 1 : 0,
          isCloneSetPodAvailable(p, minReady, NOW) ? 1 : 0,
          isPodReady(p) ? 1 : 0,
          podDeletionCost(p),
        ];
        const lexLess = (a: number[], b: number[]) => {
          for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return (a[i] ?? 0) < (b[i] ?? 0);
          return false;
        };
        for (const kept of pods.filter((p) => !chosen.has(p))) {
          for (const gone of chosen) assert.ok(!lexLess(key(kept), key(gone)), `${kept.metadata.name} was kept although it ranks before ${gone.metadata.name}`);
        }
      }),
    );
  });
});
