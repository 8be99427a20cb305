import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { VirtualClock } from '../clock/virtual-clock.ts';
import type { Subset, SubsetStatus, WorkloadSpread } from '../api/workloadspread.ts';
import type { Pod } from '../k8s/types.ts';
import { admitPodDeletion } from './pod-delete.ts';
import { deploymentChain, fixtureReview, handlerBed, requestOf, type HandlerBed } from '../testing/admission-kit.ts';

const VERSION = '5d4f8b7c9';
const NOW = '2026-01-01T00:00:00Z';

function spread(statuses: SubsetStatus[] | undefined, subsets: Subset[] = [{ name: 'zone-a', maxReplicas: 2 }, { name: 'zone-b', maxReplicas: 3 }]): WorkloadSpread {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'WorkloadSpread',
    metadata: { name: 'web-spread', namespace: 'shop', uid: 'ws-uid-1' },
    spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets },
    ...(statuses === undefined ? {} : { status: { versionedSubsetStatuses: { [VERSION]: statuses } } }),
  };
}

const full: SubsetStatus[] = [
  { name: 'zone-a', replicas: 2, missingReplicas: 0, creatingPods: {}, deletingPods: {} },
  { name: 'zone-b', replicas: 1, missingReplicas: 2, creatingPods: {}, deletingPods: {} },
];

function bedWith(ws: WorkloadSpread, cachePod = true): HandlerBed & { clock: VirtualClock } {
  const clock = new VirtualClock();
  const bed = handlerBed(clock);
  bed.cluster.objects.push(...deploymentChain());
  bed.cluster.spreads.push(bed.store.put(ws));
  // The deleted pod is one the cluster has (issue 14: a DELETE is booked for the stored pod only).
  if (cachePod) bed.cluster.pods.push(fixtureReview('pod-delete.json').request['oldObject'] as Pod);
  return { ...bed, clock };
}

async function review(bed: HandlerBed & { clock: VirtualClock }, fixture: string, edit: (r: ReturnType<typeof fixtureReview>) => void = () => {}) {
  const r = fixtureReview(fixture);
  edit(r);
  const pending = admitPodDeletion(requestOf(r), bed.deps);
  await bed.clock.settle();
  return pending;
}

const stored = (bed: HandlerBed) => bed.store.get('shop', 'web-spread')?.status?.versionedSubsetStatuses?.[VERSION] ?? [];
/** The fixture pod as the cache holds it (eviction reviews carry only the name). */
const fixturePod = (): Pod => fixtureReview('pod-delete.json').request['oldObject'] as Pod;

describe('pod DELETE admission (spec §3)', () => {
  test('records the deletion: deletingPods[name] = now, missingReplicas++ in the pod version', async () => {
    const bed = bedWith(spread(full));
    const response = await review(bed, 'pod-delete.json');
    assert.deepEqual(response, { uid: '0f0e6c7a-1b52-4d56-9a8e-3a1c1a0b0002', allowed: true });
    assert.deepEqual(stored(bed)[0], { name: 'zone-a', replicas: 2, missingReplicas: 1, creatingPods: {}, deletingPods: { 'web-5d4f8b7c9-abcde': NOW } });
    assert.equal(bed.store.writes, 1);
  });

  test('a review the API server gave up on records nothing', async () => {
    const bed = bedWith(spread(full));
    const gone = new AbortController();
    gone.abort();
    const pending = admitPodDeletion(requestOf(fixtureReview('pod-delete.json')), bed.deps, undefined, { signal: gone.signal, turn: () => Promise.resolve() });
    await bed.clock.settle();
    const response = await pending;
    assert.equal(response.allowed, false);
    assert.match(response.status?.message ?? '', /gave up on this review/);
    assert.equal(bed.store.writes, 0);
    assert.deepEqual(stored(bed)[0]?.deletingPods ?? {}, {});
  });

  test('a second DELETE of the same pod records nothing more', async () => {
    const bed = bedWith(spread(full));
    await review(bed, 'pod-delete.json');
    await review(bed, 'pod-delete.json');
    assert.equal(stored(bed)[0]?.missingReplicas, 1);
    assert.equal(bed.store.writes, 1);
  });

  test('a version without an entry is initialized like on create, then recorded', async () => {
    const bed = bedWith(spread(undefined));
    await review(bed, 'pod-delete.json');
    assert.deepEqual(
      stored(bed).map((s) => [s.name, s.missingReplicas, Object.keys(s.deletingPods ?? {})]),
      [
        ['zone-a', 3, ['web-5d4f8b7c9-abcde']],
        ['zone-b', 3, []],
      ],
    );
  });

  /** An edit of the deleted pod, as the cluster stores it and as the review carries it. */
  const podEdit = (edit: (p: Pod) => void) => (r: ReturnType<typeof fixtureReview>, bed: HandlerBed) => {
    edit(r.request['oldObject'] as Pod);
    for (const p of bed.cluster.pods) edit(p);
  };
  const untouched: { name: string; ws?: WorkloadSpread; edit: (r: ReturnType<typeof fixtureReview>, bed: HandlerBed) => void }[] = [
    { name: 'dry run (DeleteOptions)', edit: (r) => void (r.request['options'] = { kind: 'DeleteOptions', dryRun: ['All'] }) },
    { name: 'dry run (request)', edit: (r) => void (r.request['dryRun'] = true) },
    { name: 'no oldObject (an old API server)', edit: (r) => void (r.request['oldObject'] = null) },
    { name: 'a subresource', edit: (r) => void (r.request['subResource'] = 'status') },
    { name: 'a pod without the marker', edit: podEdit((p) => void (p.metadata.annotations = {})) },
    { name: 'a marker that is not JSON', edit: podEdit((p) => void (p.metadata.annotations = { 'apps.kruise.io/matched-workloadspread': '{nope' })) },
    { name: 'an inactive pod', edit: podEdit((p) => void (p.status = { phase: 'Failed' })) },
    { name: 'a pod without a controller', edit: podEdit((p) => void (p.metadata.ownerReferences = [])) },
    { name: 'the WorkloadSpread is gone', edit: podEdit((p) => void (p.metadata.annotations = { 'apps.kruise.io/matched-workloadspread': '{"name":"other","subset":"zone-a"}' })) },
    // Issue 14: what the cluster has decides, not what the review claims.
    { name: 'a forged DELETE of a pod the cluster does not have', edit: (_r, bed) => void (bed.cluster.pods.length = 0) },
    { name: 'a DELETE whose oldObject has another uid than the stored pod', edit: (r) => void ((r.request['oldObject'] as Pod).metadata.uid = 'made-up') },
    { name: 'a DELETE whose oldObject claims a marker the stored pod does not have', edit: (_r, bed) => void (bed.cluster.pods.forEach((p) => (p.metadata.annotations = {}))) },
    { name: 'an unlimited subset', ws: spread([{ name: 'zone-a', replicas: 2, missingReplicas: -1 }], [{ name: 'zone-a' }, { name: 'zone-b', maxReplicas: 1 }]), edit: () => {} },
    { name: 'a single unlimited subset (§2.3 A)', ws: spread(undefined, [{ name: 'zone-a' }]), edit: () => {} },
  ];
  for (const c of untouched) {
    test(`allowed, nothing written: ${c.name}`, async () => {
      const bed = bedWith(c.ws ?? spread(full));
      const response = await review(bed, 'pod-delete.json', (r) => c.edit(r, bed));
      assert.equal(response.allowed, true);
      assert.equal(bed.store.writes, 0);
    });
  }

  test('reading the WorkloadSpread fails → denied with 400', async () => {
    const bed = bedWith(spread(full));
    bed.cluster.wsError = 'cache broken';
    const response = await review(bed, 'pod-delete.json');
    assert.equal(response.allowed, false);
    assert.equal(response.status?.code, 400);
    assert.match(response.status?.message ?? '', /cache broken/);
  });

  test('the status write fails → denied with 400', async () => {
    const bed = bedWith(spread(full));
    bed.store.failNext = 'etcd unavailable';
    const response = await review(bed, 'pod-delete.json');
    assert.equal(response.status?.code, 400);
    assert.match(response.status?.message ?? '', /etcd unavailable/);
  });

  test('StatefulSet targets never write on delete', async () => {
    const ws = spread(full);
    ws.spec.targetRef = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web' };
    const bed = bedWith(ws);
    assert.equal((await review(bed, 'pod-delete.json')).allowed, true);
    assert.equal(bed.store.writes, 0);
  });
});

describe('pods/eviction CREATE admission (spec §3.3)', () => {
  test('the pod is read from the cache and its deletion recorded', async () => {
    const bed = bedWith(spread(full));
    bed.cluster.pods.push(fixturePod());
    const response = await review(bed, 'pod-eviction.json');
    assert.deepEqual(response, { uid: '0f0e6c7a-1b52-4d56-9a8e-3a1c1a0b0003', allowed: true });
    assert.deepEqual(stored(bed)[0]?.deletingPods, { 'web-5d4f8b7c9-abcde': NOW });
  });

  test('a pod missing from the cache is read from the API server: there, it is recorded; gone there too, allowed with nothing recorded (the API server answers 404); a failed read → 400', async () => {
    const fresh = bedWith(spread(full), false);
    fresh.cluster.uncachedPods.push(fixturePod());
    assert.deepEqual(await review(fresh, 'pod-eviction.json'), { uid: '0f0e6c7a-1b52-4d56-9a8e-3a1c1a0b0003', allowed: true });
    assert.deepEqual(stored(fresh)[0]?.deletingPods, { 'web-5d4f8b7c9-abcde': NOW }, 'a pod created a moment ago is booked as any other');

    const gone = bedWith(spread(full), false);
    assert.deepEqual(await review(gone, 'pod-eviction.json'), { uid: '0f0e6c7a-1b52-4d56-9a8e-3a1c1a0b0003', allowed: true });
    assert.deepEqual(stored(gone)[0]?.deletingPods ?? {}, {}, 'nothing recorded for a pod that does not exist');

    const broken = bedWith(spread(full), false);
    broken.cluster.freshError = 'cannot read pod default/web-5d4f8b7c9-abcde: connection refused';
    const response = await review(broken, 'pod-eviction.json');
    assert.equal(response.allowed, false);
    assert.equal(response.status?.code, 400);
    assert.match(response.status?.message ?? '', /connection refused/);
  });

  test('an eviction with deleteOptions.dryRun is allowed without side effects', async () => {
    const bed = bedWith(spread(full));
    bed.cluster.pods.push(fixturePod());
    const response = await review(bed, 'pod-eviction.json', (r) => void ((r.request['object'] as Record<string, unknown>)['deleteOptions'] = { dryRun: ['All'] }));
    assert.equal(response.allowed, true);
    assert.equal(bed.store.writes, 0);
  });

  test('other CREATEs on pods are not this webhook’s business', async () => {
    const bed = bedWith(spread(full));
    const response = await review(bed, 'pod-eviction.json', (r) => void (r.request['subResource'] = 'binding'));
    assert.equal(response.allowed, true);
    assert.equal(bed.store.writes, 0);
  });
});
