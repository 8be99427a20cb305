/**
 * Who may call the webhook: TLS client-certificate authentication of the API
 * server (`--client-ca-file`, optionally `--client-cert-allowed-names`).
 *
 * With a client CA, the webhook server asks every connection for a
 * certificate and refuses the TLS handshake unless one signed by that CA is
 * presented; with allowed names, the certificate's common name (or one of its
 * DNS names) must also be in the list, else the request is answered 403. The
 * API server presents its certificate when its AdmissionConfiguration points
 * it to a kubeconfig naming this webhook (docs/operations.md#security).
 *
 * Without a client CA anyone who can reach the port may send reviews; the
 * manager says so in a warning at start (manager.ts). The CA file is re-read
 * every 10 s and swapped in without a restart, as `--cert-dir` is.
 * Start at `ClientCaFile` / `staticClientAuth`, and `peerAllowed`.
 */
import { readFile } from 'node:fs/promises';
import { X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import type { Clock, Timer } from '../clock/clock.ts';
import { describeError } from '../client/errors.ts';
import { silentLogger, type Logger } from '../client/logger.ts';

export interface ClientAuth {
  /** PEM of the CA(s) whose client certificates are accepted. */
  caPem: string;
  /** Common or DNS names a client certificate must carry; empty: any certificate the CA signed. */
  allowedNames: readonly string[];
}

export interface ClientAuthSource {
  current(): ClientAuth;
  onChange(listener: (auth: ClientAuth) => void): () => void;
  stop(): void;
}

/** Checks that `pem` holds at least one certificate and that each one is a CA; returns why not. */
export function clientCaProblem(pem: string): string | undefined {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) return 'no PEM certificate found';
  for (const block of blocks) {
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(block);
    } catch (err) {
      return `a certificate cannot be read: ${describeError(err)}`;
    }
    if (!cert.ca) return `the certificate ${cert.subject.replace(/\n/g, ', ')} is not a CA certificate`;
  }
  return undefined;
}

/** A fixed client CA (tests, the embedded cluster). */
export function staticClientAuth(caPem: string, allowedNames: readonly string[] = []): ClientAuthSource {
  const problem = clientCaProblem(caPem);
  if (problem !== undefined) throw new Error(`client CA: ${problem}`);
  const auth: ClientAuth = { caPem, allowedNames };
  return { current: () => auth, onChange: () => () => {}, stop: () => {} };
}

export interface ClientCaFileOptions {
  file: string;
  allowedNames?: readonly string[];
  clock: Clock;
  log?: Logger;
  /** How often the file is re-read (default 10 s). */
  pollMs?: number;
}

/** `--client-ca-file`: read at start (failing when missing or not a CA), then re-read and swapped in when it changes. */
export class ClientCaFile implements ClientAuthSource {
  readonly #opts: ClientCaFileOptions;
  readonly #log: Logger;
  #listeners: ((auth: ClientAuth) => void)[] = [];
  #current: ClientAuth | undefined;
  #timer: Timer | undefined;

  constructor(options: ClientCaFileOptions) {
    this.#opts = options;
    this.#log = options.log ?? silentLogger;
  }

  current(): ClientAuth {
    if (this.#current === undefined) throw new Error('the client CA file has not been read yet');
    return this.#current;
  }

  onChange(listener: (auth: ClientAuth) => void): () => void {
    this.#listeners.push(listener);
    return () => {
      this.#listeners = this.#listeners.filter((l) => l !== listener);
    };
  }

  async start(): Promise<void> {
    const read = await this.#read();
    if (!read.ok) throw new Error(read.error);
    this.#current = read.auth;
    this.#timer = this.#opts.clock.setInterval(async () => void (await this.check()), this.#opts.pollMs ?? 10_000, { background: true, name: 'webhook client CA file' });
  }

  stop(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  /** Re-reads the file; adopts it when it changed and is usable. True when adopted. */
  async check(): Promise<boolean> {
    const read = await this.#read();
    if (!read.ok) {
      this.#log.warn({ file: this.#opts.file, err: read.error }, 'client CA file unusable; keeping the current one');
      return false;
    }
    if (this.#current !== undefined && read.auth.caPem === this.#current.caPem) return false;
    this.#current = read.auth;
    for (const l of this.#listeners) {
      try {
        l(read.auth);
      } catch (err) {
        this.#log.error({ err: describeError(err) }, 'client CA listener failed');
      }
    }
    return true;
  }

  async #read(): Promise<{ ok: true; auth: ClientAuth } | { ok: false; error: string }> {
    let pem: string;
    try {
      pem = await readFile(this.#opts.file, 'utf8');
    } catch (err) {
      return { ok: false, error: `--client-ca-file ${this.#opts.file}: ${describeError(err)}` };
    }
    const problem = clientCaProblem(pem);
    if (problem !== undefined) return { ok: false, error: `--client-ca-file ${this.#opts.file}: ${problem}` };
    return { ok: true, auth: { caPem: pem, allowedNames: this.#opts.allowedNames ?? [] } };
  }
}

/**
 * Whether the verified peer certificate of `socket` carries an allowed name
 * (its common name or a DNS subject alternative name); true when no names are
 * required. The handshake has already checked the signature.
 *
 * A subject may hold several common names; the last one is the certificate's
 * common name, as Go reads a subject (pkix.Name.CommonName) and as the API
 * server's request-header (front-proxy) authentication checks its allowed
 * names. An allowed name in an earlier CN attribute does not count.
 */
export function peerAllowed(socket: TLSSocket, allowedNames: readonly string[]): true | string {
  if (allowedNames.length === 0) return true;
  const cert = socket.getPeerCertificate();
  const cn: string | string[] | undefined = cert.subject?.CN;
  const last = Array.isArray(cn) ? cn[cn.length - 1] : cn;
  const names = last === undefined ? [] : [last];
  for (const part of (cert.subjectaltname ?? '').split(',')) {
    const m = /^\s*DNS:(.+)$/.exec(part);
    if (m?.[1] !== undefined) names.push(m[1].trim());
  }
  if (names.some((n) => allowedNames.includes(n))) return true;
  return `the client certificate (${names.length === 0 ? 'no name' : names.map((n) => JSON.stringify(n)).join(', ')}) is not one of --client-cert-allowed-names`;
}
