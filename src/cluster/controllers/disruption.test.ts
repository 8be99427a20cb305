/**
 * The PodDisruptionBudget status controller against the embedded API server
 * on the virtual clock: expectedPods / desiredHealthy / currentHealthy /
 * disruptionsAllowed for integer and percentage minAvailable and
 * maxUnavailable (percentages rounded up, the denominator taken from the
 * controllers' scale: Deployment through its ReplicaSet, ReplicaSet,
 * StatefulSet, a custom resource's scale subresource), unmanaged pods,
 * SyncFailed, the DisruptionAllowed condition and observedGeneration, and
 * disruptedPods entries that expire after 2 minutes or go with their pod.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import { BUILTIN, type ResourceRef } from '../../client/resources.ts';
import { formatTime } from '../../k8s/time.ts';
import type { KubeObject, OwnerReference } from '../../k8s/types.ts';
import { testBedCertificate, type ClientTestBed } from '../../testing/client-test-bed.ts';
import { freshNamespace, markPodReady, podTemplate, startControllerTestBed } from '../../testing/workload-controllers-bed.ts';
import { DELETION_TIMEOUT_MS, DisruptionController, type PdbStatus } from './disruption.ts';

const T0 = Date.UTC(2026, 0, 1);
let clock: VirtualClock;
let bed: ClientTestBed;
let controller: DisruptionController;

before(async () => {
  clock = new VirtualClock(T0);
  bed = await startControllerTestBed(clock, testBedCertificate());
  controller = new DisruptionController({ client: bed.client, clock });
  await controller.start();
  await clock.settle();
});

after(async () => {
  await controller.stop();
  await bed.close();
});

const LABELS = { app: 'web' };

function ref(owner: KubeObject): OwnerReference {
  return { apiVersion: owner.apiVersion ?? '', kind: owner.kind ?? '', name: owner.metadata?.name ?? '', uid: owner.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true };
}

async function create(r: ResourceRef, obj: KubeObject): Promise<KubeObject> {
  const created = await bed.client.create<KubeObject>(r, obj, obj.metadata?.namespace === undefined ? {} : { namespace: obj.metadata.namespace });
  return { ...created, apiVersion: obj.apiVersion ?? '', kind: obj.kind ?? '' };
}

/** `count` pods owned by `owner` (or unowned), the first `ready` of them Running and Ready. */
async function pods(ns: string, prefix: string, count: number, ready: number, owner?: KubeObject): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const metadata: KubeObject['metadata'] = { name: `${prefix}-${i}`, namespace: ns, labels: LABELS };
    if (owner !== undefined) metadata.ownerReferences = [ref(owner)];
    const pod = await create(BUILTIN.pods, { apiVersion: 'v1', kind: 'Pod', metadata, spec: { containers: [{ name: 'app', image: 'nginx' }] } });
    if (i < ready) await markPodReady(bed.client, pod, clock.now());
    names.push(metadata.name ?? '');
  }
  return names;
}

async function deploymentWithPods(ns: string, replicas: number, count: number, ready: number): Promise<string[]> {
  const d = await create(BUILTIN.deployments, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns }, spec: { replicas, selector: { matchLabels: LABELS }, template: podTemplate(LABELS) } });
  const rs = await create(BUILTIN.replicasets, { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web-x', namespace: ns, ownerReferences: [ref(d)] }, spec: { replicas, selector: { matchLabels: LABELS }, template: podTemplate(LABELS) } });
  return pods(ns, 'web-x', count, ready, rs);
}

async function pdb(ns: string, name: string, spec: Record<string, unknown>): Promise<void> {
  await create(BUILTIN.poddisruptionbudgets, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name, namespace: ns }, spec: { selector: { matchLabels: LABELS }, ...spec } });
}

function status(ns: string, name: string): PdbStatus & { generation: number } {
  const r = bed.server.control.get('policy/v1', 'PodDisruptionBudget', ns, name);
  assert.ok(r.ok);
  return { ...(r.value['status'] as PdbStatus), generation: r.value.metadata?.generation ?? 0 };
}

const numbers = (s: PdbStatus): [number, number, number, number] => [s.expectedPods, s.desiredHealthy, s.currentHealthy, s.disruptionsAllowed];

describe('budget arithmetic', () => {
  // A Deployment of 6 replicas of which 5 pods exist and are Ready.
  const cases: { name: string; spec: Record<string, unknown>; want: [number, number, number, number]; allowed: 'True' | 'False' }[] = [
    { name: 'min-int', spec: { minAvailable: 2 }, want: [5, 2, 5, 3], allowed: 'True' },
    { name: 'min-pct', spec: { minAvailable: '50%' }, want: [6, 3, 5, 2], allowed: 'True' },
    { name: 'min-pct-round-up', spec: { minAvailable: '55%' }, want: [6, 4, 5, 1], allowed: 'True' },
    { name: 'min-all', spec: { minAvailable: '100%' }, want: [6, 6, 5, 0], allowed: 'False' },
    { name: 'max-int', spec: { maxUnavailable: 1 }, want: [6, 5, 5, 0], allowed: 'False' },
    { name: 'max-int-2', spec: { maxUnavailable: 2 }, want: [6, 4, 5, 1], allowed: 'True' },
    { name: 'max-pct', spec: { maxUnavailable: '30%' }, want: [6, 4, 5, 1], allowed: 'True' },
    { name: 'max-zero', spec: { maxUnavailable: 0 }, want: [6, 6, 5, 0], allowed: 'False' },
  ];
  let ns = '';

  before(async () => {
    ns = await freshNamespace(bed.client, 'pdb');
    await deploymentWithPods(ns, 6, 5, 5);
    for (const c of cases) await pdb(ns, c.name, c.spec);
    await clock.settle();
  });

  for (const c of cases) {
    test(`${c.name}: ${JSON.stringify(c.spec)} → expected, desired, healthy, allowed = ${c.want.join(', ')}`, () => {
      const s = status(ns, c.name);
      assert.deepEqual(numbers(s), c.want);
      const cond = s.conditions?.find((x) => x.type === 'DisruptionAllowed');
      assert.equal(cond?.status, c.allowed);
      assert.equal(cond?.reason, c.allowed === 'True' ? 'SufficientPods' : 'InsufficientPods');
      assert.equal(s.observedGeneration, s.generation);
    });
  }

  test('a pod that stops being Ready or starts terminating is not healthy', async () => {
    await bed.client.patchStatus(BUILTIN.pods, 'web-x-0', { type: 'merge', body: { status: { conditions: [{ type: 'Ready', status: 'False' }] } } }, { namespace: ns });
    await clock.settle();
    assert.deepEqual(numbers(status(ns, 'min-int')), [5, 2, 4, 2]);
    assert.deepEqual(numbers(status(ns, 'max-int-2')), [6, 4, 4, 0]);
    assert.equal(status(ns, 'max-int-2').conditions?.find((x) => x.type === 'DisruptionAllowed')?.status, 'False');
  });

  test('a spec change is observed (observedGeneration follows generation)', async () => {
    await bed.client.patch(BUILTIN.poddisruptionbudgets, 'min-int', { type: 'merge', body: { spec: { minAvailable: 1 } } }, { namespace: ns });
    await clock.settle();
    const s = status(ns, 'min-int');
    assert.equal(s.generation, 2);
    assert.equal(s.observedGeneration, 2);
    assert.deepEqual(numbers(s), [5, 1, 4, 3]);
  });
});

describe('expected pods from other controllers', () => {
  test('a ReplicaSet without a Deployment counts with its own replicas', async () => {
    const ns = await freshNamespace(bed.client, 'pdb');
    const rs = await create(BUILTIN.replicasets, { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'solo', namespace: ns }, spec: { replicas: 4, selector: { matchLabels: LABELS }, template: podTemplate(LABELS) } });
    await pods(ns, 'solo', 2, 2, rs);
    await pdb(ns, 'b', { maxUnavailable: '50%' });
    await clock.settle();
    assert.deepEqual(numbers(status(ns, 'b')), [4, 2, 2, 0]);
  });

  test('a StatefulSet counts with its replicas', async () => {
    const ns = await freshNamespace(bed.client, 'pdb');
    const sts = await create(BUILTIN.statefulsets, { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db', namespace: ns }, spec: { replicas: 3, serviceName: 'db', selector: { matchLabels: LABELS }, template: podTemplate(LABELS) } });
    await pods(ns, 'db', 3, 3, sts);
    await pdb(ns, 'b', { maxUnavailable: 1 });
    await clock.settle();
    assert.deepEqual(numbers(status(ns, 'b')), [3, 2, 3, 1]);
  });

  test('any resource with a scale subresource counts with its scale', async () => {
    await bed.client.create(BUILTIN.customresourcedefinitions, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'fleets.pdb.example.com' },
      spec: {
        group: 'pdb.example.com',
        scope: 'Namespaced',
        names: { plural: 'fleets', singular: 'fleet', kind: 'Fleet' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
            subresources: { scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
          },
        ],
      },
    });
    await clock.settle();
    const fleets: ResourceRef = { group: 'pdb.example.com', version: 'v1', resource: 'fleets', kind: 'Fleet', namespaced: true };
    const ns = await freshNamespace(bed.client, 'pdb');
    const fleet = await create(fleets, { apiVersion: 'pdb.example.com/v1', kind: 'Fleet', metadata: { name: 'f', namespace: ns }, spec: { replicas: 10 } });
    await pods(ns, 'f', 3, 3, fleet);
    await pdb(ns, 'b', { minAvailable: '20%' });
    await clock.settle();
    assert.deepEqual(numbers(status(ns, 'b')), [10, 2, 3, 1]);
  });

  test('pods without a controller are left out of a percentage (unmanaged) but count as healthy', async () => {
    const ns = await freshNamespace(bed.client, 'pdb');
    await deploymentWithPods(ns, 2, 2, 2);
    await pods(ns, 'bare', 2, 2);
    await pdb(ns, 'b', { maxUnavailable: '50%' });
    await clock.settle();
    assert.deepEqual(numbers(status(ns, 'b')), [2, 1, 4, 3]);
  });

  test('a pod whose controller cannot be found fails the sync safely (SyncFailed)', async () => {
    const ns = await freshNamespace(bed.client, 'pdb');
    const ghost = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'ghost', uid: 'no-such-uid' } } as KubeObject;
    await pods(ns, 'lost', 2, 2, ghost);
    await pdb(ns, 'b', { maxUnavailable: 1 });
    await clock.settle();
    const s = status(ns, 'b');
    assert.equal(s.disruptionsAllowed, 0);
    const cond = s.conditions?.find((x) => x.type === 'DisruptionAllowed');
    assert.equal(cond?.status, 'False');
    assert.equal(cond?.reason, 'SyncFailed');
    assert.match(cond?.message ?? '', /found no controllers for pod "lost-[01]"/);
  });

  test('a nil selector selects nothing: no expected pods, nothing allowed', async () => {
    const ns = await freshNamespace(bed.client, 'pdb');
    await deploymentWithPods(ns, 2, 2, 2);
    await create(BUILTIN.poddisruptionbudgets, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'none', namespace: ns }, spec: { maxUnavailable: 1 } });
    await pdb(ns, 'all', { selector: {}, minAvailable: 0 });
    await clock.settle();
    assert.deepEqual(numbers(status(ns, 'none')), [0, 0, 0, 0]);
    assert.deepEqual(numbers(status(ns, 'all')), [2, 0, 2, 2], 'an empty selector selects every pod');
  });
});

describe('disruptedPods', () => {
  async function recordEviction(ns: string, name: string, pod: string, at: number): Promise<void> {
    const current = status(ns, name);
    const body = { status: { disruptedPods: { [pod]: formatTime(at) }, disruptionsAllowed: Math.max(0, current.disruptionsAllowed - 1) } };
    await bed.client.patchStatus(BUILTIN.poddisruptionbudgets, name, { type: 'merge', body }, { namespace: ns });
  }

  test('an evicted pod does not count as healthy until its entry expires after 2 minutes', async () => {
    const ns = await freshNamespace(bed.client, 'pdb');
    await deploymentWithPods(ns, 3, 3, 3);
    await pdb(ns, 'b', { minAvailable: 1 });
    await clock.settle();
    assert.deepEqual(numbers(status(ns, 'b')), [3, 1, 3, 2]);
    const evictedAt = clock.now();
    await recordEviction(ns, 'b', 'web-x-1', evictedAt);
    await clock.quiesce();
    assert.deepEqual(numbers(status(ns, 'b')), [3, 1, 2, 1]);
    assert.deepEqual(status(ns, 'b').disruptedPods, { 'web-x-1': formatTime(evictedAt) });
    await clock.advance(DELETION_TIMEOUT_MS - 1000);
    assert.deepEqual(status(ns, 'b').disruptedPods, { 'web-x-1': formatTime(evictedAt) }, 'still waited for');
    await clock.settle();
    assert.equal(clock.now(), Math.floor(evictedAt / 1000) * 1000 + DELETION_TIMEOUT_MS, 'looked at again exactly when the entry expires');
    assert.equal(status(ns, 'b').disruptedPods, undefined);
    assert.deepEqual(numbers(status(ns, 'b')), [3, 1, 3, 2]);
  });

  test('an entry goes as soon as its pod is deleted', async () => {
    const ns = await freshNamespace(bed.client, 'pdb');
    await deploymentWithPods(ns, 3, 3, 3);
    await pdb(ns, 'b', { minAvailable: 1 });
    await clock.settle();
    await recordEviction(ns, 'b', 'web-x-2', clock.now());
    await clock.quiesce();
    assert.ok(status(ns, 'b').disruptedPods?.['web-x-2'] !== undefined);
    const t = clock.now();
    await bed.client.delete(BUILTIN.pods, 'web-x-2', { namespace: ns });
    await clock.quiesce();
    assert.equal(clock.now(), t);
    assert.equal(status(ns, 'b').disruptedPods, undefined);
    assert.deepEqual(numbers(status(ns, 'b')), [2, 1, 2, 1], 'an integer minAvailable expects the pods that exist');
  });
});
