/**
 * The embedded kubelet end to end, on a virtual clock: start delay, the
 * statuses a pod shows on the way, never-start and failing nodes, Job pods,
 * graceful deletion, and pods on nodes no kubelet plays.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILTIN } from '../../client/resources.ts';
import { formatTime } from '../../k8s/time.ts';
import type { Pod } from '../../k8s/types.ts';
import type { ClusterOptions, EmbeddedCluster } from '../cluster.ts';
import { condition, createPods, getPod, testCluster } from '../../testing/cluster-bed.ts';
import { schedulerController } from './scheduler.ts';

const clusters: EmbeddedCluster[] = [];
async function cluster(options: ClusterOptions) {
  const c = await testCluster({ controllers: [schedulerController], ...options });
  clusters.push(c);
  return c;
}
after(async () => {
  for (const c of clusters) await c.stop();
});

const containerState = (p: Pod | undefined) => (p?.status?.containerStatuses?.[0] as { state?: Record<string, Record<string, unknown>> } | undefined)?.state;

describe('starting pods', () => {
  test('ContainerCreating until the start delay, then Running and Ready with an address', async () => {
    const c = await cluster({ nodes: ['n1'] });
    const t0 = c.clock.now();
    await createPods(c, [{ name: 'web' }]);
    await c.advance(1999);
    let p = await getPod(c, 'web');
    assert.equal(p?.status?.phase, 'Pending');
    assert.deepEqual(containerState(p), { waiting: { reason: 'ContainerCreating' } });
    assert.equal(condition(p, 'PodReadyToStartContainers')?.status, 'False');
    assert.deepEqual(condition(p, 'Ready'), { type: 'Ready', status: 'False', lastProbeTime: null, lastTransitionTime: formatTime(t0), reason: 'ContainersNotReady', message: 'containers with unready status: [app]' });
    assert.equal(p?.status?.['hostIP'], '172.18.0.2');
    assert.equal(p?.status?.startTime, formatTime(t0));
    assert.equal(p?.status?.['podIP'], undefined);

    await c.advance(1);
    p = await getPod(c, 'web');
    assert.equal(p?.status?.phase, 'Running');
    assert.equal(p?.status?.['podIP'], '10.244.0.2');
    for (const type of ['PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready', 'PodScheduled']) assert.equal(condition(p, type)?.status, 'True', type);
    assert.equal((p?.status?.conditions ?? []).find((x) => x.type === 'Ready')?.lastTransitionTime, formatTime(t0 + 2000));
    const cs = p?.status?.containerStatuses?.[0] as Record<string, unknown>;
    assert.deepEqual(cs['state'], { running: { startedAt: formatTime(t0 + 2000) } });
    assert.equal(cs['ready'], true);
    assert.equal(cs['started'], true);
    assert.equal(cs['restartCount'], 0);
    assert.equal(cs['image'], 'docker.io/library/nginx:1.25');
    assert.match(String(cs['imageID']), /^docker\.io\/library\/nginx@sha256:[0-9a-f]{64}$/);
    assert.match(String(cs['containerID']), /^containerd:\/\/[0-9a-f]{64}$/);
  });

  test('pod IPs are unique per node and come from its pod CIDR', async () => {
    const c = await cluster({ nodes: ['a', 'b'] });
    await createPods(c, Array.from({ length: 4 }, (_, i) => ({ name: `p${i}` })));
    await c.settle();
    const ips = await Promise.all(['p0', 'p1', 'p2', 'p3'].map(async (n) => String((await getPod(c, n))?.status?.['podIP'])));
    assert.deepEqual(ips.sort(), ['10.244.0.2', '10.244.0.3', '10.244.1.2', '10.244.1.3']);
  });

  test("a node's own start delay, and a readiness probe's initial delay before Ready", async () => {
    const c = await cluster({ nodes: [{ name: 'slow', behaviour: { startDelayMs: 5000 } }] });
    await createPods(c, [{ name: 'probed', spec: { containers: [{ name: 'app', image: 'nginx', readinessProbe: { httpGet: { path: '/', port: 80 }, initialDelaySeconds: 3 } }] } }]);
    await c.advance(5000);
    let p = await getPod(c, 'probed');
    assert.equal(p?.status?.phase, 'Running');
    assert.equal(condition(p, 'Ready')?.status, 'False');
    await c.advance(3000);
    p = await getPod(c, 'probed');
    assert.equal(condition(p, 'Ready')?.status, 'True');
  });

  test('a never-start node keeps pods in ContainerCreating, and settle() still returns', async () => {
    const c = await cluster({ nodes: [{ name: 'stuck', podsNeverStart: true }] });
    await createPods(c, [{ name: 'p' }]);
    const r = await c.settle();
    assert.equal(r.quiescent, true);
    const p = await getPod(c, 'p');
    assert.equal(p?.status?.phase, 'Pending');
    assert.deepEqual(containerState(p), { waiting: { reason: 'ContainerCreating' } });
    // Turning the behaviour off starts what waited.
    assert.deepEqual(c.setKubeletBehaviour('stuck', { neverStart: false }), { ok: true });
    await c.settle();
    assert.equal((await getPod(c, 'p'))?.status?.phase, 'Running');
    assert.deepEqual(c.setKubeletBehaviour('nope', {}), { ok: false, error: "node nope is not played by this cluster's kubelet" });
  });

  test('a failing node fails its pods: phase Failed, exit code 1', async () => {
    const c = await cluster({ nodes: [{ name: 'bad', behaviour: { failPods: true } }] });
    await createPods(c, [{ name: 'p' }]);
    await c.settle();
    const p = await getPod(c, 'p');
    assert.equal(p?.status?.phase, 'Failed');
    assert.deepEqual(containerState(p)?.['terminated']?.['reason'], 'Error');
    assert.deepEqual(containerState(p)?.['terminated']?.['exitCode'], 1);
    assert.equal(condition(p, 'Ready')?.reason, 'PodFailed');
  });

  test('a Job pod succeeds after the configured duration', async () => {
    const c = await cluster({ nodes: ['n'], jobPodDurationMs: 30_000 });
    const job = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'once', namespace: 'default' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'app', image: 'busybox' }] } } } };
    const created = (await c.client.create(BUILTIN.jobs, job)) as { metadata: { uid: string } };
    const owner = { apiVersion: 'batch/v1', kind: 'Job', name: 'once', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true };
    await createPods(c, [{ name: 'once-abc', ownerReferences: [owner], spec: { restartPolicy: 'Never' } }]);
    await c.advance(2000 + 29_999);
    assert.equal((await getPod(c, 'once-abc'))?.status?.phase, 'Running');
    await c.advance(1);
    const p = await getPod(c, 'once-abc');
    assert.equal(p?.status?.phase, 'Succeeded');
    assert.equal(containerState(p)?.['terminated']?.['reason'], 'Completed');
    assert.equal(containerState(p)?.['terminated']?.['exitCode'], 0);
    assert.equal(condition(p, 'Ready')?.reason, 'PodCompleted');
  });
});

describe('deleting pods', () => {
  test('graceful deletion: Terminating until the containers stop, then gone', async () => {
    const c = await cluster({ nodes: ['n'], podStopDelayMs: 4000 });
    await createPods(c, [{ name: 'p' }]);
    await c.settle();
    await c.client.delete(BUILTIN.pods, 'p', { namespace: 'default' });
    await c.advance(3999);
    const terminating = await getPod(c, 'p');
    assert.notEqual(terminating?.metadata.deletionTimestamp, undefined);
    assert.equal(terminating?.metadata.deletionGracePeriodSeconds, 30);
    await c.advance(1);
    assert.equal(await getPod(c, 'p'), undefined);
  });

  test('a grace period shorter than the stop time wins', async () => {
    const c = await cluster({ nodes: ['n'], podStopDelayMs: 10_000 });
    await createPods(c, [{ name: 'p' }]);
    await c.settle();
    const t = c.clock.now();
    await c.client.delete(BUILTIN.pods, 'p', { namespace: 'default', gracePeriodSeconds: 2 });
    await c.settle();
    assert.equal(await getPod(c, 'p'), undefined);
    assert.equal(c.clock.now(), t + 2000);
  });

  test('the pod reports its terminal phase before it goes', async () => {
    const c = await cluster({ nodes: ['n'] });
    await createPods(c, [{ name: 'p' }]);
    await c.settle();
    const seen: string[] = [];
    const watcher = await c.newClient('test-watch');
    const done = new AbortController();
    let opened: () => void = () => {};
    const open = new Promise<void>((resolve) => (opened = resolve));
    const stream = watcher.watchStream('/api/v1/namespaces/default/pods', { fieldSelector: 'metadata.name=p' }, {
      signal: done.signal,
      // Accounted on the virtual clock, so settle() waits until this test has read every event.
      activityStream: watcher.nextStreamId('test'),
      onOpen: () => opened(),
      onEvent: (e) => {
        if (e.type === 'MODIFIED' || e.type === 'DELETED') seen.push(`${e.type}:${String((e.object as Pod).status?.phase)}`);
      },
    });
    await open;
    await c.client.delete(BUILTIN.pods, 'p', { namespace: 'default' });
    await c.settle();
    done.abort();
    await stream;
    assert.deepEqual(seen.slice(-2), ['MODIFIED:Succeeded', 'DELETED:Succeeded']);
  });
});

describe('pods no kubelet plays', () => {
  test('a pod bound to a node that does not exist is left as it is', async () => {
    const c = await cluster({ nodes: ['real'] });
    await createPods(c, [{ name: 'ghost', nodeName: 'nowhere' }]);
    await c.advance(60_000);
    const p = await getPod(c, 'ghost');
    assert.equal(p?.status?.phase, 'Pending');
    assert.equal(p?.status?.containerStatuses, undefined);
  });
});
