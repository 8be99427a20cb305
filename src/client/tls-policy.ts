/**
 * The TLS policy of every HTTPS server this project runs (the webhook server
 * and the embedded API server): TLS 1.2 or 1.3, and in TLS 1.2 only ECDHE key
 * exchange with AEAD ciphers (AES-GCM, ChaCha20-Poly1305) — forward secrecy and
 * no CBC, the set Mozilla's "intermediate" profile and Kubernetes' own
 * hardening guides recommend. TLS 1.3 is preferred: a server picks the
 * highest version both sides offer, and every TLS 1.3 suite is AEAD.
 *
 * Node's defaults also allow DHE and CBC suites in TLS 1.2 (e.g.
 * ECDHE-RSA-AES128-SHA256, and with OpenSSL's `HIGH` the RSA-kex AES128-SHA),
 * which is what issue 14 found. Start at `SERVER_TLS_POLICY`.
 */
import type { SecureVersion } from 'node:tls';

/** TLS 1.3 suites (all AEAD), then TLS 1.2 ECDHE + AEAD suites, strongest first. */
export const SERVER_CIPHERS = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');

export interface ServerTlsPolicy {
  minVersion: SecureVersion;
  maxVersion: SecureVersion;
  ciphers: string;
  honorCipherOrder: boolean;
}

/** Spread into `https.createServer` / `setSecureContext` options. */
export const SERVER_TLS_POLICY: Readonly<ServerTlsPolicy> = Object.freeze({
  minVersion: 'TLSv1.2',
  maxVersion: 'TLSv1.3',
  ciphers: SERVER_CIPHERS,
  honorCipherOrder: true,
});
