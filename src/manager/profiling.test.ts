/**
 * The profiles' own rules, without a cluster: `seconds` (default 30, 1 to 300), the container's
 * memory limit read from its cgroup (v2 `max`, v1's near-2^63 "unlimited", the first file found),
 * and the heap snapshot refused (503, saying why and what to do) when 20 times the heap in use
 * does not fit between the process' RSS and that limit — taken anyway with `?force=true`.
 * The endpoint with authentication, over HTTPS, is metrics-secure.test.ts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realClock } from '../clock/clock.ts';
import { httpGet } from '../testing/manager-bed.ts';
import { startHttpEndpoint, type HttpEndpoint } from './endpoints.ts';
import { containerMemoryLimit, DEFAULT_PROFILE_SECONDS, heapSnapshotRefusal, Profiler, profileSeconds, type MemoryReading } from './profiling.ts';

const MIB = 2 ** 20;

describe('profile parameters and the memory guard', () => {
  test('seconds: default 30, an integer from 1 to 300', () => {
    assert.deepEqual(profileSeconds('/debug/pprof/profile'), { ok: true, seconds: DEFAULT_PROFILE_SECONDS });
    assert.deepEqual(profileSeconds('/debug/pprof/profile?seconds='), { ok: true, seconds: 30 });
    assert.deepEqual(profileSeconds('/debug/pprof/profile?seconds=300'), { ok: true, seconds: 300 });
    assert.deepEqual(profileSeconds('/debug/pprof/profile?x=1&seconds=1'), { ok: true, seconds: 1 });
    for (const bad of ['0', '301', '-1', '2.5', '1e2', 'ten']) assert.deepEqual(profileSeconds(`/p?seconds=${bad}`), { ok: false, error: `seconds must be an integer from 1 to 300, got ${JSON.stringify(bad)}` });
  });

  test('the container memory limit: cgroup v2, else v1; none when unlimited or unknown', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ws-cgroup-'));
    try {
      const file = (name: string, text: string) => {
        writeFileSync(join(dir, name), text);
        return join(dir, name);
      };
      const missing = join(dir, 'missing');
      assert.equal(await containerMemoryLimit([file('v2', '536870912\n'), missing]), 512 * MIB);
      assert.equal(await containerMemoryLimit([file('v2max', 'max\n')]), undefined);
      assert.equal(await containerMemoryLimit([missing, file('v1', '1073741824\n')]), 1024 * MIB);
      assert.equal(await containerMemoryLimit([missing, file('v1none', '9223372036854771712\n')]), undefined);
      assert.equal(await containerMemoryLimit([missing]), undefined);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a heap snapshot must fit: 20 times the heap above the RSS, under the limit', () => {
    assert.equal(heapSnapshotRefusal({ limitBytes: undefined, rssBytes: 4000 * MIB, heapBytes: 1000 * MIB }), undefined, 'no limit, no refusal');
    assert.equal(heapSnapshotRefusal({ limitBytes: 1536 * MIB, rssBytes: 130 * MIB, heapBytes: 45 * MIB }), undefined, '130 + 900 MiB fit under 1.5 GiB');
    assert.equal(
      heapSnapshotRefusal({ limitBytes: 512 * MIB, rssBytes: 130 * MIB, heapBytes: 45 * MIB }),
      "a heap snapshot needs about 900 MiB (20 times the 45 MiB of heap in use) on top of the 130 MiB the process holds, more than the container's memory limit of 512 MiB allows: the manager would be killed midway. Raise the limit, or add ?force=true to take it anyway",
    );
  });
});

describe('the heap snapshot route', () => {
  let endpoint: HttpEndpoint;
  let reading: MemoryReading = { limitBytes: 64 * MIB, rssBytes: 60 * MIB, heapBytes: 10 * MIB };
  before(async () => {
    const profiler = new Profiler({ clock: realClock(), memory: async () => reading });
    endpoint = await startHttpEndpoint({ address: { host: '127.0.0.1', port: 0 }, clock: realClock(), name: 'profiles', routes: profiler.routes() });
  });
  after(async () => {
    await endpoint?.close();
  });

  test('refused with 503 when it would not fit; taken with ?force=true, or when it fits', async () => {
    const refused = await httpGet(`${endpoint.url}/debug/pprof/heap`);
    assert.equal(refused.code, 503);
    assert.match(refused.body, /^a heap snapshot needs about 200 MiB .* limit of 64 MiB allows: the manager would be killed midway\. Raise the limit, or add \?force=true to take it anyway\n$/);
    const forced = await httpGet(`${endpoint.url}/debug/pprof/heap?force=true`);
    assert.equal(forced.code, 200);
    assert.ok(Array.isArray((JSON.parse(forced.body) as { nodes: unknown }).nodes));
    reading = { limitBytes: undefined, rssBytes: 60 * MIB, heapBytes: 10 * MIB };
    assert.equal((await httpGet(`${endpoint.url}/debug/pprof/heap`)).code, 200);
  });
});
