/**
 * D21 as a property: pods admitted through `decidePodCreate` during a
 * scale-out carry the deletion cost the controller computes for them, so a
 * reconcile at any point of the scale-out — between steps or in the middle of
 * one, with some admitted pods not yet seen — writes no cost. Random valid
 * specs (percentages with unset subsets, counts, minReplicas), scale-outs in
 * up to four steps, and pods that reach the view a few admissions late
 * (counted meanwhile from the recent placements, as the webhook does).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { POD_DELETION_COST_ANNOTATION } from '../api/keys.ts';
import { EMPTY_WHITELIST } from '../api/whitelist.ts';
import { validateWorkloadSpread } from '../api/validation.ts';
import type { Subset, WorkloadSpread } from '../api/workloadspread.ts';
import { lookupOf } from '../k8s/lookup.ts';
import { formatTime } from '../k8s/time.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { specArb } from '../testing/spec-arbitraries.ts';
import { decidePodCreate } from './admission.ts';
import type { ClusterView, RecentPlacement } from './cluster-view.ts';
import { readMarker } from './marker.ts';
import { tallyPods } from './placed-count.ts';
import { planReconcile } from './reconcile-plan.ts';

const T0 = Date.UTC(2026, 0, 1);
const V = 'h1';

interface World {
  ws: WorkloadSpread;
  replicas: number;
  /** Pods the view (the cache) shows. */
  shown: Pod[];
  /** Admitted, not shown yet, with the admission index after which they appear. */
  inFlight: { pod: Pod; at: number }[];
  recent: RecentPlacement[];
}

function viewOf(w: World): ClusterView {
  const rs: KubeObject = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web', namespace: 'ns', uid: 'rs', labels: { 'pod-template-hash': V } }, spec: { replicas: w.replicas } };
  return {
    whitelist: () => EMPTY_WHITELIST,
    workloadSpreads: (ns) => (ns === 'ns' ? [w.ws] : []),
    workloadSpread: (ns, name) => lookupOf(ns === 'ns' && name === 'ws' ? w.ws : undefined),
    object: (ns, ref) => lookupOf(ns === 'ns' && ref.kind === 'ReplicaSet' && ref.name === 'web' ? rs : undefined),
    pod: (ns, name) => lookupOf(w.shown.find((p) => p.metadata.name === name)),
    nodes: () => [],
    podsOnNode: () => [],
    requestedOnNode: () => ({ cpuMilli: 0, memory: 0, pods: 0 }),
    placedTally: (ns, wsName, version, options) => tallyPods(w.shown, ns, wsName, version, options),
    recentPlacements: () => w.recent,
  };
}

/** A reconcile as the controller runs it on what the view shows; returns the cost writes it would make. */
function reconcile(w: World, now: number): { pod: string; cost: number }[] {
  const plan = planReconcile({ ws: w.ws, pods: w.shown, nodeByName: () => undefined, workloadReplicas: w.replicas, latestVersion: V, now, writeDeletionCost: true });
  assert.equal(plan.error, undefined);
  w.ws = { ...w.ws, status: plan.status };
  return plan.deletionCostPatches;
}

function admitOne(w: World, i: number, now: number): void {
  const pod: Pod = {
    metadata: { generateName: 'web-', namespace: 'ns', labels: { 'pod-template-hash': V }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs', controller: true }] },
    spec: { containers: [{ name: 'main' }] },
  };
  let uid = 0;
  const input = { view: viewOf(w), pod, namespace: 'ns', now, newUid: () => `u${i}-${++uid}` };
  let d = decidePodCreate(input);
  if (d.kind === 'commit') d = decidePodCreate({ ...input, current: { ws: w.ws } });
  assert.ok(d.kind === 'placed' || d.kind === 'unplaced', `admission ${i}: ${d.kind}`);
  const created: Pod = structuredClone(d.kind === 'placed' ? d.pod : (d.pod ?? pod));
  if (d.kind === 'placed') {
    if (d.status !== undefined) w.ws = { ...w.ws, status: d.status };
    if (d.placement !== undefined) w.recent.push(d.placement);
  }
  // The API server names the pod and it starts at once (least valuable: the newest, ready last).
  const at = formatTime(now);
  created.metadata = { ...created.metadata, name: `web-${String(i).padStart(4, '0')}`, uid: `pod-${i}`, creationTimestamp: at };
  delete created.metadata.generateName;
  created.spec = { ...created.spec, nodeName: `node-${i}` };
  created.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: at }] };
  w.inFlight.push({ pod: created, at: i });
}

describe('D21 (property): a pod is born with the cost the controller gives it', () => {
  test('random specs, scale-outs in steps, reconciles in between and mid-step, pods seen late: no cost write', () => {
    fc.assert(
      fc.property(
        specArb,
        fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 4 }),
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 8, maxLength: 8 }),
        fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
        (subsets: Subset[], growth, lags, midSyncs) => {
          const ws: WorkloadSpread = { metadata: { name: 'ws', namespace: 'ns', uid: 'ws-uid' }, spec: { targetRef: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web' }, subsets } };
          fc.pre(validateWorkloadSpread(ws).length === 0);
          const w: World = { ws, replicas: 0, shown: [], inFlight: [], recent: [] };
          let i = 0;
          let now = T0;
          const tick = (): void => {
            // Pods appear in the view `lag` admissions after theirs.
            const lag = lags[i % lags.length] ?? 0;
            const ready = w.inFlight.filter((f) => f.at + lag <= i);
            w.inFlight = w.inFlight.filter((f) => f.at + lag > i);
            w.shown.push(...ready.map((f) => f.pod));
          };
          for (const [step, add] of growth.entries()) {
            w.replicas += add;
            now += 1000;
            assert.deepEqual(reconcile(w, now), [], `no cost write when the workload grows to ${w.replicas}`);
            while (i < w.replicas) {
              now += 1000;
              admitOne(w, i, now);
              i++;
              tick();
              if ((midSyncs[(i + step) % midSyncs.length] ?? false) && i % 3 === 0) {
                assert.deepEqual(reconcile(w, now), [], `no cost write mid-scale-out at ${i} pods (${JSON.stringify(subsets)})`);
              }
            }
          }
          w.shown.push(...w.inFlight.map((f) => f.pod));
          w.inFlight = [];
          now += 1000;
          const writes = reconcile(w, now);
          assert.deepEqual(writes, [], `no cost write once every pod is seen (${JSON.stringify(subsets)}, growth ${JSON.stringify(growth)})`);
          // And every pod does carry a cost (an absent annotation reads as 0, which the controller would not write).
          for (const p of w.shown) assert.match(p.metadata.annotations?.[POD_DELETION_COST_ANNOTATION] ?? '0', /^-?\d+$/);
        },
      ),
      { numRuns: Number(process.env['WS_D21_RUNS'] ?? 200), ...(process.env['WS_D21_SEED'] === undefined ? {} : { seed: Number(process.env['WS_D21_SEED']) }), verbose: process.env['WS_D21_VERBOSE'] === '1' },
    );
  });
});

describe('D21 at scale: the first sync of 10,000 pods the webhook admitted writes no cost', () => {
  test('a 3,000 / 3,000 / rest Deployment-style burst of 10,000 pods without a name, synced every 500 admissions', () => {
    const subsets: Subset[] = [{ name: 'a', maxReplicas: 3000 }, { name: 'b', maxReplicas: 3000 }, { name: 'rest' }];
    const w: World = { ws: { metadata: { name: 'ws', namespace: 'ns', uid: 'ws-uid' }, spec: { targetRef: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web' }, subsets } }, replicas: 10_000, shown: [], inFlight: [], recent: [] };
    let now = T0;
    let written = 0;
    for (let i = 0; i < 10_000; i++) {
      now += 10;
      admitOne(w, i, now);
      if (i % 500 === 499) {
        w.shown.push(...w.inFlight.map((f) => f.pod));
        w.inFlight = [];
        written += reconcile(w, now).length;
      }
    }
    w.shown.push(...w.inFlight.map((f) => f.pod));
    w.inFlight = [];
    assert.equal(written, 0, 'no cost write during the burst');
    assert.deepEqual(reconcile(w, now + 1000), [], 'no cost write once all 10,000 are seen');
    const bySubset = new Map<string, number>();
    for (const p of w.shown) bySubset.set(readMarker(p)?.subset ?? '', (bySubset.get(readMarker(p)?.subset ?? '') ?? 0) + 1);
    assert.deepEqual([...bySubset], [['a', 3000], ['b', 3000], ['rest', 4000]]);
  });
});
