import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VERSION_IGNORED } from '../api/keys.ts';
import type { Pod } from '../k8s/types.ts';
import type { RecentPlacement } from './cluster-view.ts';
import { countPlaced, placedKeys, tallyPods } from './placed-count.ts';

const MARKER = 'apps.kruise.io/matched-workloadspread';

function pod(name: string, subset: string, opts: { ws?: string; uid?: string; phase?: string; hash?: string } = {}): Pod {
  const marker = { name: opts.ws ?? 'spread', subset, ...(opts.uid === undefined ? {} : { uid: opts.uid }) };
  return {
    metadata: {
      name,
      namespace: 'ns',
      labels: { 'pod-template-hash': opts.hash ?? 'v1' },
      annotations: { [MARKER]: JSON.stringify(marker) },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-v1', uid: 'rs', controller: true }],
    },
    spec: { containers: [{ name: 'main' }] },
    status: { phase: opts.phase ?? 'Running' },
  };
}

const SUBSETS = ['a', 'b', 'c'];
/** Counts per subset (zeros left out) of `countPlaced` over `tallyPods`. */
function counted(pods: Pod[], recent: RecentPlacement[], version: string): Record<string, number> {
  const count = countPlaced(tallyPods(pods, 'ns', 'spread', version), recent, version);
  return Object.fromEntries(SUBSETS.map((s) => [s, count(s)]).filter(([, n]) => n !== 0));
}

describe('countPlaced over tallyPods (D21: places of subsets without reservations)', () => {
  test('counts the active pods of one version per subset of this WorkloadSpread', () => {
    const pods = [
      pod('a-1', 'a'),
      pod('a-2', 'a'),
      pod('c-1', 'c'),
      pod('c-2', 'c', { phase: 'Succeeded' }),
      pod('c-3', 'c', { hash: 'v2' }),
      pod('x-1', 'c', { ws: 'other' }),
      pod('u-1', ''),
    ];
    assert.deepEqual(counted(pods, [], 'v1'), { a: 2, c: 1 });
    assert.deepEqual(counted(pods, [], 'v2'), { c: 1 });
    const elsewhere = pods.map((p) => ({ ...p, metadata: { ...p.metadata, namespace: 'other-ns' } }));
    assert.deepEqual(counted(elsewhere, [], 'v1'), {}, 'another namespace\'s pods do not count');
  });

  test('a recent placement counts once: until a pod answers to it by name or marker uid', () => {
    const recent: RecentPlacement[] = [
      { key: 'c-9', subset: 'c', version: 'v1' },
      { key: 'uid-7', subset: 'c', version: 'v1' },
      { key: 'c-8', subset: 'c', version: 'v2' },
    ];
    assert.deepEqual(counted([pod('c-1', 'c')], recent, 'v1'), { c: 3 });
    assert.deepEqual(counted([pod('c-1', 'c')], [...recent, recent[0]!], 'v1'), { c: 3 }, 'the same key twice counts once');
    // The named pod and the unnamed one (by its marker uid) are shown now: counted from the pods alone.
    const shown = [pod('c-1', 'c'), pod('c-9', 'c'), pod('c-x7', 'c', { uid: 'uid-7' })];
    assert.deepEqual(counted(shown, recent, 'v1'), { c: 3 });
    // A shown pod that finished still answers to its placement: not counted twice, not counted at all.
    const finished = [pod('c-1', 'c'), pod('c-9', 'c', { phase: 'Failed' })];
    assert.deepEqual(counted(finished, recent.slice(0, 1), 'v1'), { c: 1 });
    // A pod of another WorkloadSpread with the same name does not answer for this one.
    assert.deepEqual(counted([pod('c-9', 'c', { ws: 'other' })], recent.slice(0, 1), 'v1'), { c: 1 });
  });

  test('placedKeys: an unplaced or foreign marker adds nothing; an inactive pod only answers', () => {
    assert.deepEqual(placedKeys(pod('u', '')), { counts: [], answers: [] });
    assert.deepEqual(placedKeys({ metadata: { name: 'n', namespace: 'ns' }, spec: { containers: [] } }), { counts: [], answers: [] });
    const done = placedKeys(pod('d', 'a', { phase: 'Succeeded', uid: 'u1' }));
    assert.deepEqual(done.counts, []);
    assert.equal(done.answers.length, 2);
    assert.equal(placedKeys(pod('r', 'a')).counts.length, 1, 'a ReplicaSet\'s pod has one version under either reading');
    const cloned = pod('k', 'a');
    cloned.metadata.ownerReferences = [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web', uid: 'cs', controller: true }];
    assert.equal(placedKeys(cloned).counts.length, 2, 'a CloneSet\'s pod: one key per cloneSetRecreate reading');
    const tally = (version: string, cloneSetRecreate: boolean) => countPlaced(tallyPods([cloned], 'ns', 'spread', version, { cloneSetRecreate }), [], version)('a');
    assert.deepEqual([tally('v1', true), tally(VERSION_IGNORED, false), tally('v1', false), tally(VERSION_IGNORED, true)], [1, 1, 0, 0]);
  });
});
