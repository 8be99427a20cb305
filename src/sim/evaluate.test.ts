import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod } from '../k8s/types.ts';
import { evaluateExpectations, type ExpectationResult } from './evaluate.ts';
import type { ExpectCheck } from './expectations.ts';
import type { EventRecord, PodRecord, WorkloadSpreadRecord } from './observation.ts';

const WS = 'default/ws';

function pod(name: string, subset: string | null, extra: Partial<PodRecord> = {}, raw: Partial<Pod> = {}): { record: PodRecord; raw: Pod } {
  return {
    record: { name, subset, node: `node-${subset ?? 'x'}`, phase: 'Running', ready: true, deletionCost: subset === 'a' ? 200 : 100, namespace: 'default', workloadSpread: WS, ...extra },
    raw: { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, ...raw } as Pod,
  };
}

const PODS = [
  pod('p1', 'a', {}, { spec: { containers: [{ name: 'main', resources: { limits: { cpu: '500m' } } }] } }),
  pod('p2', 'a', { deletionCost: null }, { spec: { containers: [{ name: 'main', resources: { limits: { cpu: '500m' } } }] } }),
  pod('p3', 'b', { ready: false, phase: 'Pending', node: null }, { spec: { containers: [{ name: 'main', resources: { limits: { cpu: '300m' } } }] } }),
  pod('p4', 'b', { deletionCost: -200 }, { spec: { containers: [{ name: 'main', resources: { limits: { cpu: '1' } } }] } }),
  pod('p5', null, { deletionCost: -300 }),
  // Another WorkloadSpread's pod: never counted for this one.
  pod('q1', 'a', { workloadSpread: 'default/other' }),
];

const SPREAD: WorkloadSpreadRecord = {
  namespace: 'default',
  name: 'ws',
  target: 'Deployment/web',
  replicas: 5,
  subsets: [
    { name: 'a', maxReplicas: 2, limit: 2 },
    { name: 'b', maxReplicas: null, limit: null },
  ],
  status: {
    subsetStatuses: [
      { name: 'a', replicas: 2, missingReplicas: 0, creatingPods: { p9: '2026-01-01T00:00:00Z' }, conditions: [{ type: 'Schedulable', status: 'False', reason: 'PodUnschedulable' }] },
      { name: 'b', replicas: 3, missingReplicas: -1 },
    ],
  },
};

const NODES: Node[] = [
  { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a', labels: { zone: 'za' } } },
  { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-b', labels: { zone: 'zb' } } },
  { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-x', labels: { zone: 'zb' } } },
];

const EVENTS: EventRecord[] = [
  { reason: 'RecoverSchedulable', type: 'Normal', message: 'Subset a of WorkloadSpread default/ws is recovered', namespace: 'default', object: 'WorkloadSpread/ws', reportingController: 'workloadspread-controller', count: 1 },
  { reason: 'FailedScheduling', type: 'Warning', message: '0/4 nodes are available', namespace: 'default', object: 'Pod/p3', reportingController: 'default-scheduler', count: 3 },
];

function run(check: ExpectCheck, workloadSpread: { namespace: string; name: string } | undefined = { namespace: 'default', name: 'ws' }): ExpectationResult[] {
  return evaluateExpectations({
    spec: { ...(workloadSpread === undefined ? {} : { workloadSpread }), checks: [check] },
    pods: PODS.map((p) => p.record),
    rawPods: PODS.map((p) => p.raw),
    workloadSpreads: [SPREAD],
    events: EVENTS,
    nodes: NODES,
  });
}

const brief = (r: ExpectationResult[]) => r.map((e) => [e.path, e.ok, e.actual]);

describe('evaluateExpectations: one result per value checked, with its path', () => {
  test('subsets: active pods per subset of this WorkloadSpread (marker), other spreads ignored', () => {
    assert.deepEqual(brief(run({ check: 'subsets', counts: { a: 2, b: 1, c: 0 } })), [
      ['subsets.a', true, 2],
      ['subsets.b', false, 2],
      ['subsets.c', true, 0],
    ]);
  });

  test('unassigned, pods, ready', () => {
    assert.deepEqual(brief(run({ check: 'unassigned', count: 1 })), [['unassigned', true, 1]]);
    assert.deepEqual(brief(run({ check: 'pods', count: 5 })), [['pods', true, 5]]);
    assert.deepEqual(brief(run({ check: 'ready', count: 5 })), [['ready', false, 4]]);
  });

  test('costs: sorted distinct costs, pods without the annotation as null (first)', () => {
    assert.deepEqual(brief(run({ check: 'costs', costs: { a: [200, null], b: [100, -200], c: [] } })), [
      ['costs.a', true, [null, 200]],
      ['costs.b', true, [-200, 100]],
      ['costs.c', true, []],
    ]);
    assert.equal(run({ check: 'costs', costs: { a: [200] } })[0]?.ok, false);
  });

  test('status: top-level subset status fields; a number for creatingPods/deletingPods counts the entries; a missing subset is null', () => {
    const r = run({ check: 'status', fields: { a: { missingReplicas: 0, replicas: 2, creatingPods: 1, deletingPods: 0 }, b: { missingReplicas: 0 }, z: { replicas: 0 } } });
    assert.deepEqual(brief(r), [
      ['status.a.missingReplicas', true, 0],
      ['status.a.replicas', true, 2],
      ['status.a.creatingPods', true, 1],
      ['status.a.deletingPods', true, 0],
      ['status.b.missingReplicas', false, -1],
      ['status.z.replicas', false, null],
    ]);
    assert.match(r[5]?.message ?? '', /no status for subset z/);
  });

  test('conditions: status by type; null means absent', () => {
    assert.deepEqual(brief(run({ check: 'conditions', conditions: { a: { Schedulable: 'False' }, b: { Schedulable: null } } })), [
      ['conditions.a.Schedulable', true, 'False'],
      ['conditions.b.Schedulable', true, null],
    ]);
    assert.equal(run({ check: 'conditions', conditions: { a: { Schedulable: 'True' } } })[0]?.ok, false);
  });

  test('events: at least one match by default, an exact count when given; counts add up series; object as Kind or Kind/name', () => {
    const r = run({
      check: 'events',
      events: [{ reason: 'RecoverSchedulable' }, { reason: 'FailedScheduling', count: 3 }, { type: 'Warning', object: 'Pod' }, { object: 'Pod/p9' }, { message: 'is recovered', object: 'WorkloadSpread/ws' }, { reason: 'NoSubsetAvailable', count: 0 }],
    });
    assert.deepEqual(r.map((e) => e.ok), [true, true, true, false, true, true]);
    assert.deepEqual(r[1]?.actual, { reason: 'FailedScheduling', count: 3 });
    assert.match(r[3]?.message ?? '', /events since the previous expect: RecoverSchedulable, FailedScheduling/);
  });

  test('podFields: every active pod of the subset must have the value; the distinct values are reported', () => {
    const r = run({ check: 'podFields', fields: [
      { subset: 'a', field: 'spec.containers[0].resources.limits.cpu', template: '{.spec.containers[0].resources.limits.cpu}', value: '500m' },
      { subset: 'b', field: 'spec.containers[0].resources.limits.cpu', template: '{.spec.containers[0].resources.limits.cpu}', value: '300m' },
      { subset: 'c', field: 'spec.nodeName', template: '{.spec.nodeName}', value: 'x' },
      { field: 'metadata.namespace', template: '{.metadata.namespace}', value: 'default' },
    ] });
    assert.deepEqual(brief(r), [
      ['podFields.a.spec.containers[0].resources.limits.cpu', true, '500m'],
      ['podFields.b.spec.containers[0].resources.limits.cpu', false, ['300m', '1']],
      ['podFields.c.spec.nodeName', false, null],
      ['podFields.*.metadata.namespace', true, 'default'],
    ]);
    assert.match(r[1]?.message ?? '', /1 of 2 pods differ/);
    assert.match(r[2]?.message ?? '', /no active pods in subset c/);
  });

  test('podFields compares scalars by their text (a YAML 1 equals the pod’s "1")', () => {
    const r = run({ check: 'podFields', fields: [{ subset: 'b', field: 'x', template: '{.spec.containers[0].resources.limits.cpu}', value: 1 }] });
    assert.match(r[0]?.message ?? '', /1 of 2 pods differ/);
  });

  test('nodeLabels: active bound pods per value of a node label', () => {
    assert.deepEqual(brief(run({ check: 'nodeLabels', labels: { zone: { za: 2, zb: 2, zc: 0 } } })), [
      ['nodeLabels.zone.za', true, 2],
      ['nodeLabels.zone.zb', true, 2],
      ['nodeLabels.zone.zc', true, 0],
    ]);
  });

  test('rebalance: pods out of place, moves in flight and the reason from status.rebalance (D18); null when it is off', () => {
    const rebalancing: WorkloadSpreadRecord = { ...SPREAD, status: { ...SPREAD.status, rebalance: { pending: 2, moves: [{ pod: 'p4', from: 'b', to: 'a', evictedAt: '2026-01-01T00:00:00Z' }], reason: 'Moving', message: 'waiting' } } };
    const input = (checks: ExpectCheck[], spreads: WorkloadSpreadRecord[]) => ({ spec: { workloadSpread: { namespace: 'default', name: 'ws' }, checks }, pods: [], rawPods: [], workloadSpreads: spreads, events: [], nodes: [] });
    assert.deepEqual(brief(evaluateExpectations(input([{ check: 'rebalance', rebalance: { pending: 2, moves: 1, reason: 'Moving' } }], [rebalancing]))), [
      ['rebalance.pending', true, 2],
      ['rebalance.moves', true, 1],
      ['rebalance.reason', true, 'Moving'],
    ]);
    const off = evaluateExpectations(input([{ check: 'rebalance', rebalance: { reason: null, pending: 0 } }], [SPREAD]));
    assert.deepEqual(brief(off), [
      ['rebalance.pending', false, null],
      ['rebalance.reason', true, null],
    ]);
    assert.match(off[0]?.message ?? '', /no status.rebalance/);
    const wrong = evaluateExpectations(input([{ check: 'rebalance', rebalance: { reason: 'Balanced' } }], [rebalancing]));
    assert.equal(wrong[0]?.message, 'Moving: waiting', 'a failure says what the rebalancer said');
  });

  test('a WorkloadSpread that does not exist (yet) has no pods and no status', () => {
    const r = evaluateExpectations({ spec: { workloadSpread: { namespace: 'default', name: 'nope' }, checks: [{ check: 'pods', count: 0 }, { check: 'status', fields: { a: { replicas: 0 } } }] }, pods: PODS.map((p) => p.record), rawPods: PODS.map((p) => p.raw), workloadSpreads: [SPREAD], events: [], nodes: [] });
    assert.deepEqual(brief(r), [
      ['pods', true, 0],
      ['status.a.replicas', false, null],
    ]);
  });

  test('results come in the order the checks were written', () => {
    const r = evaluateExpectations({ spec: { workloadSpread: { namespace: 'default', name: 'ws' }, checks: [{ check: 'pods', count: 5 }, { check: 'subsets', counts: { b: 2, a: 2 } }] }, pods: PODS.map((p) => p.record), rawPods: PODS.map((p) => p.raw), workloadSpreads: [SPREAD], events: [], nodes: [] });
    assert.deepEqual(r.map((e) => e.path), ['pods', 'subsets.b', 'subsets.a']);
  });
});
