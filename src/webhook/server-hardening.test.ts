/**
 * The webhook server against hostile callers (issue 14): endless and oversized
 * bodies (finding 2), weak TLS suites (finding 6) and client-certificate
 * authentication (finding 1: who may call the webhook).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { realClock } from '../clock/clock.ts';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { issueClientCertificate } from '../client/tls-certificates.ts';
import { tlsHandshake, uploadUntilStopped } from '../testing/hostile-client.ts';
import { allowed, MAX_ADMISSION_BODY_BYTES } from './admission-review.ts';
import { generateCertificateAuthority, issueServingCertificate } from './cert-generation.ts';
import { staticCertificates } from './certs.ts';
import { ClientCaFile, clientCaProblem, staticClientAuth } from './client-auth.ts';
import { MUTATE_POD_PATH, startWebhookServer, type WebhookServer } from './server.ts';

const fixture = (name: string): string => readFileSync(new URL(`../testing/fixtures/${name}`, import.meta.url), 'utf8');
const now = realClock().now();
const serverCa = generateCertificateAuthority(now);
const servingPair = issueServingCertificate(serverCa, { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] }, now);

function post(server: WebhookServer, options: { cert?: string; key?: string } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${server.url}${MUTATE_POD_PATH}`,
      { method: 'POST', ca: serverCa.certPem, agent: false, headers: { 'content-type': 'application/json' }, ...(options.cert === undefined ? {} : { cert: options.cert, key: options.key }) },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(fixture('pod-create.json'));
  });
}

async function plainServer(options: Partial<Parameters<typeof startWebhookServer>[0]> = {}): Promise<WebhookServer> {
  return startWebhookServer({
    clock: new VirtualClock(),
    host: '127.0.0.1',
    port: 0,
    certificates: staticCertificates(servingPair),
    handlers: { [MUTATE_POD_PATH]: async (r) => allowed(r.uid) },
    ...options,
  });
}

describe('finding 2: a chunked request body is never cut off (webhook server)', () => {
  let server: WebhookServer;
  before(async () => {
    server = await plainServer();
  });
  after(() => server.close());

  test('an endless chunked review is answered 413 at the limit and its connection closed; the server keeps serving', async () => {
    const out = await uploadUntilStopped(server.url, { path: MUTATE_POD_PATH, ca: serverCa.certPem, keepSending: true });
    assert.equal(out.status, 413);
    assert.match(out.body, new RegExp(`limit is ${MAX_ADMISSION_BODY_BYTES} bytes`));
    assert.equal(out.connection, 'close');
    assert.ok(out.closedByServer, 'the server closed the connection');
    assert.ok(out.bytesSent < 64 * 1024 * 1024, `the server stopped reading: ${out.bytesSent} bytes sent`);
    assert.equal((await post(server)).status, 200);
  });

  test('a Content-Length of 10 GB is refused before the body is read', async () => {
    const out = await uploadUntilStopped(server.url, { path: MUTATE_POD_PATH, ca: serverCa.certPem, contentLength: 10 * 1024 ** 3, keepSending: true });
    assert.equal(out.status, 413);
    assert.ok(out.closedByServer);
    assert.ok(out.bytesSent < 64 * 1024 * 1024, `${out.bytesSent} bytes sent`);
  });

  // Routes that read no body: answered with Connection: close, then the connection is closed instead of read on.
  for (const c of [
    { method: 'GET', path: '/healthz', status: 200 },
    { method: 'GET', path: MUTATE_POD_PATH, status: 405 },
    { method: 'PUT', path: MUTATE_POD_PATH, status: 405 },
    { method: 'POST', path: '/no-such-webhook', status: 404 },
  ]) {
    test(`an endless body on ${c.method} ${c.path} (which reads none): ${c.status}, and the connection is closed, not read on`, async () => {
      const out = await uploadUntilStopped(server.url, { method: c.method, path: c.path, ca: serverCa.certPem, keepSending: true });
      assert.equal(out.status, c.status);
      assert.equal(out.connection, 'close');
      assert.ok(out.closedByServer, 'the server closed the connection');
      assert.ok(out.bytesSent < 64 * 1024 * 1024, `${out.bytesSent} bytes sent`);
    });
  }
});

describe('finding 6: TLS 1.2 also offers CBC suites without forward secrecy (webhook server)', () => {
  let server: WebhookServer;
  before(async () => {
    server = await plainServer();
  });
  after(() => server.close());

  const refused = ['AES128-SHA', 'AES256-SHA256', 'ECDHE-RSA-AES128-SHA', 'ECDHE-RSA-AES256-SHA384', 'DHE-RSA-AES128-GCM-SHA256', 'AES128-GCM-SHA256'];
  for (const cipher of refused) {
    test(`a TLS 1.2 client offering only ${cipher} is refused`, async () => {
      const out = await tlsHandshake(server.port, { ca: serverCa.certPem, ciphers: cipher, maxVersion: 'TLSv1.2' });
      assert.equal(out.ok, false, `negotiated ${out.cipher ?? ''}`);
    });
  }

  test('TLS 1.2 with ECDHE + AES-GCM or ChaCha20 is accepted; a modern client gets TLS 1.3', async () => {
    for (const cipher of ['ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES256-GCM-SHA384', 'ECDHE-RSA-CHACHA20-POLY1305']) {
      const out = await tlsHandshake(server.port, { ca: serverCa.certPem, ciphers: cipher, maxVersion: 'TLSv1.2' });
      assert.deepEqual([out.ok, out.protocol, out.cipher], [true, 'TLSv1.2', cipher]);
    }
    const modern = await tlsHandshake(server.port, { ca: serverCa.certPem });
    assert.deepEqual([modern.ok, modern.protocol], [true, 'TLSv1.3']);
  });

  test('TLS 1.0 and 1.1 stay refused', async () => {
    const out = await tlsHandshake(server.port, { ca: serverCa.certPem, minVersion: 'TLSv1', maxVersion: 'TLSv1.1' });
    assert.equal(out.ok, false);
  });
});

describe('finding 1: anyone who can reach the webhook port can call it — client certificates (webhook server)', () => {
  const clientCa = generateCertificateAuthority(now, 30, 'apiserver-client-ca');
  const otherCa = generateCertificateAuthority(now, 30, 'someone-else');
  const apiserver = issueClientCertificate(clientCa, 'kube-apiserver-admission', now, 30);
  const stranger = issueClientCertificate(otherCa, 'kube-apiserver-admission', now, 30);
  const wrongName = issueClientCertificate(clientCa, 'some-user', now, 30);

  test('with a client CA: no certificate and a certificate of another CA are refused at the handshake; the API server\'s is served', async () => {
    const server = await plainServer({ clientAuth: staticClientAuth(clientCa.certPem) });
    try {
      await assert.rejects(post(server));
      await assert.rejects(post(server, { cert: stranger.certPem, key: stranger.keyPem }));
      assert.equal((await post(server, { cert: apiserver.certPem, key: apiserver.keyPem })).status, 200);
      assert.equal((await post(server, { cert: wrongName.certPem, key: wrongName.keyPem })).status, 200, 'any name the CA signed, without allowed names');
    } finally {
      await server.close();
    }
  });

  test('with allowed names, a certificate the CA signed for another name is answered 403', async () => {
    const server = await plainServer({ clientAuth: staticClientAuth(clientCa.certPem, ['kube-apiserver-admission']) });
    try {
      const denied = await post(server, { cert: wrongName.certPem, key: wrongName.keyPem });
      assert.equal(denied.status, 403);
      assert.match(denied.body, /some-user.*--client-cert-allowed-names/);
      // A refused caller's body is not read either.
      const endless = await uploadUntilStopped(server.url, { path: MUTATE_POD_PATH, ca: serverCa.certPem, cert: wrongName.certPem, key: wrongName.keyPem, keepSending: true });
      assert.equal(endless.status, 403);
      assert.ok(endless.closedByServer && endless.bytesSent < 64 * 1024 * 1024, `${endless.bytesSent} bytes sent`);
      assert.equal((await post(server, { cert: apiserver.certPem, key: apiserver.keyPem })).status, 200);
    } finally {
      await server.close();
    }
  });

  test('with allowed names, of several common names the last one decides (as Go and the API server\'s front-proxy auth read a subject)', async () => {
    const allowedFirst = issueClientCertificate(clientCa, ['kube-apiserver-admission', 'some-user'], now, 30);
    const allowedLast = issueClientCertificate(clientCa, ['some-user', 'kube-apiserver-admission'], now, 30);
    const server = await plainServer({ clientAuth: staticClientAuth(clientCa.certPem, ['kube-apiserver-admission']) });
    try {
      const denied = await post(server, { cert: allowedFirst.certPem, key: allowedFirst.keyPem });
      assert.equal(denied.status, 403, 'an allowed name before the last common name does not count');
      assert.match(denied.body, /some-user/);
      assert.doesNotMatch(denied.body, /kube-apiserver-admission/, 'only the name that decides is reported');
      assert.equal((await post(server, { cert: allowedLast.certPem, key: allowedLast.keyPem })).status, 200);
    } finally {
      await server.close();
    }
  });

  test('--client-ca-file is re-read: a rotated CA is taken without a restart; a broken file keeps the old one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ws-client-ca-'));
    const file = join(dir, 'ca.crt');
    writeFileSync(file, clientCa.certPem);
    const clock = new VirtualClock();
    const source = new ClientCaFile({ file, clock, pollMs: 10_000 });
    await source.start();
    const server = await plainServer({ clock, clientAuth: source });
    try {
      assert.equal((await post(server, { cert: apiserver.certPem, key: apiserver.keyPem })).status, 200);
      writeFileSync(file, 'not a certificate');
      assert.equal(await source.check(), false);
      assert.equal((await post(server, { cert: apiserver.certPem, key: apiserver.keyPem })).status, 200);
      writeFileSync(file, otherCa.certPem);
      await clock.advance(10_000);
      assert.equal((await post(server, { cert: stranger.certPem, key: stranger.keyPem })).status, 200);
      await assert.rejects(post(server, { cert: apiserver.certPem, key: apiserver.keyPem }));
    } finally {
      source.stop();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a client CA file must hold CA certificates', async () => {
    assert.match(clientCaProblem('') ?? '', /no PEM certificate/);
    assert.match(clientCaProblem(apiserver.certPem) ?? '', /not a CA certificate/);
    assert.equal(clientCaProblem(clientCa.certPem), undefined);
    await assert.rejects(new ClientCaFile({ file: '/nonexistent/ca.crt', clock: new VirtualClock() }).start(), /--client-ca-file \/nonexistent\/ca.crt/);
  });
});
