/**
 * `workloadspread manager`: every flag checked (defaults, one bad value per
 * flag → exit 2 with one line, the namespace lookup order), and the command
 * against the embedded cluster — in-process on the virtual clock (JSON log
 * lines with the reconcile fields, pods placed, a signal stops it with exit
 * 0, a lost lease exits 1) and as a child process on the real clock (ready
 * on /readyz, SIGTERM exits 0 with nothing left running).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realClock } from '../clock/clock.ts';
import { BUILTIN } from '../client/resources.ts';
import { startCluster, type EmbeddedCluster } from '../cluster/index.ts';
import type { KubeObject } from '../k8s/types.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import type { Manager } from '../manager/manager.ts';
import { httpGet, installCrd, MANAGER_NAMESPACE, startManagerCluster, type ManagerCluster } from '../testing/manager-bed.ts';
import { captureIo } from '../testing/cli-io.ts';
import { repeatedKeys } from '../testing/json-keys.ts';
import { eventually, settleUntil } from '../testing/eventually.ts';
import { deployment, ZONED_NODES } from '../testing/webhook-bed.ts';
import { main } from './main.ts';
import { DEFAULT_MANAGER_NAMESPACE, managerNamespace, managerSettings, runManager, type ManagerFlags } from './manager.ts';
import { UsageError } from './io.ts';

/** A port nobody listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address !== null ? address.port : 0;
}

describe('flags', () => {
  const io = captureIo();
  test('defaults', () => {
    assert.deepEqual(managerSettings({}, io, '/nonexistent'), {
      namespace: DEFAULT_MANAGER_NAMESPACE,
      webhookPort: 9443,
      webhookHost: '0.0.0.0',
      clientCertAllowedNames: [],
      webhookService: 'workloadspread-webhook',
      webhookScope: 'namespaces',
      certSecret: 'workloadspread-webhook-certs',
      registerWebhooks: false,
      metricsAddress: { host: '0.0.0.0', port: 8080 },
      healthAddress: { host: '0.0.0.0', port: 8081 },
      leaderElect: false,
      leaderElectionId: 'workloadspread-manager',
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      kubeApiQps: 20,
      kubeApiBurst: 30,
      workers: 3,
      unschedulableRecoverySeconds: 300,
      whitelistConfigMap: 'workloadspread-configuration',
      guardPodDeletion: false,
      allowPrivilegedSubsetPatches: false,
      logLevel: 'info',
    });
  });

  test('every flag given', () => {
    const s = managerSettings(
      {
        kubeconfig: '/kc',
        namespace: 'ops',
        webhookPort: '8443',
        webhookUrl: 'https://host.docker.internal:8443/',
        webhookService: 'ws-hook',
        webhookScope: 'cluster',
        certDir: '/certs',
        certSecret: 'ws-certs',
        registerWebhooks: true,
        metricsAddr: '127.0.0.1:0',
        healthAddr: '[::1]:9000',
        leaderElect: 'true',
        leaderElectionId: 'ws.example.com',
        leaderElectLeaseDuration: '1m',
        leaderElectRenewDeadline: '40s',
        leaderElectRetryPeriod: '5s',
        kubeApiQps: '50.5',
        kubeApiBurst: '100',
        workers: '8',
        unschedulableRecoverySeconds: '600',
        whitelistConfigmap: 'wl',
        guardPodDeletion: 'true',
        webhookHost: '[::1]',
        clientCaFile: '/ca/ca.crt',
        clientCertAllowedNames: 'kube-apiserver-admission, apiserver-2',
        allowPrivilegedSubsetPatches: 'true',
        logLevel: 'debug',
      },
      io,
    );
    assert.deepEqual(s, {
      kubeconfig: '/kc',
      namespace: 'ops',
      webhookPort: 8443,
      webhookHost: '::1',
      webhookUrl: 'https://host.docker.internal:8443',
      webhookService: 'ws-hook',
      webhookScope: 'cluster',
      certDir: '/certs',
      certSecret: 'ws-certs',
      clientCaFile: '/ca/ca.crt',
      clientCertAllowedNames: ['kube-apiserver-admission', 'apiserver-2'],
      registerWebhooks: true,
      metricsAddress: { host: '127.0.0.1', port: 0 },
      healthAddress: { host: '::1', port: 9000 },
      leaderElect: true,
      leaderElectionId: 'ws.example.com',
      leaseDurationMs: 60_000,
      renewDeadlineMs: 40_000,
      retryPeriodMs: 5_000,
      kubeApiQps: 50.5,
      kubeApiBurst: 100,
      workers: 8,
      unschedulableRecoverySeconds: 600,
      whitelistConfigMap: 'wl',
      guardPodDeletion: true,
      allowPrivilegedSubsetPatches: true,
      logLevel: 'debug',
    });
    assert.equal(managerSettings({ metricsAddr: '0', leaderElect: 'false' }, io).metricsAddress, undefined, '0 switches an endpoint off');
  });

  const bad: [ManagerFlags, string][] = [
    [{ webhookPort: '0' }, '--webhook-port must be an integer from 1 to 65535, got "0"'],
    [{ webhookPort: 'https' }, '--webhook-port must be an integer from 1 to 65535, got "https"'],
    [{ webhookUrl: 'http://127.0.0.1:9443' }, '--webhook-url must be an https:// URL without query, fragment or credentials, got "http://127.0.0.1:9443"'],
    [{ webhookUrl: 'not a url' }, '--webhook-url must be an https:// URL, got "not a url"'],
    [{ webhookService: 'Web_Hook' }, '--webhook-service: "Web_Hook" is not a valid Kubernetes name'],
    [{ webhookScope: 'everywhere' }, '--webhook-scope must be one of namespaces, cluster, got "everywhere"'],
    [{ namespace: 'Ops' }, '--namespace: "Ops" is not a valid Kubernetes name'],
    [{ registerWebhooks: 'yes' }, '--register-webhooks must be true or false, got "yes"'],
    [{ metricsAddr: '8080' }, '--metrics-addr must be host:port, :port or 0 (off), got "8080"'],
    [{ healthAddr: ':70000' }, '--health-addr: port 70000 is out of range (0-65535)'],
    [{ leaderElect: 'maybe' }, '--leader-elect must be true or false, got "maybe"'],
    [{ leaderElectionId: 'Lease!' }, '--leader-election-id: "Lease!" is not a valid Kubernetes name'],
    [{ leaderElectLeaseDuration: '15' }, '--leader-elect-lease-duration must be a duration like 30s, 5m or 1h30m, not "15"'],
    [{ leaderElectRetryPeriod: '0' }, '--leader-elect-retry-period must be longer than 0, got "0"'],
    [{ leaderElectLeaseDuration: '10s' }, '--leader-elect-lease-duration (10s) must be longer than --leader-elect-renew-deadline (10s)'],
    [{ leaderElectRetryPeriod: '9s' }, '--leader-elect-renew-deadline (10s) must be longer than 1.2 × --leader-elect-retry-period (9s)'],
    [{ kubeApiQps: 'fast' }, '--kube-api-qps must be a number of requests per second (0 or less: no limit), got "fast"'],
    [{ kubeApiBurst: '0' }, '--kube-api-burst must be an integer from 1 to 100000, got "0"'],
    [{ watchNamespaces: ' , ' }, '--watch-namespaces must name at least one namespace (leave it out for all)'],
    [{ watchNamespaces: 'team-a,Team_B' }, '--watch-namespaces: "Team_B" is not a valid Kubernetes name'],
    [{ watchNamespaces: 'team-a', webhookScope: 'cluster' }, "--watch-namespaces needs --webhook-scope=namespaces: the cluster scope sends every namespace's pods to the manager"],
    [{ workers: '0' }, '--workers must be an integer from 1 to 1000, got "0"'],
    [{ unschedulableRecoverySeconds: '5' }, '--unschedulable-recovery-seconds must be an integer from 6 to 86400, got "5"'],
    [{ whitelistConfigmap: '' }, '--whitelist-configmap: "" is not a valid Kubernetes name'],
    [{ certSecret: 'Certs!' }, '--cert-secret: "Certs!" is not a valid Kubernetes name'],
    [{ logLevel: 'loud' }, '--log-level must be one of debug, info, warn, error, got "loud"'],
    [{ webhookHost: 'not a host!' }, '--webhook-host must be an IP address or a host name to listen on (e.g. 0.0.0.0, 127.0.0.1, ::), got "not a host!"'],
    [{ clientCertAllowedNames: 'apiserver' }, '--client-cert-allowed-names needs --client-ca-file'],
    [{ allowPrivilegedSubsetPatches: 'maybe' }, '--allow-privileged-subset-patches must be true or false, got "maybe"'],
  ];
  for (const [flags, message] of bad) {
    test(`refused: ${JSON.stringify(flags)}`, () => {
      assert.throws(() => managerSettings(flags, io), (err: unknown) => err instanceof UsageError && err.message === message);
    });
  }

  test('--watch-namespaces: a comma-separated list, trimmed, without repeats', () => {
    assert.deepEqual(managerSettings({ watchNamespaces: 'team-a, team-b,team-a' }, io).watchNamespaces, ['team-a', 'team-b']);
    assert.equal(managerSettings({}, io).watchNamespaces, undefined, 'every namespace by default');
  });

  test('the namespace: flag, then $POD_NAMESPACE, then the service account file, then the default', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ws-sa-'));
    try {
      const withEnv = captureIo();
      withEnv.env['POD_NAMESPACE'] = 'from-env';
      writeFileSync(join(dir, 'namespace'), 'from-file\n');
      assert.equal(managerNamespace('from-flag', withEnv, dir), 'from-flag');
      assert.equal(managerNamespace(undefined, withEnv, dir), 'from-env');
      assert.equal(managerNamespace(undefined, captureIo(), dir), 'from-file');
      assert.equal(managerNamespace(undefined, captureIo(), join(dir, 'missing')), DEFAULT_MANAGER_NAMESPACE);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('through main: a bad flag exits 2 with one line', async () => {
    const out = captureIo();
    assert.equal(await main(['manager', '--log-level', 'loud'], out), 2);
    assert.equal(out.stderr, 'error: --log-level must be one of debug, info, warn, error, got "loud"\n');
    const missing = captureIo();
    assert.equal(await main(['manager', '--kubeconfig', '/nonexistent/kubeconfig'], missing), 1);
    assert.equal(missing.stderr, 'error: /nonexistent/kubeconfig: the kubeconfig file does not exist\n');
  });
});

describe('the command against the embedded cluster (virtual clock)', () => {
  let env: ManagerCluster;
  let dir: string;
  let kubeconfig: string;
  before(async () => {
    env = await startManagerCluster();
    dir = mkdtempSync(join(tmpdir(), 'ws-manager-'));
    kubeconfig = join(dir, 'kubeconfig');
    await env.cluster.writeKubeconfig(kubeconfig);
  });
  after(async () => {
    await env?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function run(extra: ManagerFlags): Promise<{ manager: Manager; exit: Promise<number>; stop: (signal: string) => void; io: ReturnType<typeof captureIo> }> {
    const io = captureIo();
    let stop!: (signal: string) => void;
    let started: ((m: Manager) => void) | undefined;
    const manager = new Promise<Manager>((resolve) => (started = resolve));
    const port = await freePort();
    // No client-side rate limit here: on a virtual clock a request waiting for a token waits for
    // virtual time, which does not pass while this test awaits an answer (the process test below keeps it).
    const exit = runManager(
      { kubeconfig, namespace: MANAGER_NAMESPACE, webhookPort: String(port), webhookUrl: `https://127.0.0.1:${port}`, registerWebhooks: true, metricsAddr: '127.0.0.1:0', healthAddr: '127.0.0.1:0', logLevel: 'debug', kubeApiQps: '0', ...extra },
      io,
      { clock: env.clock, waitForStop: () => new Promise<string>((resolve) => (stop = resolve)), onStarted: (m) => started?.(m) },
    );
    const m = await manager;
    await settleUntil(env.clock, () => assert.ok(m.isReady(), 'not ready'));
    return { manager: m, exit, stop, io };
  }

  test('JSON log lines: text levels, every key once, the same keys in every component; pods placed; a signal stops it with exit 0', async () => {
    const { exit, stop, io } = await run({});
    const ns = await env.namespace('cli');
    await env.cluster.client.create(WORKLOADSPREAD_REF, {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'WorkloadSpread',
      metadata: { name: 'spread', namespace: ns },
      spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets: [{ name: 'a', maxReplicas: 1 }, { name: 'b' }] },
    });
    await env.cluster.client.create(BUILTIN.deployments, deployment(ns, 'web', 3));
    await env.cluster.settle();
    const pods = (await env.cluster.client.list<KubeObject>(BUILTIN.pods, { namespace: ns })).items;
    assert.deepEqual(pods.map((p) => JSON.parse(p.metadata?.annotations?.['apps.kruise.io/matched-workloadspread'] ?? '{}').subset).sort(), ['a', 'b', 'b']);

    stop('SIGTERM');
    let code: number | undefined;
    void exit.then((c) => (code = c));
    await settleUntil(env.clock, () => assert.ok(code !== undefined, 'still running'));
    assert.equal(code, 0);
    const texts = io.stdout.trim().split('\n');
    assert.deepEqual(texts.filter((t) => repeatedKeys(t).length > 0), [], 'no key repeats in a line');
    const lines = texts.map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.ok(lines.every((l) => ['debug', 'info', 'warn', 'error'].includes(String(l['level'])) && typeof l['time'] === 'string' && typeof l['msg'] === 'string'), 'every line is a JSON record with a text level');
    assert.deepEqual(lines.filter((l) => typeof l['logger'] !== 'string'), [], 'every line says which part of the manager wrote it');
    assert.deepEqual(Object.keys(lines[0] ?? {}).slice(0, 3), ['level', 'time', 'logger']);
    assert.ok(lines.some((l) => l['msg'] === 'manager ready'));
    const reconcile = lines.filter((l) => l['logger'] === 'controller' && typeof l['reconcileID'] === 'string');
    assert.ok(reconcile.length > 0, 'reconcile lines carry reconcileID');
    assert.ok(
      reconcile.every((l) => l['controller'] === 'workloadspread' && l['controllerGroup'] === 'apps.kruise.io' && l['controllerKind'] === 'WorkloadSpread' && l['namespace'] === ns && l['name'] === 'spread'),
      'controller-runtime keys: controller, controllerGroup, controllerKind, namespace, name, reconcileID',
    );
    const admissions = lines.filter((l) => l['logger'] === 'webhook' && l['workloadspread'] === 'spread');
    assert.ok(admissions.length > 0, 'admission lines name the WorkloadSpread');
    assert.ok(admissions.every((l) => l['namespace'] === ns && typeof l['requestID'] === 'string' && (typeof l['name'] === 'string' || typeof l['generateName'] === 'string')), 'admission lines carry the pod as namespace/name (or generateName) and the requestID');
    assert.ok(!lines.some((l) => 'component' in l || 'workloadspread' in l && l['logger'] === 'controller'), 'no old keys');
    assert.ok(lines.some((l) => l['msg'] === 'signal received, shutting down' && l['signal'] === 'SIGTERM'));
    assert.equal(lines.at(-1)?.['msg'], 'manager stopped');
  });

  test('losing the lease exits 1 with one line on stderr', async () => {
    const { exit, io } = await run({ leaderElect: true, leaderElectionId: 'cli-lease' });
    await settleUntil(env.clock, async () => {
      const lease = await env.cluster.client.get<KubeObject>(BUILTIN.leases, 'cli-lease', { namespace: MANAGER_NAMESPACE });
      assert.ok(String((lease['spec'] as { holderIdentity?: string }).holderIdentity ?? '') !== '');
    });
    const fault = env.cluster.apiServer.control.injectFault({ resource: 'leases', verb: 'update', name: 'cli-lease', status: 500 });
    try {
      let code: number | undefined;
      void exit.then((c) => (code = c));
      await settleUntil(env.clock, () => assert.ok(code !== undefined, 'still running'), { maxMs: 60_000 });
      assert.equal(code, 1);
      assert.equal(io.stderr, `error: leadership of the lease ${MANAGER_NAMESPACE}/cli-lease was lost; exiting so a fresh process takes part in the election\n`);
    } finally {
      fault.clear();
    }
  });
});

describe('the command as a process (real clock)', () => {
  let cluster: EmbeddedCluster;
  let dir: string;
  before(async () => {
    cluster = await startCluster({ clock: realClock(), nodes: ZONED_NODES.slice(0, 2), kubeletDelayMs: 50 });
    await installCrd(cluster);
    await cluster.client.create(BUILTIN.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: MANAGER_NAMESPACE } });
    dir = mkdtempSync(join(tmpdir(), 'ws-manager-proc-'));
  });
  after(async () => {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('ready on /readyz, registers its webhooks, SIGTERM exits 0', async () => {
    const kubeconfig = join(dir, 'kubeconfig');
    await cluster.writeKubeconfig(kubeconfig);
    const [webhookPort, healthPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
    const bin = new URL('../../bin/workloadspread.js', import.meta.url).pathname;
    const child = spawn(
      process.execPath,
      [bin, 'manager', '--kubeconfig', kubeconfig, '--namespace', MANAGER_NAMESPACE, '--webhook-port', String(webhookPort), '--webhook-url', `https://127.0.0.1:${webhookPort}`, '--register-webhooks', '--metrics-addr', `127.0.0.1:${metricsPort}`, '--health-addr', `127.0.0.1:${healthPort}`],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await eventually(async () => assert.equal((await httpGet(`http://127.0.0.1:${healthPort}/readyz`)).code, 200), { timeoutMs: 60_000, intervalMs: 100 });
      const mutating = await cluster.client.get<KubeObject>(BUILTIN.mutatingwebhookconfigurations, 'workloadspread-mutating-webhook-configuration');
      assert.equal((mutating['webhooks'] as { clientConfig: { url: string } }[])[0]?.clientConfig.url, `https://127.0.0.1:${webhookPort}/mutate-pod`);
      // The client-side rate limiter is on by default: every request took a token through it.
      const metrics = (await httpGet(`http://127.0.0.1:${metricsPort}/metrics`)).body;
      const limited = Number(/^rest_client_rate_limiter_duration_seconds_count (\d+)/m.exec(metrics)?.[1] ?? '0');
      assert.ok(limited > 5, `requests through the rate limiter: ${limited}`);
      child.kill('SIGTERM');
      assert.equal(await exited, 0, stderr);
      assert.equal(stderr, '');
      const messages = stdout.trim().split('\n').map((l) => (JSON.parse(l) as { msg: string }).msg);
      assert.ok(messages.includes('manager ready'));
      assert.equal(messages.at(-1), 'manager stopped');
      await assert.rejects(httpGet(`http://127.0.0.1:${healthPort}/healthz`), /ECONNREFUSED/);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
