/**
 * The Ready condition as the controller writes it (core/ready-condition.ts
 * decides it): on the embedded API server with the virtual clock, pods
 * created as the webhook leaves them. A change of Ready goes out at once,
 * not after the status hold, so READY never shows True beside stale counts;
 * a sync that saw pod events arrive while it worked does not turn Ready; a
 * duplicate is Stalled.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { WorkloadSpread, WorkloadSpreadCondition } from '../api/workloadspread.ts';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { generateServingCertificate } from '../client/loopback-certificates.ts';
import type { KubeObject } from '../k8s/types.ts';
import { ManagerCaches } from '../kube/caches.ts';
import { CONTROLLER_COMPONENT, createEventRecorder, EngineEventSink } from '../kube/events.ts';
import { PodWriter } from '../kube/pod-writer.ts';
import { StatusWriter } from '../kube/status-writer.ts';
import { WorkloadResolver } from '../kube/workload-resolver.ts';
import { WorkloadSpreadState } from '../kube/ws-state.ts';
import type { ClientTestBed } from '../testing/client-test-bed.ts';
import { createPod, deploymentObject, getWs, replicaSetObject, startController } from '../testing/controller-bed.ts';
import { settleUntil } from '../testing/eventually.ts';
import { createNamespace, createObject, startKubeTestBed, T0, workloadSpread } from '../testing/kube-bed.ts';
import { POD_EVENT_BATCH_MS } from './controller.ts';
import { REQUEUE_MARGIN_MS, Reconciler } from './reconciler.ts';

let clock: VirtualClock;
let bed: ClientTestBed;

before(async () => {
  clock = new VirtualClock(T0);
  bed = await startKubeTestBed(clock, generateServingCertificate());
});
after(() => bed.close());

const condition = (ws: WorkloadSpread, type: string): WorkloadSpreadCondition | undefined => ws.status?.conditions?.find((c) => c.type === type);
const ready = (ws: WorkloadSpread): [string | undefined, string | undefined] => [condition(ws, 'Ready')?.status, condition(ws, 'Ready')?.reason];
const counts = (ws: WorkloadSpread): [number | undefined, number | undefined, number | undefined] => [ws.status?.workloadReplicas, ws.status?.placedReplicas, ws.status?.readyReplicas];

async function deployment(ns: string, replicas: number): Promise<KubeObject> {
  const d = await createObject(bed, deploymentObject(ns, 'web', replicas));
  return createObject(bed, replicaSetObject(ns, d, 'h1', replicas));
}

async function place(ns: string, rs: KubeObject, perSubset: Record<string, number>): Promise<string[]> {
  const names: string[] = [];
  for (const [subset, n] of Object.entries(perSubset)) {
    for (let i = 0; i < n; i++) {
      const name = `web-${subset}-${i}`;
      await createPod(bed, clock, ns, { name, owner: rs, ws: 'ws', subset, node: `node-${subset}` });
      names.push(name);
    }
  }
  return names;
}

describe('the controller writes Ready', () => {
  test('a scale-in: Ready=False (Converging) at once with the new Desired; Ready=True at once when the pods are gone, without waiting for the status hold', async () => {
    const ns = await createNamespace(bed);
    const c = await startController(bed.client, { namespace: ns });
    try {
      const rs = await deployment(ns, 6);
      await createObject(bed, workloadSpread(ns, 'ws', [{ name: 'a', maxReplicas: 3 }, { name: 'b' }]));
      const names = await place(ns, rs, { a: 3, b: 3 });
      await settleUntil(clock, () => assert.deepEqual(ready(getWs(bed, ns, 'ws')), ['True', 'Spread']));
      await clock.settle();
      assert.deepEqual(counts(getWs(bed, ns, 'ws')), [6, 6, 6]);
      const generation = getWs(bed, ns, 'ws').metadata.generation;
      assert.equal(condition(getWs(bed, ns, 'ws'), 'Ready')?.observedGeneration, generation);

      // The workload asks for 4: a workload event syncs at once.
      const scaled = await bed.server.control.patch('apps/v1', 'Deployment', ns, 'web', 'application/merge-patch+json', { spec: { replicas: 4 } });
      assert.ok(scaled.ok);
      await clock.quiesce();
      let ws = getWs(bed, ns, 'ws');
      assert.deepEqual(ready(ws), ['False', 'Converging']);
      assert.deepEqual([condition(ws, 'Reconciling')?.status, condition(ws, 'Stalled')], ['True', undefined]);
      assert.deepEqual(counts(ws), [4, 6, 6], 'the counts beside READY are those of the same write');

      // Two pods go; their events reach the WorkloadSpread after the pod-event batch, and Ready=True is written then.
      for (const name of [names[5], names[4]]) assert.ok((await bed.server.control.delete('v1', 'Pod', ns, name ?? '')).ok);
      await clock.advance(POD_EVENT_BATCH_MS + REQUEUE_MARGIN_MS);
      await clock.quiesce();
      ws = getWs(bed, ns, 'ws');
      assert.deepEqual(ready(ws), ['True', 'Spread'], 'not held back');
      assert.deepEqual(counts(ws), [4, 4, 4]);
      assert.equal(condition(ws, 'Reconciling'), undefined);
    } finally {
      await c.stop();
    }
  });

  test('a duplicate is Ready=False, Stalled=True (DuplicateTarget); it turns Ready once the first one is deleted', async () => {
    const ns = await createNamespace(bed);
    const c = await startController(bed.client, { namespace: ns });
    try {
      const rs = await deployment(ns, 1);
      await createObject(bed, workloadSpread(ns, 'ws', [{ name: 'a' }]));
      await place(ns, rs, { a: 1 });
      await clock.advance(2_000);
      await createObject(bed, workloadSpread(ns, 'zz-second', [{ name: 'a' }]));
      await settleUntil(clock, () => {
        const second = getWs(bed, ns, 'zz-second');
        assert.deepEqual(ready(second), ['False', 'DuplicateTarget']);
        assert.deepEqual([condition(second, 'Stalled')?.status, condition(second, 'DuplicateTarget')?.status], ['True', 'True']);
      });
      assert.deepEqual(ready(getWs(bed, ns, 'ws')), ['True', 'Spread']);
      assert.ok((await bed.server.control.delete('apps.kruise.io/v1alpha1', 'WorkloadSpread', ns, 'ws')).ok);
      // Its pod keeps the first one's marker: the second adopts nothing it cannot, so it is Ready once it counts its pods.
      await settleUntil(clock, () => assert.equal(condition(getWs(bed, ns, 'zz-second'), 'DuplicateTarget'), undefined));
      assert.equal(condition(getWs(bed, ns, 'zz-second'), 'Stalled')?.reason, 'PodsOutsideSubsets', 'the first one’s pod is in none of its subsets');
    } finally {
      await c.stop();
    }
  });
});

describe('the reconciler and pod events', () => {
  test('a sync during which pod events arrived does not turn Ready; the next one, with no new events, does; a Ready one stays Ready', async () => {
    const ns = await createNamespace(bed);
    const caches = new ManagerCaches({ client: bed.client, namespace: ns, freeze: true });
    caches.start();
    try {
      await caches.waitForSync();
      const state = new WorkloadSpreadState();
      let events = 0;
      let eventsDuringSync = 0;
      const reconciler = new Reconciler({
        caches,
        resolver: new WorkloadResolver({ caches }),
        state,
        statusWriter: new StatusWriter({ client: bed.client, state }),
        podWriter: new PodWriter(bed.client),
        events: new EngineEventSink(createEventRecorder(bed.client, CONTROLLER_COMPONENT, 'test-0')),
        clock,
        statusHoldMs: 0,
        // Each read after the first of a sync sees `eventsDuringSync` more events: they arrived while it worked.
        podEvents: () => {
          const seen = events;
          events += eventsDuringSync;
          return seen;
        },
      });
      const rs = await deployment(ns, 2);
      await createObject(bed, workloadSpread(ns, 'ws', [{ name: 'a' }]));
      await place(ns, rs, { a: 2 });
      await settleUntil(clock, () => assert.equal(caches.listWorkloadSpreads(ns).length, 1));
      await settleUntil(clock, () => assert.equal(caches.listPods(ns).length, 2));

      eventsDuringSync = 1;
      await reconciler.sync(`${ns}/ws`);
      await settleUntil(clock, () => assert.deepEqual(ready(getWs(bed, ns, 'ws')), ['False', 'PodsChanging']));

      eventsDuringSync = 0;
      await reconciler.sync(`${ns}/ws`);
      await settleUntil(clock, () => assert.deepEqual(ready(getWs(bed, ns, 'ws')), ['True', 'Spread']));

      eventsDuringSync = 1;
      await reconciler.sync(`${ns}/ws`);
      await clock.quiesce();
      assert.deepEqual(ready(getWs(bed, ns, 'ws')), ['True', 'Spread']);
    } finally {
      await caches.stop();
    }
  });
});
