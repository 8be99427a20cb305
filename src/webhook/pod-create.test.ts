import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { VirtualClock } from '../clock/virtual-clock.ts';
import type { Subset, WorkloadSpread } from '../api/workloadspread.ts';
import { parseMarker } from '../core/marker.ts';
import type { ObjectRef, ReadRequest, ViewLookup } from '../core/cluster-view.ts';
import type { Lookup } from '../k8s/lookup.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { admitPodCreate } from './pod-create.ts';
import { applyResponse, deploymentChain, FakeCluster, fixtureReview, handlerBed, MemoryStatusStore, requestOf, type HandlerBed } from '../testing/admission-kit.ts';

const MARKER = 'apps.kruise.io/matched-workloadspread';
const zone = (z: string) => ({ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [z] }] });

function spread(subsets: Subset[], extra: Partial<WorkloadSpread['spec']> = {}, target = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }): WorkloadSpread {
  return { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'WorkloadSpread', metadata: { name: 'web-spread', namespace: 'shop', uid: 'ws-uid-1' }, spec: { targetRef: target, subsets, ...extra } };
}

/** A bed with the fixture's owner chain and one WorkloadSpread stored. */
/** A cache that holds an old copy of the target (`stale`) while the API server (`objects`) has moved on; counts the object reads. */
class LaggingCache extends FakeCluster {
  stale: KubeObject | undefined;
  objectReads = 0;
  override object(namespace: string, ref: ObjectRef, options: { exactVersion?: boolean } = {}): ViewLookup<KubeObject> {
    return options.exactVersion === true && this.stale !== undefined ? { found: this.stale } : super.object(namespace, ref, options);
  }
  override async read(request: ReadRequest): Promise<Lookup<KubeObject>> {
    if (request.kind === 'object') this.objectReads++;
    return super.read(request);
  }
}

function bedWith(ws: WorkloadSpread): HandlerBed & { clock: VirtualClock } {
  const clock = new VirtualClock();
  const bed = handlerBed(clock);
  bed.cluster.objects.push(...deploymentChain());
  bed.cluster.spreads.push(bed.store.put(ws));
  return { ...bed, clock };
}

/** Runs one admission of the fixture pod (edited by `edit`) to its end on the virtual clock. */
async function admit(bed: HandlerBed & { clock: VirtualClock }, edit: (review: ReturnType<typeof fixtureReview>) => void = () => {}) {
  const review = fixtureReview('pod-create.json');
  edit(review);
  const req = requestOf(review);
  const pending = admitPodCreate(req, bed.deps);
  await bed.clock.settle();
  const response = await pending;
  return { req, response, pod: response.patch === undefined ? undefined : (applyResponse(req.object, response) as Pod) };
}

const versioned = (bed: HandlerBed) => bed.store.get('shop', 'web-spread')?.status?.versionedSubsetStatuses?.['5d4f8b7c9'] ?? [];

describe('pod CREATE admission', () => {
  const subsets: Subset[] = [
    {
      name: 'zone-a',
      requiredNodeSelectorTerm: zone('a'),
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'a', effect: 'NoSchedule' }],
      patch: { metadata: { labels: { zone: 'a' } } },
      maxReplicas: 1,
    },
    { name: 'zone-b', requiredNodeSelectorTerm: zone('b') },
  ];

  test('§2.3/§2.5: reserves quota, injects in order, answers with a patch from the raw pod (unknown fields kept)', async () => {
    const bed = bedWith(spread(subsets));
    const { response, pod } = await admit(bed);
    assert.equal(response.allowed, true);
    assert.equal(response.patchType, 'JSONPatch');
    assert.ok(pod !== undefined);
    assert.deepEqual(parseMarker(pod.metadata.annotations?.[MARKER]), { name: 'web-spread', subset: 'zone-a', uid: 'uid-1' });
    assert.equal(pod.metadata.annotations?.[MARKER], '{"name":"web-spread","subset":"zone-a","uid":"uid-1"}');
    assert.equal(pod.metadata.labels?.['zone'], 'a');
    assert.deepEqual(pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution, { nodeSelectorTerms: [zone('a')] });
    assert.deepEqual(pod.spec.tolerations?.map((t) => t.key), ['node.kubernetes.io/not-ready', 'dedicated']);
    assert.deepEqual((pod.metadata as Record<string, unknown>)['x-unknown-metadata-field'], { kept: true });
    assert.deepEqual(pod.spec.containers[0]?.['x-future-field'], [1, 2, 3]);
    // The reservation is stored under the pod's version (pod-template-hash) with the generated uid.
    assert.deepEqual(
      versioned(bed).map((s) => [s.name, s.missingReplicas, Object.keys(s.creatingPods ?? {})]),
      [
        ['zone-a', 0, ['uid-1']],
        ['zone-b', -1, []],
      ],
    );
    assert.equal(bed.store.writes, 1);
  });

  test('a review the API server gave up on reserves nothing', async () => {
    const bed = bedWith(spread(subsets));
    const gone = new AbortController();
    gone.abort();
    const pending = admitPodCreate(requestOf(fixtureReview('pod-create.json')), bed.deps, { signal: gone.signal, turn: () => Promise.resolve() });
    await bed.clock.settle();
    const response = await pending;
    assert.equal(response.allowed, false);
    assert.match(response.status?.message ?? '', /gave up on this review/);
    assert.equal(bed.store.writes, 0);
    assert.deepEqual(versioned(bed), []);
    // The next admission (a caller that waits) still gets the place.
    const { pod } = await admit(bed);
    assert.equal(parseMarker(pod?.metadata.annotations?.[MARKER])?.subset, 'zone-a');
  });

  test('the next pod goes to the unlimited subset without a status write', async () => {
    const bed = bedWith(spread(subsets));
    await admit(bed);
    const { pod } = await admit(bed);
    assert.equal(parseMarker(pod?.metadata.annotations?.[MARKER])?.subset, 'zone-b');
    assert.equal(parseMarker(pod?.metadata.annotations?.[MARKER])?.uid, undefined, 'no uid: nothing was reserved');
    assert.equal(bed.store.writes, 1);
    assert.deepEqual(pod?.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution, { nodeSelectorTerms: [zone('b')] });
  });

  test('a retried admission of a named pod lands in the subset it reserved, without a second reservation', async () => {
    const bed = bedWith(spread(subsets));
    const named = (r: ReturnType<typeof fixtureReview>) => {
      ((r.request['object'] as Pod).metadata as Record<string, unknown>)['name'] = 'web-5d4f8b7c9-x1';
    };
    const first = await admit(bed, named);
    const again = await admit(bed, named);
    assert.equal(parseMarker(first.pod?.metadata.annotations?.[MARKER])?.subset, 'zone-a');
    assert.equal(parseMarker(again.pod?.metadata.annotations?.[MARKER])?.subset, 'zone-a');
    assert.deepEqual(Object.keys(versioned(bed)[0]?.creatingPods ?? {}), ['web-5d4f8b7c9-x1']);
    assert.equal(bed.store.writes, 1);
  });

  const passThrough: { name: string; edit: (r: ReturnType<typeof fixtureReview>) => void }[] = [
    { name: 'dry run (request.dryRun)', edit: (r) => void (r.request['dryRun'] = true) },
    { name: 'dry run (CreateOptions.dryRun)', edit: (r) => void (r.request['options'] = { kind: 'CreateOptions', dryRun: ['All'] }) },
    { name: 'a subresource', edit: (r) => void (r.request['subResource'] = 'status') },
    { name: 'another resource', edit: (r) => void (r.request['resource'] = { group: '', version: 'v1', resource: 'configmaps' }) },
    { name: 'not a CREATE', edit: (r) => void (r.request['operation'] = 'UPDATE') },
    { name: 'no controller reference', edit: (r) => void ((r.request['object'] as Pod).metadata.ownerReferences = []) },
    {
      name: 'an owner kind that is not supported',
      edit: (r) => void ((r.request['object'] as Pod).metadata.ownerReferences = [{ apiVersion: 'example.com/v1', kind: 'Thing', name: 't', uid: 'x', controller: true }]),
    },
    { name: 'an inactive pod', edit: (r) => void ((r.request['object'] as Pod).status = { phase: 'Succeeded' }) },
    { name: 'a namespace without WorkloadSpreads', edit: (r) => void (r.request['namespace'] = 'elsewhere') },
    {
      name: 'a pod the targetFilter does not select',
      edit: () => {},
    },
  ];
  for (const c of passThrough) {
    test(`admitted unchanged, nothing reserved: ${c.name}`, async () => {
      const ws = c.name.includes('targetFilter') ? spread(subsets, { targetFilter: { selector: { matchLabels: { app: 'other' } } } }) : spread(subsets);
      const bed = bedWith(ws);
      const { response } = await admit(bed, c.edit);
      assert.deepEqual(response, { uid: '0f0e6c7a-1b52-4d56-9a8e-3a1c1a0b0001', allowed: true });
      assert.equal(bed.store.writes, 0);
    });
  }

  test("an owner not in the cache yet fails closed with 500 (the workload controller retries)", async () => {
    const bed = bedWith(spread(subsets));
    bed.cluster.objects = bed.cluster.objects.filter((o) => o.kind !== 'ReplicaSet');
    const { response } = await admit(bed);
    assert.equal(response.allowed, false);
    assert.equal(response.status?.code, 500);
    assert.match(response.status?.message ?? '', /ownerReference \(ReplicaSet "web-5d4f8b7c9", uid "rs-uid-1"\) does not match its owner, or the owner is not known yet/);
  });

  test('a forged ownerReference (a guessed uid) is refused without naming the uid the owner has, or whether it exists', async () => {
    const bed = bedWith(spread(subsets));
    const guess = (r: ReturnType<typeof fixtureReview>) => {
      const refs = ((r.request['object'] as Pod).metadata.ownerReferences ?? []) as { uid: string }[];
      if (refs[0] !== undefined) refs[0].uid = 'guessed-uid';
    };
    const { response } = await admit(bed, guess);
    assert.equal(response.allowed, false);
    assert.equal(response.status?.code, 500);
    assert.doesNotMatch(response.status?.message ?? '', /rs-uid-1|deploy-uid-1/);
    assert.match(response.status?.message ?? '', /ownerReference \(ReplicaSet "web-5d4f8b7c9", uid "guessed-uid"\) does not match its owner/);
    const gone = bedWith(spread(subsets));
    gone.cluster.objects = gone.cluster.objects.filter((o) => o.kind !== 'ReplicaSet');
    assert.equal((await admit(gone, guess)).response.status?.message, response.status?.message, 'a missing owner reads the same as a forged uid');
    assert.equal(bed.store.writes, 0);
  });

  test('an unreadable custom workload whitelist refuses a pod of a custom workload without quoting the config map', async () => {
    const bed = bedWith(spread(subsets));
    bed.cluster.whitelistValue = { error: 'invalid JSON: Unexpected token s in JSON at position 2 ("{ secret-value-from-the-config-map")' };
    const custom = (r: ReturnType<typeof fixtureReview>) => {
      const refs = ((r.request['object'] as Pod).metadata.ownerReferences ?? []) as { apiVersion: string; kind: string }[];
      if (refs[0] !== undefined) Object.assign(refs[0], { apiVersion: 'game.kruise.io/v1alpha1', kind: 'GameServer' });
    };
    const { response } = await admit(bed, custom);
    assert.equal(response.allowed, false);
    assert.match(response.status?.message ?? '', /whitelist/);
    assert.doesNotMatch(response.status?.message ?? '', /secret-value/);
  });

  test('a request object that is not a pod → 400', async () => {
    const bed = bedWith(spread(subsets));
    const { response } = await admit(bed, (r) => void (r.request['object'] = 'nope'));
    assert.equal(response.status?.code, 400);
  });

  test('D11: no subset has quota → admitted unplaced with the FAKE cost (D21), NoSubsetAvailable event on the WorkloadSpread, counter', async () => {
    const bed = bedWith(spread([{ name: 'zone-a', maxReplicas: 0 }, { name: 'zone-b', maxReplicas: 0 }]));
    const { response } = await admit(bed);
    assert.equal(response.allowed, true);
    assert.equal(response.patchType, 'JSONPatch');
    // Below every subset's cost (two subsets → -100 × 3), and nothing else: no marker, no injection.
    assert.deepEqual(JSON.parse(Buffer.from(response.patch ?? '', 'base64').toString('utf8')), [
      { op: 'add', path: '/metadata/annotations', value: { 'controller.kubernetes.io/pod-deletion-cost': '-300' } },
    ]);
    assert.equal(bed.store.writes, 0);
    assert.equal(bed.events.length, 1);
    assert.equal(bed.events[0]?.ws, 'web-spread');
    assert.equal(bed.events[0]?.event.reason, 'NoSubsetAvailable');
    assert.equal(bed.events[0]?.event.type, 'Warning');
    assert.match(bed.events[0]?.event.message ?? '', /No subset of WorkloadSpread shop\/web-spread has quota left/);
    assert.deepEqual(bed.noSubset, ['shop/web-spread']);
  });

  test('§5.3 percentages 20/30/50 of 10 replicas: 2, 3, 5 pods in order', async () => {
    const bed = bedWith(spread([{ name: 'a', maxReplicas: '20%' }, { name: 'b', maxReplicas: '30%' }, { name: 'c', maxReplicas: '50%' }]));
    const placed: string[] = [];
    for (let i = 0; i < 11; i++) {
      const { pod } = await admit(bed);
      placed.push(parseMarker(pod?.metadata.annotations?.[MARKER])?.subset ?? 'none');
    }
    assert.deepEqual(placed, ['a', 'a', 'b', 'b', 'b', 'c', 'c', 'c', 'c', 'c', 'none']);
  });

  test('D22: the cache still shows the Deployment at 5, the API server has 10: a pod beyond 5 reads the target again and is placed by the limits at 10', async () => {
    const clock = new VirtualClock();
    const cluster = new LaggingCache();
    const bed = { ...handlerBed(clock, cluster, new MemoryStatusStore()), clock };
    const [deploy, rs] = deploymentChain();
    cluster.objects.push(deploy!, rs!);
    cluster.stale = { ...deploy!, metadata: { ...deploy!.metadata, resourceVersion: 'older' }, spec: { ...(deploy!['spec'] as object), replicas: 5 } };
    bed.cluster.spreads.push(bed.store.put(spread([{ name: 'a', maxReplicas: '20%' }, { name: 'b', maxReplicas: '30%' }, { name: 'c', maxReplicas: '50%' }])));
    const placed: string[] = [];
    for (let i = 0; i < 11; i++) {
      const { pod } = await admit(bed);
      placed.push(parseMarker(pod?.metadata.annotations?.[MARKER])?.subset ?? 'none');
    }
    // Five pods at 5 from the cache; the sixth is beyond the 5 replicas the cache shows, so it reads 10 (2/3/5);
    // the next four are decided on that read (the cache has not moved since) without one of their own; the
    // eleventh finds no room at 10 and reads once more before it is admitted without a subset.
    assert.deepEqual(placed, ['a', 'b', 'b', 'c', 'c', 'a', 'b', 'c', 'c', 'c', 'none']);
    assert.equal(cluster.objectReads, 2, 'one read of the target for the scale-out, one for the pod that found no room');
    assert.equal(bed.events.filter((e) => e.event.reason === 'NoSubsetAvailable').length, 1);
  });

  test('D22: a read another admission made while the cache lagged predates a second scale-out: the pod that finds no room reads again and is placed', async () => {
    const clock = new VirtualClock();
    const cluster = new LaggingCache();
    const bed = { ...handlerBed(clock, cluster, new MemoryStatusStore()), clock };
    const [deploy, rs] = deploymentChain();
    const at = (rv: string, replicas: number): KubeObject => ({ ...deploy!, metadata: { ...deploy!.metadata, resourceVersion: rv }, spec: { ...(deploy!['spec'] as object), replicas } });
    // The cache has version 1 of the Deployment; the API server already has version 2 (a status update), both at 5.
    cluster.objects.push(at('2', 5), rs!);
    cluster.stale = at('1', 5);
    bed.cluster.spreads.push(bed.store.put(spread([{ name: 'a', maxReplicas: '20%' }, { name: 'b', maxReplicas: '30%' }, { name: 'c', maxReplicas: '50%' }])));
    const placed: string[] = [];
    const admitSome = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const { pod } = await admit(bed);
        placed.push(parseMarker(pod?.metadata.annotations?.[MARKER])?.subset ?? 'none');
      }
    };
    // At 5 the limits are 1/2/3 (rounded up). The sixth pod is beyond the 5 the cache shows: it reads version 2
    // (still 5) and takes the last place; the seventh finds no room, reads again (still 5): none, rightly.
    await admitSome(7);
    assert.deepEqual(placed, ['a', 'b', 'b', 'c', 'c', 'c', 'none']);
    assert.equal(cluster.objectReads, 2);
    // The Deployment is scaled to 10 (version 3); the cache still shows version 1, so the read of version 2 is
    // still "newer than the cache". The pods of the scale-out must be sized at 10, not at that earlier read.
    cluster.objects = [at('3', 10), rs!];
    placed.length = 0;
    await admitSome(5);
    assert.deepEqual(placed, ['a', 'b', 'c', 'c', 'none'], 'room at 10: a 2, b 3, c 5');
    assert.equal(cluster.objectReads, 4, 'the first pod of the scale-out and the one beyond 10 read; the three between use the first one\'s read');
    assert.equal(bed.events.filter((e) => e.event.reason === 'NoSubsetAvailable').length, 2, 'only the pod beyond 10 and the one beyond 5 before the scale');
  });

  test('D21: pods sent to the unlimited subset of a balanced spec get the cost of their place, counted from answered placements the cache does not show yet', async () => {
    const bed = bedWith(spread([{ name: 'a', maxReplicas: '20%' }, { name: 'rest' }]));
    bed.cluster.objects = deploymentChain('shop', { current: true });
    const got: { subset: string; uid: string | undefined; cost: number }[] = [];
    for (let i = 0; i < 6; i++) {
      const { pod } = await admit(bed);
      const marker = parseMarker(pod?.metadata.annotations?.[MARKER]);
      got.push({ subset: marker?.subset ?? 'none', uid: marker?.uid, cost: Number(pod?.metadata.annotations?.['controller.kubernetes.io/pod-deletion-cost']) });
    }
    assert.deepEqual(got.map((g) => g.subset), ['a', 'a', 'rest', 'rest', 'rest', 'rest']);
    // Unnamed pods in the counted subset get a marker uid (told apart once the cache shows them), and no reservation.
    assert.ok(got.slice(2).every((g) => g.uid !== undefined));
    assert.equal(bed.store.writes, 2, 'only the two reservations of subset a');
    // Each later pod of `rest` takes the next, cheaper place: none of them was in the cache when the next was admitted.
    const rest = got.slice(2).map((g) => g.cost);
    assert.ok(rest.every((c) => Number.isInteger(c)));
    for (let i = 1; i < rest.length; i++) assert.ok((rest[i] as number) < (rest[i - 1] as number), `costs ${rest.join(', ')} strictly decrease`);
    assert.equal(bed.deps.recent?.size(), 4);
  });

  test('§2.3 B StatefulSet: the ordinal decides, no status is written', async () => {
    const clock = new VirtualClock();
    const bed = { ...handlerBed(clock), clock };
    bed.cluster.objects.push({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db', namespace: 'shop', uid: 'sts-uid' }, spec: { replicas: 12 } });
    bed.cluster.spreads.push(bed.store.put(spread([{ name: 'a', maxReplicas: 5 }, { name: 'b', maxReplicas: 5 }, { name: 'c' }], {}, { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db' })));
    const sts = (name: string) => (r: ReturnType<typeof fixtureReview>) => {
      const pod = r.request['object'] as Pod;
      pod.metadata = { name, namespace: 'shop', labels: { app: 'db' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 'sts-uid', controller: true }] };
    };
    const subsetOf = async (name: string) => parseMarker((await admit(bed, sts(name))).pod?.metadata.annotations?.[MARKER])?.subset;
    assert.deepEqual([await subsetOf('db-0'), await subsetOf('db-4'), await subsetOf('db-5'), await subsetOf('db-9'), await subsetOf('db-10')], ['a', 'a', 'b', 'b', 'c']);
    assert.equal(bed.store.writes, 0);
  });

  test('D3: in Adaptive mode a subset none of whose nodes can host the pod is skipped', async () => {
    const adaptive = { scheduleStrategy: { type: 'Adaptive' as const, adaptive: { rescheduleCriticalSeconds: 30 } } };
    const bed = bedWith(spread([{ name: 'zone-a', requiredNodeSelectorTerm: zone('a'), maxReplicas: 3 }, { name: 'zone-b', requiredNodeSelectorTerm: zone('b') }], adaptive));
    const node = (name: string, z: string, pods: string) => ({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name, labels: { 'topology.kubernetes.io/zone': z } },
      status: { allocatable: { cpu: '4', memory: '8Gi', pods } },
    });
    bed.cluster.nodeList = [node('a1', 'a', '1'), node('b1', 'b', '110')];
    bed.cluster.pods.push({ metadata: { name: 'other', namespace: 'other' }, spec: { nodeName: 'a1', containers: [{ name: 'c' }] }, status: { phase: 'Running' } }); // full: a1 allows 1 pod
    const { pod } = await admit(bed);
    assert.equal(parseMarker(pod?.metadata.annotations?.[MARKER])?.subset, 'zone-b');
    // Without the simulation (disabled), the quota alone decides.
    const off = bedWith(spread([{ name: 'zone-a', requiredNodeSelectorTerm: zone('a'), maxReplicas: 3 }, { name: 'zone-b', requiredNodeSelectorTerm: zone('b') }], { scheduleStrategy: { type: 'Adaptive', adaptive: { disableSimulationSchedule: true } } }));
    off.cluster.nodeList = bed.cluster.nodeList;
    off.cluster.pods = bed.cluster.pods;
    assert.equal(parseMarker((await admit(off)).pod?.metadata.annotations?.[MARKER])?.subset, 'zone-a');
  });

  test('status-write conflicts: retried, then a clear 500 after the fourth', async () => {
    const bed = bedWith(spread([{ name: 'zone-a', maxReplicas: 5 }, { name: 'zone-b', maxReplicas: 5 }]));
    bed.store.conflictsToInject = 3;
    const ok = await admit(bed);
    assert.equal(ok.response.allowed, true);
    bed.store.conflictsToInject = 4;
    const { response } = await admit(bed);
    assert.equal(response.allowed, false);
    assert.equal(response.status?.code, 500);
    assert.match(response.status?.message ?? '', /status of WorkloadSpread shop\/web-spread could not be updated: 4 conflicting writes/);
  });

  test('a subset patch that cannot be applied fails the admission (500), as the reference', async () => {
    const bed = bedWith(spread([{ name: 'zone-a', maxReplicas: 2, patch: { spec: { containers: [{ image: 'no-name' }] } } }, { name: 'zone-b' }]));
    const { response } = await admit(bed);
    assert.equal(response.status?.code, 500);
    assert.match(response.status?.message ?? '', /patch of subset zone-a/);
    // What the patch holds and why it failed is the WorkloadSpread's, not the pod creator's: the log has it.
    assert.doesNotMatch(response.status?.message ?? '', /no-name|merge key|containers/);
  });
});
