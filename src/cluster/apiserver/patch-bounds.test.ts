/**
 * Conformance: what kube-apiserver bounds in a PATCH, here too — at most
 * 10,000 operations in a JSON Patch (413), the bytes `copy` operations add
 * bounded by 3 MiB (JSONPatchMaxCopyBytes; 422 from the patch library), and
 * an object larger than etcd takes (its 1.5 MiB request limit) refused as
 * etcd refuses it. A 2 KB patch of 25 doubling copies used to grow the
 * object until the process died.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import { rawRequest, startTestCluster, testCertificate, type TestCluster } from '../../testing/apiserver-bed.ts';

let c: TestCluster;
let seq = 0;

before(async () => {
  c = await startTestCluster(new VirtualClock(Date.UTC(2026, 0, 1)), testCertificate());
});
after(async () => {
  await c.close();
});

type StatusJson = { code: number; reason?: string; message: string; details?: { causes?: { message?: string }[] } };

/** A fresh ConfigMap with `data` (returns its path). */
async function configMap(data: Record<string, string>): Promise<string> {
  const name = `cm-${++seq}`;
  const res = await rawRequest(c.server, 'POST', '/api/v1/namespaces/default/configmaps', { body: JSON.stringify({ metadata: { name }, data }), contentType: 'application/json' });
  assert.equal(res.status, 201, res.text);
  return `/api/v1/namespaces/default/configmaps/${name}`;
}

function jsonPatch(path: string, ops: unknown[]) {
  return rawRequest(c.server, 'PATCH', path, { body: JSON.stringify(ops), contentType: 'application/json-patch+json' });
}

async function storedData(path: string): Promise<Record<string, string>> {
  const res = await rawRequest(c.server, 'GET', path);
  return (res.json as { data: Record<string, string> }).data;
}

describe('JSON Patch bounds', () => {
  test('more than 10,000 operations: 413 RequestEntityTooLarge, nothing applied; 10,000 are applied', async () => {
    const path = await configMap({ a: '1' });
    const over = await jsonPatch(path, [...Array.from({ length: 10_000 }, () => ({ op: 'test', path: '/data/a', value: '1' })), { op: 'replace', path: '/data/a', value: '2' }]);
    assert.equal(over.status, 413);
    const s = over.json as StatusJson;
    assert.equal(s.reason, 'RequestEntityTooLarge');
    assert.equal(s.message, 'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001');
    assert.deepEqual(await storedData(path), { a: '1' });
    const at = await jsonPatch(path, [...Array.from({ length: 9_999 }, () => ({ op: 'test', path: '/data/a', value: '1' })), { op: 'replace', path: '/data/a', value: '2' }]);
    assert.equal(at.status, 200, at.text);
    assert.deepEqual(await storedData(path), { a: '2' });
  });

  test('copies that add more than 3 MiB in all: 422 with the patch library\'s message, nothing applied', async () => {
    const path = await configMap({ a: 'x'.repeat(1024) });
    // Each copy doubles /data: 13 of them would add 8 MiB.
    const ops = Array.from({ length: 13 }, (_, i) => ({ op: 'copy', from: '/data', path: `/data/c${i}` }));
    const res = await jsonPatch(path, ops);
    assert.equal(res.status, 422, res.text);
    const s = res.json as StatusJson;
    assert.equal(s.reason, 'Invalid');
    assert.match(s.details?.causes?.[0]?.message ?? '', /^Unable to complete the copy, the accumulated size increase of copy is \d+, exceeding the limit 3145728$/);
    assert.deepEqual(Object.keys(await storedData(path)), ['a']);
  });

  test('the 2 KB patch of 25 doubling copies is refused before memory grows', async () => {
    const path = await configMap({ a: 'x'.repeat(1024) });
    const ops = Array.from({ length: 25 }, (_, i) => ({ op: 'copy', from: '/data', path: `/data/c${i}` }));
    assert.ok(JSON.stringify(ops).length < 2048);
    const before = process.memoryUsage().rss;
    const res = await jsonPatch(path, ops);
    assert.equal(res.status, 422);
    const grown = process.memoryUsage().rss - before;
    // Unbounded, 16 copies already took 361 MB and 25 ran the process out of memory.
    assert.ok(grown < 200 * 1024 * 1024, `RSS grew by ${Math.round(grown / 1024 / 1024)} MiB`);
  });

  test('copies within 3 MiB are applied as before', async () => {
    const path = await configMap({ a: 'x'.repeat(1000) });
    const res = await jsonPatch(path, [{ op: 'copy', from: '/data/a', path: '/data/b' }, { op: 'copy', from: '/data/a', path: '/data/c' }]);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(await storedData(path)).sort(), ['a', 'b', 'c']);
  });

  test('a patched object larger than etcd takes (1.5 MiB) is refused as etcd refuses it: 500 "etcdserver: request is too large"', async () => {
    const path = await configMap({ a: 'x'.repeat(100 * 1024) });
    // 16 copies of 100 KiB: 1.6 MiB added, within the copy bound, and an object above 1.5 MiB.
    const ops = Array.from({ length: 16 }, (_, i) => ({ op: 'copy', from: '/data/a', path: `/data/b${i}` }));
    const res = await jsonPatch(path, ops);
    assert.equal(res.status, 500, res.text);
    assert.deepEqual(res.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'etcdserver: request is too large', code: 500 });
    assert.deepEqual(Object.keys(await storedData(path)), ['a']);
  });

  test('a merge patch that makes the object too large is refused the same way', async () => {
    const path = await configMap({ a: 'x'.repeat(800 * 1024) });
    const res = await rawRequest(c.server, 'PATCH', path, { body: JSON.stringify({ data: { b: 'y'.repeat(800 * 1024) } }), contentType: 'application/merge-patch+json' });
    assert.equal(res.status, 500, res.text);
    assert.equal((res.json as StatusJson).message, 'etcdserver: request is too large');
  });
});
