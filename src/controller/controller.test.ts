/**
 * The real controller against the embedded API server on the virtual clock,
 * with pods created as the admission webhook leaves them (marker, node,
 * Running+Ready), so each rule of spec §4 is checked on what is stored:
 * status per §4.4 (percentages at 10 and 5 replicas), deletion costs (§4.5
 * elastic and worked example), adoption of pods created before the
 * WorkloadSpread (§4.3), re-costing on a maxReplicas change without touching
 * pods, creating/deleting bookkeeping expiry with their events, Adaptive
 * rescheduling and recovery (§4.6), versioned statuses and reverse costs
 * during a rollout (§6.3), StatefulSet and Job targets, D9 (no write when
 * nothing changed), a custom workload through the whitelist edited at
 * runtime, the metrics hooks, and convergence after a watch cut with
 * compaction and after status-write conflicts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_CONFIGMAP_NAME, MANAGED_LABEL, MANAGED_LABEL_VALUE, MATCHED_WORKLOADSPREAD_ANNOTATION, POD_DELETION_COST_ANNOTATION, WHITELIST_CONFIGMAP_KEY } from '../api/keys.ts';
import type { Subset, WorkloadSpread } from '../api/workloadspread.ts';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { generateServingCertificate } from '../client/loopback-certificates.ts';
import { formatTime } from '../k8s/time.ts';
import type { KubeObject } from '../k8s/types.ts';
import { createNamespace, createObject, customWorkloadCrd, startKubeTestBed, T0, whitelistJson, workloadSpread } from '../testing/kube-bed.ts';
import type { ClientTestBed } from '../testing/client-test-bed.ts';
import { settleUntil } from '../testing/eventually.ts';
import { POD_EVENT_BATCH_MS, POD_EVENT_MAX_WAIT_MS, type ControllerMetrics } from './controller.ts';
import { REQUEUE_MARGIN_MS, STATUS_HOLD_MS } from './reconciler.ts';
import { costs, createPod, deploymentObject, eventNotes, getWs, listPods, replicaSetObject, startController, subsetSummary, type RunningController } from '../testing/controller-bed.ts';

let clock: VirtualClock;
let bed: ClientTestBed;

before(async () => {
  clock = new VirtualClock(T0);
  bed = await startKubeTestBed(clock, generateServingCertificate());
});
after(() => bed.close());

async function withController(ns: string, fn: (c: RunningController) => Promise<void>, options: { recoverySeconds?: number; metrics?: ControllerMetrics } = {}): Promise<void> {
  // WS_DEBUG=1 prints the controller's log with virtual timestamps.
  const debug = process.env['WS_DEBUG'] === '1';
  const line = (lvl: string) => (f: object, m: string) => console.error(`${lvl} ${clock.now() - T0} ${m} ${JSON.stringify(f)}`);
  const log = { debug: line('D'), info: line('I'), warn: line('W'), error: line('E') };
  const c = await startController(bed.client, { namespace: ns, ...options, ...(debug ? { log } : {}) });
  try {
    await fn(c);
  } catch (err) {
    if (debug) console.error('TEST FAILED', err instanceof Error ? err.message : String(err));
    throw err;
  } finally {
    await c.stop();
  }
}

async function deployment(ns: string, name: string, replicas: number, hash = 'h1'): Promise<{ d: KubeObject; rs: KubeObject }> {
  const d = await createObject(bed, deploymentObject(ns, name, replicas));
  const rs = await createObject(bed, replicaSetObject(ns, d, hash, replicas));
  return { d, rs };
}

async function scaleDeployment(ns: string, name: string, replicas: number): Promise<void> {
  const r = await bed.server.control.patch('apps/v1', 'Deployment', ns, name, 'application/merge-patch+json', { spec: { replicas } });
  assert.ok(r.ok);
}

async function place(ns: string, rs: KubeObject, ws: string, counts: Record<string, number>, prefix = 'p'): Promise<void> {
  let i = 0;
  for (const [subset, n] of Object.entries(counts)) {
    for (let k = 0; k < n; k++) await createPod(bed, clock, ns, { name: `${prefix}-${String(i++).padStart(2, '0')}`, owner: rs, ws, subset, node: `node-${subset}` });
  }
}

const subsets = (...specs: [string, number | string | undefined][]): Subset[] => specs.map(([name, max]) => (max === undefined ? { name } : { name, maxReplicas: max }));

describe('status (spec §4.4)', () => {
  test('percentages 20/30/50 at 10 replicas, then at 5', async () => {
    const ns = await createNamespace(bed);
    await withController(ns, async () => {
      const { rs } = await deployment(ns, 'web', 10);
      await createObject(bed, workloadSpread(ns, 'ws', subsets(['a', '20%'], ['b', '30%'], ['c', '50%'])));
      await place(ns, rs, 'ws', { a: 2, b: 3, c: 5 });
      await settleUntil(clock, () => assert.deepEqual(subsetSummary(getWs(bed, ns, 'ws')), ['a 2/0', 'b 3/0', 'c 5/0']));
      const ws = getWs(bed, ns, 'ws');
      assert.equal(ws.status?.observedGeneration, ws.metadata.generation);
      assert.deepEqual(Object.keys(ws.status?.versionedSubsetStatuses ?? {}), ['h1'], 'one versioned status per pod-template-hash');

      // At 5 replicas the limits are ceil(1)/ceil(1.5)/ceil(2.5) = 1/2/3.
      await scaleDeployment(ns, 'web', 5);
      await settleUntil(clock, () => assert.deepEqual(subsetSummary(getWs(bed, ns, 'ws')), ['a 2/0', 'b 3/0', 'c 5/0']));
      for (const name of ['p-01', 'p-04', 'p-07', 'p-08', 'p-09']) await bed.server.control.delete('v1', 'Pod', ns, name);
      await settleUntil(clock, () => assert.deepEqual(subsetSummary(getWs(bed, ns, 'ws')), ['a 1/0', 'b 2/0', 'c 2/1']));
    });
  });

  test('a WorkloadSpread whose workload does not exist yet gets a status with 0 replicas', async () => {
    const ns = await createNamespace(bed);
    await withController(ns, async () => {
      await createObject(bed, workloadSpread(ns, 'early', subsets(['a', 2], ['b', undefined]), { name: 'later' }));
      await settleUntil(clock, () => assert.deepEqual(subsetSummary(getWs(bed, ns, 'early')), ['a 0/2', 'b 0/-1']));
    });
  });

  test('a sync whose signal is aborted (the controller is stopping) writes nothing', async () => {
    const ns = await createNamespace(bed);
    await withController(ns, async (c) => {
      // The loops stop (as on a lost lease); the caches keep running, and the reconciler is driven by hand.
      await c.controller.stop();
      const { rs } = await deployment(ns, 'web', 2);
      await createObject(bed, workloadSpread(ns, 'ws', subsets(['a', 1], ['b', undefined])));
      await place(ns, rs, 'ws', { a: 1, b: 1 });
      await clock.settle();
      const stopping = new AbortController();
      stopping.abort();
      await assert.rejects(c.controller.reconciler.sync(`${ns}/ws`, 'aborted', stopping.signal), (err: unknown) => err instanceof Error && err.name === 'AbortError');
      assert.equal(getWs(bed, ns, 'ws').status, undefined, 'nothing was written');
      await c.controller.reconciler.sync(`${ns}/ws`, 'running');
      assert.deepEqual(subsetSummary(getWs(bed, ns, 'ws')), ['a 1/0', 'b 1/-1'], 'the same sync, not aborted, writes the status');
    });
  });

  test('the loop hands its signal to the sync: a sync under way when the controller stops writes nothing more', async () => {
    const ns = await createNamespace(bed);
    await withController(ns, async (c) => {
      const { rs } = await deployment(ns, 'web', 2);
      await place(ns, rs, 'ws', { a: 1, b: 1 });
      await clock.settle();
      // The first sync's deletion-cost patches wait on the server; the controller stops (a lost lease) meanwhile.
      const slow = bed.server.control.injectFault({ resource: 'pods', verb: 'patch', delayMs: 10_000 });
      await createObject(bed, workloadSpread(ns, 'ws', subsets(['a', 1], ['b', undefined])));
      await clock.quiesce();
      assert.ok(slow.hits > 0, 'the sync is waiting on a pod patch');
      const stopping = c.controller.stop();
      await clock.advance(10_000);
      await stopping;
      slow.clear();
      await clock.settle();
      assert.equal(getWs(bed, ns, 'ws').status, undefined, 'no status written after the stop');
    });
  });

  test('D9: a sync that changes nothing writes nothing', async () => {
    const ns = await createNamespace(bed);
    await withController(ns, async (c) => {
      const { rs } = await deployment(ns, 'web', 2);
      await createObject(bed, workloadSpread(ns, 'ws', subsets(['a', 1], ['b', undefined])));
      await place(ns, rs, 'ws', { a: 1, b: 1 });
      await settleUntil(clock, () => assert.deepEqual(subsetSummary(getWs(bed, ns, 'ws')), ['a 1/0', 'b 1/-1']));
      await clock.settle();
      bed.server.control.resetCounters();
      c.controller.enqueueAll();
      c.controller.enqueueAll();
      await clock.quiesce();
      assert.equal(bed.server.control.requestCount({ resource: 'workloadspreads', subresource: 'status' }), 0);
      assert.equal(bed.server.control.requestCount({ resource: 'pods', verb: 'patch' }), 0, 'costs already in place');
    });
  });
});

describe('D25: a change of the status alone waits out the batch period', () => {
  test('the controller does not sync on its own write; a status someone else wrote is mended POD_EVENT_BATCH_MS later; a spec change syncs at once', async () => {
    const ns = await createNamespace(bed);
    let syncs = 0;
    await withController(
      ns,
      async () => {
        const { rs } = await deployment(ns, 'web', 3);
        await createObject(bed, workloadSpread(ns, 'ws', subsets(['a', 1], ['b', undefined])));
        await place(ns, rs, 'ws', { a: 1, b: 2 });
        await settleUntil(clock, () => assert.deepEqual(subsetSummary(getWs(bed, ns, 'ws')), ['a 1/0', 'b 2/-1']));
        await clock.settle();

        // Another writer (a stale replica, a hand edit) says subset a has room again.
        syncs = 0;
        const ws = getWs(bed, ns, 'ws');
        const roomInA = (missing: number) => (ws.status?.versionedSubsetStatuses?.['h1'] ?? []).map((s) => (s.name === 'a' ? { ...s, missingReplicas: missing } : s));
        const wrong = { ...ws.status, versionedSubsetStatuses: { h1: roomInA(1) } };
        const r = await bed.server.control.patch('apps.kruise.io/v1alpha1', 'WorkloadSpread', ns, 'ws', 'application/merge-patch+json', { status: wrong }, { subresource: 'status' });
        assert.ok(r.ok);
        await clock.quiesce();
        assert.equal(syncs, 0, 'a status-only change does not sync at once');
        assert.deepEqual(getWs(bed, ns, 'ws').status?.versionedSubsetStatuses?.['h1'], roomInA(1));
        await clock.advance(POD_EVENT_BATCH_MS);
        await clock.quiesce();
        assert.deepEqual(getWs(bed, ns, 'ws').status?.versionedSubsetStatuses?.['h1'], roomInA(0), 'mended after the batch period');
        const afterMend = syncs;
        assert.equal(afterMend, 1, 'one sync mended it');
        await clock.advance(POD_EVENT_BATCH_MS * 5);
        await clock.quiesce();
        assert.equal(syncs, afterMend, 'its own write brings no sync');

        // A spec change (a limit raised) is not a status change: it syncs at once.
        syncs = 0;
        const raised = await bed.server.control.patch('apps.kruise.io/v1alpha1', 'WorkloadSpread', ns, 'ws', 'application/merge-patch+json', { spec: { subsets: subsets(['a', 2], ['b', undefined]) } });
        assert.ok(raised.ok);
        await clock.quiesce();
        assert.ok(syncs >= 1, 'synced without waiting');
        assert.deepEqual(subsetSummary(getWs(bed, ns, 'ws')), ['a 1/1', 'b 2/-1']);
      },
      { metrics: { reconcile: () => void syncs++ } },
    );
  });
});

describe('D25: a burst of pod events waits for a pause, at most POD_EVENT_MAX_WAIT_MS', () => {
  test('events every half second sync once per POD_EVENT_MAX_WAIT_MS, then POD_EVENT_BATCH_MS after the last; a lone event after POD_EVENT_BATCH_MS', async () => {
    const ns = await createNamespace(bed);
    const syncedAt: number[] = [];
    await withController(
      ns,
      async () => {
        const { rs } = await deployment(ns, 'web', 20);
        await createObject(bed, workloadSpread(ns, 'ws', subsets(['a', 10], ['b', undefined])));
        await settleUntil(clock, () => assert.ok(getWs(bed, ns, 'ws').status !== undefined));
        await clock.settle();
        syncedAt.length = 0;
        const start = clock.now();
        // 16 pods, one every 500 ms: 7.5 s of events, never a pause of POD_EVENT_BATCH_MS.
        for (let i = 0; i < 16; i++) {
          await createPod(bed, clock, ns, { name: `p-${String(i).padStart(2, '0')}`, owner: rs, ws: 'ws', subset: i % 2 === 0 ? 'a' : 'b', node: i % 2 === 0 ? 'node-a' : 'node-b' });
          await clock.quiesce();
          await clock.advance(500);
        }
        const lastEvent = start + 15 * 500;
        await clock.advance(POD_EVENT_BATCH_MS + 100);
        await clock.quiesce();
        const offsets = syncedAt.map((t) => t - start);
        assert.ok(offsets.length >= 2 && offsets.length <= 3, `a sync per max wait and one after the pause, not one a second: ${offsets.join(', ')}`);
        assert.equal(offsets[0], POD_EVENT_MAX_WAIT_MS, 'the first sync comes the max wait after the first event');
        assert.equal(syncedAt.at(-1), lastEvent + POD_EVENT_BATCH_MS, 'the last one the batch period after the last event');
        assert.deepEqual(subsetSummary(getWs(bed, ns, 'ws')), ['a 8/2', 'b 8/-1'], 'and it saw every pod');

        // A lone event, after a pause, syncs POD_EVENT_BATCH_MS after it.
        await clock.advance(10_000);
        await clock.settle();
        syncedAt.length = 0;
        const lone = clock.now();
        await createPod(bed, clock, ns, { name: 'p-16', owner: rs, ws: 'ws', subset: 'a', node: 'node-a' });
        await clock.quiesce();
        await clock.advance(POD_EVENT_BATCH_MS + 100);
        await clock.quiesce();
        assert.deepEqual(syncedAt.map((t) => t - lone), [POD_EVENT_BATCH_MS]);
        assert.deepEqual(subsetSummary(getWs(bed, ns, 'ws')), ['a 9/1', 'b 8/-1']);
      },
      { metrics: { reconcile: () => void syncedAt.push(clock.now()) } },
    );
  });
});

describe('status writes admission does not need are held back (issue 13)', () => {
  test('pods turning Ready change only display fields: held up to STATUS_HOLD_MS and written once; a change of room goes out at once', async () => {
    const ns = await createNamespace(bed);
    await withController(ns, async () => {
      const { rs } = await deployment(ns, 'web', 3);
      await createObject(bed, workloadSpread(ns, 'ws', subsets(['a', 1], ['b', undefined])));
      for (const [name, subset] of [['p-0', 'a'], ['p-1', 'b'], ['p-2', 'b']] as const) {
        await createPod(bed, clock, ns, { name, owner: rs, ws: 'ws', subset, node: `node-${subset}`, readyAt: 'pending' });
      }
      await settleUntil(clock, () => assert.deepEqual(subsetSummary(getWs(bed, ns, 'ws')), ['a 1/0', 'b 2/-1']));
      await clock.settle();
      assert.equal(getWs(bed, ns, 'ws').status?.ready, '0/3');
      const writes = () => bed.server.control.requestCount({ resource: 'workloadspreads', subresource: 'status' });
      bed.server.control.resetCounters();
      const ready = async (name: string) => {
        const status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: formatTime(clock.now()) }, { type: 'PodScheduled', status: 'True' }] };
        const r = await bed.server.control.patch('v1', 'Pod', ns, name, 'application/merge-patch+json', { status }, { subresource: 'status' });
        assert.ok(r.ok);
        await clock.quiesce();
      };
      await ready('p-0');
      await clock.advance(2_000);
      await ready('p-1');
      await clock.advance(2_000);
      await ready('p-2');
      assert.equal(writes(), 0, 'nothing admission reads changed: held back');
      assert.equal(getWs(bed, ns, 'ws').status?.ready, '0/3');
      // The first readiness change reached the WorkloadSpread POD_EVENT_BATCH_MS after it happened; the hold counts from that sync.
      await clock.advance(POD_EVENT_BATCH_MS + STATUS_HOLD_MS - 4_000 - 1);
      await clock.quiesce();
      assert.equal(writes(), 0, 'still held just before STATUS_HOLD_MS');
      await clock.advance(1 + REQUEUE_MARGIN_MS);
      await clock.quiesce();
      assert.equal(writes(), 1, 'one write, STATUS_HOLD_MS after the first held change');
      assert.equal(getWs(bed, ns, 'ws').status?.ready, '3/3');

      // Room changes (a limit raised): written without waiting.
      const ws = getWs(bed, ns, 'ws');
      const r = await bed.server.control.patch('apps.kruise.io/v1alpha1', 'WorkloadSpread', ns, 'ws', 'application/merge-patch+json', { spec: { subsets: subsets(['a', 2], ['b', undefined]) } });
      assert.ok(r.ok);
      await clock.quiesce();
      assert.equal(writes(), 2);
      assert.deepEqual(subsetSummary(getWs(bed, ns, 'ws')), ['a 1/1', 'b 2/-1']);
      assert.notEqual(getWs(bed, ns, 'ws').status?.observedGeneration, ws.status?.observedGeneration);
    });
  });
});

describe('deletion cost (spec §4.5)', () => {
  test('elastic: a (max 2) then b (unlimited): 200 for a, 100 for b; surplus in a gets -100', async () => {
    const ns = await createNamespace(bed);
    await withController(ns, async () => {
      const { rs } = await deployment(ns, 'web', 6);
      await createObject(bed, workloadSpread(ns, 'ws', subsets(['a', 2], ['b', undefined])));
      await place(ns, rs, 'ws', { a: 2, b: 4 });
      await settleUntil(clock, () => assert.deepEqual(costs(bed, ns), { 'p-00': '200', 'p-01': '200', 'p-02': '100', 'p-03': '100', 'p-04': '100', 'p-05': '100' }));
      // A manual over-placement in a (3 > 2): the least valuable pod of a (the most recently ready) is surplus.
      await createPod(bed, clock, ns, { name: 'p-06', owner: rs, ws: 'ws', subset: 'a', node: 'node-a', readyAt: T0 + 3_600_000 });
      await settleUntil(clock, () => assert.equal(costs(bed, ns)['p-06'], '-100'));
      assert.equal(costs(bed, ns)['p-00'], '200');
    });
  });

  test('the worked example: a(10) b(10) c(nil) with 20 pods each', async () => {
    const ns = await createNamespace(bed);
    await withController(ns, async () => {
      const { rs } = await deployment(ns, 'web', 60);
      await createObject(bed, workloadSpread(ns, 'ws', subsets(['a', 10], ['b', 10], ['c', undefined])));
      let i = 0;
      for (const subset of ['a', 'b', 'c']) {
        for (let k = 0; k < 20; k++) {
          // Within a subset, pods 10..19 became ready later: they are the less valuable ones.
          await createPod(bed, clock, ns, { name: `${subset}-${String(k).padStart(2, '0')}`, owner: rs, ws: 'ws', subset, node: `node-${subset}`, readyAt: T0 + k * 1000 });
          i++;
        }
      }
      assert.equal(i, 60);
      const expected: Record<string, string> = {};
      for (let k = 0; k < 20; k++) {
        const n = String(k).padStart(2, '0');
        expected[`a-${n}`] = k < 10 ? '300' : '-100';
        expected[`b-${n}`] = k < 10 ? '200' : '-200';
        expected[`c-${n}`] = '100';
      }
      await settleUntil(clock, () => assert.deepEqual(costs(bed, ns), expected));
    });
  });

  test('a maxReplicas change re-costs the same pods (none recreated)', async () => {
    const ns = await createNamespace(bed);
    await withController(ns, async () => {
      const { rs } = await deployment(ns, 'web', 4);
      const ws = await createObject(bed, workloadSpread(ns, 'ws', subsets(['a', 2], ['b', undefined])));
      await place(ns, rs, 'ws', { a: 2, b: 2 });
      await settleUntil(clock, () => assert.deepEqual(Object.values(costs(bed, ns)), ['200', '200', '100', '100']));
      const uids = listPods(bed, ns).map((p) => p.metadata.uid);
      const spec = structuredClone((ws as unknown as WorkloadSpread).spec);
      spec.subsets[0]!.maxReplicas = 1;
      const r = await bed.server.control.patch('apps.kruise.io/v1alpha1', 'WorkloadSpread', ns, 'ws', 'application/merge-patch+json', { spec: { subsets: spec.subsets } });
      assert.ok(r.ok);
      await settleUntil(clock, () => assert.deepEqual(Object.values(costs(bed, ns)).sort(), ['-100', '100', '100', '200']));
      assert.deepEqual(listPods(bed, ns).map((p) => p.metadata.uid), uids, 'same pods');
      assert.deepEqual(subsetSummary(getWs(bed, ns, 'ws')), ['a 2/0', 'b 2/-1']);
    });
  });
});

describe('D21: pods born with their cost and the managed label', () => {
  test('a pod the webhook placed (label and cost at birth) is not written; one placed without the label gets it, with its cost, in one patch', async () => {
    const ns = await createNamespace(bed);
    await withController(ns, async () => {
      const { rs } = await deployment(ns, 'web', 5);
      await createObject(bed, workloadSpread(ns, 'ws', subsets(['a', 2], ['b', undefined])));
      const born = (cost: string) => ({ labels: { [MANAGED_LABEL]: MANAGED_LABEL_VALUE }, annotations: { [POD_DELETION_COST_ANNOTATION]: cost } });
      const patches = () => bed.server.control.requestCount({ resource: 'pods', verb: 'patch', subresource: '' });
      const before = patches();
      await createPod(bed, clock, ns, { name: 'p-00', owner: rs, ws: 'ws', subset: 'a', node: 'node-a', ...born('200') });
      await createPod(bed, clock, ns, { name: 'p-01', owner: rs, ws: 'ws', subset: 'a', node: 'node-a', ...born('200') });
      await createPod(bed, clock, ns, { name: 'p-02', owner: rs, ws: 'ws', subset: 'b', node: 'node-b', ...born('100') });
      // Placed by an older release: a cost but no label; and one with neither.
      await createPod(bed, clock, ns, { name: 'p-03', owner: rs, ws: 'ws', subset: 'b', node: 'node-b', annotations: { [POD_DELETION_COST_ANNOTATION]: '100' } });
      await createPod(bed, clock, ns, { name: 'p-04', owner: rs, ws: 'ws', subset: 'b', node: 'node-b' });
      await settleUntil(clock, () => {
        const pods = listPods(bed, ns);
        assert.ok(pods.every((p) => p.metadata.labels?.[MANAGED_LABEL] === MANAGED_LABEL_VALUE), 'every placed pod carries the label');
        assert.deepEqual(costs(bed, ns), { 'p-00': '200', 'p-01': '200', 'p-02': '100', 'p-03': '100', 'p-04': '100' });
        assert.deepEqual(subsetSummary(getWs(bed, ns, 'ws')), ['a 2/0', 'b 3/-1']);
      });
      await clock.advance(60_000);
      assert.equal(patches() - before, 2, 'one metadata patch each for p-03 and p-04, none for the pods born with both');
    });
  });
});

describe('adoption (spec §4.3)', () => {
  test('pods created before the WorkloadSpread are adopted by node, with the patch metadata and a marker without uid', async () => {
    const ns = await createNamespace(bed);
    await createObject(bed, { apiVersion: 'v1', kind: 'Node', metadata: { name: `${ns}-za`, labels: { zone: 'a' } } });
    await createObject(bed, { apiVersion: 'v1', kind: 'Node', metadata: { name: `${ns}-zb`, labels: { zone: 'b' } } });
    await withController(ns, async () => {
      const { rs } = await deployment(ns, 'web', 3);
      await createPod(bed, clock, ns, { name: 'old-1', owner: rs, node: `${ns}-za` });
      await createPod(bed, clock, ns, { name: 'old-2', owner: rs, node: `${ns}-zb` });
      await createPod(bed, clock, ns, { name: 'old-3', owner: rs, readyAt: 'pending' });
      const zone = (z: string) => ({ matchExpressions: [{ key: 'zone', operator: 'In', values: [z] }] });
      await createObject(bed, workloadSpread(ns, 'ws', [
        { name: 'za', requiredNodeSelectorTerm: zone('a'), maxReplicas: 1, patch: { metadata: { labels: { spread: 'za' }, annotations: { note: 'from-za' } } } },
        { name: 'zb', requiredNodeSelectorTerm: zone('b'), patch: { metadata: { labels: { spread: 'zb' } } } },
      ]));
      await settleUntil(clock, () => {
        const pods = Object.fromEntries(listPods(bed, ns).map((p) => [p.metadata.name, p]));
        assert.equal(pods['old-1']?.metadata.annotations?.[MATCHED_WORKLOADSPREAD_ANNOTATION], '{"name":"ws","subset":"za"}');
        assert.equal(pods['old-1']?.metadata.labels?.['spread'], 'za');
        assert.equal(pods['old-1']?.metadata.annotations?.['note'], 'from-za');
        assert.equal(pods['old-2']?.metadata.annotations?.[MATCHED_WORKLOADSPREAD_ANNOTATION], '{"name":"ws","subset":"zb"}');
        assert.equal(pods['old-3']?.metadata.annotations?.[MATCHED_WORKLOADSPREAD_ANNOTATION], undefined, 'not scheduled: not adopted');
      });
      await settleUntil(clock, () => assert.deepEqual(subsetSummary(getWs(bed, ns, 'ws')), ['za 1/0', 'zb 1/-1']));
      await settleUntil(clock, () => assert.deepEqual(costs(bed, ns), { 'old-1': '200', 'old-2': '100', 'old-3': '-300' }), { maxMs: 60_000 });
    });
  });
});

describe('bookkeeping expiry (spec §4.4)', () => {
  test('a deletingPods entry expires after 15 s with DeletePodFailed; a creatingPods entry after 30 s with CreatePodFailed', async () => {
    const ns = await createNamespace(bed);
    await withController(ns, async () => {
      const { rs } = await deployment(ns, 'web', 2);
      await createObject(bed, workloadSpread(ns, 'ws', subsets(['a', 2], ['b', undefined])));
      await place(ns, rs, 'ws', { a: 2 });
      await settleUntil(clock, () => assert.deepEqual(subsetSummary(getWs(bed, ns, 'ws')), ['a 2/0', 'b 0/-1']));
      // What the webhook writes on an eviction that a PDB then refuses, and on a reservation whose pod never comes.
      const ws = getWs(bed, ns, 'ws');
      const now = formatTime(clock.now());
      const status = structuredClone(ws.status!);
      const a = status.versionedSubsetStatuses!['h1']!.find((s) => s.name === 'a')!;
      a.deletingPods = { 'p-00': now };
      a.creatingPods = { 'never-created': now };
      const written = await bed.server.control.update({ ...ws, status } as unknown as KubeObject, { subresource: 'status' });
      assert.ok(written.ok);
      await settleUntil(clock, () => assert.ok(eventNotes(bed, ns).some((e) => e === `DeletePodFailed: Pod ${ns}/p-00 was expected to be deleted but it wasn't`), 'DeletePodFailed event'));
      assert.ok(clock.now() - T0 >= 15_000);
      await settleUntil(clock, () => assert.ok(eventNotes(bed, ns).some((e) => e === `CreatePodFailed: Pod ${ns}/never-created was expected to be created but it wasn't`), 'CreatePodFailed event'));
      await settleUntil(clock, () => {
        const v = getWs(bed, ns, 'ws').status?.versionedSubsetStatuses?.['h1']?.find((s) => s.name === 'a');
        assert.deepEqual(v?.deletingPods ?? {}, {});
        assert.deepEqual(v?.creatingPods ?? {}, {});
        assert.equal(v?.missingReplicas, 0);
      });
    });
  });
});

describe('Adaptive rescheduling (spec §4.6)', () => {
  test('pods pending past rescheduleCriticalSeconds are deleted; the subset is Schedulable=False, then recovers after the window', async () => {
    const ns = await createNamespace(bed);
    await withController(ns, async () => {
      const { rs } = await deployment(ns, 'web', 3);
      const ws = workloadSpread(ns, 'ws', subsets(['a', 2], ['b', undefined]));
      (ws as unknown as WorkloadSpread).spec.scheduleStrategy = { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 20 } };
      await createObject(bed, ws);
      const start = clock.now();
      await createPod(bed, clock, ns, { name: 'stuck-1', owner: rs, ws: 'ws', subset: 'a', readyAt: 'unschedulable' });
      await createPod(bed, clock, ns, { name: 'fine-1', owner: rs, ws: 'ws', subset: 'b', node: 'n-b' });
      await settleUntil(clock, () => assert.deepEqual(listPods(bed, ns).map((p) => p.metadata.name), ['fine-1']));
      assert.ok(clock.now() - start >= 20_000, 'not before rescheduleCriticalSeconds');
      const condition = () => getWs(bed, ns, 'ws').status?.subsetStatuses?.find((s) => s.name === 'a')?.conditions?.find((x) => x.type === 'Schedulable');
      await settleUntil(clock, () => assert.equal(condition()?.status, 'False'));
      assert.equal(condition()?.reason, 'PodUnschedulable');
      const falseAt = clock.now();
      await settleUntil(clock, () => assert.equal(condition()?.status, 'True'), { maxMs: 400_000 });
      assert.ok(clock.now() - falseAt >= 280_000, 'recovered only after the 300 s window');
      assert.equal(condition()?.reason, 'Sufficient');
      assert.ok(eventNotes(bed, ns).includes(`RecoverSchedulable: Subset a of WorkloadSpread ${ns}/ws is recovered from unschedulable to schedulable`));
    });
  });
});

describe('rollout (spec §6.3)', () => {
  test('versioned statuses per revision; old-revision pods get the reverse costs', async () => {
    const ns = await createNamespace(bed);
    await withController(ns, async () => {
      const d = await createObject(bed, deploymentObject(ns, 'web', 4, 'nginx:2'));
      const oldRs = await createObject(bed, replicaSetObject(ns, d, 'old', 2, 'nginx:1'));
      const newRs = await createObject(bed, replicaSetObject(ns, d, 'new', 2, 'nginx:2'));
      await createObject(bed, workloadSpread(ns, 'ws', subsets(['a', 1], ['b', 1], ['c', undefined])));
      await place(ns, oldRs, 'ws', { a: 1, b: 1 }, 'old');
      await place(ns, newRs, 'ws', { a: 1, b: 1 }, 'new');
      await settleUntil(clock, () => assert.deepEqual(costs(bed, ns), { 'new-00': '300', 'new-01': '200', 'old-00': '100', 'old-01': '200' }));
      const ws = getWs(bed, ns, 'ws');
      assert.deepEqual(Object.keys(ws.status?.versionedSubsetStatuses ?? {}).sort(), ['new', 'old']);
      assert.deepEqual(subsetSummary(ws), ['a 2/0', 'b 2/0', 'c 0/-1'], 'the top level aggregates both revisions');
    });
  });
});

describe('other targets', () => {
  test('a StatefulSet: status, no deletion cost (D7)', async () => {
    const ns = await createNamespace(bed);
    await withController(ns, async () => {
      const sts = await createObject(bed, {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'db', namespace: ns },
        spec: { replicas: 3, serviceName: 'db', selector: { matchLabels: { app: 'db' } }, template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'main', image: 'db' }] } } },
      });
      await createObject(bed, workloadSpread(ns, 'ws', subsets(['a', 2], ['b', undefined]), { kind: 'StatefulSet', name: 'db' }));
      await place(ns, sts, 'ws', { a: 2, b: 1 }, 'db');
      await settleUntil(clock, () => assert.deepEqual(subsetSummary(getWs(bed, ns, 'ws')), ['a 2/0', 'b 1/-1']));
      await clock.settle();
      assert.deepEqual(Object.values(costs(bed, ns)), ['', '', '']);
      // A StatefulSet replica change is watched (the reference forgot): the status follows without any pod event.
      // Scaled to 0, its pods still count until they are gone (no StatefulSet controller deletes them here;
      // the reference would list none and give their slots again — issue 14's soak).
      assert.equal(getWs(bed, ns, 'ws')?.status?.ready, '3/3');
      const r = await bed.server.control.patch('apps/v1', 'StatefulSet', ns, 'db', 'application/merge-patch+json', { spec: { replicas: 0 } });
      assert.ok(r.ok);
      await settleUntil(clock, () => assert.equal(getWs(bed, ns, 'ws')?.status?.ready, '3/0'));
      assert.deepEqual(subsetSummary(getWs(bed, ns, 'ws')), ['a 2/0', 'b 1/-1']);
    });
  });

  test('a Job: replicas are its parallelism, no deletion cost', async () => {
    const ns = await createNamespace(bed);
    await withController(ns, async () => {
      const job = await createObject(bed, {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'batch', namespace: ns },
        spec: { parallelism: 4, template: { metadata: { labels: { job: 'batch' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'x' }] } } },
      });
      await createObject(bed, workloadSpread(ns, 'ws', subsets(['a', '50%'], ['b', '50%']), { apiVersion: 'batch/v1', kind: 'Job', name: 'batch' }));
      const selector = (job['spec'] as { selector?: { matchLabels?: Record<string, string> } }).selector?.matchLabels ?? {};
      for (const [i, subset] of ['a', 'b', 'b'].entries()) await createPod(bed, clock, ns, { name: `j-${i}`, owner: job, ws: 'ws', subset, node: 'n', labels: selector });
      await settleUntil(clock, () => assert.deepEqual(subsetSummary(getWs(bed, ns, 'ws')), ['a 1/1', 'b 2/0']));
      await clock.settle();
      assert.deepEqual(Object.values(costs(bed, ns)), ['', '', '']);
    });
  });
});

describe('faults', () => {
  test('a watch cut with the history compacted mid-scale still converges', async () => {
    const ns = await createNamespace(bed);
    await withController(ns, async () => {
      const { rs } = await deployment(ns, 'web', 8);
      await createObject(bed, workloadSpread(ns, 'ws', subsets(['a', 4], ['b', undefined])));
      await place(ns, rs, 'ws', { a: 2, b: 2 }, 'x');
      await clock.quiesce();
      bed.server.control.cutWatches();
      await place(ns, rs, 'ws', { a: 2, b: 2 }, 'y');
      bed.server.control.compact();
      await settleUntil(clock, () => assert.deepEqual(subsetSummary(getWs(bed, ns, 'ws')), ['a 4/0', 'b 4/-1']));
      await settleUntil(clock, () => assert.deepEqual(Object.values(costs(bed, ns)).sort(), ['100', '100', '100', '100', '200', '200', '200', '200']));
    });
  });

  test('status-write conflicts are retried until the write lands', async () => {
    const ns = await createNamespace(bed);
    await withController(ns, async () => {
      const { rs } = await deployment(ns, 'web', 2);
      const fault = bed.server.control.injectFault({ resource: 'workloadspreads', verb: 'update', subresource: 'status', status: 409, times: 3 });
      await createObject(bed, workloadSpread(ns, 'ws', subsets(['a', 1], ['b', undefined])));
      await place(ns, rs, 'ws', { a: 1, b: 1 });
      await settleUntil(clock, () => assert.deepEqual(subsetSummary(getWs(bed, ns, 'ws')), ['a 1/0', 'b 1/-1']));
      assert.equal(fault.hits, 3);
      fault.clear();
    });
  });
});

describe('custom workloads (D6, spec §5.2)', () => {
  test('a whitelisted custom kind: counted through its scale subresource, and watched once the whitelist names it (edited at runtime)', async () => {
    const ns = await createNamespace(bed, 'custom');
    await createObject(bed, customWorkloadCrd('games.example.com', 'GameSet', 'gamesets'));
    await clock.quiesce();
    await withController(ns, async () => {
      const g = await createObject(bed, { apiVersion: 'games.example.com/v1', kind: 'GameSet', metadata: { name: 'g', namespace: ns }, spec: { replicas: 4 } });
      await createObject(bed, workloadSpread(ns, 'ws', subsets(['a', '50%'], ['b', '50%']), { apiVersion: 'games.example.com/v1', kind: 'GameSet', name: 'g' }));
      for (const [i, subset] of ['a', 'a', 'b', 'b'].entries()) await createPod(bed, clock, ns, { name: `g-${i}`, owner: g, ws: 'ws', subset, node: 'n' });
      // Not whitelisted: the scale subresource still gives the count (4 → 2/2), but GameSet changes are not watched.
      await settleUntil(clock, () => assert.deepEqual(subsetSummary(getWs(bed, ns, 'ws')), ['a 2/0', 'b 2/0']));
      const scaled = await bed.server.control.patch('games.example.com/v1', 'GameSet', ns, 'g', 'application/merge-patch+json', { spec: { replicas: 8 } });
      assert.ok(scaled.ok);
      await clock.quiesce();
      assert.deepEqual(subsetSummary(getWs(bed, ns, 'ws')), ['a 2/0', 'b 2/0'], 'no watch on GameSets yet');

      const wl = whitelistJson([{ Group: 'games.example.com', Version: 'v1', Kind: 'GameSet', replicasPath: 'spec.replicas' }]);
      await createObject(bed, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: DEFAULT_CONFIGMAP_NAME, namespace: ns }, data: { [WHITELIST_CONFIGMAP_KEY]: wl } });
      await settleUntil(clock, () => assert.deepEqual(subsetSummary(getWs(bed, ns, 'ws')), ['a 2/2', 'b 2/2']), { maxMs: 120_000 });
      const again = await bed.server.control.patch('games.example.com/v1', 'GameSet', ns, 'g', 'application/merge-patch+json', { spec: { replicas: 10 } });
      assert.ok(again.ok);
      await clock.quiesce();
      assert.deepEqual(subsetSummary(getWs(bed, ns, 'ws')), ['a 2/3', 'b 2/3'], 'a whitelisted kind is watched: its replica change reconciles at once');
      assert.deepEqual(Object.values(costs(bed, ns)), ['', '', '', ''], 'pods owned by the custom workload itself get no deletion cost (D7)');
    });
  });
});

describe('metrics hooks', () => {
  test('reconciles, errors, duration, workers, queue, pods per subset, and a deleted WorkloadSpread forgotten', async () => {
    const ns = await createNamespace(bed, 'metrics');
    const seen = { reconcile: new Map<string, number>(), errors: 0, times: 0, maxWorkers: 0, adds: 0, retries: 0, pods: new Map<string, number>(), forgotten: [] as string[] };
    const metrics: ControllerMetrics = {
      reconcile: (r) => seen.reconcile.set(r, (seen.reconcile.get(r) ?? 0) + 1),
      reconcileError: () => void seen.errors++,
      reconcileTime: (s) => {
        assert.ok(s >= 0, 'a duration');
        seen.times++;
      },
      activeWorkers: (n) => void (seen.maxWorkers = Math.max(seen.maxWorkers, n)),
      queue: { adds: () => void seen.adds++, retries: () => void seen.retries++ },
      subsets: (n, w, readings) => {
        if (n === ns) for (const r of readings) seen.pods.set(`${w}/${r.subset}`, r.pods);
      },
      forgetWorkloadSpread: (n, w) => void (n === ns && seen.forgotten.push(w)),
    };
    await withController(ns, async () => {
      const { rs } = await deployment(ns, 'web', 3);
      await createObject(bed, workloadSpread(ns, 'ws', subsets(['a', 1], ['b', undefined])));
      await place(ns, rs, 'ws', { a: 1, b: 2 });
      await settleUntil(clock, () => assert.deepEqual(Object.fromEntries(seen.pods), { 'ws/a': 1, 'ws/b': 2 }));
      assert.ok((seen.reconcile.get('success') ?? 0) > 0, 'successful reconciles counted');
      assert.ok(seen.times > 0 && seen.adds > 0 && seen.maxWorkers >= 1, 'durations, queue adds and workers reported');

      const fault = bed.server.control.injectFault({ resource: 'pods', verb: 'patch', status: 500, times: 1 });
      await createPod(bed, clock, ns, { name: 'late', owner: rs, ws: 'ws', subset: 'b', node: 'node-b' });
      await settleUntil(clock, () => assert.equal(costs(bed, ns)['late'], '100'));
      assert.equal(fault.hits, 1);
      assert.ok(seen.errors >= 1 && (seen.reconcile.get('error') ?? 0) >= 1 && seen.retries >= 1, 'the failed sync is counted and retried');
      assert.ok(eventNotes(bed, ns).some((e) => e.startsWith('PatchPodDeletionCostFailed:') && e.includes(`Pod ${ns}/late in subset b`)), 'PatchPodDeletionCostFailed recorded');

      await bed.server.control.delete('apps.kruise.io/v1alpha1', 'WorkloadSpread', ns, 'ws');
      await settleUntil(clock, () => assert.deepEqual(seen.forgotten.includes('ws'), true));
    }, { metrics });
  });
});
