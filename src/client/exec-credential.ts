/**
 * Exec credential plugins (client.authentication.k8s.io v1 and v1beta1), run as client-go runs
 * them: the command with the kubeconfig's args and env added to ours, `KUBERNETES_EXEC_INFO`
 * holding the ExecCredential request (with the cluster when `provideClusterInfo`), stdin handed
 * over only when the plugin may be interactive and stdin is a terminal, stderr passed through
 * (plugins prompt there). The answer must be an ExecCredential of the configured apiVersion with
 * a token or a client certificate and key; `expirationTimestamp` says until when it may be reused.
 */
import { spawn } from 'node:child_process';
import type { ClusterEntry, ExecSettings } from './kubeconfig.ts';

export interface ExecCredential {
  token?: string;
  clientCertificateData?: string;
  clientKeyData?: string;
  /** Milliseconds since the epoch; absent: valid for as long as the process runs. */
  expiresAt?: number;
}

export interface ExecRunOptions {
  /** The environment the plugin's own env is added to (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Whether stdin is a terminal (default `process.stdin.isTTY`). */
  stdinIsTTY?: boolean;
}

export class ExecPluginError extends Error {}

function clusterInfo(cluster: ClusterEntry): Record<string, unknown> {
  const info: Record<string, unknown> = { server: cluster.server };
  if (cluster.tlsServerName !== undefined) info['tls-server-name'] = cluster.tlsServerName;
  if (cluster.insecureSkipTlsVerify) info['insecure-skip-tls-verify'] = true;
  if (cluster.certificateAuthorityData !== undefined) info['certificate-authority-data'] = Buffer.from(cluster.certificateAuthorityData, 'utf8').toString('base64');
  if (cluster.proxyUrl !== undefined) info['proxy-url'] = cluster.proxyUrl;
  if (cluster.execConfig !== undefined) info['config'] = cluster.execConfig;
  return info;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Parses what a plugin printed (exported for tests). */
export function parseExecCredential(text: string, exec: ExecSettings): ExecCredential {
  const name = JSON.stringify(exec.command);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new ExecPluginError(`exec plugin ${name} did not print an ExecCredential (not JSON)`);
  }
  if (!isRecord(doc) || doc['kind'] !== 'ExecCredential') throw new ExecPluginError(`exec plugin ${name} did not print an ExecCredential`);
  if (doc['apiVersion'] !== exec.apiVersion) {
    throw new ExecPluginError(`exec plugin ${name} is configured for ${exec.apiVersion} but answered ${JSON.stringify(doc['apiVersion'] ?? '')}`);
  }
  const status = doc['status'];
  if (!isRecord(status)) throw new ExecPluginError(`exec plugin ${name}: the ExecCredential has no status`);
  const out: ExecCredential = {};
  const str = (key: string) => (typeof status[key] === 'string' && status[key] !== '' ? (status[key] as string) : undefined);
  const token = str('token');
  const cert = str('clientCertificateData');
  const key = str('clientKeyData');
  if (token !== undefined) out.token = token;
  if ((cert === undefined) !== (key === undefined)) throw new ExecPluginError(`exec plugin ${name}: clientCertificateData and clientKeyData must be given together`);
  if (cert !== undefined && key !== undefined) {
    out.clientCertificateData = cert;
    out.clientKeyData = key;
  }
  if (token === undefined && cert === undefined) throw new ExecPluginError(`exec plugin ${name}: the ExecCredential has neither a token nor a client certificate`);
  const expiry = str('expirationTimestamp');
  if (expiry !== undefined) {
    const at = Date.parse(expiry);
    if (Number.isNaN(at)) throw new ExecPluginError(`exec plugin ${name}: expirationTimestamp ${JSON.stringify(expiry)} is not a time`);
    out.expiresAt = at;
  }
  return out;
}

/** Runs the plugin once and returns its credential. */
export function runExecPlugin(exec: ExecSettings, cluster: ClusterEntry, options: ExecRunOptions = {}): Promise<ExecCredential> {
  const tty = options.stdinIsTTY ?? process.stdin.isTTY === true;
  const interactive = exec.interactiveMode !== 'Never' && tty;
  const name = JSON.stringify(exec.command);
  if (exec.interactiveMode === 'Always' && !tty) {
    return Promise.reject(new ExecPluginError(`exec plugin ${name} needs a terminal (interactiveMode: Always) and stdin is not one`));
  }
  const request: Record<string, unknown> = { apiVersion: exec.apiVersion, kind: 'ExecCredential', spec: { interactive, ...(exec.provideClusterInfo ? { cluster: clusterInfo(cluster) } : {}) } };
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(options.env ?? process.env)) if (v !== undefined) env[k] = v;
  for (const e of exec.env) env[e.name] = e.value;
  env['KUBERNETES_EXEC_INFO'] = JSON.stringify(request);
  return new Promise((resolve, reject) => {
    const child = spawn(exec.command, exec.args, { env, stdio: [interactive ? 'inherit' : 'ignore', 'pipe', 'inherit'] });
    const chunks: Buffer[] = [];
    child.stdout?.on('data', (c: Buffer) => chunks.push(c));
    child.on('error', (err: NodeJS.ErrnoException) => {
      const hint = exec.installHint === undefined ? '' : `\n${exec.installHint}`;
      reject(new ExecPluginError(err.code === 'ENOENT' ? `exec plugin ${name} not found${hint}` : `exec plugin ${name}: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      if (code !== 0) {
        reject(new ExecPluginError(`exec plugin ${name} failed (${signal !== null ? `signal ${signal}` : `exit code ${code}`})`));
        return;
      }
      try {
        resolve(parseExecCredential(Buffer.concat(chunks).toString('utf8'), exec));
      } catch (err) {
        reject(err);
      }
    });
  });
}
