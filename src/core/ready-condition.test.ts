import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { Subset, SubsetStatus, WorkloadSpread, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { FAKE_SUBSET_NAME } from '../api/keys.ts';
import { formatTime } from '../k8s/time.ts';
import type { Pod } from '../k8s/types.ts';
import { planReconcile } from './reconcile-plan.ts';
import {
  duplicateReadiness,
  podCounts,
  readinessConditions,
  readinessVerdict,
  readyChanged,
  verdictConditions,
  withReadinessConditions,
  type ReadinessInput,
  type Verdict,
} from './ready-condition.ts';
import { admissionNeedsWrite } from './status-urgency.ts';

const T0 = Date.UTC(2026, 0, 1, 0, 0, 0);
const SUBSETS: Subset[] = [{ name: 'a', maxReplicas: 2 }, { name: 'b', maxReplicas: '50%' }, { name: 'c' }];

function ws(extra: { spec?: Partial<WorkloadSpread['spec']>; annotations?: Record<string, string>; status?: WorkloadSpreadStatus } = {}): WorkloadSpread {
  return {
    metadata: { name: 'ws', namespace: 'ns', generation: 4, ...(extra.annotations ? { annotations: extra.annotations } : {}) },
    spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets: SUBSETS, ...extra.spec },
    ...(extra.status ? { status: extra.status } : {}),
  };
}

let serial = 0;
function pod(opts: { ready?: boolean; terminating?: boolean; phase?: string } = {}): Pod {
  serial++;
  return {
    metadata: { name: `p${serial}`, namespace: 'ns', ...(opts.terminating ? { deletionTimestamp: formatTime(T0) } : {}) },
    spec: { containers: [{ name: 'main' }] },
    status: { phase: opts.phase ?? 'Running', conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }] },
  };
}
const pods = (n: number, opts: Parameters<typeof pod>[0] = {}): Pod[] => Array.from({ length: n }, () => pod(opts));

/** Pods per subset (FAKE: 'fake'), all of one version unless `versions` splits them. */
function groups(counts: Record<string, number | Pod[]>, versions: Record<string, Record<string, number>> = {}) {
  const bySubset = new Map<string, Pod[]>();
  for (const [name, v] of Object.entries(counts)) bySubset.set(name === 'fake' ? FAKE_SUBSET_NAME : name, typeof v === 'number' ? pods(v) : v);
  const byVersion = new Map<string, Map<string, Pod[]>>();
  if (Object.keys(versions).length === 0) byVersion.set('h1', bySubset);
  for (const [version, perSubset] of Object.entries(versions)) {
    byVersion.set(version, new Map(Object.entries(perSubset).map(([s, n]) => [s === 'fake' ? FAKE_SUBSET_NAME : s, pods(n)])));
  }
  return { bySubset, byVersion };
}

const sub = (name: string, extra: Partial<SubsetStatus> = {}): SubsetStatus => ({ name, replicas: 0, missingReplicas: 0, ...extra });

function input(over: Partial<ReadinessInput> & { counts?: Record<string, number | Pod[]> } = {}): ReadinessInput {
  const { counts, ...rest } = over;
  return {
    ws: ws(),
    status: { observedGeneration: 4, subsetStatuses: [sub('a'), sub('b'), sub('c')] },
    ...groups(counts ?? { a: 2, b: 2, c: 1 }),
    workloadReplicas: 5,
    workloadFound: true,
    podsCurrent: true,
    ...rest,
  };
}

const brief = (v: Verdict): [boolean, string, string] => [v.ready, v.ready ? 'Ready' : v.kind, v.reason];

describe('readinessVerdict: what Ready=True means, rule by rule', () => {
  test('every pod of the workload in a subset within its limit: Ready, reason Spread', () => {
    const v = readinessVerdict(input());
    assert.deepEqual(brief(v), [true, 'Ready', 'Spread']);
    assert.equal(v.message, '5 active pods in 3 subsets, every subset within its limit');
  });

  test('the workload does not exist: Reconciling WorkloadNotFound', () => {
    assert.deepEqual(brief(readinessVerdict(input({ workloadFound: false, counts: {}, workloadReplicas: 0 }))), [false, 'Reconciling', 'WorkloadNotFound']);
  });

  test('an admission or a deletion booked and not observed yet: Reconciling PodsPending; places reserved ahead do not count', () => {
    const creating = input({ status: { subsetStatuses: [sub('a', { creatingPods: { 'web-x': formatTime(T0) } }), sub('b'), sub('c')] } });
    assert.deepEqual(brief(readinessVerdict(creating)), [false, 'Reconciling', 'PodsPending']);
    const deleting = input({ status: { versionedSubsetStatuses: { h1: [sub('a', { deletingPods: { p1: formatTime(T0) } })] } } });
    assert.deepEqual(brief(readinessVerdict(deleting)), [false, 'Reconciling', 'PodsPending']);
    const ahead = input({ status: { subsetStatuses: [sub('a', { creatingPods: { 'ahead-1': formatTime(T0) } })] } });
    assert.deepEqual(brief(readinessVerdict(ahead)), [true, 'Ready', 'Spread']);
  });

  test('more active pods than the workload asks for (a scale-in under way, the old "6/4"): Reconciling Converging', () => {
    const v = readinessVerdict(input({ counts: { a: 2, b: 2, c: 2 }, workloadReplicas: 4 }));
    assert.deepEqual(brief(v), [false, 'Reconciling', 'Converging']);
    assert.equal(v.message, 'Deployment web has 6 active pods, it asks for 4');
    assert.deepEqual(brief(readinessVerdict(input({ counts: { a: 1 }, workloadReplicas: 4 }))), [false, 'Reconciling', 'Converging'], 'fewer: a scale-out under way');
  });

  test('terminating and finished pods do not count', () => {
    const counts = { a: [...pods(2), pod({ terminating: true })], b: [...pods(2), pod({ phase: 'Succeeded' })], c: [...pods(1), pod({ phase: 'Failed' })] };
    assert.deepEqual(brief(readinessVerdict(input({ counts }))), [true, 'Ready', 'Spread']);
  });

  test('a Job: at most its parallelism (its pods finish)', () => {
    const job = ws({ spec: { targetRef: { apiVersion: 'batch/v1', kind: 'Job', name: 'train' } } });
    assert.deepEqual(brief(readinessVerdict(input({ ws: job, counts: { a: 1 }, workloadReplicas: 5 }))), [true, 'Ready', 'Spread']);
    assert.deepEqual(brief(readinessVerdict(input({ ws: job, counts: {}, workloadReplicas: 5 }))), [true, 'Ready', 'Spread'], 'a finished Job');
    assert.deepEqual(brief(readinessVerdict(input({ ws: job, counts: { a: 2, b: 2, c: 2 }, workloadReplicas: 5 }))), [false, 'Reconciling', 'Converging']);
  });

  test('the count is not judged when it cannot be known: unknown replicas, or a selector without a replicas path', () => {
    assert.deepEqual(brief(readinessVerdict(input({ counts: { a: 2, c: 7 }, workloadReplicas: -1 }))), [true, 'Ready', 'Spread']);
    const filtered = ws({ spec: { targetFilter: { selector: { matchLabels: { role: 'worker' } } } } });
    assert.deepEqual(brief(readinessVerdict(input({ ws: filtered, counts: { a: 1, c: 1 }, workloadReplicas: 10 }))), [true, 'Ready', 'Spread']);
    const counted = ws({ spec: { targetFilter: { selector: { matchLabels: { role: 'worker' } }, replicasPathList: ['spec.workers'] } } });
    assert.deepEqual(brief(readinessVerdict(input({ ws: counted, counts: { a: 1, c: 1 }, workloadReplicas: 10 }))), [false, 'Reconciling', 'Converging']);
  });

  test('a subset Schedulable=False: Reconciling SubsetUnschedulable (it recovers after the window)', () => {
    const unschedulable = sub('b', { conditions: [{ type: 'Schedulable', status: 'False', reason: 'PodUnschedulable' }] });
    const v = readinessVerdict(input({ status: { subsetStatuses: [sub('a'), unschedulable, sub('c')] } }));
    assert.deepEqual(brief(v), [false, 'Reconciling', 'SubsetUnschedulable']);
    assert.match(v.message, /^subset b is Schedulable=False/);
  });

  test('a subset over its limit: Stalled with one pod version, Reconciling during a rollout or while the rebalancer moves pods', () => {
    const over = { a: 3, b: 2, c: 0 };
    const v = readinessVerdict(input({ counts: over }));
    assert.deepEqual(brief(v), [false, 'Stalled', 'SubsetOverLimit']);
    assert.equal(v.message, 'subset a holds 3 (limit 2); running pods leave it only on a scale-in, a rollout, or with rebalancing on');
    const rollout = groups(over, { h1: { a: 2, b: 2 }, h2: { a: 1 } });
    assert.deepEqual(brief(readinessVerdict({ ...input(), ...rollout })), [false, 'Reconciling', 'SubsetOverLimit']);
    const rebalance = { annotations: { 'workloadspread.io/rebalance': 'true' } };
    assert.deepEqual(brief(readinessVerdict(input({ ws: ws(rebalance), counts: over }))), [false, 'Reconciling', 'SubsetOverLimit'], 'rebalancer not reported yet');
    const moving = input({ ws: ws(rebalance), counts: over, status: { subsetStatuses: [], rebalance: { pending: 1, reason: 'Moving' } } });
    assert.deepEqual(brief(readinessVerdict(moving)), [false, 'Reconciling', 'SubsetOverLimit']);
    const noRoom = input({ ws: ws(rebalance), counts: over, status: { subsetStatuses: [], rebalance: { pending: 1, reason: 'NoRoom' } } });
    assert.deepEqual(brief(readinessVerdict(noRoom)), [false, 'Stalled', 'SubsetOverLimit']);
  });

  test('a percentage limit is resolved against the workload replicas', () => {
    // b: 50 % of 5 → 3; 4 pods there is over.
    assert.deepEqual(brief(readinessVerdict(input({ counts: { a: 1, b: 4 } }))), [false, 'Stalled', 'SubsetOverLimit']);
    assert.deepEqual(brief(readinessVerdict(input({ counts: { a: 2, b: 3 } }))), [true, 'Ready', 'Spread']);
  });

  test('pods in no subset: Stalled PodsOutsideSubsets, Reconciling during a rollout', () => {
    const v = readinessVerdict(input({ counts: { a: 2, b: 2, fake: 1 } }));
    assert.deepEqual(brief(v), [false, 'Stalled', 'PodsOutsideSubsets']);
    assert.match(v.message, /^1 active pod in no subset/);
    const rollout = groups({ a: 2, b: 2, fake: 1 }, { h1: { a: 2, b: 2 }, h2: { fake: 1 } });
    assert.deepEqual(brief(readinessVerdict({ ...input(), ...rollout })), [false, 'Reconciling', 'PodsOutsideSubsets']);
  });

  test('the rebalancer moving pods: Reconciling Rebalancing; a rebalancer that can do nothing does not hold Ready back', () => {
    const rebalance = { annotations: { 'workloadspread.io/rebalance': 'true' } };
    const moving = input({ ws: ws(rebalance), status: { subsetStatuses: [], rebalance: { pending: 2, reason: 'WaitingForReadiness' } } });
    assert.deepEqual(brief(readinessVerdict(moving)), [false, 'Reconciling', 'Rebalancing']);
    const noRoom = input({ ws: ws(rebalance), status: { subsetStatuses: [], rebalance: { pending: 2, reason: 'NoRoom' } } });
    assert.deepEqual(brief(readinessVerdict(noRoom)), [true, 'Ready', 'Spread']);
    const off = input({ status: { subsetStatuses: [], rebalance: { pending: 2, reason: 'Moving' } } });
    assert.deepEqual(brief(readinessVerdict(off)), [true, 'Ready', 'Spread'], 'a leftover rebalance status with rebalancing off');
  });

  test('pod events during the computation keep a not-Ready WorkloadSpread from turning Ready, and a Ready one Ready', () => {
    assert.deepEqual(brief(readinessVerdict(input({ podsCurrent: false }))), [false, 'Reconciling', 'PodsChanging']);
    const ready = ws({ status: { conditions: [{ type: 'Ready', status: 'True', reason: 'Spread' }] } });
    assert.deepEqual(brief(readinessVerdict(input({ ws: ready, podsCurrent: false }))), [true, 'Ready', 'Spread']);
    // A failing rule still shows: the pods seen are enough to know it is not Ready.
    assert.deepEqual(brief(readinessVerdict(input({ ws: ready, podsCurrent: false, counts: { a: 3, b: 2 } }))), [false, 'Stalled', 'SubsetOverLimit']);
  });

  test('the first failing rule decides: pending bookings before the count, the count before the limits', () => {
    const both = input({ counts: { a: 3, b: 2, c: 1 }, status: { subsetStatuses: [sub('a', { creatingPods: { x: formatTime(T0) } })] } });
    assert.deepEqual(brief(readinessVerdict(both)), [false, 'Reconciling', 'PodsPending']);
    assert.deepEqual(brief(readinessVerdict(input({ counts: { a: 3, b: 2, c: 1 } }))), [false, 'Reconciling', 'Converging']);
  });

  test('property: Ready=True implies every subset within its limit, every active pod in a subset, the count met, nothing booked', () => {
    fc.assert(
      fc.property(
        fc.record({
          a: fc.integer({ min: 0, max: 4 }),
          b: fc.integer({ min: 0, max: 4 }),
          c: fc.integer({ min: 0, max: 4 }),
          fake: fc.integer({ min: 0, max: 2 }),
          replicas: fc.integer({ min: -1, max: 12 }),
          creating: fc.boolean(),
        }),
        (r) => {
          const status: WorkloadSpreadStatus = { subsetStatuses: [sub('a', r.creating ? { creatingPods: { x: formatTime(T0) } } : {})] };
          const v = readinessVerdict(input({ counts: { a: r.a, b: r.b, c: r.c, fake: r.fake }, workloadReplicas: r.replicas, status }));
          if (!v.ready) return;
          const bMax = Math.ceil((50 * Math.max(r.replicas, 0)) / 100);
          assert.ok(r.a <= 2 && (r.replicas < 0 || r.b <= bMax), 'within limits');
          assert.equal(r.fake, 0);
          assert.equal(r.creating, false);
          if (r.replicas >= 0) assert.equal(r.a + r.b + r.c, r.replicas);
        },
      ),
    );
  });
});

describe('the conditions of a verdict', () => {
  const notReady: Verdict = { ready: false, kind: 'Reconciling', reason: 'Converging', message: 'm' };
  const ready: Verdict = { ready: true, reason: 'Spread', message: 'ok' };

  test('Ready first, then Reconciling or Stalled while not ready; each with the generation it was set for', () => {
    assert.deepEqual(verdictConditions(notReady, undefined, 7, T0), [
      { type: 'Ready', status: 'False', observedGeneration: 7, lastTransitionTime: formatTime(T0), reason: 'Converging', message: 'm' },
      { type: 'Reconciling', status: 'True', observedGeneration: 7, lastTransitionTime: formatTime(T0), reason: 'Converging', message: 'm' },
    ]);
    assert.deepEqual(verdictConditions(ready, undefined, 7, T0).map((c) => [c.type, c.status]), [['Ready', 'True']]);
  });

  test('lastTransitionTime kept while a status stays, new when it changes', () => {
    const before = verdictConditions(notReady, undefined, 7, T0);
    const again = verdictConditions({ ...notReady, reason: 'PodsPending' }, before, 7, T0 + 60_000);
    assert.deepEqual(again.map((c) => c.lastTransitionTime), [formatTime(T0), formatTime(T0)]);
    const stalled = verdictConditions({ ready: false, kind: 'Stalled', reason: 'SubsetOverLimit', message: 'x' }, before, 7, T0 + 60_000);
    assert.deepEqual(stalled.map((c) => [c.type, c.lastTransitionTime]), [['Ready', formatTime(T0)], ['Stalled', formatTime(T0 + 60_000)]]);
    const turned = verdictConditions(ready, before, 7, T0 + 120_000);
    assert.deepEqual(turned.map((c) => [c.type, c.lastTransitionTime]), [['Ready', formatTime(T0 + 120_000)]]);
  });

  test('other conditions (DuplicateTarget) are kept, before the readiness conditions', () => {
    const dup = { type: 'DuplicateTarget', status: 'True', reason: 'OlderWorkloadSpreadExists' };
    const old = [{ type: 'Ready', status: 'True' }, dup, { type: 'Reconciling', status: 'True' }];
    assert.deepEqual(withReadinessConditions(old, verdictConditions(ready, old, 1, T0)).map((c) => c.type), ['DuplicateTarget', 'Ready']);
  });

  test('a duplicate: DuplicateTarget stays as it is, Ready=False and Stalled=True with its message', () => {
    const message = 'Deployment ns/web is already spread by WorkloadSpread first';
    const dup = { type: 'DuplicateTarget', status: 'True', lastTransitionTime: formatTime(T0), reason: 'OlderWorkloadSpreadExists', message };
    const status = duplicateReadiness(ws(), { observedGeneration: 4, conditions: [dup] }, T0);
    assert.deepEqual(status.conditions?.[0], dup);
    assert.deepEqual(status.conditions?.slice(1).map((c) => [c.type, c.status, c.reason, c.message, c.observedGeneration]), [
      ['Ready', 'False', 'DuplicateTarget', message, 4],
      ['Stalled', 'True', 'DuplicateTarget', message, 4],
    ]);
  });

  test('readinessConditions adds the counts the printer columns read', () => {
    const counts = { a: [...pods(1), pod({ ready: false })], b: pods(2), c: pods(1), fake: pods(1) };
    const { status } = readinessConditions({ ...input({ counts }), now: T0 });
    assert.deepEqual([status.workloadReplicas, status.placedReplicas, status.readyReplicas], [5, 5, 4]);
    assert.deepEqual(podCounts(SUBSETS, groups({ a: 1 }).bySubset, -1), { placedReplicas: 1, readyReplicas: 1 }, 'unknown replicas: no workloadReplicas');
  });
});

describe('which changes are written at once', () => {
  const base = (conditions: NonNullable<WorkloadSpreadStatus['conditions']>, generation = 4): WorkloadSpreadStatus => ({ observedGeneration: generation, subsetStatuses: [sub('a')], conditions });
  const c = (type: string, status: string, reason = 'R', observedGeneration = 4) => ({ type, status, reason, observedGeneration, message: reason });

  test('readyChanged: a change of Ready, Reconciling or Stalled, or of the generation; not of a reason or message alone', () => {
    const converging = base([c('Ready', 'False', 'Converging'), c('Reconciling', 'True', 'Converging')]);
    assert.equal(readyChanged(converging, base([c('Ready', 'False', 'PodsPending'), c('Reconciling', 'True', 'PodsPending')])), false);
    assert.equal(readyChanged(converging, base([c('Ready', 'True', 'Spread')])), true);
    assert.equal(readyChanged(converging, base([c('Ready', 'False', 'SubsetOverLimit'), c('Stalled', 'True', 'SubsetOverLimit')])), true);
    assert.equal(readyChanged(converging, base([c('Ready', 'False', 'Converging', 5), c('Reconciling', 'True', 'Converging', 5)], 5)), true);
    assert.equal(readyChanged(undefined, converging), true, 'the first status');
  });

  test('admission does not read the readiness conditions (the hold decides on readyChanged instead)', () => {
    const spec: Subset[] = [{ name: 'a', maxReplicas: 1 }];
    const a = base([c('Ready', 'False', 'Converging'), c('Reconciling', 'True', 'Converging')]);
    assert.equal(admissionNeedsWrite(spec, a, base([c('Ready', 'True', 'Spread')])), false);
    assert.equal(admissionNeedsWrite(spec, a, base([...(a.conditions ?? []), c('DuplicateTarget', 'True')])), true);
  });
});

describe('planReconcile sets the conditions', () => {
  test('a settled Deployment: Ready=True, and a recomputation changes nothing (D9)', () => {
    const w = ws();
    const marked = (subset: string, i: number): Pod => ({
      ...pod(),
      metadata: {
        name: `web-${subset}${i}`,
        namespace: 'ns',
        creationTimestamp: formatTime(T0 - 600_000),
        labels: { 'pod-template-hash': 'h1', 'workloadspread.io/managed': 'true' },
        annotations: { 'apps.kruise.io/matched-workloadspread': JSON.stringify({ name: 'ws', subset }) },
      },
      spec: { containers: [{ name: 'main' }], nodeName: 'n1' },
    });
    const all = [marked('a', 1), marked('a', 2), marked('b', 1), marked('c', 1)];
    const common = { pods: all, nodeByName: () => undefined, workloadReplicas: 4, latestVersion: 'h1', writeDeletionCost: false };
    const first = planReconcile({ ws: w, now: T0, ...common });
    assert.deepEqual(first.status.conditions?.map((x) => [x.type, x.status, x.reason]), [['Ready', 'True', 'Spread']]);
    const second = planReconcile({ ws: { ...w, status: first.status }, now: T0 + 30_000, ...common });
    assert.equal(second.statusChanged, false);
    const missing = planReconcile({ ws: { ...w, status: first.status }, now: T0 + 30_000, ...common, pods: [], workloadReplicas: 0, workloadFound: false });
    assert.deepEqual(missing.status.conditions?.map((x) => [x.type, x.status, x.reason]), [['Ready', 'False', 'WorkloadNotFound'], ['Reconciling', 'True', 'WorkloadNotFound']]);
  });
});
