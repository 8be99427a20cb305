/**
 * The decisions of a CloneSet sync as pure functions (cloneset-plan.ts,
 * cloneset-pods.ts): partition rounding, the diff numbers with the worked
 * cases of kruise's calculateDiffsWithExpectation, scale (create /
 * specified delete / scale-in by revision and deletion cost, the ready-pod
 * limit), update (how many pods are marked, in which order), and a model of
 * the controller's rounds as property tests: from any start it converges to
 * `replicas` pods with exactly the partition at the old revision, never
 * holds more than replicas + maxSurge pods, and during an update never has
 * fewer than replicas − maxUnavailable available pods.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatTime } from '../../k8s/time.ts';
import type { IntOrString, Pod } from '../../k8s/types.ts';
import { calculateDiffs, planScale, planUpdate, type AvailableCheck } from './cloneset-plan.ts';
import { cloneSetSpec, isSpecifiedDelete, partitionReplicas, type CloneSetSpecView } from './cloneset-pods.ts';
import { scaledIntOrPercent } from './int-or-percent.ts';

const T0 = Date.UTC(2026, 0, 1);
const NOW = T0 + 3_600_000;
const OLD = 'web-1111';
const NEW = 'web-2222';

interface PodOpts {
  revision?: string;
  ready?: boolean;
  cost?: number;
  /** Seconds before NOW the pod became ready. */
  readyFor?: number;
  specified?: boolean;
  node?: string;
}

function pod(name: string, o: PodOpts = {}): Pod {
  const labels: Record<string, string> = { app: 'web', 'controller-revision-hash': o.revision ?? OLD };
  if (o.specified === true) labels['apps.kruise.io/specified-delete'] = 'true';
  const ready = o.ready !== false;
  return {
    metadata: { name, uid: name, labels, creationTimestamp: formatTime(T0), ...(o.cost === undefined ? {} : { annotations: { 'controller.kubernetes.io/pod-deletion-cost': String(o.cost) } }) },
    spec: { containers: [{ name: 'c' }], nodeName: o.node ?? 'n1' },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: formatTime(NOW - (o.readyFor ?? 600) * 1000) }] },
  } as unknown as Pod;
}

function spec(s: Partial<CloneSetSpecView> = {}): CloneSetSpecView {
  return { ...cloneSetSpec({ spec: {} }), ...s };
}

const names = (ps: readonly Pod[]): string[] => ps.map((p) => p.metadata.name ?? '');

describe('cloneSetSpec and partitionReplicas', () => {
  test("Kruise's webhook defaults stand in for missing fields", () => {
    assert.deepEqual(cloneSetSpec({ spec: {} }), {
      replicas: 1,
      minReadySeconds: 0,
      revisionHistoryLimit: 10,
      podsToDelete: [],
      scaleMaxUnavailable: undefined,
      updateType: 'ReCreate',
      partition: undefined,
      maxSurge: undefined,
      maxUnavailable: '20%',
      paused: false,
    });
  });

  const cases: [IntOrString | undefined, number, number][] = [
    [undefined, 5, 0],
    [2, 5, 2],
    [9, 5, 5],
    ['0%', 5, 0],
    ['50%', 5, 3],
    ['20%', 5, 1],
    ['1%', 5, 1],
    ['99%', 5, 4],
    ['100%', 5, 5],
    ['99%', 1, 1],
    ['abc', 5, 0],
  ];
  for (const [partition, replicas, want] of cases) {
    test(`partition ${JSON.stringify(partition)} of ${replicas} keeps ${want} old pods`, () => {
      assert.equal(partitionReplicas(partition, replicas), want);
    });
  }

  test('a pod is specified to delete by the label (any value) or by name in podsToDelete', () => {
    assert.equal(isSpecifiedDelete({ podsToDelete: [] }, pod('a', { specified: true })), true);
    assert.equal(isSpecifiedDelete({ podsToDelete: ['a'] }, pod('a')), true);
    assert.equal(isSpecifiedDelete({ podsToDelete: ['b'] }, pod('a')), false);
  });
});

const availableNow: AvailableCheck = (p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

describe('calculateDiffs (kruise calculateDiffsWithExpectation)', () => {
  const all = (n: number, o: PodOpts = {}, prefix = 'p') => Array.from({ length: n }, (_, i) => pod(`${prefix}${i}`, o));

  test('scale out: the partition share is created at the old revision', () => {
    const d = calculateDiffs(spec({ replicas: 6, partition: 4 }), all(2), NEW, availableNow);
    assert.deepEqual([d.scaleUpNum, d.scaleUpNumOldRevision, d.scaleUpLimit], [4, 2, 4]);
  });

  test("scaleStrategy.maxUnavailable limits creations by the pods not yet available", () => {
    const d = calculateDiffs(spec({ replicas: 6, scaleMaxUnavailable: 2 }), [...all(1, { revision: NEW }), ...all(1, { revision: NEW, ready: false }, 'u')], NEW, availableNow);
    assert.deepEqual([d.scaleUpNum, d.scaleUpLimit], [4, 1]);
  });

  test('scale in excludes the pods specified to delete; ready deletions within maxUnavailable + surplus − unavailable', () => {
    const pods = [...all(5, { revision: NEW }), pod('x', { revision: NEW, specified: true }), pod('y', { revision: NEW, ready: false })];
    const d = calculateDiffs(spec({ replicas: 4, maxUnavailable: 1 }), pods, NEW, availableNow);
    assert.deepEqual([d.scaleDownNum, d.deleteReadyLimit], [2, 1 + 3 - 1]);
  });

  test('update: old pods above the partition, with maxUnavailable + surplus unavailable at most', () => {
    const d = calculateDiffs(spec({ replicas: 10, partition: '30%' }), all(10), NEW, availableNow);
    assert.deepEqual([d.updateNum, d.updateMaxUnavailable], [7, 2]);
  });

  test('maxSurge: surge is used for the update; maxUnavailable rounds down when surging', () => {
    const d = calculateDiffs(spec({ replicas: 4, maxSurge: 1, maxUnavailable: '20%' }), all(4), NEW, availableNow);
    assert.deepEqual([d.useSurge, d.scaleUpNum, d.scaleUpNumOldRevision, d.updateMaxUnavailable], [1, 1, 0, 0]);
  });

  test('paused: no surge', () => {
    assert.equal(calculateDiffs(spec({ replicas: 4, maxSurge: 1, paused: true }), all(4), NEW, availableNow).useSurge, 0);
  });
});

describe('planScale', () => {
  test('creates what is missing, old revision first', () => {
    const plan = planScale(spec({ replicas: 5, partition: 3 }), [pod('a', { revision: NEW })], NEW, NOW, availableNow);
    assert.deepEqual(plan, { kind: 'create', total: 4, current: 3, wanted: 4 });
  });

  test('deletes the pods specified to delete first, and scale-in waits for them', () => {
    const pods = [pod('a', { cost: 100 }), pod('b', { cost: -100 }), pod('c', { cost: 50 })];
    const plan = planScale(spec({ replicas: 1, podsToDelete: ['a'] }), pods, OLD, NOW, availableNow);
    assert.equal(plan.kind, 'delete');
    assert.deepEqual(plan.kind === 'delete' ? [names(plan.pods), plan.reason] : [], [['a'], 'specified']);
    // maxUnavailable 0: ready pods may go only up to 0 + (3 − 1) − 2 unavailable = 0.
    const busy = [pod('a', { cost: 100 }), pod('b', { ready: false }), pod('c', { ready: false })];
    const limited = planScale(spec({ replicas: 1, podsToDelete: ['a'], maxUnavailable: 0 }), busy, OLD, NOW, availableNow);
    assert.deepEqual(limited, { kind: 'wait' }, 'a ready pod beyond the delete limit stays, and nothing else goes meanwhile');
  });

  test('scale-in removes the lowest deletion costs', () => {
    const pods = [pod('a', { cost: 300 }), pod('b', { cost: 100 }), pod('c', { cost: 200 }), pod('d', { cost: 100, node: 'n2' })];
    const plan = planScale(spec({ replicas: 2 }), pods, OLD, NOW, availableNow);
    assert.deepEqual(plan.kind === 'delete' ? names(plan.pods).sort() : plan, ['b', 'd']);
  });

  test('scale-in takes the old revision\u2019s surplus from the old pods, whatever their cost', () => {
    const pods = [pod('old-dear', { cost: 1000 }), pod('old-cheap', { cost: 900 }), pod('new-a', { revision: NEW, cost: -5 }), pod('new-b', { revision: NEW, cost: -5 })];
    const plan = planScale(spec({ replicas: 3, partition: 1 }), pods, NEW, NOW, availableNow);
    assert.deepEqual(plan.kind === 'delete' ? names(plan.pods) : plan, ['old-cheap']);
  });

  test('ready pods are deleted only within the limit; pods not ready always', () => {
    const pods = [pod('r1', { cost: 1 }), pod('r2', { cost: 2 }), pod('nr', { ready: false, cost: 3 }), pod('keep', { cost: 9 })];
    // maxUnavailable 0: limit = 0 + (4 − 1) − 1 unavailable = 2 ready pods.
    const plan = planScale(spec({ replicas: 1, maxUnavailable: 0 }), pods, OLD, NOW, availableNow);
    assert.deepEqual(plan.kind === 'delete' ? names(plan.pods).sort() : plan, ['nr', 'r1', 'r2']);
    const tight = planScale(spec({ replicas: 3, maxUnavailable: 0 }), [pod('r1', { cost: 1 }), pod('nr', { ready: false, cost: 3 }), pod('r2', { cost: 2 }), pod('r3', { cost: 4 })], OLD, NOW, availableNow);
    assert.deepEqual(tight.kind === 'delete' ? names(tight.pods) : tight, ['nr'], 'limit 0 + 1 − 1 = 0: only the pod that is not ready');
  });
});

describe('planUpdate', () => {
  test('marks old pods beyond the partition, least valuable (most recently ready) first, within maxUnavailable', () => {
    const pods = [pod('p0', { readyFor: 50 }), pod('p1', { readyFor: 40 }), pod('p2', { readyFor: 30 }), pod('p3', { readyFor: 20 }), pod('p4', { readyFor: 10 })];
    assert.deepEqual(names(planUpdate(spec({ replicas: 5, partition: 2, maxUnavailable: 2 }), pods, NEW, NOW, availableNow)), ['p4', 'p3']);
    assert.deepEqual(names(planUpdate(spec({ replicas: 5, partition: 4, maxUnavailable: 2 }), pods, NEW, NOW, availableNow)), ['p4']);
    assert.deepEqual(planUpdate(spec({ replicas: 5, partition: 2, maxUnavailable: 2, paused: true }), pods, NEW, NOW, availableNow), []);
  });

  test('an unavailable new pod uses up the budget; an unavailable old pod costs nothing to recreate', () => {
    const pods = [pod('new', { revision: NEW, ready: false }), pod('o1', { readyFor: 20 }), pod('o2', { ready: false })];
    assert.deepEqual(names(planUpdate(spec({ replicas: 3, maxUnavailable: 1 }), pods, NEW, NOW, availableNow)), []);
    const pods2 = [pod('o1', { readyFor: 20 }), pod('o2', { ready: false })];
    assert.deepEqual(names(planUpdate(spec({ replicas: 2, maxUnavailable: 1 }), pods2, NEW, NOW, availableNow)), ['o2']);
  });
});

// ---- a model of the controller's rounds ----

interface ModelPod {
  name: string;
  revision: string;
  available: boolean;
  specified: boolean;
}

function asPod(m: ModelPod): Pod {
  return pod(m.name, { revision: m.revision, ready: m.available, specified: m.specified });
}

interface Run {
  maxPods: number;
  minAvailableDuringUpdate: number;
  pods: ModelPod[];
  rounds: number;
}

/** One round as cloneset.ts does it: scale, else update; then every pod created earlier becomes available. */
function runModel(s: CloneSetSpecView, start: ModelPod[], maxRounds = 300): Run {
  let pods = start.map((p) => ({ ...p }));
  let seq = 0;
  let maxPods = pods.length;
  let minAvailable = Number.POSITIVE_INFINITY;
  let rounds = 0;
  for (; rounds < maxRounds; rounds++) {
    const real = pods.map(asPod);
    const plan = planScale(s, real, NEW, NOW, availableNow);
    let changed = false;
    if (plan.kind === 'create' && plan.total > 0) {
      for (let i = 0; i < plan.total; i++) pods.push({ name: `n${seq++}`, revision: i < plan.current ? OLD : NEW, available: false, specified: false });
      changed = true;
    } else if (plan.kind === 'delete') {
      const gone = new Set(names(plan.pods));
      pods = pods.filter((p) => !gone.has(p.name));
      changed = true;
    } else {
      const marked = new Set(names(planUpdate(s, real, NEW, NOW, availableNow)));
      for (const p of pods) if (marked.has(p.name) && !p.specified) {
        p.specified = true;
        changed = true;
      }
    }
    maxPods = Math.max(maxPods, pods.length);
    minAvailable = Math.min(minAvailable, pods.filter((p) => p.available).length);
    const waiting = pods.some((p) => !p.available);
    for (const p of pods) p.available = true;
    if (!changed && !waiting) break;
  }
  return { maxPods, minAvailableDuringUpdate: minAvailable, pods, rounds };
}

describe('the controller\u2019s rounds, modelled (properties)', () => {
  const intOrPercent = (max: number) => fc.oneof(fc.integer({ min: 0, max }), fc.integer({ min: 0, max: 100 }).map((n) => `${n}%`));
  const arbitrary = fc.record({
    replicas: fc.integer({ min: 0, max: 12 }),
    start: fc.integer({ min: 0, max: 12 }),
    partition: fc.option(intOrPercent(14), { nil: undefined }),
    maxSurge: fc.option(intOrPercent(3), { nil: undefined }),
    maxUnavailable: intOrPercent(3),
  });

  test('from any start it converges: replicas pods, exactly the partition at the old revision, nothing left marked', () => {
    fc.assert(
      fc.property(arbitrary, (a) => {
        const s = spec({ replicas: a.replicas, partition: a.partition, maxSurge: a.maxSurge, maxUnavailable: a.maxUnavailable });
        const surge = a.maxSurge === undefined ? 0 : (scaledIntOrPercent(a.maxSurge, a.replicas, true) as { value: number }).value;
        const unavailable = (scaledIntOrPercent(a.maxUnavailable, a.replicas, surge === 0) as { value: number }).value;
        fc.pre(surge > 0 || unavailable > 0 || a.replicas === 0 || partitionReplicas(a.partition, a.replicas) >= Math.min(a.start, a.replicas));
        const start = Array.from({ length: a.start }, (_, i) => ({ name: `o${i}`, revision: OLD, available: true, specified: false }));
        const run = runModel(s, start);
        assert.ok(run.rounds < 300, 'converged');
        assert.equal(run.pods.length, a.replicas);
        // Missing old pods are created at the old revision, surplus ones updated or scaled in first.
        assert.equal(run.pods.filter((p) => p.revision === OLD).length, partitionReplicas(a.partition, a.replicas));
        assert.ok(run.pods.every((p) => !p.specified));
        assert.ok(run.maxPods <= Math.max(a.start, a.replicas + surge), `at most replicas + maxSurge pods (${run.maxPods})`);
      }),
      { numRuns: 300 },
    );
  });

  test('an update (replicas unchanged) never leaves fewer than replicas − maxUnavailable pods available', () => {
    fc.assert(
      fc.property(arbitrary, (a) => {
        const s = spec({ replicas: a.replicas, partition: a.partition, maxSurge: a.maxSurge, maxUnavailable: a.maxUnavailable });
        const surge = a.maxSurge === undefined ? 0 : (scaledIntOrPercent(a.maxSurge, a.replicas, true) as { value: number }).value;
        const unavailable = (scaledIntOrPercent(a.maxUnavailable, a.replicas, surge === 0) as { value: number }).value;
        fc.pre(surge > 0 || unavailable > 0);
        const start = Array.from({ length: a.replicas }, (_, i) => ({ name: `o${i}`, revision: OLD, available: true, specified: false }));
        const run = runModel(s, start);
        assert.ok(run.minAvailableDuringUpdate >= a.replicas - unavailable, `${run.minAvailableDuringUpdate} available, limit ${a.replicas - unavailable}`);
      }),
      { numRuns: 300 },
    );
  });
});
