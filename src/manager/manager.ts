/**
 * `startManager`: the production process in one call — the admission
 * webhooks (every replica), the controllers (the elected leader only),
 * `/metrics` (plain HTTP, or with `secureMetrics` HTTPS behind the API
 * server's TokenReview and SubjectAccessReview, with CPU and heap profiles:
 * metrics-auth.ts, profiling.ts), `/healthz`, `/readyz` and the webhook
 * certificates — composed
 * from src/kube, src/webhook and src/controller over one set of caches, one
 * per-WorkloadSpread lock and one local copy of the last written
 * WorkloadSpread, so the webhook and the controller of a replica never race
 * each other (spec §2.4).
 *
 * Every part is a runnable (runnables.ts), added to its group in
 * `#compose`; the groups start in controller-runtime's order: health and
 * metrics endpoints → certificates, then the webhook server → caches (wait
 * for sync, bounded by `cacheSyncTimeoutMs`) → webhook configurations (when
 * registering) → ready → leader election → the leader's loops while leading.
 * Until the caches have synced, admissions fail closed (500): an empty cache
 * would admit pods unplaced. Readiness = caches synced + webhook serving with
 * a certificate + every start step done.
 *
 * `stop()` is graceful and leaves nothing open: not ready, stop leading
 * (the controllers drain what their workers hold; the lease is released
 * unless `releaseOnStop` is false), then the runnables in reverse: the webhook
 * server closes once admissions in flight are answered (before the caches
 * stop: those admissions read them), certificates, caches, events flushed,
 * endpoints closed. `done` resolves when the manager can no longer do its job or
 * was stopped: `lost-leadership` (the leader could not renew its lease — the
 * process must exit, as controller-runtime managers do), `failed` (start
 * failed; `error` says why) or `stopped`. Callers stop() after `done`.
 * Start at `startManager`.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { realClock, type Clock } from '../clock/clock.ts';
import type { Connection } from '../client/config.ts';
import { describeError, isNotFound } from '../client/errors.ts';
import { KubeClient } from '../client/http-client.ts';
import { LeaderElector } from '../client/leader-election.ts';
import { DEFAULT_BURST, DEFAULT_QPS, type RateLimitSettings } from '../client/rate-limit.ts';
import { silentLogger, withFields, type Logger } from '../client/logger.ts';
import type { WatcherOptions } from '../client/watcher.ts';
import { WorkloadSpreadController, DEFAULT_WORKERS } from '../controller/controller.ts';
import type { BudgetController } from '../controller/budget-controller.ts';
import { REBALANCER_LOG_FIELDS, Rebalancer } from '../controller/rebalancer.ts';
import { ManagerCaches } from '../kube/caches.ts';
import { createEventRecorder, CONTROLLER_COMPONENT, EngineEventSink, WEBHOOK_COMPONENT } from '../kube/events.ts';
import { PodWriter } from '../kube/pod-writer.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import { StatusWriter } from '../kube/status-writer.ts';
import { WorkloadResolver } from '../kube/workload-resolver.ts';
import { WorkloadSpreadState } from '../kube/ws-state.ts';
import { errored } from '../webhook/admission-review.ts';
import { certificateInfo } from '../webhook/cert-generation.ts';
import { CertDirSource, SecretCertificates, servingNames, type CertificateSource, type KeyPair } from '../webhook/certs.ts';
import { ClientCaFile, staticClientAuth, type ClientAuthSource } from '../webhook/client-auth.ts';
import { webhookFromKube, type KubeWebhook } from '../webhook/kube-sources.ts';
import { ConfigurationKeeper, NamespaceReach, supportsMatchConditions } from '../webhook/configuration-keeper.ts';
import { MUTATING_CONFIGURATION_NAME, registerWebhooks, VALIDATING_CONFIGURATION_NAME, watchNamespacesScopeProblem, webhookConfigurations, type WebhookEndpoint, type WebhookScope, type WebhookScopeKind } from '../webhook/registration.ts';
import { startWebhookServer, type AdmissionHandler, type WebhookServer } from '../webhook/server.ts';
import { probeRoute, sendText, startHttpEndpoint, urlHost, type BindAddress, type HttpEndpoint, type RouteHandler } from './endpoints.ts';
import { ManagerBudgets, type BudgetSettings } from './budgets.ts';
import { ManagerMetrics } from './metrics.ts';
import { DelegatedAuth } from './metrics-auth.ts';
import { metricsCertificates } from './metrics-tls.ts';
import { Profiler } from './profiling.ts';
import type { Runnable } from '../client/runnable.ts';
import { Runnables, whileLeading, type RunnableGroup } from './runnables.ts';
import { DEFAULT_LEASE_NAME, DEFAULT_WEBHOOK_PORT, DEFAULT_WEBHOOK_SERVICE } from './defaults.ts';

export { DEFAULT_LEASE_NAME, DEFAULT_WEBHOOK_PORT, DEFAULT_WEBHOOK_SERVICE };
/** controller-runtime's CacheSyncTimeout. */
export const DEFAULT_CACHE_SYNC_TIMEOUT_MS = 120_000;
/** How long stop() lets admissions in flight finish. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;
export const MANAGER_USER_AGENT = 'workloadspread-manager';

export interface WebhookOptions {
  /** Listen address (default 0.0.0.0). */
  host?: string;
  /** Listen port (default 9443; 0 picks a free one). */
  port?: number;
  /**
   * Where the API server calls the webhooks (`--webhook-url`): a fixed URL, or
   * a function of this server's own URL (tests, the embedded cluster).
   * Omitted: the Service `serviceName` in the manager's namespace.
   */
  url?: string | ((serverUrl: string) => string);
  /** The Service in front of the webhook (default `workloadspread-webhook`). */
  serviceName?: string;
  servicePort?: number;
  /** `tls.crt`/`tls.key` (and optionally `ca.crt`) from here instead of generated certificates (`--cert-dir`). */
  certDir?: string;
  /** The Secret holding generated certificates (default `workloadspread-webhook-certs`). */
  secretName?: string;
  /** Create/update the webhook configurations (`--register-webhooks`). */
  register?: boolean;
  /**
   * Client-certificate authentication of the API server: the CA as a file
   * (`--client-ca-file`, re-read when it changes) or as PEM. Omitted: anyone
   * who reaches the port may call the webhook, and the manager warns at start.
   */
  clientCaFile?: string;
  clientCaPem?: string;
  /** With a client CA: the certificate names accepted (`--client-cert-allowed-names`); empty: any it signed. */
  clientCertAllowedNames?: string[];
  /**
   * Which namespaces' pods reach the pod webhooks (`--webhook-scope`):
   * `namespaces` (default) — only those holding a WorkloadSpread (or, for
   * deletions and evictions, a DomainDisruptionBudget), kept current by the
   * leader; `cluster` — every namespace but the manager's and kube-system.
   */
  scope?: WebhookScopeKind;
}

/**
 * `/metrics` over HTTPS to callers the API server authenticates (TokenReview)
 * and authorizes (SubjectAccessReview for the path, verb `get`) —
 * `--metrics-secure`, as controller-runtime's `SecureServing` with
 * `WithAuthenticationAndAuthorization`. The manager's identity then needs
 * `create` on tokenreviews and subjectaccessreviews.
 */
export interface SecureMetricsOptions {
  /** `tls.crt`/`tls.key` from here, reloaded when they change (`--metrics-cert-dir`); default a self-signed certificate made at start. */
  certDir?: string;
  /** CPU and heap profiles under `/debug/pprof/` (profiling.ts) to callers allowed `get` on them (`--profiling`; default true). */
  profiling?: boolean;
  /** How long an authentication or authorization decision is reused (default 10 s). */
  cacheTtlMs?: number;
}

export interface LeaderElectionSettings {
  /** The Lease's name, in the manager's namespace (default `workloadspread-manager`). */
  leaseName?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Release the lease on stop() so a successor takes over at once (default true). */
  releaseOnStop?: boolean;
}

export interface ManagerOptions {
  /** Where the API server is (the manager makes its own client), or a ready client. */
  connection?: Connection;
  /**
   * Cache and act on only these namespaces (`--watch-namespaces`): one watch
   * per namespace and kind; WorkloadSpreads and budgets elsewhere are
   * admitted with a warning and left alone; the pod webhooks never reach
   * other namespaces (needs the `namespaces` webhook scope). Undefined: all.
   */
  watchNamespaces?: readonly string[];
  /**
   * Client-side rate limiting of the client the manager makes from
   * `connection` (`--kube-api-qps`, `--kube-api-burst`; client-go's token
   * bucket). Default controller-runtime's: 20 requests a second, bursts of
   * 30; a non-positive qps turns it off.
   */
  kubeApi?: RateLimitSettings;
  client?: KubeClient;
  /** Default: the client's clock, else the real one. */
  clock?: Clock;
  log?: Logger;
  /** The manager's own namespace: Secret, Lease, whitelist config map, excluded from pod webhooks. */
  namespace: string;
  /** This replica's name in the Lease and in Events (default `<hostname>_<uuid>`). */
  identity?: string;
  webhook?: WebhookOptions;
  /** `/metrics` (undefined: off). */
  metricsAddress?: BindAddress;
  /** Serve `/metrics` (and the profiles) over HTTPS behind the API server's authentication and authorization; undefined: plain HTTP to anyone. */
  secureMetrics?: SecureMetricsOptions;
  /** `/healthz`, `/readyz` (undefined: off). */
  healthAddress?: BindAddress;
  /** false: this replica always runs the controller (one replica only!). Default: elect. */
  leaderElection?: false | LeaderElectionSettings;
  workers?: number;
  /** D10 (default 300). */
  unschedulableRecoverySeconds?: number;
  /** The whitelist config map's name (default `workloadspread-configuration`). */
  whitelistConfigMap?: string;
  cacheSyncTimeoutMs?: number;
  shutdownGraceMs?: number;
  /** Default: a new registry with process metrics. */
  metrics?: ManagerMetrics;
  /** DomainDisruptionBudgets (D14): `--guard-pod-deletion` and tuning (budgets.ts). */
  budgets?: BudgetSettings;
  /** D20: subset patches may set privilege-bearing pod fields (`--allow-privileged-subset-patches`; default false). */
  allowPrivilegedSubsetPatches?: boolean;
}

export type ManagerStopReason = 'stopped' | 'lost-leadership' | 'failed';

export interface ManagerDone {
  reason: ManagerStopReason;
  error?: string;
}

export interface ManagerEndpoints {
  health?: string;
  metrics?: string;
  /** This replica's webhook server. */
  webhook?: string;
}

export interface Manager {
  readonly identity: string;
  readonly metrics: ManagerMetrics;
  /** Resolves when ready (caches synced, webhook serving); rejects when the start failed. */
  readonly ready: Promise<void>;
  /** Resolves once the manager stopped doing its job (see the module comment). */
  readonly done: Promise<ManagerDone>;
  /** Resolves once the health and metrics endpoints listen. */
  readonly serving: Promise<ManagerEndpoints>;
  isReady(): boolean;
  /** Whether this replica runs the controller now. */
  isLeader(): boolean;
  endpoints(): ManagerEndpoints;
  stop(): Promise<void>;
}

class StopRequested extends Error {
  constructor() {
    super('the manager was stopped while starting');
  }
}

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Starts a manager; the returned object reports its progress (`ready`, `done`) and stops it. */
export function startManager(options: ManagerOptions): Manager {
  return new ManagerRun(options).handle;
}

/** What the runnables share once composed (the kube layer both halves use). */
interface Shared {
  client: KubeClient;
  caches: ManagerCaches;
  resolver: WorkloadResolver;
  state: WorkloadSpreadState;
  statusWriter: StatusWriter;
  controllerEvents: EngineEventSink;
  budgets: ManagerBudgets;
}

class ManagerRun {
  readonly handle: Manager;
  readonly #o: ManagerOptions;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #identity: string;
  readonly #metrics: ManagerMetrics;
  readonly #ready = deferred<void>();
  readonly #done = deferred<ManagerDone>();
  readonly #serving = deferred<ManagerEndpoints>();
  readonly #abortStart = new AbortController();
  readonly #runnables: Runnables;
  #client: KubeClient | undefined;
  #health: HttpEndpoint | undefined;
  #metricsEndpoint: HttpEndpoint | undefined;
  #metricsCertificates: { stop(): void } | undefined;
  #profiler: Profiler | undefined;
  #certificates: (CertificateSource & { stop(): void }) | undefined;
  #clientAuth: ClientAuthSource | undefined;
  #server: WebhookServer | undefined;
  #webhook: KubeWebhook | undefined;
  #elector: LeaderElector | undefined;
  /** Without leader election: aborts the leader's loops on stop. */
  #leadAbort: AbortController | undefined;
  #leading: Promise<void> | undefined;
  #isLeading = false;
  #synced = false;
  #isReady = false;
  /** Every start step finished (stays true while stopping; `#isReady` does not). */
  #startCompleted = false;
  #stopping = false;
  #started: Promise<void>;
  #stopped: Promise<void> | undefined;

  constructor(options: ManagerOptions) {
    this.#o = options;
    this.#log = withFields(options.log ?? silentLogger, { logger: 'manager' });
    this.#clock = options.clock ?? options.client?.clock ?? realClock();
    this.#identity = options.identity ?? `${hostname()}_${randomUUID()}`;
    this.#metrics = options.metrics ?? new ManagerMetrics();
    this.#runnables = new Runnables({
      step: (name, fn) => this.#step(name, fn),
      onStopError: (name, err) => this.#log.error({ err: describeError(err) }, `manager stop: ${name} failed`),
    });
    // Nobody has to await these for a failure to be reported through `done`.
    this.#ready.promise.catch(() => {});
    this.#serving.promise.catch(() => {});
    const run = this;
    this.handle = {
      identity: this.#identity,
      metrics: this.#metrics,
      ready: this.#ready.promise,
      done: this.#done.promise,
      serving: this.#serving.promise,
      isReady: () => this.#isReady,
      isLeader: () => this.#isLeading && (this.#elector === undefined || this.#elector.isLeader),
      endpoints: () => run.#endpoints(),
      stop: () => (this.#stopped ??= this.#stop()),
    };
    this.#started = this.#start().then(
      () => {
        this.#startCompleted = true;
        this.#isReady = true;
        this.#log.info({ identity: this.#identity, ...this.#endpoints() }, 'manager ready');
        this.#ready.resolve();
        this.#lead();
      },
      (err: unknown) => {
        const stopped = err instanceof StopRequested || this.#stopping;
        this.#ready.reject(err);
        this.#serving.reject(err);
        if (!stopped) {
          this.#log.error({ err: describeError(err) }, 'manager failed to start');
          this.#done.resolve({ reason: 'failed', error: describeError(err) });
          void this.handle.stop();
        }
      },
    );
  }

  #endpoints(): ManagerEndpoints {
    const out: ManagerEndpoints = {};
    if (this.#health !== undefined) out.health = this.#health.url;
    if (this.#metricsEndpoint !== undefined) out.metrics = this.#metricsEndpoint.url;
    if (this.#server !== undefined) out.webhook = this.#server.url;
    return out;
  }

  #check(): void {
    if (this.#stopping) throw new StopRequested();
  }

  /** Runs one start step as tracked work, so a virtual clock does not jump in the middle of it. */
  #step<T>(label: string, fn: () => Promise<T>): Promise<T> {
    this.#check();
    return this.#clock.activity.run(`manager ${label}`, fn);
  }

  async #start(): Promise<void> {
    const o = this.#o;
    if (o.client === undefined && o.connection === undefined) throw new Error('startManager needs a connection or a client');
    if (o.watchNamespaces !== undefined && o.watchNamespaces.length === 0) throw new Error('watchNamespaces must name at least one namespace (leave it out for all)');
    if (o.watchNamespaces !== undefined && this.#scopeKind() === 'cluster') throw new Error(watchNamespacesScopeProblem('watchNamespaces', 'the namespaces webhook scope'));
    const client = (this.#client =
      o.client ??
      new KubeClient(o.connection as Connection, {
        clock: this.#clock,
        userAgent: MANAGER_USER_AGENT,
        fieldManager: MANAGER_USER_AGENT,
        rateLimit: o.kubeApi ?? { qps: DEFAULT_QPS, burst: DEFAULT_BURST },
      }));
    client.instrument(this.#metrics.restClient);
    const limiter = client.rateLimiter;
    if (limiter !== undefined) limiter.onWait = (ms) => this.#metrics.rateLimiterWait(ms / 1000);
    this.#compose(client);
    await this.#runnables.start(this.#abortStart.signal);
    this.#check();
  }

  /** Builds the parts and adds each, as a runnable, to its group (start order: runnables.ts). */
  #compose(client: KubeClient): void {
    const o = this.#o;
    const clock = this.#clock;
    const log = this.#log;
    const add = (group: RunnableGroup, runnable: Runnable) => this.#runnables.add(group, runnable);

    // The shared kube layer: one cache, one lock, one local copy for both halves.
    const eventLog = withFields(log, { logger: 'events' });
    const webhookEvents = new EngineEventSink(createEventRecorder(client, WEBHOOK_COMPONENT, this.#identity, eventLog), eventLog);
    const controllerRecorder = createEventRecorder(client, CONTROLLER_COMPONENT, this.#identity, eventLog);
    const controllerEvents = new EngineEventSink(controllerRecorder, eventLog);
    // ManagerCaches hands its `watcher` settings to every informer it builds: the metrics hooks ride along.
    const watcher: Partial<Pick<WatcherOptions, 'metrics' | 'resyncMs'>> = { metrics: this.#metrics.watcher };
    const caches = new ManagerCaches({
      client,
      namespace: o.namespace,
      log: withFields(log, { logger: 'caches' }),
      recorder: controllerRecorder,
      ...(o.whitelistConfigMap === undefined ? {} : { configMapName: o.whitelistConfigMap }),
      ...(o.watchNamespaces === undefined ? {} : { namespaces: o.watchNamespaces }),
      watcher,
    });
    const state = new WorkloadSpreadState({ clock });
    const budgets = new ManagerBudgets({ client, clock, caches, log, recorder: controllerRecorder, metrics: this.#metrics, watcher, ...(o.budgets === undefined ? {} : { settings: o.budgets }) });
    const shared: Shared = {
      client,
      caches,
      resolver: new WorkloadResolver({ caches, log }),
      state,
      statusWriter: new StatusWriter({ client, state, metrics: this.#metrics.statusWriter }),
      controllerEvents,
      budgets,
    };
    const webhookOptions = o.webhook ?? {};
    const serviceName = webhookOptions.serviceName ?? DEFAULT_WEBHOOK_SERVICE;
    const listenHost = webhookOptions.host ?? '0.0.0.0';

    // servers
    add('servers', { name: 'endpoints', start: () => this.#startEndpoints(client), stop: async () => {
      await this.#health?.close();
      this.#profiler?.close();
      await this.#metricsEndpoint?.close();
      this.#metricsCertificates?.stop();
    } });
    // Stops first in its group: the last Events go out before the endpoints close.
    add('servers', { name: 'events', start: async () => {}, stop: async () => {
      for (const sink of [webhookEvents, controllerEvents]) await sink.flush();
    } });

    // webhooks
    add('webhooks', { name: 'certificates', start: async () => {
      this.#certificates = await this.#startCertificates(client, serviceName, listenHost);
      this.#clientAuth = await this.#startClientAuth(listenHost, webhookOptions.port ?? DEFAULT_WEBHOOK_PORT);
    }, stop: async () => {
      this.#certificates?.stop();
      this.#clientAuth?.stop();
    } });
    add('webhooks', {
      name: 'webhook server',
      start: () => this.#startWebhookServer(shared, webhookEvents, listenHost),
      stop: async () => {
        await this.#server?.close(o.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS);
        // No pod is answered any more: the places reserved ahead go back before the caches stop.
        await this.#webhook?.stop();
      },
    });

    // caches
    add('caches', { name: 'budget cache', start: async () => budgets.start(), stop: () => budgets.stop() });
    add('caches', { name: 'caches', start: async () => {
      caches.start();
      await this.#warnWithoutCrd(client);
      await this.#waitForSync(caches);
      this.#synced = true;
      log.info({}, 'caches synced');
    }, stop: () => caches.stop() });

    // startup
    if (webhookOptions.register === true) {
      add('startup', { name: 'webhook registration', start: async (signal) => {
        const endpoint = this.#webhookEndpoint(serviceName);
        const caBundle = await this.#caBundle();
        const scope = await this.#scope(shared, signal);
        await registerWebhooks(client, webhookConfigurations({ managerNamespace: o.namespace, endpoint, guardPodDeletion: shared.budgets.guardPodDeletion, scope, ...(caBundle === undefined ? {} : { caBundle }) }), log);
      }, stop: async () => {} });
    }

    // leader
    const workers = o.workers ?? DEFAULT_WORKERS;
    this.#metrics.maxConcurrentReconciles(workers);
    this.#runnables.addLeader(whileLeading('workloadspread controller', () => this.#newController(shared, workers)));
    this.#runnables.addLeader(whileLeading('budget controller', () => budgets.newController()));
    this.#runnables.addLeader(whileLeading('rebalancer', () => this.#newRebalancer(shared)));
    this.#runnables.addLeader(whileLeading('webhook configurations', () => this.#newConfigurationKeeper(shared, watcher)));
  }

  async #startEndpoints(client: KubeClient): Promise<void> {
    const o = this.#o;
    const clock = this.#clock;
    const log = this.#log;
    if (o.healthAddress !== undefined) {
      const notServing = (): true | string => (this.#stopping ? 'the manager is stopping' : true);
      this.#health = await startHttpEndpoint({
        address: o.healthAddress,
        clock,
        name: 'health',
        log,
        routes: {
          '/healthz': probeRoute('healthz', [{ name: 'ping', check: () => true }]),
          '/readyz': probeRoute('readyz', [
            { name: 'caches-synced', check: () => (this.#synced ? true : 'the caches have not synced yet') },
            { name: 'webhook-serving', check: () => (this.#server !== undefined && this.#certificates?.current() !== undefined ? true : 'the webhook server is not serving yet') },
            // Every start step done (the webhook registration too): ready means "configured", not only "answering".
            { name: 'started', check: () => (this.#startCompleted ? true : 'the manager is still starting') },
            { name: 'not-stopping', check: notServing },
          ]),
        },
      });
    }
    if (o.metricsAddress !== undefined) {
      const metrics = this.#metrics;
      const routes: Record<string, RouteHandler> = { '/metrics': async (_req, res) => sendText(res, 200, await metrics.text(), metrics.contentType) };
      const secure = o.secureMetrics;
      if (secure === undefined) {
        this.#metricsEndpoint = await startHttpEndpoint({ address: o.metricsAddress, clock, name: 'metrics', log, routes });
      } else {
        const metricsLog = withFields(log, { logger: 'metrics' });
        const certificates = await metricsCertificates({ clock, log: metricsLog, ...(secure.certDir === undefined ? {} : { certDir: secure.certDir }) });
        this.#metricsCertificates = certificates;
        if (secure.profiling !== false) {
          this.#profiler = new Profiler({ clock, log: metricsLog });
          Object.assign(routes, this.#profiler.routes());
        }
        const filter = new DelegatedAuth({ client, clock, log: metricsLog, ...(secure.cacheTtlMs === undefined ? {} : { ttlMs: secure.cacheTtlMs }) });
        this.#metricsEndpoint = await startHttpEndpoint({ address: o.metricsAddress, clock, name: 'metrics', log, routes, tls: certificates, filter });
      }
    }
    this.#serving.resolve(this.#endpoints());
  }

  async #startWebhookServer(shared: Shared, events: EngineEventSink, listenHost: string): Promise<void> {
    const o = this.#o;
    const webhook = webhookFromKube({
      clock: this.#clock,
      caches: shared.caches,
      writer: shared.statusWriter,
      events,
      metrics: this.#metrics.webhook,
      log: withFields(this.#log, { logger: 'webhook' }),
      ...(o.unschedulableRecoverySeconds === undefined ? {} : { unschedulableRecoverySeconds: o.unschedulableRecoverySeconds }),
      budgets: shared.budgets.enforcement,
      guardPodDeletion: shared.budgets.guardPodDeletion,
      subsetPatches: { allowPrivileged: o.allowPrivilegedSubsetPatches ?? false },
      ...(o.watchNamespaces === undefined ? {} : { watchNamespaces: o.watchNamespaces }),
      ...(this.#scopeKind() === 'namespaces'
        ? {
            reach: new NamespaceReach({
              client: shared.client,
              mutatingName: MUTATING_CONFIGURATION_NAME,
              validatingName: VALIDATING_CONFIGURATION_NAME,
              managerNamespace: o.namespace,
              guardPodDeletion: shared.budgets.guardPodDeletion,
              ...(o.watchNamespaces === undefined ? {} : { watchNamespaces: o.watchNamespaces }),
              log: withFields(this.#log, { logger: 'webhook-configurations' }),
            }),
          }
        : {}),
    });
    this.#webhook = webhook;
    const handlers: Record<string, AdmissionHandler> = {};
    for (const [path, handler] of Object.entries(webhook.handlers)) {
      // An empty cache would admit pods unplaced: fail closed until the caches have synced.
      handlers[path] = (req, context) => (this.#synced ? handler(req, context) : Promise.resolve(errored(req.uid, 500, new Error('the workloadspread manager is starting: its caches have not synced yet'))));
    }
    this.#server = await startWebhookServer({
      clock: this.#clock,
      host: listenHost,
      port: o.webhook?.port ?? DEFAULT_WEBHOOK_PORT,
      certificates: this.#certificates as CertificateSource,
      handlers,
      metrics: this.#metrics.webhook,
      log: withFields(this.#log, { logger: 'webhook' }),
      ...(this.#clientAuth === undefined ? {} : { clientAuth: this.#clientAuth }),
    });
    this.#log.info({ url: this.#server.url, clientAuthentication: this.#clientAuth !== undefined }, 'webhook server listening');
  }
  async #waitForSync(caches: ManagerCaches): Promise<void> {
    const timeoutMs = this.#o.cacheSyncTimeoutMs ?? DEFAULT_CACHE_SYNC_TIMEOUT_MS;
    const abort = new AbortController();
    const onStop = () => abort.abort(new StopRequested());
    this.#abortStart.signal.addEventListener('abort', onStop, { once: true });
    const timer = this.#clock.setTimeout(
      () => abort.abort(new Error(`the caches did not sync within ${Math.round(timeoutMs / 1000)} s (is the WorkloadSpread CRD installed, and may the manager list and watch what it needs?)`)),
      timeoutMs,
      { background: true, name: 'manager cache sync timeout' },
    );
    try {
      await caches.waitForSync(abort.signal);
    } finally {
      timer.cancel();
      this.#abortStart.signal.removeEventListener('abort', onStop);
    }
  }

  /** Says so plainly when the CRD is missing (the caches keep retrying until it appears or the sync times out). */
  async #warnWithoutCrd(client: KubeClient): Promise<void> {
    const path = `/apis/${WORKLOADSPREAD_REF.group}/${WORKLOADSPREAD_REF.version}`;
    try {
      const list = await client.request<{ resources?: { name?: string }[] }>({ method: 'GET', path });
      if ((list.resources ?? []).some((r) => r.name === WORKLOADSPREAD_REF.resource)) return;
    } catch (err) {
      if (!isNotFound(err)) return;
    }
    this.#log.error({ resource: `${WORKLOADSPREAD_REF.resource}.${WORKLOADSPREAD_REF.group}` }, 'the WorkloadSpread CRD is not installed; waiting for it (apply deploy/crds/)');
  }

  async #startCertificates(client: KubeClient, serviceName: string, listenHost: string): Promise<CertificateSource & { stop(): void }> {
    const o = this.#o;
    const webhookOptions = o.webhook ?? {};
    const onLoaded = (pair: KeyPair) => {
      const info = certificateInfo(pair.certPem);
      if (info !== undefined) this.#metrics.webhook.certificateLoaded?.(info.notAfterMs);
    };
    let source: CertificateSource & { stop(): void };
    if (webhookOptions.certDir !== undefined) {
      const dir = new CertDirSource({ dir: webhookOptions.certDir, clock: this.#clock, log: withFields(this.#log, { logger: 'certificates' }) });
      await dir.start();
      source = dir;
    } else {
      const url = webhookOptions.url;
      const urlForNames = typeof url === 'string' ? url : url !== undefined ? `https://${urlHost(listenHost)}` : undefined;
      const secret = new SecretCertificates({
        client,
        clock: this.#clock,
        namespace: o.namespace,
        names: servingNames({ service: { name: serviceName, namespace: o.namespace }, ...(urlForNames === undefined ? {} : { webhookUrl: urlForNames }) }),
        mutatingConfigurations: [MUTATING_CONFIGURATION_NAME],
        validatingConfigurations: [VALIDATING_CONFIGURATION_NAME],
        log: withFields(this.#log, { logger: 'certificates' }),
        ...(webhookOptions.secretName === undefined ? {} : { secretName: webhookOptions.secretName }),
      });
      await secret.start();
      source = secret;
    }
    const current = source.current();
    if (current !== undefined) onLoaded(current);
    source.onChange(onLoaded);
    return source;
  }

  /** The client CA (file or PEM), or undefined — then the one warning that anyone may call. */
  async #startClientAuth(listenHost: string, port: number): Promise<ClientAuthSource | undefined> {
    const w = this.#o.webhook ?? {};
    const allowedNames = w.clientCertAllowedNames ?? [];
    if (w.clientCaFile !== undefined) {
      const file = new ClientCaFile({ file: w.clientCaFile, allowedNames, clock: this.#clock, log: this.#log });
      await file.start();
      return file;
    }
    if (w.clientCaPem !== undefined) return staticClientAuth(w.clientCaPem, allowedNames);
    this.#log.warn(
      { listen: `${listenHost}:${port}` },
      'the webhook does not authenticate its callers: anyone who can reach this port can send admission reviews (pass --client-ca-file, or restrict the port with a NetworkPolicy; see docs/operations.md#security)',
    );
    return undefined;
  }

  #webhookEndpoint(serviceName: string): WebhookEndpoint {
    const w = this.#o.webhook ?? {};
    if (typeof w.url === 'string') return { url: w.url };
    if (w.url !== undefined) return { url: w.url(this.#server?.url ?? '') };
    return { service: { name: serviceName, namespace: this.#o.namespace, ...(w.servicePort === undefined ? {} : { port: w.servicePort }) } };
  }

  /** The CA the API server must trust: the generated one, or `ca.crt` of the cert dir (none: left to a CA injector). */
  async #caBundle(): Promise<string | undefined> {
    const source = this.#certificates;
    if (source instanceof SecretCertificates) return source.caBundle();
    const dir = this.#o.webhook?.certDir;
    if (dir === undefined) return undefined;
    try {
      return await readFile(join(dir, 'ca.crt'), 'utf8');
    } catch {
      return undefined;
    }
  }

  #scopeKind(): WebhookScopeKind {
    return this.#o.webhook?.scope ?? 'namespaces';
  }

  /** The pod webhooks' reach now: namespaces from the caches (budgets once their cache has listed, when served). */
  async #scope(shared: Shared, signal?: AbortSignal): Promise<WebhookScope> {
    if (this.#scopeKind() === 'cluster') return { kind: 'cluster' };
    await this.#budgetsListed(shared, signal);
    return { kind: 'namespaces', workloadSpreads: workloadSpreadNamespaces(shared.caches), budgets: budgetNamespaces(shared.budgets) };
  }

  /**
   * Waits for the budget cache when budgets are served: namespaces it has not
   * listed yet must not drop out of the eviction webhook's reach.
   */
  async #budgetsListed(shared: Shared, signal?: AbortSignal): Promise<void> {
    const cache = shared.budgets.cache;
    if (cache.served() === undefined) await cache.checkDiscovery();
    // Waiting for the budget informer, which retries on the clock: not busy meanwhile (a virtual clock must move on).
    if (cache.served() !== false) await this.#clock.activity.waitFor(cache.waitForSync(signal));
  }

  // ---- the leader's loops ----

  /** Whether the API server evaluates webhook matchConditions (its /version; false when it cannot tell). */
  async #serverEvaluatesMatchConditions(client: KubeClient): Promise<boolean> {
    try {
      return supportsMatchConditions(await client.request<{ major?: string; minor?: string }>({ method: 'GET', path: '/version' }));
    } catch (err) {
      this.#log.warn({ err: describeError(err) }, 'cannot read the API server version; the pod DELETE webhook keeps no match condition');
      return false;
    }
  }

  /** Keeps the caBundle and the pod webhooks' namespaces of our configurations current (configuration-keeper.ts). */
  #newConfigurationKeeper(shared: Shared, watcher: Partial<Pick<WatcherOptions, 'metrics' | 'resyncMs'>>): Runnable {
    const caches = shared.caches;
    const budgets = shared.budgets.cache;
    let caBundle: string | undefined;
    const refreshCaBundle = async () => {
      caBundle = await this.#caBundle();
    };
    let matchConditions = false;
    const keeper = new ConfigurationKeeper({
      client: shared.client,
      clock: this.#clock,
      log: withFields(this.#log, { logger: 'webhook-configurations' }),
      mutatingName: MUTATING_CONFIGURATION_NAME,
      validatingName: VALIDATING_CONFIGURATION_NAME,
      managerNamespace: this.#o.namespace,
      scope: this.#scopeKind(),
      guardPodDeletion: shared.budgets.guardPodDeletion,
      get matchConditions() {
        return matchConditions;
      },
      workloadSpreadNamespaces: () => workloadSpreadNamespaces(caches),
      budgetNamespaces: () => budgetNamespaces(shared.budgets),
      caBundle: () => caBundle,
      subscribe: (changed) => {
        const onCa = () => void refreshCaBundle().then(changed);
        return [
          caches.workloadSpreads.onAdd(changed),
          caches.workloadSpreads.onDelete(changed),
          budgets.store.onAdd(changed),
          budgets.store.onDelete(changed),
          this.#certificates?.onChange(onCa) ?? (() => {}),
        ];
      },
      waitForSync: async (signal) => {
        await refreshCaBundle();
        await caches.waitForSync(signal);
        await this.#budgetsListed(shared, signal);
      },
      watcher,
    });
    let started = false;
    return {
      name: keeper.name,
      start: async (signal) => {
        await refreshCaBundle();
        matchConditions = await this.#serverEvaluatesMatchConditions(shared.client);
        // Nothing of ours to keep (cluster scope, caBundle injected by someone else): no watch, no access needed.
        if (this.#scopeKind() === 'cluster' && caBundle === undefined) return;
        started = true;
        await keeper.start(signal);
      },
      stop: async () => {
        if (started) await keeper.stop();
      },
    };
  }

  #newController(shared: Shared, workers: number): WorkloadSpreadController {
    return new WorkloadSpreadController({
      caches: shared.caches,
      resolver: shared.resolver,
      state: shared.state,
      statusWriter: shared.statusWriter,
      podWriter: new PodWriter(shared.client),
      events: shared.controllerEvents,
      clock: this.#clock,
      log: withFields(this.#log, { logger: 'controller' }),
      workers,
      metrics: this.#metrics.controller,
      ...(this.#o.unschedulableRecoverySeconds === undefined ? {} : { recoverySeconds: this.#o.unschedulableRecoverySeconds }),
    });
  }

  /** D18: moves pods of the WorkloadSpreads that ask for it, by eviction. */
  #newRebalancer(shared: Shared): Rebalancer {
    return new Rebalancer({
      caches: shared.caches,
      resolver: shared.resolver,
      statusWriter: shared.statusWriter,
      evictor: shared.client,
      events: shared.controllerEvents,
      clock: this.#clock,
      log: withFields(this.#log, { logger: 'controller', ...REBALANCER_LOG_FIELDS }),
      metrics: this.#metrics.rebalance,
    });
  }

  /** Runs the leader's loops until `signal` aborts (they drain what their workers hold). */
  async #runLeader(signal: AbortSignal): Promise<void> {
    this.#isLeading = true;
    try {
      await this.#runnables.lead(signal);
    } finally {
      this.#isLeading = false;
    }
  }

  #lead(): void {
    const settings = this.#o.leaderElection;
    const client = this.#client;
    if (client === undefined || this.#stopping) return;
    if (settings === false) {
      const abort = (this.#leadAbort = new AbortController());
      this.#leading = this.#runLeader(abort.signal).catch((err: unknown) => this.#log.error({ err: describeError(err) }, 'controller failed'));
      return;
    }
    const s = settings ?? {};
    const leaseName = s.leaseName ?? DEFAULT_LEASE_NAME;
    this.#metrics.leading(leaseName, false);
    this.#elector = new LeaderElector({
      client,
      namespace: this.#o.namespace,
      name: leaseName,
      identity: this.#identity,
      log: withFields(this.#log, { logger: 'leader-election' }),
      ...(s.leaseDurationMs === undefined ? {} : { leaseDurationMs: s.leaseDurationMs }),
      ...(s.renewDeadlineMs === undefined ? {} : { renewDeadlineMs: s.renewDeadlineMs }),
      ...(s.retryPeriodMs === undefined ? {} : { retryPeriodMs: s.retryPeriodMs }),
      ...(s.releaseOnStop === undefined ? {} : { releaseOnStop: s.releaseOnStop }),
      onStartedLeading: async (signal) => {
        this.#metrics.leading(leaseName, true);
        await this.#runLeader(signal);
      },
      onStoppedLeading: () => {
        this.#metrics.leading(leaseName, false);
        if (this.#stopping) return;
        this.#log.error({ namespace: this.#o.namespace, name: leaseName, identity: this.#identity }, 'leadership lost: the manager must exit');
        this.#done.resolve({ reason: 'lost-leadership' });
      },
    });
    this.#elector.start();
  }

  // ---- shutdown ----

  async #stop(): Promise<void> {
    const log = this.#log;
    this.#stopping = true;
    this.#isReady = false;
    this.#abortStart.abort(new StopRequested());
    await this.#started.catch(() => {});
    log.info({ identity: this.#identity }, 'manager stopping');
    // Leadership first: the loops drain, the lease goes to a successor.
    if (this.#elector !== undefined) {
      try {
        await this.#elector.stop();
      } catch (err) {
        log.error({ err: describeError(err) }, 'manager stop: leader election failed');
      }
    }
    this.#leadAbort?.abort();
    await this.#leading;
    await this.#runnables.stop();
    log.info({ identity: this.#identity }, 'manager stopped');
    this.#done.resolve({ reason: 'stopped' });
  }
}

/** Namespaces holding a WorkloadSpread (in the cache). */
function workloadSpreadNamespaces(caches: ManagerCaches): string[] {
  return [...new Set(caches.workloadSpreads.list().map((ws) => ws.metadata?.namespace ?? ''))];
}

/** Namespaces holding a DomainDisruptionBudget (in the cache; none when budgets are not served). */
function budgetNamespaces(budgets: ManagerBudgets): string[] {
  return [...new Set(budgets.cache.store.list().map((b) => b.metadata?.namespace ?? ''))];
}
