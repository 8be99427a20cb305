import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { SubsetStatus, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import type { Subset } from '../api/workloadspread.ts';
import { admissionNeedsWrite } from './status-urgency.ts';

const SPEC: Subset[] = [{ name: 'a', maxReplicas: 1 }, { name: 'b' }];

const T = '2026-01-01T00:00:00Z';
const sub = (name: string, replicas: number, missing: number, creating: string[] = [], deleting: string[] = [], extra: Partial<SubsetStatus> = {}): SubsetStatus => ({
  name,
  replicas,
  missingReplicas: missing,
  ...(creating.length > 0 ? { creatingPods: Object.fromEntries(creating.map((c) => [c, T])) } : {}),
  ...(deleting.length > 0 ? { deletingPods: Object.fromEntries(deleting.map((d) => [d, T])) } : {}),
  ...extra,
});
const status = (subsets: SubsetStatus[], extra: Partial<WorkloadSpreadStatus> = {}): WorkloadSpreadStatus => ({
  observedGeneration: 1,
  subsetStatuses: subsets,
  versionedSubsetStatuses: { h1: subsets },
  ready: '0/3',
  placed: '3/3',
  ...extra,
});

describe('admissionNeedsWrite (issue 13)', () => {
  const stored = status([sub('a', 1, 0, ['p-1']), sub('b', 0, -1)]);

  test('a reserved pod showing up (creating → replicas) and display fields: no', () => {
    assert.equal(admissionNeedsWrite(SPEC, stored, status([sub('a', 2, 0), sub('b', 0, -1)], { ready: '2/3', placed: '2/3' })), false);
  });

  test('an observed deletion leaving deletingPods as replicas drop: no', () => {
    const before = status([sub('a', 2, 1, [], ['p-2']), sub('b', 0, -1)]);
    assert.equal(admissionNeedsWrite(SPEC, before, status([sub('a', 1, 1), sub('b', 0, -1)])), false);
  });

  test('room that changes (a stale reservation dropped, a limit changed): yes', () => {
    assert.equal(admissionNeedsWrite(SPEC, stored, status([sub('a', 1, 1), sub('b', 0, -1)])), true);
    assert.equal(admissionNeedsWrite(SPEC, stored, status([sub('a', 1, 1, ['p-1']), sub('b', 0, -1)])), true);
  });

  test('a pod counted in an unlimited subset: no — unless the subset has a minReplicas (D2 reads its occupancy)', () => {
    assert.equal(admissionNeedsWrite(SPEC, stored, status([sub('a', 1, 0, ['p-1']), sub('b', 1, -1)])), false);
    const withMin: Subset[] = [{ name: 'a', maxReplicas: 1 }, { name: 'b', minReplicas: 2 }];
    assert.equal(admissionNeedsWrite(withMin, stored, status([sub('a', 1, 0, ['p-1']), sub('b', 1, -1)])), true);
  });

  test('Schedulable turning False, a new version entry, a new generation, a WorkloadSpread condition, the first status: yes', () => {
    const unschedulable = sub('a', 1, 0, ['p-1'], [], { conditions: [{ type: 'Schedulable', status: 'False', lastTransitionTime: T }] });
    assert.equal(admissionNeedsWrite(SPEC, stored, status([unschedulable, sub('b', 0, -1)])), true);
    assert.equal(admissionNeedsWrite(SPEC, stored, { ...stored, versionedSubsetStatuses: { ...stored.versionedSubsetStatuses, h2: [sub('a', 0, 1), sub('b', 0, -1)] } }), true);
    assert.equal(admissionNeedsWrite(SPEC, stored, { ...stored, observedGeneration: 2 }), true);
    assert.equal(admissionNeedsWrite(SPEC, stored, { ...stored, conditions: [{ type: 'DuplicateTarget', status: 'True' }] }), true);
    assert.equal(admissionNeedsWrite(SPEC, undefined, stored), true);
  });

  test('a condition message or transition time only: no', () => {
    const c = (message: string): SubsetStatus => sub('a', 1, 0, ['p-1'], [], { conditions: [{ type: 'Schedulable', status: 'True', message, lastTransitionTime: T }] });
    assert.equal(admissionNeedsWrite(SPEC, status([c('x'), sub('b', 0, -1)]), status([c('y'), sub('b', 0, -1)])), false);
  });
});
