/**
 * Admission webhooks called from the API server's webhook thread
 * (`webhookThread: true`, webhook-thread.ts): the same answers and the same
 * errors as calls made from the server's own thread, and a call's time as
 * that thread measured it — which does not carry the server's own queue.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { realClock } from '../../clock/clock.ts';
import { createCertificateAuthority } from '../../client/loopback-certificates.ts';
import { patch, startWebhookServer, type TestWebhookServer } from '../../testing/webhook-server.ts';
import { pod, startTestCluster, testCertificate, type TestCluster } from '../../testing/apiserver-bed.ts';
import type { WebhookCallEnd } from './admission-webhooks.ts';

const clock = realClock();
const ca = createCertificateAuthority('webhook-thread-ca');
let c: TestCluster;
let hooks: TestWebhookServer;
let counter = 0;

before(async () => {
  c = await startTestCluster(clock, testCertificate(), { webhookThread: true });
  hooks = await startWebhookServer({ clock, ca });
});
after(async () => {
  await c.close();
  await hooks.close();
});

/** A namespace of its own and a mutating configuration of one webhook scoped to it. */
async function scoped(clientConfig: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<string> {
  const ns = `thread-${++counter}`;
  await c.core.createNamespace({ body: { metadata: { name: ns } } });
  const r = await c.server.control.create({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: ns },
    webhooks: [
      {
        name: 'thread.hooks.example.com',
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        clientConfig,
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
        ...extra,
      },
    ],
  });
  assert.ok(r.ok, r.ok ? '' : r.status.message);
  return ns;
}

async function createError(ns: string): Promise<string> {
  try {
    await c.core.createNamespacedPod({ namespace: ns, body: pod('p', { namespace: ns }) });
  } catch (err) {
    return String((err as { body?: unknown }).body);
  }
  assert.fail('the pod was created');
}

describe('admission webhooks called from the webhook thread', () => {
  test('the patch is applied, and the observer is told the time the thread measured', async () => {
    hooks.handle('/thread/label', () => patch([{ op: 'add', path: '/metadata/labels/threaded', value: 'yes' }]));
    const ns = await scoped({ url: hooks.urlFor('/thread/label'), caBundle: hooks.caBundle });
    const ends: WebhookCallEnd[] = [];
    const stop = c.server.control.onWebhookCall(() => (end) => ends.push(end));
    const started = performance.now();
    const created = await c.core.createNamespacedPod({ namespace: ns, body: pod('p', { namespace: ns, labels: { app: 'web' } }) });
    const wall = performance.now() - started;
    stop();
    assert.equal(created.metadata?.labels?.['threaded'], 'yes');
    assert.equal(ends.length, 1);
    assert.equal(ends[0]?.answered, true);
    assert.ok(ends[0]!.durationMs > 0 && ends[0]!.durationMs <= wall, `${ends[0]?.durationMs} ms measured on the thread, ${wall} ms for the whole request`);
  });

  test("the time does not carry the API server's own queue: a busy event loop after the answer is not counted", async () => {
    hooks.handle('/thread/busy', () => {
      // The answer goes out first; then this (the API server's) thread is busy for 300 ms before it can read it.
      setImmediate(() => {
        const until = performance.now() + 300;
        while (performance.now() < until);
      });
      return patch([]);
    });
    const ns = await scoped({ url: hooks.urlFor('/thread/busy'), caBundle: hooks.caBundle });
    const ends: WebhookCallEnd[] = [];
    const stop = c.server.control.onWebhookCall(() => (end) => ends.push(end));
    const started = performance.now();
    await c.core.createNamespacedPod({ namespace: ns, body: pod('p', { namespace: ns }) });
    const wall = performance.now() - started;
    stop();
    assert.ok(wall >= 300, `${wall} ms`);
    assert.ok(ends[0]!.durationMs < 200, `${ends[0]?.durationMs} ms measured on the thread`);
  });

  test('a refused connection fails the call with the Go client\'s words (failurePolicy Fail)', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const ns = await scoped({ url: `https://127.0.0.1:${port}/gone`, caBundle: hooks.caBundle });
    const message = await createError(ns);
    assert.match(message, new RegExp(`failed calling webhook \\\\"thread.hooks.example.com\\\\": failed to call webhook: Post \\\\"https://127.0.0.1:${port}/gone\\?timeout=10s\\\\": dial tcp 127.0.0.1:${port}: connect: connection refused`));
  });

  test('a webhook signed by a CA the configuration does not trust is refused as x509 says', async () => {
    hooks.handle('/thread/untrusted', () => patch([]));
    const other = createCertificateAuthority('not-the-webhook-ca');
    const ns = await scoped({ url: hooks.urlFor('/thread/untrusted'), caBundle: Buffer.from(other.certPem).toString('base64') });
    assert.match(await createError(ns), /x509: certificate signed by unknown authority/);
  });

  test('a webhook that does not answer within timeoutSeconds fails with context deadline exceeded', async () => {
    hooks.handle('/thread/slow', () => new Promise((resolve) => setTimeout(() => resolve(patch([])), 3_000)));
    const ns = await scoped({ url: hooks.urlFor('/thread/slow'), caBundle: hooks.caBundle }, { timeoutSeconds: 1 });
    const started = performance.now();
    const message = await createError(ns);
    const waited = performance.now() - started;
    assert.match(message, /context deadline exceeded/);
    assert.ok(waited >= 900 && waited < 2_900, `${waited} ms`);
  });
});
