/**
 * The Deployment controller's arithmetic, one case per upstream rule:
 * fenceposts, new-set growth, saturation, which set is new, the orderings,
 * proportional scaling (with the rounding leftover), and the revision and
 * replica annotations.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { KubeObject } from '../../k8s/types.ts';
import {
  byCreationTimestamp,
  byRevision,
  bySizeNewer,
  bySizeOlder,
  equalIgnoreHash,
  findActiveOrLatest,
  findNewReplicaSet,
  findOldReplicaSets,
  getProportion,
  isSaturated,
  maxRevision,
  maxSurge,
  maxUnavailable,
  newRSNewReplicas,
  proportionalScale,
  resolveFenceposts,
  setNewReplicaSetAnnotations,
  setReplicasAnnotations,
} from './deployment-util.ts';

const tpl = (image: string, labels: Record<string, string> = { app: 'web' }) => ({ metadata: { labels }, spec: { containers: [{ name: 'app', image }] } });

function deployment(replicas: number, strategy: Record<string, unknown> = { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } }, extra: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', uid: 'd-uid', annotations: {} }, spec: { replicas, strategy, template: tpl('v2') }, status: {}, ...extra };
}

function rs(name: string, replicas: number, o: { created?: string; image?: string; annotations?: Record<string, string>; available?: number; uid?: string } = {}): KubeObject {
  return {
    metadata: { name, uid: o.uid ?? name, creationTimestamp: o.created ?? '2026-01-01T00:00:00Z', annotations: o.annotations ?? {} },
    spec: { replicas, template: tpl(o.image ?? 'v1', { app: 'web', 'pod-template-hash': name }) },
    status: { availableReplicas: o.available ?? 0 },
  };
}

const rolling = (maxSurgeValue: unknown, maxUnavailableValue: unknown) => ({ type: 'RollingUpdate', rollingUpdate: { maxSurge: maxSurgeValue, maxUnavailable: maxUnavailableValue } });

describe('fenceposts', () => {
  const cases: { surge: unknown; unavailable: unknown; desired: number; want: [number, number] }[] = [
    { surge: '25%', unavailable: '25%', desired: 10, want: [3, 2] }, // surge rounds up, unavailable down
    { surge: '25%', unavailable: '25%', desired: 1, want: [1, 0] },
    { surge: 0, unavailable: '25%', desired: 3, want: [0, 1] }, // both resolve to 0 → 1 unavailable
    { surge: '0%', unavailable: '0%', desired: 5, want: [0, 1] },
    { surge: 2, unavailable: 3, desired: 10, want: [2, 3] },
    { surge: '100%', unavailable: '50%', desired: 7, want: [7, 3] },
    { surge: undefined, unavailable: 1, desired: 4, want: [0, 1] }, // unset counts as 0
  ];
  for (const c of cases) {
    test(`maxSurge ${String(c.surge)}, maxUnavailable ${String(c.unavailable)} of ${c.desired} → ${c.want.join(', ')}`, () => {
      const r = resolveFenceposts(c.surge, c.unavailable, c.desired);
      assert.ok(r.ok);
      assert.deepEqual([r.surge, r.unavailable], c.want);
    });
  }

  test('a string that is not a percentage is an error (validation keeps it out)', () => {
    assert.equal(resolveFenceposts('5', 0, 10).ok, false);
  });

  test('MaxUnavailable never exceeds replicas, is 0 for 0 replicas and for Recreate; MaxSurge is 0 for Recreate', () => {
    assert.equal(maxUnavailable(deployment(2, rolling(0, 5))), 2);
    assert.equal(maxUnavailable(deployment(0, rolling(1, 1))), 0);
    assert.equal(maxUnavailable(deployment(5, { type: 'Recreate' })), 0);
    assert.equal(maxSurge(deployment(5, { type: 'Recreate' })), 0);
    assert.equal(maxSurge(deployment(10)), 3);
  });

  test('property: at least one of surge and unavailable is positive', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 1000 }), (s, u, n) => {
        const r = resolveFenceposts(`${s}%`, `${u}%`, n);
        assert.ok(r.ok && r.surge + r.unavailable >= 1 && r.surge >= (s * n) / 100 && r.unavailable <= (u * n) / 100 + 1);
      }),
    );
  });
});

describe('newRSNewReplicas', () => {
  const cases: { name: string; d: KubeObject; sets: [number, number]; want: number }[] = [
    { name: 'grows by what the surge leaves', d: deployment(10, rolling(3, 0)), sets: [10, 0], want: 3 },
    { name: 'cannot grow when the total is at replicas + surge', d: deployment(10, rolling(3, 0)), sets: [8, 5], want: 5 },
    { name: 'never beyond replicas', d: deployment(4, rolling(10, 0)), sets: [1, 2], want: 4 },
    { name: 'Recreate: all at once', d: deployment(4, { type: 'Recreate' }), sets: [0, 0], want: 4 },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const old = rs('old', c.sets[0]);
      const fresh = rs('new', c.sets[1], { image: 'v2' });
      const r = newRSNewReplicas(c.d, [old, fresh], fresh);
      assert.ok(r.ok);
      assert.equal(r.value, c.want);
    });
  }
});

describe('new and old ReplicaSets', () => {
  test('the new set is the oldest one whose template equals the Deployment\'s, ignoring the hash label', () => {
    const a = rs('a', 1, { image: 'v2', created: '2026-01-01T00:00:02Z' });
    const b = rs('b', 1, { image: 'v2', created: '2026-01-01T00:00:01Z' });
    const c = rs('c', 1, { image: 'v1' });
    const d = deployment(3);
    assert.equal(findNewReplicaSet(d, [a, b, c])?.metadata?.name, 'b');
    const old = findOldReplicaSets(d, [a, b, c, rs('z', 0)]);
    assert.deepEqual(old.all.map((r) => r.metadata?.name), ['a', 'c', 'z']);
    assert.deepEqual(old.required.map((r) => r.metadata?.name), ['a', 'c']);
  });

  test('equalIgnoreHash: nil and empty are the same, any other difference is not', () => {
    assert.equal(equalIgnoreHash({ metadata: { labels: { app: 'x', 'pod-template-hash': '1' } }, spec: { tolerations: [] } }, { metadata: { labels: { app: 'x' } }, spec: {} }), true);
    assert.equal(equalIgnoreHash(tpl('v1'), tpl('v2')), false);
  });

  test('findActiveOrLatest: the single active set; with none active the new one, else the newest old one; none with two active', () => {
    const older = rs('older', 0, { created: '2026-01-01T00:00:00Z' });
    const newer = rs('newer', 0, { created: '2026-01-01T00:00:05Z' });
    assert.equal(findActiveOrLatest(undefined, [older, newer])?.metadata?.name, 'newer');
    assert.equal(findActiveOrLatest(rs('new', 0), [older, newer])?.metadata?.name, 'new');
    assert.equal(findActiveOrLatest(rs('new', 0), [older, rs('active', 2)])?.metadata?.name, 'active');
    assert.equal(findActiveOrLatest(rs('new', 1), [rs('active', 2)]), undefined);
  });

  test('saturated: full size, desired-replicas says so, all available', () => {
    const d = deployment(3);
    assert.equal(isSaturated(d, rs('n', 3, { annotations: { 'deployment.kubernetes.io/desired-replicas': '3' }, available: 3 })), true);
    assert.equal(isSaturated(d, rs('n', 3, { annotations: { 'deployment.kubernetes.io/desired-replicas': '3' }, available: 2 })), false);
    assert.equal(isSaturated(d, rs('n', 3, { available: 3 })), false);
  });

  test('orderings: by creation (name breaks ties), by size with newer/older first among equals, by revision', () => {
    const sets = [rs('b', 2, { created: '2026-01-01T00:00:01Z' }), rs('a', 2, { created: '2026-01-01T00:00:01Z' }), rs('c', 5, { created: '2026-01-01T00:00:00Z' })];
    assert.deepEqual([...sets].sort(byCreationTimestamp).map((r) => r.metadata?.name), ['c', 'a', 'b']);
    const e = rs('e', 2, { created: '2026-01-01T00:00:09Z' });
    assert.deepEqual([...sets, e].sort(bySizeNewer).map((r) => r.metadata?.name), ['c', 'e', 'b', 'a']);
    assert.deepEqual([...sets, e].sort(bySizeOlder).map((r) => r.metadata?.name), ['c', 'a', 'b', 'e']);
    const rev = (n: string, r: string) => rs(n, 0, { annotations: { 'deployment.kubernetes.io/revision': r } });
    assert.deepEqual([rev('x', '10'), rev('y', '2'), rs('none', 0)].sort(byRevision).map((r) => r.metadata?.name), ['none', 'y', 'x']);
    assert.equal(maxRevision([rev('x', '10'), rev('y', 'garbage'), rev('z', '3')]), 10);
  });
});

describe('proportional scaling', () => {
  const annotated = (name: string, size: number, max: number, created: string) => rs(name, size, { created, annotations: { 'deployment.kubernetes.io/max-replicas': String(max) } });

  test('the worked example: 8 and 5 of 13, scaled to 20 + 3 → 14 and 9', () => {
    const d = deployment(20, rolling(3, 2));
    const plan = proportionalScale(d, [annotated('old', 8, 13, '2026-01-01T00:00:00Z'), annotated('new', 5, 13, '2026-01-01T00:01:00Z')]);
    assert.equal(plan.operation, 'up');
    assert.deepEqual(plan.sizes.map((s) => [s.rs.metadata?.name, s.size]), [['old', 14], ['new', 9]]);
  });

  test('what rounding leaves goes to the first set: the largest, the newest among equals when growing', () => {
    // Three sets of 3, sized when the Deployment allowed 12, now allowed 10: each gets 3·10/12 = 2.5 → 3 (+0),
    // so the one replica to add is left over.
    const d = deployment(10, rolling(0, 1));
    const sets = [annotated('a', 3, 12, '2026-01-01T00:00:00Z'), annotated('b', 3, 12, '2026-01-01T00:00:01Z'), annotated('c', 3, 12, '2026-01-01T00:00:02Z')];
    const plan = proportionalScale(d, sets);
    assert.deepEqual(plan.sizes.map((s) => [s.rs.metadata?.name, s.size]), [['c', 4], ['b', 3], ['a', 3]]);
  });

  test('scaling to 0 takes every set down completely, oldest among equals first', () => {
    const d = deployment(0, rolling(3, 0));
    const plan = proportionalScale(d, [annotated('a', 4, 13, '2026-01-01T00:00:00Z'), annotated('b', 4, 13, '2026-01-01T00:00:05Z')]);
    assert.equal(plan.operation, 'down');
    assert.deepEqual(plan.sizes.map((s) => [s.rs.metadata?.name, s.size]), [['a', 0], ['b', 0]]);
  });

  test('without the max-replicas annotation the Deployment\'s status.replicas is the base', () => {
    const d = deployment(20, rolling(0, 1), { status: { replicas: 10 } });
    assert.equal(getProportion(rs('x', 5), d, 10, 0), 5);
  });

  test('property: the sets end with exactly what the Deployment allows, none below 0', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 4 }), fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 5 }), (sizes, replicas, surge) => {
        const total = sizes.reduce((a, b) => a + b, 0);
        const sets = sizes.map((n, i) => annotated(`s${i}`, n, total, `2026-01-01T00:00:0${i}Z`));
        const d = deployment(replicas, rolling(surge, 1));
        const plan = proportionalScale(d, sets);
        const after = plan.sizes.reduce((a, s) => a + s.size, 0);
        assert.ok(plan.sizes.every((s) => s.size >= 0));
        assert.equal(after, replicas === 0 ? 0 : replicas + surge);
      }),
    );
  });
});

describe('annotations', () => {
  test('a new set gets the Deployment\'s annotations except the skipped ones, the revision and the replica annotations', () => {
    const d = deployment(4, rolling(1, 0));
    d.metadata = { ...d.metadata, annotations: { team: 'blue', 'kubectl.kubernetes.io/last-applied-configuration': '{}', 'deployment.kubernetes.io/revision': '9' } };
    const set: KubeObject = { metadata: { name: 'n' } };
    assert.equal(setNewReplicaSetAnnotations(d, set, 3, false), true);
    assert.deepEqual(set.metadata?.annotations, {
      team: 'blue',
      'deployment.kubernetes.io/revision': '3',
      'deployment.kubernetes.io/desired-replicas': '4',
      'deployment.kubernetes.io/max-replicas': '5',
    });
    assert.equal(setNewReplicaSetAnnotations(d, set, 3, true), false, 'nothing left to change');
  });

  test('a reused set only moves its revision up, remembering the old one in the history', () => {
    const d = deployment(1);
    const set: KubeObject = { metadata: { annotations: { 'deployment.kubernetes.io/revision': '2' } } };
    setNewReplicaSetAnnotations(d, set, 5, true);
    assert.equal(set.metadata?.annotations?.['deployment.kubernetes.io/revision'], '5');
    assert.equal(set.metadata?.annotations?.['deployment.kubernetes.io/revision-history'], '2');
    setNewReplicaSetAnnotations(d, set, 7, true);
    assert.equal(set.metadata?.annotations?.['deployment.kubernetes.io/revision-history'], '2,5');
    assert.equal(setNewReplicaSetAnnotations(d, set, 4, true), false, 'a lower revision never replaces a higher one');
  });

  test('the history drops its oldest entries beyond the length limit', () => {
    const d = deployment(1);
    const set: KubeObject = { metadata: { annotations: { 'deployment.kubernetes.io/revision': '30', 'deployment.kubernetes.io/revision-history': '10,20' } } };
    setNewReplicaSetAnnotations(d, set, 40, true, 6);
    assert.equal(set.metadata?.annotations?.['deployment.kubernetes.io/revision-history'], '20,30');
  });

  test('setReplicasAnnotations reports whether it changed anything', () => {
    const set: KubeObject = { metadata: {} };
    assert.equal(setReplicasAnnotations(set, 3, 4), true);
    assert.equal(setReplicasAnnotations(set, 3, 4), false);
  });
});
