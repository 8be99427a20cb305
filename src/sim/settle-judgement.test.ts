/**
 * The settle judgement both backends end a settle on: a WorkloadSpread's
 * status must describe the pods it can see (the manager holds back status
 * writes admission does not need, so "quiet" is not enough), and the
 * scenario's workloads must have finished their rollouts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { WorkloadSpread, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { formatMarker } from '../core/marker.ts';
import { MATCHED_WORKLOADSPREAD_ANNOTATION } from '../api/keys.ts';
import { formatTime } from '../k8s/time.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { observePodsAndSpreads } from './observation.ts';
import { judgeSettled, type SettleJudgement } from './settle-judgement.ts';

const NOW = Date.UTC(2026, 0, 1, 1, 0, 0);

const deployment: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default', uid: 'd1', generation: 1 },
  spec: { replicas: 3 },
  status: { observedGeneration: 1, replicas: 3, updatedReplicas: 3, availableReplicas: 3 },
};
const replicaSet: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name: 'web-1', namespace: 'default', uid: 'rs1', annotations: { 'deployment.kubernetes.io/revision': '1' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd1', controller: true }] },
};

function pod(name: string, subset: string | undefined, ready = true): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      uid: `u-${name}`,
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: 'rs1', controller: true }],
      ...(subset === undefined ? {} : { annotations: { [MATCHED_WORKLOADSPREAD_ANNOTATION]: formatMarker({ name: 'ws', subset }) } }),
    },
    spec: { containers: [{ name: 'm', image: 'i' }], nodeName: 'n1' },
    status: { phase: 'Running', conditions: ready ? [{ type: 'Ready', status: 'True', lastTransitionTime: formatTime(NOW - 60_000) }] : [] },
  };
}

function spread(status: WorkloadSpreadStatus, generation = 1): WorkloadSpread {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'WorkloadSpread',
    metadata: { name: 'ws', namespace: 'default', generation },
    spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets: [{ name: 'a', maxReplicas: 2 }, { name: 'b' }] },
    status,
  };
}

const SETTLED: WorkloadSpreadStatus = {
  observedGeneration: 1,
  subsetStatuses: [
    { name: 'a', replicas: 2, missingReplicas: 0 },
    { name: 'b', replicas: 1, missingReplicas: -1 },
  ],
  placed: '3/3',
  ready: '3/3',
};

function judge(ws: WorkloadSpread, pods: Pod[] = [pod('p1', 'a'), pod('p2', 'a'), pod('p3', 'b')], workloads: KubeObject[] = [deployment]): SettleJudgement {
  const listing = { workloadSpreads: [ws], workloads: new Map([['default/ws', deployment]]), replicaSets: [replicaSet], pods };
  return judgeSettled({ now: NOW, workloadSpreads: [ws], observed: observePodsAndSpreads(listing), workloads, replicaSets: [replicaSet], pods });
}

describe('judgeSettled', () => {
  test('a status that describes the pods, and a finished rollout: settled', () => {
    assert.deepEqual(judge(spread(SETTLED)), { settled: true, waitingFor: [], notes: [] });
  });

  test('a status held back (replicas, missingReplicas, placed, ready of an older moment): not settled, saying which field of which subset', () => {
    const stale = spread({ ...SETTLED, subsetStatuses: [{ name: 'a', replicas: 1, missingReplicas: 1 }, { name: 'b', replicas: 1, missingReplicas: -1 }], placed: '2/3', ready: '2/3' });
    assert.deepEqual(judge(stale).waitingFor, [
      'WorkloadSpread default/ws: subset a: status replicas 1 to become 2, the active pods marked in it',
      'WorkloadSpread default/ws: status placed 2/3 to count 3 pods',
      'WorkloadSpread default/ws: status ready 2/3 to count 3 Ready pods',
    ]);
    const missing = spread({ ...SETTLED, subsetStatuses: [{ name: 'a', replicas: 2, missingReplicas: 1 }, { name: 'b', replicas: 1, missingReplicas: -1 }] });
    assert.deepEqual(judge(missing).waitingFor, ['WorkloadSpread default/ws: subset a: status missingReplicas 1 to become 0 (limit 2, 2 pods)']);
    // Only the Ready count moved (a pod turned Ready): the held display field is still a difference.
    assert.deepEqual(judge(spread(SETTLED), [pod('p1', 'a'), pod('p2', 'a'), pod('p3', 'b', false)], []).waitingFor, ['WorkloadSpread default/ws: status ready 3/3 to count 2 Ready pods']);
  });

  test('a generation not observed, creations or deletions in flight, a missing subset entry, rebalancing moves', () => {
    assert.deepEqual(judge(spread(SETTLED, 2)).waitingFor, ['WorkloadSpread default/ws: its status to observe generation 2 (status is of 1)']);
    const inFlight = spread({ ...SETTLED, subsetStatuses: [{ name: 'a', replicas: 2, missingReplicas: 0, creatingPods: { x: formatTime(NOW) } }] });
    assert.deepEqual(judge(inFlight).waitingFor, ['WorkloadSpread default/ws: subset a: 1 creation(s) (creatingPods) in flight to be seen through', 'WorkloadSpread default/ws: subset b: a status entry']);
    const moving = spread({ ...SETTLED, rebalance: { pending: 1, moves: [{ pod: 'p3', from: 'b', to: 'a', evictedAt: formatTime(NOW) }] } });
    assert.deepEqual(judge(moving).waitingFor, ['WorkloadSpread default/ws: 1 rebalancing move(s) in flight']);
  });

  test('a WorkloadSpread ignored as a duplicate has no subset status: only its generation counts', () => {
    const loser = spread({ observedGeneration: 1, conditions: [{ type: 'DuplicateTarget', status: 'True', lastTransitionTime: formatTime(NOW), reason: 'DuplicateTarget', message: 'm' }] });
    assert.equal(judge(loser).settled, true);
  });

  test('a rollout not finished: not settled, naming the workload; one past its deadline: settled with a note', () => {
    const rolling = { ...deployment, status: { observedGeneration: 1, replicas: 3, updatedReplicas: 3, availableReplicas: 2 } };
    assert.deepEqual(judge(spread(SETTLED), undefined, [rolling]).waitingFor, ['Deployment default/web: 2 of 3 pods available']);
    const stuck = { ...rolling, status: { ...rolling.status, conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }] } };
    const r = judge(spread(SETTLED), undefined, [stuck]);
    assert.equal(r.settled, true);
    assert.match(r.notes[0] ?? '', /^Deployment default\/web: its rollout exceeded its progress deadline/);
  });
});
