import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { certificateInfo, DAY_MS, generateCertificateAuthority, issueServingCertificate, signedBy } from './tls-certificates.ts';

const NOW = Date.UTC(2026, 10, 22);

describe('tls-certificates', () => {
  const ca = generateCertificateAuthority(NOW, 10, 'test-ca');
  const serving = issueServingCertificate(ca, { dnsNames: ['svc.ns.svc'], ipAddresses: ['127.0.0.1'] }, NOW, 3);

  test('the CA is a CA, dated from an hour before now for the given days', () => {
    const info = certificateInfo(ca.certPem);
    assert.equal(info?.isCa, true);
    assert.equal(info?.notBeforeMs, NOW - 60 * 60 * 1000);
    assert.equal(info?.notAfterMs, NOW + 10 * DAY_MS);
  });

  test('the serving certificate carries the names, is no CA, and only its CA signed it', () => {
    const info = certificateInfo(serving.certPem);
    assert.deepEqual([info?.dnsNames, info?.ipAddresses, info?.isCa], [['svc.ns.svc'], ['127.0.0.1'], false]);
    assert.equal(info?.notAfterMs, NOW + 3 * DAY_MS);
    assert.equal(signedBy(serving, ca), true);
    assert.equal(signedBy(serving, generateCertificateAuthority(NOW, 10, 'other')), false);
    assert.equal(signedBy({ certPem: serving.certPem, keyPem: ca.keyPem }, ca), false, 'a key that does not match the certificate');
  });

  test('unreadable input is undefined / false, never a throw', () => {
    assert.equal(certificateInfo('not a pem'), undefined);
    assert.equal(signedBy({ certPem: 'x', keyPem: 'y' }, ca), false);
  });

  test('a TLS client trusting the CA connects to a server using the pair (host clock: issued now)', async () => {
    const liveCa = generateCertificateAuthority(Date.now(), 1, 'live-ca');
    const pair = issueServingCertificate(liveCa, { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] }, Date.now(), 1);
    const server = createServer({ cert: pair.certPem, key: pair.keyPem }, (_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const body = await new Promise<string>((resolve, reject) => {
        request({ host: '127.0.0.1', port, ca: liveCa.certPem, path: '/' }, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve(text));
        }).on('error', reject).end();
      });
      assert.equal(body, 'ok');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
