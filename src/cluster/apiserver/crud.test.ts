/**
 * Conformance: the verbs over HTTPS with @kubernetes/client-node as the
 * client — create (generateName, AlreadyExists, missing namespace), get, list,
 * update (optimistic concurrency, create-on-update, unconditional), the four
 * patch types, delete, deletecollection, dryRun, resourceVersion and
 * generation rules, status/spec isolation, the scale subresource, and the
 * generic KubernetesObjectApi flow (discovery-driven).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import type { ServingCertificate } from '../../client/loopback-certificates.ts';
import { deployment, expectStatus, pod, startTestCluster, testCertificate, type TestCluster } from '../../testing/apiserver-bed.ts';

const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
const jsonPatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch);
const strategic = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch);

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

const rv = (o: { metadata?: { resourceVersion?: string } }) => Number(o.metadata?.resourceVersion);

describe('create', () => {
  test('fills uid, creationTimestamp from the clock, resourceVersion, and pod defaults', async () => {
    const created = await c.core.createNamespacedPod({ namespace: 'default', body: pod('create-a') });
    assert.match(created.metadata?.uid ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(created.metadata?.creationTimestamp?.toISOString(), '2026-01-01T00:00:00.000Z');
    assert.ok(rv(created) > 0);
    assert.equal(created.spec?.restartPolicy, 'Always');
    assert.equal(created.spec?.dnsPolicy, 'ClusterFirst');
    assert.equal(created.spec?.schedulerName, 'default-scheduler');
    assert.equal(created.spec?.terminationGracePeriodSeconds, 30);
    assert.equal(created.spec?.enableServiceLinks, true);
    assert.equal(created.spec?.containers[0]?.imagePullPolicy, 'IfNotPresent');
    assert.equal(created.spec?.containers[0]?.terminationMessagePath, '/dev/termination-log');
    assert.equal(created.status?.phase, 'Pending');
    assert.equal(created.status?.qosClass, 'BestEffort');
  });

  test('generateName appends 5 characters of the upstream alphabet, and never collides', async () => {
    const names = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const body = { ...pod('x'), metadata: { generateName: 'gen-' } } as k8s.V1Pod;
      const created = await c.core.createNamespacedPod({ namespace: 'default', body });
      assert.match(created.metadata?.name ?? '', /^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      names.add(created.metadata?.name ?? '');
    }
    assert.equal(names.size, 20);
  });

  test('AlreadyExists is a 409 with the upstream message', async () => {
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'dup' } } });
    const s = await expectStatus(() => c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'dup' } } }));
    assert.equal(s.code, 409);
    assert.equal(s.reason, 'AlreadyExists');
    assert.equal(s.message, 'configmaps "dup" already exists');
    assert.deepEqual(s.details, { name: 'dup', kind: 'configmaps' });
  });

  test('a missing namespace is a 404 naming the namespace', async () => {
    const s = await expectStatus(() => c.core.createNamespacedConfigMap({ namespace: 'nope', body: { metadata: { name: 'a' } } }));
    assert.equal(s.code, 404);
    assert.equal(s.message, 'namespaces "nope" not found');
  });

  test('a namespace in the body that differs from the URL is a 400', async () => {
    const s = await expectStatus(() => c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a', namespace: 'kube-system' } } }));
    assert.equal(s.code, 400);
    assert.equal(s.message, 'the namespace of the provided object does not match the namespace sent on the request');
  });

  test('an invalid name is a 422 Invalid with one cause per field error', async () => {
    const s = await expectStatus(() => c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'Not_Valid' } } }));
    assert.equal(s.code, 422);
    assert.equal(s.reason, 'Invalid');
    assert.equal(s.details?.kind, 'ConfigMap');
    assert.equal(s.details?.causes?.[0]?.field, 'metadata.name');
    assert.equal(s.details?.causes?.[0]?.reason, 'FieldValueInvalid');
    assert.match(s.message ?? '', /^ConfigMap "Not_Valid" is invalid: metadata\.name: Invalid value: "Not_Valid": a lowercase RFC 1123 subdomain/);
  });

  test('a Namespace name must be a DNS-1123 label', async () => {
    const s = await expectStatus(() => c.core.createNamespace({ body: { metadata: { name: 'a.b' } } }));
    assert.equal(s.code, 422);
    assert.equal(s.message, 'Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": must not contain dots');
  });

  test('dryRun=All runs everything and stores nothing', async () => {
    const before = c.server.control.resourceVersion;
    const created = await c.core.createNamespacedPod({ namespace: 'default', body: pod('dry'), dryRun: 'All' });
    assert.equal(created.metadata?.name, 'dry');
    assert.equal(created.spec?.restartPolicy, 'Always');
    assert.equal(c.server.control.resourceVersion, before);
    const s = await expectStatus(() => c.core.readNamespacedPod({ name: 'dry', namespace: 'default' }));
    assert.equal(s.code, 404);
    assert.equal(s.message, 'pods "dry" not found');
  });
});

describe('update and resourceVersion', () => {
  test('every write gets a strictly greater resourceVersion; a write that changes nothing gets none', async () => {
    const a = await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'rv' }, data: { k: '1' } } });
    const b = await c.core.replaceNamespacedConfigMap({ name: 'rv', namespace: 'default', body: { ...a, data: { k: '2' } } });
    assert.ok(rv(b) > rv(a));
    const same = await c.core.replaceNamespacedConfigMap({ name: 'rv', namespace: 'default', body: b });
    assert.equal(rv(same), rv(b));
    const patched = await c.core.patchNamespacedConfigMap({ name: 'rv', namespace: 'default', body: { data: { k: '2' } } }, merge);
    assert.equal(rv(patched), rv(b));
  });

  test('a stale resourceVersion is a 409 Conflict with the upstream message', async () => {
    const a = await c.apps.createNamespacedDeployment({ namespace: 'default', body: deployment('conflict') });
    await c.apps.patchNamespacedDeployment({ name: 'conflict', namespace: 'default', body: { spec: { replicas: 2 } } }, merge);
    const s = await expectStatus(() => c.apps.replaceNamespacedDeployment({ name: 'conflict', namespace: 'default', body: { ...a, spec: { ...a.spec!, replicas: 5 } } }));
    assert.equal(s.code, 409);
    assert.equal(s.reason, 'Conflict');
    assert.equal(s.message, 'Operation cannot be fulfilled on deployments.apps "conflict": the object has been modified; please apply your changes to the latest version and try again');
    assert.deepEqual(s.details, { name: 'conflict', group: 'apps', kind: 'deployments' });
  });

  test('PUT without resourceVersion is unconditional for built-ins', async () => {
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'uncond' } } });
    const updated = await c.core.replaceNamespacedConfigMap({ name: 'uncond', namespace: 'default', body: { metadata: { name: 'uncond' }, data: { a: 'b' } } });
    assert.deepEqual(updated.data, { a: 'b' });
  });

  test('PUT creates where upstream allows it (Services) and 404s elsewhere (ConfigMaps)', async () => {
    const svc = await c.core.replaceNamespacedService({ name: 'made-by-put', namespace: 'default', body: { metadata: { name: 'made-by-put' }, spec: { ports: [{ port: 80 }] } } });
    assert.match(svc.spec?.clusterIP ?? '', /^10\.(9[6-9]|1[01][0-9])\./);
    assert.equal(svc.spec?.ports?.[0]?.targetPort, 80);
    const s = await expectStatus(() => c.core.replaceNamespacedConfigMap({ name: 'absent', namespace: 'default', body: { metadata: { name: 'absent' } } }));
    assert.equal(s.code, 404);
  });

  test('the name in the body must match the URL', async () => {
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'named' } } });
    const s = await expectStatus(() => c.core.replaceNamespacedConfigMap({ name: 'named', namespace: 'default', body: { metadata: { name: 'other' } } }));
    assert.equal(s.code, 400);
    assert.equal(s.message, 'the name of the object (other) does not match the name on the URL (named)');
  });

  test('uid and creationTimestamp cannot be changed', async () => {
    const a = await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'immut' } } });
    const s = await expectStatus(() => c.core.replaceNamespacedConfigMap({ name: 'immut', namespace: 'default', body: { ...a, metadata: { ...a.metadata, uid: 'other' } } }));
    assert.equal(s.code, 422);
    assert.match(s.message ?? '', /metadata\.uid: Invalid value: "other": field is immutable/);
  });
});

describe('generation', () => {
  test('1 on create, +1 per spec change, unchanged by metadata-only and status writes', async () => {
    const d = await c.apps.createNamespacedDeployment({ namespace: 'default', body: deployment('gen') });
    assert.equal(d.metadata?.generation, 1);
    const labels = await c.apps.patchNamespacedDeployment({ name: 'gen', namespace: 'default', body: { metadata: { labels: { extra: 'x' } } } }, merge);
    assert.equal(labels.metadata?.generation, 1);
    const spec = await c.apps.patchNamespacedDeployment({ name: 'gen', namespace: 'default', body: { spec: { replicas: 4 } } }, merge);
    assert.equal(spec.metadata?.generation, 2);
    const status = await c.apps.patchNamespacedDeploymentStatus({ name: 'gen', namespace: 'default', body: { status: { replicas: 4, observedGeneration: 2 } } }, merge);
    assert.equal(status.metadata?.generation, 2);
    // Deployments (only) also bump on annotation changes: they are copied to ReplicaSets.
    const annotated = await c.apps.patchNamespacedDeployment({ name: 'gen', namespace: 'default', body: { metadata: { annotations: { a: 'b' } } } }, merge);
    assert.equal(annotated.metadata?.generation, 3);
  });

  test('pods have no generation', async () => {
    const p = await c.core.createNamespacedPod({ namespace: 'default', body: pod('nogen') });
    assert.equal(p.metadata?.generation, undefined);
  });
});

describe('status subresource isolation', () => {
  test('writes to the main resource ignore status; writes to status ignore spec', async () => {
    await c.apps.createNamespacedDeployment({ namespace: 'default', body: { ...deployment('iso'), status: { replicas: 9 } } });
    const created = await c.apps.readNamespacedDeployment({ name: 'iso', namespace: 'default' });
    assert.equal(created.status?.replicas, undefined, 'status is reset on create');
    const main = await c.apps.patchNamespacedDeployment({ name: 'iso', namespace: 'default', body: { spec: { replicas: 2 }, status: { replicas: 7 } } }, merge);
    assert.equal(main.spec?.replicas, 2);
    assert.equal(main.status?.replicas, undefined);
    const st = await c.apps.patchNamespacedDeploymentStatus({ name: 'iso', namespace: 'default', body: { spec: { replicas: 99 }, status: { replicas: 3 } } }, merge);
    assert.equal(st.spec?.replicas, 2);
    assert.equal(st.status?.replicas, 3);
    const put = await c.apps.replaceNamespacedDeploymentStatus({ name: 'iso', namespace: 'default', body: { ...st, spec: { ...st.spec!, replicas: 50 }, status: { replicas: 4 } } });
    assert.equal(put.spec?.replicas, 2);
    assert.equal(put.status?.replicas, 4);
  });
});

describe('patch', () => {
  test('JSON patch applies in order; a failed test is a 422 and changes nothing', async () => {
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'jp', labels: { a: '1' } }, data: { x: 'y' } } });
    const patched = await c.core.patchNamespacedConfigMap(
      { name: 'jp', namespace: 'default', body: [{ op: 'test', path: '/metadata/labels/a', value: '1' }, { op: 'add', path: '/data/z', value: 'w' }] },
      jsonPatch,
    );
    assert.deepEqual(patched.data, { x: 'y', z: 'w' });
    const s = await expectStatus(() =>
      c.core.patchNamespacedConfigMap({ name: 'jp', namespace: 'default', body: [{ op: 'add', path: '/data/q', value: 'r' }, { op: 'test', path: '/metadata/labels/a', value: '2' }] }, jsonPatch),
    );
    assert.equal(s.code, 422);
    assert.equal(s.reason, 'Invalid');
    assert.equal(s.details?.causes?.[0]?.message, 'testing value /metadata/labels/a failed: test failed');
    const after = await c.core.readNamespacedConfigMap({ name: 'jp', namespace: 'default' });
    assert.deepEqual(after.data, { x: 'y', z: 'w' });
  });

  test('strategic merge merges containers by name (a merge patch would replace the list)', async () => {
    await c.core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'smp' }, spec: { containers: [{ name: 'a', image: 'nginx:1' }, { name: 'b', image: 'redis:1' }] } },
    });
    const p = await c.core.patchNamespacedPod({ name: 'smp', namespace: 'default', body: { spec: { containers: [{ name: 'b', image: 'redis:2' }] } } }, strategic);
    assert.deepEqual(p.spec?.containers.map((x) => `${x.name}=${x.image}`), ['a=nginx:1', 'b=redis:2']);
  });

  test('a pod spec change other than images is forbidden', async () => {
    const s = await expectStatus(() => c.core.patchNamespacedPod({ name: 'smp', namespace: 'default', body: { spec: { restartPolicy: 'Never' } } }, strategic));
    assert.equal(s.code, 422);
    assert.equal(s.details?.causes?.[0]?.field, 'spec');
    assert.match(s.message ?? '', /pod updates may not change fields other than `spec\.containers\[\*\]\.image`/);
  });

  test('merge patch with a stale resourceVersion conflicts; without one it always applies', async () => {
    const cm = await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'mp' } } });
    await c.core.patchNamespacedConfigMap({ name: 'mp', namespace: 'default', body: { data: { a: '1' } } }, merge);
    const s = await expectStatus(() => c.core.patchNamespacedConfigMap({ name: 'mp', namespace: 'default', body: { metadata: { resourceVersion: cm.metadata?.resourceVersion }, data: { a: '2' } } }, merge));
    assert.equal(s.code, 409);
  });

  test('server-side apply creates, merges, records managedFields and drops fields the manager stopped applying', async () => {
    const apply = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.ServerSideApply);
    const first = await c.core.patchNamespacedConfigMap(
      { name: 'ssa', namespace: 'default', fieldManager: 'tester', body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa' }, data: { a: '1', b: '2' } } },
      apply,
    );
    assert.deepEqual(first.data, { a: '1', b: '2' });
    assert.equal(first.metadata?.managedFields?.[0]?.manager, 'tester');
    assert.equal(first.metadata?.managedFields?.[0]?.operation, 'Apply');
    const second = await c.core.patchNamespacedConfigMap(
      { name: 'ssa', namespace: 'default', fieldManager: 'tester', body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa' }, data: { a: '3' } } },
      apply,
    );
    assert.deepEqual(second.data, { a: '3' });
    const s = await expectStatus(() => c.core.patchNamespacedConfigMap({ name: 'ssa', namespace: 'default', body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa' } } }, apply));
    assert.equal(s.code, 400);
    assert.equal(s.message, 'fieldManager is required for apply requests');
  });
});

describe('scale subresource', () => {
  test('reads and writes spec.replicas, with the selector as a string', async () => {
    await c.apps.createNamespacedDeployment({ namespace: 'default', body: deployment('scaled', 2) });
    const scale = await c.apps.readNamespacedDeploymentScale({ name: 'scaled', namespace: 'default' });
    assert.equal(scale.kind, 'Scale');
    assert.equal(scale.apiVersion, 'autoscaling/v1');
    assert.equal(scale.spec?.replicas, 2);
    assert.equal(scale.status?.selector, 'app=scaled');
    const patched = await c.apps.patchNamespacedDeploymentScale({ name: 'scaled', namespace: 'default', body: { spec: { replicas: 5 } } }, merge);
    assert.equal(patched.spec?.replicas, 5);
    const d = await c.apps.readNamespacedDeployment({ name: 'scaled', namespace: 'default' });
    assert.equal(d.spec?.replicas, 5);
    assert.equal(d.metadata?.generation, 2);
    const put = await c.apps.replaceNamespacedDeploymentScale({ name: 'scaled', namespace: 'default', body: { metadata: { name: 'scaled' }, spec: { replicas: 1 } } });
    assert.equal(put.spec?.replicas, 1);
    const s = await expectStatus(() => c.apps.replaceNamespacedDeploymentScale({ name: 'scaled', namespace: 'default', body: { metadata: { name: 'scaled' }, spec: { replicas: -1 } } }));
    assert.equal(s.code, 422);
    assert.equal(s.message, 'Scale.autoscaling "scaled" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0');
  });
});

describe('deletecollection', () => {
  test('deletes what the selector matches and nothing else', async () => {
    for (const [name, tier] of [['dc-1', 'x'], ['dc-2', 'x'], ['dc-3', 'y']] as const) {
      await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name, labels: { tier } } } });
    }
    await c.core.deleteCollectionNamespacedConfigMap({ namespace: 'default', labelSelector: 'tier=x' });
    const left = await c.core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'tier' });
    assert.deepEqual(left.items.map((i) => i.metadata?.name), ['dc-3']);
  });
});

describe('KubernetesObjectApi (discovery-driven generic client)', () => {
  test('create, read, patch and delete a Deployment', async () => {
    const spec: k8s.KubernetesObject = deployment('generic');
    spec.metadata = { ...spec.metadata, namespace: 'default' };
    const created = await c.objects.create(spec);
    assert.equal(created.metadata?.name, 'generic');
    const read = await c.objects.read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'generic', namespace: 'default' } });
    assert.equal((read as k8s.V1Deployment).spec?.replicas, 1);
    const patched = await c.objects.patch(
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'generic', namespace: 'default' }, spec: { replicas: 3 } } as k8s.KubernetesObject,
      undefined,
      undefined,
      undefined,
      undefined,
      k8s.PatchStrategy.StrategicMergePatch,
    );
    assert.equal((patched as k8s.V1Deployment).spec?.replicas, 3);
    await c.objects.delete({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'generic', namespace: 'default' } });
    const s = await expectStatus(() => c.objects.read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'generic', namespace: 'default' } }));
    assert.equal(s.code, 404);
  });
});
