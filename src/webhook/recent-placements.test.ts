import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { MATCHED_WORKLOADSPREAD_ANNOTATION as MARKER_ANNOTATION } from '../api/keys.ts';
import type { Pod } from '../k8s/types.ts';
import { RecentPlacements } from './recent-placements.ts';

const clock = () => new VirtualClock(1_000_000);

function pod(name: string, marker?: object): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'shop', ...(marker === undefined ? {} : { annotations: { [MARKER_ANNOTATION]: JSON.stringify(marker) } }) }, spec: { containers: [] } } as Pod;
}

describe('RecentPlacements (D21)', () => {
  test('lists placements per WorkloadSpread in admission order', () => {
    const r = new RecentPlacements(clock());
    r.record('ws-1', { key: 'p1', subset: 'c', version: 'v1' });
    r.record('ws-2', { key: 'p2', subset: 'c', version: 'v1' });
    r.record('ws-1', { key: 'p3', subset: 'b', version: 'v1' });
    assert.deepEqual(r.list('ws-1').map((p) => p.key), ['p1', 'p3']);
    assert.deepEqual(r.list('ws-2').map((p) => p.key), ['p2']);
    assert.deepEqual(r.list('ws-3'), []);
  });

  test('a placement decided again replaces the first (never counted twice)', () => {
    const r = new RecentPlacements(clock());
    r.record('ws-1', { key: 'p1', subset: 'a', version: 'v1' });
    r.record('ws-1', { key: 'p1', subset: 'c', version: 'v1' });
    assert.deepEqual(r.list('ws-1'), [{ key: 'p1', subset: 'c', version: 'v1' }]);
    assert.equal(r.size(), 1);
  });

  test('the cache showing the pod (by name, or by its marker uid) drops the entry', () => {
    const r = new RecentPlacements(clock());
    r.record('ws-1', { key: 'web-abc', subset: 'c', version: 'v1' });
    r.record('ws-1', { key: '6f1c-uid', subset: 'c', version: 'v1' });
    r.seen(pod('web-abc'));
    assert.deepEqual(r.list('ws-1').map((p) => p.key), ['6f1c-uid']);
    r.seen(pod('web-xyz', { name: 'spread', subset: 'c', uid: '6f1c-uid' }));
    assert.equal(r.size(), 0);
    r.seen(pod('unrelated'));
    assert.equal(r.size(), 0);
  });

  test('an entry the cache never shows expires after the TTL', async () => {
    const c = clock();
    const r = new RecentPlacements(c, 30_000);
    r.record('ws-1', { key: 'p1', subset: 'c', version: 'v1' });
    await c.advance(20_000);
    r.record('ws-1', { key: 'p2', subset: 'c', version: 'v1' });
    await c.advance(10_000);
    assert.deepEqual(r.list('ws-1').map((p) => p.key), ['p2']);
    await c.advance(20_000);
    assert.deepEqual(r.list('ws-1'), []);
    assert.equal(r.size(), 0);
    // A key that expired can be recorded again.
    r.record('ws-1', { key: 'p1', subset: 'c', version: 'v1' });
    assert.equal(r.list('ws-1').length, 1);
  });
});
