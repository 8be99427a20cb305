import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Subset, SubsetStatus, WorkloadSpread } from '../api/workloadspread.ts';
import { chooseSubsetByOrdinal, podOrdinal } from './statefulset-ordinal.ts';

function spread(subsets: Subset[], topLevel?: SubsetStatus[], versionedLevel?: SubsetStatus[]): WorkloadSpread {
  const ws: WorkloadSpread = {
    metadata: { name: 'ws', namespace: 'ns' },
    spec: { targetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web' }, subsets },
  };
  if (topLevel !== undefined || versionedLevel !== undefined) {
    ws.status = {};
    if (topLevel !== undefined) ws.status.subsetStatuses = topLevel;
    if (versionedLevel !== undefined) ws.status.versionedSubsetStatuses = { versionIgnored: versionedLevel };
  }
  return ws;
}

const unschedulable = (name: string): SubsetStatus => ({
  name,
  replicas: 0,
  missingReplicas: 5,
  conditions: [{ type: 'Schedulable', status: 'False', reason: 'PodUnschedulable' }],
});

const abc: Subset[] = [{ name: 'a', maxReplicas: 5 }, { name: 'b', maxReplicas: 5 }, { name: 'c' }];

describe('podOrdinal', () => {
  const cases: [string, number][] = [
    ['web-0', 0],
    ['web-12', 12],
    ['web-1-2', 2],
    ['web', -1],
    ['web-', -1],
    ['web-x', -1],
    ['-3', 3],
    ['web-2147483647', 2147483647],
    ['web-2147483648', -1],
  ];
  for (const [name, want] of cases) test(`${JSON.stringify(name)} → ${want}`, () => assert.equal(podOrdinal(name), want));
});

describe('chooseSubsetByOrdinal (§2.3 B)', () => {
  const cases: { name: string; ws: WorkloadSpread; pods: Record<string, string | undefined> }[] = [
    {
      name: 'a(5), b(5), c(nil): 0–4 → a, 5–9 → b, 10+ → c',
      ws: spread(abc),
      pods: { 'web-0': 'a', 'web-4': 'a', 'web-5': 'b', 'web-9': 'b', 'web-10': 'c', 'web-1000': 'c' },
    },
    {
      name: 'a unschedulable (top-level): 0–4 → b, 5+ → c',
      ws: spread(abc, [unschedulable('a')]),
      pods: { 'web-0': 'b', 'web-4': 'b', 'web-5': 'c', 'web-9': 'c', 'web-10': 'c' },
    },
    {
      name: 'only the top-level condition counts, not the versioned one',
      ws: spread(abc, undefined, [unschedulable('a')]),
      pods: { 'web-0': 'a', 'web-5': 'b' },
    },
    {
      name: 'a name without an ordinal (-1) goes to the first counted subset',
      ws: spread(abc),
      pods: { web: 'a' },
    },
    {
      name: 'all subsets limited: an ordinal past the sum gets no subset',
      ws: spread([{ name: 'a', maxReplicas: 2 }, { name: 'b', maxReplicas: 3 }]),
      pods: { 'web-1': 'a', 'web-4': 'b', 'web-5': undefined },
    },
    {
      name: 'a string maxReplicas is read as a plain integer; a percentage counts 0',
      ws: spread([{ name: 'a', maxReplicas: '2' }, { name: 'b', maxReplicas: '50%' }, { name: 'c', maxReplicas: 1 }]),
      pods: { 'web-1': 'a', 'web-2': 'c', 'web-3': undefined },
    },
    {
      name: 'a single limited unschedulable subset takes nothing',
      ws: spread([{ name: 'only', maxReplicas: 3 }], [unschedulable('only')]),
      pods: { 'web-0': undefined },
    },
    {
      name: 'maxReplicas 0 adds nothing: ordinals skip to the next subset',
      ws: spread([{ name: 'a', maxReplicas: 0 }, { name: 'b', maxReplicas: 2 }]),
      pods: { 'web-0': 'b', 'web-1': 'b', 'web-2': undefined },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      for (const [pod, want] of Object.entries(c.pods)) {
        assert.equal(chooseSubsetByOrdinal(c.ws, pod), want, pod);
      }
    });
  }

  test('property: with int limits, each subset receives exactly its limit of consecutive ordinals', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 5 }), (limits) => {
        const ws = spread(limits.map((m, i) => ({ name: `s${i}`, maxReplicas: m })));
        const total = limits.reduce((a, b) => a + b, 0);
        const counts = new Map<string, number>();
        for (let ordinal = 0; ordinal < total + 3; ordinal++) {
          const subset = chooseSubsetByOrdinal(ws, `web-${ordinal}`);
          if (ordinal >= total) assert.equal(subset, undefined);
          if (subset !== undefined) counts.set(subset, (counts.get(subset) ?? 0) + 1);
        }
        limits.forEach((m, i) => assert.equal(counts.get(`s${i}`) ?? 0, m));
      }),
    );
  });
});
