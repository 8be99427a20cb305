/**
 * Where the webhook's serving certificate comes from, and how it stays valid:
 *
 * - `CertDirSource` (`--cert-dir`): `tls.crt` and `tls.key` from a directory
 *   (a mounted Secret, cert-manager), re-read on the clock and swapped in when
 *   they change; a half-written or mismatched pair is ignored until it is whole.
 * - `SecretCertificates` (no `--cert-dir`): a CA and a serving certificate
 *   generated here (cert-generation.ts), kept in a Secret of the manager's
 *   namespace so every replica serves the same pair: create-or-read, and a
 *   conflict (another replica wrote first) is resolved by reading again. The
 *   CA bundle goes into `caBundle` of OUR webhook configurations, and both are
 *   checked again periodically on the clock, which is also when rotation
 *   happens (`renewCertificates`); other replicas pick a rotation up from the
 *   Secret at their next check.
 *
 * Certificates are dated by `validityClock` (the host's clock by default):
 * TLS peers check validity against real time even when the manager runs on a
 * virtual clock. Start at `SecretCertificates.start`.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import { realClock, type Clock, type Timer } from '../clock/clock.ts';
import { describeError, isAlreadyExists, isConflict, isNotFound } from '../client/errors.ts';
import type { KubeClient } from '../client/http-client.ts';
import { silentLogger, type Logger } from '../client/logger.ts';
import { BUILTIN } from '../client/resources.ts';
import { isPlainObject } from '../k8s/json.ts';
import type { KubeObject } from '../k8s/types.ts';
import { updateWebhooks, withCaBundle } from './configuration-keeper.ts';
import { certificatesFromSecret, renewCertificates, secretData, type KeyPair, type RenewalPolicy, type ServingNames, type StoredCertificates } from './cert-generation.ts';

export type { KeyPair } from './cert-generation.ts';
export { servingNames } from './cert-generation.ts';

/** Where the server takes its certificate from, and hears about a new one. */
export interface CertificateSource {
  current(): KeyPair | undefined;
  onChange(listener: (pair: KeyPair) => void): () => void;
}

/** A fixed pair (tests, tools). */
export function staticCertificates(pair: KeyPair): CertificateSource {
  return { current: () => pair, onChange: () => () => {} };
}

import { DEFAULT_SECRET_NAME } from './names.ts';

export { DEFAULT_SECRET_NAME };

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
        this.#log.info({ namespace, name: this.secretName, reason: renewed.reason }, 'webhook certificates written');
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
    for (const target of targets) await patchCaBundle(this.#opts.client, target.ref, target.name, Buffer.from(bundle, 'utf8').toString('base64'), this.#log);
  }
}

/** Sets `caBundle` on every webhook of one configuration (a read-modify-write); no write when they already match. */
export async function patchCaBundle(client: KubeClient, ref: typeof BUILTIN.mutatingwebhookconfigurations, name: string, caBundle: string, log: Logger = silentLogger): Promise<boolean> {
  const result = await updateWebhooks(client, ref, name, (w) => withCaBundle(w, caBundle));
  if (result === 'updated') log.info({ configuration: name }, 'caBundle updated');
  return result === 'updated';
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
