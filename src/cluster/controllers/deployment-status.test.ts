/**
 * Deployment status and conditions as pure functions: counts, Available,
 * the Progressing transitions of syncRolloutStatus (complete, progressing,
 * timed out, nothing new), when a stuck rollout is looked at again, and the
 * condition-setting rules.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { formatTime } from '../../k8s/time.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { calculateStatus, deploymentTimedOut, newCondition, rolloutStatus, setCondition, type DeploymentStatus } from './deployment-status.ts';

const T = Date.UTC(2026, 0, 1, 12);

function d(replicas: number, status: DeploymentStatus = {}, extra: Record<string, unknown> = {}): KubeObject {
  return {
    metadata: { name: 'web', generation: 2 },
    spec: { replicas, progressDeadlineSeconds: 600, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } }, ...extra },
    status,
  };
}

function rs(name: string, replicas: number, s: { replicas?: number; ready?: number; available?: number; failure?: string } = {}): KubeObject {
  const status: Record<string, unknown> = { replicas: s.replicas ?? replicas, readyReplicas: s.ready ?? 0, availableReplicas: s.available ?? 0 };
  if (s.failure !== undefined) status['conditions'] = [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: s.failure, lastTransitionTime: formatTime(T) }];
  return { metadata: { name }, spec: { replicas }, status };
}

const progressing = (reason: string, status: string, updatedAt: number, transitionAt = updatedAt) => ({
  type: 'Progressing',
  status,
  reason,
  message: 'm',
  lastUpdateTime: formatTime(updatedAt),
  lastTransitionTime: formatTime(transitionAt),
});

describe('calculateStatus', () => {
  test('counts from the sets (unavailable from their sizes), Available by minimum availability', () => {
    const s = calculateStatus([rs('old', 2, { ready: 2, available: 2 }), rs('new', 3, { replicas: 2, ready: 1, available: 1 })], rs('new', 3, { replicas: 2, ready: 1, available: 1 }), d(4), T);
    assert.deepEqual({ ...s, conditions: undefined }, { observedGeneration: 2, replicas: 4, updatedReplicas: 2, readyReplicas: 3, availableReplicas: 3, unavailableReplicas: 2, conditions: undefined });
    assert.deepEqual(s.conditions?.map((c) => [c.type, c.status, c.reason]), [['Available', 'True', 'MinimumReplicasAvailable']]);
    const low = calculateStatus([rs('new', 4, { available: 2 })], undefined, d(4), T);
    assert.deepEqual(low.conditions?.map((c) => [c.status, c.reason]), [['False', 'MinimumReplicasUnavailable']]);
  });
});

describe('setCondition', () => {
  test('same status and reason: nothing changes; same status, new reason: the transition time is kept', () => {
    const s: DeploymentStatus = { conditions: [progressing('ReplicaSetUpdated', 'True', T - 60_000, T - 120_000)] };
    setCondition(s, newCondition('Progressing', 'True', 'ReplicaSetUpdated', 'other', T));
    assert.equal(s.conditions?.[0]?.lastUpdateTime, formatTime(T - 60_000));
    setCondition(s, newCondition('Progressing', 'True', 'NewReplicaSetAvailable', 'done', T));
    assert.deepEqual([s.conditions?.[0]?.reason, s.conditions?.[0]?.lastUpdateTime, s.conditions?.[0]?.lastTransitionTime], ['NewReplicaSetAvailable', formatTime(T), formatTime(T - 120_000)]);
    setCondition(s, newCondition('Progressing', 'False', 'ProgressDeadlineExceeded', 'late', T + 5_000));
    assert.equal(s.conditions?.[0]?.lastTransitionTime, formatTime(T + 5_000));
  });
});

describe('rolloutStatus (Progressing)', () => {
  const newRS = (available: number) => rs('web-2', 2, { ready: available, available });

  test('complete → NewReplicaSetAvailable', () => {
    const dep = d(2, { observedGeneration: 2, replicas: 2, updatedReplicas: 1, availableReplicas: 1, conditions: [progressing('ReplicaSetUpdated', 'True', T - 5_000)] });
    const r = rolloutStatus([newRS(2)], newRS(2), dep, T);
    assert.equal(r.unchanged, false);
    const cond = r.status.conditions?.find((c) => c.type === 'Progressing');
    assert.deepEqual([cond?.status, cond?.reason, cond?.message], ['True', 'NewReplicaSetAvailable', 'ReplicaSet "web-2" has successfully progressed.']);
  });

  test('progress (more available) → ReplicaSetUpdated with a fresh update time and the old transition time', () => {
    const dep = d(4, { replicas: 2, updatedReplicas: 2, availableReplicas: 0, conditions: [progressing('NewReplicaSetCreated', 'True', T - 50_000, T - 90_000)] });
    const r = rolloutStatus([rs('web-2', 4, { replicas: 2, available: 1, ready: 1 })], rs('web-2', 4, { replicas: 2, available: 1, ready: 1 }), dep, T);
    const cond = r.status.conditions?.find((c) => c.type === 'Progressing');
    assert.deepEqual([cond?.reason, cond?.lastUpdateTime, cond?.lastTransitionTime], ['ReplicaSetUpdated', formatTime(T), formatTime(T - 90_000)]);
  });

  test('no progress past the deadline → ProgressDeadlineExceeded (False)', () => {
    const stuck = rs('web-2', 2, { replicas: 2, available: 0 });
    const dep = d(2, { observedGeneration: 2, replicas: 2, updatedReplicas: 2, conditions: [progressing('ReplicaSetUpdated', 'True', T - 601_000)] });
    assert.equal(deploymentTimedOut(dep, dep['status'] as DeploymentStatus, T), true);
    const r = rolloutStatus([stuck], stuck, dep, T);
    const cond = r.status.conditions?.find((c) => c.type === 'Progressing');
    assert.deepEqual([cond?.status, cond?.reason, cond?.message], ['False', 'ProgressDeadlineExceeded', 'ReplicaSet "web-2" has timed out progressing.']);
  });

  test('no progress before the deadline: nothing to write, check again 1 s after it (at once when under a second away)', () => {
    const stuck = rs('web-2', 2, { replicas: 2, available: 0 });
    const base = { observedGeneration: 2, replicas: 2, updatedReplicas: 2, unavailableReplicas: 2 };
    const avail = { type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable', message: 'Deployment does not have minimum availability.', lastUpdateTime: formatTime(T), lastTransitionTime: formatTime(T) };
    const dep = d(2, { ...base, conditions: [avail, progressing('ReplicaSetUpdated', 'True', T - 200_000)] });
    const r = rolloutStatus([stuck], stuck, dep, T);
    assert.equal(r.unchanged, true);
    assert.equal(r.requeue, 400_000 + 1_000);
    const late = d(2, { ...base, conditions: [avail, progressing('ReplicaSetUpdated', 'True', T - 599_500)] });
    assert.equal(rolloutStatus([stuck], stuck, late, T - 500).requeue, 'now');
  });

  test('a ReplicaFailure of the new set is copied to the Deployment, and removed once gone', () => {
    const failing = rs('web-2', 2, { replicas: 0, failure: 'quota exceeded' });
    const r = rolloutStatus([rs('web-1', 2, { available: 2, ready: 2 }), failing], failing, d(2), T);
    const cond = r.status.conditions?.find((c) => c.type === 'ReplicaFailure');
    assert.deepEqual([cond?.status, cond?.reason, cond?.message], ['True', 'FailedCreate', 'quota exceeded']);
    const healed = rolloutStatus([rs('web-2', 2)], rs('web-2', 2), { ...d(2), status: r.status }, T);
    assert.equal(healed.status.conditions?.some((c) => c.type === 'ReplicaFailure'), false);
  });

  test('without progressDeadlineSeconds there is no Progressing condition', () => {
    const dep = d(1, { conditions: [progressing('ReplicaSetUpdated', 'True', T)] }, { progressDeadlineSeconds: 2147483647 });
    const r = rolloutStatus([rs('web-2', 1, { available: 1 })], rs('web-2', 1, { available: 1 }), dep, T);
    assert.equal(r.status.conditions?.some((c) => c.type === 'Progressing'), false);
  });
});
