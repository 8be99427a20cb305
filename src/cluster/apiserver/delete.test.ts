/**
 * Conformance: deletion — finalizers and deletionTimestamp, the finalizers
 * propagation policies add, preconditions, graceful pod deletion on the
 * virtual clock, what a delete answers, namespace termination, and the
 * lifecycle of a CustomResourceDefinition with its custom resources.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import type { ServingCertificate } from '../../client/loopback-certificates.ts';
import { deployment, expectStatus, pod, rawRequest, rawWatch, startTestCluster, testCertificate, type TestCluster } from '../../testing/apiserver-bed.ts';

const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
const jsonPatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch);

let cert: ServingCertificate;
let c: TestCluster;
let clock: VirtualClock;

before(async () => {
  cert = testCertificate();
  clock = new VirtualClock(Date.UTC(2026, 0, 1));
  c = await startTestCluster(clock, cert);
});
after(async () => {
  await c.close();
});

describe('finalizers', () => {
  test('an object with finalizers gets deletionTimestamp and stays until an update empties them', async () => {
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'fin', finalizers: ['example.com/hold'] } } });
    const w = rawWatch(c.server, `/api/v1/namespaces/default/configmaps?watch=true&fieldSelector=metadata.name%3Dfin&resourceVersion=${c.server.control.resourceVersion}`);
    await w.status;
    const res = await rawRequest(c.server, 'DELETE', '/api/v1/namespaces/default/configmaps/fin');
    assert.equal(res.status, 200);
    const pending = res.json as k8s.V1ConfigMap;
    assert.equal(pending.kind, 'ConfigMap', 'while finalizers remain, the answer is the object');
    assert.equal(pending.metadata?.deletionTimestamp, '2026-01-01T00:00:00Z');
    assert.equal(pending.metadata?.deletionGracePeriodSeconds, 0);
    const again = await c.core.readNamespacedConfigMap({ name: 'fin', namespace: 'default' });
    assert.deepEqual(again.metadata?.finalizers, ['example.com/hold']);
    const s = await expectStatus(() => c.core.patchNamespacedConfigMap({ name: 'fin', namespace: 'default', body: { metadata: { finalizers: ['example.com/hold', 'example.com/new'] } } }, merge));
    assert.equal(s.code, 422, 'no new finalizers once deleting');
    await c.core.patchNamespacedConfigMap({ name: 'fin', namespace: 'default', body: [{ op: 'test', path: '/metadata/finalizers/0', value: 'example.com/hold' }, { op: 'remove', path: '/metadata/finalizers' }] }, jsonPatch);
    const gone = await expectStatus(() => c.core.readNamespacedConfigMap({ name: 'fin', namespace: 'default' }));
    assert.equal(gone.code, 404);
    await w.next(2);
    w.stop();
    assert.deepEqual(w.events.map((e) => e.type), ['MODIFIED', 'DELETED']);
  });

  test('propagationPolicy Foreground adds foregroundDeletion, Orphan adds orphan, Background adds nothing', async () => {
    for (const [name, policy, expected] of [
      ['fg', 'Foreground', ['foregroundDeletion']],
      ['or', 'Orphan', ['orphan']],
    ] as const) {
      await c.apps.createNamespacedDeployment({ namespace: 'default', body: deployment(name) });
      const res = await rawRequest(c.server, 'DELETE', `/apis/apps/v1/namespaces/default/deployments/${name}`, { body: JSON.stringify({ propagationPolicy: policy }), contentType: 'application/json' });
      assert.equal(res.status, 200);
      const d = await c.apps.readNamespacedDeployment({ name, namespace: 'default' });
      assert.deepEqual(d.metadata?.finalizers, [...expected]);
      assert.ok(d.metadata?.deletionTimestamp);
      assert.equal(d.metadata?.generation, 2, 'marking for deletion bumps the generation');
    }
    await c.apps.createNamespacedDeployment({ namespace: 'default', body: deployment('bg') });
    const res = await rawRequest(c.server, 'DELETE', '/apis/apps/v1/namespaces/default/deployments/bg?propagationPolicy=Background');
    assert.deepEqual(res.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 'bg', group: 'apps', kind: 'deployments', uid: (res.json as { details: { uid: string } }).details.uid } });
  });

  test('a batch/v1 Job deleted without a policy is orphaned by default, with upstream\'s warning', async () => {
    const batch = c.kc.makeApiClient(k8s.BatchV1Api);
    await batch.createNamespacedJob({ namespace: 'default', body: { metadata: { name: 'job' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } } });
    const res = await rawRequest(c.server, 'DELETE', '/apis/batch/v1/namespaces/default/jobs/job');
    assert.match(String(res.headers['warning']), /child pods are preserved by default when jobs are deleted/);
    const job = await batch.readNamespacedJob({ name: 'job', namespace: 'default' });
    assert.deepEqual(job.metadata?.finalizers, ['orphan']);
  });
});

describe('preconditions', () => {
  test('a uid or resourceVersion precondition that does not hold is a 409', async () => {
    const cm = await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'pre' } } });
    const byUid = await expectStatus(() => c.core.deleteNamespacedConfigMap({ name: 'pre', namespace: 'default', body: { preconditions: { uid: 'wrong' } } }));
    assert.equal(byUid.code, 409);
    assert.equal(byUid.message, `Operation cannot be fulfilled on ConfigMap "pre": the UID in the precondition (wrong) does not match the UID in record (${cm.metadata?.uid ?? ''}). The object might have been deleted and then recreated`);
    const byRv = await expectStatus(() => c.core.deleteNamespacedConfigMap({ name: 'pre', namespace: 'default', body: { preconditions: { resourceVersion: '1' } } }));
    assert.equal(byRv.code, 409);
    await c.core.deleteNamespacedConfigMap({ name: 'pre', namespace: 'default', body: { preconditions: { uid: cm.metadata?.uid ?? '', resourceVersion: cm.metadata?.resourceVersion ?? '' } } });
    assert.equal((await expectStatus(() => c.core.readNamespacedConfigMap({ name: 'pre', namespace: 'default' }))).code, 404);
  });
});

describe('graceful pod deletion', () => {
  test('a scheduled pod gets deletionTimestamp = now + its grace period and stays until a delete with grace 0', async () => {
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('graceful', { nodeName: 'node-1' }) });
    const terminating = await c.core.deleteNamespacedPod({ name: 'graceful', namespace: 'default' });
    assert.equal(terminating.kind, 'Pod', 'pods answer a delete with the pod');
    assert.equal(terminating.metadata?.deletionTimestamp?.toISOString(), '2026-01-01T00:00:30.000Z');
    assert.equal(terminating.metadata?.deletionGracePeriodSeconds, 30);
    // A longer grace period cannot extend it; a shorter one shortens it.
    const longer = await c.core.deleteNamespacedPod({ name: 'graceful', namespace: 'default', gracePeriodSeconds: 60 });
    assert.equal(longer.metadata?.deletionGracePeriodSeconds, 30);
    const shorter = await c.core.deleteNamespacedPod({ name: 'graceful', namespace: 'default', gracePeriodSeconds: 10 });
    assert.equal(shorter.metadata?.deletionTimestamp?.toISOString(), '2026-01-01T00:00:10.000Z');
    const w = rawWatch(c.server, `/api/v1/namespaces/default/pods?watch=true&fieldSelector=metadata.name%3Dgraceful&resourceVersion=${c.server.control.resourceVersion}`);
    await w.status;
    await c.core.deleteNamespacedPod({ name: 'graceful', namespace: 'default', gracePeriodSeconds: 0 });
    await w.next(2);
    w.stop();
    assert.deepEqual(w.events.map((e) => `${e.type} ${String(e.object.metadata?.deletionGracePeriodSeconds)}`), ['MODIFIED 0', 'DELETED 0']);
    assert.equal((await expectStatus(() => c.core.readNamespacedPod({ name: 'graceful', namespace: 'default' }))).code, 404);
  });

  test('an unscheduled pod is deleted immediately', async () => {
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('unscheduled') });
    await c.core.deleteNamespacedPod({ name: 'unscheduled', namespace: 'default' });
    assert.equal((await expectStatus(() => c.core.readNamespacedPod({ name: 'unscheduled', namespace: 'default' }))).code, 404);
  });

  test('dryRun delete answers as if and keeps the pod', async () => {
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('dry-del', { nodeName: 'node-1' }) });
    const answered = await c.core.deleteNamespacedPod({ name: 'dry-del', namespace: 'default', dryRun: 'All' });
    assert.ok(answered.metadata?.deletionTimestamp);
    const still = await c.core.readNamespacedPod({ name: 'dry-del', namespace: 'default' });
    assert.equal(still.metadata?.deletionTimestamp, undefined);
  });
});

describe('pods/binding and pods/eviction', () => {
  test('binding sets nodeName and PodScheduled once; a second binding conflicts', async () => {
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('to-bind') });
    await c.core.createNamespacedPodBinding({ name: 'to-bind', namespace: 'default', body: { metadata: { name: 'to-bind' }, target: { kind: 'Node', name: 'node-9' } } });
    const bound = await c.core.readNamespacedPod({ name: 'to-bind', namespace: 'default' });
    assert.equal(bound.spec?.nodeName, 'node-9');
    assert.equal(bound.status?.conditions?.find((x) => x.type === 'PodScheduled')?.status, 'True');
    const s = await expectStatus(() => c.core.createNamespacedPodBinding({ name: 'to-bind', namespace: 'default', body: { metadata: { name: 'to-bind' }, target: { kind: 'Node', name: 'node-8' } } }));
    assert.equal(s.code, 409);
    assert.equal(s.message, 'Operation cannot be fulfilled on pods/binding "to-bind": pod to-bind is already assigned to node "node-9"');
  });

  test('eviction deletes the pod (gracefully) and answers 201', async () => {
    const res = await rawRequest(c.server, 'POST', '/api/v1/namespaces/default/pods/to-bind/eviction', {
      body: JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'to-bind' } }),
      contentType: 'application/json',
    });
    assert.equal(res.status, 201);
    const p = await c.core.readNamespacedPod({ name: 'to-bind', namespace: 'default' });
    assert.ok(p.metadata?.deletionTimestamp);
  });
});

describe('namespace termination', () => {
  test('a deleted namespace turns Terminating, refuses new content, loses its content, then disappears', async () => {
    await c.core.createNamespace({ body: { metadata: { name: 'doomed' } } });
    await c.core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'held', finalizers: ['example.com/hold'] } } });
    await c.core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'free' } } });
    const ns = await c.core.deleteNamespace({ name: 'doomed' });
    assert.equal((ns as k8s.V1Namespace).status?.phase, 'Terminating');
    await clock.quiesce();
    const s = await expectStatus(() => c.core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'late' } } }));
    assert.equal(s.code, 403);
    assert.equal(s.message, 'configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated');
    assert.deepEqual((await c.core.listNamespacedConfigMap({ namespace: 'doomed' })).items.map((i) => i.metadata?.name), ['held']);
    assert.equal((await c.core.readNamespace({ name: 'doomed' })).status?.phase, 'Terminating');
    await c.core.patchNamespacedConfigMap({ name: 'held', namespace: 'doomed', body: { metadata: { finalizers: null } } }, merge);
    await clock.quiesce();
    assert.equal((await expectStatus(() => c.core.readNamespace({ name: 'doomed' }))).code, 404);
  });

  test('default, kube-system and kube-public cannot be deleted', async () => {
    const s = await expectStatus(() => c.core.deleteNamespace({ name: 'kube-system' }));
    assert.equal(s.code, 403);
    assert.equal(s.message, 'namespaces "kube-system" is forbidden: this namespace may not be deleted');
  });
});

describe('CustomResourceDefinitions', () => {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wd'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          // client-node's model spells the extension in snake case when it serializes.
          schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
          subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } },
        },
      ],
    },
  };
  const custom = () => c.kc.makeApiClient(k8s.CustomObjectsApi);
  const base = { group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets' };

  test('storing a CRD serves its resource: established, discoverable, CRUD, status, scale', async () => {
    const ext = c.kc.makeApiClient(k8s.ApiextensionsV1Api);
    await ext.createCustomResourceDefinition({ body: crd as k8s.V1CustomResourceDefinition });
    const stored = await ext.readCustomResourceDefinition({ name: 'widgets.example.com' });
    assert.equal(stored.status?.conditions?.find((x) => x.type === 'Established')?.status, 'True');
    assert.equal(stored.status?.acceptedNames?.kind, 'Widget');
    const disco = await rawRequest(c.server, 'GET', '/apis/example.com/v1');
    assert.deepEqual(
      (disco.json as { resources: { name: string }[] }).resources.map((r) => r.name),
      ['widgets', 'widgets/scale', 'widgets/status'],
    );
    const created = (await custom().createNamespacedCustomObject({ ...base, body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { replicas: 2 }, status: { replicas: 9 } } })) as k8s.KubernetesObject & { status?: unknown; spec?: unknown };
    assert.equal(created.metadata?.generation, 1);
    assert.equal(created.status, undefined, 'status is dropped on create when the subresource is on');
    const s = await expectStatus(() => custom().replaceNamespacedCustomObject({ ...base, name: 'w1', body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { replicas: 3 } } }));
    assert.equal(s.code, 422, 'custom resources need a resourceVersion on PUT');
    assert.equal(s.message, 'Widget.example.com "w1" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update');
    await custom().patchNamespacedCustomObjectStatus({ ...base, name: 'w1', body: { status: { replicas: 2, selector: 'app=w' }, spec: { replicas: 99 } } }, merge);
    const scale = (await custom().getNamespacedCustomObjectScale({ ...base, name: 'w1' })) as k8s.V1Scale;
    assert.deepEqual([scale.spec?.replicas, scale.status?.replicas, scale.status?.selector], [2, 2, 'app=w']);
    await custom().patchNamespacedCustomObjectScale({ ...base, name: 'w1', body: { spec: { replicas: 4 } } }, merge);
    const after = (await custom().getNamespacedCustomObject({ ...base, name: 'w1' })) as { spec: { replicas: number }; metadata: { generation: number } };
    assert.equal(after.spec.replicas, 4);
    assert.equal(after.metadata.generation, 2);
  });

  test('strategic merge patch on a custom resource is a 415 with upstream\'s message', async () => {
    const res = await rawRequest(c.server, 'PATCH', '/apis/example.com/v1/namespaces/default/widgets/w1', { body: '{"spec":{"replicas":1}}', contentType: 'application/strategic-merge-patch+json' });
    assert.equal(res.status, 415);
    assert.equal(
      (res.json as { message: string }).message,
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    );
  });

  test('deleting the CRD deletes its instances and unserves the resource', async () => {
    const ext = c.kc.makeApiClient(k8s.ApiextensionsV1Api);
    await ext.deleteCustomResourceDefinition({ name: 'widgets.example.com' });
    await clock.quiesce();
    assert.equal((await expectStatus(() => ext.readCustomResourceDefinition({ name: 'widgets.example.com' }))).code, 404);
    const res = await rawRequest(c.server, 'GET', '/apis/example.com/v1/namespaces/default/widgets');
    assert.equal(res.status, 404);
  });
});
