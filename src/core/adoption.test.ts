import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Subset, WorkloadSpread } from '../api/workloadspread.ts';
import type { Node, Pod, Taint, Toleration } from '../k8s/types.ts';
import { adoptionPatch, groupPodsBySubset, ignoresPatchMetadata, matchesSubset, requiredTermsWithSubset } from './adoption.ts';

const MARKER = 'apps.kruise.io/matched-workloadspread';
const MANAGED = 'workloadspread.io/managed';
const FAKE = 'kruise.io/workloadspread-fake-subset-name';

function node(name: string, labels: Record<string, string>, taints: Taint[] = []): Node {
  return { metadata: { name, labels }, spec: { taints } };
}

function pod(
  name: string,
  opts: {
    node?: string;
    labels?: Record<string, string>;
    marker?: { name: string; subset: string };
    tolerations?: Toleration[];
    phase?: string;
    hash?: string;
    requiredZone?: string;
  } = {},
): Pod {
  const labels = { ...(opts.labels ?? {}), ...(opts.hash ? { 'pod-template-hash': opts.hash } : {}) };
  return {
    metadata: {
      name,
      namespace: 'ns',
      labels,
      ...(opts.marker ? { annotations: { [MARKER]: JSON.stringify(opts.marker) } } : {}),
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs-uid', controller: true }],
    },
    spec: {
      containers: [{ name: 'main', image: 'nginx' }],
      ...(opts.node ? { nodeName: opts.node } : {}),
      ...(opts.tolerations ? { tolerations: opts.tolerations } : {}),
      ...(opts.requiredZone
        ? {
            affinity: {
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: {
                  nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: [opts.requiredZone] }] }],
                },
              },
            },
          }
        : {}),
    },
    status: { phase: opts.phase ?? 'Running' },
  };
}

const zone = (z: string) => ({ matchExpressions: [{ key: 'zone', operator: 'In', values: [z] }] });
const prefer = (weight: number, z: string) => ({ weight, preference: zone(z) });

describe('matchesSubset: the score table (spec §4.3)', () => {
  const n1 = node('n1', { zone: 'z1', disk: 'ssd' });
  const webPatch = { metadata: { labels: { app: 'web' } } };
  const cases: { name: string; subset: Subset; pod: Pod; quota: number; node?: Node; score: number }[] = [
    {
      name: 'preferred 100 matched, patch already satisfied, no quota → 10010',
      subset: { name: 's', preferredNodeSelectorTerms: [prefer(100, 'z1')], patch: webPatch },
      pod: pod('p', { labels: { app: 'web' } }),
      quota: 0,
      score: 10010,
    },
    {
      name: 'preferred 100 matched, patch labels differ → 10000',
      subset: { name: 's', preferredNodeSelectorTerms: [prefer(100, 'z1')], patch: webPatch },
      pod: pod('p', { labels: { app: 'other' } }),
      quota: 0,
      score: 10000,
    },
    {
      name: 'preferred not matched, patch satisfied → 10',
      subset: { name: 's', preferredNodeSelectorTerms: [prefer(100, 'z2')], patch: webPatch },
      pod: pod('p', { labels: { app: 'web' } }),
      quota: 0,
      score: 10,
    },
    {
      name: 'patch satisfied and quota left → 11',
      subset: { name: 's', patch: webPatch },
      pod: pod('p', { labels: { app: 'web' } }),
      quota: 1,
      score: 11,
    },
    {
      name: 'two preferred terms of 100 and quota → 20001',
      subset: { name: 's', preferredNodeSelectorTerms: [prefer(100, 'z1'), { weight: 100, preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] } }] },
      pod: pod('p'),
      quota: 3,
      score: 20001,
    },
    {
      name: 'preferred 100 and quota, no patch → 10001',
      subset: { name: 's', preferredNodeSelectorTerms: [prefer(100, 'z1')] },
      pod: pod('p'),
      quota: 1,
      score: 10001,
    },
    {
      name: 'a negative quota counts as none → 0',
      subset: { name: 's' },
      pod: pod('p'),
      quota: -2,
      score: 0,
    },
    {
      name: 'annotations of the patch are ignored when comparing → fit',
      subset: { name: 's', patch: { metadata: { labels: { app: 'web' }, annotations: { note: 'x' } } } },
      pod: pod('p', { labels: { app: 'web' } }),
      quota: 0,
      score: 10,
    },
    {
      name: 'a patch that changes the spec → no fit',
      subset: { name: 's', patch: { spec: { containers: [{ name: 'main', env: [{ name: 'A', value: '1' }] }] } } },
      pod: pod('p'),
      quota: 0,
      score: 0,
    },
    {
      name: 'required term not matched → -1',
      subset: { name: 's', requiredNodeSelectorTerm: zone('z2') },
      pod: pod('p'),
      quota: 5,
      score: -1,
    },
    {
      name: 'required term matched → scored',
      subset: { name: 's', requiredNodeSelectorTerm: zone('z1') },
      pod: pod('p'),
      quota: 5,
      score: 1,
    },
    {
      name: "the pod's own required term is ANDed with the subset's: both must hold",
      subset: { name: 's', requiredNodeSelectorTerm: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] } },
      pod: pod('p', { requiredZone: 'z9' }),
      quota: 0,
      score: -1,
    },
    {
      name: 'an untolerated NoSchedule taint → -1',
      subset: { name: 's' },
      pod: pod('p'),
      node: node('t', { zone: 'z1' }, [{ key: 'gpu', effect: 'NoSchedule' }]),
      quota: 1,
      score: -1,
    },
    {
      name: 'an untolerated PreferNoSchedule taint also → -1',
      subset: { name: 's' },
      pod: pod('p'),
      node: node('t', { zone: 'z1' }, [{ key: 'spot', value: 'yes', effect: 'PreferNoSchedule' }]),
      quota: 1,
      score: -1,
    },
    {
      name: "the subset's tolerations count",
      subset: { name: 's', tolerations: [{ key: 'gpu', operator: 'Exists' }] },
      pod: pod('p'),
      node: node('t', { zone: 'z1' }, [{ key: 'gpu', effect: 'NoSchedule' }]),
      quota: 1,
      score: 1,
    },
    {
      name: "the pod's tolerations count",
      subset: { name: 's' },
      pod: pod('p', { tolerations: [{ key: 'spot', operator: 'Equal', value: 'yes', effect: 'PreferNoSchedule' }] }),
      node: node('t', { zone: 'z1' }, [{ key: 'spot', value: 'yes', effect: 'PreferNoSchedule' }]),
      quota: 0,
      score: 0,
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.equal(matchesSubset(c.pod, c.node ?? n1, c.subset, c.quota), c.score);
    });
  }

  test('requiredTermsWithSubset: no pod terms → the subset term; else ANDed into each', () => {
    assert.deepEqual(requiredTermsWithSubset(pod('p'), zone('z1')), [zone('z1')]);
    const p = pod('p', { requiredZone: 'z9' });
    assert.deepEqual(requiredTermsWithSubset(p, { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }), [
      {
        matchExpressions: [{ key: 'zone', operator: 'In', values: ['z9'] }],
        matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }],
      },
    ]);
    // The pod is not touched.
    assert.equal(p.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms[0]?.matchFields, undefined);
  });
});

function ws(subsets: Subset[], annotations?: Record<string, string>): WorkloadSpread {
  return {
    metadata: { name: 'ws', namespace: 'ns', ...(annotations ? { annotations } : {}) },
    spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets },
  };
}

const nodes = new Map([
  ['n1', node('n1', { zone: 'z1' })],
  ['n2', node('n2', { zone: 'z2' })],
]);
const nodeByName = (name: string) => nodes.get(name);
const names = (pods: Pod[] | undefined) => (pods ?? []).map((p) => p.metadata.name);

describe('groupPodsBySubset (spec §4.3)', () => {
  const subsets: Subset[] = [
    { name: 'a', requiredNodeSelectorTerm: zone('z1'), maxReplicas: 1 },
    { name: 'b', maxReplicas: 5 },
  ];

  test('marked pods go to their subset; a removed subset, another WS without a node, or no node → FAKE', () => {
    const pods = [
      pod('m1', { marker: { name: 'ws', subset: 'a' } }),
      pod('m2', { marker: { name: 'ws', subset: 'removed' } }),
      pod('other', { marker: { name: 'other-ws', subset: 'a' } }),
      pod('unscheduled'),
      pod('lost-node', { node: 'n9' }),
    ];
    const g = groupPodsBySubset({ ws: ws(subsets), pods, nodeByName, workloadReplicas: 5 });
    assert.deepEqual(names(g.bySubset.get('a')), ['m1']);
    assert.deepEqual(names(g.bySubset.get('b')), []);
    assert.deepEqual(names(g.bySubset.get(FAKE)), ['m2', 'other', 'unscheduled', 'lost-node']);
    assert.deepEqual(g.adoptions, []);
  });

  test('a pod marked with an empty subset is treated as unmarked and adopted', () => {
    const g = groupPodsBySubset({ ws: ws(subsets), pods: [pod('e', { node: 'n2', marker: { name: 'ws', subset: '' } })], nodeByName, workloadReplicas: 5 });
    assert.deepEqual(names(g.bySubset.get('b')), ['e']);
  });

  test('quota counts inactive marked pods: a full subset loses to one with room', () => {
    const pods = [pod('dead', { marker: { name: 'ws', subset: 'a' }, phase: 'Failed' }), pod('u', { node: 'n1' })];
    const g = groupPodsBySubset({ ws: ws(subsets), pods, nodeByName, workloadReplicas: 5 });
    // a: 0 quota left → score 0; b: quota 5 → score 1.
    assert.deepEqual(names(g.bySubset.get('b')), ['u']);
  });

  test('ties go to the earlier subset', () => {
    const g = groupPodsBySubset({ ws: ws([{ name: 'x' }, { name: 'y' }]), pods: [pod('u', { node: 'n1' })], nodeByName, workloadReplicas: 5 });
    assert.deepEqual(names(g.bySubset.get('x')), ['u']);
    assert.deepEqual(g.adoptions.map((a) => a.subset), ['x']);
  });

  test('a strictly greater score wins over an earlier subset', () => {
    const g = groupPodsBySubset({
      ws: ws([{ name: 'x' }, { name: 'y', preferredNodeSelectorTerms: [prefer(1, 'z1')] }]),
      pods: [pod('u', { node: 'n1' })],
      nodeByName,
      workloadReplicas: 5,
    });
    assert.deepEqual(names(g.bySubset.get('y')), ['u']);
  });

  test('each adoption uses up quota: the second pod goes elsewhere', () => {
    const pods = [pod('u1', { node: 'n1' }), pod('u2', { node: 'n1' })];
    const g = groupPodsBySubset({ ws: ws(subsets), pods, nodeByName, workloadReplicas: 5 });
    assert.deepEqual(names(g.bySubset.get('a')), ['u1']);
    assert.deepEqual(names(g.bySubset.get('b')), ['u2']);
  });

  test('no subset fits the node → FAKE, no adoption', () => {
    const g = groupPodsBySubset({ ws: ws([{ name: 'a', requiredNodeSelectorTerm: zone('z1') }]), pods: [pod('u', { node: 'n2' })], nodeByName, workloadReplicas: 5 });
    assert.deepEqual(names(g.bySubset.get(FAKE)), ['u']);
    assert.deepEqual(g.adoptions, []);
  });

  test('the adoption patch carries the marker without uid and the subset patch metadata; grouped pods reflect it', () => {
    const s: Subset[] = [{ name: 'a', patch: { metadata: { labels: { tier: 'spot' }, annotations: { note: 'x' } }, spec: { priorityClassName: 'low' } } }];
    const input = [pod('u', { node: 'n1', labels: { app: 'web' } })];
    const before = structuredClone(input);
    const g = groupPodsBySubset({ ws: ws(s), pods: input, nodeByName, workloadReplicas: 5 });
    assert.deepEqual(g.adoptions, [
      {
        pod: 'u',
        subset: 'a',
        patch: { metadata: { labels: { tier: 'spot', [MANAGED]: 'true' }, annotations: { note: 'x', [MARKER]: '{"name":"ws","subset":"a"}' } } },
      },
    ]);
    const grouped = g.bySubset.get('a')?.[0];
    assert.equal(grouped?.metadata.annotations?.[MARKER], '{"name":"ws","subset":"a"}');
    assert.equal(grouped?.metadata.labels?.['tier'], 'spot');
    assert.equal(grouped?.spec.priorityClassName, undefined);
    assert.deepEqual(names(g.pods), ['u']);
    assert.equal(g.pods[0], grouped);
    assert.deepEqual(input, before);
  });

  for (const value of ['true', 'TRUE', 'True']) {
    test(`ignore-patch-existing-pods-metadata: "${value}" copies only the marker (and our managed label)`, () => {
      const w = ws([{ name: 'a', patch: { metadata: { labels: { tier: 'spot' } } } }], {
        'workloadspread.kruise.io/ignore-patch-existing-pods-metadata': value,
      });
      assert.equal(ignoresPatchMetadata(w), true);
      assert.deepEqual(adoptionPatch(w, w.spec.subsets[0] as Subset), { metadata: { labels: { [MANAGED]: 'true' }, annotations: { [MARKER]: '{"name":"ws","subset":"a"}' } } });
    });
  }

  test('ignore annotation with another value copies the metadata', () => {
    const w = ws([{ name: 'a', patch: { metadata: { labels: { tier: 'spot' } } } }], {
      'workloadspread.kruise.io/ignore-patch-existing-pods-metadata': 'yes',
    });
    assert.deepEqual(adoptionPatch(w, w.spec.subsets[0] as Subset).metadata['labels'], { tier: 'spot', [MANAGED]: 'true' });
  });

  test('quotas are per version; the union keeps listing order', () => {
    const pods = [
      pod('v1-a', { hash: 'v1', marker: { name: 'ws', subset: 'a' } }),
      pod('v2-u', { hash: 'v2', node: 'n1' }),
      pod('v1-u', { hash: 'v1', node: 'n1' }),
    ];
    const g = groupPodsBySubset({ ws: ws(subsets), pods, nodeByName, workloadReplicas: 5 });
    // v2's quota for a is untouched by v1's pod, so v2-u joins a; v1-u finds a full and goes to b.
    assert.deepEqual(names(g.byVersion.get('v2')?.get('a')), ['v2-u']);
    assert.deepEqual(names(g.byVersion.get('v1')?.get('a')), ['v1-a']);
    assert.deepEqual(names(g.byVersion.get('v1')?.get('b')), ['v1-u']);
    assert.deepEqual(names(g.bySubset.get('a')), ['v1-a', 'v2-u']);
    assert.deepEqual(names(g.pods), ['v1-a', 'v2-u', 'v1-u']);
    assert.deepEqual([...g.byVersion.keys()], ['v1', 'v2']);
  });

  test('malformed subset patch metadata and odd pods never throw', () => {
    const w = ws([{ name: 'a', patch: { metadata: 'nope' } as unknown as Record<string, unknown> }]);
    const odd = { metadata: { name: 'odd' }, spec: { nodeName: 'n1' } } as unknown as Pod;
    const g = groupPodsBySubset({ ws: w, pods: [odd], nodeByName, workloadReplicas: 1 });
    assert.deepEqual(g.adoptions.map((a) => a.patch), [{ metadata: { labels: { [MANAGED]: 'true' }, annotations: { [MARKER]: '{"name":"ws","subset":"a"}' } } }]);
  });
});
