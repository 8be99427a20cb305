/**
 * The garbage collector against the embedded API server on the virtual
 * clock: cascading deletion of a Deployment → ReplicaSet → Pods with
 * background, foreground (the owner stays until its blocking dependents are
 * gone) and orphan propagation; dependents with several owners; custom
 * resources discovered after start; owner references across namespaces, to
 * kinds the server does not serve, and from cluster-scoped dependents; and
 * the pure owner graph.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import { BUILTIN, type ResourceRef } from '../../client/resources.ts';
import type { KubeObject, OwnerReference } from '../../k8s/types.ts';
import { testBedCertificate, type ClientTestBed } from '../../testing/client-test-bed.ts';
import { freshNamespace, podTemplate, startControllerTestBed } from '../../testing/workload-controllers-bed.ts';
import { GarbageCollector } from './garbage-collector.ts';
import { OwnerGraph } from './garbage-collector-graph.ts';

const T0 = Date.UTC(2026, 0, 1);
let clock: VirtualClock;
let bed: ClientTestBed;
let gc: GarbageCollector;

before(async () => {
  clock = new VirtualClock(T0);
  bed = await startControllerTestBed(clock, testBedCertificate());
  gc = new GarbageCollector({ client: bed.client, clock });
  await gc.start();
  await clock.settle();
});

after(async () => {
  await gc.stop();
  await bed.close();
});

const HOLD = 'test.example.com/hold';

function ownerRef(owner: KubeObject, block = true): OwnerReference {
  return { apiVersion: owner.apiVersion ?? '', kind: owner.kind ?? '', name: owner.metadata?.name ?? '', uid: owner.metadata?.uid ?? '', controller: true, blockOwnerDeletion: block };
}

async function create(ref: ResourceRef, obj: KubeObject): Promise<KubeObject> {
  const created = await bed.client.create<KubeObject>(ref, obj, obj.metadata?.namespace === undefined ? {} : { namespace: obj.metadata.namespace });
  return { ...created, apiVersion: obj.apiVersion ?? '', kind: obj.kind ?? '' };
}

function exists(apiVersion: string, kind: string, ns: string, name: string): KubeObject | undefined {
  const r = bed.server.control.get(apiVersion, kind, ns, name);
  return r.ok ? r.value : undefined;
}

/** A Deployment, its ReplicaSet and two Pods, linked by controller references as the controllers would. */
async function deploymentTree(ns: string, podFinalizers: string[] = []): Promise<{ deployment: KubeObject; rs: KubeObject; pods: string[] }> {
  const labels = { app: 'web' };
  const deployment = await create(BUILTIN.deployments, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns }, spec: { replicas: 2, selector: { matchLabels: labels }, template: podTemplate(labels) } });
  const rs = await create(BUILTIN.replicasets, {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: 'web-abc', namespace: ns, ownerReferences: [ownerRef(deployment)] },
    spec: { replicas: 2, selector: { matchLabels: labels }, template: podTemplate(labels) },
  });
  const pods: string[] = [];
  for (const name of ['web-abc-1', 'web-abc-2']) {
    const metadata: KubeObject['metadata'] = { name, namespace: ns, labels, ownerReferences: [ownerRef(rs)] };
    if (podFinalizers.length > 0) metadata.finalizers = podFinalizers;
    await create(BUILTIN.pods, { apiVersion: 'v1', kind: 'Pod', metadata, spec: { containers: [{ name: 'app', image: 'nginx' }] } });
    pods.push(name);
  }
  await clock.settle();
  return { deployment, rs, pods };
}

async function dropHold(ns: string, names: string[]): Promise<void> {
  for (const name of names) await bed.client.patch(BUILTIN.pods, name, { type: 'merge', body: { metadata: { finalizers: null } } }, { namespace: ns });
}

describe('cascading deletion of a Deployment', () => {
  test('background: the Deployment goes at once, then its ReplicaSet, then the Pods', async () => {
    const ns = await freshNamespace(bed.client, 'gc');
    await deploymentTree(ns);
    await bed.client.delete(BUILTIN.deployments, 'web', { namespace: ns, propagationPolicy: 'Background' });
    assert.equal(exists('apps/v1', 'Deployment', ns, 'web'), undefined);
    await clock.settle();
    assert.equal(exists('apps/v1', 'ReplicaSet', ns, 'web-abc'), undefined);
    assert.equal(exists('v1', 'Pod', ns, 'web-abc-1'), undefined);
    assert.equal(exists('v1', 'Pod', ns, 'web-abc-2'), undefined);
  });

  test('foreground: the Deployment and ReplicaSet stay until the Pods are gone', async () => {
    const ns = await freshNamespace(bed.client, 'gc');
    const { pods } = await deploymentTree(ns, [HOLD]);
    await bed.client.delete(BUILTIN.deployments, 'web', { namespace: ns, propagationPolicy: 'Foreground' });
    await clock.settle();
    const d = exists('apps/v1', 'Deployment', ns, 'web');
    const rs = exists('apps/v1', 'ReplicaSet', ns, 'web-abc');
    assert.ok(d?.metadata?.deletionTimestamp !== undefined, 'the Deployment waits, marked for deletion');
    assert.deepEqual(d?.metadata?.finalizers, ['foregroundDeletion']);
    assert.ok(rs?.metadata?.deletionTimestamp !== undefined, 'the ReplicaSet is deleted in the foreground too');
    assert.deepEqual(rs?.metadata?.finalizers, ['foregroundDeletion']);
    for (const p of pods) assert.ok(exists('v1', 'Pod', ns, p)?.metadata?.deletionTimestamp !== undefined);
    await dropHold(ns, pods);
    await clock.settle();
    assert.equal(exists('v1', 'Pod', ns, 'web-abc-1'), undefined);
    assert.equal(exists('apps/v1', 'ReplicaSet', ns, 'web-abc'), undefined);
    assert.equal(exists('apps/v1', 'Deployment', ns, 'web'), undefined);
  });

  test('foreground: a dependent that does not block its owner is deleted but not waited for', async () => {
    const ns = await freshNamespace(bed.client, 'gc');
    const owner = await create(BUILTIN.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner', namespace: ns } });
    await create(BUILTIN.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'loose', namespace: ns, finalizers: [HOLD], ownerReferences: [ownerRef(owner, false)] } });
    await clock.settle();
    await bed.client.delete(BUILTIN.configmaps, 'owner', { namespace: ns, propagationPolicy: 'Foreground' });
    await clock.settle();
    assert.equal(exists('v1', 'ConfigMap', ns, 'owner'), undefined, 'nothing blocks the owner');
    assert.ok(exists('v1', 'ConfigMap', ns, 'loose')?.metadata?.deletionTimestamp !== undefined);
  });

  test('orphan: the Deployment goes, the ReplicaSet loses its owner reference and stays with its Pods', async () => {
    const ns = await freshNamespace(bed.client, 'gc');
    const { rs } = await deploymentTree(ns);
    await bed.client.delete(BUILTIN.deployments, 'web', { namespace: ns, propagationPolicy: 'Orphan' });
    await clock.settle();
    assert.equal(exists('apps/v1', 'Deployment', ns, 'web'), undefined);
    const kept = exists('apps/v1', 'ReplicaSet', ns, 'web-abc');
    assert.equal(kept?.metadata?.uid, rs.metadata?.uid);
    assert.equal(kept?.metadata?.ownerReferences, undefined);
    assert.equal(exists('v1', 'Pod', ns, 'web-abc-1')?.metadata?.ownerReferences?.[0]?.uid, rs.metadata?.uid);
  });
});

describe('owner references', () => {
  test('with one owner gone and one alive, only the dangling reference is removed', async () => {
    const ns = await freshNamespace(bed.client, 'gc');
    const a = await create(BUILTIN.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: ns } });
    const b = await create(BUILTIN.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b', namespace: ns } });
    await create(BUILTIN.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dep', namespace: ns, ownerReferences: [{ ...ownerRef(a), controller: false }, { ...ownerRef(b), controller: false }] } });
    await clock.settle();
    await bed.client.delete(BUILTIN.configmaps, 'a', { namespace: ns });
    await clock.settle();
    assert.deepEqual(exists('v1', 'ConfigMap', ns, 'dep')?.metadata?.ownerReferences?.map((r) => r.name), ['b']);
    await bed.client.delete(BUILTIN.configmaps, 'b', { namespace: ns });
    await clock.settle();
    assert.equal(exists('v1', 'ConfigMap', ns, 'dep'), undefined);
  });

  test('a dependent created for an owner that no longer exists is collected', async () => {
    const ns = await freshNamespace(bed.client, 'gc');
    await create(BUILTIN.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late', namespace: ns, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'ghost', uid: 'no-such-uid' }] } });
    await clock.settle();
    assert.equal(exists('v1', 'ConfigMap', ns, 'late'), undefined);
  });

  test('a namespaced owner in another namespace counts as absent: the dependent is collected', async () => {
    const nsA = await freshNamespace(bed.client, 'gc');
    const nsB = await freshNamespace(bed.client, 'gc');
    const owner = await create(BUILTIN.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner', namespace: nsA } });
    await create(BUILTIN.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner-elsewhere', namespace: nsA, ownerReferences: [ownerRef(owner)] } });
    await create(BUILTIN.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'across', namespace: nsB, ownerReferences: [ownerRef(owner)] } });
    await clock.settle();
    assert.equal(exists('v1', 'ConfigMap', nsB, 'across'), undefined);
    assert.ok(exists('v1', 'ConfigMap', nsA, 'owner'), 'the owner is untouched');
    assert.ok(exists('v1', 'ConfigMap', nsA, 'owner-elsewhere'), 'a same-namespace dependent stays');
  });

  test('a cluster-scoped owner of a namespaced dependent is valid', async () => {
    const ns = await freshNamespace(bed.client, 'gc');
    const node = await create(BUILTIN.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: `node-${ns}` } });
    await create(BUILTIN.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'per-node', namespace: ns, ownerReferences: [ownerRef(node)] } });
    await clock.settle();
    assert.ok(exists('v1', 'ConfigMap', ns, 'per-node'));
    await bed.client.delete(BUILTIN.nodes, `node-${ns}`);
    await clock.settle();
    assert.equal(exists('v1', 'ConfigMap', ns, 'per-node'), undefined);
  });

  test('a cluster-scoped dependent of a namespaced kind is left alone', async () => {
    const ns = await freshNamespace(bed.client, 'gc');
    const cm = await create(BUILTIN.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner', namespace: ns } });
    await create(BUILTIN.priorityclasses, { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: `pc-${ns}`, ownerReferences: [ownerRef(cm)] }, value: 10 });
    await clock.settle();
    await bed.client.delete(BUILTIN.configmaps, 'owner', { namespace: ns });
    await clock.settle();
    assert.ok(exists('scheduling.k8s.io/v1', 'PriorityClass', '', `pc-${ns}`));
  });

  test('a reference to a kind the server does not serve keeps its dependent, and settle() still ends', async () => {
    const ns = await freshNamespace(bed.client, 'gc');
    await create(BUILTIN.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mystery', namespace: ns, ownerReferences: [{ apiVersion: 'nowhere.example.com/v1', kind: 'Nope', name: 'x', uid: 'uid-x' }] } });
    const r = await clock.settle();
    assert.equal(r.quiescent, true);
    assert.ok(exists('v1', 'ConfigMap', ns, 'mystery'));
  });
});

describe('custom resources', () => {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gadgets.gc.example.com' },
    spec: {
      group: 'gc.example.com',
      scope: 'Namespaced',
      names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  };
  const gadgets: ResourceRef = { group: 'gc.example.com', version: 'v1', resource: 'gadgets', kind: 'Gadget', namespaced: true };

  test('a CRD installed after start is discovered; its objects own and are owned', async () => {
    await bed.client.create(BUILTIN.customresourcedefinitions, crd);
    await clock.settle();
    assert.ok(gc.watchedResources().includes('gc.example.com/gadgets'));
    const ns = await freshNamespace(bed.client, 'gc');
    const gadget = await create(gadgets, { apiVersion: 'gc.example.com/v1', kind: 'Gadget', metadata: { name: 'g1', namespace: ns } });
    await create(BUILTIN.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'of-gadget', namespace: ns, ownerReferences: [ownerRef(gadget)] } });
    const cm = await create(BUILTIN.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'parent', namespace: ns } });
    await create(gadgets, { apiVersion: 'gc.example.com/v1', kind: 'Gadget', metadata: { name: 'child', namespace: ns, ownerReferences: [ownerRef(cm)] } });
    await clock.settle();
    await bed.client.delete(gadgets, 'g1', { namespace: ns });
    await bed.client.delete(BUILTIN.configmaps, 'parent', { namespace: ns });
    await clock.settle();
    assert.equal(exists('v1', 'ConfigMap', ns, 'of-gadget'), undefined);
    assert.equal(exists('gc.example.com/v1', 'Gadget', ns, 'child'), undefined);
  });

  test('removing the CRD stops watching its resource', async () => {
    await bed.client.delete(BUILTIN.customresourcedefinitions, 'gadgets.gc.example.com');
    const r = await clock.settle();
    assert.equal(r.quiescent, true);
    assert.ok(!gc.watchedResources().includes('gc.example.com/gadgets'));
    assert.ok(!gc.watchedResources().includes('/events') && !gc.watchedResources().includes('events.k8s.io/events'), 'events are never collected');
  });
});

describe('owner graph', () => {
  const obj = (uid: string, ns: string, owners: OwnerReference[] = [], extra: Record<string, unknown> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: uid, namespace: ns, uid, ownerReferences: owners, ...extra } });
  const ref = (uid: string, block = false): OwnerReference => ({ apiVersion: 'v1', kind: 'ConfigMap', name: uid, uid, blockOwnerDeletion: block });

  test('an unseen owner becomes a virtual node and is queued for a check', () => {
    const g = new OwnerGraph();
    const w = g.observe(obj('d', 'n', [ref('o')]));
    assert.deepEqual(w.remove, ['o']);
    assert.equal(g.node('o')?.virtual, true);
    g.observe(obj('o', 'n'));
    assert.equal(g.node('o')?.virtual, false);
    assert.deepEqual([...(g.node('o')?.dependents ?? [])], ['d']);
  });

  test('deleting an owner queues its dependents and marks it absent in its namespace only', () => {
    const g = new OwnerGraph();
    g.observe(obj('o', 'n'));
    g.observe(obj('d', 'n', [ref('o')]));
    const w = g.forget(obj('o', 'n'));
    assert.deepEqual(w.remove, ['d']);
    assert.ok(g.isAbsent('o', 'n'));
    assert.ok(!g.isAbsent('o', 'other'));
  });

  test('foreground deletion queues the owner and every dependent once; blocking dependents hold it', () => {
    const g = new OwnerGraph();
    g.observe(obj('o', 'n'));
    g.observe(obj('a', 'n', [ref('o', true)]));
    g.observe(obj('b', 'n', [ref('o', false)]));
    const w = g.observe(obj('o', 'n', [], { deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['foregroundDeletion'] }));
    assert.deepEqual(w.remove.sort(), ['a', 'b', 'o']);
    assert.deepEqual(g.blockingDependents('o').map((n) => n.identity.uid), ['a']);
    assert.deepEqual(g.observe(obj('o', 'n', [], { deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['foregroundDeletion'] })).remove, [], 'not again on the next update');
    assert.deepEqual(g.forget(obj('a', 'n', [ref('o', true)])).remove, ['o'], 'a blocking dependent leaving wakes the owner');
  });

  test('the orphan finalizer queues orphaning; a cross-namespace reference is reported', () => {
    const g = new OwnerGraph();
    assert.deepEqual(g.observe(obj('o', 'n', [], { deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['orphan'] })).orphan, ['o']);
    const w = g.observe(obj('x', 'elsewhere', [ref('o')]));
    assert.deepEqual(w.invalidNamespace.map((i) => i.dependent), ['x']);
    assert.deepEqual(w.remove, ['x']);
  });
});
