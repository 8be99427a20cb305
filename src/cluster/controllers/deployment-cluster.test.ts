/**
 * Deployments end to end in the embedded cluster (startCluster: scheduler,
 * kubelet with graceful deletion, the ReplicaSet and Deployment controllers),
 * on the virtual clock: pods land on the fake nodes and run; scaling in
 * removes the pods upstream would remove (lowest pod-deletion-cost first);
 * a rolling update replaces every pod; Recreate starts the new pods only
 * once the old ones are gone — terminated by the kubelet, not just marked.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILTIN } from '../../client/resources.ts';
import { Informer } from '../../client/store.ts';
import type { Pod } from '../../k8s/types.ts';
import type { EmbeddedCluster } from '../cluster.ts';
import { listPods, testCluster } from '../../testing/cluster-bed.ts';
import { deploymentController } from './deployment.ts';
import { nodeLifecycleController } from './node-lifecycle.ts';
import { replicaSetController } from './replicaset.ts';
import { schedulerController } from './scheduler.ts';

let c: EmbeddedCluster;
let nsSeq = 0;

before(async () => {
  c = await testCluster({
    nodes: [{ namePrefix: 'node', count: 3, capacity: { cpu: '4', memory: '16Gi' } }],
    controllers: [schedulerController, nodeLifecycleController, replicaSetController, deploymentController],
  });
  await c.settle();
});
after(async () => {
  await c.stop();
});

async function namespace(): Promise<string> {
  const name = `deploy-${++nsSeq}`;
  await c.client.create(BUILTIN.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}

function deployment(ns: string, replicas: number, strategy: Record<string, unknown> = {}): Record<string, unknown> {
  const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.25', resources: { requests: { cpu: '100m' } } }] } };
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns }, spec: { replicas, selector: { matchLabels: { app: 'web' } }, template, ...strategy } };
}

const setImage = (ns: string, image: string) =>
  c.client.patch(BUILTIN.deployments, 'web', { type: 'merge', body: { spec: { template: { spec: { containers: [{ name: 'app', image, resources: { requests: { cpu: '100m' } } }] } } } } }, { namespace: ns });

const running = (pods: Pod[]) => pods.filter((p) => p.status?.phase === 'Running' && p.metadata.deletionTimestamp === undefined && (p.spec.nodeName ?? '') !== '');

describe('Deployment in the cluster', () => {
  test('pods are scheduled onto the nodes and run; scaling in to 1 keeps the pod with the highest pod-deletion-cost', async () => {
    const ns = await namespace();
    await c.client.create(BUILTIN.deployments, deployment(ns, 4), { namespace: ns });
    await c.settle();
    const pods = await listPods(c, ns);
    assert.equal(running(pods).length, 4);
    assert.ok(new Set(pods.map((p) => p.spec.nodeName)).size >= 2, 'spread over the nodes by the scheduler');
    const names = pods.map((p) => p.metadata.name ?? '').sort();
    for (const [i, name] of names.entries()) {
      const cost = String((i + 1) * 10);
      await c.client.patch(BUILTIN.pods, name, { type: 'merge', body: { metadata: { annotations: { 'controller.kubernetes.io/pod-deletion-cost': cost } } } }, { namespace: ns });
    }
    await c.settle();
    await c.client.scale(BUILTIN.deployments, 'web', 1, { namespace: ns });
    await c.settle();
    const left = await listPods(c, ns);
    assert.deepEqual(left.map((p) => p.metadata.name), [names[3]], 'the three cheaper pods went (and are gone after graceful termination)');
    const d = await c.client.get(BUILTIN.deployments, 'web', { namespace: ns });
    assert.deepEqual(((d['status'] ?? {}) as Record<string, unknown>)['availableReplicas'], 1);
  });

  test('a rolling update replaces every pod with one of the new template, on the nodes', async () => {
    const ns = await namespace();
    await c.client.create(BUILTIN.deployments, deployment(ns, 5), { namespace: ns });
    await c.settle();
    await setImage(ns, 'nginx:1.26');
    await c.settle();
    const pods = await listPods(c, ns);
    assert.equal(pods.length, 5);
    assert.equal(running(pods).length, 5);
    assert.ok(pods.every((p) => p.spec.containers[0]?.image === 'nginx:1.26'));
    const sets = (await c.client.list(BUILTIN.replicasets, { namespace: ns })).items;
    assert.deepEqual(sets.map((rs) => (rs['spec'] as { replicas: number }).replicas).sort(), [0, 5]);
  });

  test('Recreate: the first new pod is created after the last old pod has terminated', async () => {
    const ns = await namespace();
    await c.client.create(BUILTIN.deployments, deployment(ns, 3, { strategy: { type: 'Recreate' } }), { namespace: ns });
    await c.settle();
    const timeline: { at: number; what: 'old gone' | 'new created' }[] = [];
    const watch = new Informer<Pod>({ client: c.client, ref: BUILTIN.pods, namespace: ns, resyncMs: 0, name: 'timeline' });
    watch.store.onDelete(() => {
      timeline.push({ at: c.clock.now(), what: 'old gone' });
    });
    watch.store.onAdd((p) => {
      if (p.spec.containers[0]?.image === 'nginx:1.26') timeline.push({ at: c.clock.now(), what: 'new created' });
    });
    watch.start();
    await watch.waitForSync();
    const start = c.clock.now();
    await setImage(ns, 'nginx:1.26');
    await c.settle();
    await watch.stop();
    const whats = timeline.map((t) => t.what);
    assert.deepEqual(whats, ['old gone', 'old gone', 'old gone', 'new created', 'new created', 'new created']);
    assert.ok((timeline[0]?.at ?? 0) > start, 'old pods take time to terminate (graceful deletion by the kubelet)');
    assert.equal(running(await listPods(c, ns)).length, 3);
  });
});
