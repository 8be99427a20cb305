/**
 * The admission answer's JSON Patch, end to end from injection: for random
 * pod shapes (small to huge arrays of node selector terms, tolerations,
 * containers and env entries; unknown fields) and random subsets (with and
 * without a strategic merge patch), the patch that `patched` answers, applied
 * to the request's pod by an independent RFC 6902 implementation, gives the
 * injected pod exactly; and its size grows with what injection added, not
 * with the square of the pod.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Subset, WorkloadSpread } from '../api/workloadspread.ts';
import { injectSubset } from '../core/inject.ts';
import { deepEqual } from '../k8s/json.ts';
import type { Pod } from '../k8s/types.ts';
import { applyResponse } from '../testing/admission-kit.ts';
import { decodePatch, patched } from './admission-review.ts';

function spread(subset: Subset): WorkloadSpread {
  return { metadata: { name: 'ws', namespace: 'ns', uid: 'ws-uid' }, spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets: [subset] } };
}

const expressionArb = fc.record({ key: fc.constantFrom('zone', 'disk', 'example.com/x'), operator: fc.constantFrom('In', 'NotIn', 'Exists'), values: fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 }) });
const termArb = fc.record({ matchExpressions: fc.array(expressionArb, { maxLength: 2 }) }, { requiredKeys: [] });
const tolerationArb = fc.record({ key: fc.string({ maxLength: 4 }), operator: fc.constantFrom('Exists', 'Equal'), effect: fc.constantFrom('NoSchedule', 'NoExecute') });

/** A count that is usually small and sometimes in the thousands. */
const countArb = fc.oneof({ weight: 4, arbitrary: fc.nat(4) }, { weight: 1, arbitrary: fc.integer({ min: 500, max: 3000 }) });

const podArb = fc
  .record({
    terms: countArb,
    tolerations: countArb,
    containers: fc.integer({ min: 1, max: 3 }),
    env: countArb,
    preferred: fc.nat(2),
    labels: fc.dictionary(fc.constantFrom('app', 'tier', 'x'), fc.string({ maxLength: 3 }), { maxKeys: 2 }),
    unknown: fc.boolean(),
    term: termArb,
    toleration: tolerationArb,
  })
  .map((s): Pod => {
    const spec: Record<string, unknown> = {
      containers: Array.from({ length: s.containers }, (_, c) => ({ name: `c${c}`, image: 'i', env: Array.from({ length: s.env }, (_, e) => ({ name: `E${e}`, value: `${e}` })) })),
    };
    if (s.tolerations > 0) spec['tolerations'] = Array.from({ length: s.tolerations }, () => s.toleration);
    if (s.terms > 0 || s.preferred > 0) {
      spec['affinity'] = {
        nodeAffinity: {
          ...(s.terms > 0 ? { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: Array.from({ length: s.terms }, () => s.term) } } : {}),
          ...(s.preferred > 0 ? { preferredDuringSchedulingIgnoredDuringExecution: Array.from({ length: s.preferred }, (_, i) => ({ weight: i + 1, preference: s.term })) } : {}),
        },
      };
    }
    if (s.unknown) spec['futureField'] = { nested: [1, { deep: true }] };
    // Round-trip through JSON, as a review's pod arrives: no shared subtrees.
    return JSON.parse(JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns', labels: s.labels }, spec })) as Pod;
  });

const subsetArb = fc.record(
  {
    name: fc.constant('a'),
    requiredNodeSelectorTerm: termArb,
    preferredNodeSelectorTerms: fc.array(fc.record({ weight: fc.integer({ min: 1, max: 100 }), preference: termArb }), { maxLength: 2 }),
    tolerations: fc.array(tolerationArb, { maxLength: 2 }),
    patch: fc.oneof(
      fc.constant({ metadata: { labels: { pool: 'spot' } } }),
      fc.constant({ spec: { containers: [{ name: 'c0', resources: { limits: { cpu: '1' } } }] } }),
      fc.constant({ metadata: { annotations: { note: 'x' } }, spec: { priorityClassName: 'high' } }),
    ),
  },
  { requiredKeys: ['name'] },
) as fc.Arbitrary<Subset>;

describe('the admission answer patch', () => {
  test('for random pods and subsets, applying the answer to the request pod gives the injected pod', () => {
    fc.assert(
      fc.property(podArb, subsetArb, fc.boolean(), (pod, subset, withUid) => {
        const injected = injectSubset(pod, spread(subset), 'a', withUid ? 'uid-1' : undefined);
        assert.ok(injected.ok);
        if (!injected.ok) return;
        const response = patched('review', pod, injected.pod);
        assert.equal(response.allowed, true);
        const result = applyResponse(pod, response);
        assert.ok(deepEqual(result, JSON.parse(JSON.stringify(injected.pod))), 'the patched request pod equals the injected pod');
      }),
      { numRuns: 150 },
    );
  });

  test('a pod with 5,000 terms and 5,000 tolerations: one operation per term, one for the toleration, and the marker', () => {
    const pod = JSON.parse(
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p', namespace: 'ns' },
        spec: {
          containers: [{ name: 'c', image: 'i' }],
          tolerations: Array.from({ length: 5000 }, (_, i) => ({ key: `t${i}`, operator: 'Exists' })),
          affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: Array.from({ length: 5000 }, (_, i) => ({ matchExpressions: [{ key: `k${i}`, operator: 'Exists' }] })) } } },
        },
      }),
    ) as Pod;
    const subset: Subset = { name: 'a', requiredNodeSelectorTerm: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }, tolerations: [{ key: 'pool', operator: 'Exists' }] };
    const injected = injectSubset(pod, spread(subset), 'a');
    assert.ok(injected.ok);
    if (!injected.ok) return;
    const response = patched('review', pod, injected.pod);
    const ops = decodePatch(response) as { op: string; path: string }[];
    // 5,000 term additions, the toleration, the labels and annotations maps (created: the pod had none).
    assert.equal(ops.length, 5003);
    assert.equal(ops.filter((o) => o.path.endsWith('/matchExpressions/1')).length, 5000);
    assert.ok(deepEqual(applyResponse(pod, response), JSON.parse(JSON.stringify(injected.pod))));
  });
});
