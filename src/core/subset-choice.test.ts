import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Subset, SubsetStatus, WorkloadSpread, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import type { Pod } from '../k8s/types.ts';
import { deepClone } from '../k8s/json.ts';
import { MATCHED_WORKLOADSPREAD_ANNOTATION } from '../api/keys.ts';
import { resolveMaxReplicas } from './percent.ts';
import { computeSubsetStatus } from './subset-status.ts';
import {
  chooseSubset,
  occupancy,
  subsetsUsePercent,
  versionSubsetStatuses,
  withRoomAtReplicas,
  type ChooseSubsetInput,
  type SubsetChoice,
  type WorkloadReplicasResult,
} from './subset-choice.ts';

const NOW = Date.UTC(2026, 0, 1, 0, 0, 10) + 900; // 10.9 s past the minute: stored as ...:10Z
const STAMP = '2026-01-01T00:00:10Z';
const V = 'versionIgnored';

function spread(subsets: Subset[], status?: WorkloadSpreadStatus, extra: Partial<WorkloadSpread['spec']> = {}): WorkloadSpread {
  const ws: WorkloadSpread = {
    metadata: { name: 'ws', namespace: 'ns', uid: 'ws-uid' },
    spec: { targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'app' }, subsets, ...extra },
  };
  if (status !== undefined) ws.status = status;
  return ws;
}

function st(name: string, missingReplicas: number, more: Partial<SubsetStatus> = {}): SubsetStatus {
  return { name, replicas: 0, missingReplicas, creatingPods: {}, deletingPods: {}, ...more };
}

function versioned(statuses: SubsetStatus[], version = V): WorkloadSpreadStatus {
  return { versionedSubsetStatuses: { [version]: statuses } };
}

function pod(name?: string): Pod {
  const metadata: Pod['metadata'] = { namespace: 'ns' };
  if (name !== undefined) metadata.name = name;
  else metadata.generateName = 'app-';
  return { metadata, spec: { containers: [{ name: 'main' }] } };
}

const unschedulable = [{ type: 'Schedulable', status: 'False', reason: 'PodUnschedulable' }];

function choose(ws: WorkloadSpread, p: Pod, over: Partial<ChooseSubsetInput> = {}): SubsetChoice {
  let n = 0;
  return chooseSubset({
    ws,
    pod: p,
    version: V,
    workloadReplicas: () => ({ ok: true, replicas: 10 }),
    now: NOW,
    newUid: () => `uid-${++n}`,
    ...over,
  });
}

function versionOf(choice: SubsetChoice, version = V): SubsetStatus[] | undefined {
  return choice.kind === 'chosen' ? choice.status?.versionedSubsetStatuses?.[version] : undefined;
}

describe('versionSubsetStatuses: a new version entry (§2.3 C.2, §5.3 numbers)', () => {
  const cases: { name: string; max: (number | string | undefined)[]; replicas: number; want: number[] }[] = [
    { name: '20/30/50% of 10', max: ['20%', '30%', '50%'], replicas: 10, want: [2, 3, 5] },
    { name: '80% and 20% of 5 round up', max: ['80%', '20%'], replicas: 5, want: [4, 1] },
    { name: '100% of 5', max: ['100%'], replicas: 5, want: [5] },
    { name: '34/33/33% of 10 is 4/4/4 (#877)', max: ['34%', '33%', '33%'], replicas: 10, want: [4, 4, 4] },
    { name: '50% of 14, 50% of 18', max: ['50%'], replicas: 14, want: [7] },
    { name: '25/75% of 4', max: ['25%', '75%'], replicas: 4, want: [1, 3] },
    { name: '30% of 0', max: ['30%'], replicas: 0, want: [0] },
    { name: 'ints kept, nil is -1', max: [3, undefined, 0], replicas: 10, want: [3, -1, 0] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const subsets: Subset[] = c.max.map((m, i) => (m === undefined ? { name: `s${i}` } : { name: `s${i}`, maxReplicas: m }));
      const resolved = versionSubsetStatuses(spread(subsets), V, () => ({ ok: true, replicas: c.replicas }));
      assert.ok(resolved.ok);
      if (!resolved.ok) return;
      assert.equal(resolved.initialized, true);
      const got = resolved.statuses;
      assert.deepEqual(got.map((s) => s.missingReplicas), c.want);
      assert.deepEqual(got.map((s) => s.name), subsets.map((s) => s.name));
      for (const s of got) {
        assert.equal(s.replicas, 0);
        assert.deepEqual(s.creatingPods, {});
        assert.deepEqual(s.deletingPods, {});
        assert.equal(s.conditions, undefined);
      }
    });
  }

  test('an invalid percentage is an error that names the subset (validation rejects it; admission fails rather than guess)', () => {
    const resolved = versionSubsetStatuses(spread([{ name: 's0', maxReplicas: '0.2%' }, { name: 's1', maxReplicas: 4 }]), V, () => ({ ok: true, replicas: 10 }));
    assert.deepEqual(resolved, { ok: false, error: 'maxReplicas "0.2%" of subset s0 is not valid' });
  });

  test('the workload replicas are asked for only when a limit is a percentage, and an existing entry is kept', () => {
    let asked = 0;
    const replicas = () => (asked++, { ok: true as const, replicas: 10 });
    assert.ok(versionSubsetStatuses(spread([{ name: 'a', maxReplicas: 3 }, { name: 'b' }]), V, replicas).ok);
    assert.equal(asked, 0);
    assert.ok(versionSubsetStatuses(spread([{ name: 'a', maxReplicas: '30%' }, { name: 'b' }]), V, replicas).ok);
    assert.equal(asked, 1);
    const stored = versionSubsetStatuses(spread([{ name: 'a', maxReplicas: '30%' }, { name: 'b' }], versioned([st('a', 1), st('b', -1)])), V, replicas);
    assert.deepEqual(stored, { ok: true, statuses: [st('a', 1), st('b', -1)], initialized: false });
    assert.equal(asked, 1);
  });

  test('subsetsUsePercent', () => {
    assert.equal(subsetsUsePercent(spread([{ name: 'a', maxReplicas: 1 }, { name: 'b' }])), false);
    assert.equal(subsetsUsePercent(spread([{ name: 'a', maxReplicas: '50%' }, { name: 'b' }])), true);
  });
});

describe('chooseSubset: one subset (the shortcut is admission.ts)', () => {
  test('one limited subset is not the shortcut: a reservation is written', () => {
    const got = choose(spread([{ name: 'only', maxReplicas: 2 }]), pod('p'));
    assert.equal(got.kind, 'chosen');
    assert.deepEqual(versionOf(got), [st('only', 1, { creatingPods: { p: STAMP } })]);
  });
});

describe('chooseSubset: initialization of the version entry (C.2)', () => {
  test('no status: initialized from the spec, carried in the returned status', () => {
    const got = choose(spread([{ name: 'a', maxReplicas: 2 }, { name: 'b' }]), pod('p'));
    assert.equal(got.kind, 'chosen');
    assert.equal(got.kind === 'chosen' && got.subset, 'a');
    assert.deepEqual(versionOf(got), [st('a', 1, { creatingPods: { p: STAMP } }), st('b', -1)]);
  });

  test('percentages at 10 replicas: 20/30/50% → 2/3/5, first pod takes a', () => {
    const ws = spread([{ name: 'a', maxReplicas: '20%' }, { name: 'b', maxReplicas: '30%' }, { name: 'c', maxReplicas: '50%' }]);
    const got = choose(ws, pod('p'), { workloadReplicas: () => ({ ok: true, replicas: 10 }) });
    assert.deepEqual(versionOf(got)?.map((s) => s.missingReplicas), [1, 3, 5]);
  });

  test('percentages at 5 replicas: 20/80% → 1/4', () => {
    const ws = spread([{ name: 'a', maxReplicas: '20%' }, { name: 'b', maxReplicas: '80%' }]);
    const got = choose(ws, pod('p'), { workloadReplicas: () => ({ ok: true, replicas: 5 }) });
    assert.deepEqual(versionOf(got)?.map((s) => s.missingReplicas), [0, 4]);
  });

  test('the workload replicas are read only when a subset uses a percentage and the entry is missing', () => {
    let called = 0;
    const count = () => (called++, { ok: true as const, replicas: 10 });
    choose(spread([{ name: 'a', maxReplicas: 2 }, { name: 'b' }]), pod('p'), { workloadReplicas: count });
    assert.equal(called, 0);
    choose(spread([{ name: 'a', maxReplicas: '50%' }, { name: 'b' }]), pod('p'), { workloadReplicas: count });
    assert.equal(called, 1);
    choose(spread([{ name: 'a', maxReplicas: '50%' }, { name: 'b' }], versioned([st('a', 3), st('b', -1)])), pod('p'), { workloadReplicas: count });
    assert.equal(called, 1);
  });

  test('an empty stored list is initialized like an absent one', () => {
    const got = choose(spread([{ name: 'a', maxReplicas: 1 }, { name: 'b', maxReplicas: 1 }], versioned([])), pod('p'));
    assert.deepEqual(versionOf(got)?.map((s) => s.missingReplicas), [0, 1]);
  });

  test('a failing workload read fails the admission', () => {
    const got = choose(spread([{ name: 'a', maxReplicas: '50%' }, { name: 'b' }]), pod('p'), {
      workloadReplicas: () => ({ ok: false, error: 'path "x" not exists' }),
    });
    assert.deepEqual(got, { kind: 'error', message: 'path "x" not exists' });
  });

  test('an unresolvable maxReplicas fails the admission', () => {
    const got = choose(spread([{ name: 'a', maxReplicas: 'abc' }, { name: 'b' }]), pod('p'));
    assert.equal(got.kind, 'error');
  });

  test('a new pod version gets a fresh entry with the full quota; other versions are untouched', () => {
    const old = [st('a', 0, { replicas: 2 }), st('b', 0, { replicas: 2 })];
    const ws = spread([{ name: 'a', maxReplicas: 2 }, { name: 'b', maxReplicas: 2 }], versioned(old, 'v1'));
    const got = choose(ws, pod('p'), { version: 'v2' });
    assert.equal(got.kind === 'chosen' && got.subset, 'a');
    assert.deepEqual(versionOf(got, 'v2'), [st('a', 1, { creatingPods: { p: STAMP } }), st('b', 2)]);
    assert.deepEqual(versionOf(got, 'v1'), old);
  });
});

describe('chooseSubset: idempotent retry (C.3)', () => {
  const subsets: Subset[] = [{ name: 'a', maxReplicas: 1 }, { name: 'b', maxReplicas: 1 }];
  test('name already in creatingPods → that subset, no status change, even at missing 0', () => {
    const ws = spread(subsets, versioned([st('a', 1), st('b', 0, { creatingPods: { p: STAMP } })]));
    assert.deepEqual(choose(ws, pod('p')), { kind: 'chosen', subset: 'b' });
  });
  test('name already in deletingPods → that subset, no status change', () => {
    const ws = spread(subsets, versioned([st('a', 0, { deletingPods: { p: STAMP } }), st('b', 1)]));
    assert.deepEqual(choose(ws, pod('p')), { kind: 'chosen', subset: 'a' });
  });
  test('a pod without a name never matches a recorded uid', () => {
    const ws = spread(subsets, versioned([st('a', 0, { creatingPods: { 'uid-1': STAMP } }), st('b', 1)]));
    const got = choose(ws, pod());
    assert.equal(got.kind === 'chosen' && got.subset, 'b');
  });
});

describe('chooseSubset: the scan (C.4–C.6)', () => {
  test('stored order, not spec order, decides', () => {
    const ws = spread([{ name: 'a', maxReplicas: 1 }, { name: 'b', maxReplicas: 1 }], versioned([st('b', 1), st('a', 1)]));
    assert.equal(versionOf(choose(ws, pod('p')))?.[0]?.name, 'b');
    const got = choose(ws, pod('p'));
    assert.equal(got.kind === 'chosen' && got.subset, 'b');
  });

  test('a subset with missingReplicas 0 is skipped', () => {
    const ws = spread([{ name: 'a', maxReplicas: 1 }, { name: 'b', maxReplicas: 3 }], versioned([st('a', 0), st('b', 3)]));
    const got = choose(ws, pod('p'));
    assert.equal(got.kind === 'chosen' && got.subset, 'b');
    assert.deepEqual(versionOf(got), [st('a', 0), st('b', 2, { creatingPods: { p: STAMP } })]);
  });

  test('a subset with Schedulable=False is skipped even with quota', () => {
    const ws = spread([{ name: 'a', maxReplicas: 3 }, { name: 'b' }], versioned([st('a', 3, { conditions: unschedulable }), st('b', -1)]));
    assert.deepEqual(choose(ws, pod('p')), { kind: 'chosen', subset: 'b' });
  });

  test('Schedulable=True does not block', () => {
    const ws = spread([{ name: 'a', maxReplicas: 3 }, { name: 'b' }], versioned([st('a', 3, { conditions: [{ type: 'Schedulable', status: 'True' }] }), st('b', -1)]));
    const got = choose(ws, pod('p'));
    assert.equal(got.kind === 'chosen' && got.subset, 'a');
  });

  test('a stale status without a new spec subset ignores that subset (§9.19)', () => {
    const ws = spread([{ name: 'a', maxReplicas: 1 }, { name: 'new' }], versioned([st('a', 0)]));
    const got = choose(ws, pod('p'));
    assert.equal(got.kind, 'none');
  });

  test('no subset with quota: none and no status (the D11 warning is admission.ts)', () => {
    const ws = spread([{ name: 'a', maxReplicas: 1 }, { name: 'b', maxReplicas: 1 }], versioned([st('a', 0), st('b', 0)]));
    assert.deepEqual(choose(ws, pod('p')), { kind: 'none' });
  });

  test('unlimited subset chosen: no status change (C.5)', () => {
    const ws = spread([{ name: 'a', maxReplicas: 1 }, { name: 'b' }], versioned([st('a', 0), st('b', -1)]));
    assert.deepEqual(choose(ws, pod('p')), { kind: 'chosen', subset: 'b' });
  });

  test('named pod: creatingPods[name] at second precision, missing-- (C.6)', () => {
    const ws = spread([{ name: 'a', maxReplicas: 3 }], versioned([st('a', 2, { replicas: 1, creatingPods: { q: '2026-01-01T00:00:01Z' } })]));
    const got = choose(ws, pod('p'));
    assert.deepEqual(got, {
      kind: 'chosen',
      subset: 'a',
      status: versioned([st('a', 1, { replicas: 1, creatingPods: { q: '2026-01-01T00:00:01Z', p: STAMP } })]),
    });
  });

  test('pod without a name: a generated uid keys the reservation and is returned for the marker', () => {
    const ws = spread([{ name: 'a', maxReplicas: 3 }, { name: 'b' }]);
    const got = choose(ws, pod(undefined), { newUid: () => 'f3a1' });
    assert.equal(got.kind, 'chosen');
    if (got.kind !== 'chosen') return;
    assert.equal(got.uid, 'f3a1');
    assert.deepEqual(got.status?.versionedSubsetStatuses?.[V]?.[0]?.creatingPods, { f3a1: STAMP });
  });

  test('a named pod gets no uid', () => {
    const got = choose(spread([{ name: 'a', maxReplicas: 3 }, { name: 'b' }]), pod('p'));
    assert.equal(got.kind === 'chosen' && got.uid, undefined);
  });

  test('other status fields survive the reservation', () => {
    const status: WorkloadSpreadStatus = { observedGeneration: 4, subsetStatuses: [st('a', 1)], ...versioned([st('a', 1), st('b', -1)]) };
    const got = choose(spread([{ name: 'a', maxReplicas: 1 }, { name: 'b' }], status), pod('p'));
    assert.equal(got.kind, 'chosen');
    if (got.kind !== 'chosen') return;
    assert.equal(got.status?.observedGeneration, 4);
    assert.deepEqual(got.status?.subsetStatuses, [st('a', 1)]);
  });

  test('the input WorkloadSpread is not mutated', () => {
    const ws = spread([{ name: 'a', maxReplicas: 3 }, { name: 'b' }], versioned([st('a', 2), st('b', -1)]));
    const before = deepClone(ws);
    choose(ws, pod('p'));
    choose(spread([{ name: 'a', maxReplicas: 3 }]), pod());
    assert.deepEqual(ws, before);
  });

});

describe('chooseSubset: minReplicas (D2)', () => {
  const subsets: Subset[] = [{ name: 'a', maxReplicas: 10 }, { name: 'b', maxReplicas: 10, minReplicas: 2 }];

  test('a subset below its minReplicas goes first', () => {
    const got = choose(spread(subsets, versioned([st('a', 10), st('b', 10)])), pod('p'));
    assert.equal(got.kind === 'chosen' && got.subset, 'b');
  });

  test('occupancy counts replicas and creating pods: at its minimum, the normal pass resumes', () => {
    const got = choose(spread(subsets, versioned([st('a', 10), st('b', 8, { replicas: 1, creatingPods: { q: STAMP } })])), pod('p'));
    assert.equal(got.kind === 'chosen' && got.subset, 'a');
  });

  test('occupancy subtracts deleting pods', () => {
    const got = choose(spread(subsets, versioned([st('a', 10), st('b', 9, { replicas: 2, deletingPods: { q: STAMP } })])), pod('p'));
    assert.equal(got.kind === 'chosen' && got.subset, 'b');
  });

  test('spec order decides between two subsets below their minimum', () => {
    const two: Subset[] = [{ name: 'a', maxReplicas: 10 }, { name: 'b', maxReplicas: 10, minReplicas: 1 }, { name: 'c', maxReplicas: 10, minReplicas: 1 }];
    const got = choose(spread(two, versioned([st('c', 10), st('b', 10), st('a', 10)])), pod('p'));
    assert.equal(got.kind === 'chosen' && got.subset, 'b');
  });

  test('a Schedulable=False subset is not forced to its minimum', () => {
    const got = choose(spread(subsets, versioned([st('a', 10), st('b', 10, { conditions: unschedulable })])), pod('p'));
    assert.equal(got.kind === 'chosen' && got.subset, 'a');
  });

  test('a subset below its minimum but with missingReplicas 0 is not chosen', () => {
    const got = choose(spread(subsets, versioned([st('a', 10), st('b', 0)])), pod('p'));
    assert.equal(got.kind === 'chosen' && got.subset, 'a');
  });

  test('a subset absent from the stored status is not considered (§9.19)', () => {
    const got = choose(spread(subsets, versioned([st('a', 10)])), pod('p'));
    assert.equal(got.kind === 'chosen' && got.subset, 'a');
  });

  test('an unlimited subset with minReplicas keeps creatingPods bookkeeping, missing stays -1', () => {
    const ws = spread([{ name: 'a', maxReplicas: 5 }, { name: 'b', minReplicas: 1 }]);
    const first = choose(ws, pod('p1'));
    assert.equal(first.kind === 'chosen' && first.subset, 'b');
    assert.deepEqual(versionOf(first), [st('a', 5), st('b', -1, { creatingPods: { p1: STAMP } })]);
    const next = choose({ ...ws, status: (first as { status: WorkloadSpreadStatus }).status }, pod('p2'));
    assert.equal(next.kind === 'chosen' && next.subset, 'a');
  });

  test('an unlimited subset with minReplicas taking a normal-pass pod still books it', () => {
    const ws = spread([{ name: 'a', maxReplicas: 0 }, { name: 'b', minReplicas: 1 }], versioned([st('a', 0), st('b', -1, { replicas: 3 })]));
    const got = choose(ws, pod('p'));
    assert.deepEqual(versionOf(got), [st('a', 0), st('b', -1, { replicas: 3, creatingPods: { p: STAMP } })]);
  });
});

describe('chooseSubset: simulation schedule (D3)', () => {
  const subsets: Subset[] = [{ name: 'a', maxReplicas: 3 }, { name: 'b', maxReplicas: 3 }, { name: 'c' }];
  const ws = spread(subsets, versioned([st('a', 3), st('b', 3), st('c', -1)]));

  test('a subset no node can host is skipped', () => {
    const seen: string[] = [];
    const got = choose(ws, pod('p'), { canHost: (s) => (seen.push(s.name), s.name !== 'a') });
    assert.equal(got.kind === 'chosen' && got.subset, 'b');
    assert.deepEqual(seen, ['a', 'b']);
  });

  test('canHost receives the spec subset', () => {
    let received: Subset | undefined;
    choose(ws, pod('p'), { canHost: (s) => ((received = s), true) });
    assert.deepEqual(received, subsets[0]);
  });

  test('when no subset can host the pod, the quota-only choice stands', () => {
    const got = choose(ws, pod('p'), { canHost: () => false });
    assert.equal(got.kind === 'chosen' && got.subset, 'a');
  });

  test('the minReplicas pass also simulates', () => {
    const withMin = spread([{ name: 'a', maxReplicas: 3 }, { name: 'b', maxReplicas: 3, minReplicas: 1 }], versioned([st('a', 3), st('b', 3)]));
    const got = choose(withMin, pod('p'), { canHost: (s) => s.name !== 'b' });
    assert.equal(got.kind === 'chosen' && got.subset, 'a');
  });
});

describe('chooseSubset: properties', () => {
  const subsetArb = fc.record({
    max: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
    min: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
  });
  const specArb = fc.array(subsetArb, { minLength: 1, maxLength: 4 }).map((list) =>
    list.map((s, i): Subset => {
      const subset: Subset = { name: `s${i}` };
      if (s.max !== undefined) subset.maxReplicas = s.max;
      if (s.min !== undefined) subset.minReplicas = s.max === undefined ? s.min : Math.min(s.min, s.max);
      return subset;
    }),
  );

  test('never picks a subset whose stored missingReplicas is 0, unless the pod is already recorded there', () => {
    const statusArb = fc.record({
      missing: fc.integer({ min: -1, max: 3 }),
      replicas: fc.integer({ min: 0, max: 3 }),
      unschedulable: fc.boolean(),
      recorded: fc.boolean(),
    });
    fc.assert(
      fc.property(specArb, fc.array(statusArb, { minLength: 4, maxLength: 4 }), fc.boolean(), (subsets, raw, named) => {
        const statuses = subsets.map((s, i) => {
          const r = raw[i]!;
          return st(s.name, r.missing, {
            replicas: r.replicas,
            creatingPods: r.recorded ? { p: STAMP } : {},
            ...(r.unschedulable ? { conditions: unschedulable } : {}),
          });
        });
        const ws = spread(subsets, versioned(statuses));
        const got = choose(ws, pod(named ? 'p' : undefined));
        if (got.kind !== 'chosen') return;
        const chosen = statuses.find((s) => s.name === got.subset)!;
        if (named && chosen.creatingPods?.p !== undefined) return;
        assert.notEqual(chosen.missingReplicas, 0);
      }),
    );
  });

  test('passing the returned status through JSON between admissions changes no decision (group commit, D13)', () => {
    fc.assert(
      fc.property(specArb, fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }), (subsets, named) => {
        let direct = spread(subsets);
        let viaJson = spread(subsets);
        named.forEach((hasName, i) => {
          const p = pod(hasName ? `p${i}` : undefined);
          const a = choose(direct, p, { newUid: () => `u${i}` });
          const b = choose(viaJson, p, { newUid: () => `u${i}` });
          assert.deepEqual(a, b);
          if (a.kind === 'chosen' && a.status !== undefined) direct = { ...direct, status: a.status };
          if (b.kind === 'chosen' && b.status !== undefined) viaJson = JSON.parse(JSON.stringify({ ...viaJson, status: b.status })) as WorkloadSpread;
        });
      }),
    );
  });
});

describe('booked deletions free their slot once observed (issue 14)', () => {
  // a (max 2) holds 2 running pods; one deletion of x is booked (missing 0 → 1).
  const booked = spread([{ name: 'a', maxReplicas: 2 }, { name: 'b' }], versioned([st('a', 1, { replicas: 2, deletingPods: { x: STAMP } }), st('b', -1)]));

  test('a deletion not observed (the pod still runs: forged, refused, or in flight) frees nothing: the pod goes on', () => {
    const got = choose(booked, pod('p1'), { deletionObserved: (name) => name !== 'x' });
    assert.equal(got.kind === 'chosen' && got.subset, 'b');
  });

  test('an observed deletion (gone or terminating) frees its slot, as in the reference', () => {
    const got = choose(booked, pod('p1'), { deletionObserved: () => true });
    assert.equal(got.kind === 'chosen' && got.subset, 'a');
    assert.equal(versionOf(got)?.[0]?.missingReplicas, 0);
    assert.equal(choose(booked, pod('p1')).kind === 'chosen' && (choose(booked, pod('p1')) as { subset: string }).subset, 'a', 'without the check: the reference');
  });

  test('real free quota stays usable next to an unobserved booking', () => {
    const roomy = spread([{ name: 'a', maxReplicas: 3 }, { name: 'b' }], versioned([st('a', 2, { replicas: 2, deletingPods: { x: STAMP } }), st('b', -1)]));
    const got = choose(roomy, pod('p1'), { deletionObserved: () => false });
    assert.equal(got.kind === 'chosen' && got.subset, 'a');
  });

  test('D2: an unobserved deletion still counts its pod for minReplicas', () => {
    const min = spread([{ name: 'a' }, { name: 'b', minReplicas: 2 }], versioned([st('a', -1), st('b', -1, { replicas: 2, deletingPods: { y: STAMP } })]));
    assert.equal((choose(min, pod('p1'), { deletionObserved: () => false }) as { subset: string }).subset, 'a');
    assert.equal((choose(min, pod('p1'), { deletionObserved: () => true }) as { subset: string }).subset, 'b');
  });
});

describe('withRoomAtReplicas: percentage limits at the workload replicas now (D22)', () => {
  const at = (replicas: number) => (): WorkloadReplicasResult => ({ ok: true, replicas });
  const zones = (a: number | string, b: number | string, c?: number | string): Subset[] => [
    { name: 'a', maxReplicas: a },
    { name: 'b', maxReplicas: b },
    c === undefined ? { name: 'c' } : { name: 'c', maxReplicas: c },
  ];
  const rooms = (ws: WorkloadSpread): number[] | undefined => ws.status?.versionedSubsetStatuses?.[V]?.map((x) => x.missingReplicas);
  // 20/20/60 % computed at 5 replicas (limits 1/1/3), every subset full: the status before a scale-out.
  const atFive = spread(zones('20%', '20%', '60%'), versioned([st('a', 0, { replicas: 1 }), st('b', 0, { replicas: 1 }), st('c', 0, { replicas: 3 })]));

  test('a scale-out 5 → 10: the room the limits 2/2/6 leave beside 1/1/3 pods', () => {
    assert.deepEqual(rooms(withRoomAtReplicas(atFive, V, at(10))), [1, 1, 3]);
    assert.deepEqual(rooms(atFive), [0, 0, 0], 'the stored status is not changed');
  });

  test('then the pods go where a fresh 10 puts them (a, b, c, c, c), and the sixth finds no room', () => {
    let ws = atFive;
    const placed: string[] = [];
    for (let i = 0; i < 6; i++) {
      const got = choose(withRoomAtReplicas(ws, V, at(10)), pod(`n${i}`));
      if (got.kind !== 'chosen') {
        placed.push(got.kind);
        continue;
      }
      placed.push(got.subset);
      if (got.status !== undefined) ws = { ...ws, status: got.status };
    }
    assert.deepEqual(placed, ['a', 'b', 'c', 'c', 'c', 'none']);
    assert.deepEqual(rooms(ws), [0, 0, 0]);
    assert.deepEqual(ws.status?.versionedSubsetStatuses?.[V]?.map((x) => occupancy(x)), [2, 2, 6]);
  });

  test('reservations and booked deletions count in the occupancy', () => {
    const ws = spread(zones('20%', '20%', '60%'), versioned([st('a', 0, { replicas: 1, creatingPods: { r: STAMP } }), st('b', 0, { replicas: 1, deletingPods: { d: STAMP } }), st('c', 0, { replicas: 3 })]));
    // a: 2 − (1 + 1) = 0; b: 2 − (1 − 1) = 2; c: 6 − 3 = 3.
    assert.deepEqual(rooms(withRoomAtReplicas(ws, V, at(10))), [0, 2, 3]);
  });

  test('a status computed at the current replicas is left as stored (the same object)', () => {
    const current = spread(zones('20%', '20%', '60%'), versioned([st('a', 1, { replicas: 1 }), st('b', 0, { replicas: 2 }), st('c', 4, { replicas: 2 })]));
    assert.equal(withRoomAtReplicas(current, V, at(10)), current);
  });

  test("the reference's room after a booked deletion in a subset over its limit is kept (never lowered)", () => {
    // Limit 2 at 10, three pods, one booked for deletion: the reference's webhook made missingReplicas 0 → 1.
    const ws = spread(zones('20%', '20%', '60%'), versioned([st('a', 1, { replicas: 3, deletingPods: { d: STAMP } }), st('b', 2), st('c', 6)]));
    assert.equal(withRoomAtReplicas(ws, V, at(10)), ws);
  });

  test('a scale-in lowers nothing: the stored room stands until the controller recomputes', () => {
    const atTen = spread(zones('20%', '20%', '60%'), versioned([st('a', 1, { replicas: 1 }), st('b', 1, { replicas: 1 }), st('c', 3, { replicas: 3 })]));
    assert.equal(withRoomAtReplicas(atTen, V, at(5)), atTen);
  });

  test('integer limits, unlimited subsets and subsets gone from the spec are left alone', () => {
    const mixed = spread(zones(1, '20%'), versioned([st('a', 0, { replicas: 1 }), st('b', 0, { replicas: 1 }), st('c', -1), st('gone', 0)]));
    const got = rooms(withRoomAtReplicas(mixed, V, at(20)));
    assert.deepEqual(got, [0, 3, -1, 0], 'only b (20 % of 20 = 4, one pod) grows');
  });

  test('the replicas are asked for only when a limit is a percentage and the version has a stored entry; a failed read leaves the stored room', () => {
    let asked = 0;
    const count = () => (asked++, { ok: true as const, replicas: 10 });
    withRoomAtReplicas(spread(zones(1, 1), versioned([st('a', 0), st('b', 0), st('c', -1)])), V, count);
    withRoomAtReplicas(spread(zones('20%', '20%', '60%')), V, count);
    withRoomAtReplicas(atFive, 'other-version', count);
    assert.equal(asked, 0);
    withRoomAtReplicas(atFive, V, count);
    assert.equal(asked, 1);
    assert.equal(withRoomAtReplicas(atFive, V, () => ({ ok: false, error: 'must be read first' })), atFive);
  });

  test('other versions, conditions and bookkeeping are carried over unchanged', () => {
    const ws = spread(zones('50%', '50%'), {
      versionedSubsetStatuses: {
        [V]: [st('a', 0, { replicas: 1, conditions: unschedulable, creatingPods: { r: STAMP } }), st('b', 0, { replicas: 1 }), st('c', -1)],
        old: [st('a', 0, { replicas: 3 })],
      },
    });
    const got = withRoomAtReplicas(ws, V, at(8));
    assert.deepEqual(got.status?.versionedSubsetStatuses?.[V], [st('a', 2, { replicas: 1, conditions: unschedulable, creatingPods: { r: STAMP } }), st('b', 3, { replicas: 1 }), st('c', -1)]);
    assert.equal(got.status?.versionedSubsetStatuses?.['old'], ws.status?.versionedSubsetStatuses?.['old']);
  });

  // The controller's status (spec §4.4) at R, over random pods, reservations and booked deletions.
  const limitArb = fc.oneof(fc.integer({ min: 0, max: 100 }).map((p) => `${p}%`), fc.integer({ min: 0, max: 6 }));
  const subsetPodsArb = fc.record({
    active: fc.integer({ min: 0, max: 8 }),
    inactive: fc.integer({ min: 0, max: 2 }),
    deleting: fc.integer({ min: 0, max: 3 }),
    creating: fc.integer({ min: 0, max: 3 }),
    deletingFirst: fc.boolean(),
  });
  const controllerStatus = (subset: Subset, raw: { active: number; inactive: number; deleting: number; creating: number; deletingFirst: boolean }, replicas: number): SubsetStatus => {
    const marker = JSON.stringify({ name: 'ws', subset: subset.name });
    const pods: Pod[] = [];
    for (let i = 0; i < raw.active + raw.inactive; i++) {
      pods.push({ metadata: { name: `${subset.name}-${i}`, namespace: 'ns', annotations: { [MATCHED_WORKLOADSPREAD_ANNOTATION]: marker } }, spec: { containers: [] }, status: { phase: i < raw.active ? 'Running' : 'Succeeded' } });
    }
    const deletingNames = pods.slice(0, Math.min(raw.deleting, raw.active)).map((p) => p.metadata.name ?? '');
    if (raw.deletingFirst) pods.reverse(); // the order quirk of spec §4.4 step 6
    const old = st(subset.name, 0, {
      deletingPods: Object.fromEntries(deletingNames.map((n) => [n, STAMP])),
      creatingPods: Object.fromEntries(Array.from({ length: raw.creating }, (_, i) => [`u-${subset.name}-${i}`, STAMP])),
    });
    const r = computeSubsetStatus({ subset, pods, old, workloadReplicas: replicas, now: NOW });
    assert.ok(r.status !== undefined);
    return r.status;
  };

  test('property: on a status the controller computed at the same replicas it changes nothing', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(limitArb, subsetPodsArb), { minLength: 1, maxLength: 4 }), fc.integer({ min: 0, max: 40 }), (raw, replicas) => {
        const subsets = raw.map(([max], i): Subset => ({ name: `s${i}`, maxReplicas: max }));
        const statuses = raw.map(([, pods], i) => controllerStatus(subsets[i]!, pods, replicas));
        const ws = spread(subsets, versioned(statuses));
        assert.equal(withRoomAtReplicas(ws, V, at(replicas)), ws);
      }),
    );
  });

  test("property: after the workload grows, admitting pods one by one takes a subset past its new limit only as far as its stored room did already (the reference's), and leaves a pod unplaced only when no subset has room", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 100 }), subsetPodsArb), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 1, max: 12 }),
        (raw, before, grown, pods) => {
          const after = before + grown;
          const subsets = raw.map(([p], i): Subset => ({ name: `s${i}`, maxReplicas: `${p}%` }));
          const statuses = raw.map(([, podsOf], i) => controllerStatus(subsets[i]!, podsOf, before));
          let ws = spread(subsets, versioned(statuses));
          const start = statuses.map((x) => occupancy(x));
          for (let i = 0; i < pods; i++) {
            const got = choose(withRoomAtReplicas(ws, V, at(after)), pod(`n${i}`));
            const now = ws.status?.versionedSubsetStatuses?.[V] ?? [];
            const hasRoom = subsets.some((s, k) => occupancy(now[k]!) < (resolveMaxReplicas(s.maxReplicas, after) ?? 0));
            if (got.kind !== 'chosen') {
              assert.equal(hasRoom, false, 'unplaced although a subset had room at the new count');
              continue;
            }
            if (got.status !== undefined) ws = { ...ws, status: got.status };
          }
          const end = ws.status?.versionedSubsetStatuses?.[V] ?? [];
          subsets.forEach((s, k) => {
            const limit = resolveMaxReplicas(s.maxReplicas, after) ?? 0;
            // Within the new limit, or within what the stored room gave (spec §4.4 step 6 leaves room in a subset over its limit).
            const stored = start[k]! + statuses[k]!.missingReplicas;
            assert.ok(occupancy(end[k]!) <= Math.max(limit, stored), `${s.name}: ${occupancy(end[k]!)} > limit ${limit} and stored ${stored}`);
          });
        },
      ),
    );
  });
});
