import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Subset, SubsetCondition, SubsetStatus, WorkloadSpread } from '../api/workloadspread.ts';
import { formatTime } from '../k8s/time.ts';
import type { Pod } from '../k8s/types.ts';
import {
  applySchedulableConditions,
  applySubsetConditions,
  podScheduleFailed,
  removeSubsetCondition,
  rescheduleCriticalSeconds,
  setSubsetCondition,
} from './reschedule.ts';

const T0 = Date.UTC(2026, 0, 1, 0, 0, 0);
const WS = { namespace: 'ns', name: 'ws' };

function pending(name: string, createdMs: number, opts: { node?: string; phase?: string; reason?: string; deleting?: boolean } = {}): Pod {
  return {
    metadata: {
      name,
      namespace: 'ns',
      creationTimestamp: formatTime(createdMs),
      ...(opts.deleting ? { deletionTimestamp: formatTime(createdMs) } : {}),
    },
    spec: { containers: [{ name: 'main' }], ...(opts.node ? { nodeName: opts.node } : {}) },
    status: {
      phase: opts.phase ?? 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'False', reason: opts.reason ?? 'Unschedulable' }],
    },
  };
}

const cond = (status: 'True' | 'False', reason: string, at: number): SubsetCondition => ({
  type: 'Schedulable',
  status,
  reason,
  lastTransitionTime: formatTime(at),
});

describe('rescheduleCriticalSeconds', () => {
  const cases: { name: string; strategy: WorkloadSpread['spec']['scheduleStrategy']; want: number }[] = [
    { name: 'no strategy', strategy: undefined, want: 0 },
    { name: 'Fixed with adaptive values', strategy: { type: 'Fixed', adaptive: { rescheduleCriticalSeconds: 30 } }, want: 0 },
    { name: 'Adaptive without adaptive block', strategy: { type: 'Adaptive' }, want: 0 },
    { name: 'Adaptive without seconds', strategy: { type: 'Adaptive', adaptive: {} }, want: 0 },
    { name: 'Adaptive 30', strategy: { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 30 } }, want: 30 },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const spec = { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'w' }, subsets: [], ...(c.strategy ? { scheduleStrategy: c.strategy } : {}) };
      assert.equal(rescheduleCriticalSeconds({ spec }), c.want);
    });
  }
});

describe('podScheduleFailed (spec §4.6 step 1)', () => {
  const now = T0 + 60_000;
  const cases: { name: string; pod: Pod; failed: boolean; requeue?: number }[] = [
    { name: 'unschedulable past the critical time', pod: pending('p', T0), failed: true },
    { name: 'exactly at the critical time: not yet (strict); a zero delay, which requeue ignores', pod: pending('p', T0 + 30_000), failed: false, requeue: 0 },
    { name: 'before the critical time: requeue at it', pod: pending('p', T0 + 50_000), failed: false, requeue: 20_000 },
    { name: 'bound to a node', pod: pending('p', T0, { node: 'n1' }), failed: false },
    { name: 'not Pending', pod: pending('p', T0, { phase: 'Running' }), failed: false },
    { name: 'being deleted', pod: pending('p', T0, { deleting: true }), failed: false },
    { name: 'PodScheduled=False for another reason', pod: pending('p', T0, { reason: 'SchedulerError' }), failed: false },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const r = podScheduleFailed(c.pod, 30, now);
      assert.equal(r.failed, c.failed);
      assert.equal(r.requeueAfterMs, c.requeue);
    });
  }
  test('a pod without status or conditions is never schedule-failed', () => {
    assert.equal(podScheduleFailed({ metadata: { name: 'p' }, spec: { containers: [] } }, 30, now).failed, false);
  });
});

describe('setSubsetCondition: the condition-setting rule', () => {
  const base: SubsetStatus = { name: 'a', replicas: 0, missingReplicas: 1 };
  test('same status and reason: unchanged, lastTransitionTime kept', () => {
    const s = { ...base, conditions: [cond('False', 'PodUnschedulable', T0)] };
    assert.deepEqual(setSubsetCondition(s, cond('False', 'PodUnschedulable', T0 + 99_000)), s);
  });
  test('same status, other reason: replaced, lastTransitionTime kept', () => {
    const s = { ...base, conditions: [cond('True', '', T0)] };
    assert.deepEqual(setSubsetCondition(s, cond('True', 'Sufficient', T0 + 99_000)).conditions, [cond('True', 'Sufficient', T0)]);
  });
  test('other status: transition at the new time', () => {
    const s = { ...base, conditions: [cond('True', 'Sufficient', T0)] };
    assert.deepEqual(setSubsetCondition(s, cond('False', 'PodUnschedulable', T0 + 99_000)).conditions, [
      cond('False', 'PodUnschedulable', T0 + 99_000),
    ]);
  });
  test('other condition types are kept; removing the last condition drops the field', () => {
    const other = { type: 'Other', status: 'True' };
    const s = { ...base, conditions: [other, cond('True', 'Sufficient', T0)] };
    assert.deepEqual(removeSubsetCondition(s, 'Schedulable').conditions, [other]);
    assert.deepEqual(removeSubsetCondition({ ...base, conditions: [cond('True', 'Sufficient', T0)] }, 'Schedulable'), base);
  });
});

describe('applySubsetConditions (spec §4.6, D8, D10)', () => {
  const subsets: Subset[] = [{ name: 'a', maxReplicas: 1 }, { name: 'b' }];
  const fresh = (): SubsetStatus[] => [
    { name: 'a', replicas: 1, missingReplicas: 0 },
    { name: 'b', replicas: 0, missingReplicas: -1 },
  ];
  const run = (opts: { old?: SubsetStatus[]; pods?: Pod[]; crit?: number; now: number; window?: number }) =>
    applySubsetConditions({
      ws: WS,
      subsets,
      statuses: fresh(),
      old: opts.old,
      podsOf: (name) => (name === 'a' ? opts.pods ?? [] : []),
      criticalSeconds: opts.crit ?? 30,
      now: opts.now,
      ...(opts.window === undefined ? {} : { recoverySeconds: opts.window }),
    });
  const old = (a?: SubsetCondition, b?: SubsetCondition): SubsetStatus[] => [
    { name: 'a', replicas: 1, missingReplicas: 0, ...(a ? { conditions: [a] } : {}) },
    { name: 'b', replicas: 0, missingReplicas: -1, ...(b ? { conditions: [b] } : {}) },
  ];

  test('crit ≤ 0 removes the condition from every subset', () => {
    const statuses = fresh().map((s) => ({ ...s, conditions: [cond('False', 'PodUnschedulable', T0)] }));
    const r = applySubsetConditions({ ws: WS, subsets, statuses, old: undefined, podsOf: () => [], criticalSeconds: 0, now: T0 });
    assert.deepEqual(r.statuses, fresh());
    assert.deepEqual(r.scheduleFailed, []);
  });

  test('no old condition, no failure: True/Sufficient now; the last subset is always True', () => {
    const r = run({ now: T0 });
    assert.deepEqual(r.statuses.map((s) => s.conditions), [[cond('True', 'Sufficient', T0)], [cond('True', 'Sufficient', T0)]]);
  });

  test('no old condition, a failed pod: False/PodUnschedulable now, and the pod is to be deleted', () => {
    const p = pending('stuck', T0 - 60_000);
    const r = run({ now: T0, pods: [p] });
    assert.deepEqual(r.statuses[0]?.conditions, [cond('False', 'PodUnschedulable', T0)]);
    assert.deepEqual(r.scheduleFailed, [{ subset: 'a', pod: p }]);
  });

  test('old True, a failed pod: transition to False at now', () => {
    const r = run({ now: T0, old: old(cond('True', 'Sufficient', T0 - 500_000)), pods: [pending('stuck', T0 - 60_000)] });
    assert.deepEqual(r.statuses[0]?.conditions, [cond('False', 'PodUnschedulable', T0)]);
  });

  test('old False, failing again: lastTransitionTime kept', () => {
    const r = run({ now: T0, old: old(cond('False', 'PodUnschedulable', T0 - 100_000)), pods: [pending('stuck', T0 - 60_000)] });
    assert.deepEqual(r.statuses[0]?.conditions, [cond('False', 'PodUnschedulable', T0 - 100_000)]);
  });

  test('old True with the ≤v1.9 empty reason, no failure: copied as is (the reference only rewrites on a transition)', () => {
    const r = run({ now: T0, old: old(cond('True', '', T0 - 100_000), cond('True', '', T0 - 100_000)) });
    assert.deepEqual(r.statuses[0]?.conditions, [cond('True', '', T0 - 100_000)]);
    // The last subset is always set to True/Sufficient: the reason changes, the time is kept.
    assert.deepEqual(r.statuses[1]?.conditions, [cond('True', 'Sufficient', T0 - 100_000)]);
  });

  const windowCases = [
    { name: 'old False within the default 300 s window: stays False, requeue at its end', since: T0 - 200_000, window: undefined, recovered: false, requeue: 100_000 },
    { name: 'old False exactly 300 s ago: not yet (strict)', since: T0 - 300_000, window: undefined, recovered: false, requeue: undefined },
    { name: 'old False 300 s + 1 s ago: recovered with RecoverSchedulable', since: T0 - 301_000, window: undefined, recovered: true, requeue: undefined },
    { name: 'a 60 s window (D10): recovered after 61 s', since: T0 - 61_000, window: 60, recovered: true, requeue: undefined },
    { name: 'a 600 s window (D10): still False after 301 s', since: T0 - 301_000, window: 600, recovered: false, requeue: 299_000 },
  ];
  for (const c of windowCases) {
    test(c.name, () => {
      const r = run({ now: T0, old: old(cond('False', 'PodUnschedulable', c.since)), ...(c.window === undefined ? {} : { window: c.window }) });
      assert.equal(r.requeueAfterMs, c.requeue);
      if (c.recovered) {
        assert.deepEqual(r.statuses[0]?.conditions, [cond('True', 'Sufficient', T0)]);
        assert.deepEqual(r.events.map((e) => [e.type, e.reason, e.message]), [
          ['Normal', 'RecoverSchedulable', 'Subset a of WorkloadSpread ns/ws is recovered from unschedulable to schedulable'],
        ]);
      } else {
        assert.deepEqual(r.statuses[0]?.conditions, [cond('False', 'PodUnschedulable', c.since)]);
        assert.deepEqual(r.events, []);
      }
    });
  }

  test('the last subset is never rescheduled: old False becomes True now, its pods are kept', () => {
    const r = applySubsetConditions({
      ws: WS,
      subsets,
      statuses: fresh(),
      old: old(undefined, cond('False', 'PodUnschedulable', T0 - 10_000)),
      podsOf: () => [pending('stuck', T0 - 60_000)],
      criticalSeconds: 30,
      now: T0,
    });
    assert.deepEqual(r.statuses[1]?.conditions, [cond('True', 'Sufficient', T0)]);
    assert.deepEqual(r.scheduleFailed.map((f) => f.subset), ['a']);
  });

  test('a pending pod not yet critical requeues at its deadline', () => {
    const r = run({ now: T0, pods: [pending('young', T0 - 10_000)] });
    assert.equal(r.requeueAfterMs, 20_000);
    assert.deepEqual(r.statuses[0]?.conditions, [cond('True', 'Sufficient', T0)]);
  });

  test('a renamed subset (no old status of that name) starts fresh (user-issues #8)', () => {
    const r = run({ now: T0, old: [{ name: 'zzz', replicas: 0, missingReplicas: 0, conditions: [cond('False', 'PodUnschedulable', T0)] }] });
    assert.deepEqual(r.statuses[0]?.conditions, [cond('True', 'Sufficient', T0)]);
  });
});

describe('applySchedulableConditions: top level and versions', () => {
  const FAKE = 'kruise.io/workloadspread-fake-subset-name';
  const stuck = pending('stuck', T0 - 60_000);
  const versionOnly = pending('version-only', T0 - 60_000);
  const ws: WorkloadSpread = {
    metadata: { name: 'ws', namespace: 'ns' },
    spec: {
      targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'w' },
      subsets: [{ name: 'a', maxReplicas: 1 }, { name: 'b' }],
      scheduleStrategy: { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 30 } },
    },
    status: {
      versionedSubsetStatuses: {
        v1: [
          { name: 'a', replicas: 0, missingReplicas: 1, conditions: [cond('False', 'PodUnschedulable', T0 - 400_000)] },
          { name: 'b', replicas: 0, missingReplicas: -1 },
        ],
      },
    },
  };
  const list = (): SubsetStatus[] => [
    { name: 'a', replicas: 1, missingReplicas: 0 },
    { name: 'b', replicas: 0, missingReplicas: -1 },
  ];

  test('conditions on every list; only top-level failures are deleted', () => {
    const before = structuredClone(ws);
    const r = applySchedulableConditions({
      ws,
      status: { observedGeneration: 1, subsetStatuses: list(), versionedSubsetStatuses: { v1: list(), v2: list() } },
      bySubset: new Map([['a', [stuck]], [FAKE, []]]),
      byVersion: new Map([
        ['v1', new Map([['a', [versionOnly]]])],
        ['v2', new Map([['a', []]])],
      ]),
      now: T0,
    });
    assert.deepEqual(r.scheduleFailed.map((f) => f.pod.metadata?.name), ['stuck']);
    assert.deepEqual(r.status.subsetStatuses?.[0]?.conditions, [cond('False', 'PodUnschedulable', T0)]);
    // v1 had been False for 400 s but fails again: stays False with its old time.
    assert.deepEqual(r.status.versionedSubsetStatuses?.['v1']?.[0]?.conditions, [cond('False', 'PodUnschedulable', T0 - 400_000)]);
    assert.deepEqual(r.status.versionedSubsetStatuses?.['v2']?.[0]?.conditions, [cond('True', 'Sufficient', T0)]);
    assert.deepEqual(r.status.versionedSubsetStatuses?.['v2']?.[1]?.conditions, [cond('True', 'Sufficient', T0)]);
    assert.deepEqual(ws, before);
  });

  test('a versioned subset recovers on its own timeline', () => {
    const r = applySchedulableConditions({
      ws,
      status: { subsetStatuses: list(), versionedSubsetStatuses: { v1: list() } },
      bySubset: new Map(),
      byVersion: new Map([['v1', new Map()]]),
      now: T0,
    });
    assert.deepEqual(r.status.versionedSubsetStatuses?.['v1']?.[0]?.conditions, [cond('True', 'Sufficient', T0)]);
    assert.deepEqual(r.events.map((e) => e.reason), ['RecoverSchedulable']);
    assert.deepEqual(r.scheduleFailed.map((f) => f.pod.metadata?.name), []);
  });
});
