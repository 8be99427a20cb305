/**
 * The webhook's bookkeeping and robustness, end to end: deletions and
 * evictions recorded in the status, group commit under a burst (D13),
 * injected status-write conflicts, unreadable reviews, and WorkloadSpread
 * validation through the API server.
 */
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { after, before, describe, test } from 'node:test';
import { ApiError } from '../client/errors.ts';
import { BUILTIN } from '../client/resources.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import { countBySubset, createObject, MANAGER_NAMESPACE, deployment, ownedPod, podsOf, readSpread, startWebhookCluster, subsetOf, workloadSpreadObject, zoneTerm, type WebhookCluster } from '../testing/webhook-bed.ts';

describe('admission bookkeeping and robustness (end to end)', () => {
  let env: WebhookCluster;
  before(async () => {
    env = await startWebhookCluster();
  });
  after(async () => env?.stop());
  const create = (obj: KubeObject, ref?: Parameters<typeof createObject>[2]): Promise<KubeObject> => createObject(env, obj, ref);

  test('§3: a deletion is recorded (deletingPods, quota released) and the replacement takes the freed slot', async () => {
    const ns = await env.namespace('delete');
    await create(
      workloadSpreadObject(ns, 'spread', {
        targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        subsets: [
          { name: 'a', requiredNodeSelectorTerm: zoneTerm('a'), maxReplicas: 2 },
          { name: 'b', requiredNodeSelectorTerm: zoneTerm('b'), maxReplicas: 2 },
        ],
      }),
      WORKLOADSPREAD_REF,
    );
    await create(deployment(ns, 'web', 4));
    await env.cluster.settle();
    const victim = (await podsOf(env.cluster.client, ns)).find((p) => subsetOf(p) === 'a');
    assert.ok(victim !== undefined);
    await env.cluster.client.delete(BUILTIN.pods, victim.metadata.name ?? '', { namespace: ns });
    await env.cluster.settle();
    const ws = await readSpread(env.cluster.client, ns, 'spread');
    const a = ws.status?.versionedSubsetStatuses?.[victim.metadata.labels?.['pod-template-hash'] ?? '']?.find((s) => s.name === 'a');
    assert.ok(Object.hasOwn(a?.deletingPods ?? {}, victim.metadata.name ?? ''), JSON.stringify(a));
    const pods = await podsOf(env.cluster.client, ns);
    assert.deepEqual(countBySubset(pods), { a: 2, b: 2 }, 'the replacement went back to a');
    assert.equal(a?.missingReplicas, 0);
  });

  test('§3.5: an eviction refused by a PodDisruptionBudget still records the deletion (a side effect that expires)', async () => {
    const ns = await env.namespace('evict');
    await create(
      workloadSpreadObject(ns, 'spread', {
        targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        subsets: [
          { name: 'a', requiredNodeSelectorTerm: zoneTerm('a'), maxReplicas: 1 },
          { name: 'b', requiredNodeSelectorTerm: zoneTerm('b'), maxReplicas: 1 },
        ],
      }),
      WORKLOADSPREAD_REF,
    );
    await create(deployment(ns, 'web', 2));
    await create({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'all', namespace: ns }, spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } } });
    await env.cluster.settle();
    const victim = (await podsOf(env.cluster.client, ns)).find((p) => subsetOf(p) === 'a');
    assert.ok(victim !== undefined);
    await assert.rejects(env.cluster.client.evict(ns, victim.metadata.name ?? ''), (err: unknown) => err instanceof ApiError && err.code === 429);
    await env.cluster.settle();
    const ws = await readSpread(env.cluster.client, ns, 'spread');
    const a = ws.status?.versionedSubsetStatuses?.[victim.metadata.labels?.['pod-template-hash'] ?? '']?.find((s) => s.name === 'a');
    assert.ok(Object.hasOwn(a?.deletingPods ?? {}, victim.metadata.name ?? ''), 'recorded although the eviction was refused');
    assert.equal(a?.missingReplicas, 1);
    assert.ok((await podsOf(env.cluster.client, ns)).some((p) => p.metadata.name === victim.metadata.name), 'the pod is still there');
    // A pod that no longer exists: the webhook lets the request through and the API server answers
    // 404, which `kubectl drain` reads as "already gone" (the reference's webhook answered 400).
    await assert.rejects(env.cluster.client.evict(ns, 'no-such-pod'), (err: unknown) => err instanceof ApiError && err.code === 404);
  });

  test('D13: 200 concurrent pod creations for one WorkloadSpread → far fewer status writes, no subset above its limit', async () => {
    const ns = await env.namespace('burst');
    const owner = await create(deployment(ns, 'burst', 0));
    await create(
      workloadSpreadObject(ns, 'spread', {
        targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'burst' },
        subsets: [
          { name: 'a', maxReplicas: 50 },
          { name: 'b', maxReplicas: 70 },
          { name: 'c', maxReplicas: 100 },
        ],
      }),
      WORKLOADSPREAD_REF,
    );
    const control = env.cluster.apiServer.control;
    const writesBefore = control.requestCount({ resource: 'workloadspreads', subresource: 'status', verb: 'update' });
    const creations = Array.from({ length: 200 }, (_, i) => env.cluster.client.create<Pod>(BUILTIN.pods, ownedPod(ns, owner, `p-${String(i).padStart(3, '0')}`, { nodeName: 'c1' })));
    const created = await Promise.all(creations);
    await env.clock.quiesce();
    const writes = control.requestCount({ resource: 'workloadspreads', subresource: 'status', verb: 'update' }) - writesBefore;
    assert.equal(created.length, 200);
    assert.deepEqual(countBySubset(created), { a: 50, b: 70, c: 80 });
    // Measured here: about 33 writes carry the 200 reservations (one per wave of arrivals; the HTTP
    // clients open their connections gradually), against at least 200 without group commit.
    assert.ok(writes <= 50, `${writes} status writes for 200 admissions`);
    const stored = await readSpread(env.cluster.client, ns, 'spread');
    const statuses = stored.status?.versionedSubsetStatuses?.['versionIgnored'] ?? [];
    assert.deepEqual(
      statuses.map((s) => [s.name, s.missingReplicas, Object.keys(s.creatingPods ?? {}).length]),
      [
        ['a', 0, 50],
        ['b', 0, 70],
        ['c', 20, 80],
      ],
    );
  });

  test('injected status-write conflicts: retried quietly; after the fourth the pod is refused with a clear message', async () => {
    const ns = await env.namespace('conflict');
    const owner = await create(deployment(ns, 'web', 0));
    await create(
      workloadSpreadObject(ns, 'spread', {
        targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        subsets: [{ name: 'a', maxReplicas: 5 }, { name: 'b', maxReplicas: 5 }],
      }),
      WORKLOADSPREAD_REF,
    );
    const control = env.cluster.apiServer.control;
    const three = control.injectFault({ resource: 'workloadspreads', subresource: 'status', verb: 'update', status: 409, times: 3 });
    const ok = env.cluster.client.create<Pod>(BUILTIN.pods, ownedPod(ns, owner, 'p-ok', { nodeName: 'a1' }));
    await env.cluster.settle();
    assert.equal(subsetOf(await ok), 'a');
    assert.equal(three.hits, 3);
    const four = control.injectFault({ resource: 'workloadspreads', subresource: 'status', verb: 'update', status: 409, times: 4 });
    const refused = env.cluster.client.create<Pod>(BUILTIN.pods, ownedPod(ns, owner, 'p-refused', { nodeName: 'a1' }));
    const settled = env.cluster.settle();
    await assert.rejects(refused, (err: unknown) => {
      assert.ok(err instanceof ApiError);
      assert.equal(err.code, 500);
      assert.match(err.message, /admission webhook "mpod\.workloadspread\.io" denied the request: .*4 conflicting writes/);
      return true;
    });
    await settled;
    assert.equal(four.hits, 4);
    four.clear();
  });

  test('unreadable reviews get 400/413 with a message, and the webhook keeps admitting pods', async () => {
    const ca = env.replica.certificates.caBundle() ?? '';
    const post = async (body: string | Buffer): Promise<number> =>
      new Promise((resolve, reject) => {
        const req = httpsRequest(`${env.replica.server.url}/mutate-pod`, { method: 'POST', ca, headers: { 'content-type': 'application/json' } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end(body);
      });
    assert.equal(await post('{"apiVersion":'), 400);
    assert.equal(await post(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'Pod' })), 400);
    assert.equal(await post(Buffer.alloc(3 * 1024 * 1024 + 1, 0x20)), 413);
    const ns = await env.namespace('after-garbage');
    const owner = await create(deployment(ns, 'web', 0));
    await create(workloadSpreadObject(ns, 'spread', { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets: [{ name: 'a', maxReplicas: 1 }, { name: 'b' }] }), WORKLOADSPREAD_REF);
    const pod = await env.cluster.client.create<Pod>(BUILTIN.pods, ownedPod(ns, owner, 'p', { nodeName: 'a1' }));
    assert.equal(subsetOf(pod), 'a');
  });

  test('§7 through the API server: an invalid WorkloadSpread is refused with every field error; one created before its workload is accepted', async () => {
    const ns = await env.namespace('validate');
    await assert.rejects(
      env.cluster.client.create(
        WORKLOADSPREAD_REF,
        workloadSpreadObject(ns, 'bad', {
          targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
          subsets: [
            { name: 'a', maxReplicas: '60%' },
            { name: 'a', maxReplicas: '60%' },
          ],
        }),
      ),
      (err: unknown) => {
        assert.ok(err instanceof ApiError);
        assert.equal(err.code, 422);
        assert.match(err.message, /admission webhook "vworkloadspread\.workloadspread\.io" denied the request: WorkloadSpread\.apps\.kruise\.io "bad" is invalid: \[.*spec\.subsets\[1\]\.name.*\]/);
        return true;
      },
    );
    const accepted = await env.cluster.client.create<KubeObject>(
      WORKLOADSPREAD_REF,
      workloadSpreadObject(ns, 'early', { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'not-yet' }, subsets: [{ name: 'a', patch: { metadata: { labels: { x: 'y' } } } }] }),
    );
    assert.equal(accepted.metadata?.name, 'early');
  });

  test('certificates: generated into a Secret of the manager namespace, the CA in every caBundle (the API server verifies the webhook with it)', async () => {
    const secret = await env.cluster.client.get<KubeObject>(BUILTIN.secrets, env.replica.certificates.secretName, { namespace: MANAGER_NAMESPACE });
    const data = secret['data'] as Record<string, string>;
    const bundle = env.replica.certificates.caBundle() ?? '';
    assert.equal(Buffer.from(data['ca.crt'] ?? '', 'base64').toString('utf8'), bundle);
    for (const ref of [BUILTIN.mutatingwebhookconfigurations, BUILTIN.validatingwebhookconfigurations]) {
      for (const config of (await env.cluster.client.list<KubeObject>(ref)).items) {
        for (const hook of config['webhooks'] as { clientConfig: { caBundle?: string } }[]) {
          assert.equal(hook.clientConfig.caBundle, Buffer.from(bundle).toString('base64'));
        }
      }
    }
  });

  test("the manager's own namespace is never sent to the pod webhooks", async () => {
    await create(
      workloadSpreadObject(MANAGER_NAMESPACE, 'self', { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'manager' }, subsets: [{ name: 'a', maxReplicas: 1 }, { name: 'b' }] }),
      WORKLOADSPREAD_REF,
    );
    await create(deployment(MANAGER_NAMESPACE, 'manager', 2));
    await env.cluster.settle();
    const pods = (await podsOf(env.cluster.client, MANAGER_NAMESPACE)).filter((p) => p.metadata.labels?.['app'] === 'manager');
    assert.equal(pods.length, 2);
    assert.deepEqual(countBySubset(pods), { '': 2 });
  });
});
