/**
 * The embedded scheduler end to end: a cluster on a virtual clock running only
 * the scheduler and the kubelet (so no workload controller interferes), pods
 * created through the API, `settle()`, then assertions on what the API shows.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILTIN } from '../../client/resources.ts';
import { formatTime } from '../../k8s/time.ts';
import type { EmbeddedCluster } from '../cluster.ts';
import { condition, createPods, events, getPod, placement, testCluster } from '../../testing/cluster-bed.ts';
import { backoffFor, schedulerController } from './scheduler.ts';

const clusters: EmbeddedCluster[] = [];
async function cluster(nodes: Parameters<typeof testCluster>[0] extends infer O ? (O extends { nodes?: infer N } ? N : never) : never) {
  const c = await testCluster({ nodes, controllers: [schedulerController] });
  clusters.push(c);
  return c;
}
after(async () => {
  for (const c of clusters) await c.stop();
});

describe('back-off (upstream calculateBackoffDuration)', () => {
  const cases: [number, number][] = [[1, 1000], [2, 2000], [3, 4000], [4, 8000], [5, 10_000], [12, 10_000]];
  for (const [attempts, ms] of cases) test(`attempt ${attempts} → ${ms} ms`, () => assert.equal(backoffFor(attempts), ms));
});

describe('filters, end to end', () => {
  test('selector, taints, cordon: each pod lands where only its rules allow', async () => {
    const c = await cluster([
      { name: 'plain' },
      { name: 'ssd', labels: { disk: 'ssd' } },
      { name: 'gpu', labels: { accel: 'gpu' }, taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] },
      { name: 'cordoned', labels: { disk: 'ssd', accel: 'gpu' } },
    ]);
    assert.deepEqual(await c.cordon('cordoned'), { ok: true });
    await createPods(c, [
      { name: 'wants-ssd', spec: { nodeSelector: { disk: 'ssd' } } },
      { name: 'wants-gpu', spec: { nodeSelector: { accel: 'gpu' }, tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] } },
      { name: 'wants-gpu-untolerated', spec: { nodeSelector: { accel: 'gpu' } } },
      {
        name: 'pinned-by-name',
        spec: { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['plain'] }] }] } } } },
      },
    ]);
    await c.settle();
    assert.deepEqual(await placement(c), { ssd: ['wants-ssd'], gpu: ['wants-gpu'], plain: ['pinned-by-name'], '<none>': ['wants-gpu-untolerated'] });
    const stuck = await getPod(c, 'wants-gpu-untolerated');
    assert.equal(
      condition(stuck, 'PodScheduled')?.message,
      "0/4 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) were unschedulable, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
    );
  });

  test('a pod for another scheduler is left alone', async () => {
    const c = await cluster(['n1']);
    await createPods(c, [{ name: 'other', spec: { schedulerName: 'someone-else' } }]);
    await c.settle();
    const p = await getPod(c, 'other');
    assert.equal(p?.spec.nodeName, undefined);
    assert.equal(condition(p, 'PodScheduled'), undefined);
  });
});

describe('unschedulable pods', () => {
  test('condition, event, and the retry once a node with room appears', async () => {
    const c = await cluster([{ name: 'small', capacity: { cpu: '1' } }]);
    await createPods(c, [{ name: 'big', cpu: '2' }]);
    await c.settle();
    const message = '0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.';
    const cond = condition(await getPod(c, 'big'), 'PodScheduled');
    assert.deepEqual({ status: cond?.status, reason: cond?.reason, message: cond?.message }, { status: 'False', reason: 'Unschedulable', message });
    const failed = (await events(c)).filter((e) => e.reason === 'FailedScheduling');
    assert.deepEqual(failed.map((e) => [e.type, e.note, e.regarding, e.controller]), [['Warning', message, 'big', 'default-scheduler']]);

    assert.deepEqual(await c.addNodes([{ name: 'large', capacity: { cpu: '4' } }]), { ok: true });
    await c.settle();
    const big = await getPod(c, 'big');
    assert.equal(big?.spec.nodeName, 'large');
    assert.equal(big?.status?.phase, 'Running');
    assert.equal(condition(big, 'PodScheduled')?.status, 'True');
    assert.ok((await events(c)).some((e) => e.reason === 'Scheduled' && e.note === 'Successfully assigned default/big to large' && e.type === 'Normal'));
  });

  test('the retry once a pod that held the room is deleted', async () => {
    const c = await cluster([{ name: 'n', capacity: { cpu: '2' } }]);
    await createPods(c, [{ name: 'holder', cpu: '1500m' }]);
    await c.settle();
    await createPods(c, [{ name: 'waiter', cpu: '1' }]);
    await c.settle();
    assert.equal(
      condition(await getPod(c, 'waiter'), 'PodScheduled')?.message,
      '0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.',
    );
    await c.client.delete(BUILTIN.pods, 'holder', { namespace: 'default' });
    await c.settle();
    assert.equal(await getPod(c, 'holder'), undefined);
    assert.equal((await getPod(c, 'waiter'))?.spec.nodeName, 'n');
  });

  test('without any event, an unschedulable pod is tried again after 5 minutes, and settle() does not wait for that', async () => {
    const c = await cluster([{ name: 'n', capacity: { cpu: '1' } }]);
    await createPods(c, [{ name: 'p', cpu: '2' }]);
    assert.equal((await c.settle()).elapsedMs, 0);
    const attempts = async () => (await events(c)).find((e) => e.reason === 'FailedScheduling')?.count;
    assert.equal(await attempts(), 1);
    await c.advance(4 * 60_000);
    assert.equal(await attempts(), 1);
    await c.advance(90_000);
    assert.equal(await attempts(), 2);
  });

  test('a pod that finished no longer holds its room', async () => {
    const c = await cluster([{ name: 'n', capacity: { cpu: '1' }, behaviour: { failPods: true } }]);
    const t0 = c.clock.now();
    await createPods(c, [{ name: 'first', cpu: '1' }, { name: 'second', cpu: '1' }]);
    await c.settle();
    assert.equal((await getPod(c, 'first'))?.status?.phase, 'Failed');
    const second = await getPod(c, 'second');
    assert.equal(second?.spec.nodeName, 'n');
    // Bound when the first pod failed (after the kubelet's 2 s start delay), not at the 5-minute flush.
    assert.equal((second?.status?.conditions ?? []).find((x) => x.type === 'PodScheduled')?.lastTransitionTime, formatTime(t0 + 2000));
  });

  test('a retry waits for the back-off: 1 s after the first failure, 2 s after the second', async () => {
    const c = await cluster([]);
    const t0 = c.clock.now();
    await createPods(c, [{ name: 'p', cpu: '1' }]);
    await c.settle();
    // Attempt 1 failed at t0 (no nodes); a node that is too small arrives at once: attempt 2 runs at t0 + 1 s.
    await c.addNodes([{ name: 'tiny', capacity: { cpu: '500m' } }]);
    await c.settle();
    assert.match(condition(await getPod(c, 'p'), 'PodScheduled')?.message ?? '', /^0\/1 nodes are available: 1 Insufficient cpu/);
    assert.equal(c.clock.now(), t0 + 1000);
    // Attempt 2 failed at t0 + 1 s: attempt 3 may run from t0 + 3 s.
    await c.addNodes([{ name: 'fits', capacity: { cpu: '2' } }]);
    await c.settle();
    const p = await getPod(c, 'p');
    assert.equal(p?.spec.nodeName, 'fits');
    assert.equal(condition(p, 'PodScheduled')?.status, 'True');
    const scheduledAt = (p?.status?.conditions ?? []).find((x) => x.type === 'PodScheduled')?.lastTransitionTime;
    assert.equal(scheduledAt, formatTime(t0 + 3000));
  });
});

describe('the scheduler cache', () => {
  test('a burst sees the pods assumed a moment ago: never more than a node holds', async () => {
    const c = await cluster([{ namePrefix: 'n', count: 2, capacity: { cpu: '2' } }]);
    await createPods(c, Array.from({ length: 5 }, (_, i) => ({ name: `p${i}`, cpu: '1' })));
    await c.settle();
    const where = await placement(c);
    assert.equal(where['n-1']?.length, 2);
    assert.equal(where['n-2']?.length, 2);
    assert.equal(where['<none>']?.length, 1);
  });

  test('equal nodes are filled in turn (least allocated, ties by name)', async () => {
    const c = await cluster([{ namePrefix: 'n', count: 3 }]);
    await createPods(c, Array.from({ length: 6 }, (_, i) => ({ name: `p${i}`, cpu: '100m' })));
    await c.settle();
    assert.deepEqual(await placement(c), { 'n-1': ['p0', 'p3'], 'n-2': ['p1', 'p4'], 'n-3': ['p2', 'p5'] });
  });
});
