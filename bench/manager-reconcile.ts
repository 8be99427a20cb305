/**
 * Benchmark: one WorkloadSpread over a Deployment of N pods (default 10,000),
 * already placed in 3 subsets (a 30%, b 30%, c unlimited; the pods carry
 * their markers, run on their nodes and are Ready), on the embedded API
 * server (virtual clock, no control loops, so nothing else moves).
 *
 * Run:  node --expose-gc --import tsx bench/manager-reconcile.ts [pods=10000]
 *       (or `npm run bench manager-reconcile`)
 *
 * Prints (figures only, no assertions):
 * - the pure plan alone: `planReconcile` over the N pods (grouping, status,
 *   deletion costs), mean of 5 runs after a warm-up;
 * - the manager's caches: time to list and index everything, and heap per
 *   cached pod (heap after a forced GC with the caches synced minus after
 *   they are dropped, over N; the API server's own copies are in both
 *   figures), split into the trimmed pod objects and the stores + indexes;
 * - a full sync by the real reconciler: the first (writes the N deletion
 *   costs and the status: N+1 API writes) and the next (nothing changed: no
 *   write at all, D9), with the requests each made.
 */
import { cpus, loadavg } from 'node:os';
import { workloadSpreadCrd } from '../src/api/crd.ts';
import { MATCHED_WORKLOADSPREAD_ANNOTATION } from '../src/api/keys.ts';
import type { WorkloadSpread } from '../src/api/workloadspread.ts';
import { VirtualClock } from '../src/clock/virtual-clock.ts';
import { generateServingCertificate } from '../src/client/loopback-certificates.ts';
import { WorkloadSpreadController } from '../src/controller/controller.ts';
import { formatMarker } from '../src/core/marker.ts';
import { planReconcile } from '../src/core/reconcile-plan.ts';
import { formatTime } from '../src/k8s/time.ts';
import type { KubeObject, Node, Pod } from '../src/k8s/types.ts';
import { ManagerCaches } from '../src/kube/caches.ts';
import { createEventRecorder, CONTROLLER_COMPONENT, EngineEventSink } from '../src/kube/events.ts';
import { PodWriter } from '../src/kube/pod-writer.ts';
import { StatusWriter } from '../src/kube/status-writer.ts';
import { WorkloadResolver } from '../src/kube/workload-resolver.ts';
import { WorkloadSpreadState } from '../src/kube/ws-state.ts';
import { startClientTestBed } from '../src/testing/client-test-bed.ts';

const PODS = Number(process.argv[2] ?? 10_000);
const NS = 'bench';
const MiB = 1024 * 1024;
const HASH = 'h1';

function heap(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

function must<T>(r: { ok: true; value: T } | { ok: false; status: unknown }, what: string): T {
  if (!r.ok) throw new Error(`${what}: ${JSON.stringify(r.status)}`);
  return r.value;
}

async function main(): Promise<void> {
  const clock = new VirtualClock(Date.UTC(2026, 0, 1), { realWaitMs: 30 * 60_000 });
  const bed = await startClientTestBed(clock, generateServingCertificate());
  const control = bed.server.control;
  try {
    must(await control.create(workloadSpreadCrd() as KubeObject), 'crd');
    must(await control.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }), 'namespace');
    must(await control.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'workloadspread-system' } }), 'namespace');
    await clock.quiesce();
    const zones = ['a', 'b', 'c'];
    for (const z of zones) for (let i = 0; i < 20; i++) must(await control.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: `${z}${i}`, labels: { 'topology.kubernetes.io/zone': z } }, status: { allocatable: { cpu: '64', memory: '256Gi', pods: '1000' } } }), 'node');
    const labels = { app: 'web' };
    const template = { metadata: { labels }, spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } };
    const d = must(await control.create({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: NS, annotations: { 'deployment.kubernetes.io/revision': '1' } }, spec: { replicas: PODS, selector: { matchLabels: labels }, template } }), 'deployment');
    const rsLabels = { ...labels, 'pod-template-hash': HASH };
    const rs = must(
      await control.create({
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: `web-${HASH}`, namespace: NS, labels: rsLabels, annotations: { 'deployment.kubernetes.io/revision': '1' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: d.metadata?.uid ?? '', controller: true }] },
        spec: { replicas: PODS, selector: { matchLabels: rsLabels }, template: { ...template, metadata: { labels: rsLabels } } },
      }),
      'replicaset',
    );
    const term = (z: string) => ({ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [z] }] });
    must(
      await control.create({
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'WorkloadSpread',
        metadata: { name: 'spread', namespace: NS },
        spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets: [{ name: 'a', requiredNodeSelectorTerm: term('a'), maxReplicas: '30%' }, { name: 'b', requiredNodeSelectorTerm: term('b'), maxReplicas: '30%' }, { name: 'c', requiredNodeSelectorTerm: term('c') }] },
      } as KubeObject),
      'workloadspread',
    );
    const cap = Math.ceil(PODS * 0.3);
    const seeded = performance.now();
    const now = formatTime(clock.now());
    for (let i = 0; i < PODS; i++) {
      const subset = i < cap ? 'a' : i < 2 * cap ? 'b' : 'c';
      const name = `web-${HASH}-${String(i).padStart(5, '0')}`;
      must(
        await control.create({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, namespace: NS, labels: rsLabels, annotations: { [MATCHED_WORKLOADSPREAD_ANNOTATION]: formatMarker({ name: 'spread', subset }) }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `web-${HASH}`, uid: rs.metadata?.uid ?? '', controller: true }] },
          spec: { nodeName: `${subset}${i % 20}`, containers: [{ name: 'main', image: 'nginx:1.27', resources: { requests: { cpu: '10m', memory: '16Mi' } } }] },
        }),
        name,
      );
      must(await control.patch('v1', 'Pod', NS, name, 'application/merge-patch+json', { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }, { type: 'PodScheduled', status: 'True' }] } }, { subresource: 'status' }), name);
    }
    await clock.quiesce();
    console.log(`${cpus().length} CPUs, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    console.log(`${PODS} pods of one Deployment in 3 subsets (a ${cap}, b ${cap}, c ${PODS - 2 * cap}), 60 nodes; seeded in ${(performance.now() - seeded).toFixed(0)} ms`);

    // ---- the pure plan ----
    const ws = must(control.get('apps.kruise.io/v1alpha1', 'WorkloadSpread', NS, 'spread'), 'ws') as unknown as WorkloadSpread;
    const pods = (must(control.list('v1', 'Pod', NS), 'pods').items as Pod[]).sort((x, y) => (x.metadata.name ?? '').localeCompare(y.metadata.name ?? ''));
    const nodes = new Map((must(control.list('v1', 'Node'), 'nodes').items as Node[]).map((n) => [n.metadata.name ?? '', n]));
    const plan = () => planReconcile({ ws, pods, nodeByName: (n) => nodes.get(n), workloadReplicas: PODS, latestVersion: HASH, now: clock.now(), writeDeletionCost: true });
    plan();
    const runs = 5;
    const planStart = performance.now();
    let patches = 0;
    for (let i = 0; i < runs; i++) patches = plan().deletionCostPatches.length;
    console.log(`pure plan (planReconcile): ${((performance.now() - planStart) / runs).toFixed(1)} ms per run (${patches} deletion-cost patches planned)`);

    // ---- caches: sync time and heap per pod ----
    // Measured as (heap with the caches synced) − (heap once they are stopped and dropped): the API
    // server's own copies of the objects live in this process too and are in both figures.
    const client = await bed.newClient({ userAgent: 'workloadspread-manager/bench' });
    const measured = await (async () => {
      const before = heap();
      let probe: ManagerCaches | undefined = new ManagerCaches({ client, namespace: 'workloadspread-system' });
      const t = performance.now();
      probe.start();
      await probe.waitForSync();
      await clock.quiesce();
      const syncMs = performance.now() - t;
      const withCaches = heap();
      // The trimmed pods alone, kept after the caches (stores, indexes, informers) are dropped.
      let kept: unknown[] | undefined = probe.pods.list();
      const cached = kept.length;
      await probe.stop();
      probe = undefined;
      await clock.quiesce();
      const podsOnly = heap();
      kept = undefined;
      const without = heap();
      return { syncMs, cached, bytes: withCaches - without, podBytes: podsOnly - without, growth: withCaches - before };
    })();
    const per = (bytes: number) => (bytes / measured.cached).toFixed(0);
    console.log(
      `manager caches: listed and indexed in ${measured.syncMs.toFixed(0)} ms; they hold ${(measured.bytes / MiB).toFixed(1)} MiB = ${per(measured.bytes)} bytes per cached pod (${measured.cached} pods; target ≤ 1024): ` +
        `${per(measured.podBytes)} bytes the trimmed pod object, ${per(measured.bytes - measured.podBytes)} bytes the store and its indexes; heap growth while synced ${(measured.growth / MiB).toFixed(1)} MiB`,
    );
    const caches = new ManagerCaches({ client, namespace: 'workloadspread-system' });
    caches.start();
    await caches.waitForSync();
    await clock.quiesce();

    // ---- full syncs by the real reconciler ----
    const state = new WorkloadSpreadState();
    const controller = new WorkloadSpreadController({
      caches,
      resolver: new WorkloadResolver({ caches }),
      state,
      statusWriter: new StatusWriter({ client, state }),
      podWriter: new PodWriter(client),
      events: new EngineEventSink(createEventRecorder(client, CONTROLLER_COMPONENT, 'bench')),
      clock,
    });
    for (const label of ['first sync (writes every cost and the status)', 'next sync (nothing changed)']) {
      control.resetCounters();
      const t = performance.now();
      await controller.reconciler.sync(`${NS}/spread`);
      const ms = performance.now() - t;
      await clock.quiesce();
      console.log(`full sync, ${label}: ${ms.toFixed(0)} ms; ${control.requestCount({ resource: 'pods', verb: 'patch' })} pod patches, ${control.requestCount({ resource: 'workloadspreads', subresource: 'status' })} status writes`);
    }
    await caches.stop();
  } finally {
    await bed.close();
  }
}

await main();
