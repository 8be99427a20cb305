/**
 * `workloadspread manager`: the production process (admission webhooks on
 * every replica, the controller on the elected leader, metrics and probes),
 * with flags in the style of controller-runtime managers.
 *
 * Flags are parsed into `ManagerSettings` by `managerSettings()` (pure but
 * for reading the service account's namespace file): a bad value is a
 * `UsageError` (exit 2, one line). The process logs JSON lines (pino) on
 * stdout; SIGTERM or SIGINT stops it gracefully (exit 0, as a
 * controller-runtime manager; a second signal exits 1 at once); losing the
 * lease or failing to start exits 1, so the kubelet restarts the container.
 * Defaults: namespace from `--namespace`, else `$POD_NAMESPACE`, else the
 * service account's namespace file, else `workloadspread-system`; leader
 * election OFF unless `--leader-elect` (controller-runtime's default; the
 * Helm chart passes it), webhook configurations NOT registered unless
 * `--register-webhooks` (the chart ships them; `workloadspread cluster` and
 * local development pass it), `/metrics` plain HTTP unless `--metrics-secure`
 * (controller-runtime's default; then HTTPS behind TokenReview and
 * SubjectAccessReview, with CPU and heap profiles unless `--profiling=false`).
 * Start at `runManager`.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { isIP } from 'node:net';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { realClock, type Clock } from '../clock/clock.ts';
import { loadConnection, SERVICE_ACCOUNT_DIR } from '../client/config.ts';
import { describeError } from '../client/errors.ts';
import { withFields, type Logger } from '../client/logger.ts';
import { DEFAULT_CONFIGMAP_NAME } from '../api/keys.ts';
import { parseBindAddress, type BindAddress } from '../manager/endpoints.ts';
import { DEFAULT_LEASE_NAME, DEFAULT_WEBHOOK_PORT, DEFAULT_WEBHOOK_SERVICE, startManager, type Manager, type ManagerOptions } from '../manager/manager.ts';
import { DEFAULT_SECRET_NAME } from '../webhook/names.ts';
import { watchNamespacesScopeProblem, WEBHOOK_SCOPES, type WebhookScopeKind } from '../webhook/registration.ts';
import { DEFAULT_MANAGER_NAMESPACE, LOG_LEVELS, type LogLevel } from './defaults.ts';
import { CommandError, UsageError, type CliIo } from './io.ts';
import { stopOnSignals } from './signals.ts';
import { parseDuration } from '../k8s/duration.ts';
import { DEFAULT_BURST, DEFAULT_QPS } from '../client/rate-limit.ts';
import { DEFAULT_LEASE_TIMINGS, leaseTimingsProblem } from './lease-timings.ts';

export { DEFAULT_MANAGER_NAMESPACE, LOG_LEVELS, type LogLevel } from './defaults.ts';

/** The flags as commander hands them over (strings, booleans). */
export interface ManagerFlags {
  kubeconfig?: string;
  namespace?: string;
  webhookPort?: string;
  webhookHost?: string;
  webhookUrl?: string;
  webhookService?: string;
  webhookScope?: string;
  certDir?: string;
  certSecret?: string;
  clientCaFile?: string;
  clientCertAllowedNames?: string;
  registerWebhooks?: boolean | string;
  metricsAddr?: string;
  metricsSecure?: boolean | string;
  metricsCertDir?: string;
  profiling?: boolean | string;
  healthAddr?: string;
  leaderElect?: boolean | string;
  leaderElectionId?: string;
  leaderElectLeaseDuration?: string;
  leaderElectRenewDeadline?: string;
  leaderElectRetryPeriod?: string;
  kubeApiQps?: string;
  kubeApiBurst?: string;
  watchNamespaces?: string;
  workers?: string;
  unschedulableRecoverySeconds?: string;
  whitelistConfigmap?: string;
  guardPodDeletion?: boolean | string;
  allowPrivilegedSubsetPatches?: boolean | string;
  logLevel?: string;
}

/** What the flags mean, checked. */
export interface ManagerSettings {
  kubeconfig?: string;
  namespace: string;
  webhookPort: number;
  /** Listen address of the webhook server (default every interface). */
  webhookHost: string;
  webhookUrl?: string;
  webhookService: string;
  /** Which namespaces' pods reach the pod webhooks. */
  webhookScope: WebhookScopeKind;
  certDir?: string;
  /** The Secret (in `namespace`) holding generated certificates. */
  certSecret: string;
  /** Client-certificate authentication of the API server. */
  clientCaFile?: string;
  clientCertAllowedNames: string[];
  registerWebhooks: boolean;
  metricsAddress: BindAddress | undefined;
  /** `/metrics` over HTTPS to callers the API server authenticates and authorizes. */
  metricsSecure: boolean;
  metricsCertDir?: string;
  /** CPU and heap profiles on the secure metrics endpoint. */
  profiling: boolean;
  healthAddress: BindAddress | undefined;
  leaderElect: boolean;
  leaderElectionId: string;
  /** Lease timings, ms (client-go's LeaseDuration, RenewDeadline, RetryPeriod). */
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** Client-side rate limit of API requests (qps ≤ 0: none). */
  kubeApiQps: number;
  kubeApiBurst: number;
  /** Namespaces cached and acted on (undefined: all). */
  watchNamespaces?: string[];
  workers: number;
  unschedulableRecoverySeconds: number;
  whitelistConfigMap: string;
  /** DomainDisruptionBudgets are checked on pod DELETE too (D14). */
  guardPodDeletion: boolean;
  /** Subset patches may set privilege-bearing pod fields (D20). */
  allowPrivilegedSubsetPatches: boolean;
  logLevel: LogLevel;
}

function integer(text: string | undefined, flag: string, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  const n = /^[0-9]+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!(n >= min && n <= max)) throw new UsageError(`${flag} must be an integer from ${min} to ${max}, got ${JSON.stringify(text)}`);
  return n;
}

function bool(value: boolean | string | undefined, flag: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value === 'boolean') return value;
  if (/^(true|1)$/i.test(value)) return true;
  if (/^(false|0)$/i.test(value)) return false;
  throw new UsageError(`${flag} must be true or false, got ${JSON.stringify(value)}`);
}

function address(text: string | undefined, flag: string, fallback: string): BindAddress | undefined {
  const parsed = parseBindAddress(text ?? fallback, flag);
  if (!parsed.ok) throw new UsageError(parsed.error);
  return parsed.address;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** A listen address: an IPv4 or IPv6 literal, or a host name (default every interface). */
function listenHost(text: string | undefined, flag: string): string {
  if (text === undefined || text.trim() === '') return '0.0.0.0';
  const value = text.trim().replace(/^\[(.*)\]$/, '$1');
  if (isIP(value) !== 0 || DNS_SUBDOMAIN.test(value)) return value;
  throw new UsageError(`${flag} must be an IP address or a host name to listen on (e.g. 0.0.0.0, 127.0.0.1, ::), got ${JSON.stringify(text)}`);
}

/** A comma-separated list of certificate names (empty entries dropped). */
function nameList(text: string | undefined, flag: string): string[] {
  if (text === undefined) return [];
  const names = text.split(',').map((n) => n.trim()).filter((n) => n !== '');
  for (const n of names) if (/[\s"]/.test(n)) throw new UsageError(`${flag}: ${JSON.stringify(n)} is not a certificate name`);
  return names;
}

function scope(text: string | undefined): WebhookScopeKind {
  if (text === undefined) return 'namespaces';
  if ((WEBHOOK_SCOPES as readonly string[]).includes(text)) return text as WebhookScopeKind;
  throw new UsageError(`--webhook-scope must be one of ${WEBHOOK_SCOPES.join(', ')}, got ${JSON.stringify(text)}`);
}

/** A Go duration (`15s`, `1m30s`) of at least 1 ms. */
function duration(text: string, flag: string): number {
  const parsed = parseDuration(text);
  if (!parsed.ok) throw new UsageError(`${flag} ${parsed.error}`);
  if (parsed.ms < 1) throw new UsageError(`${flag} must be longer than 0, got ${JSON.stringify(text)}`);
  return parsed.ms;
}

/** Requests per second: a number; 0 or less turns the limiter off. */
function qps(text: string | undefined): number {
  if (text === undefined) return DEFAULT_QPS;
  const n = Number(text.trim());
  if (text.trim() === '' || !Number.isFinite(n)) throw new UsageError(`--kube-api-qps must be a number of requests per second (0 or less: no limit), got ${JSON.stringify(text)}`);
  return n;
}

function name(text: string, flag: string, pattern: RegExp): string {
  if (!pattern.test(text)) throw new UsageError(`${flag}: ${JSON.stringify(text)} is not a valid Kubernetes name`);
  return text;
}

/** The manager's namespace: the flag, `$POD_NAMESPACE`, the service account's file, or the default. */
export function managerNamespace(flag: string | undefined, io: CliIo, serviceAccountDir = SERVICE_ACCOUNT_DIR): string {
  if (flag !== undefined) return name(flag, '--namespace', DNS_LABEL);
  const fromEnv = io.env['POD_NAMESPACE'];
  if (fromEnv !== undefined && fromEnv !== '') return name(fromEnv, '$POD_NAMESPACE', DNS_LABEL);
  try {
    const fromFile = readFileSync(`${serviceAccountDir}/namespace`, 'utf8').trim();
    if (fromFile !== '') return fromFile;
  } catch {
    // Not in a cluster: the default below.
  }
  return DEFAULT_MANAGER_NAMESPACE;
}

/** Checks every flag; throws `UsageError` (exit 2) on the first bad one. */
export function managerSettings(flags: ManagerFlags, io: CliIo, serviceAccountDir?: string): ManagerSettings {
  const logLevel = flags.logLevel ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(logLevel)}`);
  let webhookUrl: string | undefined;
  if (flags.webhookUrl !== undefined) {
    let url: URL;
    try {
      url = new URL(flags.webhookUrl);
    } catch {
      throw new UsageError(`--webhook-url must be an https:// URL, got ${JSON.stringify(flags.webhookUrl)}`);
    }
    // The API server only calls webhooks over HTTPS, and appends the paths itself.
    if (url.protocol !== 'https:' || url.search !== '' || url.hash !== '' || url.username !== '') throw new UsageError(`--webhook-url must be an https:// URL without query, fragment or credentials, got ${JSON.stringify(flags.webhookUrl)}`);
    webhookUrl = flags.webhookUrl.replace(/\/+$/, '');
  }
  const settings: ManagerSettings = {
    namespace: managerNamespace(flags.namespace, io, serviceAccountDir),
    webhookPort: integer(flags.webhookPort, '--webhook-port', DEFAULT_WEBHOOK_PORT, 1, 65535),
    webhookHost: listenHost(flags.webhookHost, '--webhook-host'),
    clientCertAllowedNames: nameList(flags.clientCertAllowedNames, '--client-cert-allowed-names'),
    webhookService: name(flags.webhookService ?? DEFAULT_WEBHOOK_SERVICE, '--webhook-service', DNS_LABEL),
    webhookScope: scope(flags.webhookScope),
    certSecret: name(flags.certSecret ?? DEFAULT_SECRET_NAME, '--cert-secret', DNS_SUBDOMAIN),
    registerWebhooks: bool(flags.registerWebhooks, '--register-webhooks', false),
    metricsAddress: address(flags.metricsAddr, '--metrics-addr', ':8080'),
    metricsSecure: bool(flags.metricsSecure, '--metrics-secure', false),
    profiling: bool(flags.profiling, '--profiling', true),
    healthAddress: address(flags.healthAddr, '--health-addr', ':8081'),
    leaderElect: bool(flags.leaderElect, '--leader-elect', false),
    leaderElectionId: name(flags.leaderElectionId ?? DEFAULT_LEASE_NAME, '--leader-election-id', DNS_SUBDOMAIN),
    leaseDurationMs: duration(flags.leaderElectLeaseDuration ?? DEFAULT_LEASE_TIMINGS.leaseDuration, '--leader-elect-lease-duration'),
    renewDeadlineMs: duration(flags.leaderElectRenewDeadline ?? DEFAULT_LEASE_TIMINGS.renewDeadline, '--leader-elect-renew-deadline'),
    retryPeriodMs: duration(flags.leaderElectRetryPeriod ?? DEFAULT_LEASE_TIMINGS.retryPeriod, '--leader-elect-retry-period'),
    kubeApiQps: qps(flags.kubeApiQps),
    kubeApiBurst: integer(flags.kubeApiBurst, '--kube-api-burst', DEFAULT_BURST, 1, 100_000),
    workers: integer(flags.workers, '--workers', 3, 1, 1000),
    // D10: the window bounds rescheduleCriticalSeconds through (window - 5) / (n - 1), so it must exceed 5 s.
    unschedulableRecoverySeconds: integer(flags.unschedulableRecoverySeconds, '--unschedulable-recovery-seconds', 300, 6, 86_400),
    whitelistConfigMap: name(flags.whitelistConfigmap ?? DEFAULT_CONFIGMAP_NAME, '--whitelist-configmap', DNS_SUBDOMAIN),
    guardPodDeletion: bool(flags.guardPodDeletion, '--guard-pod-deletion', false),
    allowPrivilegedSubsetPatches: bool(flags.allowPrivilegedSubsetPatches, '--allow-privileged-subset-patches', false),
    logLevel: logLevel as LogLevel,
  };
  if (flags.kubeconfig !== undefined && flags.kubeconfig !== '') settings.kubeconfig = flags.kubeconfig;
  if (webhookUrl !== undefined) settings.webhookUrl = webhookUrl;
  if (flags.certDir !== undefined && flags.certDir !== '') settings.certDir = flags.certDir;
  if (flags.clientCaFile !== undefined && flags.clientCaFile !== '') settings.clientCaFile = flags.clientCaFile;
  if (settings.clientCertAllowedNames.length > 0 && settings.clientCaFile === undefined) throw new UsageError('--client-cert-allowed-names needs --client-ca-file');
  if (flags.watchNamespaces !== undefined) {
    const list = flags.watchNamespaces.split(',').map((n) => n.trim()).filter((n) => n !== '');
    if (list.length === 0) throw new UsageError('--watch-namespaces must name at least one namespace (leave it out for all)');
    for (const n of list) name(n, '--watch-namespaces', DNS_LABEL);
    if (settings.webhookScope === 'cluster') throw new UsageError(watchNamespacesScopeProblem('--watch-namespaces', '--webhook-scope=namespaces'));
    settings.watchNamespaces = [...new Set(list)];
  }
  const leaseProblem = leaseTimingsProblem(
    { leaseDuration: settings.leaseDurationMs, renewDeadline: settings.renewDeadlineMs, retryPeriod: settings.retryPeriodMs },
    { leaseDuration: '--leader-elect-lease-duration', renewDeadline: '--leader-elect-renew-deadline', retryPeriod: '--leader-elect-retry-period' },
    { leaseDuration: flags.leaderElectLeaseDuration ?? DEFAULT_LEASE_TIMINGS.leaseDuration, renewDeadline: flags.leaderElectRenewDeadline ?? DEFAULT_LEASE_TIMINGS.renewDeadline, retryPeriod: flags.leaderElectRetryPeriod ?? DEFAULT_LEASE_TIMINGS.retryPeriod },
  );
  if (leaseProblem !== undefined) throw new UsageError(leaseProblem);
  if (flags.metricsCertDir !== undefined && flags.metricsCertDir !== '') {
    if (!settings.metricsSecure) throw new UsageError('--metrics-cert-dir needs --metrics-secure');
    settings.metricsCertDir = flags.metricsCertDir;
  }
  if (settings.metricsSecure && settings.metricsAddress === undefined) throw new UsageError('--metrics-secure needs a metrics endpoint, but --metrics-addr is 0 (off)');
  // Profiles are never served without authentication: asked for explicitly, they need the secure endpoint.
  if (flags.profiling !== undefined && settings.profiling && !settings.metricsSecure) throw new UsageError('--profiling needs --metrics-secure (profiles are only served to callers the API server authenticates and authorizes)');
  return settings;
}

/** The manager's options for these settings (connection and logger added by the caller). */
export function managerOptions(s: ManagerSettings): Omit<ManagerOptions, 'connection' | 'client' | 'log'> {
  return {
    namespace: s.namespace,
    identity: `${hostname()}_${randomUUID()}`,
    webhook: {
      port: s.webhookPort,
      host: s.webhookHost,
      serviceName: s.webhookService,
      register: s.registerWebhooks,
      scope: s.webhookScope,
      secretName: s.certSecret,
      ...(s.webhookUrl === undefined ? {} : { url: s.webhookUrl }),
      ...(s.certDir === undefined ? {} : { certDir: s.certDir }),
      ...(s.clientCaFile === undefined ? {} : { clientCaFile: s.clientCaFile, clientCertAllowedNames: s.clientCertAllowedNames }),
    },
    ...(s.metricsAddress === undefined ? {} : { metricsAddress: s.metricsAddress }),
    ...(s.metricsSecure ? { secureMetrics: { profiling: s.profiling, ...(s.metricsCertDir === undefined ? {} : { certDir: s.metricsCertDir }) } } : {}),
    ...(s.healthAddress === undefined ? {} : { healthAddress: s.healthAddress }),
    leaderElection: s.leaderElect ? { leaseName: s.leaderElectionId, leaseDurationMs: s.leaseDurationMs, renewDeadlineMs: s.renewDeadlineMs, retryPeriodMs: s.retryPeriodMs } : false,
    kubeApi: { qps: s.kubeApiQps, burst: s.kubeApiBurst },
    ...(s.watchNamespaces === undefined ? {} : { watchNamespaces: s.watchNamespaces }),
    workers: s.workers,
    unschedulableRecoverySeconds: s.unschedulableRecoverySeconds,
    whitelistConfigMap: s.whitelistConfigMap,
    budgets: { guardPodDeletion: s.guardPodDeletion },
    allowPrivilegedSubsetPatches: s.allowPrivilegedSubsetPatches,
  };
}

/** Keys pino writes itself; a field of the same name is renamed (`msg_`) so no key repeats in a line. */
const PINO_KEYS = new Set(['level', 'time', 'msg']);

function withoutPinoKeys(fields: Record<string, unknown>): Record<string, unknown> {
  if (!Object.keys(fields).some((k) => PINO_KEYS.has(k))) return fields;
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [PINO_KEYS.has(k) ? `${k}_` : k, v]));
}

/**
 * JSON lines (pino) at `level`, each handed to `write`:
 * `{"level":"info","time":"<RFC 3339>","logger":"controller",…,"msg":"…"}` —
 * the level as text, every key once (the keys: src/client/logger.ts).
 */
export function jsonLogger(write: (line: string) => void, level: LogLevel): Logger {
  return pino(
    {
      level,
      base: null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }), log: withoutPinoKeys },
    },
    { write },
  );
}

export interface ManagerCommandHooks {
  /** Resolves with the signal's name when the process should stop (default SIGTERM or SIGINT). */
  waitForStop?: () => Promise<string>;
  /** Called once the manager is started (tests). */
  onStarted?: (manager: Manager) => void;
  serviceAccountDir?: string;
  /** Default the real clock (tests run the manager on a cluster's virtual clock). */
  clock?: Clock;
}

export async function runManager(flags: ManagerFlags, io: CliIo, hooks: ManagerCommandHooks = {}): Promise<number> {
  const settings = managerSettings(flags, io, hooks.serviceAccountDir);
  const loaded = await loadConnection({ ...(settings.kubeconfig === undefined ? {} : { kubeconfig: settings.kubeconfig }), env: io.env });
  if (!loaded.ok) throw new CommandError(`${loaded.error.source}: ${loaded.error.message}`);
  const connection = loaded.connection;
  const log = withFields(jsonLogger((line) => io.out(line), settings.logLevel), { logger: 'manager' });
  // A second signal while stopping exits 1 at once, as controller-runtime's signal handler does.
  const stopSignals = hooks.waitForStop === undefined ? stopOnSignals(io, { forcedExitCode: 1 }) : undefined;
  const signals = { promise: hooks.waitForStop?.() ?? (stopSignals as { received: Promise<string> }).received, dispose: () => stopSignals?.dispose() };
  const manager = startManager({ connection, clock: hooks.clock ?? realClock(), log, ...managerOptions(settings) });
  hooks.onStarted?.(manager);
  try {
    const outcome = await Promise.race([signals.promise.then((signal) => ({ signal })), manager.done.then((done) => ({ done }))]);
    if ('signal' in outcome) {
      log.info({ signal: outcome.signal }, 'signal received, shutting down');
      await manager.stop();
      return 0;
    }
    await manager.stop();
    if (outcome.done.reason === 'failed') throw new CommandError(`the manager could not start: ${outcome.done.error ?? 'unknown error'}`);
    if (outcome.done.reason === 'lost-leadership') {
      io.err(`error: leadership of the lease ${settings.namespace}/${settings.leaderElectionId} was lost; exiting so a fresh process takes part in the election\n`);
      return 1;
    }
    return 0;
  } catch (err) {
    if (err instanceof CommandError) throw err;
    throw new CommandError(describeError(err));
  } finally {
    signals.dispose();
    connection.close();
  }
}
