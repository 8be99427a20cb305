/**
 * The pure rules of the Job controller: completion-index intervals (with a
 * round-trip property), the pod-failure back-off (10 s doubling, capped at
 * 10 minutes, from the last failure; a success resets it), restarts against
 * backoffLimit with OnFailure, conditions, which active pods go first
 * (duplicated indexes, then the least valuable), pod finish times, and the
 * count-once move from uncounted uids to the counters.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Pod } from '../../k8s/types.ts';
import {
  activePodsForRemoval,
  backoffRemainingMs,
  ensureCondition,
  firstPendingIndexes,
  formatIndexes,
  jobView,
  nextBackoffRecord,
  parseIndexes,
  pastBackoffLimitOnFailure,
  podFinishTime,
  readStatus,
  wireStatus,
  type JobCondition,
} from './job-state.ts';
import { cleanUncounted } from './job-tracking.ts';

const T = Date.UTC(2026, 0, 1);
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

function pod(name: string, o: { index?: number; phase?: string; node?: string; ready?: boolean; finishedAt?: number; restarts?: number; created?: number } = {}): Pod {
  const annotations: Record<string, string> = o.index === undefined ? {} : { 'batch.kubernetes.io/job-completion-index': String(o.index) };
  const containerStatuses = [{ name: 'c', ready: o.ready === true, restartCount: o.restarts ?? 0, ...(o.finishedAt !== undefined ? { state: { terminated: { finishedAt: iso(o.finishedAt) } } } : {}) }];
  return {
    metadata: { name, uid: name, annotations, creationTimestamp: iso(o.created ?? T) },
    spec: { containers: [{ name: 'c' }], ...(o.node !== undefined ? { nodeName: o.node } : {}) },
    status: { phase: o.phase ?? 'Running', conditions: o.ready === true ? [{ type: 'Ready', status: 'True' }] : [], containerStatuses },
  };
}

describe('completion indexes', () => {
  test('intervals print as upstream prints them and parse back (below completions only)', () => {
    assert.equal(formatIndexes([4, 0, 2, 3, 7, 8]), '0,2-4,7-8');
    assert.equal(formatIndexes([]), '');
    assert.deepEqual(parseIndexes('0,2-4,7-8', 8), [0, 2, 3, 4, 7]);
    assert.deepEqual(parseIndexes('x,1,3-a', 10), [1]);
  });

  test('property: formatIndexes ∘ parseIndexes is the identity on sets of indexes', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 60 }), { maxLength: 30 }), (list) => {
        const sorted = [...list].sort((a, b) => a - b);
        assert.deepEqual(parseIndexes(formatIndexes(list), 61), sorted);
      }),
    );
  });

  test('firstPendingIndexes takes the lowest free ones', () => {
    assert.deepEqual(firstPendingIndexes(new Set([0, 2]), 2, 5), [1, 3]);
    assert.deepEqual(firstPendingIndexes(new Set([0, 1, 2]), 2, 3), []);
  });
});

describe('back-off', () => {
  const failure = (at: number) => pod(`f${at}`, { phase: 'Failed', finishedAt: at });
  const success = (at: number) => pod(`s${at}`, { phase: 'Succeeded', finishedAt: at });
  const empty = { failuresAfterLastSuccess: 0, lastFailureTime: undefined };

  test('10 s after one failure, doubling per failure, capped at 10 minutes', () => {
    const cases: [number, number][] = [
      [1, 10_000],
      [2, 20_000],
      [3, 40_000],
      [6, 320_000],
      [7, 600_000],
      [12, 600_000],
    ];
    for (const [failures, wait] of cases) assert.equal(backoffRemainingMs({ failuresAfterLastSuccess: failures, lastFailureTime: T }, T), wait, `${failures} failures`);
    assert.equal(backoffRemainingMs({ failuresAfterLastSuccess: 2, lastFailureTime: T }, T + 15_000), 5_000, 'counted from the last failure');
    assert.equal(backoffRemainingMs(empty, T), 0);
  });

  test('failures accumulate; a success keeps only the failures after it', () => {
    const r1 = nextBackoffRecord(empty, [], [failure(T), failure(T + 5000)]);
    assert.deepEqual(r1, { failuresAfterLastSuccess: 2, lastFailureTime: T + 5000 });
    const r2 = nextBackoffRecord(r1, [success(T + 6000)], [failure(T + 4000), failure(T + 9000)]);
    assert.deepEqual(r2, { failuresAfterLastSuccess: 1, lastFailureTime: T + 9000 });
    assert.deepEqual(nextBackoffRecord(r2, [success(T + 10_000)], []), empty);
  });

  test('podFinishTime: terminated containers, else Ready=False, else deletion start, else creation', () => {
    assert.equal(podFinishTime(failure(T + 7000)), T + 7000);
    const notReady: Pod = { metadata: { name: 'p' }, spec: { containers: [] }, status: { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: iso(T + 3000) }] } };
    assert.equal(podFinishTime(notReady), T + 3000);
    const deleted: Pod = { metadata: { name: 'p', deletionTimestamp: iso(T + 30_000), deletionGracePeriodSeconds: 30 }, spec: { containers: [] } };
    assert.equal(podFinishTime(deleted), T);
    assert.equal(podFinishTime({ metadata: { name: 'p', creationTimestamp: iso(T + 1000) }, spec: { containers: [] } }), T + 1000);
  });

  test('restarts count against backoffLimit with restartPolicy OnFailure only', () => {
    const onFailure = jobView({ spec: { backoffLimit: 3, template: { spec: { restartPolicy: 'OnFailure' } } } });
    const never = jobView({ spec: { backoffLimit: 3, template: { spec: { restartPolicy: 'Never' } } } });
    const pods = [pod('a', { restarts: 2 }), pod('b', { restarts: 1 }), pod('c', { phase: 'Failed', restarts: 9 })];
    assert.equal(pastBackoffLimitOnFailure(onFailure, pods), true);
    assert.equal(pastBackoffLimitOnFailure(onFailure, pods.slice(1)), false);
    assert.equal(pastBackoffLimitOnFailure(never, pods), false);
    assert.equal(pastBackoffLimitOnFailure(jobView({ spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'OnFailure' } } } }), [pod('x', { restarts: 1 })]), true);
  });
});

describe('status and conditions', () => {
  test('ensureCondition: no False condition from nothing; a change replaces it', () => {
    const list: JobCondition[] = [];
    assert.equal(ensureCondition(list, 'Suspended', 'False', 'JobResumed', 'Job resumed', T), false);
    assert.equal(ensureCondition(list, 'Suspended', 'True', 'JobSuspended', 'Job suspended', T), true);
    assert.equal(ensureCondition(list, 'Suspended', 'True', 'JobSuspended', 'Job suspended', T + 5000), false);
    assert.equal(ensureCondition(list, 'Suspended', 'False', 'JobResumed', 'Job resumed', T + 5000), true);
    assert.deepEqual(list, [{ type: 'Suspended', status: 'False', reason: 'JobResumed', message: 'Job resumed', lastProbeTime: iso(T + 5000), lastTransitionTime: iso(T + 5000) }]);
  });

  test('wireStatus omits zero counters, always carries uncountedTerminatedPods, keeps unknown fields', () => {
    const s = readStatus({ status: { active: 2, failed: 0, uncountedTerminatedPods: { succeeded: ['u1'] }, ready: 0, future: 'x' } });
    assert.deepEqual(wireStatus(s), { future: 'x', active: 2, uncountedTerminatedPods: { succeeded: ['u1'] }, ready: 0 });
  });

  test('cleanUncounted moves only uids whose finalizer is gone, once', () => {
    const s = readStatus({ status: { succeeded: 1, uncountedTerminatedPods: { succeeded: ['a', 'b'], failed: ['c'] } } });
    assert.equal(cleanUncounted(s, new Set(['b'])), true);
    assert.deepEqual([s.succeeded, s.failed, s.uncounted.succeeded, s.uncounted.failed], [2, 1, ['b'], []]);
    assert.equal(cleanUncounted(s, new Set(['b'])), false);
  });
});

describe('which active pods go', () => {
  test('the least valuable first: unscheduled, then pending, then not ready', () => {
    const view = jobView({ spec: {} });
    const pods = [pod('ready', { node: 'n', ready: true }), pod('pending', { node: 'n', phase: 'Pending' }), pod('unscheduled', { phase: 'Pending' }), pod('running', { node: 'n' })];
    assert.deepEqual(activePodsForRemoval(view, pods, 3).map((p) => p.metadata.name), ['unscheduled', 'pending', 'running']);
  });

  test('Indexed: invalid and duplicated indexes go even when nothing is surplus', () => {
    const view = jobView({ spec: { completionMode: 'Indexed', completions: 3 } });
    const pods = [pod('a0', { index: 0, node: 'n', ready: true }), pod('b0', { index: 0, phase: 'Pending' }), pod('c1', { index: 1 }), pod('d7', { index: 7 }), pod('none')];
    assert.deepEqual(activePodsForRemoval(view, pods, 0).map((p) => p.metadata.name).sort(), ['b0', 'd7', 'none']);
  });
});
