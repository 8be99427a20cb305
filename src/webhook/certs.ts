/**
 * The webhook's serving certificate, from one of two sources:
 *
 * - `CertDirSource` (`--cert-dir`): `tls.crt` and `tls.key` from a directory
 *   (a mounted Secret, cert-manager), re-read on the clock and swapped in when
 *   they change; a half-written or mismatched pair is ignored until it is whole.
 * - `SecretCertificates` (no `--cert-dir`): a CA and a serving certificate
 *   generated here (RSA 2048 from node:crypto, assembled with node-forge), kept
 *   in a Secret of the manager's namespace so every replica serves the same
 *   pair: create-or-read, a conflict (another replica won) is resolved by
 *   reading again. The CA goes into `caBundle` of OUR webhook configurations.
 *   Rotation runs on the clock: the serving certificate is re-issued when less
 *   than `rotateBeforeMs` (30 days) of it is left or its names no longer fit;
 *   the CA likewise, and then the bundle carries the new and the old CA until
 *   the old one expires, so replicas still serving the old pair stay trusted.
 *
 * Certificates are dated by `validityClock` (the host's clock by default):
 * TLS peers check validity against real time even when the manager runs on a
 * virtual clock. Start at `SecretCertificates.start`.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import forge from 'node-forge';
import { realClock, type Clock, type Timer } from '../clock/clock.ts';
import { describeError, isAlreadyExists, isConflict, isNotFound } from '../client/errors.ts';
import type { KubeClient } from '../client/http-client.ts';
import { silentLogger, type Logger } from '../client/logger.ts';
import { BUILTIN } from '../client/resources.ts';
import { isPlainObject } from '../k8s/json.ts';
import type { KubeObject } from '../k8s/types.ts';

export interface KeyPair {
  certPem: string;
  keyPem: string;
}

/** Where the server takes its certificate from, and hears about a new one. */
export interface CertificateSource {
  current(): KeyPair | undefined;
  onChange(listener: (pair: KeyPair) => void): () => void;
}

/** A fixed pair (tests, tools). */
export function staticCertificates(pair: KeyPair): CertificateSource {
  return { current: () => pair, onChange: () => () => {} };
}

const DAY_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_ROTATE_BEFORE_MS = 30 * DAY_MS;
export const DEFAULT_CA_DAYS = 3650;
export const DEFAULT_SERVING_DAYS = 365;
export const DEFAULT_SECRET_NAME = 'workloadspread-webhook-certs';

// ---- generation and inspection (no I/O) ----

export type CertificateAuthority = KeyPair;

export interface CertificateInfo {
  notBeforeMs: number;
  notAfterMs: number;
  dnsNames: string[];
  ipAddresses: string[];
  isCa: boolean;
}

function rsaKeys(): { publicKeyPem: string; privateKeyPem: string } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f; // positive
  return bytes.toString('hex');
}

function dated(cert: forge.pki.Certificate, nowMs: number, days: number): void {
  // An hour of slack for peers whose clocks run a little behind.
  cert.validity.notBefore = new Date(nowMs - 60 * 60 * 1000);
  cert.validity.notAfter = new Date(nowMs + days * DAY_MS);
}

/** A self-signed CA valid for `days` from `nowMs`. */
export function generateCertificateAuthority(nowMs: number, days = DEFAULT_CA_DAYS, commonName = 'workloadspread-webhook-ca'): CertificateAuthority {
  const keys = rsaKeys();
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(keys.publicKeyPem);
  cert.serialNumber = serialNumber();
  dated(cert, nowMs, days);
  const subject = [{ name: 'commonName', value: commonName }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(keys.privateKeyPem), forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.privateKeyPem };
}

export interface ServingNames {
  dnsNames: string[];
  ipAddresses: string[];
}

/** A serving certificate for `names`, signed by `ca`, valid for `days` from `nowMs`. */
export function issueServingCertificate(ca: CertificateAuthority, names: ServingNames, nowMs: number, days = DEFAULT_SERVING_DAYS): KeyPair {
  const keys = rsaKeys();
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(keys.publicKeyPem);
  cert.serialNumber = serialNumber();
  dated(cert, nowMs, days);
  cert.setSubject([{ name: 'commonName', value: names.dnsNames[0] ?? names.ipAddresses[0] ?? 'workloadspread-webhook' }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [...names.dnsNames.map((value) => ({ type: 2, value })), ...names.ipAddresses.map((ip) => ({ type: 7, ip }))] },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(ca.keyPem), forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.privateKeyPem };
}

/** Dates and names of the first certificate of a PEM; undefined when it cannot be read. */
export function certificateInfo(pem: string): CertificateInfo | undefined {
  try {
    const cert = forge.pki.certificateFromPem(pem);
    const san = cert.getExtension('subjectAltName') as { altNames?: { type: number; value?: string; ip?: string }[] } | null;
    const alt = san?.altNames ?? [];
    const basic = cert.getExtension('basicConstraints') as { cA?: boolean } | null;
    return {
      notBeforeMs: cert.validity.notBefore.getTime(),
      notAfterMs: cert.validity.notAfter.getTime(),
      dnsNames: alt.filter((a) => a.type === 2 && typeof a.value === 'string').map((a) => a.value as string),
      ipAddresses: alt.filter((a) => a.type === 7 && typeof a.ip === 'string').map((a) => a.ip as string),
      isCa: basic?.cA === true,
    };
  } catch {
    return undefined;
  }
}

/** Whether `pair` is a usable TLS pair whose certificate `ca` signed. */
export function signedBy(pair: KeyPair, ca: KeyPair): boolean {
  try {
    createSecureContext({ cert: pair.certPem, key: pair.keyPem });
    return forge.pki.certificateFromPem(ca.certPem).verify(forge.pki.certificateFromPem(pair.certPem));
  } catch {
    return false;
  }
}

/** The names the serving certificate must cover: the service's DNS names, and for a `--webhook-url` its host, 127.0.0.1 and localhost. */
export function servingNames(options: { service?: { name: string; namespace: string }; webhookUrl?: string }): ServingNames {
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  const add = (host: string): void => {
    const bare = host.replace(/^\[|\]$/g, '');
    if (/^[0-9.]+$/.test(bare) || bare.includes(':')) {
      if (!ipAddresses.includes(bare)) ipAddresses.push(bare);
    } else if (bare !== '' && !dnsNames.includes(bare)) dnsNames.push(bare);
  };
  if (options.service !== undefined) {
    add(`${options.service.name}.${options.service.namespace}.svc`);
    add(`${options.service.name}.${options.service.namespace}.svc.cluster.local`);
  }
  if (options.webhookUrl !== undefined && options.webhookUrl !== '') {
    try {
      add(new URL(options.webhookUrl).hostname);
    } catch {
      // An unparsable URL is the flag parser's to report; the loopback names still go in.
    }
    add('localhost');
    add('127.0.0.1');
  }
  return { dnsNames, ipAddresses };
}

function covers(info: CertificateInfo, names: ServingNames): boolean {
  return names.dnsNames.every((n) => info.dnsNames.includes(n)) && names.ipAddresses.every((ip) => info.ipAddresses.includes(ip));
}

function splitPems(bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
}

export interface StoredCertificates {
  ca: CertificateAuthority;
  /** What goes into caBundle: the current CA first, then a previous one still valid. */
  bundle: string;
  serving: KeyPair;
}

export interface RenewalPolicy {
  nowMs: number;
  names: ServingNames;
  rotateBeforeMs?: number;
  caDays?: number;
  servingDays?: number;
}

/**
 * What the Secret should hold given what it holds now (undefined: nothing
 * usable): the same (`changed: false`), a re-issued serving certificate, or
 * a new CA and serving certificate.
 */
export function renewCertificates(stored: StoredCertificates | undefined, policy: RenewalPolicy): { changed: boolean; reason: string; certs: StoredCertificates } {
  const rotateBefore = policy.rotateBeforeMs ?? DEFAULT_ROTATE_BEFORE_MS;
  const fresh = (reason: string, previousCa?: string): { changed: true; reason: string; certs: StoredCertificates } => {
    const ca = generateCertificateAuthority(policy.nowMs, policy.caDays);
    const serving = issueServingCertificate(ca, policy.names, policy.nowMs, policy.servingDays);
    const keep = previousCa !== undefined && (certificateInfo(previousCa)?.notAfterMs ?? 0) > policy.nowMs ? [previousCa] : [];
    return { changed: true, reason, certs: { ca, bundle: [ca.certPem.trim(), ...keep.map((p) => p.trim())].join('\n') + '\n', serving } };
  };
  if (stored === undefined) return fresh('no certificates stored yet');
  const caInfo = certificateInfo(stored.ca.certPem);
  if (caInfo === undefined || !caInfo.isCa) return fresh('the stored CA cannot be read');
  if (caInfo.notAfterMs - policy.nowMs < rotateBefore) return fresh('the CA expires soon', stored.ca.certPem);
  const info = certificateInfo(stored.serving.certPem);
  const reissue = (reason: string): { changed: true; reason: string; certs: StoredCertificates } => ({
    changed: true,
    reason,
    certs: { ...stored, serving: issueServingCertificate(stored.ca, policy.names, policy.nowMs, policy.servingDays) },
  });
  if (info === undefined || !signedBy(stored.serving, stored.ca)) return reissue('the serving certificate is unusable or not signed by the CA');
  if (info.notAfterMs - policy.nowMs < rotateBefore) return reissue('the serving certificate expires soon');
  if (!covers(info, policy.names)) return reissue('the serving certificate does not cover the webhook names');
  // A bundle whose old CA has expired is trimmed to the live ones.
  const all = splitPems(stored.bundle);
  const live = all.filter((p) => (certificateInfo(p)?.notAfterMs ?? 0) > policy.nowMs);
  if (live.length !== all.length || live.length === 0) {
    const bundle = live.length > 0 ? live.join('\n') + '\n' : stored.ca.certPem;
    return { changed: true, reason: 'an expired CA left the bundle', certs: { ...stored, bundle } };
  }
  return { changed: false, reason: '', certs: stored };
}

// ---- the Secret ----

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (v: unknown): string | undefined => (typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : undefined);

/** The certificates a Secret holds; undefined when a key is missing. */
export function certificatesFromSecret(secret: KubeObject | undefined): StoredCertificates | undefined {
  const data = secret?.['data'];
  if (!isPlainObject(data)) return undefined;
  const bundle = unb64(data['ca.crt']);
  const caKey = unb64(data['ca.key']);
  const cert = unb64(data['tls.crt']);
  const key = unb64(data['tls.key']);
  if (bundle === undefined || caKey === undefined || cert === undefined || key === undefined) return undefined;
  const caPem = splitPems(bundle)[0];
  if (caPem === undefined) return undefined;
  return { ca: { certPem: `${caPem}\n`, keyPem: caKey }, bundle, serving: { certPem: cert, keyPem: key } };
}

export function secretData(certs: StoredCertificates): Record<string, string> {
  return { 'ca.crt': b64(certs.bundle), 'ca.key': b64(certs.ca.keyPem), 'tls.crt': b64(certs.serving.certPem), 'tls.key': b64(certs.serving.keyPem) };
}

class Listeners {
  #fns: ((pair: KeyPair) => void)[] = [];
  add(fn: (pair: KeyPair) => void): () => void {
    this.#fns.push(fn);
    return () => {
      this.#fns = this.#fns.filter((f) => f !== fn);
    };
  }
  emit(pair: KeyPair, log: Logger): void {
    for (const fn of this.#fns) {
      try {
        fn(pair);
      } catch (err) {
        log.error({ err: describeError(err) }, 'certificate listener failed');
      }
    }
  }
}

export interface SecretCertificatesOptions {
  client: KubeClient;
  clock: Clock;
  /** The manager's namespace (where the Secret lives). */
  namespace: string;
  secretName?: string;
  /** Names the serving certificate covers (`servingNames`). */
  names: ServingNames;
  /** Our webhook configurations, whose `caBundle` is kept equal to the CA bundle. */
  mutatingConfigurations?: string[];
  validatingConfigurations?: string[];
  /** How often the Secret and the bundles are checked (default 10 minutes, on `clock`). */
  checkIntervalMs?: number;
  rotateBeforeMs?: number;
  caDays?: number;
  servingDays?: number;
  /** What certificates are dated by (default the host's clock). */
  validityClock?: Pick<Clock, 'now'>;
  log?: Logger;
}

/** Generated certificates shared through a Secret; `start()` before serving. */
export class SecretCertificates implements CertificateSource {
  readonly secretName: string;
  readonly #opts: SecretCertificatesOptions;
  readonly #log: Logger;
  readonly #listeners = new Listeners();
  #current: StoredCertificates | undefined;
  #timer: Timer | undefined;

  constructor(options: SecretCertificatesOptions) {
    this.#opts = options;
    this.secretName = options.secretName ?? DEFAULT_SECRET_NAME;
    this.#log = options.log ?? silentLogger;
  }

  current(): KeyPair | undefined {
    return this.#current?.serving;
  }

  /** The PEM bundle that goes into `caBundle` (undefined before `start`). */
  caBundle(): string | undefined {
    return this.#current?.bundle;
  }

  onChange(listener: (pair: KeyPair) => void): () => void {
    return this.#listeners.add(listener);
  }

  /** Makes sure the Secret holds good certificates and the bundles are patched; then checks again periodically. */
  async start(): Promise<void> {
    await this.reconcile();
    this.#timer = this.#opts.clock.setInterval(
      async () => {
        try {
          await this.reconcile();
        } catch (err) {
          this.#log.warn({ err: describeError(err) }, 'webhook certificate check failed; retrying at the next interval');
        }
      },
      this.#opts.checkIntervalMs ?? 10 * 60_000,
      { background: true, name: 'webhook certificates' },
    );
  }

  stop(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  /** One pass: read (or create) the Secret, renew what needs it, adopt it, patch the bundles. */
  async reconcile(): Promise<void> {
    const { client, namespace } = this.#opts;
    const now = (this.#opts.validityClock ?? realClock()).now();
    for (let attempt = 1; ; attempt++) {
      let secret: KubeObject | undefined;
      try {
        secret = await client.get(BUILTIN.secrets, this.secretName, { namespace });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      const stored = certificatesFromSecret(secret);
      const renewed = renewCertificates(stored, { nowMs: now, names: this.#opts.names, ...this.#policy() });
      if (!renewed.changed) {
        this.#adopt(renewed.certs);
        break;
      }
      try {
        if (secret === undefined) {
          const body = { apiVersion: 'v1', kind: 'Secret', metadata: { name: this.secretName, namespace }, type: 'kubernetes.io/tls', data: secretData(renewed.certs) };
          await client.create(BUILTIN.secrets, body, { namespace });
        } else {
          await client.update(BUILTIN.secrets, { ...secret, data: { ...(isPlainObject(secret['data']) ? secret['data'] : {}), ...secretData(renewed.certs) } });
        }
        this.#log.info({ secret: `${namespace}/${this.secretName}`, reason: renewed.reason }, 'webhook certificates written');
        this.#adopt(renewed.certs);
        break;
      } catch (err) {
        // Another replica wrote first: read its certificates rather than fight over them.
        if ((isAlreadyExists(err) || isConflict(err)) && attempt < 5) continue;
        throw err;
      }
    }
    await this.#patchBundles();
  }

  #policy(): Omit<RenewalPolicy, 'nowMs' | 'names'> {
    const p: Omit<RenewalPolicy, 'nowMs' | 'names'> = {};
    if (this.#opts.rotateBeforeMs !== undefined) p.rotateBeforeMs = this.#opts.rotateBeforeMs;
    if (this.#opts.caDays !== undefined) p.caDays = this.#opts.caDays;
    if (this.#opts.servingDays !== undefined) p.servingDays = this.#opts.servingDays;
    return p;
  }

  #adopt(certs: StoredCertificates): void {
    const before = this.#current;
    this.#current = certs;
    if (before === undefined || before.serving.certPem !== certs.serving.certPem || before.serving.keyPem !== certs.serving.keyPem) {
      this.#listeners.emit(certs.serving, this.#log);
    }
  }

  /** Sets `caBundle` on every webhook of our configurations that lacks it (a missing configuration is skipped). */
  async #patchBundles(): Promise<void> {
    const bundle = this.#current?.bundle;
    if (bundle === undefined) return;
    const targets = [
      ...(this.#opts.mutatingConfigurations ?? []).map((name) => ({ ref: BUILTIN.mutatingwebhookconfigurations, name })),
      ...(this.#opts.validatingConfigurations ?? []).map((name) => ({ ref: BUILTIN.validatingwebhookconfigurations, name })),
    ];
    for (const target of targets) await patchCaBundle(this.#opts.client, target.ref, target.name, b64(bundle), this.#log);
  }
}

/** Read-modify-write of one configuration's `caBundle`s with optimistic concurrency; no write when they already match. */
export async function patchCaBundle(client: KubeClient, ref: typeof BUILTIN.mutatingwebhookconfigurations, name: string, caBundle: string, log: Logger = silentLogger): Promise<boolean> {
  for (let attempt = 1; attempt <= 5; attempt++) {
    let config: KubeObject;
    try {
      config = await client.get(ref, name);
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
    const webhooks = Array.isArray(config['webhooks']) ? (config['webhooks'] as unknown[]) : [];
    let changed = false;
    const updated = webhooks.map((w) => {
      if (!isPlainObject(w)) return w;
      const clientConfig = isPlainObject(w['clientConfig']) ? w['clientConfig'] : {};
      if (clientConfig['caBundle'] === caBundle) return w;
      changed = true;
      return { ...w, clientConfig: { ...clientConfig, caBundle } };
    });
    if (!changed) return false;
    try {
      await client.update(ref, { ...config, webhooks: updated });
      log.info({ configuration: name }, 'caBundle updated');
      return true;
    } catch (err) {
      if (isConflict(err) && attempt < 5) continue;
      throw err;
    }
  }
  return false;
}

export interface CertDirSourceOptions {
  dir: string;
  clock: Clock;
  /** How often the files are compared (default 10 s, on the clock). */
  pollMs?: number;
  log?: Logger;
  certFile?: string;
  keyFile?: string;
}

/** `tls.crt` / `tls.key` from a directory, reloaded when they change. */
export class CertDirSource implements CertificateSource {
  readonly #opts: CertDirSourceOptions;
  readonly #log: Logger;
  readonly #listeners = new Listeners();
  #current: KeyPair | undefined;
  #timer: Timer | undefined;

  constructor(options: CertDirSourceOptions) {
    this.#opts = options;
    this.#log = options.log ?? silentLogger;
  }

  current(): KeyPair | undefined {
    return this.#current;
  }

  onChange(listener: (pair: KeyPair) => void): () => void {
    return this.#listeners.add(listener);
  }

  /** Loads the pair (failing when it is missing or unusable), then watches it. */
  async start(): Promise<void> {
    const loaded = await this.#read();
    if (!loaded.ok) throw new Error(loaded.error);
    this.#current = loaded.pair;
    this.#timer = this.#opts.clock.setInterval(async () => void (await this.check()), this.#opts.pollMs ?? 10_000, { background: true, name: 'webhook cert-dir' });
  }

  stop(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  /** Re-reads the files; adopts them when they changed and form a usable pair. True when a new pair was adopted. */
  async check(): Promise<boolean> {
    const loaded = await this.#read();
    if (!loaded.ok) {
      this.#log.warn({ dir: this.#opts.dir, err: loaded.error }, 'webhook certificate files unusable; keeping the current pair');
      return false;
    }
    const { pair } = loaded;
    if (this.#current !== undefined && pair.certPem === this.#current.certPem && pair.keyPem === this.#current.keyPem) return false;
    this.#current = pair;
    this.#listeners.emit(pair, this.#log);
    return true;
  }

  async #read(): Promise<{ ok: true; pair: KeyPair } | { ok: false; error: string }> {
    const certPath = join(this.#opts.dir, this.#opts.certFile ?? 'tls.crt');
    const keyPath = join(this.#opts.dir, this.#opts.keyFile ?? 'tls.key');
    try {
      const [certPem, keyPem] = await Promise.all([readFile(certPath, 'utf8'), readFile(keyPath, 'utf8')]);
      // Both halves must belong together: a rotation caught between the two writes is not loaded.
      createSecureContext({ cert: certPem, key: keyPem });
      return { ok: true, pair: { certPem, keyPem } };
    } catch (err) {
      return { ok: false, error: `${certPath} / ${keyPath}: ${err instanceof Error ? err.message : String(err)}` };
    }
  }
}
