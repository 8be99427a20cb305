/**
 * The pure parts of a StatefulSet's revision history and pod identity: the
 * FNV-1 hash (published test vectors), Go-style JSON, revision names and
 * their stability, equality and ordering of revisions, applying a revision,
 * ordinals parsed from names, and the replica counters.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { KubeObject, Pod } from '../../k8s/types.ts';
import { isRunningAndAvailable, newStatefulSetPod, parentAndOrdinal, replicaCounts, specView } from './statefulset-pods.ts';
import {
  applyRevision,
  fnv32,
  goJson,
  hashRevision,
  newRevision,
  nextRevisionNumber,
  revisionName,
  sortRevisions,
  templateOf,
  type ControllerRevision,
} from './statefulset-revisions.ts';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

function set(image = 'nginx:1.25', extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'web', namespace: 'default', uid: 'u-1', annotations: { team: 'a' } },
    spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image }] } }, ...extra },
  };
}

describe('hashing', () => {
  test('fnv32 is FNV-1 (published 32-bit vectors)', () => {
    assert.equal(fnv32(bytes('')), 0x811c9dc5);
    assert.equal(fnv32(bytes('a')), 0x050c5d7e);
    assert.equal(fnv32(bytes('foobar')), 0x31f0b262);
  });

  test('goJson sorts keys at every level and escapes HTML characters as Go does', () => {
    assert.equal(goJson({ b: 1, a: { d: '<&>', c: [2, { z: 1, y: 2 }] } }), '{"a":{"c":[2,{"y":2,"z":1}],"d":"\\u003c\\u0026\\u003e"},"b":1}');
  });

  test('a revision name is stable, follows the template, and the collision count', () => {
    const a = newRevision(set(), 1, 0);
    assert.equal(newRevision(set(), 1, 0).metadata?.name, a.metadata?.name);
    assert.notEqual(newRevision(set('nginx:1.26'), 1, 0).metadata?.name, a.metadata?.name);
    assert.notEqual(newRevision(set(), 1, 1).metadata?.name, a.metadata?.name);
    // The revision number and the replica count are not part of the name.
    assert.equal(newRevision(set('nginx:1.25', { replicas: 9 }), 7, 0).metadata?.name, a.metadata?.name);
  });

  test('property: the hash does not depend on key order', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 6 }), (obj) => {
        const reversed = Object.fromEntries(Object.entries(obj).reverse());
        assert.equal(hashRevision(obj, 0), hashRevision(reversed, 0));
      }),
    );
  });

  test('revisionName cuts long prefixes to 223 characters', () => {
    assert.equal(revisionName('x'.repeat(300), 'abc'), `${'x'.repeat(223)}-abc`);
    assert.equal(revisionName('web', 'abc'), 'web-abc');
  });
});

describe('revisions', () => {
  test('newRevision records the template to replace, the template labels, the set annotations and a controller ref', () => {
    const r = newRevision(set(), 4, 0);
    assert.equal(r.revision, 4);
    assert.deepEqual((r.data as { spec: { template: Record<string, unknown> } }).spec.template['$patch'], 'replace');
    assert.equal(r.metadata?.labels?.['app'], 'web');
    assert.equal(r.metadata?.annotations?.['team'], 'a');
    assert.deepEqual(r.metadata?.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'u-1', controller: true, blockOwnerDeletion: true }]);
  });

  test('applyRevision brings back the recorded template; property: round trip', () => {
    const old = newRevision(set('nginx:1.25'), 1, 0);
    const applied = applyRevision(set('nginx:1.26'), old);
    assert.deepEqual(templateOf(applied), templateOf(set('nginx:1.25')));
    fc.assert(
      fc.property(fc.string(), fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.string({ maxLength: 8 }), { noNullPrototype: true }), (image, labels) => {
        const s = set(image);
        ((s['spec'] as Record<string, unknown>)['template'] as { metadata: { labels: Record<string, string> } }).metadata.labels = labels;
        assert.deepEqual(templateOf(applyRevision(set('other'), newRevision(s, 1, 0))), templateOf(s));
      }),
    );
  });

  test('applyRevision ignores malformed data', () => {
    const s = set('nginx:1.26');
    assert.equal(applyRevision(s, { data: 'nonsense' }), s);
    assert.equal(applyRevision(s, { data: { spec: { template: 7 } } }), s);
  });

  test('sortRevisions orders by number, then creation time, then name; nextRevisionNumber follows the last', () => {
    const r = (name: string, revision: number, t: string): ControllerRevision => ({ metadata: { name, creationTimestamp: t }, revision });
    const sorted = sortRevisions([r('c', 2, '2026-01-01T00:00:01Z'), r('b', 1, '2026-01-01T00:00:05Z'), r('a', 2, '2026-01-01T00:00:01Z'), r('d', 2, '2026-01-01T00:00:00Z')]);
    assert.deepEqual(sorted.map((x) => x.metadata?.name), ['b', 'd', 'a', 'c']);
    assert.equal(nextRevisionNumber(sorted), 3);
    assert.equal(nextRevisionNumber([]), 1);
  });
});

describe('pod identity and counters', () => {
  test('parentAndOrdinal reads <parent>-<int32>', () => {
    const cases: [string, [string, number]][] = [
      ['web-0', ['web', 0]],
      ['my-web-12', ['my-web', 12]],
      ['web', ['', -1]],
      ['web-', ['', -1]],
      ['web-x1', ['', -1]],
      ['web-2147483648', ['web', -1]],
    ];
    for (const [name, want] of cases) assert.deepEqual(parentAndOrdinal(name), want, name);
  });

  test('specView tolerates malformed specs and counts a nil replicas as 1', () => {
    const v = specView({ spec: { replicas: 'x', updateStrategy: 'bad', minReadySeconds: -3 } });
    assert.equal(v.replicas, 1);
    assert.equal(v.onDelete, false);
    assert.equal(v.rollingUpdate, undefined);
    assert.equal(v.minReadySeconds, 0);
    assert.equal(specView({}).revisionHistoryLimit, 10);
  });

  test('newStatefulSetPod survives a set without a template', () => {
    const pod = newStatefulSetPod({ metadata: { name: 'web', namespace: 'n', uid: 'u' } }, 2, 'web-abc');
    assert.equal(pod.metadata.name, 'web-2');
    assert.deepEqual(pod.spec.containers, []);
  });

  test('replicaCounts: created, ready, available after minReadySeconds, current and updated (not terminating)', () => {
    const now = Date.UTC(2026, 0, 1, 0, 10);
    const pod = (rev: string, phase: string, readySince?: number, terminating = false): Pod => ({
      metadata: { name: 'web-0', labels: { 'controller-revision-hash': rev }, ...(terminating ? { deletionTimestamp: '2026-01-01T00:09:00Z' } : {}) },
      spec: { containers: [] },
      status: { phase, conditions: readySince === undefined ? [] : [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(readySince).toISOString() }] },
    });
    const pods = [pod('a', 'Running', now - 60_000), pod('a', 'Running', now - 5_000), pod('b', 'Pending'), pod('b', 'Running', now - 60_000, true), { metadata: { name: 'web-9' }, spec: { containers: [] } } as Pod];
    assert.deepEqual(replicaCounts(pods, 10, 'a', 'b', now), { replicas: 4, readyReplicas: 3, availableReplicas: 2, currentReplicas: 2, updatedReplicas: 1 });
    assert.equal(isRunningAndAvailable(pods[1] as Pod, 5, now), false, 'exactly minReadySeconds is not yet available');
  });
});
