import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { uploadUntilStopped } from '../testing/hostile-client.ts';
import { guardRequestBody, lastOnConnection, readBodyWithin } from './request-body.ts';

const LIMIT = 1024 * 1024;

describe('bounded request bodies', () => {
  let server: Server;
  let base = '';
  let bodiesRead = 0;
  before(async () => {
    server = createServer((req, res) => {
      const refuse = () => {
        res.writeHead(413, { 'content-type': 'text/plain' });
        res.end('too large');
      };
      if (guardRequestBody(req, res, LIMIT, refuse)) return;
      if (req.method === 'GET') {
        // A route that never reads the body.
        res.end('ok');
        return;
      }
      void readBodyWithin(req, LIMIT).then((read) => {
        if (read.ok) {
          bodiesRead++;
          res.end(`read ${read.body.length}`);
        } else if (read.tooLarge) {
          lastOnConnection(res);
          refuse();
        } else {
          res.writeHead(400);
          res.end(read.error);
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test('a body within the limit is read whole', async () => {
    const out = await uploadUntilStopped(base, { path: '/', contentLength: 1000, capBytes: 1000, chunkBytes: 1000 });
    assert.equal(out.status, 200);
    assert.equal(out.body, 'read 1000');
  });

  test('an endless chunked body is cut at the limit: 413 and the connection closed, not read on', async () => {
    const out = await uploadUntilStopped(base, { path: '/', keepSending: true });
    assert.equal(out.status, 413);
    assert.equal(out.connection, 'close');
    assert.ok(out.closedByServer, 'the server closed the connection');
    // What was sent before the answer arrived: the limit plus what the socket buffers held, far below the 256 MiB cap.
    assert.ok(out.bytesSent < 64 * 1024 * 1024, `sent ${out.bytesSent} bytes`);
  });

  test('a Content-Length above the limit is refused before the body is read', async () => {
    const out = await uploadUntilStopped(base, { path: '/', contentLength: 10 * 1024 * 1024 * 1024, keepSending: true });
    assert.equal(out.status, 413);
    assert.ok(out.closedByServer, 'the server closed the connection');
    assert.ok(out.bytesSent < 64 * 1024 * 1024, `sent ${out.bytesSent} bytes`);
  });

  test('a route that does not read the body answers, and the connection is closed instead of draining an endless body', async () => {
    const out = await uploadUntilStopped(base, { method: 'GET', path: '/', keepSending: true });
    assert.equal(out.status, 200);
    assert.ok(out.closedByServer, 'the server closed the connection');
    assert.ok(out.bytesSent < 64 * 1024 * 1024, `sent ${out.bytesSent} bytes`);
  });
});
