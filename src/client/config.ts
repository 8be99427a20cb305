/**
 * Where the API server is and how to authenticate: a `Connection` (server
 * URL, one keep-alive `https.Agent` carrying CA and client certificates, the
 * auth and impersonation headers, the default namespace), read from a
 * kubeconfig the way kubectl reads it (kubeconfig.ts), without a client
 * library: CA and client certificates from files or data, bearer tokens,
 * token files (re-read every minute, as client-go does for projected
 * tokens), exec credential plugins (exec-credential.ts), basic auth,
 * impersonation (`as`, `as-groups`, `as-uid`, `as-user-extra`), and
 * kubectl's command-line overrides (`ConnectionOverrides`: `--server`,
 * `--token`, `--as`, `--insecure-skip-tls-verify`, ...). Only the legacy
 * `auth-provider` entries (oidc, azure, gcp) load `@kubernetes/client-node`,
 * for those users alone: the rest starts in milliseconds.
 *
 * Lookup order of `loadConnection` (as kubectl): the explicit `--kubeconfig`
 * path, then `$KUBECONFIG` (a path list; files that do not exist are skipped,
 * the first to define a name wins), then `~/.kube/config`, then the
 * in-cluster service account, then `--server` alone. Unlike client-go we
 * never fall back to `http://localhost:8080`: finding no configuration is an
 * error that says what was tried.
 *
 * As in client-go, credentials are sent over TLS only: a plain `http://`
 * server gets the impersonation headers but no token, certificate or
 * password. Proxies (`proxy-url`) are refused with an error naming the
 * cluster.
 *
 * Errors are data (`ConfigResult`) and name the file and the problem. An
 * exec plugin runs when the connection is made (its client certificate, if
 * it gives one, goes into the agent) and again whenever its token has
 * expired; a client certificate that an exec plugin rotates needs a new
 * Connection.
 */
import { existsSync, readFileSync } from 'node:fs';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent, type RequestOptions } from 'node:https';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { realClock, type Clock } from '../clock/clock.ts';
import { runExecPlugin, type ExecCredential } from './exec-credential.ts';
import {
  emptyUser,
  impersonationProblem,
  mergeKubeconfigs,
  overrideCluster,
  overrideUser,
  readKubeconfig,
  selectSettings,
  type ClusterEntry,
  type ConnectionOverrides,
  type Kubeconfig,
  type Settings,
  type UserEntry,
} from './kubeconfig.ts';

export type { ConnectionOverrides, Kubeconfig } from './kubeconfig.ts';

/** Header values: a list sends the header once per value (`Impersonate-Group`). */
export type HeaderValues = Record<string, string | string[]>;

export interface Connection {
  /** Base URL without a trailing slash, e.g. `https://127.0.0.1:6443`. */
  readonly server: string;
  readonly agent: HttpsAgent | HttpAgent;
  /** `-n`, the context's namespace, the service account's, or `default`. */
  readonly namespace: string;
  /** Where the settings came from (a file path, `in-cluster`, `inline`, `flags`), for messages. */
  readonly source: string;
  /** Authorization (and impersonation) headers for the next request. */
  headers(): Promise<HeaderValues>;
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

export interface ConnectOptions extends AgentSettings {
  /** A context other than the file's current-context (`--context`; same as `overrides.context`). */
  context?: string;
  /** kubectl's command-line overrides. */
  overrides?: ConnectionOverrides;
  /** For token files and exec credential expiry (default: the real clock). */
  clock?: Clock;
  /** Environment handed to exec plugins (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Whether stdin is a terminal, for interactive exec plugins (default `process.stdin.isTTY`). */
  stdinIsTTY?: boolean;
}

export interface LoadOptions extends ConnectOptions {
  /** An explicit kubeconfig path (`--kubeconfig`); wins over everything else. */
  kubeconfig?: string;
  /** Environment to read `KUBECONFIG` and `KUBERNETES_SERVICE_*` from (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Home directory for `~/.kube/config` (default `os.homedir()`). */
  homeDir?: string;
  /** Prefix of the service account directory (tests): `<prefix>/var/run/secrets/kubernetes.io/serviceaccount`. */
  serviceAccountPrefix?: string;
}

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** How long a token file's content is used before it is read again (client-go: one minute). */
const TOKEN_FILE_REFRESH_MS = 60_000;

const fail = (source: string, message: string): ConfigResult => ({ ok: false, error: { source, message } });

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function overridesOf(options: ConnectOptions): ConnectionOverrides {
  const o = { ...(options.overrides ?? {}) };
  if (options.context !== undefined && options.context !== '') o.context = options.context;
  return o;
}

/** Where the settings come from, in kubectl's order (see the module comment). */
type Found = { kind: 'files'; files: string[] } | { kind: 'in-cluster' } | { kind: 'flags' } | { kind: 'none'; error: ConfigError };

function findSettings(options: LoadOptions): Found {
  const env = options.env ?? process.env;
  if (options.kubeconfig !== undefined && options.kubeconfig !== '') {
    if (!existsSync(options.kubeconfig)) return { kind: 'none', error: { source: options.kubeconfig, message: 'the kubeconfig file does not exist' } };
    return { kind: 'files', files: [options.kubeconfig] };
  }
  const fromEnv = (env['KUBECONFIG'] ?? '').split(delimiter).filter((p) => p !== '');
  const existing = fromEnv.filter((p) => existsSync(p));
  if (existing.length > 0) return { kind: 'files', files: existing };
  const home = options.homeDir ?? homedir();
  const defaultFile = join(home, '.kube', 'config');
  if (fromEnv.length === 0 && home !== '' && existsSync(defaultFile)) return { kind: 'files', files: [defaultFile] };
  const prefix = options.serviceAccountPrefix ?? '';
  if (existsSync(`${prefix}${SERVICE_ACCOUNT_DIR}/token`)) return { kind: 'in-cluster' };
  const overrides = overridesOf(options);
  if (overrides.server !== undefined && overrides.server !== '') return { kind: 'flags' };
  const tried = fromEnv.length > 0 ? `$KUBECONFIG names no existing file (${fromEnv.join(delimiter)})` : `--kubeconfig not given, $KUBECONFIG not set, ${defaultFile} does not exist`;
  return { kind: 'none', error: { source: 'environment', message: `no kubeconfig found: ${tried}, not running in a cluster (${prefix}${SERVICE_ACCOUNT_DIR}/token is missing), and no --server given` } };
}

/** Finds and loads the connection settings (see the module comment for the order). */
export async function loadConnection(options: LoadOptions = {}): Promise<ConfigResult> {
  const found = findSettings(options);
  if (found.kind === 'none') return { ok: false, error: found.error };
  if (found.kind === 'files') return connectionFromFiles(found.files, options);
  if (found.kind === 'in-cluster') return connectionFromCluster(options);
  return connectionFromKubeconfig({ clusters: new Map(), users: new Map(), contexts: new Map() }, 'flags', options);
}

/** The kubeconfig kubectl would read (merged), without connecting: for completing context, cluster and user names. */
export async function loadKubeconfig(options: LoadOptions = {}): Promise<{ ok: true; config: Kubeconfig } | { ok: false; error: ConfigError }> {
  const found = findSettings(options);
  if (found.kind === 'none') return { ok: false, error: found.error };
  if (found.kind !== 'files') return { ok: true, config: { clusters: new Map(), users: new Map(), contexts: new Map() } };
  const configs: Kubeconfig[] = [];
  for (const file of found.files) {
    const read = await readFile(file);
    if (!read.ok) return read;
    configs.push(read.config);
  }
  return { ok: true, config: mergeKubeconfigs(configs) };
}

/** Parses kubeconfig text: JSON as is, else YAML 1.1 as kubectl's parser reads it (`yes` is true; docs/adr/0004). */
async function parseText(text: string): Promise<unknown> {
  if (/^\s*\{/.test(text)) return JSON.parse(text);
  return parseYaml(text, { version: '1.1' });
}

async function readFile(file: string): Promise<{ ok: true; config: Kubeconfig } | { ok: false; error: ConfigError }> {
  let doc: unknown;
  try {
    doc = await parseText(readFileSync(file, 'utf8'));
  } catch (err) {
    return { ok: false, error: { source: file, message: `cannot read the kubeconfig: ${messageOf(err)}` } };
  }
  const read = readKubeconfig(doc, file);
  if (!read.ok) return { ok: false, error: { source: file, message: `cannot read the kubeconfig: ${read.error}` } };
  return read;
}

/** Loads kubeconfig files, merged as `$KUBECONFIG` lists them (the first to define a name wins). */
export async function connectionFromFiles(files: string[], options: ConnectOptions = {}): Promise<ConfigResult> {
  if (files.length === 0) return fail('environment', 'no kubeconfig file given');
  const configs: Kubeconfig[] = [];
  for (const file of files) {
    if (!existsSync(file)) return fail(file, 'the kubeconfig file does not exist');
    const read = await readFile(file);
    if (!read.ok) return { ok: false, error: read.error };
    configs.push(read.config);
  }
  return connectionFromKubeconfig(mergeKubeconfigs(configs), files.join(delimiter), options);
}

/** Settings from kubeconfig YAML text (the embedded cluster hands its kubeconfig this way). */
export async function connectionFromKubeconfigText(yaml: string, options: ConnectOptions & { source?: string } = {}): Promise<ConfigResult> {
  const source = options.source ?? 'inline';
  let doc: unknown;
  try {
    doc = await parseText(yaml);
  } catch (err) {
    return fail(source, `cannot read the kubeconfig: ${messageOf(err)}`);
  }
  const read = readKubeconfig(doc);
  if (!read.ok) return fail(source, `cannot read the kubeconfig: ${read.error}`);
  return connectionFromKubeconfig(read.config, source, options);
}

/** A Connection from a read (and merged) kubeconfig and the overrides. */
export async function connectionFromKubeconfig(config: Kubeconfig, source: string, options: ConnectOptions = {}): Promise<ConfigResult> {
  const selected = selectSettings(config, overridesOf(options));
  if (!selected.ok) return fail(source, selected.error);
  return connect(selected.settings, source, options);
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
  const dir = `${prefix}${SERVICE_ACCOUNT_DIR}`;
  for (const file of ['token', 'ca.crt']) {
    if (!existsSync(`${dir}/${file}`)) return fail(`${dir}/${file}`, 'the service account file does not exist');
  }
  const overrides = overridesOf(options);
  let namespace = (env['POD_NAMESPACE'] ?? '').trim();
  if (namespace === '' && existsSync(`${dir}/namespace`)) namespace = readFileSync(`${dir}/namespace`, 'utf8').trim();
  if (overrides.namespace !== undefined && overrides.namespace !== '') namespace = overrides.namespace;
  const cluster: ClusterEntry = { server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`, insecureSkipTlsVerify: false, certificateAuthority: `${dir}/ca.crt` };
  const user: UserEntry = { ...emptyUser(), tokenFile: `${dir}/token` };
  // In a pod only the server, the token and the CA can be overridden (as client-go), and impersonation.
  const settings: Settings = {
    cluster: overrideCluster(cluster, { ...(overrides.server === undefined ? {} : { server: overrides.server }), ...(overrides.certificateAuthority === undefined ? {} : { certificateAuthority: overrides.certificateAuthority }) }),
    user: overrideUser(user, { ...(overrides.token === undefined ? {} : { token: overrides.token }), ...impersonationOverrides(overrides) }),
    namespace: namespace === '' ? 'default' : namespace,
  };
  return connect(settings, 'in-cluster', options);
}

function impersonationOverrides(o: ConnectionOverrides): ConnectionOverrides {
  const out: ConnectionOverrides = {};
  if (o.impersonateUser !== undefined) out.impersonateUser = o.impersonateUser;
  if (o.impersonateGroups !== undefined) out.impersonateGroups = o.impersonateGroups;
  if (o.impersonateUid !== undefined) out.impersonateUid = o.impersonateUid;
  return out;
}

/** Reads a file named by the kubeconfig or a flag, naming it and what it is for when it cannot be read. */
function readNamed(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new SettingsError(`cannot read the ${what} ${path}: ${code === 'ENOENT' ? 'no such file' : messageOf(err)}`);
  }
}

class SettingsError extends Error {}

function impersonationHeaders(user: UserEntry): HeaderValues {
  const i = user.impersonate;
  const out: HeaderValues = {};
  if (i.user === undefined) return out;
  out['Impersonate-User'] = i.user;
  if (i.uid !== undefined) out['Impersonate-Uid'] = i.uid;
  if (i.groups.length > 0) out['Impersonate-Group'] = [...i.groups];
  for (const [key, values] of Object.entries(i.extra)) if (values.length > 0) out[`Impersonate-Extra-${encodeURIComponent(key)}`] = [...values];
  return out;
}

function headersFrom(opts: RequestOptions): HeaderValues {
  const out: HeaderValues = {};
  for (const [key, value] of Object.entries(opts.headers ?? {})) {
    if (typeof value === 'string') out[key] = value;
    else if (typeof value === 'number') out[key] = String(value);
    else if (Array.isArray(value)) out[key] = value.map(String);
  }
  return out;
}

/** The legacy auth-provider entries (oidc, azure, gcp): client-node knows them; loaded only for such a user. */
async function authProviderHeaders(settings: Settings): Promise<() => Promise<HeaderValues>> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'cluster', server: settings.cluster.server, skipTLSVerify: settings.cluster.insecureSkipTlsVerify }],
    users: [{ name: 'user', authProvider: settings.user.authProvider }],
    contexts: [{ name: 'context', cluster: 'cluster', user: 'user' }],
    currentContext: 'context',
  });
  return async () => {
    const opts: RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    const h = headersFrom(opts);
    return h['Authorization'] === undefined ? {} : { Authorization: h['Authorization'] };
  };
}

async function connect(settings: Settings, source: string, options: ConnectOptions): Promise<ConfigResult> {
  const { cluster, user } = settings;
  const where = settings.clusterName === undefined ? 'the cluster' : `cluster ${JSON.stringify(settings.clusterName)}`;
  let url: URL;
  try {
    url = new URL(cluster.server);
  } catch {
    return fail(source, `${where} has an invalid server URL ${JSON.stringify(cluster.server)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return fail(source, `${where}: unsupported server scheme ${url.protocol}`);
  if (cluster.proxyUrl !== undefined) return fail(source, `${where}: proxy-url is not supported (connect to the API server directly)`);
  const impersonation = impersonationProblem(user.impersonate);
  if (impersonation !== undefined) return fail(source, impersonation);
  const clock = options.clock ?? realClock();
  const tls = url.protocol === 'https:';
  try {
    const tlsOptions: Record<string, unknown> = {};
    let dynamic: (() => Promise<HeaderValues>) | undefined;
    let fixed: HeaderValues = {};
    if (tls) {
      if (cluster.insecureSkipTlsVerify && (cluster.certificateAuthority !== undefined || cluster.certificateAuthorityData !== undefined)) {
        return fail(source, `${where}: a CA (certificate-authority) and insecure-skip-tls-verify cannot both be set`);
      }
      if (cluster.insecureSkipTlsVerify) tlsOptions['rejectUnauthorized'] = false;
      if (cluster.certificateAuthorityData !== undefined) tlsOptions['ca'] = cluster.certificateAuthorityData;
      else if (cluster.certificateAuthority !== undefined) tlsOptions['ca'] = readNamed(cluster.certificateAuthority, 'certificate authority file');
      if (cluster.tlsServerName !== undefined) tlsOptions['servername'] = cluster.tlsServerName;

      let cert = user.clientCertificateData ?? (user.clientCertificate === undefined ? undefined : readNamed(user.clientCertificate, 'client certificate file'));
      let key = user.clientKeyData ?? (user.clientKey === undefined ? undefined : readNamed(user.clientKey, 'client key file'));

      const token = user.token ?? undefined;
      if (token !== undefined) fixed = { Authorization: `Bearer ${token}` };
      else if (user.tokenFile !== undefined) {
        const file = user.tokenFile;
        let value = readNamed(file, 'token file').trim();
        let readAt = clock.now();
        dynamic = async () => {
          if (clock.now() - readAt >= TOKEN_FILE_REFRESH_MS) {
            try {
              value = readFileSync(file, 'utf8').trim();
              readAt = clock.now();
            } catch {
              // Keep the last token: a projected token is replaced atomically, a read racing it retries next time.
            }
          }
          return { Authorization: `Bearer ${value}` };
        };
      } else if (user.exec !== undefined) {
        const exec = user.exec;
        const run = () => runExecPlugin(exec, cluster, { ...(options.env === undefined ? {} : { env: options.env }), ...(options.stdinIsTTY === undefined ? {} : { stdinIsTTY: options.stdinIsTTY }) });
        let credential: ExecCredential;
        try {
          credential = await run();
        } catch (err) {
          return fail(source, `user ${JSON.stringify(settings.userName ?? '')}: ${messageOf(err)}`);
        }
        if (credential.clientCertificateData !== undefined && cert === undefined) {
          cert = credential.clientCertificateData;
          key = credential.clientKeyData;
        }
        let pending: Promise<ExecCredential> | undefined;
        dynamic = async () => {
          if (credential.expiresAt !== undefined && clock.now() >= credential.expiresAt) {
            pending ??= run().finally(() => {
              pending = undefined;
            });
            credential = await pending;
          }
          return credential.token === undefined ? {} : { Authorization: `Bearer ${credential.token}` };
        };
      } else if (user.authProvider !== undefined) {
        try {
          dynamic = await authProviderHeaders(settings);
        } catch (err) {
          return fail(source, `cannot prepare credentials of user ${JSON.stringify(settings.userName ?? '')}: ${messageOf(err)}`);
        }
      } else if (user.username !== undefined || user.password !== undefined) {
        fixed = { Authorization: `Basic ${Buffer.from(`${user.username ?? ''}:${user.password ?? ''}`).toString('base64')}` };
      }
      if ((cert === undefined) !== (key === undefined)) {
        return fail(source, `user ${JSON.stringify(settings.userName ?? '')}: a client certificate needs its key and a key its certificate`);
      }
      if (cert !== undefined) tlsOptions['cert'] = cert;
      if (key !== undefined) tlsOptions['key'] = key;
    }
    const agent = newAgent(url, tlsOptions, options);
    const identity = impersonationHeaders(user);
    const staticHeaders = { ...fixed, ...identity };
    const headers = dynamic === undefined ? async () => staticHeaders : async () => ({ ...(await (dynamic as () => Promise<HeaderValues>)()), ...identity });
    return {
      ok: true,
      connection: {
        server: cluster.server.replace(/\/+$/, ''),
        agent,
        namespace: settings.namespace,
        source,
        headers,
        close: () => agent.destroy(),
      },
    };
  } catch (err) {
    if (err instanceof SettingsError) return fail(source, err.message);
    throw err;
  }
}

function newAgent(url: URL, tlsFrom: Record<string, unknown>, settings: AgentSettings): HttpsAgent | HttpAgent {
  // `timeout` only closes FREE sockets (Node's agent destroys a free socket on timeout): keep them for 30 s,
  // less than servers keep idle connections (kube-apiserver and ours: 60+ s), so a reused socket is never
  // one the server is closing at that moment.
  const agentOptions = { keepAlive: true, timeout: 30_000, maxSockets: settings.maxSockets ?? 64, maxFreeSockets: settings.maxFreeSockets ?? 16 };
  if (url.protocol === 'http:') return new HttpAgent(agentOptions);
  return new HttpsAgent({ ...agentOptions, ...tlsFrom });
}

/**
 * A Connection from what a kubeconfig with a CA and a bearer token would say,
 * without reading one (the embedded cluster's own components).
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
