/**
 * D18's decision (core/rebalance.ts) on plain objects: the ideal counts, each
 * reason a look can end with, the pacing rule ("the next move only once the
 * replacement is Ready"), the choice of the pod, and — as a property — that
 * applying the planned moves one by one always ends, with every subset within
 * its limit when the limits leave room for every pod.
 * The status the moves are judged on is computed by core's own reconcile plan
 * from the pods, as the controller would have written it.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Subset, WorkloadSpread } from '../api/workloadspread.ts';
import { formatTime } from '../k8s/time.ts';
import type { KubeObject, Node, Pod } from '../k8s/types.ts';
import { FakeCluster } from '../testing/admission-kit.ts';
import type { ObjectRef, ViewLookup } from './cluster-view.ts';
import { blockedIsNews, idealCounts, MOVE_RECORD_GRACE_MS, READINESS_PATIENCE_MS, moveRecord, planRebalance, rebalanceStatus, type RebalanceInput, type RebalancePlan } from './rebalance.ts';
import { planReconcile } from './reconcile-plan.ts';

const NOW = Date.UTC(2026, 0, 1, 1, 0, 0);
const MARKER = 'apps.kruise.io/matched-workloadspread';
const COST = 'controller.kubernetes.io/pod-deletion-cost';
const ZONE = 'topology.kubernetes.io/zone';

const deployment: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'ns', uid: 'd1' }, spec: { replicas: 6 } };
const replicaSet: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name: 'web-h1', namespace: 'ns', uid: 'rs1', labels: { 'pod-template-hash': 'h1' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd1', controller: true }] },
  spec: {
    replicas: 6,
    template: {
      metadata: { labels: { app: 'web', 'pod-template-hash': 'h1' } },
      spec: { containers: [{ name: 'main', image: 'nginx', resources: { requests: { cpu: '1' } } }] },
    },
  },
};

function zoneNode(name: string, zone: string, cpu = '8', unschedulable = false): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, [ZONE]: zone } },
    spec: unschedulable ? { unschedulable: true } : {},
    status: { allocatable: { cpu, memory: '32Gi', pods: '110' } },
  };
}

function zoneSubset(name: string, more: Partial<Subset> = {}): Subset {
  return { name, requiredNodeSelectorTerm: { matchExpressions: [{ key: ZONE, operator: 'In', values: [name] }] }, ...more };
}

interface PodOptions {
  ready?: boolean;
  terminating?: boolean;
  cost?: number;
  /** Minutes before NOW it was created (older = more valuable). */
  age?: number;
  marker?: string | null;
}

/** A pod of the ReplicaSet on `node`, placed in `subset` (marker) unless `marker: null`. */
function podIn(name: string, subset: string, node: string, o: PodOptions = {}): Pod {
  const created = NOW - (o.age ?? 60) * 60_000;
  const annotations: Record<string, string> = {};
  const marked = o.marker === undefined ? subset : o.marker;
  if (marked !== null) annotations[MARKER] = JSON.stringify({ name: 'ws', subset: marked });
  if (o.cost !== undefined) annotations[COST] = String(o.cost);
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'ns',
      uid: `uid-${name}`,
      creationTimestamp: formatTime(created),
      labels: { app: 'web', 'pod-template-hash': 'h1' },
      annotations,
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-h1', uid: 'rs1', controller: true }],
    },
    spec: { nodeName: node, containers: [{ name: 'main', image: 'nginx', resources: { requests: { cpu: '1' } } }] },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True', lastTransitionTime: formatTime(created + 10_000) }],
    },
  };
  if (o.terminating === true) pod.metadata.deletionTimestamp = formatTime(NOW - 1000);
  return pod;
}

/** The handlers' fake cluster, whose cache also holds the target in its own version (as the manager's caches do for a Deployment). */
class CachedCluster extends FakeCluster {
  override object(namespace: string, ref: ObjectRef, options: { exactVersion?: boolean } = {}): ViewLookup<KubeObject> {
    return super.object(namespace, ref, { ...options, exactVersion: false });
  }
}

interface Bed {
  ws: WorkloadSpread;
  cluster: FakeCluster;
  pods: Pod[];
  replicas: number;
}

/** A WorkloadSpread over `subsets` whose status is what the controller computes from `pods`. */
function bed(subsets: Subset[], pods: Pod[], nodes: Node[], replicas = pods.filter((p) => p.metadata.deletionTimestamp === undefined).length, more: Partial<WorkloadSpread> = {}): Bed {
  const base: WorkloadSpread = {
    metadata: { name: 'ws', namespace: 'ns', uid: 'ws-uid', generation: 1, annotations: { 'workloadspread.io/rebalance': 'true' } },
    spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets },
    ...more,
  };
  const byName = new Map(nodes.map((n) => [n.metadata?.name ?? '', n]));
  const status = planReconcile({ ws: base, pods, nodeByName: (n) => byName.get(n), workloadReplicas: replicas, latestVersion: 'h1', now: NOW, writeDeletionCost: false }).status;
  const ws: WorkloadSpread = { ...base, status: { ...status, ...(base.status?.rebalance === undefined ? {} : { rebalance: base.status.rebalance }) } };
  const cluster = new CachedCluster();
  cluster.spreads = [ws];
  cluster.objects = [{ ...deployment, spec: { replicas } }, replicaSet];
  cluster.pods = pods;
  cluster.nodeList = nodes;
  return { ws, cluster, pods, replicas };
}

function plan(b: Bed, more: Partial<RebalanceInput> = {}): RebalancePlan {
  return planRebalance({ ws: b.ws, maxInFlight: 1, pods: b.pods, workloadReplicas: b.replicas, replacesPods: true, view: b.cluster, now: NOW, ...more });
}

function reasonOf(p: RebalancePlan): string {
  return p.next.kind === 'move' ? `move ${p.next.move.pod} ${p.next.move.from}→${p.next.move.to}` : `${p.next.reason}${p.next.blocked ? ' (blocked)' : ''}`;
}

const threeZones = [zoneNode('a-1', 'a'), zoneNode('b-1', 'b'), zoneNode('c-1', 'c')];

describe('idealCounts: where the spec wants the pods (admission order from nothing)', () => {
  const cases: { name: string; subsets: { limit: number | undefined; min: number }[]; total: number; want: number[] }[] = [
    { name: 'front to back up to each limit', subsets: [{ limit: 2, min: 0 }, { limit: 2, min: 0 }, { limit: undefined, min: 0 }], total: 6, want: [2, 2, 2] },
    { name: 'an unlimited first subset takes everything', subsets: [{ limit: undefined, min: 0 }, { limit: undefined, min: 0 }], total: 5, want: [5, 0] },
    { name: 'minReplicas first, in spec order', subsets: [{ limit: 10, min: 0 }, { limit: undefined, min: 3 }], total: 5, want: [2, 3] },
    { name: 'minReplicas capped by the limit and the pods', subsets: [{ limit: 1, min: 4 }, { limit: undefined, min: 9 }], total: 5, want: [1, 4] },
    { name: 'pods beyond every limit are not placed', subsets: [{ limit: 2, min: 0 }, { limit: 1, min: 0 }], total: 6, want: [2, 1] },
    { name: 'no pods', subsets: [{ limit: 2, min: 1 }], total: 0, want: [0] },
  ];
  for (const c of cases) test(c.name, () => assert.deepEqual(idealCounts(c.subsets, c.total), c.want));
});

describe('planRebalance', () => {
  test('balanced: nothing out of place, nothing to do', () => {
    const b = bed([zoneSubset('a', { maxReplicas: 2 }), zoneSubset('b', { maxReplicas: 2 }), zoneSubset('c')], [podIn('a1', 'a', 'a-1'), podIn('a2', 'a', 'a-1'), podIn('b1', 'b', 'b-1')], threeZones);
    const p = plan(b);
    assert.equal(p.pending, 0);
    assert.equal(reasonOf(p), 'Balanced');
  });

  test('a lowered limit: the least valuable pod of the subset above it moves to the first subset with room', () => {
    const pods = [
      podIn('a-old', 'a', 'a-1', { age: 90, cost: 300 }),
      podIn('a-new', 'a', 'a-1', { age: 5, cost: 300 }),
      podIn('a-cheap', 'a', 'a-1', { age: 60, cost: -100 }),
      podIn('a-mid', 'a', 'a-1', { age: 30, cost: 300 }),
      podIn('b1', 'b', 'b-1'),
      podIn('b2', 'b', 'b-1'),
    ];
    const b = bed([zoneSubset('a', { maxReplicas: 2 }), zoneSubset('b', { maxReplicas: 2 }), zoneSubset('c')], pods, threeZones);
    const p = plan(b);
    assert.equal(p.pending, 2, 'a holds 2 more than its limit');
    assert.equal(reasonOf(p), 'move a-cheap a→c', 'lowest deletion cost first (the ReplicaSet scale-down order); b is full, c has room');
  });

  test('without a deletion cost, the newest pod of the subset moves (ActivePods order)', () => {
    const pods = [podIn('a-old', 'a', 'a-1', { age: 90 }), podIn('a-new', 'a', 'a-1', { age: 5 }), podIn('a-mid', 'a', 'a-1', { age: 30 })];
    const b = bed([zoneSubset('a', { maxReplicas: 2 }), zoneSubset('c')], pods, threeZones);
    assert.equal(reasonOf(plan(b)), 'move a-new a→c');
  });

  test('failback: a higher-priority subset has room again — a pod of the back subset moves forward', () => {
    const pods = [podIn('a1', 'a', 'a-1'), podIn('c1', 'c', 'c-1', { age: 50 }), podIn('c2', 'c', 'c-1', { age: 10 })];
    const b = bed([zoneSubset('a', { maxReplicas: 3 }), zoneSubset('c')], pods, threeZones);
    const p = plan(b);
    assert.equal(p.pending, 2);
    assert.equal(reasonOf(p), 'move c2 c→a');
  });

  test('failback waits for room: no node of the subset that wants pods can host one (NoRoom, blocked)', () => {
    const nodes = [zoneNode('a-1', 'a', '1'), zoneNode('c-1', 'c')];
    const pods = [podIn('a1', 'a', 'a-1'), podIn('c1', 'c', 'c-1'), podIn('c2', 'c', 'c-1')];
    const b = bed([zoneSubset('a'), zoneSubset('c')], pods, nodes);
    const p = plan(b);
    assert.equal(p.pending, 2, 'an unlimited first subset wants every pod');
    assert.equal(reasonOf(p), 'NoRoom (blocked)');
    assert.ok(p.next.kind === 'none');
    assert.match(p.next.message, /no node of subset a can host the replacement of pod ns\/c\d/);
    // With the Adaptive simulation schedule, admission itself skips subset a: still NoRoom, said the other way.
    const adaptive = bed([zoneSubset('a'), zoneSubset('c')], pods, nodes, 3, { spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets: [zoneSubset('a'), zoneSubset('c')], scheduleStrategy: { type: 'Adaptive' } } });
    const q = plan(adaptive);
    assert.equal(reasonOf(q), 'NoRoom (blocked)');
    assert.ok(q.next.kind === 'none');
    assert.equal(q.next.message, 'subset a wants more pods but none of its nodes can host one');
    // A cordoned node is no room either; uncordoned, it is.
    const cordoned = bed([zoneSubset('a'), zoneSubset('c')], pods, [zoneNode('a-1', 'a'), zoneNode('a-2', 'a', '8', true), zoneNode('c-1', 'c')].map((n) => (n.metadata?.name === 'a-1' ? zoneNode('a-1', 'a', '1') : n)));
    assert.equal(reasonOf(plan(cordoned)), 'NoRoom (blocked)');
    const uncordoned = bed([zoneSubset('a'), zoneSubset('c')], pods, [zoneNode('a-1', 'a', '1'), zoneNode('a-2', 'a'), zoneNode('c-1', 'c')]);
    assert.match(reasonOf(plan(uncordoned)), /^move c\d c→a$/);
  });

  test('the evicted pod frees its node: a move within shared nodes counts its requests as gone', () => {
    // Subsets a and b share one 2-CPU node; b holds both pods, a (front) has room by quota, and only the evicted pod's CPU makes room.
    const shared = zoneNode('n-1', 'x', '2');
    const anyZone = (name: string, more: Partial<Subset> = {}): Subset => ({ name, ...more });
    const pods = [podIn('b1', 'b', 'n-1'), podIn('b2', 'b', 'n-1')];
    const b = bed([anyZone('a', { maxReplicas: 1 }), anyZone('b')], pods, [shared]);
    assert.match(reasonOf(plan(b)), /^move b\d b→a$/);
  });

  test('the replacement would not land: admission skips a subset marked unschedulable (ReplacementWouldNotLand)', () => {
    const pods = [podIn('a1', 'a', 'a-1'), podIn('c1', 'c', 'c-1')];
    const b = bed([zoneSubset('a', { maxReplicas: 2 }), zoneSubset('c')], pods, threeZones);
    const unschedulable = [{ type: 'Schedulable', status: 'False', reason: 'PodUnschedulable', lastTransitionTime: formatTime(NOW - 10_000) }];
    const versioned = b.ws.status?.versionedSubsetStatuses?.['h1'] ?? [];
    const marked = versioned.map((s) => (s.name === 'a' ? { ...s, conditions: unschedulable } : s));
    b.ws = { ...b.ws, status: { ...b.ws.status, versionedSubsetStatuses: { h1: marked } } };
    const p = plan(b);
    assert.equal(reasonOf(p), 'ReplacementWouldNotLand (blocked)');
    assert.ok(p.next.kind === 'none');
    assert.equal(p.next.message, 'the replacement of pod ns/c1 would be placed in subset c, not ahead of subset c');
    // Marked in the top-level status too (as the controller writes it): said so.
    const top = (b.ws.status?.subsetStatuses ?? []).map((s) => (s.name === 'a' ? { ...s, conditions: unschedulable } : s));
    b.ws = { ...b.ws, status: { ...b.ws.status, subsetStatuses: top } };
    const q = plan(b);
    assert.ok(q.next.kind === 'none');
    assert.equal(q.next.message, 'subset a wants more pods but is marked unschedulable (Schedulable=False) until its recovery window ends');
  });

  test('over its limit with no room anywhere: NoRoom, the pods counted as pending', () => {
    const pods = [podIn('a1', 'a', 'a-1'), podIn('a2', 'a', 'a-1'), podIn('a3', 'a', 'a-1'), podIn('b1', 'b', 'b-1')];
    const b = bed([zoneSubset('a', { maxReplicas: 2 }), zoneSubset('b', { maxReplicas: 1 })], pods, threeZones);
    const p = plan(b);
    assert.equal(p.pending, 1);
    assert.equal(reasonOf(p), 'NoRoom (blocked)');
    assert.ok(p.next.kind === 'none');
    assert.match(p.next.message, /no subset has quota left for the replacement of pod ns\/a\d/);
  });

  test('percentages above 100 % in total: front subsets are filled to their caps, as a scale-up would (34/33/33 of 10: 4/3/3 → 4/4/2)', () => {
    const subsets = [zoneSubset('a', { maxReplicas: '34%' }), zoneSubset('b', { maxReplicas: '33%' }), zoneSubset('c', { maxReplicas: '33%' })];
    const pods = [...[1, 2, 3, 4].map((i) => podIn(`a${i}`, 'a', 'a-1')), ...[1, 2, 3].map((i) => podIn(`b${i}`, 'b', 'b-1')), ...[1, 2, 3].map((i) => podIn(`c${i}`, 'c', 'c-1', { age: [0, 60, 20, 2][i] as number }))];
    const p = plan(bed(subsets, pods, threeZones, 10));
    assert.equal(p.pending, 1);
    assert.equal(reasonOf(p), 'move c3 c→b');
  });

  test('pods in no subset move into a subset with room', () => {
    const pods = [podIn('a1', 'a', 'a-1'), podIn('stray', 'gone', 'c-1')];
    const b = bed([zoneSubset('a', { maxReplicas: 2 }), zoneSubset('b', { maxReplicas: 2 })], pods, threeZones);
    const p = plan(b);
    assert.equal(p.pending, 1);
    assert.ok(p.next.kind === 'move');
    assert.deepEqual([p.next.move.pod, p.next.move.to], ['stray', 'a']);
    assert.equal(p.next.move.from, 'kruise.io/workloadspread-fake-subset-name');
  });

  test("minReplicas: a subset is never taken below its minimum, and a subset below its minimum is filled first", () => {
    const subsets = [zoneSubset('a'), zoneSubset('b', { minReplicas: 2 })];
    // b holds exactly its minimum: nothing moves to a although a (unlimited, first) has room.
    const atMin = bed(subsets, [podIn('a1', 'a', 'a-1'), podIn('b1', 'b', 'b-1'), podIn('b2', 'b', 'b-1')], threeZones);
    assert.equal(reasonOf(plan(atMin)), 'Balanced');
    // b below its minimum: a pod of a moves there, although b comes later.
    const belowMin = bed(subsets, [podIn('a1', 'a', 'a-1'), podIn('a2', 'a', 'a-1'), podIn('b1', 'b', 'b-1')], threeZones);
    assert.match(reasonOf(plan(belowMin)), /^move a\d a→b$/);
  });

  test('never for StatefulSet, Job, or kinds whose pods no ReplicaSet-like controller replaces (Unsupported, blocked)', () => {
    const b = bed([zoneSubset('a', { maxReplicas: 1 }), zoneSubset('c')], [podIn('a1', 'a', 'a-1'), podIn('a2', 'a', 'a-1')], threeZones);
    const p = plan(b, { replacesPods: false });
    assert.equal(reasonOf(p), 'Unsupported (blocked)');
    assert.equal(p.pending, 1);
    const sts = { ...b, ws: { ...b.ws, spec: { ...b.ws.spec, targetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web' } } } };
    assert.equal(reasonOf(plan(sts)), 'Unsupported (blocked)', 'the ordinal path is never rebalanced, whatever the caller says');
  });

  test('the stored status must be current: a spec not observed yet, or pods not counted yet (WaitingForStatus, not blocked)', () => {
    const pods = [podIn('a1', 'a', 'a-1'), podIn('a2', 'a', 'a-1'), podIn('a3', 'a', 'a-1')];
    const b = bed([zoneSubset('a', { maxReplicas: 2 }), zoneSubset('c')], pods, threeZones);
    const newer = { ...b, ws: { ...b.ws, metadata: { ...b.ws.metadata, generation: 2 } } };
    assert.equal(reasonOf(plan(newer)), 'WaitingForStatus');
    const uncounted = { ...b, pods: [...pods, podIn('c9', 'c', 'c-1')], replicas: 4 };
    const p = plan(uncounted);
    assert.equal(reasonOf(p), 'WaitingForStatus');
    assert.ok(p.next.kind === 'none');
    assert.match(p.next.message, /count the pods of subset c/);
  });

  test('readiness gate: with pods not Ready, nothing moves (WaitingForReadiness) — unless max-in-flight leaves room', () => {
    const pods = [podIn('a1', 'a', 'a-1'), podIn('a2', 'a', 'a-1'), podIn('a3', 'a', 'a-1', { ready: false })];
    const b = bed([zoneSubset('a', { maxReplicas: 2 }), zoneSubset('c')], pods, threeZones);
    const p = plan(b);
    assert.equal(reasonOf(p), 'WaitingForReadiness', 'not news at first: a workload starting or rolling out is not Ready for a while');
    assert.equal(p.wakeAfterMs, READINESS_PATIENCE_MS + 1, 'looked at again once the wait would be news');
    assert.equal(p.requeueAfterMs, undefined);
    assert.equal(reasonOf(plan(b, { maxInFlight: 2 })), 'move a3 a→c', 'the pod that is not Ready is the least valuable');
    // A missing replica counts as unavailable too.
    const short = bed([zoneSubset('a', { maxReplicas: 2 }), zoneSubset('c')], pods.slice(0, 2).concat(podIn('a3', 'a', 'a-1')), threeZones, 4);
    assert.equal(reasonOf(plan(short)), 'WaitingForReadiness');
  });

  test('a wait for readiness longer than 10 minutes is blocked, with a message of its own (so it is reported once)', () => {
    const pods = [podIn('a1', 'a', 'a-1'), podIn('a2', 'a', 'a-1'), podIn('a3', 'a', 'a-1', { ready: false })];
    const b = bed([zoneSubset('a', { maxReplicas: 2 }), zoneSubset('c')], pods, threeZones);
    const first = plan(b);
    assert.ok(first.next.kind === 'none');
    const waiting = { ...b, ws: { ...b.ws, status: { ...b.ws.status, rebalance: rebalanceStatus(undefined, { reason: 'WaitingForReadiness', message: first.next.message, moves: [], pending: 1 }, NOW) } } };
    assert.equal(reasonOf(plan(waiting, { now: NOW + READINESS_PATIENCE_MS - 1 })), 'WaitingForReadiness');
    const later = plan(waiting, { now: NOW + READINESS_PATIENCE_MS });
    assert.equal(reasonOf(later), 'WaitingForReadiness (blocked)');
    assert.ok(later.next.kind === 'none');
    assert.match(later.next.message, /^the pods of Deployment ns\/web have not all been Ready for 10 minutes: a move starts only while fewer than 1 of its pods are unavailable/);
    assert.ok(blockedIsNews(waiting.ws.status?.rebalance, later.next));
  });

  describe('one move at a time, the next only once the replacement is Ready', () => {
    const subsets = [zoneSubset('a', { maxReplicas: 2 }), zoneSubset('c')];
    const move = { pod: 'a3', from: 'a', to: 'c', evictedAt: formatTime(NOW - 5000) };
    const withMove = (b: Bed): Bed => ({ ...b, ws: { ...b.ws, status: { ...b.ws.status, rebalance: { pending: 2, moves: [move], reason: 'Moving' } } } });

    test('the evicted pod is terminating: in flight (Moving, not blocked)', () => {
      const pods = [podIn('a1', 'a', 'a-1'), podIn('a2', 'a', 'a-1'), podIn('a3', 'a', 'a-1', { terminating: true }), podIn('a4', 'a', 'a-1'), podIn('c1', 'c', 'c-1', { ready: false, age: 0 })];
      const b = withMove(bed(subsets, pods, threeZones, 4));
      const p = plan(b);
      assert.equal(reasonOf(p), 'Moving');
      assert.deepEqual(p.inFlight, [move]);
      assert.equal(p.pending, 1, 'a4 still has to go');
      assert.ok(p.next.kind === 'none');
      assert.equal(p.next.message, 'waiting for the replacement of pod ns/a3 (moved from subset a to subset c) to be Ready');
    });

    test('the evicted pod is gone but its replacement is not Ready: still in flight', () => {
      const pods = [podIn('a1', 'a', 'a-1'), podIn('a2', 'a', 'a-1'), podIn('a4', 'a', 'a-1'), podIn('c1', 'c', 'c-1', { ready: false, age: 0 })];
      const p = plan(withMove(bed(subsets, pods, threeZones, 4)));
      assert.equal(reasonOf(p), 'Moving');
      assert.deepEqual(p.inFlight, [move]);
    });

    test('gone and every replica Ready: the move is complete and the next one starts', () => {
      const pods = [podIn('a1', 'a', 'a-1'), podIn('a2', 'a', 'a-1'), podIn('a4', 'a', 'a-1', { age: 1 }), podIn('c1', 'c', 'c-1', { age: 0 })];
      const p = plan(withMove(bed(subsets, pods, threeZones, 4)));
      assert.deepEqual(p.completed, [move]);
      assert.deepEqual(p.inFlight, []);
      assert.equal(reasonOf(p), 'move a4 a→c');
    });

    test('max-in-flight 2: a second move may start while the first is in flight', () => {
      const before = [podIn('a1', 'a', 'a-1'), podIn('a2', 'a', 'a-1'), podIn('a3', 'a', 'a-1'), podIn('a4', 'a', 'a-1'), podIn('a5', 'a', 'a-1', { age: 1 })];
      const pods = before.map((p) => (p.metadata.name === 'a3' ? podIn('a3', 'a', 'a-1', { terminating: true }) : p));
      // The status still counts a3 (the controller has not seen it terminating yet).
      const stale = withMove(bed(subsets, before, threeZones, 5));
      assert.equal(reasonOf(plan({ ...stale, pods }, { maxInFlight: 2 })), 'WaitingForStatus', 'not before the controller counted the evicted pod out');
      const counted = withMove(bed(subsets, pods, threeZones, 5));
      assert.equal(reasonOf(plan(counted, { maxInFlight: 2 })), 'move a5 a→c');
      assert.equal(reasonOf(plan(counted, { maxInFlight: 1 })), 'Moving');
    });

    test('a recorded eviction the cache does not show yet counts as terminating for 15 s, then is dropped as stale', () => {
      const pods = [podIn('a1', 'a', 'a-1'), podIn('a2', 'a', 'a-1'), podIn('a3', 'a', 'a-1'), podIn('a4', 'a', 'a-1', { age: 1 })];
      const b = withMove(bed(subsets, pods, threeZones, 4));
      const p = plan(b);
      assert.equal(reasonOf(p), 'Moving');
      assert.equal(p.requeueAfterMs, MOVE_RECORD_GRACE_MS - 5000 + 1, 'looked at again just after the grace');
      const later = plan(b, { now: NOW + MOVE_RECORD_GRACE_MS });
      assert.deepEqual(later.completed, [move]);
      assert.equal(reasonOf(later), 'move a4 a→c');
    });
  });

  test('rebalanceStatus keeps lastTransitionTime while the reason stays; blockedIsNews only on a new reason or message', () => {
    const first = rebalanceStatus(undefined, { reason: 'NoRoom', message: 'm', moves: [], pending: 2 }, NOW);
    assert.deepEqual(first, { pending: 2, reason: 'NoRoom', message: 'm', lastTransitionTime: formatTime(NOW) });
    const same = rebalanceStatus(first, { reason: 'NoRoom', message: 'm2', moves: [], pending: 1 }, NOW + 60_000);
    assert.equal(same.lastTransitionTime, formatTime(NOW));
    const record = moveRecord({ pod: 'p', from: 'c', to: 'a' }, NOW + 120_000);
    const moving = rebalanceStatus(same, { reason: 'Moving', message: 'x', moves: [record], pending: 1 }, NOW + 120_000);
    assert.deepEqual(moving.moves, [{ pod: 'p', from: 'c', to: 'a', evictedAt: formatTime(NOW + 120_000) }]);
    assert.equal(moving.lastTransitionTime, formatTime(NOW + 120_000));
    assert.equal(blockedIsNews(first, { reason: 'NoRoom', message: 'm' }), false);
    assert.equal(blockedIsNews(first, { reason: 'NoRoom', message: 'other' }), true);
    assert.equal(blockedIsNews(undefined, { reason: 'NoRoom', message: 'm' }), true);
  });
});

describe('property: planned moves, applied one by one, always end — and within every limit when the limits leave room', () => {
  const subsetArb = fc.record({
    max: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
    percent: fc.boolean(),
    min: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
  });
  const caseArb = fc
    .record({ subsets: fc.array(subsetArb, { minLength: 1, maxLength: 4 }), replicas: fc.integer({ min: 1, max: 12 }) })
    .chain((c) => fc.record({ subsets: fc.constant(c.subsets), replicas: fc.constant(c.replicas), placement: fc.array(fc.integer({ min: -1, max: c.subsets.length - 1 }), { minLength: c.replicas, maxLength: c.replicas }) }));

  test('at most 2 moves per pod; no subset above its limit at the end when the limits hold every pod', () => {
    fc.assert(
      fc.property(caseArb, ({ subsets: specs, replicas, placement }) => {
        const names = specs.map((_, i) => `s${i}`);
        const subsets: Subset[] = specs.map((s, i) => {
          const subset = zoneSubset(names[i] as string);
          if (s.max !== undefined) subset.maxReplicas = s.percent ? `${s.max * 15}%` : s.max;
          const limit = typeof subset.maxReplicas === 'string' ? Math.ceil((s.max ?? 0) * 15 * replicas / 100) : subset.maxReplicas;
          if (s.min !== undefined && (limit === undefined || s.min <= limit)) subset.minReplicas = s.min;
          return subset;
        });
        const nodes = names.map((n) => zoneNode(`${n}-1`, n, '100'));
        let seq = 0;
        let pods = placement.map((i) => (i < 0 ? podIn(`p${seq++}`, 'removed', 's0-1', { age: 100 - seq }) : podIn(`p${seq++}`, names[i] as string, `${names[i]}-1`, { age: 100 - seq })));
        let moves = 0;
        for (;;) {
          const b = bed(subsets, pods, nodes, replicas);
          const p = plan(b);
          if (p.next.kind !== 'move') {
            const limits = subsets.map((s) => (s.maxReplicas === undefined ? Infinity : typeof s.maxReplicas === 'string' ? Math.ceil((Number(s.maxReplicas.slice(0, -1)) * replicas) / 100) : s.maxReplicas));
            const room = limits.reduce((a, b) => a + b, 0) >= replicas;
            if (room) {
              assert.equal(p.pending, 0, `balanced at the end (${reasonOf(p)})`);
              for (const [i, name] of names.entries()) {
                const n = pods.filter((x) => JSON.parse(x.metadata.annotations?.[MARKER] ?? '{}').subset === name).length;
                assert.ok(n <= (limits[i] as number), `${name} holds ${n}, limit ${limits[i]}`);
              }
            }
            return;
          }
          const m = p.next.move;
          moves++;
          assert.ok(moves <= 2 * replicas, `moves end (${moves} so far)`);
          pods = pods.filter((x) => x.metadata.name !== m.pod).concat(podIn(`p${seq++}`, m.to, `${m.to}-1`, { age: 0 }));
        }
      }),
      { numRuns: 300 },
    );
  });
});
