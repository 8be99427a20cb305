/**
 * The CloneSet controller against the embedded API server on a virtual
 * clock, through the real client (no scheduler or kubelet: a PodStarter marks
 * pods Running and Ready): the CRD it installs (served, scale subresource,
 * defaults), pods and their revision labels, status, scale-out limited by
 * scaleStrategy.maxUnavailable, scale-in by deletion cost (and availability
 * before cost), podsToDelete and the specified-delete label, partitioned
 * recreate updates (integer and percent), maxSurge, release of pods that
 * stop matching, minReadySeconds, and the revision history limit.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import { BUILTIN } from '../../client/resources.ts';
import { Informer } from '../../client/store.ts';
import { isPodReady } from '../../k8s/pod.ts';
import type { KubeObject, Pod } from '../../k8s/types.ts';
import { testBedCertificate, type ClientTestBed } from '../../testing/client-test-bed.ts';
import { freshNamespace, PodStarter, podTemplate, startControllerTestBed } from '../../testing/workload-controllers-bed.ts';
import { CloneSetController } from './cloneset.ts';
import { CLONESET_CRD_NAME, CLONESET_REF } from './cloneset-crd.ts';

const T0 = Date.UTC(2026, 0, 1);
const COST = 'controller.kubernetes.io/pod-deletion-cost';
let clock: VirtualClock;
let bed: ClientTestBed;
let controller: CloneSetController;
let starter: PodStarter;

before(async () => {
  clock = new VirtualClock(T0);
  bed = await startControllerTestBed(clock, testBedCertificate());
  controller = new CloneSetController({ client: bed.client, clock });
  await controller.start();
  starter = new PodStarter(bed.client, clock, { readyAfterMs: 1000, filter: (p) => p.metadata.labels?.['start'] !== 'no' });
  await clock.settle();
});
after(async () => {
  await starter.stop();
  await controller.stop();
  await bed.close();
});

// ---- helpers ----

function list(apiVersion: string, kind: string, ns: string): KubeObject[] {
  const r = bed.server.control.list(apiVersion, kind, ns);
  assert.ok(r.ok);
  return r.value.items;
}
const activePods = (ns: string): Pod[] => (list('v1', 'Pod', ns) as Pod[]).filter((p) => p.metadata.deletionTimestamp === undefined);
const names = (ps: readonly KubeObject[]): string[] => ps.map((p) => p.metadata?.name ?? '').sort();
const images = (ps: readonly Pod[]): string[] => ps.map((p) => p.spec.containers[0]?.image ?? '').sort();
const events = (ns: string, reason: string): string[] => list('events.k8s.io/v1', 'Event', ns).filter((e) => e['reason'] === reason).map((e) => String(e['note']));

function getCS(ns: string, name = 'web'): KubeObject {
  const r = bed.server.control.get('apps.kruise.io/v1alpha1', 'CloneSet', ns, name);
  assert.ok(r.ok);
  return r.value;
}
const status = (ns: string, name = 'web'): Record<string, unknown> => (getCS(ns, name)['status'] ?? {}) as Record<string, unknown>;
const specOf = (ns: string, name = 'web'): Record<string, unknown> => (getCS(ns, name)['spec'] ?? {}) as Record<string, unknown>;

async function createCS(ns: string, replicas: number, extra: Record<string, unknown> = {}, templateLabels: Record<string, string> = { app: 'web' }, image = 'nginx:1'): Promise<KubeObject> {
  return bed.client.create(CLONESET_REF, { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', metadata: { name: 'web', namespace: ns }, spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: podTemplate(templateLabels, { image }), ...extra } }, { namespace: ns });
}
const patchCS = (ns: string, body: unknown): Promise<unknown> => bed.client.patch(CLONESET_REF, 'web', { type: 'merge', body }, { namespace: ns });
const setImage = (ns: string, image: string, extra: Record<string, unknown> = {}): Promise<unknown> => patchCS(ns, { spec: { template: { spec: { containers: [{ name: 'app', image }] } }, ...extra } });
const setCost = (ns: string, pod: string, cost: number): Promise<unknown> => bed.client.patch(BUILTIN.pods, pod, { type: 'merge', body: { metadata: { annotations: { [COST]: String(cost) } } } }, { namespace: ns });

// ---- tests ----

describe('the CloneSet CRD', () => {
  test('is installed on start and served with status and scale subresources, the short name and the defaults of Kruise\u2019s webhook', async () => {
    const crd = await bed.client.get(BUILTIN.customresourcedefinitions, CLONESET_CRD_NAME);
    const version = (crd['spec'] as { versions: { name: string; subresources: unknown }[] }).versions[0];
    assert.equal(version?.name, 'v1alpha1');
    assert.deepEqual(version?.subresources, { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' } });
    const discovery = (await bed.client.getJson('/apis/apps.kruise.io/v1alpha1')) as { resources: { name: string; shortNames?: string[] }[] };
    assert.deepEqual(discovery.resources.find((r) => r.name === 'clonesets')?.shortNames, ['clone']);
    assert.ok(discovery.resources.some((r) => r.name === 'clonesets/scale'));
    const ns = await freshNamespace(bed.client);
    await bed.client.create(CLONESET_REF, { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', metadata: { name: 'web', namespace: ns }, spec: { selector: { matchLabels: { app: 'web' } }, template: podTemplate({ app: 'web' }) } }, { namespace: ns });
    const spec = specOf(ns);
    assert.equal(spec['replicas'], 1);
    assert.equal(spec['revisionHistoryLimit'], 10);
    assert.deepEqual(spec['updateStrategy'], { type: 'ReCreate', partition: 0, maxUnavailable: '20%', maxSurge: 0 });
    await clock.settle();
    const scale = await bed.client.getScale(CLONESET_REF, 'web', { namespace: ns });
    assert.deepEqual([scale.spec?.replicas, scale.status?.replicas, scale.status?.selector], [1, 1, 'app=web']);
  });

  test('a CRD of that name that already exists is left as it is', async () => {
    const other = new CloneSetController({ client: bed.client, clock, recordEvents: false });
    const before = await bed.client.get(BUILTIN.customresourcedefinitions, CLONESET_CRD_NAME);
    await other.start();
    await other.stop();
    const after = await bed.client.get(BUILTIN.customresourcedefinitions, CLONESET_CRD_NAME);
    assert.equal(after.metadata?.resourceVersion, before.metadata?.resourceVersion);
  });
});

describe('scale out', () => {
  test('pods are named <set>-<instance id> and carry the revision labels; status counts them', async () => {
    const ns = await freshNamespace(bed.client);
    const cs = await createCS(ns, 3);
    await clock.settle();
    const pods = activePods(ns);
    assert.equal(pods.length, 3);
    const st = status(ns);
    const revision = String(st['updateRevision']);
    assert.match(revision, /^web-[a-z0-9]+$/);
    for (const p of pods) {
      const id = p.metadata.labels?.['apps.kruise.io/cloneset-instance-id'] ?? '';
      assert.match(id, /^[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      assert.equal(p.metadata.name, `web-${id}`);
      assert.equal(p.metadata.labels?.['controller-revision-hash'], revision);
      assert.equal(p.metadata.labels?.['pod-template-hash'], revision.slice('web-'.length));
      assert.equal(p.metadata.labels?.['lifecycle.apps.kruise.io/state'], 'Normal');
      assert.deepEqual(p.metadata.ownerReferences, [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web', uid: cs.metadata?.uid, controller: true, blockOwnerDeletion: true }]);
    }
    assert.deepEqual(
      { ...st, updateRevision: undefined, currentRevision: st['currentRevision'] === revision },
      { observedGeneration: 1, replicas: 3, readyReplicas: 3, availableReplicas: 3, updatedReplicas: 3, updatedReadyReplicas: 3, updatedAvailableReplicas: 3, expectedUpdatedReplicas: 3, updateRevision: undefined, currentRevision: true, collisionCount: 0, labelSelector: 'app=web' },
    );
    const revisions = list('apps/v1', 'ControllerRevision', ns);
    assert.deepEqual(names(revisions), [revision]);
    assert.equal(revisions[0]?.metadata?.ownerReferences?.[0]?.kind, 'CloneSet');
    assert.deepEqual(events(ns, 'SuccessfulCreate').sort(), names(pods).map((n) => `succeed to create pod ${n}`));
  });

  test('scaleStrategy.maxUnavailable: at most that many pods not yet available at a time', async () => {
    const ns = await freshNamespace(bed.client);
    await createCS(ns, 3, { scaleStrategy: { maxUnavailable: 1 } });
    await clock.quiesce();
    assert.equal(activePods(ns).length, 1, 'one pod, until it is ready');
    await clock.advance(1000);
    await clock.quiesce();
    assert.equal(activePods(ns).length, 2);
    await clock.settle();
    assert.equal(activePods(ns).length, 3);
    assert.ok(events(ns, 'ScaleUpLimited').some((n) => n.includes('limit: 1')));
  });
});

describe('scale in', () => {
  test('the pods with the lowest pod-deletion-cost go first', async () => {
    const ns = await freshNamespace(bed.client);
    await createCS(ns, 4);
    await clock.settle();
    const [a, b, c, d] = names(activePods(ns));
    for (const [pod, cost] of [[a, 300], [b, -100], [c, 200], [d, 100]] as const) await setCost(ns, pod ?? '', cost);
    await bed.client.scale(CLONESET_REF, 'web', 2, { namespace: ns });
    await clock.settle();
    assert.deepEqual(names(activePods(ns)), [a, c].sort());
    assert.deepEqual(events(ns, 'SuccessfulDelete').sort(), [b, d].map((n) => `succeed to delete pod ${n}`).sort());
  });

  test('a pod not yet available (minReadySeconds) goes before a cheaper available one', async () => {
    const ns = await freshNamespace(bed.client);
    await createCS(ns, 1, { minReadySeconds: 60 });
    await clock.settle();
    const [old] = names(activePods(ns));
    await setCost(ns, old ?? '', -500);
    await bed.client.scale(CLONESET_REF, 'web', 2, { namespace: ns });
    await clock.advance(5_000);
    await clock.quiesce();
    const young = names(activePods(ns)).find((n) => n !== old) ?? '';
    await setCost(ns, young, 500);
    await bed.client.scale(CLONESET_REF, 'web', 1, { namespace: ns });
    await clock.quiesce();
    assert.deepEqual(names(activePods(ns)), [old]);
  });

  test('scaleStrategy.podsToDelete: the named pods go first, instead of a scale-in by cost, and the list is cleared', async () => {
    const ns = await freshNamespace(bed.client);
    await createCS(ns, 3);
    await clock.settle();
    const [a, b, c] = names(activePods(ns));
    await setCost(ns, a ?? '', 1000);
    await setCost(ns, b ?? '', -1000);
    await patchCS(ns, { spec: { replicas: 2, scaleStrategy: { podsToDelete: [a, 'gone-already'] } } });
    await clock.settle();
    assert.deepEqual(names(activePods(ns)), [b, c].sort(), 'the named pod went, not the cheapest');
    assert.equal((specOf(ns)['scaleStrategy'] as Record<string, unknown>)['podsToDelete'], undefined);
  });

  test('with unchanged replicas a pod named in podsToDelete (or labelled specified-delete) is replaced', async () => {
    const ns = await freshNamespace(bed.client);
    await createCS(ns, 2);
    await clock.settle();
    const [a, b] = names(activePods(ns));
    await patchCS(ns, { spec: { scaleStrategy: { podsToDelete: [a] } } });
    await clock.settle();
    const afterList = names(activePods(ns));
    assert.equal(afterList.length, 2);
    assert.ok(!afterList.includes(a ?? '') && afterList.includes(b ?? ''));
    await bed.client.patch(BUILTIN.pods, b ?? '', { type: 'merge', body: { metadata: { labels: { 'apps.kruise.io/specified-delete': 'true' } } } }, { namespace: ns });
    await clock.settle();
    const last = names(activePods(ns));
    assert.equal(last.length, 2);
    assert.ok(!last.includes(b ?? ''));
    assert.equal((specOf(ns)['scaleStrategy'] as Record<string, unknown> | undefined)?.['podsToDelete'], undefined);
  });
});

describe('recreate updates', () => {
  test('partition (an integer): that many pods stay at the old revision; status tracks both revisions; partition 0 finishes', async () => {
    const ns = await freshNamespace(bed.client);
    await createCS(ns, 5, { updateStrategy: { partition: 2 } });
    await clock.settle();
    const oldRevision = String(status(ns)['updateRevision']);
    await setImage(ns, 'nginx:2');
    await clock.settle();
    const pods = activePods(ns);
    assert.deepEqual(images(pods), ['nginx:1', 'nginx:1', 'nginx:2', 'nginx:2', 'nginx:2']);
    const st = status(ns);
    const newRevision = String(st['updateRevision']);
    assert.notEqual(newRevision, oldRevision);
    assert.deepEqual([st['currentRevision'], st['updatedReplicas'], st['updatedReadyReplicas'], st['expectedUpdatedReplicas'], st['observedGeneration']], [oldRevision, 3, 3, 3, 2]);
    for (const p of pods) {
      const want = p.spec.containers[0]?.image === 'nginx:2' ? newRevision : oldRevision;
      assert.equal(p.metadata.labels?.['controller-revision-hash'], want);
    }
    assert.equal(events(ns, 'SuccessfulUpdatePodReCreate').length, 3);
    await patchCS(ns, { spec: { updateStrategy: { partition: 0 } } });
    await clock.settle();
    assert.deepEqual(images(activePods(ns)), Array(5).fill('nginx:2'));
    assert.deepEqual([status(ns)['currentRevision'], status(ns)['updatedReplicas']], [newRevision, 5]);
  });

  test('partition as a percentage rounds up (at least one old pod), and scale-out keeps the old share', async () => {
    const ns = await freshNamespace(bed.client);
    await createCS(ns, 5, { updateStrategy: { partition: '30%' } });
    await clock.settle();
    await setImage(ns, 'nginx:2');
    await clock.settle();
    assert.deepEqual(images(activePods(ns)), ['nginx:1', 'nginx:1', 'nginx:2', 'nginx:2', 'nginx:2'], 'ceil(30% × 5) = 2 old');
    await bed.client.scale(CLONESET_REF, 'web', 10, { namespace: ns });
    await clock.settle();
    assert.deepEqual(images(activePods(ns)), [...Array(3).fill('nginx:1'), ...Array(7).fill('nginx:2')], 'ceil(30% × 10) = 3 old: one created at the old revision');
  });

  test('maxUnavailable bounds the pods recreated at once', async () => {
    const ns = await freshNamespace(bed.client);
    await createCS(ns, 4, { updateStrategy: { maxUnavailable: 1 } });
    await clock.settle();
    await setImage(ns, 'nginx:2');
    await clock.quiesce();
    const mid = activePods(ns);
    assert.equal(mid.filter((p) => p.spec.containers[0]?.image === 'nginx:1').length, 3, 'one pod at a time');
    assert.ok(mid.filter(isPodReady).length >= 3);
    await clock.settle();
    assert.deepEqual(images(activePods(ns)), Array(4).fill('nginx:2'));
  });

  test('maxSurge: the new pods come first, so no old pod goes before a new one is ready', async () => {
    const ns = await freshNamespace(bed.client);
    await createCS(ns, 3, { updateStrategy: { maxSurge: 1, maxUnavailable: 0 } });
    await clock.settle();
    const seen: { pods: number; ready: number }[] = [];
    const watch = new Informer<Pod>({ client: bed.client, ref: BUILTIN.pods, namespace: ns, resyncMs: 0, name: 'surge-watch' });
    const note = () => {
      const pods = watch.store.list(ns).filter((p) => p.metadata.deletionTimestamp === undefined);
      seen.push({ pods: pods.length, ready: pods.filter(isPodReady).length });
    };
    watch.store.onAdd(note);
    watch.store.onUpdate(note);
    watch.store.onDelete(note);
    watch.start();
    await watch.waitForSync();
    try {
      await setImage(ns, 'nginx:2');
      await clock.settle();
      assert.deepEqual(images(activePods(ns)), Array(3).fill('nginx:2'));
      assert.equal(Math.max(...seen.map((s) => s.pods)), 4, 'one pod above replicas');
      assert.ok(seen.every((s) => s.ready >= 3), `never fewer than 3 ready pods: ${JSON.stringify(seen)}`);
    } finally {
      await watch.stop();
    }
  });

  test('old revisions beyond revisionHistoryLimit that no pod uses are deleted', async () => {
    const ns = await freshNamespace(bed.client);
    await createCS(ns, 1, { revisionHistoryLimit: 1 });
    await clock.settle();
    for (const image of ['nginx:2', 'nginx:3', 'nginx:4']) {
      await setImage(ns, image);
      await clock.settle();
    }
    const revisions = list('apps/v1', 'ControllerRevision', ns);
    assert.equal(revisions.length, 2, 'the live revision and one old one');
    assert.ok(revisions.some((r) => r.metadata?.name === status(ns)['updateRevision']));
  });
});

describe('ownership and availability', () => {
  test('a pod whose labels stop matching is released and replaced; an orphan that matches is not adopted', async () => {
    const ns = await freshNamespace(bed.client);
    await bed.client.create(BUILTIN.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'orphan', namespace: ns, labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'x' }] } }, { namespace: ns });
    await createCS(ns, 2);
    await clock.settle();
    const owned = activePods(ns).filter((p) => p.metadata.ownerReferences !== undefined);
    assert.equal(owned.length, 2, 'two pods of its own; the orphan stays an orphan');
    const leaver = owned[0]?.metadata.name ?? '';
    await bed.client.patch(BUILTIN.pods, leaver, { type: 'merge', body: { metadata: { labels: { app: 'debug' } } } }, { namespace: ns });
    await clock.settle();
    const released = activePods(ns).find((p) => p.metadata.name === leaver);
    assert.deepEqual(released?.metadata.ownerReferences ?? [], []);
    assert.equal(activePods(ns).filter((p) => p.metadata.ownerReferences?.length === 1).length, 2, 'replaced');
  });

  test('minReadySeconds: availableReplicas follows readyReplicas once the pods have been ready that long', async () => {
    const ns = await freshNamespace(bed.client);
    await createCS(ns, 2, { minReadySeconds: 30 });
    await clock.advance(2_000);
    await clock.quiesce();
    assert.deepEqual([status(ns)['readyReplicas'], status(ns)['availableReplicas']], [2, 0]);
    await clock.settle();
    assert.deepEqual([status(ns)['readyReplicas'], status(ns)['availableReplicas'], status(ns)['updatedAvailableReplicas']], [2, 2, 2]);
  });

  test('a selector that does not match the template labels creates no pod (Kruise\u2019s webhook refuses such a set)', async () => {
    const ns = await freshNamespace(bed.client);
    await createCS(ns, 2, {}, { app: 'other' });
    await clock.settle();
    assert.equal(activePods(ns).length, 0);
    assert.ok(events(ns, 'InvalidSelector').length > 0);
  });

  test('pods that never become ready hold back neither scale-out nor status', async () => {
    const ns = await freshNamespace(bed.client);
    await createCS(ns, 2, {}, { app: 'web', start: 'no' });
    await clock.settle();
    assert.equal(activePods(ns).length, 2);
    assert.deepEqual([status(ns)['replicas'], status(ns)['readyReplicas']], [2, 0]);
  });
});
