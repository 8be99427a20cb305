import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type PeerCertificate } from 'node:tls';
import { after, before, describe, test } from 'node:test';
import { realClock } from '../clock/clock.ts';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { allowed, MAX_ADMISSION_BODY_BYTES, patched, type AdmissionRequest } from './admission-review.ts';
import { generateCertificateAuthority, issueServingCertificate } from './cert-generation.ts';
import { CertDirSource, staticCertificates, type KeyPair } from './certs.ts';
import { HEALTHZ_PATH, MUTATE_POD_PATH, startWebhookServer, VALIDATE_POD_PATH, type WebhookServer } from './server.ts';

const fixture = (name: string): string => readFileSync(new URL(`../testing/fixtures/${name}`, import.meta.url), 'utf8');

interface Answer {
  status: number;
  body: string;
  json: Record<string, unknown> | undefined;
}

function post(server: WebhookServer, ca: string, path: string, body: string | Buffer, options: { method?: string; contentType?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${server.url}${path}`,
      { method: options.method ?? 'POST', ca, headers: { 'content-type': options.contentType ?? 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: Record<string, unknown> | undefined;
          try {
            json = JSON.parse(text) as Record<string, unknown>;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body: text, json });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function servedCertificate(server: WebhookServer, ca: string, minVersion?: 'TLSv1' | 'TLSv1.1', maxVersion?: 'TLSv1' | 'TLSv1.1'): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: server.port, ca, servername: 'localhost', ...(minVersion ? { minVersion } : {}), ...(maxVersion ? { maxVersion } : {}) }, () => {
      const cert = socket.getPeerCertificate();
      socket.end();
      resolve(cert);
    });
    socket.on('error', reject);
  });
}

const response = (a: Answer): Record<string, unknown> => (a.json?.['response'] ?? {}) as Record<string, unknown>;

describe('webhook server', () => {
  const now = realClock().now();
  const ca = generateCertificateAuthority(now);
  const pair = issueServingCertificate(ca, { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] }, now);
  const clock = new VirtualClock();
  let server: WebhookServer;
  let release: (() => void) | undefined;
  let releaseWatched: (() => void) | undefined;
  const callerGone: boolean[] = [];
  const seen: AdmissionRequest[] = [];
  const metrics: { webhook: string; operation: string; result: string }[] = [];
  const bad: { webhook: string; code: number }[] = [];

  before(async () => {
    server = await startWebhookServer({
      clock,
      host: '127.0.0.1',
      port: 0,
      certificates: staticCertificates(pair),
      metrics: { admission: (webhook, operation, result) => metrics.push({ webhook, operation, result }), badRequest: (webhook, code) => bad.push({ webhook, code }) },
      handlers: {
        [MUTATE_POD_PATH]: async (req, context) => {
          seen.push(req);
          if (req.name === 'slow') await new Promise<void>((r) => (release = r));
          if (req.name === 'watched') {
            await new Promise<void>((r) => (releaseWatched = r));
            callerGone.push(context.signal.aborted);
          }
          if (req.name === 'throw') throw new Error('handler exploded');
          if (req.name === 'wrong-uid') return allowed('not-the-request-uid');
          return patched(req.uid, req.object, { ...(req.object as object), touched: true });
        },
        [VALIDATE_POD_PATH]: async (req) => allowed(req.uid, ['seen']),
      },
    });
  });
  after(async () => server.close());

  test('answers a review with an AdmissionReview that echoes the uid', async () => {
    const a = await post(server, ca.certPem, MUTATE_POD_PATH, fixture('pod-create.json'));
    assert.equal(a.status, 200);
    assert.equal(a.json?.['apiVersion'], 'admission.k8s.io/v1');
    assert.equal(a.json?.['kind'], 'AdmissionReview');
    assert.equal(response(a)['uid'], '0f0e6c7a-1b52-4d56-9a8e-3a1c1a0b0001');
    assert.equal(response(a)['patchType'], 'JSONPatch');
    assert.deepEqual(metrics.at(-1), { webhook: MUTATE_POD_PATH, operation: 'CREATE', result: 'patched' });
  });

  test('routes by path', async () => {
    const a = await post(server, ca.certPem, VALIDATE_POD_PATH, fixture('pod-delete.json'));
    assert.deepEqual(response(a)['warnings'], ['seen']);
    assert.equal(response(a)['uid'], '0f0e6c7a-1b52-4d56-9a8e-3a1c1a0b0002');
  });

  const withName = (name: string): string => {
    const review = JSON.parse(fixture('pod-create.json')) as { request: Record<string, unknown> };
    review.request['name'] = name;
    return JSON.stringify(review);
  };

  test('a handler that throws becomes a 500 inside the review; the server keeps serving', async () => {
    const a = await post(server, ca.certPem, MUTATE_POD_PATH, withName('throw'));
    assert.equal(a.status, 200);
    assert.equal(response(a)['allowed'], false);
    assert.deepEqual(response(a)['status'], { code: 500, message: 'handler exploded', status: 'Failure' });
    assert.equal(response(a)['uid'], '0f0e6c7a-1b52-4d56-9a8e-3a1c1a0b0001');
    const b = await post(server, ca.certPem, MUTATE_POD_PATH, fixture('pod-create.json'));
    assert.equal(response(b)['allowed'], true);
  });

  test('the response uid is always the request uid', async () => {
    const a = await post(server, ca.certPem, MUTATE_POD_PATH, withName('wrong-uid'));
    assert.equal(response(a)['uid'], '0f0e6c7a-1b52-4d56-9a8e-3a1c1a0b0001');
  });

  test('a handler learns that its caller is gone (it closed the connection) and not otherwise', async () => {
    const started = (): Promise<void> => new Promise((resolve) => {
      const poll = (): void => (releaseWatched !== undefined ? resolve() : void setTimeout(poll, 5));
      poll();
    });
    const answered = post(server, ca.certPem, MUTATE_POD_PATH, withName('watched'));
    await started();
    const first = releaseWatched as (() => void) | undefined;
    releaseWatched = undefined;
    first?.();
    assert.equal((await answered).status, 200);

    const req = request(`${server.url}${MUTATE_POD_PATH}`, { method: 'POST', ca: ca.certPem, headers: { 'content-type': 'application/json' } });
    req.on('error', () => {});
    req.end(withName('watched'));
    await started();
    req.destroy();
    await new Promise((r) => setTimeout(r, 100));
    (releaseWatched as (() => void) | undefined)?.();
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(callerGone, [false, true]);
  });

  const badBodies: { name: string; body: string | Buffer; code: number; message: RegExp; contentType?: string }[] = [
    { name: 'malformed JSON', body: '{"apiVersion": "admission.k8s.io/v1", "kind": ', code: 400, message: /couldn't decode/ },
    { name: 'wrong kind', body: fixture('pod-create.json').replace('"kind": "AdmissionReview"', '"kind": "ConfigMap"'), code: 400, message: /kind AdmissionReview/ },
    { name: 'missing request', body: '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}', code: 400, message: /no request/ },
    { name: 'oversized body', body: Buffer.alloc(MAX_ADMISSION_BODY_BYTES + 10, 0x20), code: 413, message: /too large/ },
    { name: 'wrong content type', body: fixture('pod-create.json'), code: 400, message: /expected application\/json/, contentType: 'text/plain' },
  ];
  for (const c of badBodies) {
    test(`${c.name} → ${c.code} with a message, and the server keeps serving`, async () => {
      const a = await post(server, ca.certPem, MUTATE_POD_PATH, c.body, c.contentType !== undefined ? { contentType: c.contentType } : {});
      assert.equal(a.status, c.code);
      const status = response(a)['status'] as { code: number; message: string };
      assert.equal(status.code, c.code);
      assert.match(status.message, c.message);
      assert.deepEqual(bad.at(-1), { webhook: MUTATE_POD_PATH, code: c.code });
      const again = await post(server, ca.certPem, MUTATE_POD_PATH, fixture('pod-create.json'));
      assert.equal(again.status, 200);
    });
  }

  test('unknown path → 404, GET on a webhook → 405, /healthz → 200', async () => {
    assert.equal((await post(server, ca.certPem, '/nope', '{}')).status, 404);
    assert.equal((await post(server, ca.certPem, MUTATE_POD_PATH, '', { method: 'GET' })).status, 405);
    const health = await post(server, ca.certPem, HEALTHZ_PATH, '', { method: 'GET' });
    assert.equal(health.status, 200);
    assert.equal(health.body, 'ok');
  });

  test('a request in flight is a tracked activity of the clock', async () => {
    const pending = post(server, ca.certPem, MUTATE_POD_PATH, withName('slow'));
    while (release === undefined) await new Promise((r) => setImmediate(r));
    assert.ok(clock.busyLabels().some((l) => l.startsWith(`admission ${MUTATE_POD_PATH}`)), clock.busyLabels().join(','));
    assert.equal(server.inFlight(), 1);
    release();
    release = undefined;
    assert.equal((await pending).status, 200);
    await clock.quiesce();
    assert.equal(clock.busy, 0);
  });

  test('TLS below 1.2 is refused', async () => {
    await assert.rejects(servedCertificate(server, ca.certPem, 'TLSv1', 'TLSv1.1'));
    const cert = await servedCertificate(server, ca.certPem);
    assert.ok(cert.subject !== undefined);
  });
});

describe('webhook server with --cert-dir', () => {
  const now = realClock().now();
  const ca = generateCertificateAuthority(now);
  const dir = mkdtempSync(join(tmpdir(), 'ws-certdir-'));
  const write = (pair: KeyPair): void => {
    writeFileSync(join(dir, 'tls.crt'), pair.certPem);
    writeFileSync(join(dir, 'tls.key'), pair.keyPem);
  };
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('serves the files, reloads them when they change on the next poll, ignores a mismatched pair', async () => {
    const clock = new VirtualClock();
    const first = issueServingCertificate(ca, { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] }, now);
    write(first);
    const source = new CertDirSource({ dir, clock, pollMs: 10_000 });
    await source.start();
    const server = await startWebhookServer({ clock, host: '127.0.0.1', port: 0, certificates: source, handlers: { [MUTATE_POD_PATH]: async (r) => allowed(r.uid) } });
    try {
      const serial1 = (await servedCertificate(server, ca.certPem)).serialNumber;
      const second = issueServingCertificate(ca, { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] }, now);
      write(second);
      assert.equal((await servedCertificate(server, ca.certPem)).serialNumber, serial1, 'nothing changes before the poll');
      await clock.advance(10_000);
      const serial2 = (await servedCertificate(server, ca.certPem)).serialNumber;
      assert.notEqual(serial2, serial1);

      // A rotation caught half-way (new cert, old key) is not loaded.
      const third = issueServingCertificate(ca, { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] }, now);
      writeFileSync(join(dir, 'tls.crt'), third.certPem);
      assert.equal(await source.check(), false);
      assert.equal((await servedCertificate(server, ca.certPem)).serialNumber, serial2);
      writeFileSync(join(dir, 'tls.key'), third.keyPem);
      assert.equal(await source.check(), true);
      assert.notEqual((await servedCertificate(server, ca.certPem)).serialNumber, serial2);
      const a = await post(server, ca.certPem, MUTATE_POD_PATH, fixture('pod-create.json'));
      assert.equal(a.status, 200);
    } finally {
      source.stop();
      await server.close();
    }
  });

  test('start fails clearly when the files are missing', async () => {
    const source = new CertDirSource({ dir: join(dir, 'absent'), clock: new VirtualClock() });
    await assert.rejects(source.start(), /tls\.crt/);
  });
});
