/**
 * X.509 for HTTPS between Kubernetes components, shared by the webhook's
 * certificate management and the embedded API server: a self-signed CA,
 * serving certificates it signs (RSA 2048 keys from node:crypto, assembled
 * with node-forge, SHA-256), and what a certificate says (dates, names,
 * signer). Times are parameters: callers date certificates by the host's
 * clock, because the TLS peers that check them use it, whatever clock the
 * rest of the process runs on. Start at `generateCertificateAuthority`.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import forge from 'node-forge';

export interface KeyPair {
  certPem: string;
  keyPem: string;
}

export type CertificateAuthority = KeyPair;

export interface ServingNames {
  dnsNames: string[];
  ipAddresses: string[];
  /** Default: the first DNS name, else the first address. */
  commonName?: string;
}

export interface CertificateInfo {
  notBeforeMs: number;
  notAfterMs: number;
  dnsNames: string[];
  ipAddresses: string[];
  isCa: boolean;
}

export const DAY_MS = 24 * 60 * 60 * 1000;

function rsaKeys(): { publicKeyPem: string; privateKeyPem: string } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f; // a positive serial: the top bit clear
  return bytes.toString('hex');
}

function newCertificate(nowMs: number, days: number): { cert: forge.pki.Certificate; keyPem: string } {
  const keys = rsaKeys();
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(keys.publicKeyPem);
  cert.serialNumber = serialNumber();
  // An hour of slack for peers whose clocks run a little behind.
  cert.validity.notBefore = new Date(nowMs - 60 * 60 * 1000);
  cert.validity.notAfter = new Date(nowMs + days * DAY_MS);
  return { cert, keyPem: keys.privateKeyPem };
}

/** A self-signed CA valid for `days` from `nowMs`. */
export function generateCertificateAuthority(nowMs: number, days: number, commonName: string): CertificateAuthority {
  const { cert, keyPem } = newCertificate(nowMs, days);
  const subject = [{ name: 'commonName', value: commonName }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(keyPem), forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem };
}

/** A serving certificate for `names`, signed by `ca`, valid for `days` from `nowMs`. */
export function issueServingCertificate(ca: CertificateAuthority, names: ServingNames, nowMs: number, days: number): KeyPair {
  const { cert, keyPem } = newCertificate(nowMs, days);
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  cert.setSubject([{ name: 'commonName', value: names.commonName ?? names.dnsNames[0] ?? names.ipAddresses[0] ?? 'localhost' }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [...names.dnsNames.map((value) => ({ type: 2, value })), ...names.ipAddresses.map((ip) => ({ type: 7, ip }))] },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(ca.keyPem), forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem };
}

/**
 * A client certificate (extended key usage clientAuth) for `commonName`,
 * signed by `ca`: what an API server presents to a webhook that asks for
 * client authentication (`--client-ca-file`).
 */
export function issueClientCertificate(ca: CertificateAuthority, commonName: string | readonly string[], nowMs: number, days: number): KeyPair {
  const { cert, keyPem } = newCertificate(nowMs, days);
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  // Several common names are legal X.509 (tests of who reads which one); one is the rule.
  cert.setSubject((typeof commonName === 'string' ? [commonName] : commonName).map((value) => ({ name: 'commonName', value })));
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', clientAuth: true },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(ca.keyPem), forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem };
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
