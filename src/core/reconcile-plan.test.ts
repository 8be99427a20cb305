import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Subset, WorkloadSpread } from '../api/workloadspread.ts';
import { formatTime } from '../k8s/time.ts';
import type { Node, Pod } from '../k8s/types.ts';
import { planReconcile } from './reconcile-plan.ts';
import type { ReconcileInput } from './reconcile-plan.ts';

const T0 = Date.UTC(2026, 0, 1, 0, 0, 0);
const MARKER = 'apps.kruise.io/matched-workloadspread';
const COST = 'controller.kubernetes.io/pod-deletion-cost';

const nodes = new Map<string, Node>([
  ['n1', { metadata: { name: 'n1', labels: { zone: 'z1' } } }],
  ['n2', { metadata: { name: 'n2', labels: { zone: 'z2' } } }],
]);

function pod(name: string, index: number, opts: { subset?: string; node?: string; pending?: boolean; createdMs?: number } = {}): Pod {
  return {
    metadata: {
      name,
      namespace: 'ns',
      creationTimestamp: formatTime(opts.createdMs ?? T0 - 3_600_000 + index * 1000),
      labels: { app: 'web', 'pod-template-hash': 'h1' },
      ...(opts.subset ? { annotations: { [MARKER]: JSON.stringify({ name: 'ws', subset: opts.subset }) } } : {}),
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-h1', uid: 'rs-uid', controller: true }],
    },
    spec: { containers: [{ name: 'main' }], ...(opts.node ? { nodeName: opts.node } : {}) },
    status: opts.pending
      ? { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] }
      : { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: formatTime(T0 - 60_000) }] },
  };
}

const subsets: Subset[] = [
  { name: 'a', requiredNodeSelectorTerm: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['z1'] }] }, maxReplicas: 2 },
  { name: 'b' },
];

function ws(extra: Partial<WorkloadSpread['spec']> = {}, status?: WorkloadSpread['status']): WorkloadSpread {
  return {
    metadata: { name: 'ws', namespace: 'ns', generation: 3 },
    spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets, ...extra },
    ...(status === undefined ? {} : { status }),
  };
}

function input(w: WorkloadSpread, pods: Pod[], now = T0, extra: Partial<ReconcileInput> = {}): ReconcileInput {
  return {
    ws: w,
    pods,
    nodeByName: (n) => nodes.get(n),
    workloadReplicas: 5,
    latestVersion: 'h1',
    now,
    writeDeletionCost: true,
    ...extra,
  };
}

const basePods = (): Pod[] => [
  pod('a1', 1, { subset: 'a', node: 'n1' }),
  pod('a2', 2, { subset: 'a', node: 'n1' }),
  pod('a3', 3, { subset: 'a', node: 'n1' }),
  pod('b1', 4, { subset: 'b', node: 'n2' }),
  pod('u1', 5, { node: 'n2' }),
];

describe('planReconcile (spec §4.2)', () => {
  test('D21: marked pods without the managed label are labelled; labelled, adopted and finished pods are not', () => {
    const pods = basePods();
    (pods[0] as Pod).metadata.labels = { ...pods[0]?.metadata.labels, 'workloadspread.io/managed': 'true' };
    const done = pod('b2', 6, { subset: 'b', node: 'n2' });
    done.status = { phase: 'Succeeded' };
    const plan = planReconcile(input(ws(), [...pods, done]));
    assert.deepEqual(plan.labelPatches, ['a2', 'a3', 'b1'], 'u1 is adopted (the adoption patch carries the label), b2 is finished');
    assert.deepEqual(plan.adoptions[0]?.patch.metadata.labels, { 'workloadspread.io/managed': 'true' });
  });

  test('group → adopt → costs → status, in one plan', () => {
    const w = ws();
    const pods = basePods();
    const before = structuredClone({ w, pods });
    const plan = planReconcile(input(w, pods));

    assert.deepEqual(plan.adoptions.map((a) => [a.pod, a.subset]), [['u1', 'b']]);
    assert.deepEqual(plan.deletionCostPatches, [
      { pod: 'a1', cost: 200 },
      { pod: 'a2', cost: 200 },
      { pod: 'a3', cost: -100 },
      { pod: 'b1', cost: 100 },
      { pod: 'u1', cost: 100 },
    ]);
    const subsetStatuses = [
      { name: 'a', replicas: 3, missingReplicas: 0 },
      { name: 'b', replicas: 2, missingReplicas: -1 },
    ];
    const overLimit = 'subset a holds 3 (limit 2); running pods leave it only on a scale-in, a rollout, or with rebalancing on';
    const since = formatTime(T0);
    assert.deepEqual(plan.status, {
      observedGeneration: 3,
      subsetStatuses,
      versionedSubsetStatuses: { h1: subsetStatuses },
      subsetCount: 2,
      ready: '5/5',
      placed: '5/5',
      workloadReplicas: 5,
      placedReplicas: 5,
      readyReplicas: 5,
      conditions: [
        { type: 'Ready', status: 'False', observedGeneration: 3, lastTransitionTime: since, reason: 'SubsetOverLimit', message: overLimit },
        { type: 'Stalled', status: 'True', observedGeneration: 3, lastTransitionTime: since, reason: 'SubsetOverLimit', message: overLimit },
      ],
    });
    assert.equal(plan.statusChanged, true);
    assert.deepEqual(plan.scheduleFailed.map((f) => f.pod), []);
    assert.deepEqual(plan.events, []);
    assert.equal(plan.requeueAfterMs, undefined);
    assert.equal(plan.error, undefined);
    assert.deepEqual({ w, pods }, before);
  });

  test('applying the plan and reconciling again changes nothing (D9)', () => {
    const first = planReconcile(input(ws(), basePods()));
    const costs = new Map(first.deletionCostPatches.map((p) => [p.pod, p.cost]));
    const applied = basePods().map((p) => {
      const adoption = first.adoptions.find((a) => a.pod === p.metadata.name);
      const annotations = { ...(p.metadata.annotations ?? {}), ...(adoption ? (adoption.patch.metadata.annotations as Record<string, string>) : {}) };
      annotations[COST] = String(costs.get(p.metadata.name ?? ''));
      return { ...p, metadata: { ...p.metadata, annotations } };
    });
    const second = planReconcile(input(ws({}, first.status), applied, T0 + 5000));
    assert.equal(second.statusChanged, false);
    assert.deepEqual(second.adoptions, []);
    assert.deepEqual(second.deletionCostPatches, []);
  });

  test('writeDeletionCost false → no cost patches (StatefulSet, Job, custom kinds)', () => {
    const plan = planReconcile(input(ws(), basePods(), T0, { writeDeletionCost: false }));
    assert.deepEqual(plan.deletionCostPatches, []);
    assert.equal(plan.adoptions.length, 1);
  });

  test('an old version is drained from the first subsets first', () => {
    const plan = planReconcile(input(ws(), basePods(), T0, { latestVersion: 'h2' }));
    const cost = (name: string) => plan.deletionCostPatches.find((p) => p.pod === name)?.cost;
    // n=2, reversed: a has e=1 (100 / -200), b has e=0 (200).
    assert.deepEqual(['a1', 'a2', 'a3', 'b1'].map(cost), [100, 100, -200, 200]);
  });

  test('Adaptive: a stuck pod marks its subset unschedulable and is to be deleted', () => {
    const w = ws({ scheduleStrategy: { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 30 } } });
    const stuck = pod('stuck', 9, { subset: 'a', pending: true, createdMs: T0 - 60_000 });
    const young = pod('young', 10, { subset: 'a', pending: true, createdMs: T0 - 25_000 });
    const plan = planReconcile(input(w, [pod('a1', 1, { subset: 'a', node: 'n1' }), stuck, young]));
    assert.deepEqual(plan.scheduleFailed.map((f) => f.pod), ['stuck']);
    assert.deepEqual(plan.scheduleFailed, [{ pod: 'stuck', subset: 'a' }]);
    const unschedulable = { type: 'Schedulable', status: 'False', reason: 'PodUnschedulable', lastTransitionTime: formatTime(T0) };
    assert.deepEqual(plan.status.subsetStatuses?.[0]?.conditions, [unschedulable]);
    assert.deepEqual(plan.status.versionedSubsetStatuses?.['h1']?.[0]?.conditions, [unschedulable]);
    assert.equal(plan.requeueAfterMs, 5000);
    // Three active pods in a (max 2): the surplus is the least valuable, the newest unassigned pod.
    assert.equal(plan.deletionCostPatches.find((p) => p.pod === 'young')?.cost, -100);
    assert.equal(plan.deletionCostPatches.find((p) => p.pod === 'stuck')?.cost, 200);
  });

  test('requeue is the smallest positive delay, and identical events are reported once', () => {
    const status = {
      subsetStatuses: [
        { name: 'a', replicas: 0, missingReplicas: 1, creatingPods: { late: formatTime(T0 - 40_000), soon: formatTime(T0 - 18_000) } },
        { name: 'b', replicas: 0, missingReplicas: -1 },
      ],
      versionedSubsetStatuses: {
        h1: [
          { name: 'a', replicas: 0, missingReplicas: 1, creatingPods: { late: formatTime(T0 - 40_000), x: formatTime(T0 - 2_000) } },
          { name: 'b', replicas: 0, missingReplicas: -1 },
        ],
      },
    };
    const plan = planReconcile(input(ws({}, status), [pod('a1', 1, { subset: 'a', node: 'n1' })]));
    assert.equal(plan.requeueAfterMs, 12_000);
    assert.deepEqual(plan.events.map((e) => [e.reason, e.message]), [['CreatePodFailed', "Pod ns/late was expected to be created but it wasn't"]]);
    assert.deepEqual(plan.status.subsetStatuses?.[0], { name: 'a', replicas: 1, missingReplicas: 0, creatingPods: { soon: formatTime(T0 - 18_000) } });
  });

  test('an unresolvable maxReplicas: error, stored status kept, nothing but adoptions', () => {
    const stored = { observedGeneration: 1, subsetStatuses: [{ name: 'a', replicas: 9, missingReplicas: 0 }] };
    const w = ws({ subsets: [{ name: 'a', maxReplicas: '12.5%' }, { name: 'b' }] }, stored);
    const plan = planReconcile(input(w, basePods()));
    assert.match(plan.error ?? '', /subset a/);
    assert.deepEqual(plan.status, stored);
    assert.equal(plan.statusChanged, false);
    assert.deepEqual(plan.deletionCostPatches, []);
    assert.deepEqual(plan.scheduleFailed.map((f) => f.pod), []);
    assert.equal(plan.adoptions.length, 1);
  });

  test('no pods at all: empty subsets, no versions, Ready 0/N', () => {
    const plan = planReconcile(input(ws(), [], T0, { workloadReplicas: 0 }));
    assert.deepEqual(plan.status, {
      observedGeneration: 3,
      subsetStatuses: [
        { name: 'a', replicas: 0, missingReplicas: 2 },
        { name: 'b', replicas: 0, missingReplicas: -1 },
      ],
      subsetCount: 2,
      ready: '0/0',
      placed: '0/0',
      workloadReplicas: 0,
      placedReplicas: 0,
      readyReplicas: 0,
      conditions: [
        { type: 'Ready', status: 'True', observedGeneration: 3, lastTransitionTime: formatTime(T0), reason: 'Spread', message: '0 active pods in 0 subsets, every subset within its limit' },
      ],
    });
  });

  test('pods marked for a subset that was removed are FAKE: 3 pods of a deleted subset-b, n=1 → -200 (spec §9.11)', () => {
    const w = ws({ subsets: [{ name: 'subset-a' }] });
    const pods = [1, 2, 3].map((i) => pod(`b${i}`, i, { subset: 'subset-b', node: 'n1' }));
    const plan = planReconcile(input(w, pods));
    assert.deepEqual(plan.deletionCostPatches, [
      { pod: 'b1', cost: -200 },
      { pod: 'b2', cost: -200 },
      { pod: 'b3', cost: -200 },
    ]);
    assert.deepEqual(plan.adoptions, []);
    assert.deepEqual(plan.status.subsetStatuses, [{ name: 'subset-a', replicas: 0, missingReplicas: -1 }]);
    assert.equal(plan.status.ready, '0/5');
  });
});
