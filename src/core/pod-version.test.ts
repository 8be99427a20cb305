import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { podVersion, shortRevisionHash, versionFromLabels } from './pod-version.ts';

function pod(kind: string | undefined, labels: Record<string, string>) {
  return {
    metadata: {
      labels,
      ownerReferences: kind === undefined ? [] : [{ apiVersion: 'apps/v1', kind, name: 'o', uid: 'u', controller: true }],
    },
  };
}

describe('podVersion (spec §6.1, D12)', () => {
  test('ReplicaSet pods use pod-template-hash', () => {
    assert.equal(podVersion(pod('ReplicaSet', { 'pod-template-hash': 'abc12' })), 'abc12');
  });
  test('pod-template-hash wins over controller-revision-hash', () => {
    assert.equal(podVersion(pod('ReplicaSet', { 'pod-template-hash': 'h1', 'controller-revision-hash': 'x-h2' })), 'h1');
  });
  test('falls back to the last segment of controller-revision-hash', () => {
    assert.equal(podVersion(pod('ReplicaSet', { 'controller-revision-hash': 'web-6d8f7c' })), '6d8f7c');
  });
  test('no label: versionIgnored', () => {
    assert.equal(podVersion(pod('ReplicaSet', {})), 'versionIgnored');
  });
  test('StatefulSet, Job, custom kinds and pods without owner: versionIgnored', () => {
    for (const kind of ['StatefulSet', 'Job', 'GameServerSet', undefined]) {
      assert.equal(podVersion(pod(kind, { 'controller-revision-hash': 'web-1' })), 'versionIgnored');
    }
  });
  test('CloneSet pods: versioned only with recreate updates (D12)', () => {
    const p = pod('CloneSet', { 'controller-revision-hash': 'sample-7c9d' });
    assert.equal(podVersion(p), 'versionIgnored');
    assert.equal(podVersion(p, { cloneSetRecreate: true }), '7c9d');
  });
  test('a non-controller owner reference does not count', () => {
    const p = { metadata: { labels: { 'pod-template-hash': 'h' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'r', uid: 'u' }] } };
    assert.equal(podVersion(p), 'versionIgnored');
  });
  test('helpers', () => {
    assert.equal(shortRevisionHash('nodash'), 'nodash');
    assert.equal(versionFromLabels(undefined), 'versionIgnored');
  });
});
