/**
 * The manager's lifecycle against the embedded cluster on the virtual clock:
 * `/healthz` and `/readyz` through start (a missing CRD keeps it unready and
 * admissions failing closed, installing the CRD makes it ready — user-issues
 * #17), the webhook configurations it registers, a graceful stop that is
 * unready from its first step, releases the lease and leaves nothing
 * listening, a start that cannot bind its port (`done: failed`), and a
 * leader that cannot renew its lease (`done: lost-leadership`).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../client/errors.ts';
import type { Lease } from '../client/leader-election.ts';
import { BUILTIN } from '../client/resources.ts';
import type { KubeObject } from '../k8s/types.ts';
import { settleUntil } from '../testing/eventually.ts';
import { MUTATING_CONFIGURATION_NAME, VALIDATING_CONFIGURATION_NAME } from '../webhook/registration.ts';
import { deployment } from '../testing/webhook-bed.ts';
import { DEFAULT_LEASE_NAME } from './manager.ts';
import { httpGet, installCrd, MANAGER_NAMESPACE, startManagerCluster, startTestManager, stopOnClock, untilReady, type ManagerCluster } from '../testing/manager-bed.ts';

describe('manager lifecycle', () => {
  let env: ManagerCluster;
  before(async () => {
    env = await startManagerCluster({ crd: false });
  });
  after(async () => {
    await env?.stop();
  });

  test('/readyz stays 503 while the WorkloadSpread CRD is missing (pods are refused, not admitted unplaced), turns 200 once it is installed; /healthz is 200 throughout', async () => {
    const { manager, log } = await startTestManager(env, { waitReady: false, cacheSyncTimeoutMs: 10 * 60_000 });
    try {
      const { health } = await manager.serving;
      assert.ok(health !== undefined);
      await settleUntil(env.clock, () => assert.ok(manager.endpoints().webhook !== undefined, 'webhook not serving yet'));
      await env.clock.advance(30_000);

      const healthz = await httpGet(`${health}/healthz`);
      assert.deepEqual(healthz, { code: 200, body: '[+]ping ok\nhealthz check passed\n' });
      const notReady = await httpGet(`${health}/readyz`);
      assert.equal(notReady.code, 503);
      assert.match(notReady.body, /\[-\]caches-synced failed: the caches have not synced yet/);
      assert.match(notReady.body, /\[\+\]webhook-serving ok/);
      assert.match(notReady.body, /readyz check failed\n$/);
      assert.equal(manager.isReady(), false);
      assert.ok(log.lines.some((l) => l.level === 'error' && /CRD is not installed/.test(l.message)), 'the missing CRD is said plainly');

      // A webhook configuration left from an earlier run points at this replica: it must refuse, not admit unplaced.
      const ns = await env.namespace('early');
      const webhookUrl = manager.endpoints().webhook ?? '';
      // (The chart created the configuration before the manager started: it is replaced.)
      const installed = await env.cluster.client.get<KubeObject>(BUILTIN.mutatingwebhookconfigurations, MUTATING_CONFIGURATION_NAME);
      await env.cluster.client.update(BUILTIN.mutatingwebhookconfigurations, {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'MutatingWebhookConfiguration',
        metadata: { name: MUTATING_CONFIGURATION_NAME, resourceVersion: installed.metadata?.resourceVersion ?? '' },
        webhooks: [{ name: 'mpod.workloadspread.io', clientConfig: { url: `${webhookUrl}/mutate-pod`, caBundle: await caBundleOf(env) }, rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }], failurePolicy: 'Fail', sideEffects: 'None', admissionReviewVersions: ['v1'] }],
      });
      await env.clock.quiesce();
      await assert.rejects(
        env.cluster.client.create(BUILTIN.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: ns }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }),
        (err: unknown) => err instanceof ApiError && /caches have not synced yet/.test(err.message),
      );

      await installCrd(env.cluster);
      await untilReady(env, manager);
      const ready = await httpGet(`${health}/readyz`);
      assert.deepEqual(ready, { code: 200, body: '[+]caches-synced ok\n[+]webhook-serving ok\n[+]started ok\n[+]not-stopping ok\nreadyz check passed\n' });

      // Registered now: both configurations, by URL, with the generated CA.
      const mutating = await env.cluster.client.get<KubeObject>(BUILTIN.mutatingwebhookconfigurations, MUTATING_CONFIGURATION_NAME);
      const validating = await env.cluster.client.get<KubeObject>(BUILTIN.validatingwebhookconfigurations, VALIDATING_CONFIGURATION_NAME);
      const urls = [...(mutating['webhooks'] as KubeObject[]), ...(validating['webhooks'] as KubeObject[])].map((w) => String((w['clientConfig'] as { url?: string }).url));
      assert.deepEqual(urls, [
        `${webhookUrl}/mutate-pod`,
        `${webhookUrl}/validate-pod`,
        `${webhookUrl}/validate-pod`,
        `${webhookUrl}/validate-apps-kruise-io-workloadspread`,
        `${webhookUrl}/validate-policy-workloadspread-io-domaindisruptionbudget`,
      ]);

      // Admission works now: a Deployment's pods are placed.
      await env.cluster.client.create({ group: 'apps.kruise.io', version: 'v1alpha1', resource: 'workloadspreads', kind: 'WorkloadSpread', namespaced: true }, {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'WorkloadSpread',
        metadata: { name: 'spread', namespace: ns },
        spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets: [{ name: 'a', maxReplicas: 1 }, { name: 'b' }] },
      });
      await env.cluster.client.create(BUILTIN.deployments, deployment(ns, 'web', 2));
      await env.cluster.settle();
      const pods = (await env.cluster.client.list<KubeObject>(BUILTIN.pods, { namespace: ns })).items;
      assert.equal(pods.length, 2);
      assert.ok(pods.every((p) => p.metadata?.annotations?.['apps.kruise.io/matched-workloadspread'] !== undefined));
    } finally {
      await stopOnClock(env, manager);
    }
    // Stopped: nothing listens any more, and the lease was given up.
    await assert.rejects(httpGet(`${(await manager.serving).health}/healthz`), /ECONNREFUSED/);
    assert.deepEqual(await manager.done, { reason: 'stopped' });
    const lease = await env.cluster.client.get<Lease>(BUILTIN.leases, DEFAULT_LEASE_NAME, { namespace: MANAGER_NAMESPACE });
    assert.equal(lease.spec?.holderIdentity, '');
  });

  test('a graceful stop turns /readyz to 503 at once (the Service stops sending admissions) while /healthz stays 200 until the servers close', async () => {
    const { manager } = await startTestManager(env, { name: 'draining', leaderElection: { leaseName: 'draining-lease' } });
    const { health } = await manager.serving;
    assert.ok(health !== undefined);
    assert.equal((await httpGet(`${health}/readyz`)).code, 200);
    await settleUntil(env.clock, () => assert.ok(manager.isLeader(), 'not leading yet'));
    // Giving up the lease is the first step of a stop: slowed down here, it holds the stop in its middle.
    const slowRelease = env.cluster.apiServer.control.injectFault({ resource: 'leases', verb: 'update', name: 'draining-lease', delayMs: 5_000 });
    let stopped = false;
    const stopping = manager.stop().then(() => {
      stopped = true;
    });
    try {
      await env.clock.quiesce();
      assert.equal(stopped, false, 'the stop is still releasing the lease');
      const notReady = await httpGet(`${health}/readyz`);
      assert.equal(notReady.code, 503);
      assert.match(notReady.body, /\[-\]not-stopping failed: the manager is stopping\n/);
      assert.match(notReady.body, /\[\+\]caches-synced ok\n/, 'only stopping makes it unready');
      assert.equal(manager.isReady(), false);
      assert.equal((await httpGet(`${health}/healthz`)).code, 200, 'alive while draining');
    } finally {
      await settleUntil(env.clock, () => assert.ok(stopped, 'still stopping'), { maxMs: 60_000 });
      await stopping;
      slowRelease.clear();
    }
    assert.equal(slowRelease.hits, 1);
    await assert.rejects(httpGet(`${health}/readyz`), /ECONNREFUSED/);
    assert.deepEqual(await manager.done, { reason: 'stopped' });
  });

  test('a webhook port already in use: ready rejects and done says failed, with the reason', async () => {
    const first = await startTestManager(env, { name: 'port-holder', leaderElection: false });
    try {
      const port = Number(new URL(first.manager.endpoints().webhook ?? '').port);
      const second = await startTestManager(env, { name: 'second', waitReady: false, webhook: { host: '127.0.0.1', port } });
      await settleUntil(env.clock, async () => assert.equal((await Promise.race([second.manager.done, Promise.resolve(undefined)]))?.reason, 'failed'));
      const done = await second.manager.done;
      assert.match(done.error ?? '', /EADDRINUSE/);
      await assert.rejects(second.manager.ready, /EADDRINUSE/);
      await stopOnClock(env, second.manager);
    } finally {
      await stopOnClock(env, first.manager);
    }
  });

  test('a leader that cannot renew its lease for the renew deadline: done says lost-leadership and the controller stops', async () => {
    const { manager } = await startTestManager(env, { name: 'unlucky', leaderElection: { leaseName: 'lost-lease' } });
    try {
      await settleUntil(env.clock, () => assert.ok(manager.isLeader(), 'not leading yet'));
      const fault = env.cluster.apiServer.control.injectFault({ resource: 'leases', verb: 'update', name: 'lost-lease', status: 500 });
      try {
        const started = env.clock.now();
        await settleUntil(env.clock, async () => assert.equal((await Promise.race([manager.done, Promise.resolve(undefined)]))?.reason, 'lost-leadership'), { maxMs: 60_000 });
        const elapsed = env.clock.now() - started;
        assert.ok(elapsed >= 10_000 && elapsed <= 14_000, `lost after ${elapsed} ms (renew deadline 10 s, retry 2 s)`);
        assert.equal(manager.isLeader(), false);
      } finally {
        fault.clear();
      }
    } finally {
      await stopOnClock(env, manager);
    }
  });
});

/** The generated CA as a caBundle (base64 PEM), read from the Secret the manager keeps it in. */
async function caBundleOf(env: ManagerCluster): Promise<string> {
  const secret = await env.cluster.client.get<KubeObject>(BUILTIN.secrets, 'workloadspread-webhook-certs', { namespace: MANAGER_NAMESPACE });
  return String((secret['data'] as Record<string, string> | undefined)?.['ca.crt'] ?? '');
}
