/**
 * StatefulSets, Jobs, the garbage collector and PodDisruptionBudgets end to
 * end in the embedded cluster (startCluster: scheduler, kubelet, node
 * lifecycle, the ReplicaSet and Deployment controllers and these four), on
 * the virtual clock: pods are scheduled onto fake nodes, started by the
 * kubelet, finished (Job pods) and gracefully deleted by it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILTIN } from '../../client/resources.ts';
import { Informer } from '../../client/store.ts';
import type { KubeObject, Pod } from '../../k8s/types.ts';
import type { EmbeddedCluster } from '../cluster.ts';
import { listPods, testCluster } from '../../testing/cluster-bed.ts';
import { deploymentController } from './deployment.ts';
import { disruptionController, type PdbStatus } from './disruption.ts';
import { garbageCollector } from './garbage-collector.ts';
import { jobController } from './job.ts';
import { nodeLifecycleController } from './node-lifecycle.ts';
import { replicaSetController } from './replicaset.ts';
import { schedulerController } from './scheduler.ts';
import { statefulSetController } from './statefulset.ts';

let c: EmbeddedCluster;
let nsSeq = 0;

before(async () => {
  c = await testCluster({
    nodes: [{ name: 'node-a', capacity: { cpu: '8', memory: '32Gi' } }, { name: 'node-b', capacity: { cpu: '8', memory: '32Gi' } }],
    controllers: [schedulerController, nodeLifecycleController, replicaSetController, deploymentController, statefulSetController, jobController, garbageCollector, disruptionController],
  });
  await c.settle();
});

after(async () => {
  await c.stop();
});

async function namespace(): Promise<string> {
  const name = `e2e-${++nsSeq}`;
  await c.client.create(BUILTIN.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}

const template = (labels: Record<string, string>, extra: Record<string, unknown> = {}) => ({ metadata: { labels }, spec: { containers: [{ name: 'app', image: 'nginx:1.25', resources: { requests: { cpu: '100m' } } }], ...extra } });

async function get(ref: typeof BUILTIN.pods, ns: string, name: string): Promise<KubeObject | undefined> {
  try {
    return await c.client.get(ref, name, { namespace: ns });
  } catch {
    return undefined;
  }
}

describe('StatefulSet in the cluster', () => {
  test('ordinals come up in order on real nodes; scale-in removes the highest first, each after the previous is gone', async () => {
    const ns = await namespace();
    const order: string[] = [];
    const sts = { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db', namespace: ns }, spec: { replicas: 3, serviceName: 'db', selector: { matchLabels: { app: 'db' } }, template: template({ app: 'db' }) } };
    await c.client.create(BUILTIN.statefulsets, sts, { namespace: ns });
    await c.settle();
    const pods = await listPods(c, ns);
    assert.deepEqual(pods.map((p) => p.metadata.name).sort(), ['db-0', 'db-1', 'db-2']);
    assert.ok(pods.every((p) => p.status?.phase === 'Running' && (p.spec.nodeName ?? '') !== ''));
    const created = pods.map((p) => [p.metadata.name, Date.parse(p.metadata.creationTimestamp ?? '')] as const).sort((a, b) => a[1] - b[1]);
    assert.deepEqual(created.map(([n]) => n), ['db-0', 'db-1', 'db-2'], 'each ordinal waits for the previous to be Ready');
    assert.ok((created[1]?.[1] ?? 0) > (created[0]?.[1] ?? 0) && (created[2]?.[1] ?? 0) > (created[1]?.[1] ?? 0));

    // Note each pod as it starts terminating, from the watch.
    const watch = new Informer<Pod>({ client: c.client, ref: BUILTIN.pods, namespace: ns, resyncMs: 0, name: 'order' });
    watch.store.onUpdate((old, cur) => {
      if (old.metadata.deletionTimestamp === undefined && cur.metadata.deletionTimestamp !== undefined) order.push(cur.metadata.name ?? '');
    });
    watch.store.onDelete((gone) => order.push(`gone ${gone.metadata.name ?? ''}`));
    watch.start();
    await watch.waitForSync();
    await c.client.scale(BUILTIN.statefulsets, 'db', 1, { namespace: ns });
    await c.settle();
    await watch.stop();
    assert.deepEqual(order, ['db-2', 'gone db-2', 'db-1', 'gone db-1'], 'db-1 is only deleted once db-2 is gone');
    assert.deepEqual((await listPods(c, ns)).map((p) => p.metadata.name), ['db-0']);
    const status = ((await c.client.get(BUILTIN.statefulsets, 'db', { namespace: ns }))['status'] ?? {}) as Record<string, unknown>;
    assert.equal(status['replicas'], 1);
    assert.equal(status['readyReplicas'], 1);
  });
});

describe('Job in the cluster', () => {
  test('pods run on nodes, the kubelet finishes them, the Job completes', async () => {
    const ns = await namespace();
    const job = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'batch', namespace: ns }, spec: { completions: 4, parallelism: 2, template: template({ app: 'batch' }, { restartPolicy: 'Never' }) } };
    await c.client.create(BUILTIN.jobs, job, { namespace: ns });
    await c.settle();
    const j = await c.client.get(BUILTIN.jobs, 'batch', { namespace: ns });
    const status = (j['status'] ?? {}) as { succeeded?: number; conditions?: { type: string; status: string }[]; completionTime?: string };
    assert.equal(status.succeeded, 4);
    assert.deepEqual(status.conditions?.map((x) => `${x.type}=${x.status}`), ['SuccessCriteriaMet=True', 'Complete=True']);
    const pods = await listPods(c, ns);
    assert.equal(pods.length, 4);
    assert.ok(pods.every((p: Pod) => p.status?.phase === 'Succeeded' && (p.metadata.finalizers ?? []).length === 0));
  });
});

describe('garbage collection and budgets in the cluster', () => {
  test('a Deployment with a PodDisruptionBudget: budget numbers, then cascading deletion in the background', async () => {
    const ns = await namespace();
    const d = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns }, spec: { replicas: 4, selector: { matchLabels: { app: 'web' } }, template: template({ app: 'web' }) } };
    await c.client.create(BUILTIN.deployments, d, { namespace: ns });
    await c.client.create(BUILTIN.poddisruptionbudgets, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'web', namespace: ns }, spec: { maxUnavailable: '25%', selector: { matchLabels: { app: 'web' } } } }, { namespace: ns });
    await c.settle();
    const pdb = (await c.client.get(BUILTIN.poddisruptionbudgets, 'web', { namespace: ns }))['status'] as PdbStatus;
    assert.deepEqual([pdb.expectedPods, pdb.desiredHealthy, pdb.currentHealthy, pdb.disruptionsAllowed], [4, 3, 4, 1]);
    assert.equal((await listPods(c, ns)).length, 4);

    await c.client.delete(BUILTIN.deployments, 'web', { namespace: ns, propagationPolicy: 'Background' });
    await c.settle();
    assert.equal((await c.client.list(BUILTIN.replicasets, { namespace: ns })).items.length, 0);
    assert.equal((await listPods(c, ns)).length, 0);
    const after = (await c.client.get(BUILTIN.poddisruptionbudgets, 'web', { namespace: ns }))['status'] as PdbStatus;
    assert.deepEqual([after.expectedPods, after.currentHealthy, after.disruptionsAllowed], [0, 0, 0]);
  });

  test('evictions spend the budget until the replacement is ready again', async () => {
    const ns = await namespace();
    const d = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'api', namespace: ns }, spec: { replicas: 3, selector: { matchLabels: { app: 'api' } }, template: template({ app: 'api' }) } };
    await c.client.create(BUILTIN.deployments, d, { namespace: ns });
    await c.client.create(BUILTIN.poddisruptionbudgets, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'api', namespace: ns }, spec: { minAvailable: 2, selector: { matchLabels: { app: 'api' } } } }, { namespace: ns });
    await c.settle();
    const budget = async () => (await c.client.get(BUILTIN.poddisruptionbudgets, 'api', { namespace: ns }))['status'] as PdbStatus;
    assert.deepEqual([(await budget()).currentHealthy, (await budget()).disruptionsAllowed], [3, 1]);
    const [first, second] = (await listPods(c, ns)).map((p) => p.metadata.name ?? '');
    await c.client.evict(ns, first ?? '');
    await assert.rejects(c.client.evict(ns, second ?? ''), (err: unknown) => (err as { code?: number }).code === 429);
    await c.settle();
    const after = await budget();
    assert.deepEqual([after.currentHealthy, after.disruptionsAllowed], [3, 1], 'the ReplicaSet replaced the evicted pod');
    assert.equal(after.disruptedPods, undefined, 'the evicted pod is gone, and so is its entry');
  });

  test('foreground deletion keeps the Deployment until its pods are gone', async () => {
    const ns = await namespace();
    const d = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns }, spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: template({ app: 'web' }, { terminationGracePeriodSeconds: 30 }) } };
    await c.client.create(BUILTIN.deployments, d, { namespace: ns });
    await c.settle();
    await c.client.delete(BUILTIN.deployments, 'web', { namespace: ns, propagationPolicy: 'Foreground' });
    let sawOwnerWithPods = false;
    for (let i = 0; i < 40; i++) {
      const owner = await get(BUILTIN.deployments, ns, 'web');
      const pods = await listPods(c, ns);
      if (owner !== undefined && pods.length > 0) sawOwnerWithPods = true;
      if (owner === undefined) {
        assert.equal(pods.length, 0, 'the Deployment only goes once its pods are gone');
        break;
      }
      await c.advance(100);
    }
    assert.ok(sawOwnerWithPods);
    await c.settle();
    assert.equal(await get(BUILTIN.deployments, ns, 'web'), undefined);
  });
});
