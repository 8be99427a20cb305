import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { realClock } from '../clock/clock.ts';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { BUILTIN } from '../client/resources.ts';
import type { KubeObject } from '../k8s/types.ts';
import { startClientTestBed, testBedCertificate, type ClientTestBed } from '../testing/client-test-bed.ts';
import { certificateInfo, certificatesFromSecret, signedBy } from './cert-generation.ts';
import { SecretCertificates, servingNames } from './certs.ts';
import { MUTATING_CONFIGURATION_NAME, registerWebhooks, VALIDATING_CONFIGURATION_NAME, webhookConfigurations } from './registration.ts';

const DAY = 24 * 60 * 60 * 1000;
const NOW = realClock().now();

describe('SecretCertificates against the API server', () => {
  const clock = new VirtualClock();
  let bed: ClientTestBed;
  const names = servingNames({ service: { name: 'workloadspread-webhook', namespace: 'ws-system' }, webhookUrl: 'https://127.0.0.1:9443' });
  before(async () => {
    bed = await startClientTestBed(clock, testBedCertificate());
    await bed.client.create(BUILTIN.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ws-system' } });
    await registerWebhooks(bed.client, webhookConfigurations({ managerNamespace: 'ws-system', endpoint: { url: 'https://127.0.0.1:9443' } }));
  });
  after(async () => bed.close());

  const options = (validityClock = { now: () => NOW }) => ({
    client: bed.client,
    clock,
    namespace: 'ws-system',
    names,
    mutatingConfigurations: [MUTATING_CONFIGURATION_NAME],
    validatingConfigurations: [VALIDATING_CONFIGURATION_NAME],
    checkIntervalMs: 60_000,
    validityClock,
  });
  const bundles = async (): Promise<string[]> => {
    const m = await bed.client.get(BUILTIN.mutatingwebhookconfigurations, MUTATING_CONFIGURATION_NAME);
    const v = await bed.client.get(BUILTIN.validatingwebhookconfigurations, VALIDATING_CONFIGURATION_NAME);
    return [...(m['webhooks'] as KubeObject[]), ...(v['webhooks'] as KubeObject[])].map((w) => String((w['clientConfig'] as Record<string, unknown>)['caBundle']));
  };

  test('two replicas starting together share one Secret; the CA goes into every caBundle', async () => {
    const a = new SecretCertificates(options());
    const b = new SecretCertificates(options());
    await Promise.all([a.start(), b.start()]);
    try {
      assert.equal(a.current()?.certPem, b.current()?.certPem, 'both serve the same certificate');
      const secret = await bed.client.get(BUILTIN.secrets, a.secretName, { namespace: 'ws-system' });
      assert.equal(secret['type'], 'kubernetes.io/tls');
      const stored = certificatesFromSecret(secret);
      assert.equal(stored?.serving.certPem, a.current()?.certPem);
      const expected = Buffer.from(a.caBundle() ?? '').toString('base64');
      const got = await bundles();
      assert.equal(got.length, 5, 'one pod-mutating and four validating webhooks');
      assert.deepEqual(got, got.map(() => expected));
      assert.ok(stored !== undefined && signedBy(stored.serving, stored.ca));
    } finally {
      a.stop();
      b.stop();
    }
  });

  test('a restart reuses the stored certificates without writing', async () => {
    const writesBefore = bed.server.control.requestCount({ resource: 'secrets', verb: 'update' }) + bed.server.control.requestCount({ resource: 'secrets', verb: 'create' });
    const c = new SecretCertificates(options());
    await c.start();
    c.stop();
    const writesAfter = bed.server.control.requestCount({ resource: 'secrets', verb: 'update' }) + bed.server.control.requestCount({ resource: 'secrets', verb: 'create' });
    assert.equal(writesAfter, writesBefore);
  });

  test('rotation on the clock: when less than 30 days remain the serving certificate is re-issued and served', async () => {
    let wall = NOW;
    const d = new SecretCertificates(options({ now: () => wall }));
    await d.start();
    try {
      const first = d.current()?.certPem;
      const bundle = d.caBundle();
      const changes: string[] = [];
      d.onChange((pair) => changes.push(pair.certPem));
      await clock.advance(60_000);
      assert.equal(changes.length, 0, 'nothing to do while the certificate is young');
      wall = (certificateInfo(first ?? '')?.notAfterMs ?? 0) - 29 * DAY;
      await clock.advance(60_000);
      assert.equal(changes.length, 1);
      assert.notEqual(d.current()?.certPem, first);
      assert.equal(d.caBundle(), bundle, 'the CA (and so the caBundle) stays');
      const stored = certificatesFromSecret(await bed.client.get(BUILTIN.secrets, d.secretName, { namespace: 'ws-system' }));
      assert.equal(stored?.serving.certPem, d.current()?.certPem, 'the Secret holds the new pair for the other replicas');
    } finally {
      d.stop();
    }
  });

  test('a caBundle someone reset is put back at the next check', async () => {
    const e = new SecretCertificates(options());
    await e.start();
    try {
      const stored = await bed.client.get(BUILTIN.validatingwebhookconfigurations, VALIDATING_CONFIGURATION_NAME);
      const hooks = (stored['webhooks'] as KubeObject[]).map((w) => ({ ...w, clientConfig: { ...(w['clientConfig'] as object), caBundle: undefined } }));
      await bed.client.update(BUILTIN.validatingwebhookconfigurations, { ...stored, webhooks: hooks });
      await clock.advance(60_000);
      const expected = Buffer.from(e.caBundle() ?? '').toString('base64');
      assert.ok((await bundles()).every((b) => b === expected));
    } finally {
      e.stop();
    }
  });
});
