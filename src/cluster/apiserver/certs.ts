/**
 * Certificates for HTTPS on loopback: a self-signed CA and serving
 * certificates it signs (RSA 2048, SHA-256), generated with node:crypto keys
 * and assembled with node-forge. Validity is measured in real time because the
 * TLS stacks that verify it use the host clock, whatever clock the cluster runs on.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';
import { realClock } from '../../clock/clock.ts';

export interface CertificateAuthority {
  certPem: string;
  keyPem: string;
}

export interface ServingCertificate {
  /** The CA that signed it (clients trust this). */
  caPem: string;
  certPem: string;
  keyPem: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;

function rsaKeyPair(): { publicKeyPem: string; privateKeyPem: string } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

function serial(): string {
  // A positive serial number: clear the top bit.
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString('hex');
}

function validity(cert: forge.pki.Certificate, days: number): void {
  const now = realClock().now();
  cert.validity.notBefore = new Date(now - 60 * 60 * 1000);
  cert.validity.notAfter = new Date(now + days * DAY_MS);
}

export function createCertificateAuthority(commonName = 'workloadspread-embedded-ca', days = 3650): CertificateAuthority {
  const keys = rsaKeyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(keys.publicKeyPem);
  cert.serialNumber = serial();
  validity(cert, days);
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
  commonName?: string;
  dnsNames?: string[];
  ipAddresses?: string[];
  days?: number;
}

/** A server certificate signed by `ca`, for the given DNS names and IP addresses. */
export function issueServingCertificate(ca: CertificateAuthority, names: ServingNames = {}): ServingCertificate {
  const dnsNames = names.dnsNames ?? ['localhost'];
  const ipAddresses = names.ipAddresses ?? ['127.0.0.1', '::1'];
  const keys = rsaKeyPair();
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(keys.publicKeyPem);
  cert.serialNumber = serial();
  validity(cert, names.days ?? 365);
  cert.setSubject([{ name: 'commonName', value: names.commonName ?? dnsNames[0] ?? 'localhost' }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [...dnsNames.map((value) => ({ type: 2, value })), ...ipAddresses.map((ip) => ({ type: 7, ip }))] },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(ca.keyPem), forge.md.sha256.create());
  return { caPem: ca.certPem, certPem: forge.pki.certificateToPem(cert), keyPem: keys.privateKeyPem };
}

/** A fresh CA and a loopback serving certificate (localhost, 127.0.0.1, ::1). */
export function generateServingCertificate(): ServingCertificate {
  return issueServingCertificate(createCertificateAuthority());
}
