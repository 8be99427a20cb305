/**
 * Admission end to end on plain objects (core/admission.ts): the paths of
 * §2.3 (A before B before C), the answers that ask the caller for something
 * first (`read`, `commit`), D11's event, and the deletion bookkeeping's gates.
 * The rules inside each path have their own tables (subset-choice, deletion,
 * statefulset-ordinal, pod-selection tests); the handlers' tests run these
 * decisions through AdmissionReviews.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Subset, SubsetStatus, WorkloadSpread, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { EMPTY_WHITELIST, type Whitelist } from '../api/whitelist.ts';
import { lookupOf } from '../k8s/lookup.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { admissionPath, decidePodCreate, decidePodDeletion, type PodCreateDecision, type PodCreateInput } from './admission.ts';
import type { ClusterView, ObjectRef, PlacedTally, ReadRequest, RecentPlacement, ViewLookup } from './cluster-view.ts';
import { tallyPods } from './placed-count.ts';
import type { PodVersionOptions } from './pod-version.ts';
import { formatMarker, parseMarker, readMarker } from './marker.ts';

const NOW = Date.UTC(2026, 0, 1, 0, 0, 10);
const STAMP = '2026-01-01T00:00:10Z';
const V = 'h1';
const MARKER = 'apps.kruise.io/matched-workloadspread';

function spread(subsets: Subset[], status?: WorkloadSpreadStatus, kind = 'Deployment'): WorkloadSpread {
  const ws: WorkloadSpread = {
    metadata: { name: 'ws', namespace: 'ns', uid: 'ws-uid' },
    spec: { targetRef: { apiVersion: 'apps/v1', kind, name: 'web' }, subsets },
  };
  if (status !== undefined) ws.status = status;
  return ws;
}

function st(name: string, missingReplicas: number, more: Partial<SubsetStatus> = {}): SubsetStatus {
  return { name, replicas: 0, missingReplicas, creatingPods: {}, deletingPods: {}, ...more };
}

const unschedulable = [{ type: 'Schedulable', status: 'False', reason: 'PodUnschedulable' }];

const deployment: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'ns', uid: 'd1' }, spec: { replicas: 10 } };
const replicaSet: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name: 'web-h1', namespace: 'ns', uid: 'rs1', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd1', controller: true }] },
};
const statefulSet: KubeObject = { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'web', namespace: 'ns', uid: 's1' }, spec: { replicas: 3 } };

/** A pod of the Deployment's ReplicaSet (or of the StatefulSet), as the workload controller creates it. */
function newPod(name?: string, owner: 'rs' | 'sts' = 'rs'): Pod {
  const ownerRef = owner === 'rs' ? { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-h1', uid: 'rs1', controller: true } : { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 's1', controller: true };
  const metadata: Pod['metadata'] = { namespace: 'ns', labels: { 'pod-template-hash': V }, ownerReferences: [ownerRef] };
  if (name === undefined) metadata.generateName = 'web-h1-';
  else metadata.name = name;
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec: { containers: [{ name: 'main', image: 'nginx' }] } };
}

/** A plain-object view: `cached` answers at once; `uncached` objects and pods are reads. */
class View implements ClusterView {
  spreads: WorkloadSpread[] = [];
  cached: KubeObject[] = [];
  uncached: KubeObject[] = [];
  pods: Pod[] = [];
  wl: Whitelist | { error: string } = EMPTY_WHITELIST;
  readsAsked: ReadRequest[] = [];
  whitelist() {
    return this.wl;
  }
  workloadSpreads(namespace: string) {
    return this.spreads.filter((w) => w.metadata.namespace === namespace);
  }
  workloadSpread(namespace: string, name: string) {
    return lookupOf(this.spreads.find((w) => w.metadata.namespace === namespace && w.metadata.name === name));
  }
  object(namespace: string, ref: ObjectRef, options: { exactVersion?: boolean } = {}): ViewLookup<KubeObject> {
    const match = (o: KubeObject) => o.kind === ref.kind && o.metadata?.name === ref.name && o.metadata?.namespace === namespace;
    if (this.uncached.some(match)) {
      const read: ReadRequest = { kind: 'object', namespace, ref, exactVersion: options.exactVersion === true };
      this.readsAsked.push(read);
      return { read };
    }
    return lookupOf((this.fetched ? this.apiServer?.find(match) : undefined) ?? this.cached.find(match));
  }
  pod(namespace: string, name: string): ViewLookup<Pod> {
    return lookupOf(this.pods.find((p) => p.metadata.namespace === namespace && p.metadata.name === name));
  }
  /** What the API server has (for `freshObject`); `fetched` once the read was made, after which `object` answers with it. */
  apiServer: KubeObject[] | undefined;
  fetched = false;
  freshObject(namespace: string, ref: ObjectRef, options: { exactVersion?: boolean } = {}): ViewLookup<KubeObject> {
    if (this.apiServer === undefined) return this.object(namespace, ref, options);
    if (!this.fetched) {
      const read: ReadRequest = { kind: 'object', namespace, ref, exactVersion: options.exactVersion === true };
      this.readsAsked.push(read);
      return { read };
    }
    return lookupOf(this.apiServer.find((o) => o.kind === ref.kind && o.metadata?.name === ref.name));
  }
  nodes() {
    return [];
  }
  podsOnNode() {
    return [];
  }
  requestedOnNode() {
    return { cpuMilli: 0, memory: 0, pods: 0 };
  }
  placedTally(namespace: string, wsName: string, version: string, options: PodVersionOptions): PlacedTally {
    return tallyPods(this.pods, namespace, wsName, version, options);
  }
  recent: RecentPlacement[] = [];
  recentPlacements(): readonly RecentPlacement[] {
    return this.recent;
  }
}

function view(ws: WorkloadSpread, objects: KubeObject[] = [deployment, replicaSet]): View {
  const v = new View();
  v.spreads = [ws];
  v.cached = objects;
  return v;
}

function create(v: ClusterView, pod: Pod, current?: WorkloadSpread | 'gone'): PodCreateDecision {
  let uid = 0;
  const input: PodCreateInput = { view: v, pod, namespace: 'ns', now: NOW, newUid: () => `uid-${++uid}` };
  if (current !== undefined) input.current = { ws: current === 'gone' ? undefined : current };
  return decidePodCreate(input);
}

const subsetOf = (d: PodCreateDecision): string | undefined => (d.kind === 'placed' ? parseMarker(d.pod.metadata.annotations?.[MARKER])?.subset : undefined);

describe('admissionPath (spec §2.3: A before B before C)', () => {
  test('one subset without maxReplicas: the shortcut, whatever the kind', () => {
    assert.deepEqual(admissionPath(spread([{ name: 'only' }])), { kind: 'single-unlimited', subset: 'only' });
    assert.deepEqual(admissionPath(spread([{ name: 'only' }], undefined, 'StatefulSet')), { kind: 'single-unlimited', subset: 'only' });
  });
  test('a StatefulSet otherwise: its ordinals', () => {
    assert.deepEqual(admissionPath(spread([{ name: 'only', maxReplicas: 3 }], undefined, 'StatefulSet')), { kind: 'ordinal' });
    assert.deepEqual(admissionPath(spread([{ name: 'a', maxReplicas: 3 }, { name: 'b' }], undefined, 'StatefulSet')), { kind: 'ordinal' });
  });
  test('everything else: quota', () => {
    assert.deepEqual(admissionPath(spread([{ name: 'only', maxReplicas: 3 }])), { kind: 'quota' });
    assert.deepEqual(admissionPath(spread([{ name: 'a' }, { name: 'b' }])), { kind: 'quota' });
  });
});

describe('decidePodCreate', () => {
  test('§2.3 A: one unlimited subset takes the pod with no status, even when marked unschedulable, and never asks for the workload', () => {
    const ws = spread([{ name: 'only' }], { subsetStatuses: [st('only', -1, { conditions: unschedulable })], versionedSubsetStatuses: { [V]: [st('only', -1, { conditions: unschedulable })] } });
    const v = view(ws);
    v.uncached = [deployment]; // any read of the target would be asked for
    const got = create(v, newPod('p'));
    assert.equal(got.kind, 'placed');
    assert.equal(subsetOf(got), 'only');
    assert.equal(got.kind === 'placed' ? got.status : 'x', undefined);
    assert.deepEqual(v.readsAsked, []);
  });

  test('§2.3 A before B: a StatefulSet with one unlimited subset takes every ordinal, even when unschedulable', () => {
    const ws = spread([{ name: 'only' }], { subsetStatuses: [st('only', -1, { conditions: unschedulable })] }, 'StatefulSet');
    const v = view(ws, [statefulSet]);
    for (const name of ['web-0', 'web-99']) assert.equal(subsetOf(create(v, newPod(name, 'sts'))), 'only', name);
  });

  test('§2.3 B: the ordinal decides, with no status and no commit', () => {
    const ws = spread([{ name: 'a', maxReplicas: 1 }, { name: 'b' }], undefined, 'StatefulSet');
    const v = view(ws, [statefulSet]);
    const first = create(v, newPod('web-0', 'sts'));
    assert.equal(subsetOf(first), 'a');
    assert.equal(first.kind === 'placed' ? first.status : 'x', undefined);
    assert.equal(subsetOf(create(v, newPod('web-1', 'sts'))), 'b');
  });

  test('§2.3 B: no threshold covers the ordinal → unplaced, with the D11 event', () => {
    const ws = spread([{ name: 'a', maxReplicas: 1 }, { name: 'b', maxReplicas: 1 }], undefined, 'StatefulSet');
    const got = create(view(ws, [statefulSet]), newPod('web-5', 'sts'));
    assert.equal(got.kind, 'unplaced');
    if (got.kind === 'unplaced') assert.match(got.event.message, /pod ns\/web-5 of StatefulSet ns\/web/);
  });

  test('§2.3 C: quota needs the stored status: commit; with it, placed with the reservation', () => {
    const ws = spread([{ name: 'a', maxReplicas: 2 }, { name: 'b' }]);
    const v = view(ws);
    const first = create(v, newPod('p'));
    assert.deepEqual(first, { kind: 'commit', ws });
    const got = create(v, newPod('p'), ws);
    assert.equal(subsetOf(got), 'a');
    assert.deepEqual(got.kind === 'placed' ? got.status?.versionedSubsetStatuses?.[V] : undefined, [st('a', 1, { creatingPods: { p: STAMP } }), st('b', -1)]);
  });

  test('under the commit, a WorkloadSpread that is gone admits the pod unchanged', () => {
    const ws = spread([{ name: 'a', maxReplicas: 2 }, { name: 'b' }]);
    assert.deepEqual(create(view(ws), newPod('p'), 'gone'), { kind: 'admit' });
  });

  test('D11: no subset with quota → unplaced, with the NoSubsetAvailable warning on the WorkloadSpread and no status', () => {
    const ws = spread([{ name: 'a', maxReplicas: 1 }, { name: 'b', maxReplicas: 1 }], { versionedSubsetStatuses: { [V]: [st('a', 0), st('b', 0)] } });
    const got = create(view(ws), newPod('p'), ws);
    assert.equal(got.kind, 'unplaced');
    if (got.kind !== 'unplaced') return;
    assert.equal(got.event.type, 'Warning');
    assert.equal(got.event.reason, 'NoSubsetAvailable');
    assert.deepEqual(got.event.involved, { kind: 'WorkloadSpread', namespace: 'ns', name: 'ws' });
    assert.match(got.event.message, /ns\/p/);
    // A pod without a name is named by its generateName.
    const unnamed = create(view(ws), newPod(), ws);
    assert.ok(unnamed.kind === 'unplaced' && unnamed.event.message.includes('pod ns/web-h1- of Deployment ns/web'));
  });

  test('an owner the view does not hold is a read; once read, the match goes on', () => {
    const ws = spread([{ name: 'only' }]);
    const v = view(ws, [deployment]);
    v.uncached = [replicaSet];
    const got = create(v, newPod('p'));
    assert.deepEqual(got, { kind: 'read', read: { kind: 'object', namespace: 'ns', ref: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-h1' }, exactVersion: false } });
    v.uncached = [];
    v.cached = [deployment, replicaSet];
    assert.equal(subsetOf(create(v, newPod('p'))), 'only');
  });

  test('an owner that does not exist fails closed (§2.1 step 8)', () => {
    const got = create(view(spread([{ name: 'only' }]), [deployment]), newPod('p'));
    assert.equal(got.kind, 'error');
    if (got.kind === 'error') assert.equal(got.cause, 'owner-not-found');
  });

  test('percentages and no version entry: the target is read by its exact version, then the entry initialized from it', () => {
    const ws = spread([{ name: 'a', maxReplicas: '20%' }, { name: 'b', maxReplicas: '80%' }]);
    const v = view(ws);
    v.uncached = [deployment];
    const got = create(v, newPod('p'), ws);
    assert.deepEqual(got, { kind: 'read', read: { kind: 'object', namespace: 'ns', ref: ws.spec.targetRef, exactVersion: true } });
    v.uncached = [];
    const placed = create(v, newPod('p'), ws);
    assert.deepEqual(placed.kind === 'placed' ? placed.status?.versionedSubsetStatuses?.[V]?.map((s) => s.missingReplicas) : undefined, [1, 8]);
  });

  test('D22: a stored status computed at 5 replicas, the Deployment now at 10: the pod takes the room 20 % leaves at 10, not the stored 0', () => {
    // 20 % / 80 % of 5 = 1 / 4, both full; of 10 = 2 / 8.
    const ws = spread([{ name: 'a', maxReplicas: '20%' }, { name: 'b', maxReplicas: '80%' }], { versionedSubsetStatuses: { [V]: [st('a', 0, { replicas: 1 }), st('b', 0, { replicas: 4 })] } });
    const v = view(ws);
    v.uncached = [deployment];
    assert.deepEqual(create(v, newPod('p'), ws), { kind: 'read', read: { kind: 'object', namespace: 'ns', ref: ws.spec.targetRef, exactVersion: true } }, 'the replicas now are read first');
    v.uncached = [];
    const got = create(v, newPod('p'), ws);
    assert.equal(subsetOf(got), 'a');
    assert.deepEqual(got.kind === 'placed' ? got.status?.versionedSubsetStatuses?.[V] : undefined, [st('a', 0, { replicas: 1, creatingPods: { p: STAMP } }), st('b', 4, { replicas: 4 })]);
    // At 5 (the count the status was computed for) nothing has room.
    const atFive = view(ws, [{ ...deployment, spec: { replicas: 5 } }, replicaSet]);
    assert.equal(create(atFive, newPod('p'), ws).kind, 'unplaced');
  });

  test('D22: no room at the replicas the cache shows → the target is read from the API server first, and the pod decided on what it says', () => {
    const ws = spread([{ name: 'a', maxReplicas: '20%' }, { name: 'b', maxReplicas: '80%' }], { versionedSubsetStatuses: { [V]: [st('a', 0, { replicas: 1 }), st('b', 0, { replicas: 4 })] } });
    const atFive = { ...deployment, spec: { replicas: 5 } };
    // The cache still shows 5; the API server has 10.
    const v = view(ws, [atFive, replicaSet]);
    v.apiServer = [deployment, replicaSet];
    assert.deepEqual(create(v, newPod('p'), ws), { kind: 'read', read: { kind: 'object', namespace: 'ns', ref: ws.spec.targetRef, exactVersion: true } });
    v.fetched = true;
    assert.equal(subsetOf(create(v, newPod('p'), ws)), 'a');
    // The API server says 5 as well: unplaced after the one read, as before.
    const still = view(ws, [atFive, replicaSet]);
    still.apiServer = [atFive, replicaSet];
    assert.equal(create(still, newPod('p'), ws).kind, 'read');
    still.fetched = true;
    assert.equal(create(still, newPod('p'), ws).kind, 'unplaced');
    assert.equal(still.readsAsked.length, 1);
    // Integer limits do not depend on the replicas: no read.
    const ints = spread([{ name: 'a', maxReplicas: 1 }, { name: 'b', maxReplicas: 4 }], { versionedSubsetStatuses: { [V]: [st('a', 0, { replicas: 1 }), st('b', 0, { replicas: 4 })] } });
    const intView = view(ints, [atFive, replicaSet]);
    intView.apiServer = [deployment, replicaSet];
    assert.equal(create(intView, newPod('p'), ints).kind, 'unplaced');
    assert.equal(intView.readsAsked.length, 0);
    // Nor for a kind admission cannot count (not whitelisted: always 0): a read could not change that.
    const custom: WorkloadSpread = { ...ws, spec: { ...ws.spec, targetRef: { apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout', name: 'web' } } };
    const rollout: KubeObject = { apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout', metadata: { name: 'web', namespace: 'ns' }, spec: { replicas: 5 } };
    const customView = view(custom, [rollout, replicaSet]);
    customView.apiServer = [{ ...rollout, spec: { replicas: 10 } }, replicaSet];
    assert.equal(create(customView, newPod('p'), custom).kind, 'unplaced');
    assert.equal(customView.readsAsked.length, 0);
  });

  test('D22: a pod beyond the replicas the cache shows (a scale-out from 0 it has not seen) → the target is read first, so the pod does not fall into the unlimited subset', () => {
    const ws = spread([{ name: 'a', maxReplicas: '20%' }, { name: 'b', maxReplicas: '30%' }, { name: 'rest' }]);
    const atZero = { ...deployment, spec: { replicas: 0 } };
    const v = view(ws, [atZero, replicaSet]);
    v.apiServer = [deployment, replicaSet];
    assert.deepEqual(create(v, newPod('p'), ws), { kind: 'read', read: { kind: 'object', namespace: 'ns', ref: ws.spec.targetRef, exactVersion: true } });
    v.fetched = true;
    assert.equal(subsetOf(create(v, newPod('p'), ws)), 'a', 'decided at the replicas the API server has (10): 20 % leaves room in a');
    assert.equal(v.readsAsked.length, 1);
    // The cache is current (10 replicas, no pod yet): no read.
    const current = view(ws, [deployment, replicaSet]);
    current.apiServer = [deployment, replicaSet];
    assert.equal(subsetOf(create(current, newPod('p'), ws)), 'a');
    assert.equal(current.readsAsked.length, 0);
  });

  test('an unreadable whitelist refuses a custom owner, but places a built-in one', () => {
    const ws = spread([{ name: 'only' }]);
    const v = view(ws);
    v.wl = { error: 'config map forbidden' };
    assert.equal(subsetOf(create(v, newPod('p'))), 'only');
    const custom = newPod('g');
    custom.metadata.ownerReferences = [{ apiVersion: 'game.kruise.io/v1alpha1', kind: 'GameServer', name: 'gs', uid: 'g1', controller: true }];
    const got = create(v, custom);
    assert.ok(got.kind === 'error' && got.cause === 'whitelist' && got.detail?.includes('config map forbidden'));
    assert.ok(got.kind === 'error' && !got.message.includes('config map forbidden'), 'the caller is not told what the config map read said');
  });
});

describe('decidePodDeletion', () => {
  const placed = (subset: string, name = 'p'): Pod => {
    const p = newPod(name);
    p.metadata.annotations = { [MARKER]: formatMarker({ name: 'ws', subset }) };
    return p;
  };

  test('§3.4 via §2.3 A: the single unlimited subset records nothing', () => {
    const ws = spread([{ name: 'only' }], { versionedSubsetStatuses: { [V]: [st('only', -1)] } });
    assert.deepEqual(decidePodDeletion({ view: view(ws), subject: { pod: placed('only') }, namespace: 'ns', now: NOW }), { kind: 'admit' });
  });

  test('§3.4 via §2.3 B: a StatefulSet records nothing', () => {
    const ws = spread([{ name: 'a', maxReplicas: 2 }, { name: 'b' }], { versionedSubsetStatuses: { versionIgnored: [st('a', 0), st('b', -1)] } }, 'StatefulSet');
    assert.deepEqual(decidePodDeletion({ view: view(ws, [statefulSet]), subject: { pod: placed('a') }, namespace: 'ns', now: NOW }), { kind: 'admit' });
  });

  test('quota: commit, then the deletion record', () => {
    const ws = spread([{ name: 'a', maxReplicas: 2 }, { name: 'b' }], { versionedSubsetStatuses: { [V]: [st('a', 0, { replicas: 2 }), st('b', -1)] } });
    const v = view(ws);
    const pod = { ...placed('a'), metadata: { ...placed('a').metadata, uid: 'p-uid' } };
    v.pods = [pod];
    const input = { view: v, subject: { pod }, namespace: 'ns', now: NOW };
    assert.deepEqual(decidePodDeletion(input), { kind: 'commit', ws });
    const got = decidePodDeletion({ ...input, current: { ws } });
    assert.deepEqual(got.kind === 'recorded' ? got.status.versionedSubsetStatuses?.[V] : undefined, [st('a', 1, { replicas: 2, deletingPods: { p: STAMP } }), st('b', -1)]);
  });

  test('D22: the freed place is counted from the room at the workload replicas now', () => {
    // Computed at 5 (20 % / 80 % → 1 / 4, full); the Deployment is at 10 (2 / 8): b had 4 places free, and now 5.
    // The version's list is written as admission saw it: a's room at 10 too.
    const ws = spread([{ name: 'a', maxReplicas: '20%' }, { name: 'b', maxReplicas: '80%' }], { versionedSubsetStatuses: { [V]: [st('a', 0, { replicas: 1 }), st('b', 0, { replicas: 4 })] } });
    const v = view(ws);
    const pod = { ...placed('b'), metadata: { ...placed('b').metadata, uid: 'p-uid' } };
    v.pods = [pod];
    const got = decidePodDeletion({ view: v, subject: { pod }, namespace: 'ns', now: NOW, current: { ws } });
    assert.deepEqual(got.kind === 'recorded' ? got.status.versionedSubsetStatuses?.[V] : undefined, [st('a', 1, { replicas: 1 }), st('b', 5, { replicas: 4, deletingPods: { p: STAMP } })]);
  });

  test('issue 14: a DELETE is booked for the stored pod only — not for one the view does not have, another uid, or a marker only the request claims', () => {
    const ws = spread([{ name: 'a', maxReplicas: 2 }, { name: 'b' }], { versionedSubsetStatuses: { [V]: [st('a', 0, { replicas: 2 }), st('b', -1)] } });
    const v = view(ws);
    const claimed = { ...placed('a'), metadata: { ...placed('a').metadata, uid: 'p-uid' } };
    assert.deepEqual(decidePodDeletion({ view: v, subject: { pod: claimed }, namespace: 'ns', now: NOW }), { kind: 'admit' }, 'not in the view');
    v.pods = [{ ...claimed, metadata: { ...claimed.metadata, uid: 'another' } }];
    assert.deepEqual(decidePodDeletion({ view: v, subject: { pod: claimed }, namespace: 'ns', now: NOW }), { kind: 'admit' }, 'another pod under that name');
    v.pods = [{ ...claimed, metadata: { ...claimed.metadata, annotations: {} } }];
    assert.deepEqual(decidePodDeletion({ view: v, subject: { pod: claimed }, namespace: 'ns', now: NOW }), { kind: 'admit' }, 'the stored pod has no marker');
    const { uid: _uid, ...noUid } = claimed.metadata;
    v.pods = [claimed];
    assert.deepEqual(decidePodDeletion({ view: v, subject: { pod: { ...claimed, metadata: noUid } }, namespace: 'ns', now: NOW }), { kind: 'admit' }, 'a request without a uid');
    assert.deepEqual(decidePodDeletion({ view: v, subject: { pod: claimed }, namespace: 'ns', now: NOW }), { kind: 'commit', ws });
  });

  test('an eviction names the pod: found, gone (admitted: the API server answers 404), failed (400), or a read', () => {
    const ws = spread([{ name: 'a', maxReplicas: 2 }, { name: 'b' }]);
    const v = view(ws);
    v.pods = [placed('a', 'known')];
    assert.deepEqual(decidePodDeletion({ view: v, subject: { podName: 'known' }, namespace: 'ns', now: NOW }), { kind: 'commit', ws });
    assert.deepEqual(decidePodDeletion({ view: v, subject: { podName: 'gone' }, namespace: 'ns', now: NOW }), { kind: 'admit' });
    const failing: ClusterView = { ...v, whitelist: () => v.whitelist(), workloadSpreads: (n) => v.workloadSpreads(n), workloadSpread: (n, m) => v.workloadSpread(n, m), object: (n, r, o) => v.object(n, r, o), nodes: () => [], podsOnNode: () => [], requestedOnNode: () => ({ cpuMilli: 0, memory: 0, pods: 0 }), placedTally: () => ({ count: () => 0, shows: () => false }), recentPlacements: () => [], pod: () => ({ error: 'cannot read pod ns/x: boom' }) };
    assert.deepEqual(decidePodDeletion({ view: failing, subject: { podName: 'x' }, namespace: 'ns', now: NOW }), { kind: 'error', message: 'cannot read pod ns/x: boom' });
    const reading: ClusterView = { ...failing, pod: (namespace, name) => ({ read: { kind: 'pod', namespace, name } }) };
    assert.deepEqual(decidePodDeletion({ view: reading, subject: { podName: 'x' }, namespace: 'ns', now: NOW }), { kind: 'read', read: { kind: 'pod', namespace: 'ns', name: 'x' } });
  });

  test('a pod without a marker, or of a WorkloadSpread that is gone, records nothing', () => {
    const ws = spread([{ name: 'a', maxReplicas: 2 }, { name: 'b' }]);
    assert.deepEqual(decidePodDeletion({ view: view(ws), subject: { pod: newPod('p') }, namespace: 'ns', now: NOW }), { kind: 'admit' });
    const other = placed('a');
    other.metadata.annotations = { [MARKER]: formatMarker({ name: 'other', subset: 'a' }) };
    assert.deepEqual(decidePodDeletion({ view: view(ws), subject: { pod: other }, namespace: 'ns', now: NOW }), { kind: 'admit' });
  });
});

describe('issue 14: a booked deletion frees its slot once observed', () => {
  // a (max 2) holds two running pods, x and y; the deletion of x is booked (missing 0 → 1).
  const ws = spread([{ name: 'a', maxReplicas: 2 }, { name: 'b' }], { versionedSubsetStatuses: { [V]: [st('a', 1, { replicas: 2, deletingPods: { x: STAMP } }), st('b', -1)] } });
  const running = (name: string, extra: Partial<Pod['metadata']> = {}): Pod => ({ ...newPod(name), metadata: { ...newPod(name).metadata, ...extra }, status: { phase: 'Running' } });

  test('the view shows x gone or terminating: the slot is free, as in the reference', () => {
    const v = view(ws);
    v.pods = [running('y')];
    const gone = create(v, newPod('p1'), ws);
    assert.equal(gone.kind === 'placed' && gone.subset, 'a');
    v.pods = [running('x', { deletionTimestamp: STAMP }), running('y')];
    const terminating = create(v, newPod('p1'), ws);
    assert.equal(terminating.kind === 'placed' && terminating.subset, 'a');
  });

  test('the cache shows x running: a fresh read decides — still running (forged, refused or in flight): the pod goes on to b', () => {
    const v = view(ws);
    v.pods = [running('x'), running('y')];
    assert.equal((create(v, newPod('p1'), ws) as { subset?: string }).subset, 'b', 'a view without fresh reads is authoritative');
    const fresh: { x?: Pod | 'gone' } = {};
    const withReads: ClusterView = Object.assign(Object.create(Object.getPrototypeOf(v) as object) as ClusterView, v, {
      freshPod: (_ns: string, name: string) => {
        if (fresh.x === undefined) return { read: { kind: 'pod' as const, namespace: 'ns', name } };
        return fresh.x === 'gone' ? { notFound: true as const } : { found: fresh.x };
      },
    });
    assert.deepEqual(create(withReads, newPod('p1'), ws), { kind: 'read', read: { kind: 'pod', namespace: 'ns', name: 'x' } });
    fresh.x = running('x');
    assert.equal((create(withReads, newPod('p1'), ws) as { subset?: string }).subset, 'b');
    fresh.x = 'gone';
    assert.equal((create(withReads, newPod('p1'), ws) as { subset?: string }).subset, 'a');
  });
});
