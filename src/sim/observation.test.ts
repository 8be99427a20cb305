import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { eventRecord, newEvents, observePodsAndSpreads } from './observation.ts';

const MARKER = 'apps.kruise.io/matched-workloadspread';
const COST = 'controller.kubernetes.io/pod-deletion-cost';

const deployment: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'ns', uid: 'd1' }, spec: { replicas: 5 } } as KubeObject;
const rs = (uid: string, owner: string): KubeObject => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: `web-${uid}`, namespace: 'ns', uid, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: owner, controller: true }] } });

function pod(name: string, owner: string, opts: { subset?: string; ws?: string; cost?: string; phase?: string; ready?: boolean; node?: string; deleting?: boolean; ns?: string } = {}): Pod {
  const annotations: Record<string, string> = {};
  if (opts.subset !== undefined) annotations[MARKER] = JSON.stringify({ name: opts.ws ?? 'spread', subset: opts.subset });
  if (opts.cost !== undefined) annotations[COST] = opts.cost;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: opts.ns ?? 'ns', uid: `u-${name}`, annotations, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner, uid: owner, controller: true }], ...(opts.deleting === true ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: { containers: [], ...(opts.node === undefined ? {} : { nodeName: opts.node }) },
    status: { phase: opts.phase ?? 'Running', conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }] },
  } as Pod;
}

const spread: WorkloadSpread = {
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'WorkloadSpread',
  metadata: { name: 'spread', namespace: 'ns' },
  spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets: [{ name: 'a', maxReplicas: '50%' }, { name: 'b', maxReplicas: 1 }, { name: 'c' }] },
  status: { subsetStatuses: [{ name: 'a', replicas: 1, missingReplicas: 2 }] },
};

describe('observePodsAndSpreads', () => {
  const listing = {
    workloadSpreads: [spread],
    workloads: new Map([['ns/spread', deployment]]),
    replicaSets: [rs('r1', 'd1'), rs('r2', 'd1'), rs('r3', 'other-deployment')],
    pods: [
      pod('web-b', 'r1', { subset: 'b', cost: '200', node: 'n2' }),
      pod('web-a', 'r2', { subset: 'a', cost: '-100', node: 'n1' }),
      pod('web-none', 'r1', { phase: 'Pending', ready: false }),
      pod('web-other', 'r1', { subset: 'a', ws: 'another' }),
      pod('web-gone', 'r1', { subset: 'a', deleting: true }),
      pod('web-done', 'r1', { subset: 'a', phase: 'Succeeded' }),
      pod('stranger', 'r3', { subset: 'a' }),
      pod('web-elsewhere', 'r1', { subset: 'a', ns: 'other-ns' }),
    ],
  };
  const seen = observePodsAndSpreads(listing);

  test('the active pods of the target (through its ReplicaSets, in its namespace), sorted by name', () => {
    assert.deepEqual(seen.pods.map((p) => p.name), ['web-a', 'web-b', 'web-none', 'web-other']);
    assert.deepEqual(seen.rawPods.map((p) => p.metadata?.name), ['web-a', 'web-b', 'web-none', 'web-other']);
  });

  test('each pod as the issue’s JSON shape: subset from this WorkloadSpread’s marker or null, node or null, cost or null', () => {
    assert.deepEqual(seen.pods[0], { name: 'web-a', subset: 'a', node: 'n1', phase: 'Running', ready: true, deletionCost: -100, namespace: 'ns', workloadSpread: 'ns/spread' });
    assert.deepEqual(seen.pods[2], { name: 'web-none', subset: null, node: null, phase: 'Pending', ready: false, deletionCost: null, namespace: 'ns', workloadSpread: 'ns/spread' });
    assert.equal(seen.pods[3]?.subset, null, "another WorkloadSpread's marker is no subset of this one");
  });

  test('the WorkloadSpread as stored, with its target, replicas and limits resolved (50% of 5 rounds up to 3)', () => {
    assert.deepEqual(seen.workloadSpreads, [
      {
        namespace: 'ns',
        name: 'spread',
        status: spread.status,
        target: 'Deployment/web',
        replicas: 5,
        subsets: [
          { name: 'a', maxReplicas: '50%', limit: 3 },
          { name: 'b', maxReplicas: 1, limit: 1 },
          { name: 'c', maxReplicas: null, limit: null },
        ],
      },
    ]);
  });

  test('a workload scaled to 0 still shows the pods that exist (the controller would list none)', () => {
    const zero = observePodsAndSpreads({ ...listing, workloads: new Map([['ns/spread', { ...deployment, spec: { replicas: 0 } } as KubeObject]]) });
    assert.equal(zero.pods.length, 4);
    assert.equal(zero.workloadSpreads[0]?.replicas, 0);
  });

  test('a missing workload: no pods, 0 replicas, an empty status when none is stored', () => {
    const none = observePodsAndSpreads({ ...listing, workloadSpreads: [{ ...spread, status: undefined } as unknown as WorkloadSpread], workloads: new Map() });
    assert.deepEqual(none.pods, []);
    assert.equal(none.workloadSpreads[0]?.replicas, 0);
    assert.deepEqual(none.workloadSpreads[0]?.status, {});
  });
});

describe('newEvents: what was recorded since the last look', () => {
  const ev = (uid: string, reason: string, count?: number, at = '2026-01-01T00:00:00.000000Z'): KubeObject =>
    ({ apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: uid, namespace: 'ns', uid }, reason, type: 'Normal', note: `${reason} happened`, eventTime: at, regarding: { kind: 'WorkloadSpread', name: 'spread' }, reportingController: 'workloadspread-controller', ...(count === undefined ? {} : { series: { count, lastObservedTime: at } }) }) as KubeObject;

  test('new events and grown series count; unchanged ones do not; oldest first', () => {
    const first = newEvents([ev('e2', 'Later', undefined, '2026-01-01T00:00:09.000000Z'), ev('e1', 'Sooner')], new Map());
    assert.deepEqual(first.fresh.map((e) => e.reason), ['Sooner', 'Later']);
    const second = newEvents([ev('e1', 'Sooner'), ev('e2', 'Later', 3, '2026-01-01T00:00:10.000000Z'), ev('e3', 'Brand')], first.seen);
    assert.deepEqual(second.fresh.map((e) => [e.reason, e.count]), [['Brand', 1], ['Later', 2]]);
    const third = newEvents([ev('e1', 'Sooner'), ev('e2', 'Later', 3), ev('e3', 'Brand')], second.seen);
    assert.deepEqual(third.fresh, []);
  });

  test('an events.k8s.io Event as a record', () => {
    assert.deepEqual(eventRecord(ev('e1', 'RecoverSchedulable')), { reason: 'RecoverSchedulable', type: 'Normal', message: 'RecoverSchedulable happened', namespace: 'ns', object: 'WorkloadSpread/spread', reportingController: 'workloadspread-controller', count: 1 });
    assert.deepEqual(eventRecord({ apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: {} } as KubeObject), { reason: '', type: 'Normal', message: '', namespace: '', object: '/', reportingController: '', count: 1 });
  });
});
