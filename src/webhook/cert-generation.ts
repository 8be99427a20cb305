/**
 * Certificates for the admission webhook, without I/O: a self-signed CA and
 * serving certificates it signs (RSA 2048 keys from node:crypto, assembled
 * with node-forge, SHA-256; the X.509 work is src/client/tls-certificates.ts),
 * what a certificate says (dates, names), the
 * renewal policy (`renewCertificates`: re-issue the serving certificate when
 * less than 30 days are left or its names no longer fit; a new CA likewise,
 * with the old CA kept in the bundle while it is valid), and the Secret's
 * data layout (`ca.crt` = the bundle, `ca.key`, `tls.crt`, `tls.key`).
 * Times are parameters: certificates are dated by whatever clock the caller
 * passes (the host's, since TLS peers check validity against real time).
 * Start at `renewCertificates`.
 */
import { isPlainObject } from '../k8s/json.ts';
import type { KubeObject } from '../k8s/types.ts';
import {
  certificateInfo,
  DAY_MS,
  generateCertificateAuthority as generateCa,
  issueServingCertificate as issueServing,
  signedBy,
  type CertificateAuthority,
  type CertificateInfo,
  type KeyPair,
  type ServingNames,
} from '../client/tls-certificates.ts';

export { certificateInfo, signedBy, type CertificateAuthority, type CertificateInfo, type KeyPair, type ServingNames };

export const DEFAULT_ROTATE_BEFORE_MS = 30 * DAY_MS;
export const DEFAULT_CA_DAYS = 3650;
export const DEFAULT_SERVING_DAYS = 365;

// ---- generation ----

/** A self-signed CA valid for `days` from `nowMs`. */
export function generateCertificateAuthority(nowMs: number, days = DEFAULT_CA_DAYS, commonName = 'workloadspread-webhook-ca'): CertificateAuthority {
  return generateCa(nowMs, days, commonName);
}

/** A serving certificate for `names`, signed by `ca`, valid for `days` from `nowMs`. */
export function issueServingCertificate(ca: CertificateAuthority, names: ServingNames, nowMs: number, days = DEFAULT_SERVING_DAYS): KeyPair {
  return issueServing(ca, { ...names, commonName: names.commonName ?? names.dnsNames[0] ?? names.ipAddresses[0] ?? 'workloadspread-webhook' }, nowMs, days);
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
