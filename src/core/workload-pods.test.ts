import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { podsForWorkloadSpread } from './workload-pods.ts';

function ws(apiVersion: string, kind: string, targetFilter?: WorkloadSpread['spec']['targetFilter']): WorkloadSpread {
  return {
    metadata: { name: 'ws', namespace: 'ns' },
    spec: { targetRef: { apiVersion, kind, name: 'w' }, subsets: [{ name: 'a' }], ...(targetFilter ? { targetFilter } : {}) },
  };
}

function pod(name: string, ownerUid: string, labels: Record<string, string> = { app: 'web' }): Pod {
  return {
    metadata: { name, namespace: 'ns', labels, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'X', name: 'o', uid: ownerUid, controller: true }] },
    spec: { containers: [{ name: 'main' }] },
  };
}

function obj(uid: string, extra: Record<string, unknown> = {}, meta: Record<string, unknown> = {}): KubeObject {
  return { metadata: { name: uid, namespace: 'ns', uid, ...meta }, ...extra };
}

function rsOf(uid: string, deploymentUid: string, deleting = false): KubeObject {
  return obj(uid, {}, {
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'w', uid: deploymentUid, controller: true }],
    ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
  });
}

const names = (r: ReturnType<typeof podsForWorkloadSpread>) => (r.ok ? r.pods.map((p) => p.metadata.name) : r.error);

describe('podsForWorkloadSpread (spec §5.2)', () => {
  const pods = [pod('rs1-a', 'rs1'), pod('rs0-a', 'rs0'), pod('gone-a', 'rs-gone'), pod('other', 'x'), pod('direct', 'dep')];

  test('Deployment: the union over every non-deleting ReplicaSet it controls, incl. those at 0', () => {
    const r = podsForWorkloadSpread({
      ws: ws('apps/v1', 'Deployment'),
      workload: obj('dep'),
      replicaSets: [rsOf('rs1', 'dep'), rsOf('rs0', 'dep'), rsOf('rs-gone', 'dep', true), rsOf('x', 'other-dep')],
      pods,
      workloadReplicas: 3,
    });
    assert.deepEqual(names(r), ['rs1-a', 'rs0-a']);
  });

  test('Deployment without ReplicaSets: pods owned by the Deployment', () => {
    const r = podsForWorkloadSpread({ ws: ws('apps/v1', 'Deployment'), workload: obj('dep'), replicaSets: [], pods, workloadReplicas: 3 });
    assert.deepEqual(names(r), ['direct']);
  });

  test('replicas 0 → the pods still there (the reference lists none: a pod whose deletion is pending or was refused would be forgotten and its slot given again)', () => {
    const r = podsForWorkloadSpread({ ws: ws('apps/v1', 'Deployment'), workload: obj('dep'), replicaSets: [rsOf('rs1', 'dep')], pods, workloadReplicas: 0 });
    const at3 = podsForWorkloadSpread({ ws: ws('apps/v1', 'Deployment'), workload: obj('dep'), replicaSets: [rsOf('rs1', 'dep')], pods, workloadReplicas: 3 });
    assert.deepEqual(names(r), names(at3));
    assert.ok(names(r).length > 0);
  });

  test('a missing workload → no pods', () => {
    const r = podsForWorkloadSpread({ ws: ws('apps/v1', 'ReplicaSet'), workload: undefined, replicaSets: [], pods, workloadReplicas: 0 });
    assert.deepEqual(names(r), []);
  });

  test('a deleting ReplicaSet → no pods', () => {
    const r = podsForWorkloadSpread({
      ws: ws('apps/v1', 'ReplicaSet'),
      workload: obj('rs1', {}, { deletionTimestamp: '2026-01-01T00:00:00Z' }),
      replicaSets: [],
      pods,
      workloadReplicas: 2,
    });
    assert.deepEqual(names(r), []);
  });

  test('ReplicaSet, CloneSet, StatefulSet: pods owned by the workload UID (any ownerReference)', () => {
    const extra: Pod = {
      metadata: {
        name: 'non-controller-owner',
        namespace: 'ns',
        ownerReferences: [
          { apiVersion: 'v1', kind: 'Thing', name: 't', uid: 'thing', controller: true },
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs1', uid: 'rs1' },
        ],
      },
      spec: { containers: [] },
    };
    for (const [apiVersion, kind] of [['apps/v1', 'ReplicaSet'], ['apps.kruise.io/v1alpha1', 'CloneSet'], ['apps/v1', 'StatefulSet']] as const) {
      const r = podsForWorkloadSpread({ ws: ws(apiVersion, kind), workload: obj('rs1'), replicaSets: [], pods: [...pods, extra], workloadReplicas: 1 });
      assert.deepEqual(names(r), ['rs1-a', 'non-controller-owner'], kind);
    }
  });

  const job = obj('job', { spec: { selector: { matchLabels: { 'job-name': 'w' } } } });
  const jobPods = [pod('j1', 'job', { 'job-name': 'w' }), pod('j-unlabelled', 'job', { other: 'x' }), pod('stranger', 'x', { 'job-name': 'w' })];

  test('Job: owned AND matching job.spec.selector, even with parallelism 0', () => {
    for (const replicas of [2, 0]) {
      const r = podsForWorkloadSpread({ ws: ws('batch/v1', 'Job'), workload: job, replicaSets: [], pods: jobPods, workloadReplicas: replicas });
      assert.deepEqual(names(r), ['j1']);
    }
  });

  test('Job without a selector selects nothing', () => {
    const r = podsForWorkloadSpread({ ws: ws('batch/v1', 'Job'), workload: obj('job', { spec: {} }), replicaSets: [], pods: jobPods, workloadReplicas: 1 });
    assert.deepEqual(names(r), []);
  });

  test('a custom kind falls back to its selector only when it owns no pod', () => {
    const selector = { matches: (labels: Record<string, string>) => labels['app'] === 'web' };
    const rollout = ws('argoproj.io/v1alpha1', 'Rollout');
    const fallback = podsForWorkloadSpread({ ws: rollout, workload: obj('ro'), replicaSets: [], pods, workloadReplicas: 2, fallbackSelector: selector });
    assert.deepEqual(names(fallback), ['rs1-a', 'rs0-a', 'gone-a', 'other', 'direct']);
    const owned = podsForWorkloadSpread({ ws: rollout, workload: obj('x'), replicaSets: [], pods, workloadReplicas: 2, fallbackSelector: selector });
    assert.deepEqual(names(owned), ['other']);
    const none = podsForWorkloadSpread({ ws: rollout, workload: obj('ro'), replicaSets: [], pods, workloadReplicas: 2 });
    assert.deepEqual(names(none), []);
  });

  test('targetFilter.selector narrows the pods', () => {
    const filtered = [pod('a', 'rs1', { role: 'worker' }), pod('b', 'rs1', { role: 'ps' })];
    const r = podsForWorkloadSpread({
      ws: ws('apps/v1', 'ReplicaSet', { selector: { matchLabels: { role: 'worker' } } }),
      workload: obj('rs1'),
      replicaSets: [],
      pods: filtered,
      workloadReplicas: 2,
    });
    assert.deepEqual(names(r), ['a']);
  });

  test('D5: a targetFilter with only replicasPathList selects every pod', () => {
    const r = podsForWorkloadSpread({
      ws: ws('apps/v1', 'ReplicaSet', { replicasPathList: ['spec.replicas'] }),
      workload: obj('rs1'),
      replicaSets: [],
      pods,
      workloadReplicas: 2,
    });
    assert.deepEqual(names(r), ['rs1-a']);
  });

  test('an invalid targetFilter selector is an error, not a crash', () => {
    const r = podsForWorkloadSpread({
      ws: ws('apps/v1', 'ReplicaSet', { selector: { matchExpressions: [{ key: 'a', operator: 'In', values: [] }] } }),
      workload: obj('rs1'),
      replicaSets: [],
      pods,
      workloadReplicas: 2,
    });
    assert.equal(r.ok, false);
  });
});
