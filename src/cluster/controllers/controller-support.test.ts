/**
 * The small shared pieces of the workload controllers, as plain functions:
 * expectations (counts, UID-tracked deletions, the 5-minute timeout),
 * slow-start batches, the claim rule of the ControllerRefManager, and the
 * ReplicaSet status computation (availability after minReadySeconds,
 * ReplicaFailure).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatTime } from '../../k8s/time.ts';
import type { KubeObject, Pod } from '../../k8s/types.ts';
import { claimDecision } from './controller-ref-manager.ts';
import { ControllerExpectations, EXPECTATIONS_TIMEOUT_MS } from './expectations.ts';
import { calculateStatus, isPodAvailable, statusNeedsWrite } from './replicaset-status.ts';
import { slowStartBatch } from './slow-start.ts';

const T = Date.UTC(2026, 0, 1);

describe('ControllerExpectations', () => {
  test('a key never set is satisfied; creations are satisfied once all are observed', () => {
    let now = T;
    const e = new ControllerExpectations(() => now);
    assert.equal(e.satisfied('ns/a'), true);
    e.expectCreations('ns/a', 2);
    assert.equal(e.satisfied('ns/a'), false);
    e.creationObserved('ns/a');
    assert.equal(e.satisfied('ns/a'), false);
    e.creationObserved('ns/a');
    assert.equal(e.satisfied('ns/a'), true);
    now += 1;
    e.creationObserved('ns/a'); // an extra observation only lowers further
    assert.equal(e.get('ns/a')?.add, -1);
  });

  test('deletions count only for the pods chosen, each once', () => {
    const e = new ControllerExpectations(() => T);
    e.expectDeletions('ns/a', ['ns/p1', 'ns/p2']);
    e.deletionObserved('ns/a', 'ns/other');
    e.deletionObserved('ns/a', 'ns/p1');
    e.deletionObserved('ns/a', 'ns/p1');
    assert.deepEqual(e.get('ns/a'), { add: 0, del: 1, timestamp: T, deleteKeys: ['ns/p2'] });
    e.deletionObserved('ns/a', 'ns/p2');
    assert.equal(e.satisfied('ns/a'), true);
  });

  test('outstanding expectations expire after 5 minutes (strictly), and deleting the key forgets them', () => {
    let now = T;
    const e = new ControllerExpectations(() => now);
    e.expectCreations('ns/a', 1);
    now = T + EXPECTATIONS_TIMEOUT_MS;
    assert.equal(e.satisfied('ns/a'), false);
    now += 1;
    assert.equal(e.satisfied('ns/a'), true);
    e.expectCreations('ns/b', 3);
    e.delete('ns/b');
    assert.equal(e.get('ns/b'), undefined);
  });
});

describe('slowStartBatch', () => {
  const cases: { count: number; failAt?: number; batches: number[]; successes: number }[] = [
    { count: 0, batches: [], successes: 0 },
    { count: 1, batches: [1], successes: 1 },
    { count: 10, batches: [1, 2, 4, 3], successes: 10 },
    { count: 10, failAt: 1, batches: [1], successes: 0 },
    { count: 10, failAt: 5, batches: [1, 2, 4], successes: 6 },
  ];
  for (const c of cases) {
    test(`${c.count} calls${c.failAt !== undefined ? `, call ${c.failAt} fails` : ''}: batches ${JSON.stringify(c.batches)}`, async () => {
      let n = 0;
      const r = await slowStartBatch(c.count, 1, async () => {
        if (++n === c.failAt) throw new Error(`call ${n}`);
      });
      assert.deepEqual(r.batches, c.batches);
      assert.equal(r.successes, c.successes);
      assert.equal(n, c.batches.reduce((a, b) => a + b, 0), 'every call of the batches made, none after');
      assert.equal(r.error instanceof Error ? r.error.message : undefined, c.failAt !== undefined ? `call ${c.failAt}` : undefined);
    });
  }

  test('property: batches double from 1 (the last cut to what remains) and stop after the first failing one', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 300 }), fc.option(fc.integer({ min: 1, max: 300 }), { nil: undefined }), async (count, failAt) => {
        let n = 0;
        const r = await slowStartBatch(count, 1, async () => {
          if (++n === failAt) throw new Error('x');
        });
        r.batches.forEach((b, i) => assert.ok(b === 2 ** i || i === r.batches.length - 1));
        const made = r.batches.reduce((a, b) => a + b, 0);
        assert.equal(n, made);
        if (failAt === undefined || failAt > count) assert.deepEqual([made, r.successes, r.error], [count, count, undefined]);
        else assert.ok(made >= failAt && made - (r.batches.at(-1) ?? 0) < failAt && r.successes === made - 1);
      }),
    );
  });
});

describe('claimDecision', () => {
  const owner: KubeObject = { metadata: { uid: 'rs-1', namespace: 'ns' } };
  const ref = (uid: string) => [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'x', uid, controller: true }];
  const obj = (meta: Record<string, unknown>): KubeObject => ({ metadata: { namespace: 'ns', ...meta } });
  const cases: { name: string; o: KubeObject; controller?: KubeObject; matches: boolean; want: string }[] = [
    { name: 'owned by us and matching', o: obj({ ownerReferences: ref('rs-1') }), matches: true, want: 'claimed' },
    { name: 'owned by us, no longer matching', o: obj({ ownerReferences: ref('rs-1') }), matches: false, want: 'release' },
    { name: 'owned by us, not matching, we are being deleted', o: obj({ ownerReferences: ref('rs-1') }), controller: { metadata: { uid: 'rs-1', deletionTimestamp: 'x' } }, matches: false, want: 'ignore' },
    { name: 'owned by another controller', o: obj({ ownerReferences: ref('rs-2') }), matches: true, want: 'ignore' },
    { name: 'matching orphan', o: obj({}), matches: true, want: 'adopt' },
    { name: 'orphan being deleted', o: obj({ deletionTimestamp: 'x' }), matches: true, want: 'ignore' },
    { name: 'orphan of another namespace', o: { metadata: { namespace: 'other' } }, matches: true, want: 'ignore' },
    { name: 'non-matching orphan', o: obj({}), matches: false, want: 'ignore' },
    { name: 'a non-controller owner reference does not own it', o: obj({ ownerReferences: [{ ...ref('rs-2')[0], controller: false }] }), matches: true, want: 'adopt' },
  ];
  for (const c of cases) test(c.name, () => assert.equal(claimDecision(c.o, c.controller ?? owner, c.matches), c.want));
});

describe('ReplicaSet status', () => {
  const readyPod = (readySince: number, labels: Record<string, string> = { app: 'web', tier: 'a' }): Pod => ({
    metadata: { labels },
    spec: { containers: [] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: formatTime(readySince) }] },
  });
  const rs = (replicas: number, extra: Record<string, unknown> = {}): KubeObject => ({
    metadata: { generation: 3 },
    spec: { replicas, minReadySeconds: 10, template: { metadata: { labels: { app: 'web', tier: 'a' } } } },
    status: { replicas: 0, ...extra },
  });

  test('available means ready for more than minReadySeconds', () => {
    assert.equal(isPodAvailable(readyPod(T), 10, T + 10_000), false);
    assert.equal(isPodAvailable(readyPod(T), 10, T + 10_001), true);
    assert.equal(isPodAvailable(readyPod(T), 0, T), true);
  });

  test('counts: replicas, fully labeled, ready, available', () => {
    const s = calculateStatus(rs(3), [readyPod(T - 60_000), readyPod(T), readyPod(T - 60_000, { app: 'web' })], {}, T);
    assert.deepEqual([s.replicas, s.fullyLabeledReplicas, s.readyReplicas, s.availableReplicas], [3, 2, 3, 2]);
  });

  test('ReplicaFailure: FailedCreate when short, FailedDelete when over, kept while failing, removed after a clean round', () => {
    const failed = calculateStatus(rs(3), [readyPod(T)], { error: 'denied' }, T);
    assert.deepEqual(failed.conditions, [{ type: 'ReplicaFailure', status: 'True', lastTransitionTime: formatTime(T), reason: 'FailedCreate', message: 'denied' }]);
    const over = calculateStatus(rs(0), [readyPod(T)], { error: 'nope' }, T);
    assert.equal(over.conditions?.[0]?.reason, 'FailedDelete');
    const still = calculateStatus(rs(3, { conditions: failed.conditions }), [readyPod(T)], { error: 'denied again' }, T + 5_000);
    assert.deepEqual(still.conditions, failed.conditions, 'the first failure stays as it was');
    const healed = calculateStatus(rs(3, { conditions: failed.conditions }), [readyPod(T)], {}, T);
    assert.deepEqual(healed.conditions, []);
  });

  test('nothing to write when the counts, conditions and observed generation are current', () => {
    const cur = rs(1, { replicas: 1, fullyLabeledReplicas: 1, readyReplicas: 1, availableReplicas: 1, observedGeneration: 3 });
    assert.equal(statusNeedsWrite(cur, calculateStatus(cur, [readyPod(T - 60_000)], {}, T)), false);
    assert.equal(statusNeedsWrite({ ...cur, metadata: { generation: 4 } }, calculateStatus(cur, [readyPod(T - 60_000)], {}, T)), true);
  });
});
