/**
 * ws-state: resourceVersion ordering as integers, the per-UID FIFO lock
 * (exclusive per UID, independent across UIDs, released on throw, no leftover
 * entries), and the remembered copy (never replaced by an older one, freshest
 * of cache/local by resourceVersion, forgotten on demand, bounded).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { compareResourceVersions, WorkloadSpreadState } from './ws-state.ts';

function ws(name: string, rv: string | undefined, uid = 'u1', namespace = 'ns'): WorkloadSpread {
  return {
    metadata: { name, namespace, uid, ...(rv === undefined ? {} : { resourceVersion: rv }) },
    spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' }, subsets: [{ name: 'a' }] },
  };
}

describe('compareResourceVersions', () => {
  const cases: [string | undefined, string | undefined, number][] = [
    ['9', '10', -1], // integers, not strings: "9" > "10" as text
    ['10', '9', 1],
    ['42', '42', 0],
    ['123456789012345678901', '123456789012345678900', 1], // beyond 2^53
    [undefined, '1', -1],
    ['1', 'abc', 1],
    [undefined, undefined, 0],
    ['abc', 'abd', 0], // two opaque versions cannot be ordered
  ];
  for (const [a, b, want] of cases) {
    test(`${String(a)} vs ${String(b)} → ${want}`, () => assert.equal(Math.sign(compareResourceVersions(a, b)), want));
  }
  test('antisymmetric on integers', () => {
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.bigInt({ min: 0n, max: 10n ** 20n }), (a, b) => {
      const x = compareResourceVersions(String(a), String(b));
      const y = compareResourceVersions(String(b), String(a));
      return Math.sign(x) === -Math.sign(y) && (x === 0) === (a === b) && (x < 0) === (a < b);
    }));
  });
});

describe('WorkloadSpreadState lock', () => {
  test('flows of one UID run one at a time, in arrival order', async () => {
    const state = new WorkloadSpreadState();
    const log: string[] = [];
    let inside = 0;
    let maxInside = 0;
    const flow = (id: string) =>
      state.withLock('u1', async () => {
        inside++;
        maxInside = Math.max(maxInside, inside);
        log.push(`start ${id}`);
        await new Promise((r) => setImmediate(r));
        log.push(`end ${id}`);
        inside--;
        return id;
      });
    const results = await Promise.all([flow('a'), flow('b'), flow('c')]);
    assert.deepEqual(results, ['a', 'b', 'c']);
    assert.equal(maxInside, 1);
    assert.deepEqual(log, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    assert.equal(state.isLocked('u1'), false, 'no entry is left behind');
  });

  test('different UIDs do not wait for each other', async () => {
    const state = new WorkloadSpreadState();
    let release!: () => void;
    const held = state.withLock('u1', () => new Promise<void>((r) => (release = r)));
    const other = await state.withLock('u2', async () => 'ran');
    assert.equal(other, 'ran');
    assert.equal(state.isLocked('u1'), true);
    release();
    await held;
  });

  test('a throwing flow releases the lock for the next one', async () => {
    const state = new WorkloadSpreadState();
    const first = state.withLock('u1', async () => {
      throw new Error('boom');
    });
    const second = state.withLock('u1', async () => 'next');
    assert.equal(state.waiting('u1'), 1);
    await assert.rejects(first, /boom/);
    assert.equal(await second, 'next');
    assert.equal(state.isLocked('u1'), false);
  });
});

describe('WorkloadSpreadState remembered copies', () => {
  test('an older copy never replaces a newer one', () => {
    const state = new WorkloadSpreadState();
    state.remember(ws('w', '10'));
    state.remember(ws('w', '9'));
    assert.equal(state.lastWritten('ns', 'w')?.metadata.resourceVersion, '10');
    state.remember(ws('w', '11'));
    assert.equal(state.lastWritten('ns', 'w')?.metadata.resourceVersion, '11');
  });

  test('freshest picks the larger resourceVersion; the cache wins ties and stands alone', () => {
    const state = new WorkloadSpreadState();
    const cached = ws('w', '100');
    assert.equal(state.freshest(cached), cached, 'nothing remembered: the cache');
    state.remember(ws('w', '101'));
    assert.equal(state.freshest(cached)?.metadata.resourceVersion, '101', 'our own write is newer than the informer');
    const newer = ws('w', '102');
    assert.equal(state.freshest(newer), newer, 'the informer caught up');
    const same = ws('w', '101');
    assert.equal(state.freshest(same), same, 'ties go to the cache');
    assert.equal(state.freshest(undefined, 'ns', 'w')?.metadata.resourceVersion, '101', 'not cached: the remembered copy');
  });

  test('forget drops the copy (the WorkloadSpread is gone)', () => {
    const state = new WorkloadSpreadState();
    state.remember(ws('w', '5'));
    state.forget('ns', 'w');
    assert.equal(state.lastWritten('ns', 'w'), undefined);
    assert.equal(state.freshest(undefined, 'ns', 'w'), undefined);
  });

  test('copies are kept per namespace/name and bounded (least recently written dropped)', () => {
    const state = new WorkloadSpreadState({ maxEntries: 2 });
    state.remember(ws('a', '1'));
    state.remember(ws('a', '1', 'u1', 'other'));
    assert.equal(state.size, 2);
    state.remember(ws('b', '2'));
    assert.equal(state.size, 2);
    assert.equal(state.lastWritten('ns', 'a'), undefined, 'the oldest entry went');
    assert.ok(state.lastWritten('other', 'a'));
    assert.ok(state.lastWritten('ns', 'b'));
  });
});
