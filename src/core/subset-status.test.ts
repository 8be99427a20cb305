import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Subset, SubsetStatus, WorkloadSpread } from '../api/workloadspread.ts';
import { formatTime } from '../k8s/time.ts';
import type { Pod } from '../k8s/types.ts';
import { computeSubsetStatus, computeWorkloadSpreadStatus, placedColumn, soonerRequeue } from './subset-status.ts';

const WS = { namespace: 'ns', name: 'ws' };
const T0 = Date.UTC(2026, 0, 1, 0, 0, 0);

function pod(name: string, opts: { phase?: string; deleting?: boolean; uid?: string; ready?: boolean } = {}): Pod {
  const marker: Record<string, string> = { name: 'ws', subset: 'a' };
  if (opts.uid !== undefined) marker['uid'] = opts.uid;
  return {
    metadata: {
      name,
      namespace: 'ns',
      annotations: { 'apps.kruise.io/matched-workloadspread': JSON.stringify(marker) },
      ...(opts.deleting ? { deletionTimestamp: formatTime(T0) } : {}),
    },
    spec: { containers: [{ name: 'main' }] },
    status: { phase: opts.phase ?? 'Running', ...(opts.ready === true ? { conditions: [{ type: 'Ready', status: 'True' }] } : {}) },
  };
}

function subset(maxReplicas?: number | string, extra: Partial<Subset> = {}): Subset {
  return { name: 'a', ...(maxReplicas === undefined ? {} : { maxReplicas }), ...extra };
}

function run(s: Subset, pods: Pod[], old: SubsetStatus | undefined, now: number, workloadReplicas = 10) {
  return computeSubsetStatus({ ws: WS, subset: s, pods, old, workloadReplicas, now });
}

describe('computeSubsetStatus: counting (spec §4.4 steps 1–3)', () => {
  const cases: { name: string; subset: Subset; pods: Pod[]; replicas: number; missing: number; total?: number }[] = [
    { name: 'limited subset below its limit', subset: subset(3), pods: [pod('p1'), pod('p2')], replicas: 2, missing: 1 },
    { name: 'missing never goes below 0', subset: subset(1), pods: [pod('p1'), pod('p2'), pod('p3')], replicas: 3, missing: 0 },
    { name: 'unlimited subset reads -1', subset: subset(undefined), pods: [pod('p1'), pod('p2')], replicas: 2, missing: -1 },
    {
      name: 'inactive pods (Succeeded, Failed, deleting) are not counted',
      subset: subset(5),
      pods: [pod('p1'), pod('p2', { phase: 'Succeeded' }), pod('p3', { phase: 'Failed' }), pod('p4', { deleting: true })],
      replicas: 1,
      missing: 4,
    },
    { name: 'percent resolves rounding up: 50% of 3 is 2', subset: subset('50%'), pods: [pod('p1')], replicas: 1, missing: 1, total: 3 },
    { name: 'percent of unknown replicas (-1) is 0', subset: subset('50%'), pods: [], replicas: 0, missing: 0, total: -1 },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const r = run(c.subset, c.pods, undefined, T0, c.total ?? 10);
      assert.deepEqual(r.status, { name: 'a', replicas: c.replicas, missingReplicas: c.missing });
      assert.deepEqual(r.events, []);
      assert.equal(r.requeueAfterMs, undefined);
    });
  }

  for (const bad of ['abc', '0.5%', -1]) {
    test(`an unresolvable maxReplicas (${JSON.stringify(bad)}) takes the defensive nil path`, () => {
      const r = run(subset(bad), [pod('p1')], undefined, T0);
      assert.equal(r.status, undefined);
    });
  }

  test('order dependence: max 2, three active, the deleting pod last gives missing 1', () => {
    const old = { name: 'a', replicas: 3, missingReplicas: 0, deletingPods: { c: formatTime(T0) } };
    const r = run(subset(2), [pod('a'), pod('b'), pod('c')], old, T0 + 1000);
    assert.equal(r.status?.missingReplicas, 1);
  });

  test('order dependence: the deleting pod first gives missing 0', () => {
    const old = { name: 'a', replicas: 3, missingReplicas: 0, deletingPods: { a: formatTime(T0) } };
    const r = run(subset(2), [pod('a'), pod('b'), pod('c')], old, T0 + 1000);
    assert.equal(r.status?.missingReplicas, 0);
  });
});

describe('computeSubsetStatus: creatingPods (spec §4.4 step 4)', () => {
  test('an observed pod removes its entry by name', () => {
    const old = { name: 'a', replicas: 0, missingReplicas: 2, creatingPods: { p1: formatTime(T0) } };
    const r = run(subset(3), [pod('p1')], old, T0 + 1000);
    assert.deepEqual(r.status, { name: 'a', replicas: 1, missingReplicas: 2 });
    assert.equal(r.requeueAfterMs, undefined);
  });

  test('a pod whose marker has a uid removes the uid entry, not its name entry', () => {
    const old = { name: 'a', replicas: 0, missingReplicas: 1, creatingPods: { u1: formatTime(T0), p1: formatTime(T0) } };
    const r = run(subset(3), [pod('p1', { uid: 'u1' })], old, T0 + 1000);
    assert.deepEqual(r.status?.creatingPods, { p1: formatTime(T0) });
  });

  test('an inactive pod still confirms its creation', () => {
    const old = { name: 'a', replicas: 0, missingReplicas: 2, creatingPods: { p1: formatTime(T0) } };
    const r = run(subset(3), [pod('p1', { phase: 'Failed' })], old, T0 + 1000);
    assert.deepEqual(r.status, { name: 'a', replicas: 0, missingReplicas: 3 });
  });

  test('an unconfirmed entry is kept, takes quota and requeues at its expiry', () => {
    const old = { name: 'a', replicas: 0, missingReplicas: 2, creatingPods: { x: formatTime(T0) } };
    const r = run(subset(3), [pod('p1')], old, T0 + 10_000);
    assert.deepEqual(r.status, { name: 'a', replicas: 1, missingReplicas: 1, creatingPods: { x: formatTime(T0) } });
    assert.equal(r.requeueAfterMs, 20_000);
  });

  // Written at 10.9 s, the entry reads back as 10 s: expiry is judged on the stored time.
  const stored = formatTime(T0 + 10_900);
  const timing = [
    { name: 'kept 29 s after the stored time', now: T0 + 39_000, kept: true, requeue: 1000 },
    { name: 'kept at exactly 30 s (strictly-after rule), no positive requeue', now: T0 + 40_000, kept: true, requeue: undefined },
    { name: 'dropped at 30 s + 1 ms with CreatePodFailed', now: T0 + 40_001, kept: false, requeue: undefined },
  ];
  for (const c of timing) {
    test(c.name, () => {
      const old = { name: 'a', replicas: 0, missingReplicas: 1, creatingPods: { x: stored } };
      const r = run(subset(3), [], old, c.now);
      assert.equal(r.requeueAfterMs, c.requeue);
      if (c.kept) {
        assert.deepEqual(r.status?.creatingPods, { x: stored });
        assert.equal(r.status?.missingReplicas, 2);
        assert.deepEqual(r.events, []);
      } else {
        assert.equal(r.status?.creatingPods, undefined);
        assert.equal(r.status?.missingReplicas, 3);
        assert.deepEqual(r.events.map((e) => [e.type, e.reason, e.message]), [
          ['Warning', 'CreatePodFailed', "Pod ns/x was expected to be created but it wasn't"],
        ]);
      }
    });
  }

  test('an unreadable time counts as expired', () => {
    const old = { name: 'a', replicas: 0, missingReplicas: 1, creatingPods: { x: 'yesterday' } };
    const r = run(subset(3), [], old, T0);
    assert.equal(r.status?.creatingPods, undefined);
    assert.equal(r.events[0]?.reason, 'CreatePodFailed');
  });

  test('D2: an unlimited subset keeps and expires entries the same way, missing stays -1', () => {
    const old = {
      name: 'a',
      replicas: 0,
      missingReplicas: -1,
      creatingPods: { fresh: formatTime(T0), stale: formatTime(T0 - 31_000) },
      deletingPods: { p1: formatTime(T0) },
    };
    const r = run(subset(undefined, { minReplicas: 2 }), [pod('p1')], old, T0 + 1000);
    assert.deepEqual(r.status, {
      name: 'a',
      replicas: 1,
      missingReplicas: -1,
      creatingPods: { fresh: formatTime(T0) },
      deletingPods: { p1: formatTime(T0) },
    });
    assert.deepEqual(r.events.map((e) => e.reason), ['CreatePodFailed']);
    assert.equal(r.requeueAfterMs, 14_000);
  });
});

describe('computeSubsetStatus: deletingPods (spec §4.4 steps 3 and 5)', () => {
  const stored = formatTime(T0 + 10_900);
  const timing = [
    { name: 'kept 14 s after the stored time, quota given back', now: T0 + 24_000, kept: true, requeue: 1000 },
    { name: 'kept at exactly 15 s', now: T0 + 25_000, kept: true, requeue: undefined },
    { name: 'dropped at 15 s + 1 ms with DeletePodFailed', now: T0 + 25_001, kept: false, requeue: undefined },
  ];
  for (const c of timing) {
    test(c.name, () => {
      const old = { name: 'a', replicas: 2, missingReplicas: 2, deletingPods: { p1: stored } };
      const r = run(subset(3), [pod('p1'), pod('p2')], old, c.now);
      assert.equal(r.requeueAfterMs, c.requeue);
      if (c.kept) {
        assert.deepEqual(r.status, { name: 'a', replicas: 2, missingReplicas: 2, deletingPods: { p1: stored } });
        assert.deepEqual(r.events, []);
      } else {
        assert.deepEqual(r.status, { name: 'a', replicas: 2, missingReplicas: 1 });
        assert.deepEqual(r.events.map((e) => [e.type, e.reason, e.message]), [
          ['Warning', 'DeletePodFailed', "Pod ns/p1 was expected to be deleted but it wasn't"],
        ]);
      }
    });
  }

  test('the quota given back never exceeds the limit', () => {
    const old = { name: 'a', replicas: 1, missingReplicas: 2, deletingPods: { p1: formatTime(T0) } };
    const r = run(subset(2), [pod('p1')], old, T0);
    assert.equal(r.status?.missingReplicas, 2);
  });

  test('entries of pods that are gone or inactive are dropped silently', () => {
    const old = { name: 'a', replicas: 2, missingReplicas: 0, deletingPods: { gone: formatTime(T0), p2: formatTime(T0) } };
    const r = run(subset(3), [pod('p1'), pod('p2', { phase: 'Succeeded' })], old, T0 + 1000);
    assert.deepEqual(r.status, { name: 'a', replicas: 1, missingReplicas: 2 });
    assert.deepEqual(r.events, []);
  });

  test('a malformed old status never throws', () => {
    const old = { name: 'a', replicas: 0, missingReplicas: 0, creatingPods: 'x', deletingPods: [1, 2] } as unknown as SubsetStatus;
    const r = run(subset(3), [pod('p1')], old, T0);
    assert.deepEqual(r.status, { name: 'a', replicas: 1, missingReplicas: 2 });
  });

  test('the input old status is not mutated', () => {
    const old = { name: 'a', replicas: 0, missingReplicas: 2, creatingPods: { p1: formatTime(T0), x: formatTime(T0 - 60_000) } };
    const copy = structuredClone(old);
    run(subset(3), [pod('p1')], old, T0);
    assert.deepEqual(old, copy);
  });
});

describe('computeSubsetStatus invariants (property)', () => {
  test('replicas = active pods; missing is -1 when unlimited, else within [0, max]', () => {
    fc.assert(
      fc.property(
        fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
        fc.array(fc.record({ active: fc.boolean(), deleting: fc.boolean() }), { maxLength: 10 }),
        fc.integer({ min: 0, max: 5 }),
        (max, specs, creating) => {
          const pods = specs.map((s, i) => pod(`p${i}`, s.active ? {} : { phase: 'Succeeded' }));
          const deletingPods = Object.fromEntries(
            specs.flatMap((s, i) => (s.deleting ? [[`p${i}`, formatTime(T0)]] : [])),
          );
          const creatingPods = Object.fromEntries(Array.from({ length: creating }, (_, i) => [`c${i}`, formatTime(T0)]));
          const old = { name: 'a', replicas: 0, missingReplicas: 0, creatingPods, deletingPods };
          const r = run(subset(max), pods, old, T0 + 5000);
          assert.ok(r.status);
          assert.equal(r.status.replicas, specs.filter((s) => s.active).length);
          if (max === undefined) assert.equal(r.status.missingReplicas, -1);
          else assert.ok(r.status.missingReplicas >= 0 && r.status.missingReplicas <= max);
        },
      ),
    );
  });
});

function ws(status?: WorkloadSpread['status'], subsets: Subset[] = [{ name: 'a', maxReplicas: 2 }, { name: 'b' }]): WorkloadSpread {
  return {
    metadata: { name: 'ws', namespace: 'ns', generation: 7 },
    spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets },
    ...(status === undefined ? {} : { status }),
  };
}

describe('computeWorkloadSpreadStatus: assembly (spec §4.4)', () => {
  const FAKE = 'kruise.io/workloadspread-fake-subset-name';

  test('top level over all pods, one list per version, display fields (Ready: ready pods in subsets; Placed: pods in subsets)', () => {
    const a1 = pod('a1', { ready: true });
    const a2 = pod('a2');
    const b1 = pod('b1', { ready: true });
    const f1 = pod('f1', { ready: true }); // in no subset: counted in neither column
    const r = computeWorkloadSpreadStatus({
      ws: ws(),
      bySubset: new Map([['a', [a1, a2]], ['b', [b1]], [FAKE, [f1]]]),
      byVersion: new Map([
        ['v1', new Map([['a', [a1]], ['b', [b1]], [FAKE, [f1]]])],
        ['v2', new Map([['a', [a2]], ['b', []]])],
      ]),
      workloadReplicas: 5,
      now: T0,
    });
    assert.deepEqual(r.status, {
      observedGeneration: 7,
      subsetStatuses: [
        { name: 'a', replicas: 2, missingReplicas: 0 },
        { name: 'b', replicas: 1, missingReplicas: -1 },
      ],
      versionedSubsetStatuses: {
        v1: [
          { name: 'a', replicas: 1, missingReplicas: 1 },
          { name: 'b', replicas: 1, missingReplicas: -1 },
        ],
        v2: [
          { name: 'a', replicas: 1, missingReplicas: 1 },
          { name: 'b', replicas: 0, missingReplicas: -1 },
        ],
      },
      subsetCount: 2,
      ready: '2/5',
      placed: '3/5',
    });
  });

  test('old statuses are matched by name: reordered and renamed subsets', () => {
    const old = {
      subsetStatuses: [
        { name: 'a', replicas: 0, missingReplicas: 2, creatingPods: { x: formatTime(T0) } },
        { name: 'gone', replicas: 4, missingReplicas: 0, creatingPods: { y: formatTime(T0) } },
      ],
    };
    const r = computeWorkloadSpreadStatus({
      ws: ws(old, [{ name: 'new' }, { name: 'a', maxReplicas: 2 }]),
      bySubset: new Map(),
      byVersion: new Map(),
      workloadReplicas: 5,
      now: T0 + 1000,
    });
    assert.deepEqual(r.status?.subsetStatuses, [
      { name: 'new', replicas: 0, missingReplicas: -1 },
      { name: 'a', replicas: 0, missingReplicas: 1, creatingPods: { x: formatTime(T0) } },
    ]);
    assert.equal(r.requeueAfterMs, 29_000);
  });

  const versionCases = [
    { name: 'an old version with an unexpired reservation is kept', created: T0, kept: true },
    { name: 'an old version whose reservation expired is dropped', created: T0 - 31_000, kept: false },
  ];
  for (const c of versionCases) {
    test(c.name, () => {
      const old = {
        versionedSubsetStatuses: {
          old: [
            { name: 'a', replicas: 0, missingReplicas: 1, creatingPods: { x: formatTime(c.created) } },
            { name: 'b', replicas: 0, missingReplicas: -1 },
          ],
        },
      };
      const r = computeWorkloadSpreadStatus({ ws: ws(old), bySubset: new Map(), byVersion: new Map(), workloadReplicas: 5, now: T0 + 1000 });
      assert.equal(r.status?.versionedSubsetStatuses?.['old'] !== undefined, c.kept);
    });
  }

  test('an old version without pods or reservations disappears; no pods at all leaves no versioned status', () => {
    const old = {
      versionedSubsetStatuses: {
        old: [
          { name: 'a', replicas: 2, missingReplicas: 0, deletingPods: { p: formatTime(T0) } },
          { name: 'b', replicas: 1, missingReplicas: -1 },
        ],
      },
    };
    const r = computeWorkloadSpreadStatus({ ws: ws(old), bySubset: new Map(), byVersion: new Map(), workloadReplicas: 5, now: T0 });
    assert.equal(r.status?.versionedSubsetStatuses, undefined);
  });

  test('a version that has pods is kept even when all of them are in no subset', () => {
    const f = pod('f');
    const r = computeWorkloadSpreadStatus({
      ws: ws(),
      bySubset: new Map([[FAKE, [f]]]),
      byVersion: new Map([['v1', new Map([[FAKE, [f]]])]]),
      workloadReplicas: 5,
      now: T0,
    });
    assert.ok(r.status?.versionedSubsetStatuses?.['v1']);
    assert.equal(r.status?.ready, '0/5');
  });

  test('the defensive path returns no status', () => {
    const r = computeWorkloadSpreadStatus({
      ws: ws(undefined, [{ name: 'a', maxReplicas: 'x%' }]),
      bySubset: new Map(),
      byVersion: new Map(),
      workloadReplicas: 5,
      now: T0,
    });
    assert.equal(r.status, undefined);
  });

  test('a missing generation reads as 0; a malformed old status never throws', () => {
    const w = ws({ subsetStatuses: 'nope', versionedSubsetStatuses: 3 } as unknown as WorkloadSpread['status']);
    delete w.metadata.generation;
    const r = computeWorkloadSpreadStatus({ ws: w, bySubset: new Map(), byVersion: new Map(), workloadReplicas: 0, now: T0 });
    assert.equal(r.status?.observedGeneration, 0);
  });
});

describe('small helpers', () => {
  test('placedColumn: placed pods over workload replicas, ? when unknown', () => {
    const statuses = [
      { name: 'a', replicas: 3, missingReplicas: 0 },
      { name: 'b', replicas: 4, missingReplicas: -1 },
    ];
    assert.equal(placedColumn(statuses, 10), '7/10');
    assert.equal(placedColumn(statuses, -1), '7/?');
  });

  test('soonerRequeue keeps the smallest positive delay', () => {
    assert.equal(soonerRequeue(undefined, undefined), undefined);
    assert.equal(soonerRequeue(0, undefined), undefined);
    assert.equal(soonerRequeue(-5, 10), 10);
    assert.equal(soonerRequeue(30, 10), 10);
    assert.equal(soonerRequeue(5, Number.POSITIVE_INFINITY), 5);
  });
});
