/**
 * ManagerCaches against the embedded API server on the virtual clock: pods
 * are cached trimmed and indexed (owner, node, marker), requestedOnNode sums
 * what bound pods request, WorkloadSpreads are indexed by target and
 * ReplicaSets by owner; the whitelist config map is watched (edits apply, a
 * bad value keeps the previous whitelist with an InvalidWhitelist event);
 * custom kinds of the whitelist get informers that start and stop with it;
 * CloneSets are watched only while discovery serves them.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EMPTY_WHITELIST } from '../api/whitelist.ts';
import { DEFAULT_CONFIGMAP_NAME, MATCHED_WORKLOADSPREAD_ANNOTATION, WHITELIST_CONFIGMAP_KEY } from '../api/keys.ts';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { generateServingCertificate } from '../client/loopback-certificates.ts';
import { EventRecorder } from '../client/event-recorder.ts';
import { memoryLogger } from '../client/logger.ts';
import type { KubeObject } from '../k8s/types.ts';
import type { ClientTestBed } from '../testing/client-test-bed.ts';
import { settleUntil } from '../testing/eventually.ts';
import { podVersion } from '../core/pod-version.ts';
import { requestedOnNode } from '../core/simulation-schedule.ts';
import { ApiReader } from './api-reader.ts';
import { ManagerCaches, type WorkloadEvent } from './caches.ts';
import { createNamespace, createObject, customWorkloadCrd, podSpec, startKubeTestBed, T0, whitelistJson, workloadSpread } from '../testing/kube-bed.ts';

let clock: VirtualClock;
let bed: ClientTestBed;

before(async () => {
  clock = new VirtualClock(T0);
  bed = await startKubeTestBed(clock, generateServingCertificate());
});
after(() => bed.close());

async function startCaches(namespace: string, extra: Partial<ConstructorParameters<typeof ManagerCaches>[0]> = {}): Promise<ManagerCaches> {
  const caches = new ManagerCaches({ client: bed.client, namespace, freeze: true, discoveryRecheckMs: 60_000, ...extra });
  caches.start();
  await caches.waitForSync();
  await clock.quiesce();
  return caches;
}

function pod(namespace: string, name: string, extra: { owner?: { kind: string; name: string; uid: string }; node?: string; requests?: Record<string, string>; marker?: string; phase?: string } = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      labels: { app: 'web' },
      ...(extra.marker === undefined ? {} : { annotations: { [MATCHED_WORKLOADSPREAD_ANNOTATION]: extra.marker } }),
      ...(extra.owner === undefined ? {} : { ownerReferences: [{ apiVersion: 'apps/v1', controller: true, ...extra.owner }] }),
    },
    spec: { ...podSpec(extra.requests), ...(extra.node === undefined ? {} : { nodeName: extra.node }) },
  };
}

describe('ManagerCaches', () => {
  test('pods are trimmed and indexed; requestedOnNode sums unfinished pods', async () => {
    const ns = await createNamespace(bed);
    const caches = await startCaches(ns);
    try {
      const owner = { kind: 'ReplicaSet', name: 'rs', uid: 'rs-uid' };
      await createObject(bed, pod(ns, 'a', { owner, node: 'n1', requests: { cpu: '250m', memory: '1Gi' }, marker: '{"name":"w","subset":"s"}' }));
      await createObject(bed, pod(ns, 'b', { owner, node: 'n1', requests: { cpu: '500m' } }));
      await createObject(bed, pod(ns, 'c', { node: 'n2' }));
      const done = await createObject(bed, pod(ns, 'd', { owner, node: 'n1', requests: { cpu: '4' } }));
      const finished = await bed.server.control.patch('v1', 'Pod', ns, 'd', 'application/merge-patch+json', { status: { phase: 'Succeeded' } }, { subresource: 'status' });
      assert.ok(finished.ok && done.metadata?.name === 'd');
      await clock.quiesce();

      assert.deepEqual(caches.podsOwnedBy('rs-uid').map((p) => p.metadata.name), ['a', 'b', 'd']);
      assert.equal(caches.podCountOwnedBy('rs-uid'), 3);
      assert.equal(caches.podCountOwnedBy('no-such-uid'), 0);
      assert.deepEqual(caches.podsOnNode('n1').map((p) => p.metadata.name).sort(), ['a', 'b', 'd']);
      const placed = caches.view.placedTally(ns, 'w', podVersion(caches.getPod(ns, 'a') ?? { metadata: {} }), {});
      assert.deepEqual([placed.count('s'), placed.count('other'), placed.shows('a'), placed.shows('b')], [1, 0, true, false]);
      assert.deepEqual(requestedOnNode(caches.view.podsOnNode('n1')), { cpuMilli: 750, memory: 1024 ** 3, pods: 2 }, 'the Succeeded pod no longer counts');
      assert.deepEqual(requestedOnNode(caches.view.podsOnNode('nowhere')), { cpuMilli: 0, memory: 0, pods: 0 });
      // Kept summed by the cache, equal to the sum over the node's pods.
      assert.deepEqual(caches.view.requestedOnNode('n1'), { cpuMilli: 750, memory: 1024 ** 3, pods: 2 });
      assert.deepEqual(caches.view.requestedOnNode('nowhere'), { cpuMilli: 0, memory: 0, pods: 0 });
      const cached = caches.getPod(ns, 'a');
      assert.ok(cached);
      assert.equal(cached.spec.containers[0]?.name, '', 'the summary container, not the real one');
      assert.equal(cached.metadata['managedFields'], undefined);
      assert.deepEqual(caches.listPods(ns).map((p) => p.metadata.name), ['a', 'b', 'c', 'd']);
      const reader = new ApiReader(bed.client);
      const [full] = await reader.fullPods([cached]);
      assert.equal(full?.spec.containers[0]?.name, 'main', 'fullPods reads the API server');
      assert.deepEqual(await reader.pod(ns, 'nope'), { notFound: true });
      // The cache view answers what it holds, and names the read for what it does not.
      assert.deepEqual(caches.view.pod(ns, 'a'), { found: cached });
      assert.deepEqual(caches.view.pod(ns, 'nope'), { read: { kind: 'pod', namespace: ns, name: 'nope' } });
    } finally {
      await caches.stop();
    }
  });

  test('WorkloadSpreads by target (version ignored), ReplicaSets by owner, nodes', async () => {
    const ns = await createNamespace(bed);
    const caches = await startCaches(ns);
    try {
      await createObject(bed, workloadSpread(ns, 'w2', [{ name: 'a' }], { name: 'web' }));
      await createObject(bed, workloadSpread(ns, 'w1', [{ name: 'a' }], { apiVersion: 'apps/v1beta2', name: 'web' }));
      await createObject(bed, workloadSpread(ns, 'other', [{ name: 'a' }], { name: 'api' }));
      await createObject(bed, {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'web-1', namespace: ns, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd-uid', controller: true }] },
        spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: podSpec() } },
      });
      await createObject(bed, { apiVersion: 'v1', kind: 'Node', metadata: { name: `${ns}-node`, labels: { zone: 'a' } } });
      await clock.quiesce();
      assert.deepEqual(caches.workloadSpreadsForTarget(ns, 'apps', 'Deployment', 'web').map((w) => w.metadata.name), ['w1', 'w2']);
      assert.deepEqual(caches.listWorkloadSpreads(ns).map((w) => w.metadata.name), ['other', 'w1', 'w2']);
      // One shared, frozen list until a WorkloadSpread changes; a status write is a change.
      const listed = caches.listWorkloadSpreads(ns);
      assert.equal(caches.listWorkloadSpreads(ns), listed);
      assert.ok(Object.isFrozen(listed));
      const written = await bed.server.control.patch('apps.kruise.io/v1alpha1', 'WorkloadSpread', ns, 'w1', 'application/merge-patch+json', { status: { observedGeneration: 7 } }, { subresource: 'status' });
      assert.ok(written.ok);
      await clock.quiesce();
      const relisted = caches.listWorkloadSpreads(ns);
      assert.notEqual(relisted, listed);
      assert.equal(relisted.find((w) => w.metadata.name === 'w1')?.status?.observedGeneration, 7);
      assert.deepEqual(caches.replicaSetsOwnedBy('d-uid').map((r) => r.metadata?.name), ['web-1']);
      assert.equal(caches.getNode(`${ns}-node`)?.metadata.labels?.['zone'], 'a');
      assert.ok(caches.hasSynced());
    } finally {
      await caches.stop();
    }
  });

  test('the whitelist config map is watched; a bad value keeps the previous whitelist and says so', async () => {
    const ns = await createNamespace(bed, 'wl');
    const log = memoryLogger();
    const recorder = new EventRecorder({ client: bed.client, reportingController: 'workloadspread-controller', reportingInstance: 'test' });
    const caches = await startCaches(ns, { log, recorder });
    const changes: number[] = [];
    caches.whitelistSource.onChange((wl) => changes.push(wl.workloads.length));
    try {
      assert.equal(caches.whitelist(), EMPTY_WHITELIST, 'no config map: nothing whitelisted');
      const good = whitelistJson([{ Group: 'example.com', Version: 'v1', Kind: 'Gizmo', replicasPath: 'spec.replicas' }]);
      await createObject(bed, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: DEFAULT_CONFIGMAP_NAME, namespace: ns }, data: { [WHITELIST_CONFIGMAP_KEY]: good } });
      await clock.quiesce();
      assert.deepEqual(caches.whitelist().workloads.map((w) => w.kind), ['Gizmo']);

      const bad = await bed.server.control.patch('v1', 'ConfigMap', ns, DEFAULT_CONFIGMAP_NAME, 'application/merge-patch+json', { data: { [WHITELIST_CONFIGMAP_KEY]: '{"workloads": [' } });
      assert.ok(bad.ok);
      await clock.quiesce();
      await recorder.flush();
      assert.deepEqual(caches.whitelist().workloads.map((w) => w.kind), ['Gizmo'], 'the previous whitelist stays');
      assert.ok(log.lines.some((l) => l.level === 'warn' && /invalid custom workload whitelist/.test(l.message)));
      const events = await bed.server.control.list('events.k8s.io/v1', 'Event', ns);
      assert.ok(events.ok);
      const invalid = events.value.items.find((e) => e['reason'] === 'InvalidWhitelist');
      assert.ok(invalid, 'an InvalidWhitelist event on the config map');
      assert.match(String(invalid['note']), /keeping the previous whitelist \(1 workload kinds\)/);

      const other = await bed.server.control.patch('v1', 'ConfigMap', ns, DEFAULT_CONFIGMAP_NAME, 'application/merge-patch+json', { data: { [WHITELIST_CONFIGMAP_KEY]: whitelistJson([{ Group: 'example.com', Version: 'v1', Kind: 'Gizmo' }, { Group: 'example.com', Version: 'v1', Kind: 'Gadget' }]) } });
      assert.ok(other.ok);
      await clock.quiesce();
      assert.deepEqual(caches.whitelist().workloads.map((w) => w.kind), ['Gizmo', 'Gadget'], 'a fixed value applies without restart');

      await bed.server.control.delete('v1', 'ConfigMap', ns, DEFAULT_CONFIGMAP_NAME);
      await clock.quiesce();
      assert.equal(caches.whitelist().workloads.length, 0, 'deleting the config map empties the whitelist');
      assert.deepEqual(changes, [1, 2, 0]);
    } finally {
      await caches.stop();
    }
  });

  test('custom kinds of the whitelist get informers that follow the whitelist; CloneSets follow discovery', async () => {
    const ns = await createNamespace(bed, 'dyn');
    await createObject(bed, customWorkloadCrd('games.example.com', 'GameServerSet', 'gameserversets'));
    await createObject(bed, customWorkloadCrd('games.example.com', 'GameServer', 'gameservers'));
    await clock.quiesce();
    const caches = await startCaches(ns);
    const events: string[] = [];
    caches.onWorkloadEvent((e: WorkloadEvent) => {
      if (e.group !== 'apps') events.push(`${e.type} ${e.kind} ${e.obj.metadata?.name ?? ''}`);
    });
    try {
      await caches.refreshDiscovery();
      assert.deepEqual(caches.dynamicKinds(), [], 'no CloneSet CRD, empty whitelist: nothing dynamic');
      await createObject(bed, { apiVersion: 'games.example.com/v1', kind: 'GameServerSet', metadata: { name: 'gss', namespace: ns }, spec: { replicas: 2 } });
      const wl = whitelistJson([{ Group: 'games.example.com', Version: 'v1', Kind: 'GameServerSet', subResources: [{ Group: 'games.example.com', Version: 'v1', Kind: 'GameServer' }] }]);
      await createObject(bed, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: DEFAULT_CONFIGMAP_NAME, namespace: ns }, data: { [WHITELIST_CONFIGMAP_KEY]: wl } });
      await settleUntil(clock, () => assert.deepEqual(caches.dynamicKinds(), ['games.example.com/GameServer', 'games.example.com/GameServerSet']));
      await settleUntil(clock, () => assert.ok(caches.workloadStore('games.example.com', 'GameServerSet')?.synced, 'GameServerSet informer synced'));
      assert.equal(caches.workloadStore('games.example.com', 'GameServerSet')?.store.get(ns, 'gss')?.metadata?.name, 'gss');
      assert.deepEqual(events, ['add GameServerSet gss'], 'handlers registered before the informer started get its events');

      await createObject(bed, customWorkloadCrd('apps.kruise.io', 'CloneSet', 'clonesets', ['v1alpha1']));
      await clock.quiesce();
      await caches.refreshDiscovery();
      await clock.quiesce();
      assert.ok(caches.dynamicKinds().includes('apps.kruise.io/CloneSet'), 'the CloneSet CRD appeared: watched');

      await bed.server.control.patch('v1', 'ConfigMap', ns, DEFAULT_CONFIGMAP_NAME, 'application/merge-patch+json', { data: { [WHITELIST_CONFIGMAP_KEY]: whitelistJson([]) } });
      await settleUntil(clock, () => assert.deepEqual(caches.dynamicKinds(), ['apps.kruise.io/CloneSet']));
      assert.equal(caches.workloadStore('games.example.com', 'GameServerSet'), undefined, 'removed from the whitelist: informer stopped');

      const removed = await bed.server.control.delete('apiextensions.k8s.io/v1', 'CustomResourceDefinition', '', 'clonesets.apps.kruise.io');
      assert.ok(removed.ok);
      await clock.quiesce();
      await caches.refreshDiscovery();
      assert.deepEqual(caches.dynamicKinds(), [], 'the CloneSet CRD is gone: informer stopped');
    } finally {
      await caches.stop();
    }
  });
});
