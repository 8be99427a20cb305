import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  apiVersionGroup,
  controllerRef,
  getPodCondition,
  isPodActive,
  isPodReady,
  isPodScheduled,
  isPodTerminating,
  isPodUnschedulable,
  maxContainerRestarts,
  podDeletionCost,
  podPhase,
  podReadyTime,
  podResourceRequests,
} from './pod.ts';
import { isControlledBy, ownerReferenceFor } from './owner.ts';
import type { Container, Pod, PodStatus } from './types.ts';

const pod = (status?: PodStatus, extra: Partial<Pod> = {}): Pod => ({
  metadata: { name: 'p', ...(extra.metadata ?? {}) },
  spec: { containers: [], ...(extra.spec ?? {}) },
  ...(status !== undefined ? { status } : {}),
});

describe('activeness', () => {
  const cases: [string, Pod, boolean][] = [
    ['Running', pod({ phase: 'Running' }), true],
    ['Pending', pod({ phase: 'Pending' }), true],
    ['Unknown', pod({ phase: 'Unknown' }), true],
    ['no status', pod(), true],
    ['Succeeded', pod({ phase: 'Succeeded' }), false],
    ['Failed', pod({ phase: 'Failed' }), false],
    ['Running but being deleted', pod({ phase: 'Running' }, { metadata: { deletionTimestamp: '2026-01-01T00:00:00Z' } }), false],
  ];
  for (const [name, p, want] of cases) test(name, () => assert.equal(isPodActive(p), want));

  test('terminating and phase accessors', () => {
    assert.equal(isPodTerminating(pod(undefined, { metadata: { deletionTimestamp: '2026-01-01T00:00:00Z' } })), true);
    assert.equal(isPodTerminating(pod()), false);
    assert.equal(podPhase(pod()), '');
    assert.equal(podPhase(pod({ phase: 'Running' })), 'Running');
  });
});

describe('conditions and readiness', () => {
  const ready = pod({
    phase: 'Running',
    conditions: [
      { type: 'PodScheduled', status: 'True' },
      { type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:10Z' },
      { type: 'Ready', status: 'False' },
    ],
  });
  test('getPodCondition returns the first of its type', () => {
    assert.equal(getPodCondition(ready.status, 'Ready')?.status, 'True');
    assert.equal(getPodCondition(ready.status, 'Initialized'), undefined);
    assert.equal(getPodCondition(undefined, 'Ready'), undefined);
  });
  test('isPodReady and podReadyTime', () => {
    assert.equal(isPodReady(ready), true);
    assert.equal(podReadyTime(ready), Date.parse('2026-01-01T00:00:10Z'));
    const notReady = pod({ conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: '2026-01-01T00:00:10Z' }] });
    assert.equal(isPodReady(notReady), false);
    assert.equal(podReadyTime(notReady), undefined);
    assert.equal(podReadyTime(pod({ conditions: [{ type: 'Ready', status: 'True' }] })), undefined);
  });
  test('unschedulable and scheduled', () => {
    assert.equal(isPodUnschedulable(pod({ conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] })), true);
    assert.equal(isPodUnschedulable(pod({ conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }] })), false);
    assert.equal(isPodUnschedulable(pod({ conditions: [{ type: 'PodScheduled', status: 'True' }] })), false);
    assert.equal(isPodScheduled(pod(undefined, { spec: { containers: [], nodeName: 'n1' } })), true);
    assert.equal(isPodScheduled(pod()), false);
  });
  test('maxContainerRestarts counts regular containers only', () => {
    const p = pod({
      containerStatuses: [
        { name: 'a', ready: true, restartCount: 2 },
        { name: 'b', ready: true, restartCount: 5 },
      ],
      initContainerStatuses: [{ name: 'i', ready: true, restartCount: 9 }],
    });
    assert.equal(maxContainerRestarts(p), 5);
    assert.equal(maxContainerRestarts(pod()), 0);
  });
});

describe('apiVersionGroup', () => {
  const cases: [string, { ok: boolean; group?: string; version?: string; error?: string }][] = [
    ['v1', { ok: true, group: '', version: 'v1' }],
    ['apps/v1', { ok: true, group: 'apps', version: 'v1' }],
    ['apps.kruise.io/v1alpha1', { ok: true, group: 'apps.kruise.io', version: 'v1alpha1' }],
    ['', { ok: true, group: '', version: '' }],
    ['/', { ok: true, group: '', version: '' }],
    ['a/b/c', { ok: false, error: 'unexpected GroupVersion string: a/b/c' }],
  ];
  for (const [input, want] of cases) test(JSON.stringify(input), () => assert.deepEqual(apiVersionGroup(input), want));
});

describe('podDeletionCost', () => {
  const cases: [string | undefined, number][] = [
    [undefined, 0],
    ['100', 100],
    ['-100', -100],
    ['0', 0],
    ['-0', 0],
    ['-007', -7],
    ['2147483647', 2147483647],
    ['-2147483648', -2147483648],
    ['2147483648', 0],
    ['+10', 0],
    ['008', 0],
    ['1.5', 0],
    ['abc', 0],
    ['', 0],
    ['-', 0],
  ];
  for (const [value, want] of cases) {
    test(String(JSON.stringify(value)), () => {
      const annotations = value === undefined ? {} : { 'controller.kubernetes.io/pod-deletion-cost': value };
      assert.equal(podDeletionCost(pod(undefined, { metadata: { annotations } })), want);
    });
  }
});

describe('owner references', () => {
  const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'rs', uid: 'u1' } };
  test('ownerReferenceFor builds a controller reference by default', () => {
    assert.deepEqual(ownerReferenceFor(rs), { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u1', controller: true, blockOwnerDeletion: true });
    assert.deepEqual(ownerReferenceFor(rs, false), { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u1' });
  });
  test('controllerRef picks the first controller reference', () => {
    const p = pod(undefined, {
      metadata: {
        ownerReferences: [ownerReferenceFor({ ...rs, metadata: { name: 'other', uid: 'u0' } }, false), ownerReferenceFor(rs), ownerReferenceFor({ ...rs, metadata: { name: 'x', uid: 'u2' } })],
      },
    });
    assert.equal(controllerRef(p)?.uid, 'u1');
    assert.equal(isControlledBy(p, 'u1'), true);
    assert.equal(isControlledBy(p, 'u0'), false);
    assert.equal(controllerRef(pod()), undefined);
    assert.equal(isControlledBy(pod(), ''), false);
  });
});

describe('podResourceRequests', () => {
  const c = (name: string, requests: Record<string, string>, restartPolicy?: string): Container => ({
    name,
    resources: { requests },
    ...(restartPolicy !== undefined ? { restartPolicy } : {}),
  });
  const withSpec = (spec: Partial<Pod['spec']>): Pod => ({ metadata: { name: 'p' }, spec: { containers: [], ...spec } });

  test('sums regular containers', () => {
    const r = podResourceRequests(withSpec({ containers: [c('a', { cpu: '100m', memory: '64Mi' }), c('b', { cpu: '200m', memory: '64Mi' })] }));
    assert.deepEqual(r, { cpuMilli: 300, memory: 134217728 });
  });
  test('a larger init container dominates', () => {
    const r = podResourceRequests(withSpec({ containers: [c('a', { cpu: '100m' })], initContainers: [c('i', { cpu: '1', memory: '1Gi' })] }));
    assert.deepEqual(r, { cpuMilli: 1000, memory: 1073741824 });
  });
  test('sidecars add to the containers and to every later init container', () => {
    // init: regular 1, sidecar 2, regular 3; containers: 4 → max(4+2, 1, 2, 3+2) = 6
    const spec = {
      initContainers: [c('i1', { cpu: '1' }), c('side', { cpu: '2' }, 'Always'), c('i3', { cpu: '3' })],
      containers: [c('main', { cpu: '4' })],
    };
    assert.equal(podResourceRequests(withSpec(spec)).cpuMilli, 6000);
    // with a big late init container the init peak wins: max(1+2, 10+2) = 12
    const spec2 = { ...spec, initContainers: [c('side', { cpu: '2' }, 'Always'), c('big', { cpu: '10' })] };
    assert.equal(podResourceRequests(withSpec(spec2)).cpuMilli, 12000);
  });
  test('overhead is added, pod-level requests override the containers', () => {
    assert.equal(podResourceRequests(withSpec({ containers: [c('a', { cpu: '100m' })], overhead: { cpu: '250m' } })).cpuMilli, 350);
    const podLevel = withSpec({ containers: [c('a', { cpu: '100m', memory: '1Gi' })], resources: { requests: { cpu: '2' } }, overhead: { cpu: '250m' } });
    assert.deepEqual(podResourceRequests(podLevel), { cpuMilli: 2250, memory: 1073741824 });
  });
  test('other resources, rounding and unparseable quantities', () => {
    const r = podResourceRequests(withSpec({ containers: [c('a', { cpu: '1n', 'nvidia.com/gpu': '1', 'ephemeral-storage': '1Gi', memory: 'lots' })] }));
    assert.deepEqual(r, { cpuMilli: 1, memory: 0, 'nvidia.com/gpu': 1, 'ephemeral-storage': 1073741824 });
  });
  test('malformed pods give zero requests', () => {
    assert.deepEqual(podResourceRequests({ metadata: {} } as Pod), { cpuMilli: 0, memory: 0 });
    assert.deepEqual(podResourceRequests(withSpec({ containers: [null as unknown as Container] })), { cpuMilli: 0, memory: 0 });
  });
});
