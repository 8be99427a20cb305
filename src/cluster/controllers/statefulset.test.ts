/**
 * The StatefulSet controller against the embedded API server on the virtual
 * clock: ordinal names and identity labels, ControllerRevisions and the
 * revision label, OrderedReady (creation one at a time, gated on readiness)
 * versus Parallel, scale-down from the highest ordinal (one at a time,
 * waiting for each to be gone), rolling updates from the highest ordinal
 * honouring partition and maxUnavailable, OnDelete, rollback, failed-pod
 * recreation and the status counters. Orders are asserted from the pod
 * watch events a test informer records.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import { BUILTIN } from '../../client/resources.ts';
import { Informer } from '../../client/store.ts';
import type { KubeObject, Pod } from '../../k8s/types.ts';
import { testBedCertificate, type ClientTestBed } from '../../testing/client-test-bed.ts';
import { freshNamespace, markPodReady, PodStarter, podTemplate, startControllerTestBed } from '../../testing/workload-controllers-bed.ts';
import { statusError } from '../apiserver/errors.ts';
import { StatefulSetController } from './statefulset.ts';
import { POD_INDEX_LABEL, STATEFULSET_POD_NAME_LABEL } from './statefulset-pods.ts';
import { CONTROLLER_REVISION_HASH_LABEL, STATEFULSET_REVISION_LABEL } from './statefulset-revisions.ts';

const T0 = Date.UTC(2026, 0, 1);
let clock: VirtualClock;
let bed: ClientTestBed;
let controller: StatefulSetController;
let starter: PodStarter;
let recorder: Informer<Pod>;
const events: { type: 'add' | 'delete' | 'terminating'; ns: string; name: string; at: number }[] = [];
/** Namespace → whether the admission chain refuses this pod creation (a webhook that is down). */
const refuse = new Map<string, () => boolean>();

before(async () => {
  clock = new VirtualClock(T0);
  bed = await startControllerTestBed(clock, testBedCertificate());
  bed.server.core.admission.register({
    name: 'test-pod-gate',
    validate: (a) => {
      if (a.operation !== 'CREATE' || a.resource.plural !== 'pods' || a.subresource !== '' || refuse.get(a.namespace)?.() !== true) return undefined;
      return { allowed: false, status: statusError(500, 'InternalError', 'Internal error occurred: failed calling webhook "gate.test": connection refused') };
    },
  });
  controller = new StatefulSetController({ client: bed.client, clock });
  await controller.start();
  // Only pods labelled start=yes become Running and Ready (a kubelet stand-in).
  starter = new PodStarter(bed.client, clock, { filter: (p) => p.metadata.labels?.['start'] === 'yes' });
  recorder = new Informer<Pod>({ client: bed.client, ref: BUILTIN.pods, resyncMs: 0, name: 'recorder' });
  const at = () => clock.now();
  recorder.store.onAdd((p) => events.push({ type: 'add', ns: p.metadata.namespace ?? '', name: p.metadata.name ?? '', at: at() }));
  recorder.store.onUpdate((old, p) => {
    if (old.metadata.deletionTimestamp === undefined && p.metadata.deletionTimestamp !== undefined) events.push({ type: 'terminating', ns: p.metadata.namespace ?? '', name: p.metadata.name ?? '', at: at() });
  });
  recorder.store.onDelete((p) => events.push({ type: 'delete', ns: p.metadata.namespace ?? '', name: p.metadata.name ?? '', at: at() }));
  recorder.start();
  await clock.settle();
});

after(async () => {
  await recorder.stop();
  await starter.stop();
  await controller.stop();
  await bed.close();
});

const eventsOf = (ns: string, type: 'add' | 'delete' | 'terminating'): string[] => events.filter((e) => e.ns === ns && e.type === type).map((e) => e.name);

function pods(ns: string): Pod[] {
  const r = bed.server.control.list('v1', 'Pod', ns);
  assert.ok(r.ok);
  return (r.value.items as Pod[]).sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
}

const names = (list: KubeObject[]): string[] => list.map((p) => p.metadata?.name ?? '');
const alive = (ns: string): string[] => names(pods(ns).filter((p) => p.metadata.deletionTimestamp === undefined));
const terminating = (ns: string): string[] => names(pods(ns).filter((p) => p.metadata.deletionTimestamp !== undefined));

function getSet(ns: string, name = 'web'): KubeObject & { status?: Record<string, unknown> } {
  const r = bed.server.control.get('apps/v1', 'StatefulSet', ns, name);
  assert.ok(r.ok);
  return r.value as KubeObject & { status?: Record<string, unknown> };
}

function revisions(ns: string): (KubeObject & { revision?: number; data?: unknown })[] {
  const r = bed.server.control.list('apps/v1', 'ControllerRevision', ns);
  assert.ok(r.ok);
  return r.value.items as (KubeObject & { revision?: number; data?: unknown })[];
}

interface SetOptions {
  replicas?: number;
  policy?: 'OrderedReady' | 'Parallel';
  start?: boolean;
  nodeName?: string;
  updateStrategy?: Record<string, unknown>;
  image?: string;
  ordinalsStart?: number;
  revisionHistoryLimit?: number;
}

function statefulSet(ns: string, o: SetOptions = {}): KubeObject {
  const template = podTemplate({ app: 'web', start: o.start === false ? 'no' : 'yes' }, { image: o.image ?? 'nginx:1.25' }) as { spec: Record<string, unknown> };
  if (o.nodeName !== undefined) template.spec['nodeName'] = o.nodeName;
  const spec: Record<string, unknown> = { replicas: o.replicas ?? 3, serviceName: 'web', selector: { matchLabels: { app: 'web' } }, template, podManagementPolicy: o.policy ?? 'OrderedReady' };
  if (o.updateStrategy !== undefined) spec['updateStrategy'] = o.updateStrategy;
  if (o.ordinalsStart !== undefined) spec['ordinals'] = { start: o.ordinalsStart };
  if (o.revisionHistoryLimit !== undefined) spec['revisionHistoryLimit'] = o.revisionHistoryLimit;
  return { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'web', namespace: ns }, spec };
}

async function create(ns: string, o: SetOptions = {}): Promise<void> {
  await bed.client.create(BUILTIN.statefulsets, statefulSet(ns, o), { namespace: ns });
}

async function patchSpec(ns: string, spec: Record<string, unknown>): Promise<void> {
  await bed.client.patch(BUILTIN.statefulsets, 'web', { type: 'merge', body: { spec } }, { namespace: ns });
}

async function setImage(ns: string, image: string): Promise<void> {
  await bed.client.patch(BUILTIN.statefulsets, 'web', { type: 'strategic', body: { spec: { template: { spec: { containers: [{ name: 'app', image }] } } } } }, { namespace: ns });
}

/** What a kubelet does at the end of a graceful deletion. */
async function finishTerminating(ns: string): Promise<void> {
  for (const p of pods(ns).filter((x) => x.metadata.deletionTimestamp !== undefined)) {
    await bed.client.delete(BUILTIN.pods, p.metadata.name ?? '', { namespace: ns, gracePeriodSeconds: 0 });
  }
}

const imageOf = (p: Pod): string => (p.spec.containers[0]?.image as string | undefined) ?? '';

describe('identity and revisions', () => {
  test('pods are <set>-<ordinal> with identity labels, hostname, controller ref and the update revision', async () => {
    const ns = await freshNamespace(bed.client, 'sts');
    await create(ns, { policy: 'Parallel' });
    await clock.settle();
    const set = getSet(ns);
    const list = pods(ns);
    assert.deepEqual(names(list), ['web-0', 'web-1', 'web-2']);
    const revs = revisions(ns);
    assert.equal(revs.length, 1);
    const rev = revs[0] as KubeObject & { revision?: number; data?: Record<string, unknown> };
    assert.equal(rev.revision, 1);
    assert.match(rev.metadata?.name ?? '', /^web-[bcdfghjklmnpqrstvwxz2456789]+$/);
    assert.equal(rev.metadata?.labels?.[CONTROLLER_REVISION_HASH_LABEL], (rev.metadata?.name ?? '').slice('web-'.length));
    assert.equal(rev.metadata?.ownerReferences?.[0]?.uid, set.metadata?.uid);
    const data = rev.data as { spec: { template: Record<string, unknown> } };
    assert.equal(data.spec.template['$patch'], 'replace');
    for (const [i, p] of list.entries()) {
      assert.equal(p.metadata.labels?.[STATEFULSET_POD_NAME_LABEL], `web-${i}`);
      assert.equal(p.metadata.labels?.[POD_INDEX_LABEL], String(i));
      assert.equal(p.metadata.labels?.[STATEFULSET_REVISION_LABEL], rev.metadata?.name);
      assert.equal(p.spec['hostname'], `web-${i}`);
      assert.equal(p.spec['subdomain'], 'web');
      assert.equal(p.metadata.ownerReferences?.[0]?.kind, 'StatefulSet');
      assert.equal(p.metadata.ownerReferences?.[0]?.controller, true);
    }
    assert.equal(set.status?.['currentRevision'], rev.metadata?.name);
    assert.equal(set.status?.['updateRevision'], rev.metadata?.name);
    assert.equal(set.status?.['collisionCount'], 0);
  });

  test('spec.ordinals.start shifts the ordinals', async () => {
    const ns = await freshNamespace(bed.client, 'sts');
    await create(ns, { policy: 'Parallel', replicas: 2, ordinalsStart: 5 });
    await clock.settle();
    assert.deepEqual(alive(ns), ['web-5', 'web-6']);
  });

  test('status counts replicas, ready, available, current, updated and observedGeneration', async () => {
    const ns = await freshNamespace(bed.client, 'sts');
    await create(ns, { replicas: 3 });
    await clock.settle();
    const s = getSet(ns);
    assert.equal(s.status?.['replicas'], 3);
    assert.equal(s.status?.['readyReplicas'], 3);
    assert.equal(s.status?.['availableReplicas'], 3);
    assert.equal(s.status?.['currentReplicas'], 3);
    assert.equal(s.status?.['updatedReplicas'], 3);
    assert.equal(s.status?.['observedGeneration'], s.metadata?.generation);
  });

  test('one create per ordinal (fixed names, no duplicates)', async () => {
    const ns = await freshNamespace(bed.client, 'sts');
    const before = bed.server.control.requestCount({ resource: 'pods', verb: 'create' });
    await create(ns, { policy: 'Parallel', replicas: 2 });
    await clock.settle();
    assert.equal(bed.server.control.requestCount({ resource: 'pods', verb: 'create' }) - before, 2);
  });
});

describe('OrderedReady versus Parallel', () => {
  test('OrderedReady creates ordinal i only once 0..i-1 are Running and Ready', async () => {
    const ns = await freshNamespace(bed.client, 'sts');
    await create(ns, { replicas: 3, start: false });
    await clock.settle();
    assert.deepEqual(alive(ns), ['web-0'], 'web-1 waits for web-0');
    await markPodReady(bed.client, pods(ns)[0] as Pod, clock.now());
    await clock.settle();
    assert.deepEqual(alive(ns), ['web-0', 'web-1']);
    await markPodReady(bed.client, pods(ns)[1] as Pod, clock.now());
    await clock.settle();
    assert.deepEqual(alive(ns), ['web-0', 'web-1', 'web-2']);
    assert.deepEqual(eventsOf(ns, 'add'), ['web-0', 'web-1', 'web-2']);
  });

  test('OrderedReady with a kubelet: one pod per start delay, in ordinal order', async () => {
    const ns = await freshNamespace(bed.client, 'sts');
    const t = clock.now();
    await create(ns, { replicas: 4 });
    await clock.settle();
    const adds = events.filter((e) => e.ns === ns && e.type === 'add');
    assert.deepEqual(adds.map((e) => e.name), ['web-0', 'web-1', 'web-2', 'web-3']);
    // Each creation waits for the previous pod's 1 s start delay.
    assert.deepEqual(adds.map((e) => e.at - t), [0, 1000, 2000, 3000]);
  });

  test('minReadySeconds: each ordinal waits until its predecessor has been ready that long', async () => {
    const ns = await freshNamespace(bed.client, 'sts');
    const t = clock.now();
    await create(ns, { replicas: 3 });
    await patchSpec(ns, { minReadySeconds: 10 });
    await clock.settle();
    const adds = events.filter((e) => e.ns === ns && e.type === 'add').map((e) => e.at - t);
    assert.equal(adds.length, 3);
    // Ready 1 s after creation, available 10 s later (readiness times have second precision: up to 1 s less).
    for (let i = 1; i < 3; i++) {
      const gap = (adds[i] ?? 0) - (adds[i - 1] ?? 0);
      assert.ok(gap >= 10_000 && gap <= 11_001, `gap ${gap}`);
    }
    const s = getSet(ns);
    assert.equal(s.status?.['availableReplicas'], 3);
  });

  test('Parallel creates every ordinal at once, ready or not', async () => {
    const ns = await freshNamespace(bed.client, 'sts');
    await create(ns, { replicas: 4, start: false, policy: 'Parallel' });
    await clock.settle();
    assert.deepEqual(alive(ns), ['web-0', 'web-1', 'web-2', 'web-3']);
    assert.ok(pods(ns).every((p) => p.status?.phase === 'Pending'));
  });
});

describe('scale down', () => {
  test('OrderedReady removes the highest ordinal first, one at a time, after the previous is gone', async () => {
    const ns = await freshNamespace(bed.client, 'sts');
    await create(ns, { replicas: 4, nodeName: 'node-a' });
    await clock.settle();
    assert.deepEqual(alive(ns), ['web-0', 'web-1', 'web-2', 'web-3']);
    await patchSpec(ns, { replicas: 1 });
    await clock.settle();
    assert.deepEqual(terminating(ns), ['web-3'], 'graceful deletion of web-3 blocks web-2');
    await finishTerminating(ns);
    await clock.settle();
    assert.deepEqual(terminating(ns), ['web-2']);
    await finishTerminating(ns);
    await clock.settle();
    assert.deepEqual(terminating(ns), ['web-1']);
    await finishTerminating(ns);
    await clock.settle();
    assert.deepEqual(names(pods(ns)), ['web-0']);
    assert.deepEqual(eventsOf(ns, 'terminating'), ['web-3', 'web-2', 'web-1']);
    assert.equal(getSet(ns).status?.['replicas'], 1);
  });

  test('OrderedReady does not scale down while a lower ordinal is unhealthy', async () => {
    const ns = await freshNamespace(bed.client, 'sts');
    await create(ns, { replicas: 3, nodeName: 'node-a', start: false });
    for (let i = 0; i < 3; i++) {
      await clock.settle();
      await markPodReady(bed.client, pods(ns)[i] as Pod, clock.now());
    }
    await clock.settle();
    assert.equal(getSet(ns).status?.['readyReplicas'], 3);
    await bed.client.patchStatus(BUILTIN.pods, 'web-0', { type: 'merge', body: { status: { conditions: [{ type: 'Ready', status: 'False' }] } } }, { namespace: ns });
    await patchSpec(ns, { replicas: 1 });
    await clock.settle();
    assert.deepEqual(terminating(ns), [], 'web-2 waits for web-0 to be healthy again');
    await markPodReady(bed.client, pods(ns)[0] as Pod, clock.now());
    await clock.settle();
    assert.deepEqual(terminating(ns), ['web-2']);
  });

  test('Parallel removes every condemned pod at once', async () => {
    const ns = await freshNamespace(bed.client, 'sts');
    await create(ns, { replicas: 4, nodeName: 'node-a', policy: 'Parallel' });
    await clock.settle();
    await patchSpec(ns, { replicas: 1 });
    await clock.settle();
    assert.deepEqual(terminating(ns), ['web-1', 'web-2', 'web-3']);
    assert.deepEqual(eventsOf(ns, 'terminating'), ['web-3', 'web-2', 'web-1'], 'the highest ordinal still goes first');
  });
});

describe('rolling update', () => {
  test('replaces pods from the highest ordinal down, each after its successor is healthy', async () => {
    const ns = await freshNamespace(bed.client, 'sts');
    await create(ns, { replicas: 3 });
    await clock.settle();
    const first = getSet(ns).status?.['updateRevision'];
    const t = clock.now();
    await setImage(ns, 'nginx:1.26');
    await clock.settle();
    const deletes = events.filter((e) => e.ns === ns && e.type === 'delete');
    assert.deepEqual(deletes.map((e) => e.name), ['web-2', 'web-1', 'web-0']);
    // One replacement per start delay: the next pod goes once the previous one is Ready again.
    assert.deepEqual(deletes.map((e) => e.at - t), [0, 1000, 2000]);
    const s = getSet(ns);
    assert.notEqual(s.status?.['updateRevision'], first);
    assert.equal(s.status?.['currentRevision'], s.status?.['updateRevision'], 'a finished update makes the update revision current');
    assert.equal(s.status?.['updatedReplicas'], 3);
    assert.equal(s.status?.['currentReplicas'], 3);
    assert.ok(pods(ns).every((p) => imageOf(p) === 'nginx:1.26' && p.metadata.labels?.[STATEFULSET_REVISION_LABEL] === s.status?.['updateRevision']));
    const revs = revisions(ns).sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0));
    assert.deepEqual(revs.map((r) => r.revision), [1, 2]);
    assert.equal(revs[0]?.metadata?.name, first);
  });

  test('partition keeps ordinals below it at the current revision', async () => {
    const ns = await freshNamespace(bed.client, 'sts');
    await create(ns, { replicas: 4, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } });
    await clock.settle();
    const old = getSet(ns).status?.['currentRevision'];
    await setImage(ns, 'nginx:1.26');
    await clock.settle();
    const images = pods(ns).map(imageOf);
    assert.deepEqual(images, ['nginx:1.25', 'nginx:1.25', 'nginx:1.26', 'nginx:1.26']);
    assert.deepEqual(eventsOf(ns, 'delete'), ['web-3', 'web-2']);
    const s = getSet(ns);
    assert.equal(s.status?.['currentRevision'], old, 'the update is not complete below the partition');
    assert.equal(s.status?.['updatedReplicas'], 2);
    assert.equal(s.status?.['currentReplicas'], 2);
    // A pod below the partition that is deleted comes back at the current revision.
    await bed.client.delete(BUILTIN.pods, 'web-0', { namespace: ns });
    await clock.settle();
    assert.equal(imageOf(pods(ns)[0] as Pod), 'nginx:1.25');
    // Lowering the partition continues the rollout.
    await patchSpec(ns, { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } } });
    await clock.settle();
    assert.deepEqual(pods(ns).map(imageOf), ['nginx:1.26', 'nginx:1.26', 'nginx:1.26', 'nginx:1.26']);
    assert.equal(getSet(ns).status?.['currentRevision'], getSet(ns).status?.['updateRevision']);
  });

  test('maxUnavailable replaces that many pods at once', async () => {
    const ns = await freshNamespace(bed.client, 'sts');
    await create(ns, { replicas: 4, nodeName: 'node-a', policy: 'Parallel', updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0, maxUnavailable: 2 } } });
    await clock.settle();
    await setImage(ns, 'nginx:1.26');
    await clock.settle();
    assert.deepEqual(terminating(ns), ['web-2', 'web-3']);
    await finishTerminating(ns);
    await clock.settle();
    assert.deepEqual(terminating(ns), ['web-0', 'web-1'], 'the replacements are healthy, so the next two go');
    await finishTerminating(ns);
    await clock.settle();
    assert.deepEqual(pods(ns).map(imageOf), ['nginx:1.26', 'nginx:1.26', 'nginx:1.26', 'nginx:1.26']);
  });

  test('OnDelete only recreates pods the user deletes, at the update revision', async () => {
    const ns = await freshNamespace(bed.client, 'sts');
    await create(ns, { replicas: 2, updateStrategy: { type: 'OnDelete' } });
    await clock.settle();
    await setImage(ns, 'nginx:1.26');
    await clock.settle();
    assert.deepEqual(pods(ns).map(imageOf), ['nginx:1.25', 'nginx:1.25']);
    await bed.client.delete(BUILTIN.pods, 'web-1', { namespace: ns });
    await clock.settle();
    assert.deepEqual(pods(ns).map(imageOf), ['nginx:1.25', 'nginx:1.26']);
    const s = getSet(ns);
    assert.equal(s.status?.['updatedReplicas'], 1);
    assert.equal(s.status?.['currentReplicas'], 1);
  });

  test('rolling back to an older template renumbers its revision instead of creating one', async () => {
    const ns = await freshNamespace(bed.client, 'sts');
    await create(ns, { replicas: 2 });
    await clock.settle();
    const first = getSet(ns).status?.['updateRevision'];
    await setImage(ns, 'nginx:1.26');
    await clock.settle();
    await setImage(ns, 'nginx:1.25');
    await clock.settle();
    const revs = revisions(ns);
    assert.equal(revs.length, 2);
    const back = revs.find((r) => r.metadata?.name === first);
    assert.equal(back?.revision, 3);
    assert.equal(getSet(ns).status?.['updateRevision'], first);
    assert.deepEqual(pods(ns).map(imageOf), ['nginx:1.25', 'nginx:1.25']);
  });

  test('revisionHistoryLimit drops the oldest unused revisions', async () => {
    const ns = await freshNamespace(bed.client, 'sts');
    await create(ns, { replicas: 1, revisionHistoryLimit: 1 });
    await clock.settle();
    for (const v of ['1.26', '1.27', '1.28']) {
      await setImage(ns, `nginx:${v}`);
      await clock.settle();
    }
    const revs = revisions(ns).sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0));
    assert.deepEqual(revs.map((r) => r.revision), [3, 4]);
  });
});

describe('failed pods and adoption', () => {
  test('a Failed replica is deleted and recreated', async () => {
    const ns = await freshNamespace(bed.client, 'sts');
    await create(ns, { replicas: 2 });
    await clock.settle();
    const uid = pods(ns)[1]?.metadata.uid;
    await bed.client.patchStatus(BUILTIN.pods, 'web-1', { type: 'merge', body: { status: { phase: 'Failed' } } }, { namespace: ns });
    await clock.settle();
    const p1 = pods(ns)[1] as Pod;
    assert.equal(p1.metadata.name, 'web-1');
    assert.notEqual(p1.metadata.uid, uid);
    assert.equal(p1.status?.phase, 'Running');
  });

  test('an orphan pod with a member name and matching labels is adopted; a non-member is not', async () => {
    const ns = await freshNamespace(bed.client, 'sts');
    const orphan = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, labels: { app: 'web', start: 'yes' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] } });
    await bed.client.create(BUILTIN.pods, orphan('web-0'), { namespace: ns });
    await bed.client.create(BUILTIN.pods, orphan('other-0'), { namespace: ns });
    await clock.settle();
    await create(ns, { replicas: 1 });
    await clock.settle();
    const byName = new Map(pods(ns).map((p) => [p.metadata.name, p]));
    assert.equal(byName.get('web-0')?.metadata.ownerReferences?.[0]?.kind, 'StatefulSet');
    assert.equal(byName.get('other-0')?.metadata.ownerReferences, undefined);
    assert.equal(byName.get('web-0')?.metadata.labels?.[STATEFULSET_POD_NAME_LABEL], 'web-0', 'identity labels are added to an adopted pod');
  });
});

describe('retries', () => {
  test('a webhook outage mid-scale: once it is over the set reaches its replicas by itself, no later than the outage lasted', async () => {
    const ns = await freshNamespace(bed.client, 'sts');
    const outageMs = 60_000;
    let calls = 0;
    let outageEnds: number | undefined;
    refuse.set(ns, () => {
      if (++calls === 8) outageEnds = clock.now() + outageMs;
      return outageEnds !== undefined && clock.now() < outageEnds;
    });
    await create(ns, { replicas: 20, policy: 'Parallel' });
    await clock.advance(outageMs / 2);
    assert.equal(alive(ns).length, 7, 'the outage stopped the scale-up');
    assert.ok(outageEnds !== undefined);
    await clock.advance(outageEnds - clock.now());
    // Nothing touches the set from here on: only its own retries can finish the job.
    await clock.advance(outageMs);
    assert.equal(alive(ns).length, 20, 'the retry came within the outage\'s length after it ended');
    refuse.delete(ns);
  });
});
