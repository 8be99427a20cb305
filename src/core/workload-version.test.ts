import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../k8s/types.ts';
import { cloneSetRecreates, latestWorkloadVersion } from './workload-version.ts';

const template = (extraLabels: Record<string, string> = {}, image = 'nginx:1') => ({
  metadata: { labels: { app: 'web', ...extraLabels } },
  spec: { containers: [{ name: 'main', image }] },
});

const deployment: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'ns', uid: 'dep-uid' },
  spec: { selector: { matchLabels: { app: 'web' } }, template: template({}, 'nginx:2') },
};

function rs(name: string, hash: string, opts: { image?: string; owner?: string; deleting?: boolean; labels?: Record<string, string> } = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name,
      namespace: 'ns',
      uid: `${name}-uid`,
      labels: opts.labels ?? { app: 'web', 'pod-template-hash': hash },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: opts.owner ?? 'dep-uid', controller: true }],
      ...(opts.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: { template: template({ 'pod-template-hash': hash }, opts.image ?? 'nginx:1') },
  };
}

const depRef = { apiVersion: 'apps/v1', kind: 'Deployment' };

describe('latestWorkloadVersion (spec §6.2, D12)', () => {
  test('a missing workload → ""', () => {
    assert.deepEqual(latestWorkloadVersion(depRef, undefined, []), { ok: true, version: '' });
  });

  test('a ReplicaSet → its own pod-template-hash', () => {
    assert.deepEqual(latestWorkloadVersion({ apiVersion: 'apps/v1', kind: 'ReplicaSet' }, rs('web-abc', 'abc'), []), { ok: true, version: 'abc' });
  });

  test('a Deployment → the hash of the ReplicaSet whose template equals its own, ignoring the hash label', () => {
    const sets = [rs('web-old', 'old'), rs('web-new', 'new', { image: 'nginx:2' })];
    assert.deepEqual(latestWorkloadVersion(depRef, deployment, sets), { ok: true, version: 'new' });
  });

  test('the answer is remembered for the same cached objects, and asked again when either is a new object', () => {
    const dep: KubeObject = { ...deployment };
    const current = rs('web-new', 'new', { image: 'nginx:2' });
    assert.deepEqual(latestWorkloadVersion(depRef, dep, [rs('web-old', 'old'), current]), { ok: true, version: 'new' });
    // The same objects (the cache's), the list rebuilt: the same answer.
    assert.deepEqual(latestWorkloadVersion(depRef, dep, [current]), { ok: true, version: 'new' });
    // The ReplicaSet is gone from the list, or now deleting: compared again.
    assert.deepEqual(latestWorkloadVersion(depRef, dep, [rs('web-old', 'old')]).ok, false);
    assert.deepEqual(latestWorkloadVersion(depRef, dep, [rs('web-new', 'new', { image: 'nginx:2', deleting: true })]).ok, false);
    // A new version of the Deployment (a new object) with another template: compared again.
    const rolled: KubeObject = { ...dep, spec: { ...(dep['spec'] as object), template: template({}, 'nginx:3') } };
    assert.deepEqual(latestWorkloadVersion(depRef, rolled, [current, rs('web-3', 'v3', { image: 'nginx:3' })]), { ok: true, version: 'v3' });
  });

  test('a template whose labels are only the hash matches one without labels', () => {
    const bare: KubeObject = { ...deployment, spec: { selector: {}, template: { spec: { containers: [{ name: 'main', image: 'x' }] } } } };
    const set: KubeObject = {
      ...rs('r', 'h1', { labels: { 'pod-template-hash': 'h1' } }),
      spec: { template: { metadata: { labels: { 'pod-template-hash': 'h1' } }, spec: { containers: [{ name: 'main', image: 'x' }] } } },
    };
    assert.deepEqual(latestWorkloadVersion(depRef, bare, [set]), { ok: true, version: 'h1' });
  });

  const skipped = [
    { name: 'a deleting ReplicaSet', set: rs('web-new', 'new', { image: 'nginx:2', deleting: true }) },
    { name: 'a ReplicaSet of another Deployment', set: rs('web-new', 'new', { image: 'nginx:2', owner: 'other' }) },
    { name: "a ReplicaSet outside the Deployment's selector", set: rs('web-new', 'new', { image: 'nginx:2', labels: { app: 'api', 'pod-template-hash': 'new' } }) },
    { name: 'only ReplicaSets of older templates', set: rs('web-old', 'old') },
  ];
  for (const c of skipped) {
    test(`${c.name} is not the latest → not found (the sync retries)`, () => {
      const r = latestWorkloadVersion(depRef, deployment, [c.set]);
      assert.equal(r.ok, false);
      assert.equal(!r.ok && r.notFound, true);
    });
  }

  test('a Deployment with an invalid selector → an error that is not "not found"', () => {
    const bad: KubeObject = { ...deployment, spec: { ...(deployment['spec'] as object), selector: { matchExpressions: [{ key: 'app', operator: 'In', values: [] }] } } };
    const r = latestWorkloadVersion(depRef, bad, [rs('web-new', 'new', { image: 'nginx:2' })]);
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.notFound, false);
  });

  const cloneSet = (generation: number, observed: number): KubeObject => ({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: 'cs', generation },
    status: { observedGeneration: observed, updateRevision: 'cs-7d9f8c' },
  });
  const csRef = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet' };

  test('a CloneSet without recreate versioning → versionIgnored', () => {
    assert.deepEqual(latestWorkloadVersion(csRef, cloneSet(2, 1), []), { ok: true, version: 'versionIgnored' });
  });
  test('a versioned CloneSet not yet observed → not found', () => {
    const r = latestWorkloadVersion(csRef, cloneSet(3, 2), [], { cloneSetRecreate: true });
    assert.equal(!r.ok && r.notFound, true);
  });
  test('a versioned CloneSet → the short hash of updateRevision', () => {
    assert.deepEqual(latestWorkloadVersion(csRef, cloneSet(3, 3), [], { cloneSetRecreate: true }), { ok: true, version: '7d9f8c' });
  });
  test('the version part of apiVersion does not matter (v1beta1 CloneSet)', () => {
    assert.deepEqual(latestWorkloadVersion({ apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet' }, cloneSet(3, 3), [], { cloneSetRecreate: true }), {
      ok: true,
      version: '7d9f8c',
    });
  });

  for (const ref of [
    { apiVersion: 'apps/v1', kind: 'StatefulSet' },
    { apiVersion: 'batch/v1', kind: 'Job' },
    { apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout' },
    { apiVersion: 'example.com/v1', kind: 'Deployment' },
    { apiVersion: 'a/b/c', kind: 'Deployment' },
  ]) {
    test(`${ref.apiVersion} ${ref.kind} → versionIgnored`, () => {
      assert.deepEqual(latestWorkloadVersion(ref, { metadata: { name: 'x' } }, []), { ok: true, version: 'versionIgnored' });
    });
  }
});

describe('cloneSetRecreates', () => {
  const cases: { name: string; obj: KubeObject | undefined; want: boolean }[] = [
    { name: 'no updateStrategy (ReCreate is the default)', obj: { spec: {} }, want: true },
    { name: 'ReCreate', obj: { spec: { updateStrategy: { type: 'ReCreate' } } }, want: true },
    { name: 'InPlaceIfPossible', obj: { spec: { updateStrategy: { type: 'InPlaceIfPossible' } } }, want: false },
    { name: 'InPlaceOnly', obj: { spec: { updateStrategy: { type: 'InPlaceOnly' } } }, want: false },
    { name: 'missing object', obj: undefined, want: true },
  ];
  for (const c of cases) test(c.name, () => assert.equal(cloneSetRecreates(c.obj), c.want));
});
