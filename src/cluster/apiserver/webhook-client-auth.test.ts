import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { credentialsKey, WebhookClientCredentials } from './webhook-client-auth.ts';

const cred = (name: string) => ({ certPem: name, keyPem: name });

describe('which client certificate the API server presents to a webhook (admission kubeconfig users)', () => {
  test('exact host:port first, then *.suffix from the longest, then without :443, then *; none: anonymous', () => {
    const c = new WebhookClientCredentials();
    assert.equal(c.resolve('workloadspread-webhook.ws-system.svc:443'), undefined);
    c.set('*', cred('any'));
    assert.equal(c.resolve('workloadspread-webhook.ws-system.svc:443')?.certPem, 'any');
    c.set('*.svc', cred('svc'));
    assert.equal(c.resolve('workloadspread-webhook.ws-system.svc:8443')?.certPem, 'any', '*.svc does not match a name ending in :8443');
    assert.equal(c.resolve('workloadspread-webhook.ws-system.svc:443')?.certPem, 'svc', 'the :443 form is also tried without the port');
    c.set('*.ws-system.svc:443', cred('ns'));
    assert.equal(c.resolve('workloadspread-webhook.ws-system.svc:443')?.certPem, 'ns');
    c.set('workloadspread-webhook.ws-system.svc', cred('exact-no-port'));
    assert.equal(c.resolve('workloadspread-webhook.ws-system.svc:443')?.certPem, 'ns', 'a star match with the port comes before the portless forms');
    c.set('workloadspread-webhook.ws-system.svc:443', cred('exact'));
    assert.equal(c.resolve('workloadspread-webhook.ws-system.svc:443')?.certPem, 'exact');
    c.set('127.0.0.1:9443', cred('url'));
    assert.equal(c.resolve('127.0.0.1:9443')?.certPem, 'url');
    c.set('*', undefined);
    assert.equal(c.resolve('10.0.0.1:9443'), undefined);
  });

  test('keys: host:port, IPv6 in brackets, a URL without a port keeps the bare host', () => {
    assert.equal(credentialsKey('a.b.svc', 443), 'a.b.svc:443');
    assert.equal(credentialsKey('::1', 9443), '[::1]:9443');
    assert.equal(credentialsKey('webhook.example.com', undefined), 'webhook.example.com');
  });
});
