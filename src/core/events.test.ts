import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createPodFailedEvent,
  deletePodFailedEvent,
  deleteUnschedulablePodFailedEvent,
  noSubsetAvailableEvent,
  patchDeletionCostFailedEvent,
  recoverSchedulableEvent,
  workloadSpreadRef,
} from './events.ts';

const ws = { namespace: 'shop', name: 'spread' };
const onWs = { kind: 'WorkloadSpread', namespace: 'shop', name: 'spread' };

describe('event builders (spec §4.7, D11)', () => {
  const cases = [
    {
      name: 'CreatePodFailed',
      event: createPodFailedEvent(ws, 'web-1'),
      type: 'Warning',
      reason: 'CreatePodFailed',
      message: "Pod shop/web-1 was expected to be created but it wasn't",
    },
    {
      name: 'DeletePodFailed (expired deleting entry)',
      event: deletePodFailedEvent(ws, 'web-2'),
      type: 'Warning',
      reason: 'DeletePodFailed',
      message: "Pod shop/web-2 was expected to be deleted but it wasn't",
    },
    {
      name: 'DeletePodFailed (unschedulable pod delete failed)',
      event: deleteUnschedulablePodFailedEvent(ws, { namespace: 'shop', name: 'web-3' }, 'zone-a'),
      type: 'Warning',
      reason: 'DeletePodFailed',
      message: 'Failed to delete unschedulabe Pod shop/web-3 in Subset zone-a of WorkloadSpread shop/spread',
    },
    {
      name: 'RecoverSchedulable',
      event: recoverSchedulableEvent(ws, 'zone-a'),
      type: 'Normal',
      reason: 'RecoverSchedulable',
      message: 'Subset zone-a of WorkloadSpread shop/spread is recovered from unschedulable to schedulable',
    },
    {
      name: 'PatchPodDeletionCostFailed prints the cost as a number',
      event: patchDeletionCostFailedEvent(ws, { namespace: 'shop', name: 'web-4' }, 'zone-b', -200),
      type: 'Warning',
      reason: 'PatchPodDeletionCostFailed',
      message: 'WorkloadSpread shop/spread failed to patch deletion-cost annotation to -200 for Pod shop/web-4 in subset zone-b',
    },
  ] as const;
  for (const c of cases) {
    test(c.name, () => {
      assert.equal(c.event.type, c.type);
      assert.equal(c.event.reason, c.reason);
      assert.equal(c.event.message, c.message);
      assert.deepEqual(c.event.involved, onWs);
    });
  }

  test('NoSubsetAvailable names the pod, its workload and the WorkloadSpread', () => {
    const e = noSubsetAvailableEvent(ws, 'web-7', { kind: 'Deployment', name: 'web' });
    assert.equal(e.type, 'Warning');
    assert.equal(e.reason, 'NoSubsetAvailable');
    assert.match(e.message, /WorkloadSpread shop\/spread/);
    assert.match(e.message, /pod shop\/web-7/);
    assert.match(e.message, /Deployment shop\/web/);
    assert.deepEqual(e.involved, onWs);
  });

  test('NoSubsetAvailable for a pod without a name yet', () => {
    const e = noSubsetAvailableEvent(ws, '', { kind: 'Job', name: 'batch' });
    assert.match(e.message, /a new pod of Job shop\/batch/);
  });

  test('workloadSpreadRef tolerates missing metadata', () => {
    assert.deepEqual(workloadSpreadRef({}), { namespace: '', name: '' });
    assert.deepEqual(workloadSpreadRef({ metadata: { namespace: 'a', name: 'b' } }), { namespace: 'a', name: 'b' });
  });
});
