/**
 * Test support for the manager's integration tests: the embedded cluster on a
 * virtual clock (zoned nodes, every workload controller, the WorkloadSpread
 * CRD, the manager's namespace), real managers started against it over HTTPS
 * with loopback endpoints — each as the chart's ServiceAccount with exactly
 * the chart's RBAC (chart-identity.ts); a request the API server refuses it
 * fails the test when the manager stops (`stopOnClock`) or the cluster does —, a round-robin TCP forwarder that puts several
 * manager replicas behind ONE webhook URL (the API server calls one URL per
 * webhook, as it would call one Service), and readers for the Prometheus text
 * a manager exposes. Not used by production code.
 */
import assert from 'node:assert/strict';
import { get } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { domainDisruptionBudgetCrd, workloadSpreadCrd } from '../api/crd.ts';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { memoryLogger, type LogLevelName, type MemoryLogger } from '../client/logger.ts';
import { BUILTIN } from '../client/resources.ts';
import { generateServingCertificate, generateWebhookClientIdentity, type ServingCertificate, type WebhookClientIdentity } from '../client/loopback-certificates.ts';
import { startCluster, type ClusterOptions, type EmbeddedCluster } from '../cluster/index.ts';
import type { KubeObject } from '../k8s/types.ts';
import { settleUntil } from './eventually.ts';
import { MANAGER_NAMESPACE, workloadControllers, ZONED_NODES } from './webhook-bed.ts';
import { startManager, type Manager, type ManagerOptions } from '../manager/manager.ts';
import type { CustomWorkloadAccess } from '../cli/install-rbac.ts';
import { ChartIdentities, describeForbidden, type ChartRbacSettings, type ChartRules } from './chart-identity.ts';

export { MANAGER_NAMESPACE };

let certificate: ServingCertificate | undefined;
let clientIdentity: WebhookClientIdentity | undefined;

export interface ManagerCluster {
  cluster: EmbeddedCluster;
  clock: VirtualClock;
  /** The chart's ServiceAccounts the managers run as. */
  identities: ChartIdentities;
  /** A fresh namespace for one test. */
  namespace(prefix?: string): Promise<string>;
  /** Fails if the API server refused the managers' ServiceAccounts anything (RBAC the chart lacks). */
  assertNothingForbidden(): void;
  /** Stops the cluster; then fails like `assertNothingForbidden`. */
  stop(): Promise<void>;
}

/**
 * The embedded cluster, with the WorkloadSpread CRD unless `crd: false`, and
 * the DomainDisruptionBudget CRD too with `budgetCrd: true` (as the chart
 * installs them). Without the budget CRD the manager's budget informer
 * retries its 404 on a foreground back-off, so `settle()` never goes quiet
 * (it runs to its limit) and the manager logs a warning per retry.
 */
export async function startManagerCluster(options: ClusterOptions & { crd?: boolean; budgetCrd?: boolean } = {}): Promise<ManagerCluster> {
  certificate ??= generateServingCertificate();
  clientIdentity ??= generateWebhookClientIdentity();
  const clock = new VirtualClock(Date.UTC(2026, 0, 1), { realWaitMs: 120_000 });
  const { crd, budgetCrd, ...clusterOptions } = options;
  const cluster = await startCluster({ clock, certificate, webhookClientIdentity: clientIdentity, nodes: ZONED_NODES, controllers: workloadControllers(), ...clusterOptions });
  try {
    if (crd !== false) await installCrd(cluster);
    if (budgetCrd === true) {
      const created = await cluster.apiServer.control.create(domainDisruptionBudgetCrd() as KubeObject);
      assert.ok(created.ok, JSON.stringify(!created.ok && created.status));
    }
    const ns = await cluster.apiServer.control.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: MANAGER_NAMESPACE } });
    assert.ok(ns.ok, JSON.stringify(!ns.ok && ns.status));
    await clock.quiesce();
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  let seq = 0;
  const identities = new ChartIdentities(cluster);
  const assertNothingForbidden = () => {
    const refused = identities.forbidden(MANAGER_NAMESPACE);
    assert.equal(refused.length, 0, `the API server refused the manager (run as the chart's ServiceAccount) ${refused.length} request(s) — a rule missing from src/cli/install-rbac.ts and the chart?\n${describeForbidden(refused)}`);
  };
  return {
    cluster,
    clock,
    identities,
    namespace: async (prefix = 'mgr') => {
      const name = `${prefix}-${++seq}`;
      await cluster.client.create(BUILTIN.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      await clock.quiesce();
      return name;
    },
    assertNothingForbidden,
    stop: async () => {
      await cluster.stop();
      identities.close();
      assertNothingForbidden();
    },
  };
}

export async function installCrd(cluster: EmbeddedCluster): Promise<void> {
  const created = await cluster.apiServer.control.create(workloadSpreadCrd() as KubeObject);
  assert.ok(created.ok, JSON.stringify(!created.ok && created.status));
  await cluster.virtualClock?.quiesce();
}

export interface TestManager {
  manager: Manager;
  log: MemoryLogger;
  name: string;
}

export interface TestManagerOptions extends Partial<Omit<ManagerOptions, 'client' | 'connection' | 'clock' | 'namespace'>> {
  name?: string;
  /** The webhook URL to register (default this replica's own server). */
  url?: string;
  /** Wait until ready (default true). */
  waitReady?: boolean;
  /** Accept only the API server's client certificate (default true: the authenticated path, as the chart with a client CA). */
  clientAuth?: boolean;
  /**
   * The chart's RBAC for this manager: `customWorkloads` as the chart's `rbac.customWorkloads`
   * value; `rules` replaces the rules altogether (the RBAC ablation test).
   */
  rbac?: { customWorkloads?: CustomWorkloadAccess[]; rules?: ChartRules };
}

/** What the chart's RBAC depends on, read from a test manager's options as an installer would set the values. */
export function chartSettings(options: TestManagerOptions): ChartRbacSettings {
  const election = options.leaderElection;
  const settings: ChartRbacSettings = {
    namespace: MANAGER_NAMESPACE,
    leaderElection: election !== false,
    certManager: options.webhook?.certDir !== undefined,
    scope: options.webhook?.scope ?? 'namespaces',
    customWorkloads: options.rbac?.customWorkloads ?? [],
  };
  if (options.secureMetrics !== undefined) settings.metricsSecure = true;
  if (election !== false && election?.leaseName !== undefined) settings.leaseName = election.leaseName;
  if (options.webhook?.secretName !== undefined) settings.secretName = options.webhook.secretName;
  if (options.whitelistConfigMap !== undefined) settings.whitelistConfigMap = options.whitelistConfigMap;
  return settings;
}

/** A logger that keeps every line and, with WS_DEBUG=1, prints it with the virtual time. */
function testLogger(clock: VirtualClock, name: string): MemoryLogger {
  const mem = memoryLogger();
  if (process.env['WS_DEBUG'] !== '1') return mem;
  const t0 = Date.UTC(2026, 0, 1);
  const print = (lvl: LogLevelName) => (fields: Record<string, unknown>, message: string) => {
    console.error(`${lvl} +${clock.now() - t0}ms [${name}] ${message} ${JSON.stringify(fields)}`);
    mem[lvl](fields, message);
  };
  return { lines: mem.lines, debug: print('debug'), info: print('info'), warn: print('warn'), error: print('error') };
}

/**
 * A real manager on the cluster's clock: loopback endpoints on free ports, webhooks registered
 * by URL, authenticated as the chart's ServiceAccount (a TokenRequest token) with the chart's RBAC.
 */
export async function startTestManager(env: ManagerCluster, options: TestManagerOptions = {}): Promise<TestManager> {
  const { name = 'manager-0', url, waitReady = true, clientAuth = true, webhook, rbac, ...rest } = options;
  const settings = chartSettings(options);
  const token = await env.identities.tokenFor(settings, rbac?.rules);
  await env.identities.ensureWebhookConfigurations(MANAGER_NAMESPACE);
  const client = env.identities.client(token, MANAGER_NAMESPACE, `workloadspread-manager/${name}`);
  const log = testLogger(env.clock, name);
  const manager = startManager({
    client,
    namespace: MANAGER_NAMESPACE,
    identity: name,
    log,
    healthAddress: { host: '127.0.0.1', port: 0 },
    metricsAddress: { host: '127.0.0.1', port: 0 },
    ...rest,
    webhook: { host: '127.0.0.1', port: 0, register: true, url: url ?? ((own) => own), ...(clientAuth ? { clientCaPem: env.cluster.webhookClientCa() } : {}), ...webhook },
  });
  if (waitReady) await untilReady(env, manager);
  return { manager, log, name };
}

/** Runs the virtual clock until `manager` is ready (failing with what `done` says if it gave up). */
export async function untilReady(env: ManagerCluster, manager: Manager): Promise<void> {
  let failure: string | undefined;
  void manager.done.then((d) => {
    if (d.reason === 'failed') failure = d.error ?? 'failed';
  });
  await settleUntil(env.clock, () => {
    if (failure !== undefined) throw new Error(`the manager failed to start: ${failure}`);
    assert.ok(manager.isReady(), 'the manager is not ready yet');
  }, { maxMs: 5 * 60_000 });
}

/**
 * Stops a manager while the virtual clock keeps running (stop may wait on clock timers); then
 * fails if the API server refused the managers anything (`allowForbidden` skips that check).
 */
export async function stopOnClock(env: ManagerCluster, manager: Manager, options: { allowForbidden?: boolean } = {}): Promise<void> {
  let stopped = false;
  const stopping = manager.stop().then(() => {
    stopped = true;
  });
  await settleUntil(env.clock, () => assert.ok(stopped, 'still stopping'), { maxMs: 60_000 });
  await stopping;
  if (options.allowForbidden !== true) env.assertNothingForbidden();
}

/**
 * Awaits `work` while the virtual clock keeps running: an admission that hit
 * a conflict backs off on the clock, so a burst only completes as time moves.
 */
export async function onClock<T>(env: ManagerCluster, work: Promise<T>): Promise<T> {
  let settled = false;
  const watched = work.finally(() => {
    settled = true;
  });
  watched.catch(() => {});
  await settleUntil(env.clock, () => assert.ok(settled, 'still running'), { maxMs: 10 * 60_000 });
  return watched;
}

// ---- one URL in front of several replicas ----

export interface Forwarder {
  /** `https://127.0.0.1:<port>`: what the webhook configurations name. */
  readonly url: string;
  /** Replicas to send connections to, in turn (`https://host:port` of each webhook server). */
  setBackends(urls: string[]): void;
  /** Connections accepted per backend URL so far. */
  readonly connections: Map<string, number>;
  /** Takes a backend out of the rotation and cuts its open connections mid-request (a killed replica). */
  drop(url: string): void;
  /**
   * While stalled, established connections hold their bytes in both
   * directions (the webhook never answers: callers time out, once the second
   * of real time clock/handoff.ts gives bytes on their way is over), and new ones —
   * or ones still in their TLS handshake — are cut (connection reset), since a
   * handshake that never ends would keep a virtual clock's caller "sending".
   */
  stall(on: boolean): void;
  close(): Promise<void>;
}

/**
 * A TCP forwarder that hands each new connection to the next backend in turn
 * — TLS passes through untouched, so the API server verifies the managers'
 * own certificate (and the managers its client certificate), as it would
 * behind a Service.
 */
export async function startForwarder(): Promise<Forwarder> {
  let backends: string[] = [];
  let next = 0;
  let stalled = false;
  const connections = new Map<string, number>();
  const sockets = new Set<Socket>();
  const pairs = new Set<{ inbound: Socket; outbound: Socket; target: string; answered: number }>();
  /** Bytes a backend sends before its first HTTP answer is surely past the TLS handshake (server hello, certificate). */
  const HANDSHAKE_BYTES = 4096;
  const track = (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  };
  const flow = (pair: { inbound: Socket; outbound: Socket }, on: boolean) => {
    if (on) {
      pair.inbound.pipe(pair.outbound);
      pair.outbound.pipe(pair.inbound);
    } else {
      pair.inbound.unpipe(pair.outbound);
      pair.outbound.unpipe(pair.inbound);
      pair.inbound.pause();
      pair.outbound.pause();
    }
  };
  const server: Server = createServer((inbound) => {
    track(inbound);
    const target = backends.length === 0 ? undefined : backends[next++ % backends.length];
    if (target === undefined || stalled) {
      inbound.destroy();
      return;
    }
    connections.set(target, (connections.get(target) ?? 0) + 1);
    const u = new URL(target);
    const outbound = connect(Number(u.port), u.hostname);
    track(outbound);
    const pair = { inbound, outbound, target, answered: 0 };
    pairs.add(pair);
    outbound.on('data', (chunk: Buffer) => (pair.answered += chunk.length));
    flow(pair, !stalled);
    const end = () => {
      pairs.delete(pair);
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on('error', end);
    outbound.on('error', end);
    inbound.on('close', end);
    outbound.on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `https://127.0.0.1:${port}`,
    connections,
    setBackends: (urls) => {
      backends = [...urls];
    },
    drop: (url) => {
      backends = backends.filter((b) => b !== url);
      for (const pair of [...pairs]) {
        if (pair.target !== url) continue;
        pair.inbound.destroy();
        pair.outbound.destroy();
      }
    },
    stall: (on) => {
      if (stalled === on) return;
      stalled = on;
      for (const pair of [...pairs]) {
        if (on && pair.answered < HANDSHAKE_BYTES) {
          pair.inbound.destroy();
          pair.outbound.destroy();
        } else flow(pair, !on);
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

// ---- HTTP endpoints of a manager ----

/** GET `url`: status code and body (real I/O; no clock time passes). */
export function httpGet(url: string): Promise<{ code: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = get(url, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

/** The value of the sample `name{labels}` in Prometheus text (labels given must match; others ignored); undefined when absent. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  let total: number | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line === '') continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null || m[1] !== name) continue;
    const have: Record<string, string> = {};
    for (const pair of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) have[pair[1] ?? ''] = pair[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) total = (total ?? 0) + Number(m[3]);
  }
  return total;
}

/** Scrapes a manager's `/metrics`. */
export async function scrape(manager: Manager): Promise<string> {
  const url = manager.endpoints().metrics;
  assert.ok(url !== undefined, 'the manager serves no metrics');
  const r = await httpGet(`${url}/metrics`);
  assert.equal(r.code, 200);
  return r.body;
}
