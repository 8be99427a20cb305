import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { formatTime } from '../../k8s/time.ts';
import type { Pod, PodCondition } from '../../k8s/types.ts';
import { normalizeImage, podStatusAt, statusChanged, type StatusContext } from './pod-status.ts';

const T0 = Date.UTC(2026, 0, 1);
const ctx = (now: number, podIP = '10.244.0.2'): StatusContext => ({ now, hostIP: '172.18.0.2', podIP, startTime: T0 });
const pod = (spec: Record<string, unknown> = {}, status: Record<string, unknown> = { phase: 'Pending' }): Pod =>
  ({ metadata: { name: 'p', uid: 'u1' }, spec: { containers: [{ name: 'app', image: 'nginx:1.25' }], ...spec }, status }) as Pod;
const cond = (status: Record<string, unknown>, type: string) => ((status['conditions'] as PodCondition[]) ?? []).find((c) => c.type === type);

describe('normalizeImage (what the runtime reports)', () => {
  const cases: [string, string][] = [
    ['nginx', 'docker.io/library/nginx:latest'],
    ['nginx:1.25', 'docker.io/library/nginx:1.25'],
    ['bitnami/redis:7', 'docker.io/bitnami/redis:7'],
    ['registry.k8s.io/pause:3.10', 'registry.k8s.io/pause:3.10'],
    ['localhost/app', 'localhost/app:latest'],
    ['ghcr.io/org/app@sha256:abc', 'ghcr.io/org/app@sha256:abc'],
    ['host:5000/app', 'host:5000/app:latest'],
  ];
  for (const [image, want] of cases) test(image, () => assert.equal(normalizeImage(image), want));
});

describe('podStatusAt', () => {
  test('conditions keep their transition time while unchanged, and other writers\' conditions are kept', () => {
    const scheduled = { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: formatTime(T0) };
    const creating = podStatusAt(pod({}, { phase: 'Pending', conditions: [scheduled] }), { kind: 'creating' }, ctx(T0));
    const running = podStatusAt(pod({}, creating), { kind: 'running', startedAt: T0 + 2000, ready: true }, ctx(T0 + 2000));
    assert.equal(cond(running, 'Initialized')?.lastTransitionTime, formatTime(T0));
    assert.equal(cond(running, 'Ready')?.lastTransitionTime, formatTime(T0 + 2000));
    assert.deepEqual(cond(running, 'PodScheduled'), scheduled);
    assert.deepEqual((running['conditions'] as PodCondition[]).map((c) => c.type), ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled']);
    assert.equal(statusChanged(pod({}, running), podStatusAt(pod({}, running), { kind: 'running', startedAt: T0 + 2000, ready: true }, ctx(T0 + 9000))), false);
  });

  test('init containers: PodInitializing, then Completed; sidecars keep running', () => {
    const spec = { initContainers: [{ name: 'migrate', image: 'busybox' }, { name: 'proxy', image: 'envoy', restartPolicy: 'Always' }] };
    const creating = podStatusAt(pod(spec), { kind: 'creating' }, ctx(T0));
    assert.deepEqual(cond(creating, 'Initialized'), { type: 'Initialized', status: 'False', lastProbeTime: null, lastTransitionTime: formatTime(T0), reason: 'ContainersNotInitialized', message: 'containers with incomplete status: [migrate]' });
    assert.deepEqual((creating['containerStatuses'] as { state: unknown }[])[0]?.state, { waiting: { reason: 'PodInitializing' } });
    const running = podStatusAt(pod(spec), { kind: 'running', startedAt: T0, ready: true }, ctx(T0));
    const inits = running['initContainerStatuses'] as { name: string; state: Record<string, Record<string, unknown>> }[];
    assert.equal(inits[0]?.state['terminated']?.['reason'], 'Completed');
    assert.deepEqual(Object.keys(inits[1]?.state ?? {}), ['running']);
  });

  test('readiness gates: Ready waits for their conditions', () => {
    const spec = { readinessGates: [{ conditionType: 'example.com/lb' }] };
    const missing = podStatusAt(pod(spec), { kind: 'running', startedAt: T0, ready: true }, ctx(T0));
    assert.equal(cond(missing, 'ContainersReady')?.status, 'True');
    assert.deepEqual([cond(missing, 'Ready')?.status, cond(missing, 'Ready')?.reason, cond(missing, 'Ready')?.message], ['False', 'ReadinessGatesNotReady', 'corresponding condition of pod readiness gate "example.com/lb" does not exist.']);
    const gate = { type: 'example.com/lb', status: 'True', lastTransitionTime: formatTime(T0) };
    const ready = podStatusAt(pod(spec, { phase: 'Running', conditions: [gate] }), { kind: 'running', startedAt: T0, ready: true }, ctx(T0));
    assert.equal(cond(ready, 'Ready')?.status, 'True');
  });

  test('terminated: the phase, exit code and PodCompleted / PodFailed reasons', () => {
    const ok = podStatusAt(pod(), { kind: 'terminated', phase: 'Succeeded', startedAt: T0, finishedAt: T0 + 5000, exitCode: 0, reason: 'Completed' }, ctx(T0 + 5000));
    assert.equal(ok['phase'], 'Succeeded');
    assert.equal(cond(ok, 'Ready')?.reason, 'PodCompleted');
    assert.equal(cond(ok, 'PodReadyToStartContainers')?.status, 'False');
    const terminated = (ok['containerStatuses'] as { state: { terminated: Record<string, unknown> } }[])[0]?.state.terminated;
    assert.deepEqual([terminated?.['exitCode'], terminated?.['startedAt'], terminated?.['finishedAt']], [0, formatTime(T0), formatTime(T0 + 5000)]);
    const bad = podStatusAt(pod(), { kind: 'terminated', phase: 'Failed', startedAt: T0, finishedAt: T0, exitCode: 1, reason: 'Error' }, ctx(T0));
    assert.equal(cond(bad, 'ContainersReady')?.reason, 'PodFailed');
  });

  test('no pod IP while creating; a running pod has one', () => {
    assert.equal(podStatusAt(pod(), { kind: 'creating' }, ctx(T0))['podIP'], undefined);
    const running = podStatusAt(pod(), { kind: 'running', startedAt: T0, ready: true }, ctx(T0));
    assert.deepEqual([running['podIP'], running['podIPs'], running['hostIPs']], ['10.244.0.2', [{ ip: '10.244.0.2' }], [{ ip: '172.18.0.2' }]]);
  });
});
