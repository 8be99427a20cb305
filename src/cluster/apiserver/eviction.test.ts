/**
 * Conformance: `pods/eviction` against PodDisruptionBudgets, as
 * kube-apiserver's eviction REST answers (429 with the DisruptionBudget cause,
 * disruptedPods bookkeeping, pods whose budget does not matter, unready pods,
 * several budgets, dry runs, concurrency), and the `pods/binding`
 * subresource. Budget statuses are written by the test, standing in for the
 * disruption controller.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import fc from 'fast-check';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import { formatTime } from '../../k8s/time.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { allow, deny, startWebhookServer, type TestWebhookServer } from '../../testing/webhook-server.ts';
import { expectStatus, pod, rawRequest, startTestCluster, testCertificate, type TestCluster } from '../../testing/apiserver-bed.ts';

const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

let c: TestCluster;
let clock: VirtualClock;
let hooks: TestWebhookServer;
let policy: k8s.PolicyV1Api;
let counter = 0;

before(async () => {
  clock = new VirtualClock(Date.UTC(2026, 0, 1));
  c = await startTestCluster(clock, testCertificate());
  hooks = await startWebhookServer({ clock });
  policy = c.kc.makeApiClient(k8s.PolicyV1Api);
});
after(async () => {
  await c.close();
  await hooks.close();
});

async function namespace(): Promise<string> {
  const ns = `evict-${++counter}`;
  await c.core.createNamespace({ body: { metadata: { name: ns } } });
  return ns;
}

/** A scheduled pod, Running and (by default) Ready. */
async function runningPod(ns: string, name: string, options: { ready?: boolean; phase?: string; labels?: Record<string, string> } = {}): Promise<void> {
  await c.core.createNamespacedPod({ namespace: ns, body: pod(name, { namespace: ns, nodeName: 'node-1', labels: options.labels ?? { app: 'web' } }) });
  const phase = options.phase ?? 'Running';
  if (phase === 'Pending') return;
  const ready = options.ready ?? true;
  await c.core.patchNamespacedPodStatus({ name, namespace: ns, body: { status: { phase, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] } } }, merge);
}

/** A budget over app=web with the status the disruption controller would have written. */
async function budget(ns: string, name: string, status: Record<string, unknown>, spec: Record<string, unknown> = {}): Promise<void> {
  await policy.createNamespacedPodDisruptionBudget({ namespace: ns, body: { metadata: { name }, spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } }, ...spec } } });
  const r = await c.server.control.patch('policy/v1', 'PodDisruptionBudget', ns, name, 'application/merge-patch+json', { status: { observedGeneration: 1, ...status } }, { subresource: 'status' });
  assert.ok(r.ok, r.ok ? '' : r.status.message);
}

function readBudget(ns: string, name: string): Record<string, unknown> {
  const r = c.server.control.get('policy/v1', 'PodDisruptionBudget', ns, name);
  assert.ok(r.ok);
  return r.value.status as Record<string, unknown>;
}

const eviction = (ns: string, name: string, extra: Record<string, unknown> = {}) => ({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: ns }, ...extra });

function evict(ns: string, name: string, extra: Record<string, unknown> = {}, query = ''): ReturnType<typeof rawRequest> {
  return rawRequest(c.server, 'POST', `/api/v1/namespaces/${ns}/pods/${name}/eviction${query}`, { body: JSON.stringify(eviction(ns, name, extra)), contentType: 'application/json' });
}

function podOf(ns: string, name: string): KubeObject | undefined {
  const r = c.server.control.get('v1', 'Pod', ns, name);
  return r.ok ? r.value : undefined;
}

function condition(p: KubeObject | undefined, type: string): Record<string, unknown> | undefined {
  return ((p?.status as { conditions?: Record<string, unknown>[] } | undefined)?.conditions ?? []).find((x) => x['type'] === type);
}

describe('eviction without a budget', () => {
  test('answers a Success Status (201); the pod gets DisruptionTarget and is deleted gracefully', async () => {
    const ns = await namespace();
    await runningPod(ns, 'p');
    const res = await evict(ns, 'p');
    assert.equal(res.status, 201);
    assert.deepEqual(res.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    const p = podOf(ns, 'p');
    assert.equal(p?.metadata?.deletionTimestamp, '2026-01-01T00:00:30Z', 'the default grace period of 30 s');
    assert.deepEqual(condition(p, 'DisruptionTarget'), { type: 'DisruptionTarget', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting' });
  });

  test('deleteOptions apply; a missing pod is 404; the name must match; policy/v1beta1 is accepted; client-node works', async () => {
    const ns = await namespace();
    await runningPod(ns, 'now');
    assert.equal((await evict(ns, 'now', { deleteOptions: { gracePeriodSeconds: 0 } })).status, 201);
    assert.equal(podOf(ns, 'now'), undefined);
    const missing = await evict(ns, 'ghost');
    assert.deepEqual([missing.status, (missing.json as { message: string }).message], [404, 'pods "ghost" not found']);
    await runningPod(ns, 'named');
    const mismatch = await rawRequest(c.server, 'POST', `/api/v1/namespaces/${ns}/pods/named/eviction`, { body: JSON.stringify(eviction(ns, 'other')), contentType: 'application/json' });
    assert.deepEqual([mismatch.status, (mismatch.json as { message: string }).message], [400, 'name in URL does not match name in Eviction object']);
    const beta = await rawRequest(c.server, 'POST', `/api/v1/namespaces/${ns}/pods/named/eviction`, { body: JSON.stringify({ ...eviction(ns, 'named'), apiVersion: 'policy/v1beta1' }), contentType: 'application/json' });
    assert.equal(beta.status, 201);
    await runningPod(ns, 'typed');
    await c.core.createNamespacedPodEviction({ name: 'typed', namespace: ns, body: eviction(ns, 'typed') as k8s.V1Eviction });
    assert.ok(podOf(ns, 'typed')?.metadata?.deletionTimestamp !== undefined);
  });
});

describe('eviction against a PodDisruptionBudget', () => {
  test('no disruption allowed: 429 with the DisruptionBudget cause, nothing changes', async () => {
    const ns = await namespace();
    await runningPod(ns, 'p');
    await budget(ns, 'pdb', { disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2, expectedPods: 2 });
    const res = await evict(ns, 'p');
    assert.equal(res.status, 429);
    assert.equal(res.headers['retry-after'], undefined);
    assert.deepEqual(res.json, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      reason: 'TooManyRequests',
      details: { causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget pdb needs 2 healthy pods and has 2 currently' }] },
      code: 429,
    });
    assert.equal(podOf(ns, 'p')?.metadata?.deletionTimestamp, undefined);
    assert.equal(condition(podOf(ns, 'p'), 'DisruptionTarget'), undefined);
    const s = await expectStatus(() => c.core.createNamespacedPodEviction({ name: 'p', namespace: ns, body: eviction(ns, 'p') as k8s.V1Eviction }));
    assert.equal(s.code, 429, 'client-node sees the 429 too');
  });

  test('one disruption allowed: the eviction spends it and records the pod in disruptedPods', async () => {
    const ns = await namespace();
    await runningPod(ns, 'p');
    await budget(ns, 'pdb', { disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3 });
    await clock.advance(5_000);
    assert.equal((await evict(ns, 'p')).status, 201);
    const status = readBudget(ns, 'pdb');
    assert.equal(status['disruptionsAllowed'], 0);
    assert.deepEqual(status['disruptedPods'], { p: '2026-01-01T00:00:05Z' });
    assert.deepEqual(status['conditions'], [{ type: 'DisruptionAllowed', status: 'False', observedGeneration: 1, lastTransitionTime: '2026-01-01T00:00:05Z', reason: 'InsufficientPods', message: '' }]);
  });

  test('a budget whose status lags its spec: 429 "still being processed", Retry-After 10', async () => {
    const ns = await namespace();
    await runningPod(ns, 'p');
    await budget(ns, 'pdb', { disruptionsAllowed: 5, observedGeneration: 0 });
    const res = await evict(ns, 'p');
    assert.equal(res.status, 429);
    assert.equal(res.headers['retry-after'], '10');
    assert.deepEqual((res.json as { details: unknown }).details, { causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget pdb is still being processed by the server.' }], retryAfterSeconds: 10 });
  });

  test('several budgets: 500 Status; a null selector selects nothing, an empty one everything', async () => {
    const ns = await namespace();
    await runningPod(ns, 'p');
    await budget(ns, 'a', { disruptionsAllowed: 1 });
    await budget(ns, 'none', { disruptionsAllowed: 0 }, { selector: undefined });
    const one = await evict(ns, 'p', {}, '?dryRun=All');
    assert.equal(one.status, 201, 'the budget without a selector does not count');
    await budget(ns, 'all', { disruptionsAllowed: 1 }, { selector: {} });
    const res = await evict(ns, 'p');
    assert.equal(res.status, 500);
    assert.deepEqual(res.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.', code: 500 });
  });

  test('pods that are Pending, finished or terminating are evicted whatever the budget', async () => {
    const ns = await namespace();
    await budget(ns, 'pdb', { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 2 });
    await runningPod(ns, 'pending', { phase: 'Pending' });
    await runningPod(ns, 'done', { phase: 'Succeeded' });
    assert.equal((await evict(ns, 'pending')).status, 201);
    assert.equal((await evict(ns, 'done')).status, 201);
    assert.equal(podOf(ns, 'done'), undefined, 'finished pods have no grace period');
    assert.equal(readBudget(ns, 'pdb')['disruptedPods'], undefined, 'the budget was not spent');
  });

  test('unready pods: evicted without spending a healthy budget (IfHealthyBudget) or always (AlwaysAllow); refused when the budget is unhealthy', async () => {
    const ns = await namespace();
    await runningPod(ns, 'healthy-budget', { ready: false });
    await budget(ns, 'pdb', { disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2 });
    assert.equal((await evict(ns, 'healthy-budget')).status, 201);
    assert.equal(readBudget(ns, 'pdb')['disruptionsAllowed'], 0);

    const ns2 = await namespace();
    await runningPod(ns2, 'p', { ready: false });
    await budget(ns2, 'pdb', { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 2 });
    const refused = await evict(ns2, 'p');
    assert.equal(refused.status, 429);
    assert.equal((refused.json as { details: { causes: { message: string }[] } }).details.causes[0]?.message, 'The disruption budget pdb needs 2 healthy pods and has 1 currently');

    const ns3 = await namespace();
    await runningPod(ns3, 'p', { ready: false });
    await budget(ns3, 'pdb', { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 2 }, { unhealthyPodEvictionPolicy: 'AlwaysAllow' });
    assert.equal((await evict(ns3, 'p')).status, 201);
  });

  test('dry run (query or deleteOptions) checks the budget and writes nothing', async () => {
    const ns = await namespace();
    await runningPod(ns, 'p');
    await budget(ns, 'pdb', { disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2 });
    assert.equal((await evict(ns, 'p', {}, '?dryRun=All')).status, 201);
    assert.equal((await evict(ns, 'p', { deleteOptions: { dryRun: ['All'] } })).status, 201);
    assert.equal(readBudget(ns, 'pdb')['disruptionsAllowed'], 1);
    assert.equal(podOf(ns, 'p')?.metadata?.deletionTimestamp, undefined);
    assert.equal(condition(podOf(ns, 'p'), 'DisruptionTarget'), undefined);
  });

  test('concurrent evictions under a budget of one: exactly one passes', async () => {
    const ns = await namespace();
    const names = ['a', 'b', 'c', 'd', 'e'];
    for (const n of names) await runningPod(ns, n);
    await budget(ns, 'pdb', { disruptionsAllowed: 1, currentHealthy: 5, desiredHealthy: 4 });
    const results = await Promise.all(names.map((n) => evict(ns, n)));
    const codes = results.map((r) => r.status).sort();
    assert.deepEqual(codes, [201, 429, 429, 429, 429]);
    const status = readBudget(ns, 'pdb');
    assert.equal(status['disruptionsAllowed'], 0);
    assert.equal(Object.keys(status['disruptedPods'] as object).length, 1);
    const evicted = names.filter((n) => podOf(ns, n)?.metadata?.deletionTimestamp !== undefined);
    assert.deepEqual(evicted, Object.keys(status['disruptedPods'] as object));
  });
});

describe('property: a budget is never overspent', () => {
  test('n concurrent evictions under a budget allowing k: exactly min(n, k) pass, each recorded once', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 0, max: 4 }), async (n, k) => {
        const ns = await namespace();
        const names = Array.from({ length: n }, (_, i) => `p${i}`);
        for (const name of names) await runningPod(ns, name);
        await budget(ns, 'pdb', { disruptionsAllowed: k, currentHealthy: n, desiredHealthy: Math.max(1, n - k) });
        const codes = (await Promise.all(names.map((name) => evict(ns, name)))).map((r) => r.status);
        const passed = codes.filter((code) => code === 201).length;
        assert.equal(passed, Math.min(n, k));
        assert.equal(codes.filter((code) => code === 429).length, n - passed);
        const status = readBudget(ns, 'pdb');
        assert.equal(status['disruptionsAllowed'], k - passed);
        assert.equal(Object.keys((status['disruptedPods'] as object | undefined) ?? {}).length, passed);
      }),
      { numRuns: 8 },
    );
  });
});

describe('admission of evictions', () => {
  test('webhooks see CREATE pods/eviction with the Eviction; the pod delete behind it is not sent to DELETE webhooks', async () => {
    const ns = await namespace();
    hooks.handle(`/${ns}/evict`, (req) => ((req.object?.['metadata'] as { name: string }).name === 'protected' ? deny('this one stays', 403) : allow()));
    hooks.handle(`/${ns}/delete`, () => allow());
    const base = { admissionReviewVersions: ['v1'], sideEffects: 'None', namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } };
    const r = await c.server.control.create({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: `${ns}-v` },
      webhooks: [
        { ...base, name: 'evict.hooks.example.com', clientConfig: { url: hooks.urlFor(`/${ns}/evict`), caBundle: hooks.caBundle }, rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/eviction'] }] },
        { ...base, name: 'delete.hooks.example.com', clientConfig: { url: hooks.urlFor(`/${ns}/delete`), caBundle: hooks.caBundle }, rules: [{ operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] },
      ],
    });
    assert.ok(r.ok);
    await runningPod(ns, 'p');
    await runningPod(ns, 'protected');
    assert.equal((await evict(ns, 'p', { deleteOptions: { gracePeriodSeconds: 10 } })).status, 201);
    const review = hooks.requestsTo(`/${ns}/evict`)[0]?.request;
    assert.deepEqual([review?.operation, review?.subResource, review?.kind, review?.resource, review?.name], [
      'CREATE',
      'eviction',
      { group: 'policy', version: 'v1', kind: 'Eviction' },
      { group: '', version: 'v1', resource: 'pods' },
      'p',
    ]);
    assert.deepEqual(review?.object?.['deleteOptions'], { gracePeriodSeconds: 10 });
    assert.equal(review?.object?.['apiVersion'], 'policy/v1');
    assert.equal(hooks.requestsTo(`/${ns}/delete`).length, 0);
    const denied = await evict(ns, 'protected');
    assert.deepEqual([denied.status, (denied.json as { message: string }).message], [403, 'admission webhook "evict.hooks.example.com" denied the request: this one stays']);
    await c.core.deleteNamespacedPod({ name: 'protected', namespace: ns });
    assert.equal(hooks.requestsTo(`/${ns}/delete`).length, 1, 'a plain delete is');
  });
});

describe('pods/binding', () => {
  test('binds an unassigned pod: nodeName, PodScheduled=True, annotations merged; a second binding is 409', async () => {
    const ns = await namespace();
    await c.core.createNamespacedPod({ namespace: ns, body: pod('p', { namespace: ns }) });
    await clock.advance(1_000);
    const res = await rawRequest(c.server, 'POST', `/api/v1/namespaces/${ns}/pods/p/binding`, {
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p', annotations: { 'scheduler.example.com/score': '7' } }, target: { apiVersion: 'v1', kind: 'Node', name: 'node-1' } }),
      contentType: 'application/json',
    });
    assert.equal(res.status, 201);
    assert.deepEqual(res.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    const p = podOf(ns, 'p');
    assert.equal((p?.['spec'] as { nodeName: string }).nodeName, 'node-1');
    assert.equal(p?.metadata?.annotations?.['scheduler.example.com/score'], '7');
    assert.deepEqual(condition(p, 'PodScheduled'), { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: formatTime(clock.now()) });
    const again = await expectStatus(() => c.core.createNamespacedPodBinding({ name: 'p', namespace: ns, body: { metadata: { name: 'p' }, target: { kind: 'Node', name: 'node-2' } } }));
    assert.deepEqual([again.code, again.reason, again.message], [409, 'Conflict', 'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "node-1"']);
  });

  test('bad bindings: no target name (500, as upstream), a uid precondition that fails (409), a pod being deleted (409)', async () => {
    const ns = await namespace();
    await c.core.createNamespacedPod({ namespace: ns, body: pod('p', { namespace: ns }) });
    const post = (body: Record<string, unknown>) => rawRequest(c.server, 'POST', `/api/v1/namespaces/${ns}/pods/p/binding`, { body: JSON.stringify({ apiVersion: 'v1', kind: 'Binding', ...body }), contentType: 'application/json' });
    const noTarget = await post({ metadata: { name: 'p' }, target: { kind: 'Node' } });
    assert.deepEqual([noTarget.status, (noTarget.json as { reason: string }).reason, (noTarget.json as { message: string }).message], [500, 'Unknown', 'target.name: Required value']);
    const wrongUid = await post({ metadata: { name: 'p', uid: 'not-the-pod' }, target: { name: 'n' } });
    assert.equal(wrongUid.status, 409);
    assert.match((wrongUid.json as { message: string }).message, /Precondition failed: UID in precondition: not-the-pod/);
    await c.core.createNamespacedPod({ namespace: ns, body: { ...pod('held', { namespace: ns }), metadata: { name: 'held', finalizers: ['example.com/hold'] } } });
    await c.core.deleteNamespacedPod({ name: 'held', namespace: ns });
    const deleting = await rawRequest(c.server, 'POST', `/api/v1/namespaces/${ns}/pods/held/binding`, { body: JSON.stringify({ apiVersion: 'v1', kind: 'Binding', metadata: { name: 'held' }, target: { name: 'n' } }), contentType: 'application/json' });
    assert.deepEqual([deleting.status, (deleting.json as { message: string }).message], [409, 'Operation cannot be fulfilled on pods/binding "held": pod held is being deleted, cannot be assigned to a host']);
  });
});
