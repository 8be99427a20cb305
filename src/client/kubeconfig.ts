/**
 * The kubeconfig format (clientcmd's `Config`, v1) read the way kubectl reads it, without a
 * client library: `readKubeconfig` checks one parsed document and resolves its relative file
 * paths against the file's directory; `mergeKubeconfigs` merges a `$KUBECONFIG` list (the first
 * file to name a cluster, user or context wins, and the first current-context); `selectSettings`
 * picks the context, cluster and user and applies kubectl's command-line overrides with clientcmd's
 * precedence:
 *
 * - `--context` picks the context; `--cluster` and `--user` replace the context's cluster and user
 *   (a name that is not in the kubeconfig is an error);
 * - `--server` replaces the cluster's server (and its `tls-server-name`, unless `--tls-server-name`
 *   is given too); `--insecure-skip-tls-verify` and `--certificate-authority` replace the
 *   cluster's CA and skip-verify settings together, so a file's CA never conflicts with the flag;
 * - `--token` replaces the user's token (a token wins over `tokenFile`); `--client-certificate`
 *   and `--client-key` replace the certificate and key (file or data); `--username` and
 *   `--password` the basic-auth pair;
 * - `--as`, `--as-group`, `--as-uid` replace the user's impersonation settings;
 * - `-n` wins over the context's namespace, which defaults to `default`.
 *
 * Errors are data and name the field (`users[1].user.exec.apiVersion: ...`). No I/O here: the
 * caller reads files and runs credential plugins (config.ts).
 *
 * `renderKubeconfig` writes the simplest one: one cluster (server URL + CA data), one user (bearer
 * token), one context, current — what the embedded API server hands to kubectl, client-node's
 * `KubeConfig.loadFromString` and the manager.
 */
import { dirname, isAbsolute, resolve } from 'node:path';
import { stringify } from 'yaml';

export interface ClusterEntry {
  server: string;
  tlsServerName?: string;
  insecureSkipTlsVerify: boolean;
  /** A file path, resolved against the kubeconfig's directory. */
  certificateAuthority?: string;
  /** PEM, decoded from `certificate-authority-data`. */
  certificateAuthorityData?: string;
  proxyUrl?: string;
  /** `extensions[client.authentication.k8s.io/exec].extension`, handed to exec plugins with `provideClusterInfo`. */
  execConfig?: unknown;
}

export interface ExecSettings {
  apiVersion: string;
  command: string;
  args: string[];
  env: { name: string; value: string }[];
  installHint?: string;
  provideClusterInfo: boolean;
  interactiveMode: 'Never' | 'IfAvailable' | 'Always';
}

export interface Impersonation {
  user?: string;
  uid?: string;
  groups: string[];
  extra: Record<string, string[]>;
}

export interface UserEntry {
  clientCertificate?: string;
  clientCertificateData?: string;
  clientKey?: string;
  clientKeyData?: string;
  token?: string;
  tokenFile?: string;
  username?: string;
  password?: string;
  impersonate: Impersonation;
  authProvider?: { name: string; config: Record<string, string> };
  exec?: ExecSettings;
  /** The entry as written (an auth-provider is handed to client-node as is). */
  raw: Record<string, unknown>;
}

export interface ContextEntry {
  cluster: string;
  user: string;
  namespace?: string;
}

export interface Kubeconfig {
  clusters: Map<string, ClusterEntry>;
  users: Map<string, UserEntry>;
  contexts: Map<string, ContextEntry>;
  currentContext?: string;
}

export type ReadResult = { ok: true; config: Kubeconfig } | { ok: false; error: string };

/** kubectl's command-line overrides of a kubeconfig (its global flags). */
export interface ConnectionOverrides {
  context?: string;
  cluster?: string;
  user?: string;
  namespace?: string;
  server?: string;
  tlsServerName?: string;
  insecureSkipTlsVerify?: boolean;
  certificateAuthority?: string;
  clientCertificate?: string;
  clientKey?: string;
  token?: string;
  username?: string;
  password?: string;
  /** `--as`, `--as-group` (repeated), `--as-uid`. */
  impersonateUser?: string;
  impersonateGroups?: string[];
  impersonateUid?: string;
}

/** What a connection is built from: the cluster, the user and the namespace, overrides applied. */
export interface Settings {
  contextName?: string;
  clusterName?: string;
  userName?: string;
  cluster: ClusterEntry;
  user: UserEntry;
  namespace: string;
}

export type SelectResult = { ok: true; settings: Settings } | { ok: false; error: string };

export const EXEC_API_VERSIONS = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'] as const;
const EXEC_EXTENSION = 'client.authentication.k8s.io/exec';

class FieldError extends Error {}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function optionalString(o: Record<string, unknown>, key: string, path: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new FieldError(`${path}.${key} must be a string`);
  return v;
}

function optionalBool(o: Record<string, unknown>, key: string, path: string): boolean {
  const v = o[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw new FieldError(`${path}.${key} must be true or false`);
  return v;
}

function stringList(o: Record<string, unknown>, key: string, path: string): string[] {
  const v = o[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new FieldError(`${path}.${key} must be a list of strings`);
  return v as string[];
}

function base64Pem(o: Record<string, unknown>, key: string, path: string): string | undefined {
  const v = optionalString(o, key, path);
  if (v === undefined) return undefined;
  const compact = v.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) throw new FieldError(`${path}.${key} is not base64`);
  return Buffer.from(compact, 'base64').toString('utf8');
}

function list(doc: Record<string, unknown>, key: string): Record<string, unknown>[] {
  const v = doc[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new FieldError(`${key} must be a list`);
  return v.map((item, i) => {
    if (!isRecord(item)) throw new FieldError(`${key}[${i}] must be a mapping`);
    return item;
  });
}

function entryName(item: Record<string, unknown>, path: string): string {
  const name = item['name'];
  if (typeof name !== 'string' || name === '') throw new FieldError(`${path}.name is missing`);
  return name;
}

function body(item: Record<string, unknown>, key: string, path: string): Record<string, unknown> {
  const v = item[key];
  if (v === undefined || v === null) return {};
  if (!isRecord(v)) throw new FieldError(`${path}.${key} must be a mapping`);
  return v;
}

function readCluster(c: Record<string, unknown>, path: string, file: (p: string | undefined) => string | undefined): ClusterEntry {
  const server = optionalString(c, 'server', path);
  if (server === undefined) throw new FieldError(`${path}.server is missing`);
  let execConfig: unknown;
  const extensions = c['extensions'];
  if (Array.isArray(extensions)) {
    for (const ext of extensions) if (isRecord(ext) && ext['name'] === EXEC_EXTENSION) execConfig = ext['extension'];
  }
  const entry: ClusterEntry = { server, insecureSkipTlsVerify: optionalBool(c, 'insecure-skip-tls-verify', path) };
  const set = <K extends keyof ClusterEntry>(key: K, value: ClusterEntry[K] | undefined) => {
    if (value !== undefined) entry[key] = value;
  };
  set('tlsServerName', optionalString(c, 'tls-server-name', path));
  set('certificateAuthority', file(optionalString(c, 'certificate-authority', path)));
  set('certificateAuthorityData', base64Pem(c, 'certificate-authority-data', path));
  set('proxyUrl', optionalString(c, 'proxy-url', path));
  if (execConfig !== undefined) entry.execConfig = execConfig;
  return entry;
}

function readExec(e: Record<string, unknown>, path: string, baseDir: string | undefined): ExecSettings {
  const apiVersion = optionalString(e, 'apiVersion', path);
  if (apiVersion === undefined || !(EXEC_API_VERSIONS as readonly string[]).includes(apiVersion)) {
    throw new FieldError(`${path}.apiVersion must be one of ${EXEC_API_VERSIONS.join(', ')}, got ${JSON.stringify(apiVersion ?? '')}`);
  }
  let command = optionalString(e, 'command', path);
  if (command === undefined) throw new FieldError(`${path}.command is missing`);
  // A command with a path separator is relative to the kubeconfig; a bare name is looked up on PATH.
  if (command.includes('/') && !isAbsolute(command) && baseDir !== undefined) command = resolve(baseDir, command);
  const env = e['env'] === undefined || e['env'] === null ? [] : e['env'];
  if (!Array.isArray(env) || env.some((x) => !isRecord(x) || typeof x['name'] !== 'string' || typeof x['value'] !== 'string')) {
    throw new FieldError(`${path}.env must be a list of {name, value}`);
  }
  const mode = optionalString(e, 'interactiveMode', path);
  if (mode === undefined && apiVersion === 'client.authentication.k8s.io/v1') throw new FieldError(`${path}.interactiveMode is required with ${apiVersion} (Never, IfAvailable or Always)`);
  if (mode !== undefined && mode !== 'Never' && mode !== 'IfAvailable' && mode !== 'Always') throw new FieldError(`${path}.interactiveMode must be Never, IfAvailable or Always, got ${JSON.stringify(mode)}`);
  const settings: ExecSettings = {
    apiVersion,
    command,
    args: stringList(e, 'args', path),
    env: env as { name: string; value: string }[],
    provideClusterInfo: optionalBool(e, 'provideClusterInfo', path),
    interactiveMode: mode ?? 'IfAvailable',
  };
  const hint = optionalString(e, 'installHint', path);
  if (hint !== undefined) settings.installHint = hint;
  return settings;
}

function readUser(u: Record<string, unknown>, path: string, file: (p: string | undefined) => string | undefined, baseDir: string | undefined): UserEntry {
  const extraRaw = u['as-user-extra'];
  const extra: Record<string, string[]> = {};
  if (extraRaw !== undefined && extraRaw !== null) {
    if (!isRecord(extraRaw)) throw new FieldError(`${path}.as-user-extra must be a mapping of lists`);
    for (const key of Object.keys(extraRaw)) extra[key] = stringList(extraRaw, key, `${path}.as-user-extra`);
  }
  const impersonate: Impersonation = { groups: stringList(u, 'as-groups', path), extra };
  const as = optionalString(u, 'as', path);
  if (as !== undefined) impersonate.user = as;
  const asUid = optionalString(u, 'as-uid', path);
  if (asUid !== undefined) impersonate.uid = asUid;
  const entry: UserEntry = { impersonate, raw: u };
  const set = <K extends keyof UserEntry>(key: K, value: UserEntry[K] | undefined) => {
    if (value !== undefined) entry[key] = value;
  };
  set('clientCertificate', file(optionalString(u, 'client-certificate', path)));
  set('clientCertificateData', base64Pem(u, 'client-certificate-data', path));
  set('clientKey', file(optionalString(u, 'client-key', path)));
  set('clientKeyData', base64Pem(u, 'client-key-data', path));
  set('token', optionalString(u, 'token', path));
  set('tokenFile', file(optionalString(u, 'tokenFile', path)));
  set('username', optionalString(u, 'username', path));
  set('password', optionalString(u, 'password', path));
  if (entry.clientCertificate !== undefined && entry.clientCertificateData !== undefined) throw new FieldError(`${path}: client-certificate and client-certificate-data are both set`);
  if (entry.clientKey !== undefined && entry.clientKeyData !== undefined) throw new FieldError(`${path}: client-key and client-key-data are both set`);
  const provider = u['auth-provider'];
  if (provider !== undefined && provider !== null) {
    if (!isRecord(provider) || typeof provider['name'] !== 'string') throw new FieldError(`${path}.auth-provider.name is missing`);
    const config = isRecord(provider['config']) ? (provider['config'] as Record<string, string>) : {};
    entry.authProvider = { name: provider['name'], config };
  }
  const exec = u['exec'];
  if (exec !== undefined && exec !== null) {
    if (!isRecord(exec)) throw new FieldError(`${path}.exec must be a mapping`);
    entry.exec = readExec(exec, `${path}.exec`, baseDir);
  }
  return entry;
}

/**
 * Checks one kubeconfig document (already parsed from YAML or JSON) and resolves its relative
 * paths against `path`'s directory (none for a kubeconfig handed over as text).
 */
export function readKubeconfig(doc: unknown, path?: string): ReadResult {
  if (doc === undefined || doc === null) return { ok: true, config: { clusters: new Map(), users: new Map(), contexts: new Map() } };
  if (!isRecord(doc)) return { ok: false, error: 'the kubeconfig must be a mapping' };
  const baseDir = path === undefined ? undefined : dirname(resolve(path));
  const file = (p: string | undefined) => (p === undefined || baseDir === undefined || isAbsolute(p) ? p : resolve(baseDir, p));
  try {
    const config: Kubeconfig = { clusters: new Map(), users: new Map(), contexts: new Map() };
    list(doc, 'clusters').forEach((item, i) => {
      const name = entryName(item, `clusters[${i}]`);
      if (!config.clusters.has(name)) config.clusters.set(name, readCluster(body(item, 'cluster', `clusters[${i}]`), `clusters[${i}].cluster`, file));
    });
    list(doc, 'users').forEach((item, i) => {
      const name = entryName(item, `users[${i}]`);
      if (!config.users.has(name)) config.users.set(name, readUser(body(item, 'user', `users[${i}]`), `users[${i}].user`, file, baseDir));
    });
    list(doc, 'contexts').forEach((item, i) => {
      const name = entryName(item, `contexts[${i}]`);
      const c = body(item, 'context', `contexts[${i}]`);
      const path = `contexts[${i}].context`;
      const context: ContextEntry = { cluster: optionalString(c, 'cluster', path) ?? '', user: optionalString(c, 'user', path) ?? '' };
      const namespace = optionalString(c, 'namespace', path);
      if (namespace !== undefined) context.namespace = namespace;
      if (!config.contexts.has(name)) config.contexts.set(name, context);
    });
    const current = optionalString(doc, 'current-context', 'the kubeconfig');
    if (current !== undefined) config.currentContext = current;
    return { ok: true, config };
  } catch (err) {
    if (err instanceof FieldError) return { ok: false, error: err.message };
    throw err;
  }
}

/** Merges a `$KUBECONFIG` list in order: the first file to define a name (or a current-context) wins. */
export function mergeKubeconfigs(configs: Kubeconfig[]): Kubeconfig {
  const merged: Kubeconfig = { clusters: new Map(), users: new Map(), contexts: new Map() };
  for (const c of configs) {
    for (const [k, v] of c.clusters) if (!merged.clusters.has(k)) merged.clusters.set(k, v);
    for (const [k, v] of c.users) if (!merged.users.has(k)) merged.users.set(k, v);
    for (const [k, v] of c.contexts) if (!merged.contexts.has(k)) merged.contexts.set(k, v);
    if (merged.currentContext === undefined && c.currentContext !== undefined) merged.currentContext = c.currentContext;
  }
  return merged;
}

export function emptyUser(): UserEntry {
  return { impersonate: { groups: [], extra: {} }, raw: {} };
}

/** Applies the user overrides (token, client certificate and key, impersonation) to a copy of `user`. */
export function overrideUser(user: UserEntry, o: ConnectionOverrides): UserEntry {
  const out: UserEntry = { ...user, impersonate: { ...user.impersonate, groups: [...user.impersonate.groups] } };
  if (o.token !== undefined && o.token !== '') out.token = o.token;
  if (o.username !== undefined && o.username !== '') out.username = o.username;
  if (o.password !== undefined && o.password !== '') out.password = o.password;
  if (o.clientCertificate !== undefined && o.clientCertificate !== '') {
    out.clientCertificate = o.clientCertificate;
    delete out.clientCertificateData;
  }
  if (o.clientKey !== undefined && o.clientKey !== '') {
    out.clientKey = o.clientKey;
    delete out.clientKeyData;
  }
  if (o.impersonateUser !== undefined && o.impersonateUser !== '') out.impersonate.user = o.impersonateUser;
  if (o.impersonateGroups !== undefined && o.impersonateGroups.length > 0) out.impersonate.groups = [...o.impersonateGroups];
  if (o.impersonateUid !== undefined && o.impersonateUid !== '') out.impersonate.uid = o.impersonateUid;
  return out;
}

/** Applies the cluster overrides (server, TLS server name, CA or skip-verify) to a copy of `cluster`. */
export function overrideCluster(cluster: ClusterEntry, o: ConnectionOverrides): ClusterEntry {
  const out: ClusterEntry = { ...cluster };
  if (o.server !== undefined && o.server !== '') out.server = o.server;
  if (o.insecureSkipTlsVerify === true || (o.certificateAuthority !== undefined && o.certificateAuthority !== '')) {
    out.insecureSkipTlsVerify = o.insecureSkipTlsVerify === true;
    delete out.certificateAuthorityData;
    if (o.certificateAuthority !== undefined && o.certificateAuthority !== '') out.certificateAuthority = o.certificateAuthority;
    else delete out.certificateAuthority;
  }
  if ((o.tlsServerName !== undefined && o.tlsServerName !== '') || (o.server !== undefined && o.server !== '')) {
    if (o.tlsServerName !== undefined && o.tlsServerName !== '') out.tlsServerName = o.tlsServerName;
    else delete out.tlsServerName;
  }
  return out;
}

/** The settings a kubeconfig and the overrides select (see the module comment for the precedence). */
export function selectSettings(config: Kubeconfig, o: ConnectionOverrides = {}): SelectResult {
  const fail = (error: string): SelectResult => ({ ok: false, error });
  const hasServer = o.server !== undefined && o.server !== '';
  let contextName = config.currentContext;
  if (o.context !== undefined && o.context !== '') {
    if (!config.contexts.has(o.context)) return fail(`context ${JSON.stringify(o.context)} is not in the kubeconfig`);
    contextName = o.context;
  }
  let context: ContextEntry | undefined;
  if (contextName !== undefined) {
    context = config.contexts.get(contextName);
    if (context === undefined) return fail(`the current context ${JSON.stringify(contextName)} is not defined`);
  } else if (!hasServer && (o.cluster === undefined || o.cluster === '')) {
    return fail('the kubeconfig has no current-context (use --context, or --server)');
  }

  let clusterName = context?.cluster;
  if (o.cluster !== undefined && o.cluster !== '') {
    if (!config.clusters.has(o.cluster)) return fail(`cluster ${JSON.stringify(o.cluster)} is not in the kubeconfig`);
    clusterName = o.cluster;
  }
  let cluster = clusterName === undefined || clusterName === '' ? undefined : config.clusters.get(clusterName);
  if (cluster === undefined) {
    if (!hasServer) {
      if (context !== undefined && (o.cluster === undefined || o.cluster === '')) return fail(`context ${JSON.stringify(contextName)} names cluster ${JSON.stringify(context.cluster)}, which is not defined`);
      return fail('no cluster is selected (use --cluster or --server)');
    }
    cluster = { server: o.server as string, insecureSkipTlsVerify: false };
  }

  let userName = context?.user;
  if (o.user !== undefined && o.user !== '') {
    if (!config.users.has(o.user)) return fail(`user ${JSON.stringify(o.user)} is not in the kubeconfig`);
    userName = o.user;
  }
  let user = userName === undefined || userName === '' ? undefined : config.users.get(userName);
  if (user === undefined) {
    if (context !== undefined && userName !== undefined && userName !== '' && (o.user === undefined || o.user === '') && !hasServer) {
      return fail(`context ${JSON.stringify(contextName)} names user ${JSON.stringify(context.user)}, which is not defined`);
    }
    user = emptyUser();
  }

  const namespace = o.namespace !== undefined && o.namespace !== '' ? o.namespace : context?.namespace !== undefined && context.namespace.trim() !== '' ? context.namespace.trim() : 'default';
  const settings: Settings = { cluster: overrideCluster(cluster, o), user: overrideUser(user, o), namespace };
  if (contextName !== undefined) settings.contextName = contextName;
  if (clusterName !== undefined && clusterName !== '') settings.clusterName = clusterName;
  if (userName !== undefined && userName !== '') settings.userName = userName;
  return { ok: true, settings };
}

/** Refuses impersonation settings kube-apiserver would refuse: groups, a uid or extras without a user. */
export function impersonationProblem(i: Impersonation): string | undefined {
  if (i.user !== undefined) return undefined;
  if (i.groups.length > 0 || i.uid !== undefined || Object.keys(i.extra).length > 0) return 'impersonating groups, a uid or extra fields needs a user to impersonate (--as)';
  return undefined;
}

export interface KubeconfigInput {
  server: string;
  caPem: string;
  token: string;
  /** Cluster and context name (the user is `<name>-admin`). */
  name?: string;
  namespace?: string;
}

export const DEFAULT_KUBECONFIG_NAME = 'workloadspread-embedded';

export function renderKubeconfig(input: KubeconfigInput): string {
  const name = input.name ?? DEFAULT_KUBECONFIG_NAME;
  const user = `${name}-admin`;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server: input.server, 'certificate-authority-data': Buffer.from(input.caPem, 'utf8').toString('base64') } }],
    users: [{ name: user, user: { token: input.token } }],
    contexts: [{ name, context: { cluster: name, user, namespace: input.namespace ?? 'default' } }],
    'current-context': name,
    preferences: {},
  });
}
