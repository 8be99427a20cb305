/**
 * Certificates for HTTPS on loopback: a self-signed CA, serving certificates
 * it signs, and the client identity the embedded API server presents to
 * admission webhooks (built on tls-certificates.ts). The embedded cluster
 * serves with them, and tests and benchmarks make their servers' certificates
 * with them. Validity is measured in real time because the TLS stacks that
 * verify it use the host clock, whatever clock the cluster runs on.
 */
import { realClock } from '../clock/clock.ts';
import { generateCertificateAuthority, issueClientCertificate, issueServingCertificate as issue, type CertificateAuthority, type ServingNames } from './tls-certificates.ts';

export type { CertificateAuthority };

export interface ServingCertificate {
  /** The CA that signed it (clients trust this). */
  caPem: string;
  certPem: string;
  keyPem: string;
}

export function createCertificateAuthority(commonName = 'workloadspread-embedded-ca', days = 3650): CertificateAuthority {
  return generateCertificateAuthority(realClock().now(), days, commonName);
}

/** A server certificate signed by `ca`, for the given DNS names and IP addresses (default: localhost, 127.0.0.1, ::1; 365 days). */
export function issueServingCertificate(ca: CertificateAuthority, names: Partial<ServingNames> & { days?: number } = {}): ServingCertificate {
  const dnsNames = names.dnsNames ?? ['localhost'];
  const ipAddresses = names.ipAddresses ?? ['127.0.0.1', '::1'];
  const pair = issue(ca, { dnsNames, ipAddresses, commonName: names.commonName ?? dnsNames[0] ?? 'localhost' }, realClock().now(), names.days ?? 365);
  return { caPem: ca.certPem, ...pair };
}

/** A fresh CA and a loopback serving certificate (localhost, 127.0.0.1, ::1). */
export function generateServingCertificate(): ServingCertificate {
  return issueServingCertificate(createCertificateAuthority());
}

/** The client identity the embedded API server presents to admission webhooks, and the CA that signed it. */
export interface WebhookClientIdentity {
  caPem: string;
  certPem: string;
  keyPem: string;
}

/** The common name of the embedded API server's webhook client certificate. */
export const WEBHOOK_CLIENT_COMMON_NAME = 'workloadspread-embedded-apiserver';

/** A fresh CA and a client certificate it signs, for the API server's calls to webhooks. */
export function generateWebhookClientIdentity(): WebhookClientIdentity {
  const ca = createCertificateAuthority('workloadspread-embedded-webhook-client-ca');
  const pair = issueClientCertificate(ca, WEBHOOK_CLIENT_COMMON_NAME, realClock().now(), 365);
  return { caPem: ca.certPem, ...pair };
}
