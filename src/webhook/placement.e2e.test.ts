/**
 * Pod placement by the admission webhook, end to end: the embedded cluster
 * (its API server calls the webhook over HTTPS with the generated CA; the
 * scheduler, kubelet and workload controllers run) on a virtual clock, with
 * the real webhook in front of it. Everything is checked on what the API
 * server STORED and where the pods run.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BUILTIN } from '../client/resources.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { CLONESET_REF, WORKLOADSPREAD_REF } from '../kube/refs.ts';
import { countBySubset, createObject, deployment, ownedPod, podsOf, readSpread, startWebhookCluster, subsetOf, workloadSpreadObject, zoneTerm, ZONE_LABEL, type WebhookCluster } from '../testing/webhook-bed.ts';

describe('pod placement through the admission webhook (end to end)', () => {
  let env: WebhookCluster;
  before(async () => {
    env = await startWebhookCluster();
  });
  after(async () => env?.stop());
  const create = (obj: KubeObject, ref?: Parameters<typeof createObject>[2]): Promise<KubeObject> => createObject(env, obj, ref);

  test('§2.3/§2.5: a Deployment’s pods are placed and injected — checked on the stored pods and where they run', async () => {
    const ns = await env.namespace('inject');
    await create(
      workloadSpreadObject(ns, 'spread', {
        targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        subsets: [
          {
            name: 'a',
            requiredNodeSelectorTerm: zoneTerm('a'),
            tolerations: [{ key: 'spot', operator: 'Exists', effect: 'NoSchedule' }],
            patch: { metadata: { labels: { subset: 'a' } }, spec: { containers: [{ name: 'main', env: [{ name: 'ZONE', value: 'a' }] }] } },
            maxReplicas: 2,
          },
          { name: 'b', requiredNodeSelectorTerm: zoneTerm('b'), patch: { metadata: { labels: { subset: 'b' } } } },
        ],
      }),
      WORKLOADSPREAD_REF,
    );
    await create(deployment(ns, 'web', 4));
    await env.cluster.settle();
    const pods = await podsOf(env.cluster.client, ns);
    assert.deepEqual(countBySubset(pods), { a: 2, b: 2 });
    const nodes = new Map((await env.cluster.client.list<KubeObject>(BUILTIN.nodes)).items.map((n) => [n.metadata?.name ?? '', n.metadata?.labels?.[ZONE_LABEL] ?? '']));
    for (const pod of pods) {
      const subset = subsetOf(pod);
      assert.equal(pod.metadata.labels?.['subset'], subset, 'the patch labels are stored');
      assert.deepEqual(pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution, { nodeSelectorTerms: [zoneTerm(subset)] });
      assert.equal(nodes.get(pod.spec.nodeName ?? ''), subset, `${pod.metadata.name} runs in zone ${subset}`);
      if (subset === 'a') {
        assert.ok(pod.spec.tolerations?.some((t) => t.key === 'spot'));
        assert.deepEqual(pod.spec.containers[0]?.['env'], [{ name: 'ZONE', value: 'a' }]);
        assert.match(pod.metadata.annotations?.['apps.kruise.io/matched-workloadspread'] ?? '', /^\{"name":"spread","subset":"a","uid":"(ahead-[0-9a-f]{12}\.[0-9a-z]+-[0-9a-z]+|[0-9a-f-]{36})"\}$/);
      } else {
        assert.equal(pod.metadata.annotations?.['apps.kruise.io/matched-workloadspread'], '{"name":"spread","subset":"b"}');
      }
    }
    // The reservations of subset a are in the status under the pods' version.
    const ws = await readSpread(env.cluster.client, ns, 'spread');
    const hash = pods[0]?.metadata.labels?.['pod-template-hash'] ?? '';
    const a = ws.status?.versionedSubsetStatuses?.[hash]?.find((s) => s.name === 'a');
    assert.equal(a?.missingReplicas, 0);
    assert.equal(Object.keys(a?.creatingPods ?? {}).length, 2);
  });

  /** Pods directly owned by a Deployment object (a supported owner the WorkloadSpread can target): no controller creates or deletes them. */
  const percentSpread = (ns: string, targetRef = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }) =>
    workloadSpreadObject(ns, 'spread', {
      targetRef,
      subsets: [
        { name: 'a', requiredNodeSelectorTerm: zoneTerm('a'), maxReplicas: '20%' },
        { name: 'b', requiredNodeSelectorTerm: zoneTerm('b'), maxReplicas: '30%' },
        { name: 'c', requiredNodeSelectorTerm: zoneTerm('c'), maxReplicas: '50%' },
      ],
    });

  for (const [replicas, expected] of [
    [10, { a: 2, b: 3, c: 5 }],
    [5, { a: 1, b: 2, c: 2 }],
  ] as const) {
    test(`§5.3 percentages 20/30/50 at ${replicas} replicas → ${JSON.stringify(expected)}`, async () => {
      const ns = await env.namespace('percent');
      await create(percentSpread(ns), WORKLOADSPREAD_REF);
      await create(deployment(ns, 'web', replicas));
      await env.cluster.settle();
      assert.deepEqual(countBySubset(await podsOf(env.cluster.client, ns)), expected);
    });
  }

  // No controller runs here: the status is what admission wrote at 5 replicas, so only admission can
  // size the limits at 10 — as it must on every replica of an HA manager, whatever the leader is doing.
  for (const kind of ['Deployment', 'CloneSet'] as const) {
    test(`D22: a ${kind} under 20/30/50 % scaled 5 → 10 is placed by the limits at 10 (2/3/5), no pod unplaced`, async () => {
      const ns = await env.namespace('scale-out');
      await create(percentSpread(ns, { apiVersion: kind === 'CloneSet' ? 'apps.kruise.io/v1alpha1' : 'apps/v1', kind, name: 'web' }), WORKLOADSPREAD_REF);
      const ref = kind === 'CloneSet' ? CLONESET_REF : BUILTIN.deployments;
      await create(kind === 'CloneSet' ? { ...deployment(ns, 'web', 5), apiVersion: 'apps.kruise.io/v1alpha1', kind } : deployment(ns, 'web', 5), ref);
      await env.cluster.settle();
      assert.deepEqual(countBySubset(await podsOf(env.cluster.client, ns)), { a: 1, b: 2, c: 2 });
      await env.cluster.client.scale(ref, 'web', 10, { namespace: ns });
      await env.cluster.settle();
      const pods = (await podsOf(env.cluster.client, ns)).filter((p) => p.metadata.deletionTimestamp === undefined);
      assert.equal(pods.length, 10);
      assert.deepEqual(countBySubset(pods), { a: 2, b: 3, c: 5 });
      const unplaced = (await env.cluster.client.list<KubeObject>(BUILTIN.eventsV1, { namespace: ns })).items.filter((e) => e['reason'] === 'NoSubsetAvailable');
      assert.equal(unplaced.length, 0);
    });
  }

  test('elastic: max 2 in a, the rest unlimited in b → 2/4 at 6 replicas', async () => {
    const ns = await env.namespace('elastic');
    await create(
      workloadSpreadObject(ns, 'spread', {
        targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        subsets: [
          { name: 'a', requiredNodeSelectorTerm: zoneTerm('a'), maxReplicas: 2 },
          { name: 'b', requiredNodeSelectorTerm: zoneTerm('b') },
        ],
      }),
      WORKLOADSPREAD_REF,
    );
    await create(deployment(ns, 'web', 6));
    await env.cluster.settle();
    assert.deepEqual(countBySubset(await podsOf(env.cluster.client, ns)), { a: 2, b: 4 });
  });

  test('§2.3 B StatefulSet: ordinals 0–1 in a, 2–3 in b, 4+ in c; no status written', async () => {
    const ns = await env.namespace('sts');
    await create(
      workloadSpreadObject(ns, 'spread', {
        targetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db' },
        subsets: [
          { name: 'a', requiredNodeSelectorTerm: zoneTerm('a'), maxReplicas: 2 },
          { name: 'b', requiredNodeSelectorTerm: zoneTerm('b'), maxReplicas: 2 },
          { name: 'c', requiredNodeSelectorTerm: zoneTerm('c') },
        ],
      }),
      WORKLOADSPREAD_REF,
    );
    await create({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db', namespace: ns },
      spec: {
        replicas: 6,
        serviceName: 'db',
        selector: { matchLabels: { app: 'db' } },
        template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'main', image: 'postgres:16' }] } },
      },
    });
    await env.cluster.settle();
    const pods = await podsOf(env.cluster.client, ns);
    assert.deepEqual(
      pods.map((p) => `${p.metadata.name}:${subsetOf(p)}`),
      ['db-0:a', 'db-1:a', 'db-2:b', 'db-3:b', 'db-4:c', 'db-5:c'],
    );
    assert.equal((await readSpread(env.cluster.client, ns, 'spread')).status?.versionedSubsetStatuses, undefined);
  });

  test('Job: percentages resolve against parallelism (4 → 2/2)', async () => {
    const ns = await env.namespace('job');
    await create(
      workloadSpreadObject(ns, 'spread', {
        targetRef: { apiVersion: 'batch/v1', kind: 'Job', name: 'batch' },
        subsets: [
          { name: 'a', requiredNodeSelectorTerm: zoneTerm('a'), maxReplicas: '50%' },
          { name: 'b', requiredNodeSelectorTerm: zoneTerm('b'), maxReplicas: '50%' },
        ],
      }),
      WORKLOADSPREAD_REF,
    );
    await create({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'batch', namespace: ns },
      spec: { parallelism: 4, completions: 4, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox' }] } } },
    });
    await env.cluster.settle();
    assert.deepEqual(countBySubset(await podsOf(env.cluster.client, ns)), { a: 2, b: 2 });
  });

  test('dry run: no injection in the answer and no reservation; the real create is injected', async () => {
    const ns = await env.namespace('dryrun');
    const owner = await create(deployment(ns, 'web', 0));
    await create(
      workloadSpreadObject(ns, 'spread', {
        targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        subsets: [{ name: 'a', requiredNodeSelectorTerm: zoneTerm('a'), maxReplicas: 1 }, { name: 'b' }],
      }),
      WORKLOADSPREAD_REF,
    );
    const dry = await env.cluster.client.create<Pod>(BUILTIN.pods, ownedPod(ns, owner, 'p-dry'), { dryRun: true });
    await env.clock.quiesce();
    assert.equal(dry.metadata.annotations?.['apps.kruise.io/matched-workloadspread'], undefined);
    assert.equal(dry.spec.affinity, undefined);
    assert.equal((await readSpread(env.cluster.client, ns, 'spread')).status?.versionedSubsetStatuses, undefined);
    const real = await env.cluster.client.create<Pod>(BUILTIN.pods, ownedPod(ns, owner, 'p-real'));
    assert.equal(subsetOf(real), 'a');
  });

  test('D11: no subset with quota → the pod is admitted unplaced and a NoSubsetAvailable Warning is recorded on the WorkloadSpread', async () => {
    const ns = await env.namespace('nosubset');
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
    await create(deployment(ns, 'web', 3));
    await env.cluster.settle();
    assert.deepEqual(countBySubset(await podsOf(env.cluster.client, ns)), { a: 1, b: 1, '': 1 });
    const events = (await env.cluster.client.list<KubeObject>(BUILTIN.eventsV1, { namespace: ns })).items.filter((e) => e['reason'] === 'NoSubsetAvailable');
    assert.equal(events.length, 1);
    assert.equal(events[0]?.['type'], 'Warning');
    assert.deepEqual((events[0]?.['regarding'] as { kind?: string; name?: string }).kind, 'WorkloadSpread');
    assert.match(String(events[0]?.['note']), /No subset of WorkloadSpread .*\/spread has quota left/);
  });

  test('D3: Adaptive — a subset whose nodes cannot host the pod is skipped although it has quota', async () => {
    const ns = await env.namespace('simulate');
    // Zone a is full: a bound pod takes every CPU of each of its nodes.
    for (const node of ['a1', 'a2']) {
      await create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `hog-${node}`, namespace: ns }, spec: { nodeName: node, containers: [{ name: 'hog', image: 'busybox', resources: { requests: { cpu: '4' } } }] } });
    }
    await create(
      workloadSpreadObject(ns, 'spread', {
        targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        subsets: [
          { name: 'a', requiredNodeSelectorTerm: zoneTerm('a'), maxReplicas: 3 },
          { name: 'b', requiredNodeSelectorTerm: zoneTerm('b') },
        ],
        scheduleStrategy: { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 30 } },
      }),
      WORKLOADSPREAD_REF,
    );
    await env.cluster.settle();
    await create(deployment(ns, 'web', 2));
    await env.cluster.settle();
    const pods = (await podsOf(env.cluster.client, ns)).filter((p) => p.metadata.labels?.['app'] === 'web');
    assert.deepEqual(countBySubset(pods), { b: 2 });
    assert.ok(pods.every((p) => p.status?.phase === 'Running'), 'and they run, instead of waiting in a full zone');
  });
});
