/**
 * The certificate of the secure metrics endpoint: `tls.crt`/`tls.key` of a
 * directory (`--metrics-cert-dir`, reloaded when they change, as the
 * webhook's `--cert-dir`), else — as controller-runtime's metrics server
 * without a cert dir — a self-signed one made at start and kept in memory
 * (a CA of its own and a serving certificate for `localhost`, 127.0.0.1 and
 * the host's name; dated by the host's clock, since TLS peers check validity
 * against real time; valid ten years: nothing can verify it anyway, so
 * scrapers skip verification or are given a certificate of yours).
 * Start at `metricsCertificates`.
 */
import { hostname } from 'node:os';
import { realClock, type Clock } from '../clock/clock.ts';
import { silentLogger, type Logger } from '../client/logger.ts';
import { DEFAULT_CA_DAYS, generateCertificateAuthority, issueServingCertificate } from '../webhook/cert-generation.ts';
import { CertDirSource, staticCertificates, type CertificateSource } from '../webhook/certs.ts';

export interface MetricsCertificateOptions {
  certDir?: string;
  clock: Clock;
  log?: Logger;
  /** What a self-signed certificate is dated by (default the host's clock). */
  validityClock?: Pick<Clock, 'now'>;
}

export async function metricsCertificates(options: MetricsCertificateOptions): Promise<CertificateSource & { stop(): void }> {
  if (options.certDir !== undefined) {
    const dir = new CertDirSource({ dir: options.certDir, clock: options.clock, log: options.log ?? silentLogger });
    await dir.start();
    return dir;
  }
  const now = (options.validityClock ?? realClock()).now();
  const ca = generateCertificateAuthority(now, DEFAULT_CA_DAYS, 'workloadspread-metrics-ca');
  const host = hostname().toLowerCase();
  const dnsNames = ['localhost', ...(host !== '' && host !== 'localhost' ? [host] : [])];
  const pair = issueServingCertificate(ca, { dnsNames, ipAddresses: ['127.0.0.1'] }, now, DEFAULT_CA_DAYS);
  return { ...staticCertificates(pair), stop: () => {} };
}
