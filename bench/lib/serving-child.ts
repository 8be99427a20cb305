/**
 * A webhook server in a process of its own, for bench/webhook-serving.ts, so
 * that process's CPU is the server's alone. argv[2] picks it:
 * - `manager`: the manager's server (`startWebhookServer`), its handler
 *   admitting every review unchanged — what serving costs before admission
 *   decides anything;
 * - `bare`: `node:https` with the same TLS policy and certificate, reading the
 *   body and answering it with `JSON.parse` and `JSON.stringify`, nothing else.
 * Messages in: 'reset' (start counting CPU; answered 'ok'), 'cpu' (answered
 * with `{ user, system }` µs since the reset). Message out at start: `{ port }`.
 */
import { createServer } from 'node:https';
import { realClock } from '../../src/clock/clock.ts';
import { SERVER_TLS_POLICY } from '../../src/client/tls-policy.ts';
import { generateCertificateAuthority, issueServingCertificate } from '../../src/webhook/cert-generation.ts';
import { staticCertificates } from '../../src/webhook/certs.ts';
import { MUTATE_POD_PATH, startWebhookServer } from '../../src/webhook/server.ts';

export type ServingKind = 'manager' | 'bare';

async function listen(kind: ServingKind): Promise<number> {
  const now = Date.now();
  const pair = issueServingCertificate(generateCertificateAuthority(now), { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] }, now);
  if (kind === 'manager') {
    const server = await startWebhookServer({
      clock: realClock(),
      certificates: staticCertificates(pair),
      host: '127.0.0.1',
      port: 0,
      handlers: { [MUTATE_POD_PATH]: (request) => Promise.resolve({ uid: request.uid, allowed: true }) },
    });
    return server.port;
  }
  const server = createServer({ ...SERVER_TLS_POLICY, key: pair.keyPem, cert: pair.certPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: { uid: string } };
      const text = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true } });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : 0;
}

const kind = process.argv[2] === 'bare' ? 'bare' : 'manager';
const port = await listen(kind);
let base = process.cpuUsage();
process.on('message', (message: unknown) => {
  if (message === 'reset') {
    base = process.cpuUsage();
    process.send?.('ok');
  } else if (message === 'cpu') {
    process.send?.(process.cpuUsage(base));
  }
});
process.on('disconnect', () => process.exit(0));
process.send?.({ port });
