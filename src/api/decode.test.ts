/**
 * Decoding a WorkloadSpread at the boundary (api/decode.ts): what the engine
 * used to tolerate deep inside core/ is refused where it enters, with the
 * field at fault; what an API server stores is accepted as is.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeWorkloadSpread } from './decode.ts';

const V = 'versionIgnored';
const valid = {
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'WorkloadSpread',
  metadata: { name: 'ws', namespace: 'ns', uid: 'u1', resourceVersion: '7' },
  spec: {
    targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
    subsets: [
      { name: 'a', maxReplicas: 3, patch: { metadata: { labels: { gone: null } } } },
      { name: 'b', maxReplicas: '50%' },
    ],
  },
  status: { versionedSubsetStatuses: { [V]: [{ name: 'a', replicas: 1, missingReplicas: 2, creatingPods: { p: '2026-01-01T00:00:00Z' } }] } },
};

describe('decodeWorkloadSpread', () => {
  test('a stored WorkloadSpread decodes to the same value (unknown metadata kept)', () => {
    const got = decodeWorkloadSpread(structuredClone(valid));
    assert.deepEqual(got, { ok: true, value: valid });
  });

  test('null in a known field is absent; null inside a subset patch is kept (it deletes a key)', () => {
    const raw = structuredClone(valid) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- reshaping raw JSON
    raw['spec']['subsets'][1]['maxReplicas'] = null;
    raw['spec']['targetFilter'] = null;
    const got = decodeWorkloadSpread(raw);
    assert.ok(got.ok);
    if (!got.ok) return;
    assert.equal('maxReplicas' in (got.value.spec.subsets[1] ?? {}), false);
    assert.equal('targetFilter' in got.value.spec, false);
    assert.deepEqual(got.value.spec.subsets[0]?.patch, { metadata: { labels: { gone: null } } });
  });

  test('without a null anywhere the stored object is the decoded value (no copy); a null deep in the status is still found', () => {
    const raw = structuredClone(valid) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- reshaping raw JSON
    delete raw['spec']['subsets'][0]['patch'];
    const same = decodeWorkloadSpread(raw);
    assert.ok(same.ok && same.value === (raw as unknown));
    raw['status']['versionedSubsetStatuses'][V][0]['creatingPods'] = null;
    const got = decodeWorkloadSpread(raw);
    assert.ok(got.ok);
    if (!got.ok) return;
    assert.notEqual(got.value, raw as unknown);
    assert.equal('creatingPods' in (got.value.status?.versionedSubsetStatuses?.[V]?.[0] ?? {}), false);
  });

  // What the engine's "malformed input never throws" tests fed it: refused here, naming the field.
  const refused: { name: string; raw: unknown; message: RegExp }[] = [
    { name: 'not an object', raw: null, message: /must be a JSON object/ },
    { name: 'no metadata.name', raw: { metadata: {}, spec: {} }, message: /must have metadata\.name/ },
    { name: 'no spec', raw: { metadata: { name: 'w' } }, message: /WorkloadSpread w cannot be read: spec: Required value/ },
    { name: 'no targetRef', raw: { metadata: { name: 'w' }, spec: { subsets: [{ name: 'a' }] } }, message: /spec\.targetRef: Required value/ },
    { name: 'no subsets', raw: { metadata: { name: 'w' }, spec: { targetRef: valid.spec.targetRef } }, message: /spec\.subsets: Required value/ },
    { name: 'subsets not a list', raw: { metadata: { name: 'w' }, spec: { targetRef: valid.spec.targetRef, subsets: 'x' } }, message: /spec\.subsets: Invalid value: "string"/ },
    { name: 'a subset without a name', raw: { metadata: { name: 'w' }, spec: { targetRef: valid.spec.targetRef, subsets: [{ maxReplicas: 1 }] } }, message: /spec\.subsets\[0\]\.name: Required value/ },
    { name: 'a targetRef that is a string', raw: { metadata: { name: 'w' }, spec: { targetRef: 'x', subsets: [] } }, message: /spec\.targetRef: Invalid value: "string"/ },
    { name: 'a targetRef kind that is a number', raw: { metadata: { name: 'w' }, spec: { targetRef: { apiVersion: 'apps/v1', kind: 1, name: 'web' }, subsets: [] } }, message: /spec\.targetRef\.kind: Invalid value: "integer"/ },
    {
      name: 'a subset status without its counts',
      raw: { metadata: { name: 'w' }, spec: { targetRef: valid.spec.targetRef, subsets: [{ name: 'a' }] }, status: { versionedSubsetStatuses: { [V]: [{ name: 'a' }] } } },
      message: /status\.versionedSubsetStatuses\.versionIgnored\[0\]\.replicas: Required value/,
    },
    {
      name: 'creatingPods that is not a map',
      raw: { metadata: { name: 'w' }, spec: { targetRef: valid.spec.targetRef, subsets: [{ name: 'a' }] }, status: { versionedSubsetStatuses: { [V]: [{ name: 'a', replicas: 0, missingReplicas: 1, creatingPods: 'x' }] } } },
      message: /creatingPods: Invalid value: "string"/,
    },
    {
      name: 'deletingPods that is not a map',
      raw: { metadata: { name: 'w' }, spec: { targetRef: valid.spec.targetRef, subsets: [{ name: 'a' }] }, status: { versionedSubsetStatuses: { [V]: [{ name: 'a', replicas: 0, missingReplicas: 0, deletingPods: 'x' }] } } },
      message: /deletingPods: Invalid value: "string"/,
    },
    {
      name: 'conditions that are not a list',
      raw: { metadata: { name: 'w' }, spec: { targetRef: valid.spec.targetRef, subsets: [{ name: 'a' }] }, status: { subsetStatuses: [{ name: 'a', replicas: 0, missingReplicas: 1, conditions: 'y' }] } },
      message: /conditions: Invalid value: "string"/,
    },
  ];
  for (const c of refused) {
    test(`refused, naming the field: ${c.name}`, () => {
      const got = decodeWorkloadSpread(c.raw);
      assert.equal(got.ok, false);
      if (got.ok) return;
      assert.match(got.error, c.message);
    });
  }

  test('a long list of errors quotes the first three', () => {
    const got = decodeWorkloadSpread({ metadata: { name: 'w', namespace: 'ns' }, spec: { targetRef: {}, subsets: [{}, {}] } });
    assert.equal(got.ok, false);
    if (!got.ok) assert.match(got.error, /^WorkloadSpread ns\/w cannot be read: .*; .*; .* \(and 2 more\)$/);
  });
});
