/**
 * KubeClient against the embedded API server over loopback HTTPS (CRUD,
 * patches, subresources, typed errors, timeouts on the virtual clock,
 * discovery) and against a scripted plain-HTTP server for what the embedded
 * one never does (odd bodies, chunking, malformed watch lines).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, Agent, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { realClock } from '../clock/clock.ts';
import type { KubeObject } from '../k8s/types.ts';
import type { Connection } from './config.ts';
import { ApiError, isAlreadyExists, isConflict, isInvalid, isNotFound, isTimeout, isTooManyRequests, isUnsupportedMediaType, NetworkError, retryAfterMs, type Status } from './errors.ts';
import { KubeClient } from './http-client.ts';
import type { WatchStreamEvent } from './ndjson.ts';
import { BUILTIN, pathFor } from './resources.ts';
import { startClientTestBed, testBedCertificate, type ClientTestBed } from '../testing/client-test-bed.ts';
import type { ServingCertificate } from './loopback-certificates.ts';

const T0 = Date.UTC(2026, 0, 1);
let cert: ServingCertificate;
let clock: VirtualClock;
let bed: ClientTestBed;
let client: KubeClient;

before(async () => {
  cert = testBedCertificate();
  clock = new VirtualClock(T0);
  bed = await startClientTestBed(clock, cert);
  client = bed.client;
});
after(async () => {
  await bed.close();
});

const cm = (name: string, data: Record<string, string> = {}, namespace = 'default'): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data });

async function rejection(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  assert.fail('expected a rejection');
}

describe('CRUD over ResourceRefs', () => {
  test('create, get, list, update, delete a ConfigMap', async () => {
    const created = await client.create<KubeObject>(BUILTIN.configmaps, cm('crud-1', { a: '1' }));
    assert.equal(created.metadata?.name, 'crud-1');
    assert.ok(created.metadata?.resourceVersion);
    const got = await client.get<KubeObject>(BUILTIN.configmaps, 'crud-1', { namespace: 'default' });
    assert.deepEqual(got['data'], { a: '1' });
    const list = await client.list(BUILTIN.configmaps, { namespace: 'default', fieldSelector: 'metadata.name=crud-1' });
    assert.deepEqual(list.items.map((i) => i.metadata?.name), ['crud-1']);
    assert.ok(list.metadata.resourceVersion);
    const updated = await client.update<KubeObject>(BUILTIN.configmaps, { ...got, data: { a: '2' } });
    assert.deepEqual(updated['data'], { a: '2' });
    await client.delete(BUILTIN.configmaps, 'crud-1', { namespace: 'default' });
    assert.ok(isNotFound(await rejection(() => client.get(BUILTIN.configmaps, 'crud-1', { namespace: 'default' }))));
  });

  test('the connection namespace is the default for namespaced refs', async () => {
    const created = await client.create<KubeObject>(BUILTIN.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ns-default' } });
    assert.equal(created.metadata?.namespace, 'default');
    assert.equal((await client.get<KubeObject>(BUILTIN.configmaps, 'ns-default')).metadata?.name, 'ns-default');
  });

  test('listAll walks every page of a snapshot', async () => {
    await client.create(BUILTIN.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'paged' } });
    for (let i = 0; i < 7; i++) await client.create(BUILTIN.configmaps, cm(`p-${i}`, {}, 'paged'));
    const all = await client.listAll(BUILTIN.configmaps, { namespace: 'paged', limit: 3 });
    // The namespace also holds what the cluster puts in every namespace (kube-root-ca.crt).
    assert.deepEqual(all.items.map((i) => i.metadata?.name ?? '').filter((n) => n.startsWith('p-')).sort(), ['p-0', 'p-1', 'p-2', 'p-3', 'p-4', 'p-5', 'p-6']);
    assert.ok(all.items.length > 3, 'more than one page');
    assert.match(all.resourceVersion, /^\d+$/);
  });

  test('each patch type sends its content type', async () => {
    await client.create(BUILTIN.configmaps, cm('patched', { a: '1' }));
    const merged = await client.patch<KubeObject>(BUILTIN.configmaps, 'patched', { type: 'merge', body: { data: { b: '2' } } });
    assert.deepEqual(merged['data'], { a: '1', b: '2' });
    const jsonPatched = await client.patch<KubeObject>(BUILTIN.configmaps, 'patched', { type: 'json', ops: [{ op: 'test', path: '/data/a', value: '1' }, { op: 'remove', path: '/data/a' }] });
    assert.deepEqual(jsonPatched['data'], { b: '2' });
    const strategic = await client.patch<KubeObject>(BUILTIN.configmaps, 'patched', { type: 'strategic', body: { metadata: { labels: { x: 'y' } } } });
    assert.deepEqual(strategic.metadata?.labels, { x: 'y' });
    const applied = await client.patch<KubeObject>(BUILTIN.configmaps, 'patched', { type: 'apply', body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'patched' }, data: { c: '3' } } }, { fieldManager: 'test-apply' });
    assert.equal((applied['data'] as Record<string, string>)['c'], '3');
  });

  test('a failed JSON patch test op is a typed error', async () => {
    const err = await rejection(() => client.patch(BUILTIN.configmaps, 'patched', { type: 'json', ops: [{ op: 'test', path: '/data/b', value: 'nope' }] }));
    assert.ok(isInvalid(err), String(err));
  });

  test('status, scale and eviction subresources', async () => {
    const deploy: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'default' },
      spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
    };
    const created = await client.create<KubeObject>(BUILTIN.deployments, deploy);
    const withStatus = await client.updateStatus<KubeObject>(BUILTIN.deployments, { ...created, status: { observedGeneration: 1, replicas: 1 } });
    assert.equal((withStatus['status'] as { replicas: number }).replicas, 1);
    const patched = await client.patchStatus<KubeObject>(BUILTIN.deployments, 'web', { type: 'merge', body: { status: { readyReplicas: 1 } } });
    assert.equal((patched['status'] as { readyReplicas: number }).readyReplicas, 1);
    assert.equal((await client.getScale(BUILTIN.deployments, 'web')).spec?.replicas, 1);
    const scaled = await client.scale(BUILTIN.deployments, 'web', 5);
    assert.equal(scaled.spec?.replicas, 5);
    assert.equal((await client.get<{ spec: { replicas: number } }>(BUILTIN.deployments, 'web')).spec.replicas, 5);

    await client.create(BUILTIN.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'evictee', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
    await client.evict('default', 'evictee');
    let after: KubeObject | undefined;
    try {
      after = await client.get<KubeObject>(BUILTIN.pods, 'evictee');
    } catch (err) {
      assert.ok(isNotFound(err), String(err));
    }
    assert.ok(after === undefined || after.metadata?.deletionTimestamp !== undefined, 'the evicted pod is gone or terminating');
  });

  test('delete with a stale precondition is a conflict', async () => {
    const obj = await client.create<KubeObject>(BUILTIN.configmaps, cm('precond'));
    const err = await rejection(() => client.delete(BUILTIN.configmaps, 'precond', { preconditions: { uid: 'not-the-uid' } }));
    assert.ok(isConflict(err), String(err));
    await client.delete(BUILTIN.configmaps, 'precond', { preconditions: { uid: obj.metadata?.uid ?? '' } });
  });
});

describe('typed errors', () => {
  test('NotFound, AlreadyExists, Conflict, Invalid, UnsupportedMediaType', async () => {
    const nf = await rejection(() => client.get(BUILTIN.configmaps, 'missing'));
    assert.ok(nf instanceof ApiError && isNotFound(nf) && nf.code === 404 && nf.status.reason === 'NotFound');
    await client.create(BUILTIN.configmaps, cm('dup'));
    assert.ok(isAlreadyExists(await rejection(() => client.create(BUILTIN.configmaps, cm('dup')))));
    const current = await client.get<KubeObject>(BUILTIN.configmaps, 'dup');
    await client.update(BUILTIN.configmaps, { ...current, data: { v: '1' } });
    const stale = await rejection(() => client.update(BUILTIN.configmaps, { ...current, data: { v: '2' } }));
    assert.ok(isConflict(stale), String(stale));
    assert.ok(!isNotFound(stale));
    const invalid = await rejection(() => client.create(BUILTIN.configmaps, cm('Bad_Name')));
    assert.ok(isInvalid(invalid), String(invalid));
    assert.ok((invalid as ApiError).status.details?.causes?.length);
    const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
    const media = await rejection(() => client.request({ method: 'PATCH', path: `${crdPath}/x`, body: '{}', contentType: 'text/plain' }));
    assert.ok(isUnsupportedMediaType(media) || isNotFound(media), String(media));
  });

  test('injected 429 carries Retry-After; injected 500 is an InternalError', async () => {
    const fault = bed.server.control.injectFault({ resource: 'configmaps', verb: 'get', status: 429, retryAfterSeconds: 7, times: 1 });
    const err = await rejection(() => client.get(BUILTIN.configmaps, 'dup'));
    assert.ok(isTooManyRequests(err));
    assert.equal(retryAfterMs(err), 7000);
    assert.equal(fault.hits, 1);
    bed.server.control.injectFault({ resource: 'configmaps', verb: 'get', status: 500, times: 1 });
    const e500 = await rejection(() => client.get(BUILTIN.configmaps, 'dup'));
    assert.ok(e500 instanceof ApiError && e500.code === 500 && e500.reason === 'InternalError');
  });

  test('a refused connection is a NetworkError of kind connection', async () => {
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as AddressInfo).port;
    await new Promise<void>((r) => srv.close(() => r()));
    const dead = new KubeClient(plainConnection(port), { clock: realClock() });
    const err = await rejection(() => dead.get(BUILTIN.configmaps, 'x'));
    assert.ok(err instanceof NetworkError && err.kind === 'connection', String(err));
  });
});

describe('timeouts and aborts on the virtual clock', () => {
  test('a slow answer within the timeout arrives after virtual time passed', async () => {
    bed.server.control.injectFault({ resource: 'configmaps', verb: 'get', delayMs: 3000, times: 1 });
    const started = clock.now();
    const pending = client.get<KubeObject>(BUILTIN.configmaps, 'dup', { timeoutMs: 10_000 });
    await clock.settle();
    const got = await pending;
    assert.equal(got.metadata?.name, 'dup');
    assert.equal(clock.now() - started, 3000);
  });

  test('an answer slower than the timeout fails at the virtual deadline', async () => {
    const fault = bed.server.control.injectFault({ resource: 'configmaps', verb: 'get', delayMs: 60_000, times: 1 });
    const started = clock.now();
    const pending = rejection(() => client.get(BUILTIN.configmaps, 'dup', { timeoutMs: 5000 }));
    let failedAt: number | undefined;
    void pending.then(() => (failedAt = clock.now()));
    await clock.settle();
    const err = await pending;
    assert.ok(isTimeout(err), String(err));
    assert.equal(failedAt, started + 5000);
    assert.equal(fault.hits, 1);
  });

  test('the caller aborting is a NetworkError of kind aborted', async () => {
    bed.server.control.injectFault({ resource: 'configmaps', verb: 'get', delayMs: 60_000, times: 1 });
    const ac = new AbortController();
    const pending = rejection(() => client.get(BUILTIN.configmaps, 'dup', { signal: ac.signal }));
    await clock.quiesce();
    ac.abort();
    const err = await pending;
    assert.ok(err instanceof NetworkError && err.kind === 'aborted', String(err));
    await clock.settle();
  });

  test('requests leave nothing busy behind', async () => {
    await client.get(BUILTIN.configmaps, 'dup');
    await clock.quiesce();
    assert.equal(clock.busy, 0);
  });
});

describe('discovery', () => {
  test('built-in kinds resolve without a request; a CRD kind through discovery, cached', async () => {
    const before = bed.server.control.requestCount();
    const pods = await client.resources.resolve('v1', 'Pod');
    assert.deepEqual(pods.ok && pods.ref, BUILTIN.pods);
    const missing = await client.resources.resolve('example.com/v1', 'Gadget');
    assert.equal(missing.ok, false);
    assert.equal(!missing.ok && missing.notFound, true);
    await client.create(BUILTIN.customresourcedefinitions, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Cluster',
        names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    });
    await clock.quiesce();
    const gadget = await client.resources.resolve('example.com/v1', 'Gadget');
    assert.ok(gadget.ok, 'a miss refetches the group-version');
    assert.deepEqual(gadget.ref, { group: 'example.com', version: 'v1', resource: 'gadgets', kind: 'Gadget', namespaced: false });
    await client.create(gadget.ref, { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g1' } });
    assert.equal((await client.get<KubeObject>(gadget.ref, 'g1')).metadata?.name, 'g1');
    assert.equal(bed.server.control.requestCount() - before, 3, 'discovery requests are not resource requests; CRD create, gadget create and get are');
  });
});

describe('watchStream against the embedded server', () => {
  test('events arrive in order and each is accounted as consumed after onEvent', async () => {
    const seen: string[] = [];
    const ac = new AbortController();
    const stream = client.nextStreamId('test');
    let busyDuringEvent = -1;
    const done = client.watchStream(pathFor(BUILTIN.configmaps, { namespace: 'default' }), { resourceVersion: bed.server.control.resourceVersion }, {
      signal: ac.signal,
      activityStream: stream,
      onEvent: async (ev) => {
        if (ev.type !== 'MALFORMED' && ev.type !== 'ERROR') seen.push(`${ev.type} ${ev.object.metadata?.name ?? ''}`);
        // The event is still unconsumed while its handler runs: time cannot move.
        busyDuringEvent = clock.busy;
      },
    });
    await clock.quiesce();
    await client.create(BUILTIN.configmaps, cm('w-1'));
    await client.patch(BUILTIN.configmaps, 'w-1', { type: 'merge', body: { data: { k: 'v' } } });
    await client.delete(BUILTIN.configmaps, 'w-1');
    await clock.quiesce();
    assert.deepEqual(seen, ['ADDED w-1', 'MODIFIED w-1', 'DELETED w-1']);
    assert.ok(busyDuringEvent > 0);
    assert.equal(clock.busy, 0);
    ac.abort();
    assert.equal(await done, 'aborted');
  });

  test('a watch from a compacted version answers one in-stream 410 ERROR and ends', async () => {
    await client.create(BUILTIN.configmaps, cm('w-2'));
    bed.server.control.compact();
    const events: WatchStreamEvent[] = [];
    const end = await client.watchStream(pathFor(BUILTIN.configmaps, { namespace: 'default' }), { resourceVersion: '1' }, { onEvent: (ev) => void events.push(ev) });
    assert.equal(end, 'closed');
    assert.equal(events.length, 1);
    assert.equal(events[0]?.type, 'ERROR');
    assert.equal((events[0]?.object as Status).code, 410);
  });

  test('a refused watch is an ApiError', async () => {
    bed.server.control.injectFault({ resource: 'configmaps', verb: 'watch', status: 500, times: 1 });
    const err = await rejection(() => client.watchStream(pathFor(BUILTIN.configmaps), { resourceVersion: '0' }, { onEvent: () => {} }));
    assert.ok(err instanceof ApiError && err.code === 500);
  });
});

// ---- a scripted server for the wire cases the embedded one never produces ----

function plainConnection(port: number): Connection {
  const agent = new Agent({ keepAlive: true });
  return { server: `http://127.0.0.1:${port}`, agent, namespace: 'default', source: 'test', headers: async () => ({ Authorization: 'Bearer t' }), close: () => agent.destroy() };
}

async function scripted(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ client: KubeClient; close(): Promise<void> }> {
  const srv: Server = createServer(handler);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const conn = plainConnection((srv.address() as AddressInfo).port);
  return {
    client: new KubeClient(conn, { clock: realClock(), userAgent: 'ws-test/1.0' }),
    close: async () => {
      conn.close();
      srv.closeAllConnections();
      await new Promise<void>((r) => srv.close(() => r()));
    },
  };
}

describe('wire details', () => {
  test('User-Agent, Accept and auth headers; JSON body with its content type', async () => {
    let seen: IncomingMessage['headers'] = {};
    let body = '';
    const s = await scripted((req, res) => {
      seen = req.headers;
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        res.writeHead(201, { 'Content-Type': 'application/json' });
        res.end('{"ok":true}');
      });
    });
    try {
      const out = await s.client.request({ method: 'POST', path: '/x', body: { a: 1 } });
      assert.deepEqual(out, { ok: true });
      assert.equal(seen['user-agent'], 'ws-test/1.0');
      assert.equal(seen['accept'], 'application/json');
      assert.equal(seen['authorization'], 'Bearer t');
      assert.equal(seen['content-type'], 'application/json');
      assert.equal(body, '{"a":1}');
    } finally {
      await s.close();
    }
  });

  test('a non-Status error body becomes a Status from the code; a non-JSON 200 is a protocol error', async () => {
    const s = await scripted((req, res) => {
      if (req.url === '/html') {
        res.writeHead(502, { 'Content-Type': 'text/html' });
        res.end('<html>bad gateway</html>');
      } else {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end('{not json');
      }
    });
    try {
      const e502 = await rejection(() => s.client.request({ method: 'GET', path: '/html' }));
      assert.ok(e502 instanceof ApiError);
      assert.equal(e502.code, 502);
      assert.equal(e502.status.message, '<html>bad gateway</html>');
      const bad = await rejection(() => s.client.request({ method: 'GET', path: '/garbage' }));
      assert.ok(bad instanceof NetworkError && bad.kind === 'protocol');
    } finally {
      await s.close();
    }
  });

  test('watch lines split across chunks anywhere decode; a malformed line is an event, not dropped', async () => {
    const lines = [
      '{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"2"}}}\n',
      '{"type":"MODIFIED","object":{"metadata":{"name":"ü-b","resourceVersion":"3"}}}\n',
      'this is not json\n',
      '{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"4"}}}\n',
    ];
    const bytes = Buffer.from(lines.join(''), 'utf8');
    const s = await scripted((req, res) => {
      assert.match(req.url ?? '', /watch=true/);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      // One byte per write, flushed separately, splits even the two-byte ü.
      let i = 0;
      const next = () => {
        if (i >= bytes.length) return res.end();
        res.write(bytes.subarray(i, i + 1), () => setImmediate(next));
        i++;
      };
      next();
    });
    try {
      const events: WatchStreamEvent[] = [];
      const end = await s.client.watchStream('/api/v1/pods', { resourceVersion: '1' }, { onEvent: (ev) => void events.push(ev) });
      assert.equal(end, 'closed');
      assert.deepEqual(
        events.map((e) => (e.type === 'MALFORMED' ? `MALFORMED ${e.line}` : `${e.type} ${e.type === 'ERROR' ? '' : String(e.object.metadata?.name ?? e.object.metadata?.resourceVersion)}`)),
        ['ADDED a', 'MODIFIED ü-b', 'MALFORMED this is not json', 'BOOKMARK 4'],
      );
    } finally {
      await s.close();
    }
  });

  test('a watch connection that dies mid-stream rejects with a NetworkError', async () => {
    const s = await scripted((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n', () => setImmediate(() => res.socket?.destroy()));
    });
    try {
      const events: WatchStreamEvent[] = [];
      const err = await rejection(() => s.client.watchStream('/api/v1/pods', {}, { onEvent: (ev) => void events.push(ev) }));
      assert.ok(err instanceof NetworkError && err.kind === 'connection', String(err));
      assert.equal(events.length, 1);
    } finally {
      await s.close();
    }
  });
});
