/**
 * The webhook and the controller in one process, as the manager runs them
 * (they share the caches, the per-WorkloadSpread lock and the local copy of
 * the last written WorkloadSpread), end to end on the embedded cluster:
 * what admission records, the controller settles.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiError } from '../client/errors.ts';
import { BUILTIN } from '../client/resources.ts';
import { WorkloadSpreadController } from '../controller/controller.ts';
import type { KubeObject } from '../k8s/types.ts';
import { createEventRecorder, CONTROLLER_COMPONENT, EngineEventSink } from '../kube/events.ts';
import { PodWriter } from '../kube/pod-writer.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import { countBySubset, createObject, deployment, podsOf, readSpread, startWebhookCluster, subsetOf, workloadSpreadObject, zoneTerm, type WebhookCluster } from '../testing/webhook-bed.ts';

describe('webhook and controller together (end to end)', () => {
  let env: WebhookCluster;
  let controller: WorkloadSpreadController;
  let controllerEvents: EngineEventSink;
  before(async () => {
    env = await startWebhookCluster();
    const r = env.replica;
    controllerEvents = new EngineEventSink(createEventRecorder(r.client, CONTROLLER_COMPONENT, 'test-0'));
    controller = new WorkloadSpreadController({
      caches: r.caches,
      resolver: r.resolver,
      state: r.state,
      statusWriter: r.writer,
      podWriter: new PodWriter(r.client),
      events: controllerEvents,
      clock: env.cluster.clock,
    });
    await controller.start();
  });
  after(async () => {
    await controller?.stop();
    await controllerEvents?.flush();
    await env?.stop();
  });
  const create = (obj: KubeObject, ref?: Parameters<typeof createObject>[2]): Promise<KubeObject> => createObject(env, obj, ref);

  const twoZones = (ns: string, max: number) =>
    workloadSpreadObject(ns, 'spread', {
      targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      subsets: [
        { name: 'a', requiredNodeSelectorTerm: zoneTerm('a'), maxReplicas: max },
        { name: 'b', requiredNodeSelectorTerm: zoneTerm('b'), maxReplicas: max },
      ],
    });

  test('§3.5: the deletion recorded for an eviction a PodDisruptionBudget refused expires after 15 s (DeletePodFailed) and the quota comes back', async () => {
    const ns = await env.namespace('evict-expiry');
    await create(twoZones(ns, 1), WORKLOADSPREAD_REF);
    await create(deployment(ns, 'web', 2));
    await create({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'all', namespace: ns }, spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } } });
    await env.cluster.settle();
    const victim = (await podsOf(env.cluster.client, ns)).find((p) => subsetOf(p) === 'a');
    assert.ok(victim !== undefined);
    const name = victim.metadata.name ?? '';
    const hash = victim.metadata.labels?.['pod-template-hash'] ?? '';
    const subsetA = async () => (await readSpread(env.cluster.client, ns, 'spread')).status?.versionedSubsetStatuses?.[hash]?.find((s) => s.name === 'a');

    await assert.rejects(env.cluster.client.evict(ns, name), (err: unknown) => err instanceof ApiError && err.code === 429);
    await env.clock.quiesce();
    assert.ok(Object.hasOwn((await subsetA())?.deletingPods ?? {}, name), 'recorded by the webhook');
    assert.equal((await subsetA())?.missingReplicas, 1, 'quota released while the deletion is pending');

    await env.cluster.advance(16_000);
    await env.cluster.settle();
    const a = await subsetA();
    assert.deepEqual(a?.deletingPods ?? {}, {}, 'the entry expired');
    assert.equal(a?.missingReplicas, 0, 'the pod still counts');
    const events = (await env.cluster.client.list<KubeObject>(BUILTIN.eventsV1, { namespace: ns })).items.filter((e) => e['reason'] === 'DeletePodFailed');
    assert.equal(events.length, 1);
    assert.match(String(events[0]?.['note']), new RegExp(`Pod ${ns}/${name} was expected to be deleted but it wasn't`));
  });

  test('user-issues #5: a storm of deletions and re-creations never leaves a pod unplaced or a subset above its limit', async () => {
    const ns = await env.namespace('storm');
    await create(twoZones(ns, 3), WORKLOADSPREAD_REF);
    await create(deployment(ns, 'web', 6));
    await env.cluster.settle();
    for (let round = 0; round < 4; round++) {
      const pods = (await podsOf(env.cluster.client, ns)).filter((p) => p.metadata.deletionTimestamp === undefined);
      // Delete half the pods at once; the ReplicaSet replaces them while the deletions are still recorded.
      await Promise.all(pods.slice(0, 3).map((p) => env.cluster.client.delete(BUILTIN.pods, p.metadata.name ?? '', { namespace: ns })));
      await env.cluster.settle();
      const active = (await podsOf(env.cluster.client, ns)).filter((p) => p.metadata.deletionTimestamp === undefined && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
      assert.deepEqual(countBySubset(active), { a: 3, b: 3 }, `round ${round}`);
    }
    const events = (await env.cluster.client.list<KubeObject>(BUILTIN.eventsV1, { namespace: ns })).items.filter((e) => e['reason'] === 'NoSubsetAvailable');
    assert.equal(events.length, 0);
  });
});
