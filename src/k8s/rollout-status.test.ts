import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { formatTime } from './time.ts';
import type { KubeObject, Pod } from './types.ts';
import { DEPLOYMENT_REVISION_ANNOTATION, isPodAvailable, rolloutStatus, type RolloutStatus } from './rollout-status.ts';

const NOW = Date.UTC(2026, 0, 1, 1, 0, 0);

function pod(name: string, owner: string, readyAgoS: number | undefined, extra: Partial<Pod['metadata']> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `pod-${name}`, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner, uid: owner, controller: true }], ...extra },
    spec: { containers: [{ name: 'm', image: 'i' }] },
    status: {
      phase: readyAgoS === undefined ? 'Pending' : 'Running',
      conditions: readyAgoS === undefined ? [] : [{ type: 'Ready', status: 'True', lastTransitionTime: formatTime(NOW - readyAgoS * 1000) }],
    },
  };
}

function deployment(spec: Record<string, unknown>, status: Record<string, unknown>, generation = 2, conditions: unknown[] = []): KubeObject {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default', uid: 'd1', generation }, spec: { replicas: 2, ...spec }, status: { observedGeneration: generation, conditions, ...status } };
}

function replicaSet(uid: string, revision: number, owner = 'd1'): KubeObject {
  return { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: uid, namespace: 'default', uid, annotations: { [DEPLOYMENT_REVISION_ANNOTATION]: String(revision) }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: owner, controller: true }] } };
}

const waiting = (r: RolloutStatus): string => (r.done ? 'done' : r.waitingFor);

describe('rolloutStatus: Deployment', () => {
  const rs = [replicaSet('old', 1), replicaSet('new', 2)];
  const done = { updatedReplicas: 2, replicas: 2, availableReplicas: 2 };

  test('done: observed, every pod of the newest ReplicaSet, all available', () => {
    const r = rolloutStatus({ workload: deployment({}, done), replicaSets: rs, pods: [pod('a', 'new', 5), pod('b', 'new', 5)], now: NOW });
    assert.deepEqual(r, { done: true });
  });

  test('each unfinished part is named', () => {
    const cases: [string, KubeObject, Pod[], RegExp][] = [
      ['generation not observed', { ...deployment({}, done), status: { observedGeneration: 1, ...done } }, [], /its controller to observe generation 2 \(status is of 1\)/],
      ['not updated', deployment({}, { ...done, updatedReplicas: 1 }), [], /1 of 2 pods updated to the latest template/],
      ['old pods', deployment({}, { ...done, replicas: 3 }), [], /1 old pod\(s\) to terminate/],
      ['unavailable', deployment({ minReadySeconds: 120 }, { ...done, availableReplicas: 1 }), [], /1 of 2 pods available \(Ready for minReadySeconds: 120\)/],
      ['a pod of the old ReplicaSet', deployment({}, done), [pod('a', 'new', 5), pod('b', 'new', 5), pod('c', 'old', 5)], /1 pod\(s\) of an older ReplicaSet to go/],
      ['pods missing', deployment({}, done), [pod('a', 'new', 5)], /1 pods to become 2/],
      // The status says available (its controller's last look), but by now one pod has been Ready only 60 s of 120.
      ['minReadySeconds by the pods', deployment({ minReadySeconds: 120 }, done), [pod('a', 'new', 200), pod('b', 'new', 60)], /1 of 2 pods available \(Ready for minReadySeconds: 120\)/],
    ];
    for (const [name, d, pods, want] of cases) assert.match(waiting(rolloutStatus({ workload: d, replicaSets: rs, pods, now: NOW })), want, name);
  });

  test('minReadySeconds: available once Ready for that long', () => {
    const d = deployment({ minReadySeconds: 120 }, done);
    const pods = [pod('a', 'new', 120), pod('b', 'new', 121)];
    assert.deepEqual(rolloutStatus({ workload: d, replicaSets: rs, pods, now: NOW }), { done: true });
    assert.equal(isPodAvailable(pod('x', 'new', 119), 120, NOW), false);
    assert.equal(isPodAvailable(pod('x', 'new', undefined), 0, NOW), false);
  });

  test('past its progress deadline, or paused: done, with a note (it does not move on by itself)', () => {
    const stuck = deployment({}, { ...done, availableReplicas: 1 }, 2, [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }]);
    const r = rolloutStatus({ workload: stuck, replicaSets: rs, pods: [], now: NOW });
    assert.equal(r.done, true);
    assert.match(r.done ? (r.note ?? '') : '', /exceeded its progress deadline \(600 s\)/);
    const paused = rolloutStatus({ workload: deployment({ paused: true }, { updatedReplicas: 0 }), replicaSets: rs, pods: [], now: NOW });
    assert.deepEqual(paused, { done: true, note: 'paused: its rollout does not move on' });
  });
});

describe('rolloutStatus: StatefulSet, ReplicaSet, CloneSet, Job', () => {
  const sts = (spec: Record<string, unknown>, status: Record<string, unknown>): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db', namespace: 'default', uid: 's1', generation: 1 },
    spec: { replicas: 2, ...spec },
    status: { observedGeneration: 1, readyReplicas: 2, availableReplicas: 2, updatedReplicas: 2, currentRevision: 'r2', updateRevision: 'r2', ...status },
  });
  const stsPods = [pod('db-0', 's1', 5), pod('db-1', 's1', 5)];

  test('StatefulSet: ready, available, its revision reached (or its partition)', () => {
    assert.deepEqual(rolloutStatus({ workload: sts({}, {}), replicaSets: [], pods: stsPods, now: NOW }), { done: true });
    assert.match(waiting(rolloutStatus({ workload: sts({}, { readyReplicas: 1 }), replicaSets: [], pods: stsPods, now: NOW })), /1 of 2 pods Ready/);
    assert.match(waiting(rolloutStatus({ workload: sts({}, { currentRevision: 'r1', updatedReplicas: 1 }), replicaSets: [], pods: stsPods, now: NOW })), /the rolling update to revision r2 to complete \(1 of 2 pods updated\)/);
    const partitioned = sts({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } }, { currentRevision: 'r1', updatedReplicas: 1 });
    assert.deepEqual(rolloutStatus({ workload: partitioned, replicaSets: [], pods: stsPods, now: NOW }), { done: true });
    assert.deepEqual(rolloutStatus({ workload: sts({ updateStrategy: { type: 'OnDelete' } }, { currentRevision: 'r1', updatedReplicas: 0 }), replicaSets: [], pods: stsPods, now: NOW }), { done: true });
    assert.match(waiting(rolloutStatus({ workload: sts({}, {}), replicaSets: [], pods: stsPods.slice(0, 1), now: NOW })), /1 pods to become 2/);
  });

  test('a ReplicaSet of its own: its pods are spec.replicas, all available', () => {
    const rs: KubeObject = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'r', namespace: 'default', uid: 'r1', generation: 1 }, spec: { replicas: 2 }, status: { observedGeneration: 1, replicas: 2, availableReplicas: 2 } };
    assert.deepEqual(rolloutStatus({ workload: rs, replicaSets: [], pods: [pod('a', 'r1', 5), pod('b', 'r1', 5)], now: NOW }), { done: true });
    assert.match(waiting(rolloutStatus({ workload: rs, replicaSets: [], pods: [pod('a', 'r1', 5), pod('b', 'r1', undefined)], now: NOW })), /1 of 2 pods available/);
  });

  test('CloneSet: its update reaches its partition', () => {
    const cs = (updated: number): KubeObject => ({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', metadata: { name: 'c', namespace: 'default', uid: 'c1', generation: 1 }, spec: { replicas: 4, updateStrategy: { partition: '50%' } }, status: { observedGeneration: 1, replicas: 4, updatedReplicas: updated, availableReplicas: 4 } });
    const pods = ['a', 'b', 'c', 'd'].map((n) => pod(n, 'c1', 5));
    assert.deepEqual(rolloutStatus({ workload: cs(2), replicaSets: [], pods, now: NOW }), { done: true });
    assert.match(waiting(rolloutStatus({ workload: cs(1), replicaSets: [], pods, now: NOW })), /1 of 2 pods updated \(partition 2\)/);
  });

  test('Job: finished, or running the pods it wants now', () => {
    const job = (spec: Record<string, unknown>, status: Record<string, unknown>): KubeObject => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j', namespace: 'default', uid: 'j1' }, spec, status });
    const running = [pod('a', 'j1', 1), pod('b', 'j1', 1)];
    assert.deepEqual(rolloutStatus({ workload: job({ parallelism: 2 }, { conditions: [{ type: 'Complete', status: 'True' }] }), replicaSets: [], pods: [], now: NOW }), { done: true });
    assert.deepEqual(rolloutStatus({ workload: job({ parallelism: 2, completions: 5 }, { active: 2, succeeded: 1 }), replicaSets: [], pods: running, now: NOW }), { done: true });
    // One completion left: one pod wanted, two active.
    assert.match(waiting(rolloutStatus({ workload: job({ parallelism: 2, completions: 5 }, { active: 2, succeeded: 4 }), replicaSets: [], pods: running, now: NOW })), /2 active pods in its status to become 1/);
    assert.match(waiting(rolloutStatus({ workload: job({ parallelism: 3 }, { active: 3 }), replicaSets: [], pods: running, now: NOW })), /2 active pods to become 3/);
    assert.deepEqual(rolloutStatus({ workload: job({ suspend: true }, {}), replicaSets: [], pods: [], now: NOW }), { done: true, note: 'suspended' });
  });

  test('other kinds: nothing to wait for', () => {
    assert.deepEqual(rolloutStatus({ workload: { apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout', metadata: { name: 'r' } }, replicaSets: [], pods: [], now: NOW }), { done: true });
  });
});
