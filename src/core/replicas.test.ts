import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { EMPTY_WHITELIST, type Whitelist } from '../api/whitelist.ts';
import type { KubeObject } from '../k8s/types.ts';
import { admissionReadsReplicas, admissionWorkloadReplicas, controllerWorkloadReplicas, readsScaleSubresource, replicasWithScale, sumReplicasPaths, walkReplicasPath } from './replicas.ts';

const tfjob = {
  spec: {
    tfReplicaSpecs: { Worker: { replicas: 4 }, PS: { replicas: 2 }, Chief: { replicas: null } },
  },
  subsets: [{ replicas: 3 }, { replicas: 5, name: 'x' }],
  scalar: 7,
  text: '3',
  float: 2.5,
  nested: { list: [[1, 2], [3]] },
};

describe('walkReplicasPath (§1.2)', () => {
  const ok: [string, number][] = [
    ['spec.tfReplicaSpecs.Worker.replicas', 4],
    ['subsets.1.replicas', 5],
    ['subsets.0.replicas', 3],
    ['scalar', 7],
    ['nested.list.0.1', 2],
    ['', 0],
  ];
  for (const [path, want] of ok) {
    test(`${JSON.stringify(path)} → ${want}`, () => assert.deepEqual(walkReplicasPath(tfjob, path), { ok: true, value: want }));
  }

  const errors: [string, string][] = [
    ['spec.tfReplicaSpecs.Evaluator.replicas', 'path "Evaluator" not exists'],
    ['spec.missing', 'path "missing" not exists'],
    ['subsets.2.replicas', 'index 2 out of range'],
    ['subsets.-1.replicas', 'index -1 out of range'],
    ['subsets.x.replicas', 'strconv.Atoi: parsing "x": invalid syntax'],
    ['subsets..replicas', 'strconv.Atoi: parsing "": invalid syntax'],
    ['scalar.deeper', 'object is not deep enough'],
    ['text.more', 'object is not deep enough'],
    ['text', 'object type error'],
    ['float', 'object type error'],
    ['spec.tfReplicaSpecs.Chief.replicas', 'object type error'],
    ['spec', 'object type error'],
    ['subsets', 'object type error'],
    ['constructor', 'path "constructor" not exists'],
    ['spec.', 'path "" not exists'],
  ];
  for (const [path, want] of errors) {
    test(`${JSON.stringify(path)} fails with ${want}`, () => {
      const got = walkReplicasPath(tfjob, path);
      assert.equal(got.ok, false);
      assert.equal(!got.ok && got.error, want);
    });
  }

  test('missing is set for absent and null fields only', () => {
    const missing = (path: string) => {
      const got = walkReplicasPath(tfjob, path);
      return !got.ok && got.missing;
    };
    assert.equal(missing('spec.missing'), true);
    assert.equal(missing('spec.tfReplicaSpecs.Chief.replicas'), true);
    assert.equal(missing('spec.tfReplicaSpecs.Chief.replicas.x'), true);
    assert.equal(missing('text'), false);
    assert.equal(missing('subsets.9.replicas'), false);
  });

  test('never throws on arbitrary JSON and paths', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string(), (value, path) => {
        walkReplicasPath(value, path);
      }),
    );
  });
});

describe('sumReplicasPaths', () => {
  test('sums every path (TFJob roles)', () => {
    assert.deepEqual(sumReplicasPaths(tfjob, ['spec.tfReplicaSpecs.Worker.replicas', 'spec.tfReplicaSpecs.PS.replicas']), { ok: true, replicas: 6 });
  });
  test('an empty path adds 0', () => {
    assert.deepEqual(sumReplicasPaths(tfjob, ['', 'scalar']), { ok: true, replicas: 7 });
  });
  test('the first failing path is the error', () => {
    assert.deepEqual(sumReplicasPaths(tfjob, ['scalar', 'text', 'nope']), { ok: false, error: 'object type error' });
  });
});

function spread(apiVersion: string, kind: string, targetFilter?: WorkloadSpread['spec']['targetFilter']): WorkloadSpread {
  const ws: WorkloadSpread = { metadata: { name: 'ws', namespace: 'ns' }, spec: { targetRef: { apiVersion, kind, name: 'w' }, subsets: [{ name: 'a' }] } };
  if (targetFilter !== undefined) ws.spec.targetFilter = targetFilter;
  return ws;
}

function workload(spec: Record<string, unknown> | undefined, extra: Record<string, unknown> = {}): KubeObject {
  return spec === undefined ? { metadata: { name: 'w' }, ...extra } : { metadata: { name: 'w' }, spec, ...extra };
}

const whitelist: Whitelist = {
  workloads: [
    { group: 'argoproj.io', version: 'v1alpha1', kind: 'Rollout', subResources: [], replicasPath: 'spec.replicas' },
    { group: 'game.kruise.io', version: 'v1alpha1', kind: 'GameServerSet', subResources: [{ group: 'game.kruise.io', version: 'v1alpha1', kind: 'GameServer' }], replicasPath: 'spec.size' },
    { group: 'apps.kruise.io', version: 'v1beta1', kind: 'Empty', subResources: [], replicasPath: '' },
  ],
};

describe('admissionWorkloadReplicas (§5.1, D4)', () => {
  const cases: { name: string; ws: WorkloadSpread; obj: KubeObject | undefined; wl?: Whitelist; want: number | string }[] = [
    { name: 'workload not found → 0', ws: spread('apps/v1', 'Deployment'), obj: undefined, want: 0 },
    { name: 'Deployment spec.replicas', ws: spread('apps/v1', 'Deployment'), obj: workload({ replicas: 6 }), want: 6 },
    { name: 'ReplicaSet spec.replicas', ws: spread('apps/v1', 'ReplicaSet'), obj: workload({ replicas: 2 }), want: 2 },
    { name: 'StatefulSet apps/v1', ws: spread('apps/v1', 'StatefulSet'), obj: workload({ replicas: 3 }), want: 3 },
    { name: 'CloneSet v1alpha1', ws: spread('apps.kruise.io/v1alpha1', 'CloneSet'), obj: workload({ replicas: 9 }), want: 9 },
    { name: 'Advanced StatefulSet v1beta1', ws: spread('apps.kruise.io/v1beta1', 'StatefulSet'), obj: workload({ replicas: 4 }), want: 4 },
    { name: 'CloneSet v1beta1 is an unknown GVK → 0 (§9.15)', ws: spread('apps.kruise.io/v1beta1', 'CloneSet'), obj: workload({ replicas: 9 }), want: 0 },
    { name: 'Job spec.parallelism', ws: spread('batch/v1', 'Job'), obj: workload({ parallelism: 5, completions: 10 }), want: 5 },
    { name: 'nil spec.replicas → 1 (D4)', ws: spread('apps/v1', 'Deployment'), obj: workload({}), want: 1 },
    { name: 'null spec.replicas → 1 (D4)', ws: spread('apps/v1', 'Deployment'), obj: workload({ replicas: null }), want: 1 },
    { name: 'no spec at all → 1 (D4)', ws: spread('apps/v1', 'Deployment'), obj: workload(undefined), want: 1 },
    { name: 'nil Job parallelism → 1 (D4)', ws: spread('batch/v1', 'Job'), obj: workload({ completions: 3 }), want: 1 },
    { name: 'replicas of the wrong type is an error', ws: spread('apps/v1', 'Deployment'), obj: workload({ replicas: '3' }), want: 'spec.replicas: object type error' },
    { name: 'spec.replicas 0 stays 0', ws: spread('apps/v1', 'Deployment'), obj: workload({ replicas: 0 }), want: 0 },
    { name: 'custom kind by whitelist group+kind', ws: spread('argoproj.io/v1alpha1', 'Rollout'), obj: workload({ replicas: 8 }), wl: whitelist, want: 8 },
    { name: 'custom kind: the whitelist version is ignored', ws: spread('argoproj.io/v1', 'Rollout'), obj: workload({ replicas: 8 }), wl: whitelist, want: 8 },
    { name: 'custom kind: whitelist path elsewhere', ws: spread('game.kruise.io/v1alpha1', 'GameServerSet'), obj: workload({ size: 12 }), wl: whitelist, want: 12 },
    { name: 'custom kind: absent value at the whitelist path → 1 (D4)', ws: spread('argoproj.io/v1alpha1', 'Rollout'), obj: workload({}), wl: whitelist, want: 1 },
    { name: 'custom kind: empty whitelist path → 0', ws: spread('apps.kruise.io/v1beta1', 'Empty'), obj: workload({ replicas: 3 }), wl: whitelist, want: 0 },
    { name: 'custom kind not whitelisted → 0', ws: spread('argoproj.io/v1alpha1', 'Rollout'), obj: workload({ replicas: 8 }), want: 0 },
    {
      name: 'replicasPathList wins and is summed',
      ws: spread('kubeflow.org/v1', 'TFJob', { replicasPathList: ['spec.tfReplicaSpecs.Worker.replicas', 'spec.tfReplicaSpecs.PS.replicas'] }),
      obj: tfjob,
      want: 6,
    },
    {
      name: 'replicasPathList also wins over a built-in kind',
      ws: spread('apps/v1', 'Deployment', { replicasPathList: ['spec.other'] }),
      obj: workload({ replicas: 3, other: 11 }),
      want: 11,
    },
    {
      name: 'replicasPathList stays strict: a missing path is an error',
      ws: spread('kubeflow.org/v1', 'TFJob', { replicasPathList: ['spec.tfReplicaSpecs.Evaluator.replicas'] }),
      obj: tfjob,
      want: 'path "Evaluator" not exists',
    },
    { name: 'an empty replicasPathList is ignored', ws: spread('apps/v1', 'Deployment', { replicasPathList: [] }), obj: workload({ replicas: 3 }), want: 3 },
    { name: 'a malformed targetRef apiVersion is an error', ws: spread('a/b/c', 'Deployment'), obj: workload({ replicas: 3 }), want: 'unexpected GroupVersion string: a/b/c' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const got = admissionWorkloadReplicas(c.ws, c.obj, c.wl ?? EMPTY_WHITELIST);
      if (typeof c.want === 'number') assert.deepEqual(got, { ok: true, replicas: c.want });
      else assert.deepEqual(got, { ok: false, error: c.want });
    });
  }
});

describe('admissionReadsReplicas: whether admission counts from the workload at all (D22)', () => {
  const cases: [string, WorkloadSpread, Whitelist, boolean][] = [
    ['Deployment', spread('apps/v1', 'Deployment'), EMPTY_WHITELIST, true],
    ['CloneSet v1alpha1', spread('apps.kruise.io/v1alpha1', 'CloneSet'), EMPTY_WHITELIST, true],
    ['CloneSet v1beta1 (§9.15: always 0)', spread('apps.kruise.io/v1beta1', 'CloneSet'), EMPTY_WHITELIST, false],
    ['Job', spread('batch/v1', 'Job'), EMPTY_WHITELIST, true],
    ['whitelisted custom kind', spread('argoproj.io/v1alpha1', 'Rollout'), whitelist, true],
    ['custom kind not whitelisted', spread('argoproj.io/v1alpha1', 'Rollout'), EMPTY_WHITELIST, false],
    ['whitelist entry with an empty path', spread('apps.kruise.io/v1beta1', 'Empty'), whitelist, false],
    ['replicasPathList', spread('kubeflow.org/v1', 'TFJob', { replicasPathList: ['spec.x'] }), EMPTY_WHITELIST, true],
    ['malformed apiVersion', spread('a/b/c', 'Deployment'), EMPTY_WHITELIST, false],
  ];
  for (const [name, ws, wl, want] of cases) {
    test(`${name} → ${want}`, () => {
      assert.equal(admissionReadsReplicas(ws, wl), want);
      // Where it says no, no copy of the workload gives admission another count.
      if (!want) for (const replicas of [0, 3, 9]) assert.ok(!admissionWorkloadReplicas(ws, workload({ replicas }), wl).ok || (admissionWorkloadReplicas(ws, workload({ replicas }), wl) as { replicas: number }).replicas === 0);
    });
  }
});

describe('controllerWorkloadReplicas (§5.2, D4)', () => {
  const versioned: Whitelist = {
    workloads: [{ group: 'apps', version: 'v1', kind: 'Deployment', subResources: [], replicasPath: 'spec.template.replicas' }, ...whitelist.workloads],
  };
  const cases: {
    name: string;
    ws: WorkloadSpread;
    obj: KubeObject | undefined;
    wl?: Whitelist;
    scale?: { replicas?: number };
    want: number | string;
  }[] = [
    { name: 'workload not found → 0', ws: spread('apps/v1', 'Deployment'), obj: undefined, want: 0 },
    { name: 'Job parallelism', ws: spread('batch/v1', 'Job'), obj: workload({ parallelism: 3 }), want: 3 },
    { name: 'nil Job parallelism → 1', ws: spread('batch/v1', 'Job'), obj: workload({}), want: 1 },
    { name: 'Deployment spec.replicas', ws: spread('apps/v1', 'Deployment'), obj: workload({ replicas: 5 }), want: 5 },
    { name: 'nil Deployment replicas → 1', ws: spread('apps/v1', 'Deployment'), obj: workload({}), want: 1 },
    { name: 'CloneSet v1beta1: group+kind is enough here', ws: spread('apps.kruise.io/v1beta1', 'CloneSet'), obj: workload({ replicas: 7 }), want: 7 },
    { name: 'Advanced StatefulSet', ws: spread('apps.kruise.io/v1beta1', 'StatefulSet'), obj: workload({ replicas: 2 }), want: 2 },
    { name: 'ReplicationController', ws: spread('v1', 'ReplicationController'), obj: workload({ replicas: 4 }), want: 4 },
    { name: 'custom kind via the scale subresource', ws: spread('argoproj.io/v1', 'Rollout'), obj: workload({ replicas: 8 }), scale: { replicas: 6 }, want: 6 },
    { name: 'scale with replicas omitted (0)', ws: spread('argoproj.io/v1', 'Rollout'), obj: workload({}), scale: {}, want: 0 },
    { name: 'custom kind without scale → -1 (unknown)', ws: spread('argoproj.io/v1', 'Rollout'), obj: workload({ replicas: 8 }), want: -1 },
    { name: 'whitelist path when group AND version match', ws: spread('argoproj.io/v1alpha1', 'Rollout'), obj: workload({ replicas: 8 }), wl: whitelist, want: 8 },
    { name: 'whitelist ignored when the version differs', ws: spread('argoproj.io/v1', 'Rollout'), obj: workload({ replicas: 8 }), wl: whitelist, want: -1 },
    { name: 'an exact whitelist entry overrides a built-in kind', ws: spread('apps/v1', 'Deployment'), obj: workload({ replicas: 1, template: { replicas: 13 } }), wl: versioned, want: 13 },
    { name: 'empty whitelist path → 0', ws: spread('apps.kruise.io/v1beta1', 'Empty'), obj: workload({ replicas: 3 }), wl: whitelist, want: 0 },
    {
      name: 'replicasPathList wins over the whitelist',
      ws: spread('argoproj.io/v1alpha1', 'Rollout', { replicasPathList: ['spec.other'] }),
      obj: workload({ replicas: 8, other: 2 }),
      wl: whitelist,
      want: 2,
    },
    {
      name: 'a path error is a sync error',
      ws: spread('kubeflow.org/v1', 'TFJob', { replicasPathList: ['subsets.7.replicas'] }),
      obj: tfjob,
      want: 'index 7 out of range',
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const got = controllerWorkloadReplicas(c.ws, c.obj, c.wl ?? EMPTY_WHITELIST, c.scale);
      if (typeof c.want === 'number') assert.deepEqual(got, { ok: true, replicas: c.want });
      else assert.deepEqual(got, { ok: false, error: c.want });
    });
  }
});

describe('the scale subresource of a custom kind (spec §5.2)', () => {
  const rollout = spread('argoproj.io/v1alpha1', 'Rollout');
  const obj = workload({ replicas: 4 });

  test('read only for a custom kind whose count is unknown or that owns no pod itself', () => {
    assert.equal(readsScaleSubresource(spread('apps/v1', 'Deployment'), { ok: true, replicas: -1 }, false), false);
    assert.equal(readsScaleSubresource(rollout, { ok: true, replicas: 4 }, true), false);
    assert.equal(readsScaleSubresource(rollout, { ok: true, replicas: -1 }, true), true);
    assert.equal(readsScaleSubresource(rollout, { ok: true, replicas: 4 }, false), true);
    assert.equal(readsScaleSubresource(rollout, { ok: false, error: 'x' }, false), false);
  });

  test('the count from the scale when unknown; its selector only when the workload owns no pod', () => {
    assert.deepEqual(replicasWithScale(rollout, obj, EMPTY_WHITELIST, { ok: true, replicas: -1 }, false, { replicas: 6, selector: 'app=web' }), { ok: true, replicas: 6, selector: 'app=web' });
    assert.deepEqual(replicasWithScale(rollout, obj, EMPTY_WHITELIST, { ok: true, replicas: 4 }, false, { replicas: 6, selector: 'app=web' }), { ok: true, replicas: 4, selector: 'app=web' });
    assert.deepEqual(replicasWithScale(rollout, obj, EMPTY_WHITELIST, { ok: true, replicas: -1 }, true, { selector: 'app=web' }), { ok: true, replicas: 0 });
  });
});
