/**
 * helm install, upgrade and rollback of the chart with the manager running, in both ways the API
 * server can reach it — the Service (the manager in the cluster) and `webhook.url` (a manager
 * outside, `manager.enabled=false`) — with the real helm 3.17 (src/testing/k8s-tools.ts) against the
 * embedded cluster in this process, and the real manager in this process too (its webhook on
 * loopback; for the Service, the API server is told where the Service leads), authenticated as the
 * ServiceAccount the release installed, so with exactly the chart's RBAC (nothing may be refused).
 * Each round:
 *
 * - the manager fills in what the chart leaves to it: the caBundle, the pod webhooks' managed
 *   namespace requirement (`In [app]` once a WorkloadSpread lives in `app`), the pod DELETE
 *   webhook's match condition — and never the URL or Service;
 * - `helm upgrade` changing values (the webhooks' timeout among them) passes, keeps those fields,
 *   and renders the live namespace requirement (the chart's `lookup`);
 * - `helm rollback` passes; the older revision's requirement is repaired by the manager;
 * - the chart's `helm test` script (files/webhook-test.cjs) passes after each step: the API server
 *   calls the manager through the configuration.
 *
 * And the failure: configurations pointed at a URL by hand (what `--register-webhooks
 * --webhook-url` used to do to a Helm install) make `helm upgrade` fail with "exactly one of url or
 * service is required"; `helm upgrade --set webhook.url=…` repairs the release.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realClock } from '../clock/clock.ts';
import { connectionFromToken, type Connection } from '../client/config.ts';
import { KubeClient } from '../client/http-client.ts';
import { memoryLogger, type MemoryLogger } from '../client/logger.ts';
import { BUILTIN } from '../client/resources.ts';
import { generateServingCertificate } from '../client/loopback-certificates.ts';
import { startCluster, type EmbeddedCluster } from '../cluster/index.ts';
import { parseManifests } from '../k8s/yaml.ts';
import type { KubeObject } from '../k8s/types.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import { startManager, type Manager } from '../manager/manager.ts';
import { MUTATING_CONFIGURATION_NAME, VALIDATING_CONFIGURATION_NAME, WEBHOOK_NAMES } from '../webhook/registration.ts';
import { eventually } from '../testing/eventually.ts';
import { CHART_DIR, helm, type ToolResult } from '../testing/helm.ts';

const NS = 'workloadspread-system';
const RELEASE = 'ws';
const APP = 'app';
const TEST_SCRIPT = `${CHART_DIR}/files/webhook-test.cjs`;

type Webhook = { name: string; clientConfig: { url?: string; service?: { name: string }; caBundle?: string }; namespaceSelector?: { matchExpressions?: { key: string; operator: string; values?: string[] }[] }; matchConditions?: { name: string }[]; timeoutSeconds?: number };

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

interface Env {
  cluster: EmbeddedCluster;
  dir: string;
  kubeconfig: string;
  helm(...args: string[]): Promise<ToolResult>;
  /** Runs `helm …`, failing the test unless it exits 0. */
  ok(...args: string[]): Promise<string>;
  /** Connections of the chart's ServiceAccount, closed by `stop()`. */
  connections: Connection[];
}

async function startEnv(): Promise<Env & { stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'ws-chart-upgrade-'));
  const cluster = await startCluster({ clock: realClock(), certificate: generateServingCertificate(), nodes: [{ name: 'node-a', labels: { 'topology.kubernetes.io/zone': 'a' } }] });
  const kubeconfig = join(dir, 'kubeconfig');
  await cluster.writeKubeconfig(kubeconfig);
  const home = join(dir, 'home');
  mkdirSync(home);
  const run = (...args: string[]) => helm(args, { kubeconfig, home });
  const connections: Connection[] = [];
  return {
    cluster,
    dir,
    kubeconfig,
    connections,
    helm: run,
    ok: async (...args: string[]) => {
      const r = await run(...args);
      assert.equal(r.code, 0, `helm ${args.join(' ')}: ${r.stderr}${r.stdout}`);
      return r.stdout;
    },
    stop: async () => {
      for (const c of connections.splice(0)) c.close();
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const CHART_USER = `system:serviceaccount:${NS}:workloadspread-manager`;

/**
 * A client authenticated as the ServiceAccount the chart installed (a TokenRequest token), so the
 * manager has exactly the release's RBAC, as in a cluster (the embedded API server enforces it).
 */
async function chartServiceAccountClient(env: Env): Promise<KubeClient> {
  const answer = await env.cluster.client.request<{ status?: { token?: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${NS}/serviceaccounts/workloadspread-manager/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  const token = answer.status?.token;
  assert.ok(token !== undefined, 'no token for the chart\'s ServiceAccount');
  const api = env.cluster.apiServer;
  const result = connectionFromToken({ server: api.url, caPem: api.caPem, token, namespace: NS, source: 'chart ServiceAccount' });
  assert.ok(result.ok);
  env.connections.push(result.connection);
  const client = new KubeClient(result.connection, { clock: realClock(), userAgent: 'workloadspread-manager/chart', fieldManager: 'workloadspread-manager' });
  const review = await client.request<{ status?: { userInfo?: { username?: string } } }>({ method: 'POST', path: '/apis/authentication.k8s.io/v1/selfsubjectreviews', body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
  assert.equal(review.status?.userInfo?.username, CHART_USER);
  return client;
}

/** Nothing the chart's RBAC does not grant was asked for. */
function assertNothingForbidden(env: Env): void {
  const refused = env.cluster.apiServer.control.forbiddenRequests({ username: CHART_USER });
  assert.deepEqual(refused.map((f) => f.message), [], 'the API server refused the manager (the chart\'s RBAC) something');
}

/**
 * The real manager against the cluster as the chart's ServiceAccount, webhook on loopback `port`;
 * its certificate covers 127.0.0.1 and the Service's names.
 */
async function startTestManager(env: Env, port: number, options: { register?: boolean } = {}): Promise<{ manager: Manager; url: string; log: MemoryLogger }> {
  const log = memoryLogger();
  const manager = startManager({
    client: await chartServiceAccountClient(env),
    namespace: NS,
    identity: 'chart-test',
    log,
    leaderElection: false,
    webhook: { host: '127.0.0.1', port, url: (own) => own, clientCaPem: env.cluster.webhookClientCa(), ...(options.register === true ? { register: true } : {}) },
  });
  await manager.ready;
  const url = manager.endpoints().webhook ?? '';
  assert.equal(url, `https://127.0.0.1:${port}`);
  return { manager, url, log };
}

async function liveWebhooks(env: Env): Promise<Map<string, Webhook>> {
  const out = new Map<string, Webhook>();
  for (const [ref, name] of [[BUILTIN.mutatingwebhookconfigurations, MUTATING_CONFIGURATION_NAME], [BUILTIN.validatingwebhookconfigurations, VALIDATING_CONFIGURATION_NAME]] as const) {
    const config = await env.cluster.client.get<KubeObject & { webhooks: Webhook[] }>(ref, name);
    for (const w of config.webhooks) out.set(w.name, w);
  }
  return out;
}

const managedOf = (w: Webhook | undefined) => w?.namespaceSelector?.matchExpressions?.find((e) => e.key === 'kubernetes.io/metadata.name' && (e.operator === 'In' || e.operator === 'DoesNotExist'));
const POD_WEBHOOKS = [WEBHOOK_NAMES.mutatePod, WEBHOOK_NAMES.validatePod, WEBHOOK_NAMES.validatePodEviction];

/** What the manager keeps: a caBundle everywhere, the pod webhooks reaching `app`, the DELETE webhook's condition — and the endpoint the chart wrote. */
async function managerFieldsInPlace(env: Env, endpoint: { url: string } | { service: string }): Promise<void> {
  await eventually(async () => {
    const hooks = await liveWebhooks(env);
    for (const w of hooks.values()) {
      assert.ok((w.clientConfig.caBundle ?? '') !== '', `${w.name}: no caBundle yet`);
      if ('url' in endpoint) {
        assert.ok(w.clientConfig.url?.startsWith(`${endpoint.url}/`), `${w.name}: ${JSON.stringify(w.clientConfig)}`);
        assert.equal(w.clientConfig.service, undefined, w.name);
      } else {
        assert.equal(w.clientConfig.service?.name, endpoint.service, w.name);
        assert.equal(w.clientConfig.url, undefined, w.name);
      }
    }
    for (const name of POD_WEBHOOKS) assert.deepEqual(managedOf(hooks.get(name)), { key: 'kubernetes.io/metadata.name', operator: 'In', values: [APP] }, name);
    assert.deepEqual(hooks.get(WEBHOOK_NAMES.validatePod)?.matchConditions?.map((c) => c.name), ['skip-terminating-pods']);
  }, { timeoutMs: 30_000, intervalMs: 100 });
}

/** The managed requirement of the mutating pod webhook in the release's current manifest (what the chart rendered). */
async function renderedRequirement(env: Env): Promise<unknown> {
  const parsed = parseManifests(await env.ok('get', 'manifest', RELEASE, '-n', NS));
  assert.ok(parsed.ok);
  const mutating = parsed.documents.map((d) => d.object as KubeObject).find((o) => o.kind === 'MutatingWebhookConfiguration') as (KubeObject & { webhooks: Webhook[] }) | undefined;
  return managedOf(mutating?.webhooks.find((w) => w.name === WEBHOOK_NAMES.mutatePod));
}

/** Runs the chart's `helm test` script against the cluster, as the test pod would (the admin's token). */
function webhookTest(env: Env, timeoutSeconds = 30): Promise<{ code: number; out: string }> {
  const sa = join(env.dir, 'sa');
  mkdirSync(sa, { recursive: true });
  writeFileSync(join(sa, 'token'), env.cluster.apiServer.token);
  writeFileSync(join(sa, 'ca.crt'), env.cluster.apiServer.caPem);
  writeFileSync(join(sa, 'namespace'), NS);
  const environment = { ...process.env, SERVICE_ACCOUNT_DIR: sa, KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(env.cluster.apiServer.port), TEST_TIMEOUT_SECONDS: String(timeoutSeconds) };
  return new Promise((resolve) => {
    execFile(process.execPath, [TEST_SCRIPT], { env: environment, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, out: stdout + stderr });
    });
  });
}

async function assertWebhookTestPasses(env: Env): Promise<void> {
  const r = await webhookTest(env);
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /ok: the API server called the WorkloadSpread manager \(webhook vworkloadspread\.workloadspread\.io\), which answered: admission webhook "vworkloadspread\.workloadspread\.io" denied the request: .*duplicated subset name/);
}

async function createWorkloadSpread(env: Env): Promise<void> {
  await env.cluster.client.create(BUILTIN.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: APP } });
  await env.cluster.client.create(WORKLOADSPREAD_REF, {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'WorkloadSpread',
    metadata: { name: 'web', namespace: APP },
    spec: {
      targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      subsets: [{ name: 'a', requiredNodeSelectorTerm: { matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['a'] }] }, maxReplicas: 2 }, { name: 'rest' }],
    },
  });
}

/**
 * The round both modes go through: a WorkloadSpread, the manager's fields, an upgrade changing
 * values (the lookup keeps the live requirement), a rollback (the manager repairs the older one).
 */
async function upgradeAndRollback(env: Env, installArgs: string[], endpoint: { url: string } | { service: string }): Promise<void> {
  await createWorkloadSpread(env);
  await managerFieldsInPlace(env, endpoint);
  await assertWebhookTestPasses(env);
  assert.deepEqual(await renderedRequirement(env), { key: 'kubernetes.io/metadata.name', operator: 'DoesNotExist' }, 'installed before any WorkloadSpread');

  await env.ok('upgrade', RELEASE, CHART_DIR, '-n', NS, ...installArgs, '--set', 'webhook.timeoutSeconds=5', '--set', 'replicas=3');
  assert.deepEqual(await renderedRequirement(env), { key: 'kubernetes.io/metadata.name', operator: 'In', values: [APP] }, 'the upgrade rendered the live requirement (lookup)');
  const upgraded = await liveWebhooks(env);
  for (const w of upgraded.values()) assert.equal(w.timeoutSeconds, 5, w.name);
  for (const name of POD_WEBHOOKS) assert.deepEqual(managedOf(upgraded.get(name)), { key: 'kubernetes.io/metadata.name', operator: 'In', values: [APP] }, `${name} right after the upgrade`);
  await managerFieldsInPlace(env, endpoint);
  await assertWebhookTestPasses(env);

  await env.ok('rollback', RELEASE, '1', '-n', NS);
  for (const w of (await liveWebhooks(env)).values()) assert.equal(w.timeoutSeconds, 10, w.name);
  // Revision 1 was rendered before the WorkloadSpread existed: the manager brings the requirement back.
  await managerFieldsInPlace(env, endpoint);
  await assertWebhookTestPasses(env);
  assert.match(await env.ok('history', RELEASE, '-n', NS), /3\s+.*deployed\s+.*Rollback to 1/);
  assertNothingForbidden(env);
}

describe('helm upgrade and rollback with the manager running', () => {
  let env: Env & { stop(): Promise<void> };
  let manager: Manager | undefined;
  before(async () => {
    env = await startEnv();
  });
  after(async () => {
    await manager?.stop();
    await env?.stop();
  });

  test('the Service: the manager in the cluster', async () => {
    const install = ['--set', 'image.repository=registry.example.com/ws'];
    await env.ok('install', RELEASE, CHART_DIR, '-n', NS, '--create-namespace', ...install);
    const port = await freePort();
    const started = await startTestManager(env, port);
    manager = started.manager;
    // No service network: the API server is told where the chart's Service leads.
    env.cluster.apiServer.control.registerServiceEndpoint({ namespace: NS, name: 'workloadspread-webhook', port: 443 }, started.url);
    await upgradeAndRollback(env, install, { service: 'workloadspread-webhook' });

    // Switching to a URL with helm upgrade: url replaces service (never both), the manager is told the URL.
    await env.ok('upgrade', RELEASE, CHART_DIR, '-n', NS, ...install, '--set', `webhook.url=${started.url}`);
    await managerFieldsInPlace(env, { url: started.url });
    await assertWebhookTestPasses(env);
    const deployment = await env.cluster.client.get<KubeObject & { spec: { template: { spec: { containers: { args: string[] }[] } } } }>(BUILTIN.deployments, 'workloadspread-manager', { namespace: NS });
    assert.ok(deployment.spec.template.spec.containers[0]?.args.includes(`--webhook-url=${started.url}`));
    assert.ok(!started.log.lines.some((l) => l.level === 'error'), JSON.stringify(started.log.lines.filter((l) => l.level === 'error')));
    assertNothingForbidden(env);

    // And the helm test script fails when no manager answers (failurePolicy Fail).
    await manager.stop();
    manager = undefined;
    const down = await webhookTest(env, 2);
    assert.equal(down.code, 1, down.out);
    assert.match(down.out, /FAIL: .*failed calling webhook "vworkloadspread\.workloadspread\.io"/);
  });
});

describe('helm upgrade and rollback with the manager outside the cluster (webhook.url)', () => {
  let env: Env & { stop(): Promise<void> };
  let manager: Manager | undefined;
  before(async () => {
    env = await startEnv();
  });
  after(async () => {
    await manager?.stop();
    await env?.stop();
  });

  test('manager.enabled=false: the chart points the webhooks at the URL, the manager fills in the rest', async () => {
    const port = await freePort();
    const url = `https://127.0.0.1:${port}`;
    const install = ['--set', 'manager.enabled=false', '--set', `webhook.url=${url}`];
    await env.ok('install', RELEASE, CHART_DIR, '-n', NS, '--create-namespace', ...install);
    const deployments = await env.cluster.client.list(BUILTIN.deployments, { namespace: NS });
    assert.deepEqual(deployments.items, [], 'no manager Deployment in the cluster');
    manager = (await startTestManager(env, port)).manager;
    await upgradeAndRollback(env, install, { url });
  });
});

describe('manager --register-webhooks against a Helm install', () => {
  let env: Env & { stop(): Promise<void> };
  let manager: Manager | undefined;
  before(async () => {
    env = await startEnv();
  });
  after(async () => {
    await manager?.stop();
    await env?.stop();
  });

  test('the manager leaves the chart\'s Service reference (no url beside it): helm upgrade still passes', async () => {
    await env.ok('install', RELEASE, CHART_DIR, '-n', NS, '--create-namespace');
    const started = await startTestManager(env, await freePort(), { register: true });
    manager = started.manager;
    const log = started.log;
    assert.ok(log.lines.some((l) => l.level === 'warn' && l.message.includes(`belongs to Helm release ${RELEASE}`)), JSON.stringify(log.lines.filter((l) => l.level !== 'debug')));
    await eventually(async () => {
      for (const w of (await liveWebhooks(env)).values()) {
        assert.ok((w.clientConfig.caBundle ?? '') !== '', `${w.name}: no caBundle yet`);
        assert.equal(w.clientConfig.service?.name, 'workloadspread-webhook', w.name);
        assert.equal(w.clientConfig.url, undefined, w.name);
      }
    }, { timeoutMs: 30_000, intervalMs: 100 });
    await env.ok('upgrade', RELEASE, CHART_DIR, '-n', NS, '--set', 'replicas=3');
    for (const w of (await liveWebhooks(env)).values()) {
      assert.equal(w.clientConfig.service?.name, 'workloadspread-webhook', w.name);
      assert.equal(w.clientConfig.url, undefined, w.name);
    }
    assertNothingForbidden(env);
  });
});

describe('a Helm install whose webhooks were pointed at a URL by hand', () => {
  let env: Env & { stop(): Promise<void> };
  before(async () => {
    env = await startEnv();
  });
  after(async () => env?.stop());

  test('helm upgrade fails with both url and service; helm upgrade --set webhook.url=… repairs it', async () => {
    await env.ok('install', RELEASE, CHART_DIR, '-n', NS, '--create-namespace');
    const url = 'https://127.0.0.1:9';
    // What `manager --register-webhooks --webhook-url` used to write into the chart's configurations.
    for (const [ref, name] of [[BUILTIN.mutatingwebhookconfigurations, MUTATING_CONFIGURATION_NAME], [BUILTIN.validatingwebhookconfigurations, VALIDATING_CONFIGURATION_NAME]] as const) {
      const config = await env.cluster.client.get<KubeObject & { webhooks: (Webhook & { clientConfig: { service?: { path?: string } } })[] }>(ref, name);
      const webhooks = config.webhooks.map((w) => ({ ...w, clientConfig: { url: `${url}${w.clientConfig.service?.path ?? ''}` } }));
      await env.cluster.client.update(ref, { ...config, webhooks });
    }
    const failed = await env.helm('upgrade', RELEASE, CHART_DIR, '-n', NS, '--set', 'replicas=3');
    assert.notEqual(failed.code, 0);
    assert.match(failed.stderr, /webhooks\[0\]\.clientConfig: Required value: exactly one of url or service is required/);

    await env.ok('upgrade', RELEASE, CHART_DIR, '-n', NS, '--set', 'replicas=3', '--set', `webhook.url=${url}`);
    for (const w of (await liveWebhooks(env)).values()) {
      assert.ok(w.clientConfig.url?.startsWith(`${url}/`), w.name);
      assert.equal(w.clientConfig.service, undefined, w.name);
    }
  });
});
