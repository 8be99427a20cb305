/**
 * The pod cache keeps admission's place counts (D21) as an index of its
 * store; `placedTallyOf` over it must agree with `tallyPods` over the same
 * pods after any sequence of adds, updates and deletes — for every recent
 * placement the webhook still lists (those whose pod the cache does not show
 * by marker uid: `RecentPlacements.seen` forgets the others).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Store } from '../client/store.ts';
import { countPlaced, tallyPods } from '../core/placed-count.ts';
import type { Pod } from '../k8s/types.ts';
import { indexPodStore, placedTallyOf } from './caches.ts';

const WS = ['w1', 'w2'];
const SUBSETS = ['a', 'b', ''];
const VERSIONS = ['v1', 'v2'];

function pod(name: string, ws: string, subset: string, version: string, phase: string, uid: boolean, rv: number, owner: 'ReplicaSet' | 'CloneSet'): Pod {
  const marker = JSON.stringify({ name: ws, subset, ...(uid ? { uid: `uid-${name}` } : {}) });
  return {
    metadata: {
      name,
      namespace: 'ns',
      resourceVersion: String(rv),
      labels: { 'pod-template-hash': version, 'controller-revision-hash': `web-${version}` },
      annotations: { 'apps.kruise.io/matched-workloadspread': marker },
      ownerReferences: [{ apiVersion: owner === 'CloneSet' ? 'apps.kruise.io/v1alpha1' : 'apps/v1', kind: owner, name: 'web', uid: 'o', controller: true }],
    },
    spec: { containers: [{ name: 'main' }] },
    status: { phase },
  };
}

const op = fc.record({
  name: fc.constantFrom('p0', 'p1', 'p2', 'p3', 'p4', 'p5'),
  del: fc.boolean(),
  ws: fc.constantFrom(...WS),
  subset: fc.constantFrom(...SUBSETS),
  version: fc.constantFrom(...VERSIONS),
  phase: fc.constantFrom('Pending', 'Running', 'Succeeded', 'Failed'),
  uid: fc.boolean(),
  owner: fc.constantFrom('ReplicaSet' as const, 'CloneSet' as const),
});

describe('the pod cache\'s place tally (D21)', () => {
  test('agrees with tallyPods after any sequence of pod changes', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const store = new Store<Pod>();
        indexPodStore(store);
        let rv = 1;
        for (const o of ops) {
          const p = pod(o.name, o.ws, o.subset, o.version, o.phase, o.uid, rv++, o.owner);
          store.handle(o.del ? { type: 'delete', object: p } : { type: 'apply', object: p });
        }
        const pods = store.list();
        // Named placements (shown or not) and placements by marker uid whose pod the cache does not show.
        const shownUids = new Set(pods.map((p) => /"uid":"([^"]+)"/.exec(p.metadata.annotations?.['apps.kruise.io/matched-workloadspread'] ?? '')?.[1]));
        const recent = ['p0', 'p3', 'uid-p1', 'uid-p5', 'gone']
          .filter((key) => !shownUids.has(key))
          .map((key, i) => ({ key, subset: SUBSETS[i % 2] ?? 'a', version: VERSIONS[i % 2] ?? 'v1' }));
        for (const ws of WS) {
          for (const version of VERSIONS) {
            for (const cloneSetRecreate of [false, true]) {
              const fromStore = countPlaced(placedTallyOf(store, 'ns', ws, version, { cloneSetRecreate }), recent, version);
              const fromList = countPlaced(tallyPods(pods, 'ns', ws, version, { cloneSetRecreate }), recent, version);
              for (const subset of SUBSETS) assert.equal(fromStore(subset), fromList(subset), `${ws} ${version} ${cloneSetRecreate} ${subset}`);
            }
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
