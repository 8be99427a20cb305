/**
 * The manager's plain-HTTP endpoints (health and metrics) against clients
 * that send a body nobody reads: every route answers, says `Connection:
 * close` and closes the connection, instead of reading (and discarding) the
 * body until the request timeout — an endless upload used to be read for a
 * minute, tens of gigabytes per connection.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { uploadUntilStopped } from '../testing/hostile-client.ts';
import { MAX_ENDPOINT_BODY_BYTES, startHttpEndpoint, type HttpEndpoint } from './endpoints.ts';

describe('endpoints: a body no route reads', () => {
  let endpoint: HttpEndpoint;
  before(async () => {
    endpoint = await startHttpEndpoint({
      address: { host: '127.0.0.1', port: 0 },
      clock: new VirtualClock(),
      name: 'test',
      routes: { '/healthz': (_req, res) => void res.end('ok'), '/metrics': (_req, res) => void res.end('# metrics\n') },
    });
  });
  after(() => endpoint.close());

  const cases: { method: string; path: string; status: number }[] = [
    { method: 'GET', path: '/healthz', status: 200 },
    { method: 'GET', path: '/metrics', status: 200 },
    { method: 'POST', path: '/healthz', status: 405 },
    { method: 'GET', path: '/no-such-route', status: 404 },
    { method: 'PUT', path: '/no-such-route', status: 404 },
  ];
  for (const c of cases) {
    test(`${c.method} ${c.path} with an endless chunked body: ${c.status}, Connection: close, and the server closes the connection`, async () => {
      const out = await uploadUntilStopped(endpoint.url, { method: c.method, path: c.path, keepSending: true });
      assert.equal(out.status, c.status);
      assert.equal(out.connection, 'close');
      assert.ok(out.closedByServer, 'the server closed the connection');
      assert.ok(out.bytesSent < 64 * 1024 * 1024, `${out.bytesSent} bytes sent before the server closed`);
    });
  }

  test('a small announced body is answered as the last on its connection too (it would be read for nothing)', async () => {
    const out = await uploadUntilStopped(endpoint.url, { method: 'GET', path: '/healthz', contentLength: MAX_ENDPOINT_BODY_BYTES - 1, keepSending: true });
    assert.equal(out.status, 200);
    assert.equal(out.connection, 'close');
  });

  test('a request without a body keeps its connection (probes and scrapes reuse it)', async () => {
    const res = await fetch(`${endpoint.url}/healthz`);
    assert.equal(res.status, 200);
    assert.notEqual(res.headers.get('connection'), 'close');
    await res.text();
  });
});
