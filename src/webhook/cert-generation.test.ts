import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { realClock } from '../clock/clock.ts';
import { certificateInfo, generateCertificateAuthority, issueServingCertificate, renewCertificates, servingNames, signedBy, type StoredCertificates } from './cert-generation.ts';

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
