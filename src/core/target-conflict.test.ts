import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { activeWorkloadSpreads, duplicateTargetStatus, hasDuplicateTarget, precedingWorkloadSpread, takesPrecedence, targetKey } from './target-conflict.ts';

function ws(name: string, created: string | undefined, target = 'web', extra: Partial<WorkloadSpread['metadata']> = {}): WorkloadSpread {
  return {
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, ...(created === undefined ? {} : { creationTimestamp: created }), ...extra },
    spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: target }, subsets: [{ name: 'a' }] },
  };
}

describe('one WorkloadSpread per workload: the rule', () => {
  test('the older one takes precedence; at the same second, the name that sorts first; without a timestamp, last', () => {
    assert.equal(takesPrecedence(ws('b', '2026-01-01T00:00:00Z'), ws('a', '2026-01-01T00:00:01Z')), true);
    assert.equal(takesPrecedence(ws('a', '2026-01-01T00:00:01Z'), ws('b', '2026-01-01T00:00:00Z')), false);
    assert.equal(takesPrecedence(ws('a', '2026-01-01T00:00:00Z'), ws('b', '2026-01-01T00:00:00Z')), true);
    assert.equal(takesPrecedence(ws('z', '2026-01-01T00:00:00Z'), ws('a', undefined)), true);
  });

  test('the same workload is group + kind + name; the version does not count', () => {
    const a = ws('a', '2026-01-01T00:00:00Z');
    const b: WorkloadSpread = { ...ws('b', '2026-01-01T00:00:01Z'), spec: { targetRef: { apiVersion: 'apps/v1beta2', kind: 'Deployment', name: 'web' }, subsets: [] } };
    assert.equal(targetKey(a), targetKey(b));
    assert.equal(precedingWorkloadSpread(b, [a, b])?.metadata?.name, 'a');
    assert.equal(precedingWorkloadSpread(a, [a, b]), undefined);
    assert.equal(precedingWorkloadSpread(ws('c', '2026-01-01T00:00:02Z', 'other'), [a, b]), undefined);
  });

  test('a deleting WorkloadSpread never wins: the duplicate takes over as it goes', () => {
    const old = ws('a', '2026-01-01T00:00:00Z', 'web', { deletionTimestamp: '2026-01-01T00:05:00Z' });
    const young = ws('b', '2026-01-01T00:00:01Z');
    assert.equal(precedingWorkloadSpread(young, [old, young]), undefined);
    assert.deepEqual(activeWorkloadSpreads([young, old]).map((w) => w.metadata?.name), ['b', 'a']);
  });

  test('a frozen list (the caches\' shared one) is answered once and kept with it; an unfrozen one every time', () => {
    const spreads = [ws('b', '2026-01-01T00:00:01Z'), ws('a', '2026-01-01T00:00:00Z'), ws('c', '2026-01-01T00:00:00Z', 'api')];
    const frozen = Object.freeze([...spreads]);
    const first = activeWorkloadSpreads(frozen);
    assert.deepEqual(first.map((w) => w.metadata?.name), ['a', 'c']);
    assert.equal(activeWorkloadSpreads(frozen), first, 'the same answer object');
    assert.deepEqual(activeWorkloadSpreads(spreads), first);
    spreads.splice(1, 1);
    assert.deepEqual(activeWorkloadSpreads(spreads).map((w) => w.metadata?.name), ['b', 'c'], 'a list that changed is answered anew');
  });

  test('activeWorkloadSpreads keeps one per workload, in list order, whatever the order (property)', () => {
    const arb = fc.array(fc.record({ name: fc.constantFrom('a', 'b', 'c', 'd', 'e'), second: fc.integer({ min: 0, max: 3 }), target: fc.constantFrom('web', 'api') }), { maxLength: 8 });
    fc.assert(
      fc.property(arb, (entries) => {
        const unique = entries.filter((e, i) => entries.findIndex((f) => f.name === e.name) === i);
        const spreads = unique.map((e) => ws(e.name, `2026-01-01T00:00:0${e.second}Z`, e.target));
        const active = activeWorkloadSpreads(spreads);
        const reversed = activeWorkloadSpreads([...spreads].reverse());
        assert.deepEqual(new Set(active.map((w) => w.metadata?.name)), new Set(reversed.map((w) => w.metadata?.name)));
        for (const target of ['web', 'api']) {
          const of = spreads.filter((w) => w.spec?.targetRef?.name === target);
          const kept = active.filter((w) => w.spec?.targetRef?.name === target);
          assert.equal(kept.length, of.length === 0 ? 0 : 1);
          for (const other of of) if (other !== kept[0]) assert.ok(takesPrecedence(kept[0] as WorkloadSpread, other));
        }
      }),
    );
  });

  test('a loser\'s status: only DuplicateTarget=True naming the winner; the event only when it is new', () => {
    const winner = ws('a', '2026-01-01T00:00:00Z');
    const loser: WorkloadSpread = { ...ws('b', '2026-01-01T00:00:01Z', 'web', { generation: 3 }), status: { subsetStatuses: [{ name: 'a', replicas: 1, missingReplicas: 0 }] } };
    const first = duplicateTargetStatus(loser, winner, Date.UTC(2026, 0, 1, 0, 1));
    assert.equal(first.status.observedGeneration, 3);
    assert.equal(first.status.subsetStatuses, undefined);
    assert.ok(hasDuplicateTarget(first.status));
    assert.match(first.status.conditions?.[0]?.message ?? '', /Deployment ns\/web is already spread by WorkloadSpread a/);
    assert.equal(first.event?.reason, 'DuplicateTarget');
    assert.equal(first.event?.type, 'Warning');
    const again = duplicateTargetStatus({ ...loser, status: first.status }, winner, Date.UTC(2026, 0, 1, 0, 2));
    assert.deepEqual(again.status, first.status, 'unchanged, including the transition time');
    assert.equal(again.event, undefined);
  });
});

describe('activeWorkloadSpreads in one pass', () => {
  test('for random namespaces (names unique, as in a namespace), it keeps exactly the WorkloadSpreads no other non-deleting one of the list precedes (the rule, asked one by one)', () => {
    const spreadArb = fc.record({
      name: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
      uid: fc.constantFrom('u1', 'u2', 'u3'),
      created: fc.option(fc.constantFrom('2026-01-01T00:00:00Z', '2026-01-01T00:00:01Z', '2026-01-01T00:00:02Z'), { nil: undefined }),
      target: fc.option(fc.constantFrom('web', 'api', ''), { nil: undefined }),
      deleting: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.uniqueArray(spreadArb, { maxLength: 5, selector: (s) => s.name }), (specs) => {
        const spreads = specs.map((s) => {
          const w = ws(s.name, s.created, s.target ?? 'web', { uid: s.uid, ...(s.deleting ? { deletionTimestamp: '2026-01-01T00:01:00Z' } : {}) });
          if (s.target === undefined) delete (w.spec as { targetRef?: unknown }).targetRef;
          return w;
        });
        const oneByOne = spreads.filter((w) => w.metadata.deletionTimestamp !== undefined || precedingWorkloadSpread(w, spreads) === undefined);
        assert.deepEqual(activeWorkloadSpreads(spreads), oneByOne);
      }),
      { numRuns: 2000 },
    );
  });
});
