/**
 * event-mapping: one case per trigger of spec §4.1 and per addition (see the
 * module header), with a fake view over plain objects.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEPLOYMENT_REVISION_ANNOTATION, MATCHED_WORKLOADSPREAD_ANNOTATION } from '../api/keys.ts';
import { EMPTY_WHITELIST, type Whitelist } from '../api/whitelist.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import type { OwnerLookup } from '../core/pod-selection.ts';
import type { KubeObject, Node, Pod } from '../k8s/types.ts';
import { EventMapper, nodeChanged, onlyStatusChanged, parseKey, type MappingView } from './event-mapping.ts';

const NS = 'ns';

function ws(name: string, kind: string, target: string, apiVersion = 'apps/v1'): WorkloadSpread {
  return { metadata: { name, namespace: NS }, spec: { targetRef: { apiVersion, kind, name: target }, subsets: [{ name: 'a' }] } };
}

const spreads = [ws('on-web', 'Deployment', 'web'), ws('on-rs', 'ReplicaSet', 'lonely'), ws('on-db', 'StatefulSet', 'db'), ws('on-job', 'Job', 'batch', 'batch/v1'), ws('on-cs', 'CloneSet', 'cs', 'apps.kruise.io/v1alpha1'), ws('on-game', 'GameSet', 'g', 'games.io/v1')];

const replicaSet: KubeObject = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web-h1', namespace: NS, uid: 'rs-uid', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd-uid', controller: true }] } };
const deployment: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: NS, uid: 'd-uid' } };

function pod(name: string, extra: { marker?: string; node?: string; phase?: string; hash?: string; unschedulable?: boolean; deleting?: boolean; ready?: boolean } = {}): Pod {
  return {
    metadata: {
      name,
      namespace: NS,
      labels: { 'pod-template-hash': extra.hash ?? 'h1' },
      ...(extra.marker === undefined ? {} : { annotations: { [MATCHED_WORKLOADSPREAD_ANNOTATION]: extra.marker } }),
      ...(extra.deleting === true ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-h1', uid: 'rs-uid', controller: true }],
    },
    spec: { containers: [], ...(extra.node === undefined ? {} : { nodeName: extra.node }) },
    status: {
      phase: extra.phase ?? 'Running',
      ...(extra.unschedulable === true ? { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] } : {}),
      ...(extra.ready === undefined ? {} : { conditions: [{ type: 'Ready', status: extra.ready ? 'True' : 'False' }] }),
    },
  };
}

function view(options: { whitelist?: Whitelist; podsOnNode?: Pod[] } = {}): MappingView {
  const lookup: OwnerLookup = (ref) => (ref.kind === 'ReplicaSet' ? { found: replicaSet } : ref.kind === 'Deployment' ? { found: deployment } : { notFound: true });
  return {
    workloadSpreadsForTarget: (ns, group, kind, name) =>
      spreads.filter((w) => ns === NS && w.spec.targetRef.kind === kind && w.spec.targetRef.name === name && (w.spec.targetRef.apiVersion.includes('/') ? w.spec.targetRef.apiVersion.split('/')[0] : '') === group),
    listWorkloadSpreads: () => spreads,
    podsOnNode: () => options.podsOnNode ?? [],
    whitelist: () => options.whitelist ?? EMPTY_WHITELIST,
    ownerLookup: () => lookup,
    podVersionOptions: () => ({}),
  };
}

const marker = '{"name":"spread","subset":"a"}';

describe('pods', () => {
  const m = new EventMapper(view());
  const cases: [string, () => string[], string[]][] = [
    ['create with the marker → its WorkloadSpread', () => m.forPod('add', pod('p', { marker })), ['ns/spread']],
    ['delete with the marker → its WorkloadSpread', () => m.forPod('delete', pod('p', { marker })), ['ns/spread']],
    ['create without the marker → nothing', () => m.forPod('add', pod('p')), []],
    ['a marker without a name → nothing', () => m.forPod('add', pod('p', { marker: '{"subset":"a"}' })), []],
    ['update: active → inactive', () => m.forPod('update', pod('p', { marker, phase: 'Succeeded' }), pod('p', { marker })), ['ns/spread']],
    ['update: starts deleting', () => m.forPod('update', pod('p', { marker, deleting: true }), pod('p', { marker })), ['ns/spread']],
    ['update: version changed', () => m.forPod('update', pod('p', { marker, hash: 'h2' }), pod('p', { marker })), ['ns/spread']],
    ['update: bound or relabelled only → nothing', () => m.forPod('update', pod('p', { marker, node: 'n1' }), pod('p', { marker })), []],
    ['added: a marked pod became ready (the READY column, the ready gauge)', () => m.forPod('update', pod('p', { marker, ready: true }), pod('p', { marker, ready: false })), ['ns/spread']],
    ['added: a marked pod stopped being ready', () => m.forPod('update', pod('p', { marker, ready: false }), pod('p', { marker, ready: true })), ['ns/spread']],
    ['still ready → nothing', () => m.forPod('update', pod('p', { marker, ready: true, node: 'n1' }), pod('p', { marker, ready: true })), []],
    ['update: inactive → inactive → nothing', () => m.forPod('update', pod('p', { marker, phase: 'Failed' }), pod('p', { marker, phase: 'Succeeded' })), []],
    ['added: a marked pod just declared Unschedulable', () => m.forPod('update', pod('p', { marker, phase: 'Pending', unschedulable: true }), pod('p', { marker, phase: 'Pending' })), ['ns/spread']],
    ['added: an unmarked pod just bound → the WorkloadSpread of its owner chain', () => m.forPod('update', pod('p', { node: 'n1' }), pod('p')), ['ns/on-web']],
    ['an unmarked pod updated otherwise → nothing', () => m.forPod('update', pod('p', { node: 'n1', phase: 'Succeeded' }), pod('p', { node: 'n1' })), []],
  ];
  for (const [name, run, want] of cases) test(name, () => assert.deepEqual(run(), want));
});

describe('workloads', () => {
  const wl: Whitelist = { workloads: [{ group: 'games.io', version: 'v1', kind: 'GameSet', replicasPath: 'spec.size.count', subResources: [] }] };
  const m = new EventMapper(view({ whitelist: wl }));
  const obj = (apiVersion: string, kind: string, name: string, spec: Record<string, unknown> = {}, extra: { generation?: number; annotations?: Record<string, string>; status?: Record<string, unknown> } = {}): KubeObject => ({
    apiVersion,
    kind,
    metadata: { name, namespace: NS, generation: extra.generation ?? 1, ...(extra.annotations === undefined ? {} : { annotations: extra.annotations }) },
    spec,
    ...(extra.status === undefined ? {} : { status: extra.status }),
  });
  const d = (replicas: number, extra = {}) => obj('apps/v1', 'Deployment', 'web', { replicas }, extra);
  const cases: [string, () => string[], string[]][] = [
    ['create → the WorkloadSpread targeting it', () => m.forWorkload('add', 'apps', 'Deployment', d(1)), ['ns/on-web']],
    ['delete → the WorkloadSpread targeting it', () => m.forWorkload('delete', 'apps', 'Deployment', d(1)), ['ns/on-web']],
    ['a workload nobody targets → nothing', () => m.forWorkload('add', 'apps', 'Deployment', obj('apps/v1', 'Deployment', 'other')), []],
    ['update: replicas changed', () => m.forWorkload('update', 'apps', 'Deployment', d(3), d(2)), ['ns/on-web']],
    ['update: status only → nothing', () => m.forWorkload('update', 'apps', 'Deployment', d(2, { status: { readyReplicas: 2 } }), d(2)), []],
    ['update: Deployment revision annotation changed', () => m.forWorkload('update', 'apps', 'Deployment', d(2, { annotations: { [DEPLOYMENT_REVISION_ANNOTATION]: '2' } }), d(2, { annotations: { [DEPLOYMENT_REVISION_ANNOTATION]: '1' } })), ['ns/on-web']],
    ['added: generation changed (a spec edit)', () => m.forWorkload('update', 'apps', 'Deployment', d(2, { generation: 2 }), d(2)), ['ns/on-web']],
    ['a ReplicaSet → its own WorkloadSpread and its Deployment’s', () => m.forWorkload('add', 'apps', 'ReplicaSet', replicaSet), ['ns/on-web']],
    ['a standalone ReplicaSet → its WorkloadSpread', () => m.forWorkload('add', 'apps', 'ReplicaSet', obj('apps/v1', 'ReplicaSet', 'lonely')), ['ns/on-rs']],
    ['Job: parallelism changed', () => m.forWorkload('update', 'batch', 'Job', obj('batch/v1', 'Job', 'batch', { parallelism: 3 }), obj('batch/v1', 'Job', 'batch', { parallelism: 2 })), ['ns/on-job']],
    ['Job: completions only → nothing', () => m.forWorkload('update', 'batch', 'Job', obj('batch/v1', 'Job', 'batch', { parallelism: 2 }, { status: { succeeded: 1 } }), obj('batch/v1', 'Job', 'batch', { parallelism: 2 })), []],
    ['added: StatefulSet replicas changed', () => m.forWorkload('update', 'apps', 'StatefulSet', obj('apps/v1', 'StatefulSet', 'db', { replicas: 0 }), obj('apps/v1', 'StatefulSet', 'db', { replicas: 3 })), ['ns/on-db']],
    ['CloneSet: new updateRevision differs from the old currentRevision', () => m.forWorkload('update', 'apps.kruise.io', 'CloneSet', obj('apps.kruise.io/v1alpha1', 'CloneSet', 'cs', { replicas: 2 }, { status: { updateRevision: 'cs-2' } }), obj('apps.kruise.io/v1alpha1', 'CloneSet', 'cs', { replicas: 2 }, { status: { updateRevision: 'cs-2', currentRevision: 'cs-1' } })), ['ns/on-cs']],
    ['CloneSet: revisions settled → nothing', () => m.forWorkload('update', 'apps.kruise.io', 'CloneSet', obj('apps.kruise.io/v1alpha1', 'CloneSet', 'cs', { replicas: 2 }, { status: { updateRevision: 'cs-2' } }), obj('apps.kruise.io/v1alpha1', 'CloneSet', 'cs', { replicas: 2 }, { status: { updateRevision: 'cs-2', currentRevision: 'cs-2' } })), []],
    ['custom kind: the whitelist replicasPath value changed', () => m.forWorkload('update', 'games.io', 'GameSet', obj('games.io/v1', 'GameSet', 'g', { size: { count: 4 } }), obj('games.io/v1', 'GameSet', 'g', { size: { count: 3 } })), ['ns/on-game']],
    ['custom kind: another field → nothing', () => m.forWorkload('update', 'games.io', 'GameSet', obj('games.io/v1', 'GameSet', 'g', { size: { count: 3 } }, { status: { x: 1 } }), obj('games.io/v1', 'GameSet', 'g', { size: { count: 3 } })), []],
  ];
  for (const [name, run, want] of cases) test(name, () => assert.deepEqual(run(), want));
});

describe('nodes', () => {
  const node = (labels: Record<string, string>, extra: Partial<Node> = {}): Node => ({ metadata: { name: 'n1', labels }, ...extra });
  const onNode = [pod('marked', { marker, node: 'n1' }), pod('unmarked', { node: 'n1' })];
  const m = new EventMapper(view({ podsOnNode: onNode }));
  test('a label change → the WorkloadSpreads of the pods there (marker, or owner chain)', () => {
    assert.deepEqual(m.forNode('update', node({ zone: 'b' }), node({ zone: 'a' })).sort(), ['ns/on-web', 'ns/spread']);
  });
  test('added and deleted nodes count too', () => {
    assert.deepEqual(m.forNode('add', node({})).sort(), ['ns/on-web', 'ns/spread']);
    assert.deepEqual(m.forNode('delete', node({})).sort(), ['ns/on-web', 'ns/spread']);
  });
  test('a heartbeat (conditions only) → nothing', () => {
    assert.deepEqual(m.forNode('update', node({ zone: 'a' }, { status: { conditions: [{ type: 'Ready', status: 'True' }] } }), node({ zone: 'a' })), []);
  });
  const changes: [string, Node, Node, boolean][] = [
    ['taints', node({}, { spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } }), node({}), true],
    ['cordon', node({}, { spec: { unschedulable: true } }), node({}), true],
    ['allocatable', node({}, { status: { allocatable: { cpu: '2' } } }), node({}, { status: { allocatable: { cpu: '4' } } }), true],
    ['labels', node({ a: '1' }), node({}), true],
    ['heartbeat', node({}, { status: { conditions: [] } }), node({}), false],
  ];
  for (const [name, a, b, want] of changes) test(`nodeChanged: ${name} → ${want}`, () => assert.equal(nodeChanged(b, a), want));
});

describe('keys', () => {
  test('parseKey splits namespace/name and rejects anything else', () => {
    assert.deepEqual(parseKey('ns/w'), { namespace: 'ns', name: 'w' });
    for (const bad of ['w', '/w', 'ns/', 'a/b/c', '']) assert.equal(parseKey(bad), undefined, bad);
  });
  test('a WorkloadSpread event → itself, and the others of the same workload (a duplicate takes over when the one that counted goes)', () => {
    assert.deepEqual(new EventMapper(view()).forWorkloadSpread(ws('x', 'Deployment', 'web')), ['ns/x', 'ns/on-web']);
    assert.deepEqual(new EventMapper(view()).forWorkloadSpread(ws('y', 'Deployment', 'nobody')), ['ns/y']);
  });
});

describe('D25: status-only WorkloadSpread updates', () => {
  const base = { ...ws('w', 'Deployment', 'web'), status: { observedGeneration: 1, subsetStatuses: [] } };
  test('a change of the status alone', () => {
    assert.equal(onlyStatusChanged(base, { ...base, metadata: { ...base.metadata, resourceVersion: '9' }, status: { observedGeneration: 1, subsetStatuses: [{ name: 'a', replicas: 1, missingReplicas: 0 }] } }), true);
  });
  test('anything beside the status is not', () => {
    const changed = [
      { ...base, spec: { ...base.spec, subsets: [{ name: 'b' }] } },
      { ...base, metadata: { ...base.metadata, generation: 2 } },
      { ...base, metadata: { ...base.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } },
      { ...base, metadata: { ...base.metadata, labels: { team: 'x' } } },
      { ...base, metadata: { ...base.metadata, annotations: { note: 'x' } } },
      { ...base, metadata: { ...base.metadata, finalizers: ['x/y'] } },
      { ...base, metadata: { ...base.metadata, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: 'u' }] } },
    ];
    for (const obj of changed) assert.equal(onlyStatusChanged(base, obj), false, JSON.stringify(obj));
  });
});
