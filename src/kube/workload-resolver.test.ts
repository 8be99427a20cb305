/**
 * Workload resolution against the embedded API server: owner chains through
 * the cache view (a cached kind missing → NotFound), uncached supported kinds
 * (Advanced StatefulSet) and whitelisted kinds not yet listed read from the
 * API (the view names the read, admission makes it: webhook/view-reads.ts);
 * the target by its real version; replicas through the scale
 * subresource with its selector as the pod fallback; the reconciler's
 * inputs for a Deployment (pods of every ReplicaSet, the latest version)
 * and for a missing target.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_CONFIGMAP_NAME, WHITELIST_CONFIGMAP_KEY } from '../api/keys.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { generateServingCertificate } from '../client/loopback-certificates.ts';
import type { KubeObject, OwnerReference } from '../k8s/types.ts';
import type { ClientTestBed } from '../testing/client-test-bed.ts';
import { settleUntil } from '../testing/eventually.ts';
import { admissionWorkloadReplicas } from '../core/replicas.ts';
import type { ObjectRef } from '../core/cluster-view.ts';
import type { Lookup } from '../k8s/lookup.ts';
import { ReadThroughView, settleLookup } from '../webhook/view-reads.ts';
import { ApiReader } from './api-reader.ts';
import { ManagerCaches } from './caches.ts';
import { createNamespace, createObject, customWorkloadCrd, podSpec, startKubeTestBed, T0, whitelistJson, workloadSpread } from '../testing/kube-bed.ts';
import { WorkloadResolver } from './workload-resolver.ts';

let clock: VirtualClock;
let bed: ClientTestBed;

before(async () => {
  clock = new VirtualClock(T0);
  bed = await startKubeTestBed(clock, generateServingCertificate());
  await createObject(bed, customWorkloadCrd('apps.kruise.io', 'StatefulSet', 'statefulsets', ['v1beta1']));
  await createObject(bed, customWorkloadCrd('games.example.com', 'GameServerSet', 'gameserversets', ['v1', 'v2']));
  await createObject(bed, customWorkloadCrd('games.example.com', 'GameServer', 'gameservers'));
  await clock.quiesce();
});
after(() => bed.close());

async function setup(whitelist?: string): Promise<{ ns: string; caches: ManagerCaches; resolver: WorkloadResolver }> {
  const ns = await createNamespace(bed, 'res');
  if (whitelist !== undefined) {
    await createObject(bed, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: DEFAULT_CONFIGMAP_NAME, namespace: ns }, data: { [WHITELIST_CONFIGMAP_KEY]: whitelist } });
  }
  const caches = new ManagerCaches({ client: bed.client, namespace: ns, freeze: true });
  caches.start();
  await caches.waitForSync();
  await clock.quiesce();
  return { ns, caches, resolver: new WorkloadResolver({ caches }) };
}

/** What admission's owner walk sees for one pod: the cache view, and the API reads it names. */
function ownerLookup(caches: ManagerCaches, ns: string): (ref: ObjectRef) => Promise<Lookup<KubeObject>> {
  const view = new ReadThroughView(caches.view, new ApiReader(bed.client));
  return (ref) => settleLookup(view, () => view.object(ns, ref));
}

const ownerRef = (obj: KubeObject): OwnerReference => ({ apiVersion: obj.apiVersion ?? '', kind: obj.kind ?? '', name: obj.metadata?.name ?? '', uid: obj.metadata?.uid ?? '', controller: true });

function deployment(ns: string, name: string, replicas: number, image = 'nginx'): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image }] } } },
  };
}

function replicaSet(ns: string, name: string, owner: KubeObject, hash: string, replicas: number, image = 'nginx'): KubeObject {
  const app = owner.metadata?.name ?? '';
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name, namespace: ns, labels: { app, 'pod-template-hash': hash }, ownerReferences: [ownerRef(owner)] },
    spec: {
      replicas,
      selector: { matchLabels: { app, 'pod-template-hash': hash } },
      template: { metadata: { labels: { app, 'pod-template-hash': hash } }, spec: { containers: [{ name: 'main', image }] } },
    },
  };
}

function pod(ns: string, name: string, owner: KubeObject, labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, labels, ownerReferences: [ownerRef(owner)] }, spec: podSpec() };
}

describe('owner lookup through the cache view and its reads', () => {
  test('pod → ReplicaSet → Deployment from the cache; a cached kind missing is NotFound', async () => {
    const { ns, caches, resolver } = await setup();
    try {
      const d = await createObject(bed, deployment(ns, 'web', 2));
      const rs = await createObject(bed, replicaSet(ns, 'web-abc', d, 'abc', 2));
      await clock.quiesce();
      bed.server.control.resetCounters();
      const lookup = ownerLookup(caches, ns);
      const found = await lookup({ apiVersion: rs.apiVersion ?? '', kind: 'ReplicaSet', name: 'web-abc' });
      assert.ok('found' in found && found.found.metadata?.name === 'web-abc');
      assert.ok('found' in (await lookup({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' })));
      assert.equal(bed.server.control.requestCount(), 0, 'cached kinds cost no request');
      const missing = await lookup({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'not-yet' });
      assert.ok('notFound' in missing, 'the reference fails such an admission closed');
      assert.equal(bed.server.control.requestCount(), 0, 'a cached kind missing is NotFound without a request');
    } finally {
      await caches.stop();
    }
  });

  test('an Advanced StatefulSet (not cached) is read from the API server', async () => {
    const { ns, caches, resolver } = await setup();
    try {
      const sts = await createObject(bed, { apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', metadata: { name: 'db', namespace: ns }, spec: { replicas: 3 } });
      bed.server.control.resetCounters();
      const found = await ownerLookup(caches, ns)({ apiVersion: ownerRef(sts).apiVersion, kind: 'StatefulSet', name: 'db' });
      assert.ok('found' in found);
      assert.equal(bed.server.control.requestCount({ resource: 'statefulsets', verb: 'get' }), 1);
    } finally {
      await caches.stop();
    }
  });

  test('a whitelisted sub-resource chain (GameServer → GameServerSet) whose informer cannot list goes through the API', async () => {
    const wl = whitelistJson([{ Group: 'games.example.com', Version: 'v1', Kind: 'GameServerSet', replicasPath: 'spec.replicas', subResources: [{ Group: 'games.example.com', Version: 'v1', Kind: 'GameServer' }] }]);
    const fault = bed.server.control.injectFault({ resource: 'gameservers', verb: 'list', status: 500 });
    const { ns, caches, resolver } = await setup(wl);
    try {
      const gss = await createObject(bed, { apiVersion: 'games.example.com/v1', kind: 'GameServerSet', metadata: { name: 'gss', namespace: ns }, spec: { replicas: 1 } });
      const gs = await createObject(bed, { apiVersion: 'games.example.com/v1', kind: 'GameServer', metadata: { name: 'gs-1', namespace: ns, ownerReferences: [ownerRef(gss)] } });
      await clock.quiesce();
      assert.equal(caches.workloadStore('games.example.com', 'GameServer')?.synced, false, 'the GameServer informer has not listed');
      bed.server.control.resetCounters();
      const lookup = ownerLookup(caches, ns);
      assert.ok('found' in (await lookup({ apiVersion: ownerRef(gs).apiVersion, kind: 'GameServer', name: 'gs-1' })));
      assert.ok('found' in (await lookup({ apiVersion: 'games.example.com/v1', kind: 'GameServer', name: 'gs-1' })));
      assert.equal(bed.server.control.requestCount({ resource: 'gameservers', verb: 'get' }), 1, 'read once for the admission');
      const parent = await lookup({ apiVersion: 'games.example.com/v1', kind: 'GameServerSet', name: 'gss' });
      assert.ok('found' in parent && parent.found.metadata?.uid === gss.metadata?.uid, 'the parent comes from its (listed) cache');
      assert.equal(bed.server.control.requestCount({ resource: 'gameserversets', verb: 'get' }), 0);
    } finally {
      fault.clear();
      await caches.stop();
    }
  });
});

describe('WorkloadResolver target and replicas', () => {
  test('the target is fetched by its real version; a cache of another version is not used', async () => {
    const wl = whitelistJson([{ Group: 'games.example.com', Version: 'v1', Kind: 'GameServerSet', replicasPath: 'spec.replicas' }]);
    const { ns, caches, resolver } = await setup(wl);
    try {
      await createObject(bed, { apiVersion: 'games.example.com/v1', kind: 'GameServerSet', metadata: { name: 'gss', namespace: ns }, spec: { replicas: 4 } });
      await settleUntil(clock, () => assert.ok(caches.workloadStore('games.example.com', 'GameServerSet')?.synced, 'GameServerSet informer synced'));
      const v1 = workloadSpread(ns, 'w', [{ name: 'a' }], { apiVersion: 'games.example.com/v1', kind: 'GameServerSet', name: 'gss' });
      bed.server.control.resetCounters();
      const view = new ReadThroughView(caches.view, new ApiReader(bed.client));
      const target = await settleLookup(view, () => view.object(ns, v1.spec.targetRef, { exactVersion: true }));
      assert.ok('found' in target);
      assert.deepEqual(admissionWorkloadReplicas(v1 as unknown as WorkloadSpread, target.found, caches.whitelist()), { ok: true, replicas: 4 });
      assert.equal(bed.server.control.requestCount(), 0, 'v1 is cached');
      const v2 = workloadSpread(ns, 'w', [{ name: 'a' }], { apiVersion: 'games.example.com/v2', kind: 'GameServerSet', name: 'gss' });
      const fetched = await resolver.targetWorkload(v2);
      assert.ok(fetched.ok && fetched.workload?.apiVersion === 'games.example.com/v2');
      assert.equal(bed.server.control.requestCount({ resource: 'gameserversets', verb: 'get' }), 1, 'v2 is read from the API server');
      const missing = await resolver.targetWorkload(workloadSpread(ns, 'w', [{ name: 'a' }], { name: 'nothing' }));
      assert.deepEqual(missing, { ok: true, workload: undefined });
    } finally {
      await caches.stop();
    }
  });

  test('a custom kind whose pods are owned by ReplicaSets: its scale selector finds them (D7: deletion costs)', async () => {
    const wl = whitelistJson([{ Group: 'games.example.com', Version: 'v1', Kind: 'GameServerSet', replicasPath: 'spec.replicas' }]);
    const { ns, caches, resolver } = await setup(wl);
    try {
      const gss = await createObject(bed, { apiVersion: 'games.example.com/v1', kind: 'GameServerSet', metadata: { name: 'gss', namespace: ns }, spec: { replicas: 3 } });
      const st = await bed.server.control.patch('games.example.com/v1', 'GameServerSet', ns, 'gss', 'application/merge-patch+json', { status: { replicas: 0, selector: 'game=gss' } }, { subresource: 'status' });
      assert.ok(st.ok);
      const rs = await createObject(bed, replicaSet(ns, 'gss-rs', gss, 'h1', 3));
      await createObject(bed, pod(ns, 'p1', rs, { game: 'gss', 'pod-template-hash': 'h1' }));
      await createObject(bed, pod(ns, 'p2', rs, { game: 'other' }));
      await clock.quiesce();
      const ws = workloadSpread(ns, 'w', [{ name: 'a' }], { apiVersion: 'games.example.com/v1', kind: 'GameServerSet', name: 'gss' }) as unknown as WorkloadSpread;
      const r = await resolver.resolveForReconcile(ws);
      assert.ok(r.ok, !r.ok ? r.error : '');
      assert.equal(r.inputs.workloadReplicas, 3, 'from the whitelist replicasPath');
      assert.deepEqual(r.inputs.pods.map((p) => p.metadata.name), ['p1']);
      assert.equal(r.inputs.writeDeletionCost, true);
    } finally {
      await caches.stop();
    }
  });

  test('a custom kind the controller cannot count otherwise is counted through its scale subresource', async () => {
    // The whitelist names another version, so its replicasPath does not apply to a v1 target (spec §5.2).
    const wl = whitelistJson([{ Group: 'games.example.com', Version: 'v2', Kind: 'GameServerSet', replicasPath: 'spec.replicas' }]);
    const { ns, caches, resolver } = await setup(wl);
    try {
      const gss = await createObject(bed, { apiVersion: 'games.example.com/v1', kind: 'GameServerSet', metadata: { name: 'gss', namespace: ns }, spec: { replicas: 5 } });
      await createObject(bed, pod(ns, 'own-1', gss));
      await clock.quiesce();
      const ws = workloadSpread(ns, 'w', [{ name: 'a' }], { apiVersion: 'games.example.com/v1', kind: 'GameServerSet', name: 'gss' }) as unknown as WorkloadSpread;
      const replicas = await resolver.controllerReplicas(ws, gss);
      assert.ok(replicas.ok);
      assert.equal(replicas.replicas, 5);
      assert.equal(replicas.fallbackSelector, undefined, 'it owns its pods: no selector fallback');
      const r = await resolver.resolveForReconcile(ws);
      assert.ok(r.ok && r.inputs.pods.length === 1);
      assert.equal(r.inputs.writeDeletionCost, false, 'pods owned by the custom workload itself: no deletion cost (D7)');
    } finally {
      await caches.stop();
    }
  });
});

describe('WorkloadResolver reconcile inputs', () => {
  test('a Deployment: pods of every ReplicaSet (also scaled to 0), the latest version by template', async () => {
    const { ns, caches, resolver } = await setup();
    try {
      const d = await createObject(bed, deployment(ns, 'web', 3, 'nginx:2'));
      const oldRs = await createObject(bed, replicaSet(ns, 'web-old', d, 'old', 0, 'nginx:1'));
      const newRs = await createObject(bed, replicaSet(ns, 'web-new', d, 'new', 3, 'nginx:2'));
      await createObject(bed, pod(ns, 'web-old-1', oldRs, { app: 'web', 'pod-template-hash': 'old' }));
      await createObject(bed, pod(ns, 'web-new-2', newRs, { app: 'web', 'pod-template-hash': 'new' }));
      await createObject(bed, pod(ns, 'web-new-1', newRs, { app: 'web', 'pod-template-hash': 'new' }));
      const stranger = await createObject(bed, deployment(ns, 'other', 1));
      await createObject(bed, pod(ns, 'other-1', stranger));
      await clock.quiesce();
      const ws = workloadSpread(ns, 'w', [{ name: 'a' }]) as unknown as WorkloadSpread;
      const r = await resolver.resolveForReconcile(ws);
      assert.ok(r.ok, !r.ok ? r.error : '');
      assert.equal(r.inputs.workloadReplicas, 3);
      assert.deepEqual(r.inputs.pods.map((p) => p.metadata.name), ['web-new-1', 'web-new-2', 'web-old-1'], 'name order, every ReplicaSet');
      assert.deepEqual(r.inputs.latestVersion, { ok: true, version: 'new' });
      assert.equal(r.inputs.writeDeletionCost, true);
    } finally {
      await caches.stop();
    }
  });

  test('a missing target resolves to no workload, 0 replicas, no pods', async () => {
    const { ns, caches, resolver } = await setup();
    try {
      const r = await resolver.resolveForReconcile(workloadSpread(ns, 'w', [{ name: 'a' }], { name: 'later' }) as unknown as WorkloadSpread);
      assert.ok(r.ok);
      assert.equal(r.inputs.workload, undefined);
      assert.equal(r.inputs.workloadReplicas, 0);
      assert.deepEqual(r.inputs.pods, []);
    } finally {
      await caches.stop();
    }
  });
});
