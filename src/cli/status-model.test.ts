import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { formatMarker } from '../core/marker.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { workloadSpreadView, type ViewInput } from './status-model.ts';

const DEPLOYMENT: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'ns', uid: 'dep' }, spec: { replicas: 10 } };
const RS: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name: 'web-1', namespace: 'ns', uid: 'rs', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'dep', controller: true }] },
};

function spread(subsets: WorkloadSpread['spec']['subsets'], status?: WorkloadSpread['status'], meta: Record<string, unknown> = {}): WorkloadSpread {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'WorkloadSpread',
    metadata: { name: 'ws', namespace: 'ns', ...meta },
    spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets },
    ...(status === undefined ? {} : { status }),
  };
}

interface PodOptions {
  subset?: string;
  wsName?: string;
  node?: string;
  ready?: boolean;
  phase?: string;
  cost?: string;
  deleting?: boolean;
  owner?: string;
}

function pod(name: string, o: PodOptions = {}): Pod {
  const annotations: Record<string, string> = {};
  if (o.subset !== undefined) annotations['apps.kruise.io/matched-workloadspread'] = formatMarker({ name: o.wsName ?? 'ws', subset: o.subset });
  if (o.cost !== undefined) annotations['controller.kubernetes.io/pod-deletion-cost'] = o.cost;
  const node = o.node ?? 'n1';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'ns',
      annotations,
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: o.owner ?? 'rs', controller: true }],
      ...(o.deleting === true ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: { containers: [{ name: 'main' }], ...(node === '' ? {} : { nodeName: node }) },
    status: { phase: (o.phase ?? 'Running') as 'Running', conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] },
  };
}

function input(ws: WorkloadSpread, pods: Pod[], replicas = 10, workload: KubeObject | undefined = DEPLOYMENT): ViewInput {
  return { ws, workload, replicas: { ok: true, replicas }, replicaSets: [RS], pods };
}

describe('workloadSpreadView: per subset, from the live pods', () => {
  const subsets = [
    { name: 'a', maxReplicas: 3 },
    { name: 'b', maxReplicas: '50%' },
    { name: 'c' },
  ];
  const pods = [
    pod('p1', { subset: 'a', cost: '300' }),
    pod('p2', { subset: 'a', cost: '-100' }),
    pod('p3', { subset: 'a', cost: '300', ready: false }),
    pod('p4', { subset: 'b', cost: '200' }),
    pod('p5', { subset: 'b', node: '', phase: 'Pending', ready: false }),
    pod('p6', { subset: 'c', cost: '100' }),
    pod('gone', { subset: 'c', deleting: true }),
    pod('done', { subset: 'c', phase: 'Succeeded' }),
    pod('stray', {}),
    pod('other-owner', { subset: 'a', owner: 'someone-else' }),
  ];
  const view = workloadSpreadView(input(spread(subsets), pods));
  const row = (name: string) => view.subsets.find((s) => s.name === name);

  const cases: [string, string, keyof NonNullable<ReturnType<typeof row>>, unknown][] = [
    ['an integer maxReplicas is the limit', 'a', 'limit', 3],
    ['a percentage resolves against the replicas, rounded up (50% of 10)', 'b', 'limit', 5],
    ['no maxReplicas: unlimited (null)', 'c', 'limit', null],
    ['pods: active pods whose marker names the subset', 'a', 'pods', 3],
    ['ready: of those, the ready ones', 'a', 'ready', 2],
    ['pending: of those, the ones not bound to a node', 'b', 'pending', 1],
    ['terminating and finished pods do not count', 'c', 'pods', 1],
    ['deletion costs: the range over the pods that carry one', 'a', 'deletionCost', { min: -100, max: 300 }],
    ['a single cost is a range of one value', 'b', 'deletionCost', { min: 200, max: 200 }],
    ['no stored status: missing is null', 'a', 'missing', null],
    ['no stored status: no Schedulable condition', 'a', 'schedulable', null],
  ];
  for (const [name, subset, field, expected] of cases) {
    test(name, () => assert.deepEqual(row(subset)?.[field], expected));
  }

  test('pods of other owners are not the target’s, whatever their marker says', () => {
    assert.ok(!view.pods.some((p) => p.name === 'other-owner'));
  });

  test('a pod of the target without a marker is unassigned, with a reason', () => {
    assert.deepEqual(
      view.unassigned.map((p) => [p.name, p.subset, p.reason]),
      [['stray', null, 'no subset (created before the WorkloadSpread, or no subset had room)']],
    );
  });

  test('totals: placed and ready over the subsets', () => {
    assert.deepEqual([view.placed, view.ready, view.target.replicas, view.target.found], [6, 4, 10, true]);
  });

  test('pods: every active pod of the target, by name, with its subset', () => {
    assert.deepEqual(
      view.pods.map((p) => [p.name, p.subset, p.deletionCost]),
      [
        ['p1', 'a', 300],
        ['p2', 'a', -100],
        ['p3', 'a', 300],
        ['p4', 'b', 200],
        ['p5', 'b', null],
        ['p6', 'c', 100],
        ['stray', null, null],
      ],
    );
  });
});

describe('workloadSpreadView: from the stored status', () => {
  const status: WorkloadSpread['status'] = {
    observedGeneration: 2,
    subsetStatuses: [
      {
        name: 'a',
        replicas: 1,
        missingReplicas: 1,
        creatingPods: { 'p-new': '2026-01-01T00:00:00Z' },
        deletingPods: { 'p-old': '2026-01-01T00:00:00Z', 'p-old2': '2026-01-01T00:00:00Z' },
        conditions: [{ type: 'Schedulable', status: 'False', reason: 'PodUnschedulable', lastTransitionTime: '2026-01-01T00:01:00Z' }],
      },
      { name: 'b', replicas: 0, missingReplicas: -1, conditions: [{ type: 'Schedulable', status: 'True', reason: 'Sufficient' }] },
    ],
  };
  const view = workloadSpreadView(input(spread([{ name: 'a', maxReplicas: 2 }, { name: 'b' }], status, { generation: 2 }), [pod('p1', { subset: 'a' })]));
  const [a, b] = view.subsets;

  test('missing is the stored missingReplicas', () => assert.equal(a?.missing, 1));
  test('an unlimited subset (-1) has no missing count', () => assert.equal(b?.missing, null));
  test('creating and deleting count the bookkeeping entries', () => assert.deepEqual([a?.creating, a?.deleting], [1, 2]));
  test('Schedulable: status, reason and since', () => assert.deepEqual(a?.schedulable, { status: 'False', reason: 'PodUnschedulable', since: '2026-01-01T00:01:00Z' }));
  test('Schedulable True/Sufficient', () => assert.deepEqual(b?.schedulable, { status: 'True', reason: 'Sufficient', since: null }));
  test('observedGeneration = generation: the status is current', () => assert.equal(view.statusCurrent, true));
  test('observedGeneration behind generation: not current', () => {
    const stale = workloadSpreadView(input(spread([{ name: 'a' }], status, { generation: 3 }), []));
    assert.equal(stale.statusCurrent, false);
  });
});

describe('workloadSpreadView: unassigned pods and problems', () => {
  test('a marker naming a subset that left the spec: unassigned, saying so', () => {
    const view = workloadSpreadView(input(spread([{ name: 'a' }]), [pod('p1', { subset: 'old' })]));
    assert.deepEqual(view.unassigned.map((p) => p.reason), ['subset old is not in the spec']);
  });

  test('a marker of another WorkloadSpread: unassigned, naming it', () => {
    const view = workloadSpreadView(input(spread([{ name: 'a' }]), [pod('p1', { subset: 'a', wsName: 'other' })]));
    assert.deepEqual(view.unassigned.map((p) => p.reason), ['placed by WorkloadSpread other']);
  });

  test('a missing target: not found, no pods, a problem', () => {
    const view = workloadSpreadView({ ...input(spread([{ name: 'a', maxReplicas: '50%' }]), [pod('p1', { subset: 'a' })], 0), workload: undefined });
    assert.equal(view.target.found, false);
    assert.deepEqual(view.pods, []);
    assert.deepEqual(view.problems, ['the target Deployment web does not exist']);
    assert.equal(view.subsets[0]?.limit, 0);
  });

  test('replicas unknown (-1): reported, and percentages resolve as the controller would (to nothing)', () => {
    const view = workloadSpreadView({ ...input(spread([{ name: 'a', maxReplicas: 2 }]), []), replicas: { ok: true, replicas: -1 } });
    assert.equal(view.target.replicas, null);
    assert.match(view.problems.join('\n'), /replicas are unknown/);
  });

  test('a replicas error is a problem, not a crash', () => {
    const view = workloadSpreadView({ ...input(spread([{ name: 'a' }]), []), replicas: { ok: false, error: 'spec.x: not found' } });
    assert.deepEqual(view.problems, ["the target's replicas: spec.x: not found"]);
  });

  test('minReplicas is shown', () => {
    const view = workloadSpreadView(input(spread([{ name: 'a', minReplicas: 2, maxReplicas: 5 }]), []));
    assert.deepEqual([view.subsets[0]?.minReplicas, view.subsets[0]?.limit], [2, 5]);
  });

  test('malformed objects (nulls, wrong types) never throw', () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), fc.array(fc.anything(), { maxLength: 4 }), (spec, status, pods) => {
        const ws = { metadata: { name: 'ws', namespace: 'ns' }, spec, status } as unknown as WorkloadSpread;
        const view = workloadSpreadView({ ws, workload: DEPLOYMENT, replicas: { ok: true, replicas: 3 }, replicaSets: [RS], pods: pods as Pod[] });
        assert.equal(typeof view.name, 'string');
      }),
      { numRuns: 300 },
    );
  });
});

describe('workloadSpreadView: rebalancing (D18)', () => {
  const on = { annotations: { 'workloadspread.io/rebalance': 'true' } };

  test('off (no annotation, no status.rebalance): no rebalance part at all', () => {
    assert.equal(workloadSpreadView(input(spread([{ name: 'a' }]), [])).rebalance, undefined);
  });

  test('on, with what the rebalancer last wrote: reason, since, pending, the moves in flight', () => {
    const status: WorkloadSpread['status'] = {
      rebalance: {
        pending: 2,
        moves: [{ pod: 'p9', from: 'b', to: 'a', evictedAt: '2026-01-01T00:05:00Z' }, { pod: 'p8', from: 'kruise.io/workloadspread-fake-subset-name', to: 'a', evictedAt: '2026-01-01T00:05:01Z' }],
        reason: 'Moving',
        message: 'waiting for the replacement of pod ns/p9 (moved from subset b to subset a) to be Ready',
        lastTransitionTime: '2026-01-01T00:05:00Z',
      },
    };
    const view = workloadSpreadView(input(spread([{ name: 'a' }, { name: 'b' }], status, { ...on, annotations: { ...on.annotations, 'workloadspread.io/rebalance-max-in-flight': '2' } }), []));
    assert.deepEqual(view.rebalance, {
      enabled: true,
      maxInFlight: 2,
      reason: 'Moving',
      message: 'waiting for the replacement of pod ns/p9 (moved from subset b to subset a) to be Ready',
      since: '2026-01-01T00:05:00Z',
      pending: 2,
      moves: [
        { pod: 'p9', from: 'b', to: 'a', evictedAt: '2026-01-01T00:05:00Z' },
        { pod: 'p8', from: null, to: 'a', evictedAt: '2026-01-01T00:05:01Z' },
      ],
    });
  });

  test('on, not looked at yet; an invalid value is reported with its error', () => {
    const fresh = workloadSpreadView(input(spread([{ name: 'a' }], undefined, on), []));
    assert.deepEqual([fresh.rebalance?.enabled, fresh.rebalance?.maxInFlight, fresh.rebalance?.reason], [true, 1, null]);
    const bad = workloadSpreadView(input(spread([{ name: 'a' }], undefined, { annotations: { 'workloadspread.io/rebalance': 'yes' } }), []));
    assert.deepEqual([bad.rebalance?.enabled, bad.rebalance?.error], [false, 'annotation workloadspread.io/rebalance is "yes": must be "true" or "false"']);
  });
});
