import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Subset, SubsetStatus, WorkloadSpread, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { deepClone } from '../k8s/json.ts';
import type { Pod } from '../k8s/types.ts';
import type { Marker } from './marker.ts';
import { recordDeletion, shouldRecordDeletion, type RecordDeletionInput } from './deletion.ts';
import { chooseSubset } from './subset-choice.ts';

const NOW = Date.UTC(2026, 0, 1, 0, 1, 0) + 450;
const STAMP = '2026-01-01T00:01:00Z';
const V = 'versionIgnored';

function spread(subsets: Subset[], status?: WorkloadSpreadStatus, kind = 'CloneSet'): WorkloadSpread {
  const ws: WorkloadSpread = {
    metadata: { name: 'ws', namespace: 'ns' },
    spec: { targetRef: { apiVersion: kind === 'CloneSet' ? 'apps.kruise.io/v1alpha1' : 'apps/v1', kind, name: 'app' }, subsets },
  };
  if (status !== undefined) ws.status = status;
  return ws;
}

function st(name: string, missingReplicas: number, more: Partial<SubsetStatus> = {}): SubsetStatus {
  return { name, replicas: 0, missingReplicas, creatingPods: {}, deletingPods: {}, ...more };
}

const versioned = (statuses: SubsetStatus[], version = V): WorkloadSpreadStatus => ({ versionedSubsetStatuses: { [version]: statuses } });

function pod(name: string, more: Partial<Pod['metadata']> = {}, phase?: string): Pod {
  const p: Pod = {
    metadata: {
      name,
      namespace: 'ns',
      ownerReferences: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'app', uid: 'u', controller: true }],
      ...more,
    },
    spec: { containers: [{ name: 'main' }] },
  };
  if (phase !== undefined) p.status = { phase };
  return p;
}

const marker = (subset: string): Marker => ({ name: 'ws', subset });

function record(ws: WorkloadSpread, p: Pod, m: Marker, over: Partial<RecordDeletionInput> = {}) {
  return recordDeletion({ ws, pod: p, marker: m, version: V, workloadReplicas: () => ({ ok: true, replicas: 10 }), now: NOW, ...over });
}

describe('shouldRecordDeletion (§3.4 gates)', () => {
  const cases: { name: string; pod: Pod; marker: Marker | undefined; want: boolean }[] = [
    { name: 'placed, active, owned pod', pod: pod('p'), marker: marker('a'), want: true },
    { name: 'no (or unparsable) marker', pod: pod('p'), marker: undefined, want: false },
    { name: 'marker without a WorkloadSpread name', pod: pod('p'), marker: { name: '', subset: 'a' }, want: false },
    { name: 'Succeeded pod', pod: pod('p', {}, 'Succeeded'), marker: marker('a'), want: false },
    { name: 'Failed pod', pod: pod('p', {}, 'Failed'), marker: marker('a'), want: false },
    { name: 'pod already being deleted', pod: pod('p', { deletionTimestamp: STAMP }), marker: marker('a'), want: false },
    { name: 'pod without a controller reference', pod: pod('p', { ownerReferences: [] }), marker: marker('a'), want: false },
  ];
  for (const c of cases) test(c.name, () => assert.equal(shouldRecordDeletion(c.pod, c.marker), c.want));
});

describe('recordDeletion (§3.4 step 4)', () => {
  const two: Subset[] = [{ name: 'a', maxReplicas: 2 }, { name: 'b' }];

  test('deletingPods[name] = now (second precision) and missing++', () => {
    const got = record(spread(two, versioned([st('a', 0, { replicas: 2 }), st('b', -1)])), pod('p'), marker('a'));
    assert.deepEqual(got, { changed: true, status: versioned([st('a', 1, { replicas: 2, deletingPods: { p: STAMP } }), st('b', -1)]) });
  });

  test('no upper cap: missing may exceed the limit until the controller recomputes', () => {
    const got = record(spread(two, versioned([st('a', 2, { deletingPods: { q: STAMP } }), st('b', -1)])), pod('p'), marker('a'));
    assert.equal(got.changed && got.status.versionedSubsetStatuses?.[V]?.[0]?.missingReplicas, 3);
  });

  test('an absent version entry is initialized first (percentages against the workload replicas)', () => {
    const ws = spread([{ name: 'a', maxReplicas: '30%' }, { name: 'b', maxReplicas: '70%' }]);
    const got = record(ws, pod('p'), marker('b'), { workloadReplicas: () => ({ ok: true, replicas: 10 }) });
    assert.deepEqual(got, { changed: true, status: versioned([st('a', 3), st('b', 8, { deletingPods: { p: STAMP } })]) });
  });

  test('an initialization failure is reported and nothing changes', () => {
    const ws = spread([{ name: 'a', maxReplicas: '30%' }, { name: 'b' }]);
    const got = record(ws, pod('p'), marker('a'), { workloadReplicas: () => ({ ok: false, error: 'object type error' }) });
    assert.deepEqual(got, { changed: false, error: 'object type error' });
  });

  test('the pod version selects the entry; other versions are untouched', () => {
    const old = [st('a', 0, { replicas: 2 }), st('b', -1)];
    const status: WorkloadSpreadStatus = { versionedSubsetStatuses: { v1: old, v2: [st('a', 2), st('b', -1)] } };
    const got = record(spread(two, status), pod('p'), marker('a'), { version: 'v1' });
    assert.equal(got.changed, true);
    if (!got.changed) return;
    assert.deepEqual(got.status.versionedSubsetStatuses?.v1?.[0], st('a', 1, { replicas: 2, deletingPods: { p: STAMP } }));
    assert.deepEqual(got.status.versionedSubsetStatuses?.v2, [st('a', 2), st('b', -1)]);
  });

  const unchanged: { name: string; ws: WorkloadSpread; marker: Marker }[] = [
    { name: 'name already in creatingPods (of any subset)', ws: spread(two, versioned([st('a', 1), st('b', -1, { creatingPods: { p: STAMP } })])), marker: marker('a') },
    { name: 'name already in deletingPods (a retried request)', ws: spread(two, versioned([st('a', 1, { deletingPods: { p: STAMP } }), st('b', -1)])), marker: marker('a') },
    { name: "the marker's subset is not in the status", ws: spread(two, versioned([st('a', 1), st('b', -1)])), marker: marker('gone') },
    { name: 'unlimited subset (-1)', ws: spread(two, versioned([st('a', 1), st('b', -1)])), marker: marker('b') },
  ];
  for (const c of unchanged) {
    test(`no change: ${c.name}`, () => assert.deepEqual(record(c.ws, pod('p'), c.marker), { changed: false }));
  }

  test('D2: an unlimited subset with minReplicas records the deletion, missing stays -1', () => {
    const ws = spread([{ name: 'a', maxReplicas: 2 }, { name: 'b', minReplicas: 1 }], versioned([st('a', 0), st('b', -1, { replicas: 1 })]));
    const got = record(ws, pod('p'), marker('b'));
    assert.deepEqual(got, { changed: true, status: versioned([st('a', 0), st('b', -1, { replicas: 1, deletingPods: { p: STAMP } })]) });
  });

  describe('D18: with rebalancing on, a subset above its limit gets no quota back', () => {
    const rebalancing = (ws: WorkloadSpread): WorkloadSpread => ({ ...ws, metadata: { ...ws.metadata, annotations: { 'workloadspread.io/rebalance': 'true' } } });
    const missingOf = (got: ReturnType<typeof record>) => (got.changed ? got.status.versionedSubsetStatuses?.[V]?.[0]?.missingReplicas : undefined);

    test('4 pods in a subset of limit 2: the deletion is recorded, missing stays 0 (its replacement must not come back)', () => {
      const ws = rebalancing(spread(two, versioned([st('a', 0, { replicas: 4 }), st('b', -1)])));
      const got = record(ws, pod('p'), marker('a'));
      assert.deepEqual(got, { changed: true, status: versioned([st('a', 0, { replicas: 4, deletingPods: { p: STAMP } }), st('b', -1)]) });
    });

    test('at its limit (2 of 2), or once the surplus is already deleting (3 of 2, one deleting): missing++ as in the reference', () => {
      assert.equal(missingOf(record(rebalancing(spread(two, versioned([st('a', 0, { replicas: 2 }), st('b', -1)]))), pod('p'), marker('a'))), 1);
      assert.equal(missingOf(record(rebalancing(spread(two, versioned([st('a', 0, { replicas: 3, deletingPods: { q: STAMP } }), st('b', -1)]))), pod('p'), marker('a'))), 1);
    });

    test('a percentage limit resolves against the workload replicas (30% of 10 = 3: 4 pods stay full)', () => {
      const pct: Subset[] = [{ name: 'a', maxReplicas: '30%' }, { name: 'b' }];
      assert.equal(missingOf(record(rebalancing(spread(pct, versioned([st('a', 0, { replicas: 4 }), st('b', -1)]))), pod('p'), marker('a'))), 0);
      assert.equal(missingOf(record(rebalancing(spread(pct, versioned([st('a', 0, { replicas: 3 }), st('b', -1)]))), pod('p'), marker('a'))), 1);
    });

    test('without the annotation (or with "false"), the reference frees quota even above the limit', () => {
      const ws = spread(two, versioned([st('a', 0, { replicas: 4 }), st('b', -1)]));
      assert.equal(missingOf(record(ws, pod('p'), marker('a'))), 1);
      const off = { ...ws, metadata: { ...ws.metadata, annotations: { 'workloadspread.io/rebalance': 'false' } } };
      assert.equal(missingOf(record(off, pod('p'), marker('a'))), 1);
    });
  });

  test('the input is not mutated', () => {
    const ws = spread(two, versioned([st('a', 0, { replicas: 2 }), st('b', -1)]));
    const before = deepClone(ws);
    record(ws, pod('p'), marker('a'));
    assert.deepEqual(ws, before);
  });

  test('a malformed pod never throws (malformed WorkloadSpreads are refused where they enter: api/decode.test.ts)', () => {
    assert.doesNotThrow(() => record(spread(two), { metadata: {} } as Pod, marker('a')));
  });
});

describe('admissions and deletions together: properties', () => {
  type Op = { kind: 'create'; named: boolean } | { kind: 'retry'; pick: number } | { kind: 'delete'; pick: number };
  const opArb: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant('create' as const), named: fc.boolean() }),
    fc.record({ kind: fc.constant('retry' as const), pick: fc.nat() }),
    fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }),
  );
  const limitsArb = fc.array(fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }), { minLength: 1, maxLength: 4 });

  test('live pods admitted into a subset never exceed its limit, whatever the order of admissions, retries and recorded deletions', () => {
    fc.assert(
      fc.property(limitsArb, fc.array(opArb, { maxLength: 40 }), (limits, ops) => {
        const subsets: Subset[] = limits.map((m, i) => (m === undefined ? { name: `s${i}` } : { name: `s${i}`, maxReplicas: m }));
        let ws = spread(subsets);
        const live = new Map<string, { subset: string; recorded: boolean; pod: Pod; uid?: string }>();
        let seq = 0;
        for (const op of ops) {
          if (op.kind === 'create' || op.kind === 'retry') {
            const names = [...live.keys()].filter((n) => !n.startsWith('gen-'));
            const retry = op.kind === 'retry' && names.length > 0;
            const name = retry ? names[op.pick % names.length]! : op.kind === 'create' && op.named ? `p${seq++}` : undefined;
            const p: Pod = name === undefined ? { metadata: { generateName: 'app-', namespace: 'ns' }, spec: { containers: [] } } : pod(name);
            const uid = `u${seq++}`;
            const got = chooseSubset({ ws, pod: p, version: V, workloadReplicas: () => ({ ok: true, replicas: 4 }), now: NOW, newUid: () => uid });
            if (got.kind === 'error') assert.fail(got.message);
            if (got.kind !== 'chosen') continue;
            if (got.status !== undefined) ws = { ...ws, status: got.status };
            if (retry) {
              const first = live.get(name!)!;
              if (first.recorded) {
                assert.equal(got.subset, first.subset, 'a retry lands where the first admission did');
                assert.equal(got.status, undefined, 'a retry writes nothing');
              } else {
                // The first admission went to an unlimited subset and left no trace, so the retry is decided
                // afresh (as in the reference); the pod is where the last admission put it.
                live.set(name!, { ...first, subset: got.subset, recorded: got.status !== undefined });
              }
              continue;
            }
            // Pods created with generateName are named by the API server after admission.
            const key = name ?? `gen-${uid}`;
            live.set(key, { subset: got.subset, recorded: got.status !== undefined, pod: name === undefined ? pod(key) : p, ...(got.uid !== undefined ? { uid: got.uid } : {}) });
          } else {
            const keys = [...live.keys()];
            if (keys.length === 0) continue;
            const key = keys[op.pick % keys.length]!;
            const entry = live.get(key)!;
            const got = recordDeletion({ ws, pod: entry.pod, marker: { name: 'ws', subset: entry.subset }, version: V, workloadReplicas: () => ({ ok: true, replicas: 4 }), now: NOW });
            if (got.changed) ws = { ...ws, status: got.status };
            live.delete(key);
          }
          const counts = new Map<string, number>();
          for (const { subset } of live.values()) counts.set(subset, (counts.get(subset) ?? 0) + 1);
          subsets.forEach((s) => {
            if (typeof s.maxReplicas === 'number') assert.ok((counts.get(s.name) ?? 0) <= s.maxReplicas, `${s.name} over its limit`);
          });
        }
      }),
    );
  });
});
