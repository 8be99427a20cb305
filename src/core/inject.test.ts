import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Subset, WorkloadSpread } from '../api/workloadspread.ts';
import { deepClone } from '../k8s/json.ts';
import type { Pod } from '../k8s/types.ts';
import { injectSubset } from './inject.ts';

const MARKER = 'apps.kruise.io/matched-workloadspread';

function spread(subsets: Subset[]): WorkloadSpread {
  return { metadata: { name: 'ws', namespace: 'ns' }, spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets } };
}

function basePod(spec: Partial<Pod['spec']> = {}): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, spec: { containers: [{ name: 'main', image: 'nginx' }], ...spec } };
}

function inject(pod: Pod, subset: Subset, uid?: string): Pod {
  const got = injectSubset(pod, spread([subset]), subset.name, uid);
  assert.equal(got.ok, true, !got.ok ? got.error : '');
  if (!got.ok) throw new Error('unreachable');
  assert.equal(got.injected, true);
  return got.pod;
}

const zoneA = { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] };
const spotToleration = { key: 'spot', operator: 'Exists', effect: 'NoSchedule' };

describe('injectSubset (§2.5)', () => {
  test('a subset missing from the spec leaves the pod unchanged, without error', () => {
    const pod = basePod();
    const got = injectSubset(pod, spread([{ name: 'a' }]), 'gone');
    assert.deepEqual(got, { ok: true, pod, injected: false });
  });

  test('an empty subset still creates affinity.nodeAffinity {} and the marker', () => {
    const got = inject(basePod(), { name: 'a' });
    assert.deepEqual(got.spec.affinity, { nodeAffinity: {} });
    assert.deepEqual(got.metadata.labels, { 'workloadspread.io/managed': 'true' });
    assert.deepEqual(got.metadata.annotations, { [MARKER]: '{"name":"ws","subset":"a"}' });
    assert.equal(got.spec.tolerations, undefined);
  });

  test('the marker carries the generated uid when there is one', () => {
    const got = inject(basePod(), { name: 'a' }, '6c1b');
    assert.equal(got.metadata.annotations?.[MARKER], '{"name":"ws","subset":"a","uid":"6c1b"}');
  });

  test('tolerations are appended without de-duplication', () => {
    const pod = basePod({ tolerations: [spotToleration] });
    const got = inject(pod, { name: 'a', tolerations: [spotToleration, { key: 'x', operator: 'Equal', value: 'y' }] });
    assert.deepEqual(got.spec.tolerations, [spotToleration, spotToleration, { key: 'x', operator: 'Equal', value: 'y' }]);
  });

  test('preferred terms are appended to the pod’s own', () => {
    const own = { weight: 5, preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] } };
    const subsetTerm = { weight: 100, preference: zoneA };
    const pod = basePod({ affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [own] } } });
    const got = inject(pod, { name: 'a', preferredNodeSelectorTerms: [subsetTerm] });
    assert.deepEqual(got.spec.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution, [own, subsetTerm]);
  });

  test('required: a pod without node affinity gets the subset term as its only term', () => {
    const got = inject(basePod(), { name: 'a', requiredNodeSelectorTerm: zoneA });
    assert.deepEqual(got.spec.affinity, { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [zoneA] } } });
  });

  test('required: zero existing terms → [subsetTerm]', () => {
    const pod = basePod({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } } } });
    const got = inject(pod, { name: 'a', requiredNodeSelectorTerm: zoneA });
    assert.deepEqual(got.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms, [zoneA]);
  });

  test('required: the subset term is ANDed into every ORed pod term (expressions and fields)', () => {
    const gpu = { key: 'gpu', operator: 'Exists' };
    const arm = { key: 'arch', operator: 'In', values: ['arm64'] };
    const field = { key: 'metadata.name', operator: 'NotIn', values: ['bad-node'] };
    const pod = basePod({
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [gpu] }, { matchExpressions: [arm], matchFields: [field] }] },
        },
      },
    });
    const subsetField = { key: 'metadata.name', operator: 'In', values: ['n1', 'n2'] };
    const got = inject(pod, { name: 'a', requiredNodeSelectorTerm: { ...zoneA, matchFields: [subsetField] } });
    assert.deepEqual(got.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms, [
      { matchExpressions: [gpu, ...zoneA.matchExpressions], matchFields: [subsetField] },
      { matchExpressions: [arm, ...zoneA.matchExpressions], matchFields: [field, subsetField] },
    ]);
  });

  test('the patch merges labels, annotations and container env by name', () => {
    const pod = basePod({ containers: [{ name: 'main', image: 'nginx', env: [{ name: 'A', value: '1' }] }, { name: 'side' }] });
    pod.metadata.labels = { app: 'web' };
    const got = inject(pod, {
      name: 'a',
      patch: {
        metadata: { labels: { zone: 'a' }, annotations: { note: 'x' } },
        spec: { containers: [{ name: 'main', env: [{ name: 'B', value: '2' }] }] },
      },
    });
    assert.deepEqual(got.metadata.labels, { app: 'web', zone: 'a', 'workloadspread.io/managed': 'true' });
    assert.equal(got.metadata.annotations?.note, 'x');
    assert.equal(got.metadata.annotations?.[MARKER], '{"name":"ws","subset":"a"}');
    // Which end of the env list a new name lands at is strategic-merge's business; membership is ours.
    const main = got.spec.containers.find((c) => c.name === 'main');
    assert.equal(main?.image, 'nginx');
    const env = (main?.env ?? []) as { name: string; value: string }[];
    assert.deepEqual([...env].sort((x, y) => x.name.localeCompare(y.name)), [{ name: 'A', value: '1' }, { name: 'B', value: '2' }]);
    assert.deepEqual(got.spec.containers.map((c) => c.name).sort(), ['main', 'side']);
  });

  test('the patch replaces the tolerations injected before it (no merge key)', () => {
    const pod = basePod({ tolerations: [{ key: 'own', operator: 'Exists' }] });
    const replacement = [{ key: 'patched', operator: 'Exists', effect: 'NoExecute' }];
    const got = inject(pod, { name: 'a', tolerations: [spotToleration], patch: { spec: { tolerations: replacement } } });
    assert.deepEqual(got.spec.tolerations, replacement);
  });

  test('a patch changing priorityClassName clears spec.priority (#1607)', () => {
    const pod = basePod({ priorityClassName: 'low', priority: 0 });
    const got = inject(pod, { name: 'a', patch: { spec: { priorityClassName: 'high' } } });
    assert.equal(got.spec.priorityClassName, 'high');
    assert.equal('priority' in got.spec, false);
  });

  test('setting a class on a pod without one also clears priority', () => {
    const got = inject(basePod({ priority: 0 }), { name: 'a', patch: { spec: { priorityClassName: 'high' } } });
    assert.equal('priority' in got.spec, false);
  });

  test('a patch that keeps the priorityClassName keeps spec.priority', () => {
    const pod = basePod({ priorityClassName: 'low', priority: 7 });
    const got = inject(pod, { name: 'a', patch: { metadata: { labels: { x: 'y' } } } });
    assert.equal(got.spec.priority, 7);
  });

  test('a patch that cannot be applied is an error (a container without its merge key)', () => {
    const got = injectSubset(basePod(), spread([{ name: 'a', patch: { spec: { containers: [{ image: 'busybox' }] } } }]), 'a');
    assert.equal(got.ok, false);
    assert.match(!got.ok ? got.error : '', /subset a/);
  });

  test('unknown fields survive, everywhere', () => {
    const pod = basePod() as Pod & Record<string, unknown>;
    pod.extraTopLevel = { keep: true };
    pod.metadata.unknownMeta = 'm';
    pod.spec.futureField = [1, 2];
    pod.spec.containers[0]!.futureContainerField = 'c';
    pod.status = { phase: 'Pending', futureStatus: 1 };
    const got = inject(pod, { name: 'a', requiredNodeSelectorTerm: zoneA, tolerations: [spotToleration], patch: { metadata: { labels: { z: 'a' } } } }) as Pod & Record<string, unknown>;
    assert.deepEqual(got.extraTopLevel, { keep: true });
    assert.equal(got.metadata.unknownMeta, 'm');
    assert.deepEqual(got.spec.futureField, [1, 2]);
    assert.equal(got.spec.containers[0]?.futureContainerField, 'c');
    assert.deepEqual(got.status, { phase: 'Pending', futureStatus: 1 });
  });

  test('existing annotations are kept and a stale marker is overwritten', () => {
    const pod = basePod();
    pod.metadata.annotations = { keep: 'me', [MARKER]: '{"name":"old","subset":"x"}' };
    const got = inject(pod, { name: 'a' });
    assert.deepEqual(got.metadata.annotations, { keep: 'me', [MARKER]: '{"name":"ws","subset":"a"}' });
  });

  test('the input pod is never mutated', () => {
    fc.assert(
      fc.property(
        fc.record({
          tolerations: fc.boolean(),
          required: fc.boolean(),
          preferred: fc.boolean(),
          patch: fc.boolean(),
          podTerms: fc.nat({ max: 2 }),
        }),
        (c) => {
          const pod = basePod(
            c.podTerms === 0
              ? {}
              : { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: Array.from({ length: c.podTerms }, () => ({ matchExpressions: [{ key: 'k', operator: 'Exists' }] })) } } } },
          );
          const subset: Subset = { name: 'a' };
          if (c.tolerations) subset.tolerations = [spotToleration];
          if (c.required) subset.requiredNodeSelectorTerm = zoneA;
          if (c.preferred) subset.preferredNodeSelectorTerms = [{ weight: 1, preference: zoneA }];
          if (c.patch) subset.patch = { metadata: { labels: { z: 'a' } } };
          const ws = spread([subset]);
          const before = deepClone(pod);
          const wsBefore = deepClone(ws);
          const got = injectSubset(pod, ws, 'a');
          assert.deepEqual(pod, before);
          assert.deepEqual(ws, wsBefore);
          // The result shares no arrays with the subset: mutating it leaves the WorkloadSpread intact.
          if (got.ok) {
            const terms = got.pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
            terms?.forEach((t) => t.matchExpressions?.push({ key: 'mutated', operator: 'Exists' }));
            got.pod.spec.tolerations?.forEach((t) => (t.key = 'mutated'));
            assert.deepEqual(ws, wsBefore);
          }
        },
      ),
    );
  });

  test('without a patch, only what injection writes into is copied: the result equals a deep copy\'s, the (frozen) input is untouched', () => {
    const freeze = <T>(v: T): T => {
      if (v !== null && typeof v === 'object') {
        for (const child of Object.values(v)) freeze(child);
        Object.freeze(v);
      }
      return v;
    };
    const term = fc.record({ expressions: fc.boolean(), fields: fc.boolean() }).map(({ expressions, fields }) => ({
      ...(expressions ? { matchExpressions: [{ key: 'k', operator: 'Exists' }] } : {}),
      ...(fields ? { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n'] }] } : {}),
    }));
    const nodeAffinity = fc.record(
      {
        requiredDuringSchedulingIgnoredDuringExecution: fc.oneof(fc.constant({}), fc.array(term, { maxLength: 2 }).map((nodeSelectorTerms) => ({ nodeSelectorTerms }))),
        preferredDuringSchedulingIgnoredDuringExecution: fc.array(term.map((preference) => ({ weight: 2, preference })), { maxLength: 2 }),
      },
      { requiredKeys: [] },
    );
    const podArb = fc.record(
      {
        labels: fc.oneof(fc.constant('junk'), fc.dictionary(fc.constantFrom('app', 'x'), fc.constantFrom('1', '2'))),
        annotations: fc.dictionary(fc.constantFrom('a', 'b'), fc.constantFrom('1', '2')),
        affinity: fc.oneof(fc.constant('junk'), fc.record({ nodeAffinity, podAffinity: fc.constant({ requiredDuringSchedulingIgnoredDuringExecution: [] }) }, { requiredKeys: [] })),
        tolerations: fc.array(fc.constant({ key: 'own', operator: 'Exists' }), { maxLength: 2 }),
        spec: fc.boolean(),
      },
      { requiredKeys: ['spec'] },
    );
    const subsetArb = fc.record({ tolerations: fc.boolean(), required: fc.option(term, { nil: undefined }), preferred: fc.boolean() });
    fc.assert(
      fc.property(podArb, subsetArb, fc.option(fc.constant('uid-1'), { nil: undefined }), (p, c, uid) => {
        const { labels, annotations, affinity, tolerations } = p;
        // Through JSON, as the webhook gets it (plain objects, no null prototypes from the generators).
        const raw = JSON.parse(JSON.stringify({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'p', namespace: 'ns', ...(labels !== undefined ? { labels } : {}), ...(annotations !== undefined ? { annotations } : {}) },
          ...(p.spec ? { spec: { containers: [{ name: 'main', image: 'nginx' }], ...(affinity !== undefined ? { affinity } : {}), ...(tolerations !== undefined ? { tolerations } : {}) } } : {}),
        })) as Pod;
        const subset: Subset = { name: 'a' };
        if (c.tolerations) subset.tolerations = [spotToleration];
        if (c.required !== undefined) subset.requiredNodeSelectorTerm = c.required;
        if (c.preferred) subset.preferredNodeSelectorTerms = [{ weight: 1, preference: zoneA }];
        const before = deepClone(raw);
        const got = injectSubset(freeze(raw), spread([subset]), 'a', uid);
        const deep = injectSubset(deepClone(before), spread([{ ...subset, patch: {} }]), 'a', uid);
        assert.ok(got.ok && deep.ok);
        assert.deepEqual(got.pod, deep.pod);
        assert.deepEqual(raw, before);
      }),
      { numRuns: 500 },
    );
  });

  test('malformed pods never throw', () => {
    const junk = [{}, { metadata: null, spec: null }, { metadata: { labels: 'x' }, spec: { affinity: 'y', tolerations: 'z' } }] as unknown as Pod[];
    for (const pod of junk) {
      assert.doesNotThrow(() => injectSubset(pod, spread([{ name: 'a', requiredNodeSelectorTerm: zoneA, tolerations: [spotToleration] }]), 'a'));
    }
  });
});

describe('D20 at injection: a stored patch that changes what the pod is', () => {
  test('a namespace patch is not applied (no replace /metadata/namespace); the pod keeps its placement and the refusal is named', () => {
    const pod = basePod();
    const got = injectSubset(pod, spread([{ name: 'a', requiredNodeSelectorTerm: zoneA, patch: { metadata: { namespace: 'kube-system', labels: { x: 'y' } } } }]), 'a');
    assert.ok(got.ok);
    assert.deepEqual(got.refusedPatch, ['metadata.namespace']);
    assert.equal(got.pod.metadata?.namespace, 'ns');
    assert.equal(got.pod.metadata?.labels?.['x'], undefined, 'none of the patch is applied');
    assert.deepEqual(got.pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution, { nodeSelectorTerms: [zoneA] });
    assert.ok(got.pod.metadata?.annotations?.[MARKER]);
  });

  test('a privileged patch applies only with allowPrivileged', () => {
    const subset = { name: 'a', patch: { spec: { hostNetwork: true } } };
    const refused = injectSubset(basePod(), spread([subset]), 'a');
    assert.ok(refused.ok);
    assert.deepEqual(refused.refusedPatch, ['spec.hostNetwork']);
    assert.equal(refused.pod.spec.hostNetwork, undefined);
    const allowed = injectSubset(basePod(), spread([subset]), 'a', undefined, { allowPrivileged: true });
    assert.ok(allowed.ok);
    assert.equal(allowed.refusedPatch, undefined);
    assert.equal(allowed.pod.spec.hostNetwork, true);
  });
});
