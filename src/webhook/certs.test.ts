import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { realClock } from '../clock/clock.ts';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { BUILTIN } from '../client/resources.ts';
import type { KubeObject } from '../k8s/types.ts';
import { startClientTestBed, testBedCertificate, type ClientTestBed } from '../testing/client-test-bed.ts';
import {
  certificateInfo,
  certificatesFromSecret,
  generateCertificateAuthority,
  issueServingCertificate,
  renewCertificates,
  SecretCertificates,
  servingNames,
  signedBy,
  type StoredCertificates,
} from './certs.ts';
import { MUTATING_CONFIGURATION_NAME, registerWebhooks, VALIDATING_CONFIGURATION_NAME, webhookConfigurations } from './registration.ts';

const DAY = 24 * 60 * 60 * 1000;
const NOW = realClock().now();

describe('servingNames', () => {
  test('service DNS names, and for a webhook URL its host plus loopback', () => {
    assert.deepEqual(servingNames({ service: { name: 'wh', namespace: 'ns' } }), { dnsNames: ['wh.ns.svc', 'wh.ns.svc.cluster.local'], ipAddresses: [] });
    assert.deepEqual(servingNames({ webhookUrl: 'https://10.0.0.7:9443' }), { dnsNames: ['localhost'], ipAddresses: ['10.0.0.7', '127.0.0.1'] });
    assert.deepEqual(servingNames({ service: { name: 'wh', namespace: 'ns' }, webhookUrl: 'https://manager.example:9443' }).dnsNames, [
      'wh.ns.svc',
      'wh.ns.svc.cluster.local',
      'manager.example',
      'localhost',
    ]);
  });
});

describe('renewCertificates', () => {
  const names = { dnsNames: ['wh.ns.svc'], ipAddresses: ['127.0.0.1'] };
  const ca = generateCertificateAuthority(NOW);
  const serving = issueServingCertificate(ca, names, NOW);
  const stored: StoredCertificates = { ca, bundle: ca.certPem, serving };

  test('nothing stored → a new CA and a serving certificate it signed, covering the names', () => {
    const r = renewCertificates(undefined, { nowMs: NOW, names });
    assert.equal(r.changed, true);
    assert.ok(signedBy(r.certs.serving, r.certs.ca));
    const info = certificateInfo(r.certs.serving.certPem);
    assert.deepEqual(info?.dnsNames, ['wh.ns.svc']);
    assert.deepEqual(info?.ipAddresses, ['127.0.0.1']);
    assert.equal(certificateInfo(r.certs.ca.certPem)?.isCa, true);
  });

  test('good certificates are kept as they are', () => {
    const r = renewCertificates(stored, { nowMs: NOW, names });
    assert.equal(r.changed, false);
    assert.equal(r.certs, stored);
  });

  test('less than 30 days left on the serving certificate → re-issued with the same CA', () => {
    const r = renewCertificates(stored, { nowMs: NOW + 340 * DAY, names });
    assert.equal(r.changed, true);
    assert.match(r.reason, /expires soon/);
    assert.equal(r.certs.ca, ca);
    assert.notEqual(r.certs.serving.certPem, serving.certPem);
    assert.ok(signedBy(r.certs.serving, ca));
  });

  test('31 days left → kept', () => {
    const notAfter = certificateInfo(serving.certPem)?.notAfterMs ?? 0;
    assert.equal(renewCertificates(stored, { nowMs: notAfter - 31 * DAY, names }).changed, false);
  });

  test('a name the certificate does not cover → re-issued', () => {
    const r = renewCertificates(stored, { nowMs: NOW, names: { dnsNames: ['other.ns.svc'], ipAddresses: [] } });
    assert.equal(r.changed, true);
    assert.match(r.reason, /does not cover/);
    assert.deepEqual(certificateInfo(r.certs.serving.certPem)?.dnsNames, ['other.ns.svc']);
  });

  test('a serving certificate from another CA → re-issued', () => {
    const other = generateCertificateAuthority(NOW);
    const r = renewCertificates({ ...stored, serving: issueServingCertificate(other, names, NOW) }, { nowMs: NOW, names });
    assert.equal(r.changed, true);
    assert.ok(signedBy(r.certs.serving, ca));
  });

  test('the CA close to expiry → a new CA; the bundle keeps the old CA while it is valid', () => {
    const shortCa = generateCertificateAuthority(NOW, 20);
    const r = renewCertificates({ ca: shortCa, bundle: shortCa.certPem, serving: issueServingCertificate(shortCa, names, NOW, 10) }, { nowMs: NOW, names });
    assert.equal(r.changed, true);
    assert.match(r.reason, /CA expires soon/);
    assert.notEqual(r.certs.ca.certPem, shortCa.certPem);
    assert.ok(r.certs.bundle.startsWith(r.certs.ca.certPem.trim()));
    assert.ok(r.certs.bundle.includes(shortCa.certPem.trim()));
    // Once the old CA has expired it leaves the bundle.
    const later = renewCertificates(r.certs, { nowMs: NOW + 25 * DAY, names });
    assert.equal(later.changed, true);
    assert.equal(later.certs.bundle.includes(shortCa.certPem.trim()), false);
  });
});

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
      assert.deepEqual(await bundles(), [expected, expected, expected, expected]);
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
