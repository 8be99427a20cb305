/**
 * Where the API server is and how to authenticate: a `Connection` (server
 * URL, one keep-alive `https.Agent` carrying CA and client certificates, the
 * auth headers, the default namespace), built with `@kubernetes/client-node`'s
 * `KubeConfig` so every kubeconfig feature it knows (CA/cert files and data,
 * bearer tokens, token files, exec plugins, impersonation, basic auth) works
 * the same as with kubectl.
 *
 * Lookup order of `loadConnection` (as kubectl and client-node): the explicit
 * `--kubeconfig` path, then `$KUBECONFIG` (a path list, later files merged
 * into the first), then `~/.kube/config`, then the in-cluster service account.
 * Unlike client-node we never fall back to `http://localhost:8080`: finding no
 * configuration is an error that says what was tried.
 *
 * A plain `http://` server needs `insecure-skip-tls-verify: true`, as
 * client-node 1.x demands. Proxies (`proxy-url`) are not supported.
 *
 * Errors are data (`ConfigResult`) and name the file and the problem.
 * Credentials that change (exec plugins, projected token files) are re-read
 * per request through client-node's authenticators, which cache them; static
 * ones are computed once. TLS material is read once: a client certificate
 * rotated by an exec plugin needs a new Connection.
 */
import { existsSync } from 'node:fs';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent, type RequestOptions } from 'node:https';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';

/**
 * client-node is loaded on first use: it takes seconds to load, and most
 * commands (validate, plan, manifests, demo, simulate) never read a kubeconfig.
 */
async function newKubeConfig(): Promise<KubeConfig> {
  const { KubeConfig: Config } = await import('@kubernetes/client-node');
  return new Config();
}

export interface Connection {
  /** Base URL without a trailing slash, e.g. `https://127.0.0.1:6443`. */
  readonly server: string;
  readonly agent: HttpsAgent | HttpAgent;
  /** The context's namespace, the service account's, or `default`. */
  readonly namespace: string;
  /** Where the settings came from (a file path, `in-cluster`, `inline`), for messages. */
  readonly source: string;
  /** Authorization (and impersonation) headers for the next request. */
  headers(): Promise<Record<string, string>>;
  /** Destroys the agent and its sockets: call it once every user of the connection has stopped. */
  close(): void;
}

export interface ConfigError {
  /** The file (or `in-cluster`, `inline`, `environment`) the problem is in. */
  source: string;
  message: string;
}

export type ConfigResult = { ok: true; connection: Connection } | { ok: false; error: ConfigError };

export interface AgentSettings {
  /** Sockets per host; each open watch holds one for its lifetime (default 64). */
  maxSockets?: number;
  /** Idle keep-alive sockets kept per host (default 16). */
  maxFreeSockets?: number;
}

export interface LoadOptions extends AgentSettings {
  /** An explicit kubeconfig path (`--kubeconfig`); wins over everything else. */
  kubeconfig?: string;
  /** A context other than the file's current-context. */
  context?: string;
  /** Environment to read `KUBECONFIG` and `KUBERNETES_SERVICE_*` from (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Home directory for `~/.kube/config` (default `os.homedir()`). */
  homeDir?: string;
  /** Prefix of the service account directory (tests): `<prefix>/var/run/secrets/kubernetes.io/serviceaccount`. */
  serviceAccountPrefix?: string;
}

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

const fail = (source: string, message: string): ConfigResult => ({ ok: false, error: { source, message } });

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Finds and loads the connection settings (see the module comment for the order). */
export async function loadConnection(options: LoadOptions = {}): Promise<ConfigResult> {
  const env = options.env ?? process.env;
  if (options.kubeconfig !== undefined && options.kubeconfig !== '') return connectionFromFiles([options.kubeconfig], options);
  const fromEnv = (env['KUBECONFIG'] ?? '').split(delimiter).filter((p) => p !== '');
  if (fromEnv.length > 0) return connectionFromFiles(fromEnv, options);
  const home = options.homeDir ?? homedir();
  const defaultFile = join(home, '.kube', 'config');
  if (home !== '' && existsSync(defaultFile)) return connectionFromFiles([defaultFile], options);
  const prefix = options.serviceAccountPrefix ?? '';
  if (existsSync(`${prefix}${SERVICE_ACCOUNT_DIR}/token`)) return connectionFromCluster(options);
  return fail('environment', `no kubeconfig found: --kubeconfig not given, $KUBECONFIG not set, ${defaultFile} does not exist, and not running in a cluster (${prefix}${SERVICE_ACCOUNT_DIR}/token is missing)`);
}

/** Loads one kubeconfig file, merging further files into it as `$KUBECONFIG` lists them. */
export async function connectionFromFiles(files: string[], options: LoadOptions = {}): Promise<ConfigResult> {
  const [first, ...rest] = files;
  if (first === undefined) return fail('environment', 'no kubeconfig file given');
  const kc = await newKubeConfig();
  for (const file of [first, ...rest]) {
    if (!existsSync(file)) return fail(file, 'the kubeconfig file does not exist');
    try {
      if (file === first) kc.loadFromFile(file);
      else {
        const more = await newKubeConfig();
        more.loadFromFile(file);
        kc.mergeConfig(more, true);
      }
    } catch (err) {
      return fail(file, `cannot read the kubeconfig: ${messageOf(err)}`);
    }
  }
  return connectionFromKubeConfig(kc, files.join(delimiter), options);
}

/** Settings from kubeconfig YAML text (the embedded cluster hands its kubeconfig this way). */
export async function connectionFromKubeconfigText(yaml: string, options: AgentSettings & { context?: string; source?: string } = {}): Promise<ConfigResult> {
  const source = options.source ?? 'inline';
  const kc = await newKubeConfig();
  try {
    kc.loadFromString(yaml);
  } catch (err) {
    return fail(source, `cannot read the kubeconfig: ${messageOf(err)}`);
  }
  return connectionFromKubeConfig(kc, source, options);
}

/** The in-cluster service account: `KUBERNETES_SERVICE_HOST`/`_PORT`, token file, CA, namespace file. */
export async function connectionFromCluster(options: LoadOptions = {}): Promise<ConfigResult> {
  const env = options.env ?? process.env;
  const prefix = options.serviceAccountPrefix ?? '';
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  if (host === undefined || host === '' || port === undefined || port === '') {
    return fail('in-cluster', 'KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set to use the service account');
  }
  for (const file of ['token', 'ca.crt']) {
    if (!existsSync(`${prefix}${SERVICE_ACCOUNT_DIR}/${file}`)) return fail(`${prefix}${SERVICE_ACCOUNT_DIR}/${file}`, 'the service account file does not exist');
  }
  const kc = await newKubeConfig();
  // client-node reads the service host from process.env; hand it ours for the duration of the call.
  const saved = { host: process.env['KUBERNETES_SERVICE_HOST'], port: process.env['KUBERNETES_SERVICE_PORT'] };
  process.env['KUBERNETES_SERVICE_HOST'] = host;
  process.env['KUBERNETES_SERVICE_PORT'] = port;
  try {
    kc.loadFromCluster(prefix);
  } catch (err) {
    return fail('in-cluster', messageOf(err));
  } finally {
    restoreEnv('KUBERNETES_SERVICE_HOST', saved.host);
    restoreEnv('KUBERNETES_SERVICE_PORT', saved.port);
  }
  return connectionFromKubeConfig(kc, 'in-cluster', options);
}

function restoreEnv(key: string, value: string | undefined): void {
  if (value === undefined) delete process.env[key];
  else process.env[key] = value;
}

function headersFrom(opts: RequestOptions): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(opts.headers ?? {})) {
    if (typeof value === 'string') out[key] = value;
    else if (typeof value === 'number') out[key] = String(value);
    else if (Array.isArray(value)) out[key] = value.join(', ');
  }
  if (typeof opts.auth === 'string' && opts.auth !== '') out['Authorization'] = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
  return out;
}

/** A Connection from an already loaded `KubeConfig`. */
export async function connectionFromKubeConfig(kc: KubeConfig, source: string, options: AgentSettings & { context?: string } = {}): Promise<ConfigResult> {
  if (options.context !== undefined && options.context !== '') {
    if (kc.getContextObject(options.context) === null) return fail(source, `context ${JSON.stringify(options.context)} is not in the kubeconfig`);
    kc.setCurrentContext(options.context);
  }
  const contextName = kc.getCurrentContext();
  if (contextName === undefined || contextName === null || contextName === '') return fail(source, 'the kubeconfig has no current-context');
  const context = kc.getContextObject(contextName);
  if (context === null) return fail(source, `the current context ${JSON.stringify(contextName)} is not defined`);
  const cluster = kc.getCurrentCluster();
  if (cluster === null) return fail(source, `context ${JSON.stringify(contextName)} names cluster ${JSON.stringify(context.cluster)}, which is not defined`);
  const user = kc.getCurrentUser();
  if (user === null) return fail(source, `context ${JSON.stringify(contextName)} names user ${JSON.stringify(context.user)}, which is not defined`);
  let url: URL;
  try {
    url = new URL(cluster.server);
  } catch {
    return fail(source, `cluster ${JSON.stringify(cluster.name)} has an invalid server URL ${JSON.stringify(cluster.server)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return fail(source, `cluster ${JSON.stringify(cluster.name)}: unsupported server scheme ${url.protocol}`);

  const first: RequestOptions = {};
  try {
    await kc.applyToHTTPSOptions(first);
  } catch (err) {
    return fail(source, `cannot prepare credentials of user ${JSON.stringify(user.name)}: ${messageOf(err)}`);
  }
  const agent = newAgent(url, first, options);
  // Exec plugins and token files produce credentials that expire: ask client-node each time (it caches).
  const dynamic = user.exec !== undefined || user.authProvider !== undefined;
  const fixed = headersFrom(first);
  const headers = dynamic
    ? async () => {
        const opts: RequestOptions = {};
        await kc.applyToHTTPSOptions(opts);
        return headersFrom(opts);
      }
    : async () => fixed;
  const namespace = context.namespace !== undefined && context.namespace.trim() !== '' ? context.namespace.trim() : 'default';
  return {
    ok: true,
    connection: {
      server: cluster.server.replace(/\/+$/, ''),
      agent,
      namespace,
      source,
      headers,
      close: () => agent.destroy(),
    },
  };
}

function newAgent(url: URL, tlsFrom: RequestOptions, settings: AgentSettings): HttpsAgent | HttpAgent {
  // `timeout` only closes FREE sockets (Node's agent destroys a free socket on timeout): keep them for 30 s,
  // less than servers keep idle connections (kube-apiserver and ours: 60+ s), so a reused socket is never
  // one the server is closing at that moment.
  const agentOptions = { keepAlive: true, timeout: 30_000, maxSockets: settings.maxSockets ?? 64, maxFreeSockets: settings.maxFreeSockets ?? 16 };
  if (url.protocol === 'http:') return new HttpAgent(agentOptions);
  const tls: Record<string, unknown> = { ...agentOptions };
  for (const key of ['ca', 'cert', 'key', 'pfx', 'passphrase', 'servername', 'rejectUnauthorized'] as const) {
    if (tlsFrom[key] !== undefined) tls[key] = tlsFrom[key];
  }
  return new HttpsAgent(tls);
}

/**
 * A Connection from what a kubeconfig with a CA and a bearer token would say,
 * without reading one (the embedded cluster's own components: no client-node
 * to load).
 */
export function connectionFromToken(settings: AgentSettings & { server: string; caPem: string; token: string; namespace?: string; source: string }): ConfigResult {
  let url: URL;
  try {
    url = new URL(settings.server);
  } catch {
    return fail(settings.source, `invalid server URL ${JSON.stringify(settings.server)}`);
  }
  if (url.protocol !== 'https:') return fail(settings.source, `unsupported server scheme ${url.protocol}`);
  const agent = newAgent(url, { ca: settings.caPem }, settings);
  const headers = { Authorization: `Bearer ${settings.token}` };
  return {
    ok: true,
    connection: {
      server: settings.server.replace(/\/+$/, ''),
      agent,
      namespace: settings.namespace ?? 'default',
      source: settings.source,
      headers: async () => headers,
      close: () => agent.destroy(),
    },
  };
}
