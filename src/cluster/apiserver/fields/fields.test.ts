/**
 * Field ownership's building blocks, case by case: set algebra on FieldsV1
 * trees (membership `.`, upstream's key order), how paths print in conflict
 * messages, the comparison of two objects (Added ∪ Modified vs Removed, empty
 * containers as leaves), the field set of an apply configuration (map entries
 * are members, struct fields are not), the merge order of associative lists,
 * and pruning (a field owned below stays, a list element owned only below goes).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { canonical, difference, formatPath, intersection, memberPaths, union, type FieldTree } from './field-set.ts';
import { builtinKindType, customResourceType } from './field-types.ts';
import { appliedFieldSet, compareObjects, mergeApplied, pruneApplied } from './typed-value.ts';

const all = () => true;
const pod = builtinKindType('v1', 'Pod');
const cm = builtinKindType('v1', 'ConfigMap');
if (pod === undefined || cm === undefined) throw new Error('built-in types missing');

describe('field sets', () => {
  test('union keeps membership of either side and upstream order (fields, keys, values; `.` last) of its sorted inputs', () => {
    const a: FieldTree = { 'f:spec': { 'f:b': {} } };
    const b: FieldTree = { 'f:spec': { 'f:a': {}, 'k:{"name":"x"}': {}, '.': {} } };
    const u = union(a, b);
    assert.deepEqual(u, { 'f:spec': { 'f:a': {}, 'f:b': {}, 'k:{"name":"x"}': {}, '.': {} } });
    assert.deepEqual(Object.keys(u['f:spec'] as FieldTree), ['f:a', 'f:b', 'k:{"name":"x"}', '.']);
  });

  test('difference removes members, keeps a parent that is itself a member, returns the input when nothing goes', () => {
    const a: FieldTree = { 'f:data': { '.': {}, 'f:a': {}, 'f:b': {} } };
    assert.deepEqual(difference(a, { 'f:data': { 'f:a': {} } }), { 'f:data': { '.': {}, 'f:b': {} } });
    assert.deepEqual(difference(a, { 'f:data': { 'f:a': {}, 'f:b': {} } }), { 'f:data': {} });
    assert.deepEqual(difference(a, { 'f:data': { '.': {}, 'f:a': {}, 'f:b': {} } }), {});
    assert.equal(difference(a, { 'f:spec': {} }), a);
  });

  test('intersection: only paths that are members on both sides', () => {
    const a: FieldTree = { 'f:spec': { 'f:replicas': {}, 'f:paused': {} } };
    const b: FieldTree = { 'f:spec': { '.': {}, 'f:replicas': {} } };
    assert.deepEqual(intersection(a, b), { 'f:spec': { 'f:replicas': {} } });
    assert.deepEqual(memberPaths(intersection(a, b)), [['f:spec', 'f:replicas']]);
  });

  test('paths print as upstream prints them in conflicts', () => {
    assert.equal(formatPath(['f:spec', 'f:template', 'f:spec', 'f:containers', 'k:{"name":"app"}', 'f:image']), '.spec.template.spec.containers[name="app"].image');
    assert.equal(formatPath(['f:spec', 'f:ports', 'k:{"port":80,"protocol":"TCP"}']), '.spec.ports[port=80,protocol="TCP"]');
    assert.equal(formatPath(['f:metadata', 'f:finalizers', 'v:"example.com/x"']), '.metadata.finalizers[="example.com/x"]');
    assert.equal(formatPath(['f:metadata', 'f:annotations', 'f:example.com/a']), '.metadata.annotations.example.com/a');
  });

  test('canonical sorts a tree received in any order', () => {
    assert.deepEqual(Object.keys(canonical({ '.': {}, 'v:"b"': {}, 'f:z': {}, 'k:{"a":1}': {}, 'f:a': {} })), ['f:a', 'f:z', 'k:{"a":1}', 'v:"b"', '.']);
  });
});

describe('comparing objects', () => {
  test('added and modified fields are changed, removed ones removed; metadata system fields and apiVersion/kind are nobody\'s', () => {
    const live = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: '1', labels: { x: '1' } }, data: { a: '1', b: '2' } };
    const next = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: '2', labels: { x: '2' } }, data: { a: '1', c: '3' } };
    const { changed, removed } = compareObjects(live, next, cm, all);
    assert.deepEqual(changed, { 'f:data': { 'f:c': {} }, 'f:metadata': { 'f:labels': { 'f:x': {} } } });
    assert.deepEqual(removed, { 'f:data': { 'f:b': {} } });
  });

  test('an empty map that was absent or null is a changed leaf; a new map is a member with its entries', () => {
    const { changed } = compareObjects({ spec: { containers: null } }, { spec: { containers: [{ name: 'c', resources: {} }], securityContext: {}, nodeSelector: { zone: 'a' } } }, pod, all);
    assert.deepEqual(changed, {
      'f:spec': {
        'f:containers': { 'k:{"name":"c"}': { 'f:name': {}, 'f:resources': {}, '.': {} } },
        'f:nodeSelector': {},
        'f:securityContext': {},
      },
    });
  });

  test('tracked limits what a write can own (status through the main resource is not)', () => {
    const { changed } = compareObjects({ spec: { containers: [] } }, { spec: { containers: [] }, status: { phase: 'Running' } }, pod, (f) => f !== 'status');
    assert.deepEqual(changed, {});
  });
});

describe('apply configurations', () => {
  test('map entries are members, struct fields only through their leaves, list elements with `.`', () => {
    const set = appliedFieldSet(
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'i', env: [{ name: 'A', value: '1' }] }], affinity: {} } },
      pod,
      all,
    );
    assert.deepEqual(set, {
      'f:metadata': { 'f:labels': { 'f:app': {} } },
      'f:spec': { 'f:containers': { 'k:{"name":"c"}': { 'f:env': { 'k:{"name":"A"}': { 'f:name': {}, 'f:value': {}, '.': {} } }, 'f:image': {}, 'f:name': {}, '.': {} } } },
    });
  });

  test('a preserve-unknown-fields subtree is deduced: its objects are granular maps whose entries are members, its lists atomic', () => {
    const type = customResourceType({ type: 'object', properties: { spec: { type: 'object', properties: { config: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } } });
    const set = appliedFieldSet({ spec: { config: { a: { b: 1 }, list: [1, 2] } } }, type, all);
    assert.deepEqual(set, { 'f:spec': { 'f:config': { 'f:a': { 'f:b': {}, '.': {} }, 'f:list': {} } } });
  });

  test('merging keeps the live order where the configuration leaves it, and the configuration\'s order for what it sets', () => {
    const live = { spec: { containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] } };
    const merged = mergeApplied(live, { spec: { containers: [{ name: 'c', image: 'x' }, { name: 'd' }, { name: 'a' }] } }, pod);
    assert.deepEqual((merged['spec'] as { containers: unknown[] }).containers, [{ name: 'b' }, { name: 'c', image: 'x' }, { name: 'd' }, { name: 'a' }]);
    // Atomic lists (tolerations) are replaced; granular maps merge.
    const m2 = mergeApplied({ spec: { tolerations: [{ key: 'a' }], nodeSelector: { x: '1' } }, metadata: { labels: { a: '1' } } }, { spec: { tolerations: [{ key: 'b' }] }, metadata: { labels: { b: '2' } } }, pod);
    assert.deepEqual(m2, { spec: { tolerations: [{ key: 'b' }], nodeSelector: { x: '1' } }, metadata: { labels: { a: '1', b: '2' } } });
  });

  test('pruning: a field owned below by someone else stays; a list element stays only if someone owns the element itself', () => {
    const merged = { metadata: { name: 'p', labels: { a: '1', b: '2' } }, spec: { containers: [{ name: 'x', image: 'i' }, { name: 'y', image: 'j' }] } };
    const last: FieldTree = {
      'f:metadata': { 'f:labels': { 'f:a': {}, 'f:b': {} } },
      'f:spec': { 'f:containers': { 'k:{"name":"x"}': { '.': {}, 'f:image': {} }, 'k:{"name":"y"}': { '.': {}, 'f:image': {} } } },
    };
    // Another manager owns label b, and the image of container x (not the element).
    const keep: FieldTree = { 'f:metadata': { 'f:labels': { 'f:b': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"x"}': { 'f:image': {} } } } };
    const pruned = pruneApplied(merged, last, keep, pod);
    assert.deepEqual(pruned, { metadata: { name: 'p', labels: { b: '2' } }, spec: { containers: [] } });
    assert.deepEqual(merged.metadata.labels, { a: '1', b: '2' }, 'the input is not mutated');
  });
});
