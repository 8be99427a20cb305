/**
 * The watcher + store against the embedded API server on the virtual clock:
 * the store follows the server through creates/updates/deletes, cut watches
 * (resume without relist), compaction (410 → relist with synthetic deletes),
 * bookmarks, injected errors (back-off at exact virtual times), resync,
 * selectors, and a clean stop. A scripted plain-HTTP server covers a silent
 * stream (idle watchdog) and a malformed line.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, Agent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { VirtualClock } from '../clock/virtual-clock.ts';
import type { ServingCertificate } from './loopback-certificates.ts';
import { startClientTestBed, testBedCertificate, type ClientTestBed } from '../testing/client-test-bed.ts';
import { eventually, settleUntil } from '../testing/eventually.ts';
import { KubeClient } from './http-client.ts';
import { BUILTIN } from './resources.ts';
import { Informer } from './store.ts';
import type { WatcherMetrics, WatcherOptions } from './watcher.ts';

const T0 = Date.UTC(2026, 0, 1);
let cert: ServingCertificate;
let clock: VirtualClock;
let bed: ClientTestBed;
let nsSeq = 0;

before(async () => {
  cert = testBedCertificate();
  clock = new VirtualClock(T0);
  bed = await startClientTestBed(clock, cert);
});
after(async () => {
  await bed.close();
});

const control = () => bed.server.control;

async function namespace(): Promise<string> {
  const name = `w${++nsSeq}`;
  const r = await control().create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  assert.ok(r.ok);
  return name;
}

async function createCm(ns: string, name: string, labels: Record<string, string> = {}, data: Record<string, string> = {}): Promise<void> {
  const r = await control().create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels }, data });
  assert.ok(r.ok, JSON.stringify(!r.ok && r.status));
}

async function patchCm(ns: string, name: string, body: unknown): Promise<void> {
  const r = await control().patch('v1', 'ConfigMap', ns, name, 'application/merge-patch+json', body);
  assert.ok(r.ok, JSON.stringify(!r.ok && r.status));
}

async function deleteCm(ns: string, name: string): Promise<void> {
  const r = await control().delete('v1', 'ConfigMap', ns, name);
  assert.ok(r.ok, JSON.stringify(!r.ok && r.status));
}

/** name → resourceVersion of what the server holds. */
function serverState(ns: string, labelSelector?: string): Record<string, string> {
  const r = control().list('v1', 'ConfigMap', ns, labelSelector === undefined ? {} : { labelSelector });
  assert.ok(r.ok);
  return Object.fromEntries(r.value.items.map((o) => [o.metadata?.name ?? '', o.metadata?.resourceVersion ?? '']));
}

function storeState(inf: Informer): Record<string, string> {
  return Object.fromEntries(
    inf.store
      .list()
      .map((o) => [o.metadata?.name ?? '', o.metadata?.resourceVersion ?? ''] as const)
      .sort(([a], [b]) => a.localeCompare(b)),
  );
}

interface Recorder extends WatcherMetrics {
  lists: number[];
  watches: number[];
  transitions: string[];
}

function recorder(): Recorder {
  const r: Recorder = {
    lists: [],
    watches: [],
    transitions: [],
    request: (verb) => (verb === 'list' ? r.lists : r.watches).push(clock.now() - T0),
    transition: (from, to, cause) => r.transitions.push(`${from}->${to}:${cause}`),
  };
  return r;
}

/**
 * Cuts every watch and waits (real time) until the watcher has reacted: the
 * EOF reaches the client asynchronously and nothing on the virtual clock is
 * busy meanwhile, so a bare quiesce() could return before the client noticed.
 */
async function cutAndAwait(inf: Informer, rec: Recorder): Promise<void> {
  const watches = rec.watches.length;
  control().cutWatches();
  await eventually(() => assert.ok(rec.watches.length > watches || inf.watcher.state !== 'watching', 'the watcher noticed the cut'));
}

function informer(ns: string, extra: Partial<WatcherOptions> & { metrics?: WatcherMetrics; client?: KubeClient } = {}): Informer {
  const inf = new Informer({ client: bed.client, ref: BUILTIN.configmaps, namespace: ns, random: () => 0, freeze: true, resyncMs: 0, ...extra });
  inf.start();
  return inf;
}

describe('list + watch keeps the store equal to the server', () => {
  test('through creates, updates and deletes, with handlers seeing old and new', async () => {
    const ns = await namespace();
    await createCm(ns, 'pre-1', {}, { v: '1' });
    await createCm(ns, 'pre-2');
    const inf = informer(ns);
    const seen: string[] = [];
    inf.store.onAdd((o) => seen.push(`add ${o.metadata?.name}`));
    inf.store.onUpdate((old, o) => seen.push(`update ${o.metadata?.name} ${String((old['data'] as Record<string, string> | undefined)?.['v'])}->${String((o['data'] as Record<string, string>)['v'])}`));
    inf.store.onDelete((o) => seen.push(`delete ${o.metadata?.name}`));
    await clock.quiesce();
    await inf.waitForSync();
    assert.equal(inf.store.hasSynced(), true);
    assert.deepEqual(storeState(inf), serverState(ns));
    await createCm(ns, 'new-1');
    await patchCm(ns, 'pre-1', { data: { v: '2' } });
    await deleteCm(ns, 'pre-2');
    await clock.quiesce();
    assert.deepEqual(storeState(inf), serverState(ns));
    // kube-root-ca.crt: the cluster publishes it in every namespace.
    assert.deepEqual(seen.filter((s) => !s.includes('kube-root-ca.crt')), ['add pre-1', 'add pre-2', 'add new-1', 'update pre-1 1->2', 'delete pre-2']);
    assert.equal(inf.store.get(ns, 'pre-1')?.kind, 'ConfigMap', 'list items get their kind');
    await inf.stop();
  });

  test('a client that watches without managedFields caches listed and watched objects without them', async () => {
    const ns = await namespace();
    await createCm(ns, 'listed', {}, { v: '1' });
    const stripping = new KubeClient(bed.client.connection, { clock, watchWithoutManagedFields: true });
    const inf = informer(ns, { client: stripping });
    const keeping = informer(ns);
    await clock.quiesce();
    await createCm(ns, 'watched', {}, { v: '1' });
    await patchCm(ns, 'listed', { data: { v: '2' } });
    await clock.quiesce();
    for (const name of ['listed', 'watched']) {
      assert.equal(inf.store.get(ns, name)?.metadata?.managedFields, undefined, `${name} is cached without managedFields`);
      assert.ok(Array.isArray(keeping.store.get(ns, name)?.metadata?.managedFields), `${name} has managedFields on the server`);
    }
    assert.deepEqual(inf.store.get(ns, 'listed')?.['data'], { v: '2' });
    await inf.stop();
    await keeping.stop();
  });

  test('property: any interleaving of writes, cut watches and compactions converges', async () => {
    type Op = { op: 'create' | 'update' | 'delete'; name: string } | { op: 'cut' } | { op: 'compact' } | { op: 'advance'; ms: number };
    const name = fc.constantFrom('a', 'b', 'c', 'd');
    const op: fc.Arbitrary<Op> = fc.oneof(
      { weight: 6, arbitrary: fc.record({ op: fc.constantFrom('create' as const, 'update' as const, 'delete' as const), name }) },
      { weight: 1, arbitrary: fc.constant({ op: 'cut' as const }) },
      { weight: 1, arbitrary: fc.constant({ op: 'compact' as const }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 5000 }) }) },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 25 }), async (ops) => {
        const ns = await namespace();
        const inf = informer(ns);
        await clock.quiesce();
        let n = 0;
        try {
          for (const o of ops) {
            const exists = (nm: string) => control().get('v1', 'ConfigMap', ns, nm).ok;
            if (o.op === 'create' && !exists(o.name)) await createCm(ns, o.name);
            else if (o.op === 'update' && exists(o.name)) await patchCm(ns, o.name, { data: { n: String(++n) } });
            else if (o.op === 'delete' && exists(o.name)) await deleteCm(ns, o.name);
            else if (o.op === 'cut') control().cutWatches();
            else if (o.op === 'compact') control().compact();
            else if (o.op === 'advance') await clock.advance(o.ms);
          }
          await settleUntil(clock, () => assert.deepEqual(storeState(inf), serverState(ns)), { maxMs: 5 * 60_000 });
        } finally {
          await inf.stop();
        }
      }),
      { numRuns: 25 },
    );
  });
});

describe('recovery', () => {
  test('a cut watch resumes from the last version without a relist', async () => {
    const ns = await namespace();
    const rec = recorder();
    const inf = informer(ns, { metrics: rec });
    await clock.quiesce();
    await createCm(ns, 'x');
    await clock.advance(5000); // a long-lived watch: its end is not "very short"
    const rvBefore = inf.watcher.resourceVersion;
    assert.equal(rvBefore, inf.store.get(ns, 'x')?.metadata?.resourceVersion);
    await cutAndAwait(inf, rec);
    await createCm(ns, 'y');
    await clock.quiesce();
    assert.deepEqual(storeState(inf), serverState(ns));
    assert.equal(rec.lists.length, 1, 'no relist');
    assert.equal(rec.watches.length, 2);
    assert.equal(rec.watches[1], rec.watches[0]! + 5000, 'the re-watch starts at once');
    await inf.stop();
  });

  test('after compaction a resumed watch gets 410 and relists, with synthetic deletes and updates', async () => {
    const ns = await namespace();
    for (const n of ['keep', 'change', 'drop']) await createCm(ns, n, {}, { v: '1' });
    const rec = recorder();
    const inf = informer(ns, { metrics: rec });
    await clock.quiesce();
    await clock.advance(5000);
    const deleted: string[] = [];
    const updated: string[] = [];
    inf.store.onDelete((o) => deleted.push(o.metadata?.name ?? ''));
    inf.store.onUpdate((_old, o) => updated.push(o.metadata?.name ?? ''));
    // Hold the watcher in back-off so it misses the changes, then drop the history.
    control().injectFault({ resource: 'configmaps', verb: 'watch', namespace: ns, status: 500, times: 1 });
    await cutAndAwait(inf, rec);
    await eventually(() => assert.equal(inf.watcher.state, 'backoff'));
    await deleteCm(ns, 'drop');
    await patchCm(ns, 'change', { data: { v: '2' } });
    await createCm(ns, 'added');
    control().compact();
    await clock.settle();
    assert.deepEqual(storeState(inf), serverState(ns));
    assert.deepEqual(deleted, ['drop']);
    assert.deepEqual(updated, ['change']);
    assert.equal(rec.lists.length, 2, 'one relist');
    assert.ok(rec.transitions.includes('watching->listing:gone'), rec.transitions.join(' '));
    await inf.stop();
  });

  test('bookmarks advance the resourceVersion, so a resume after compaction needs no relist', async () => {
    const ns = await namespace();
    const other = await namespace();
    const rec = recorder();
    const inf = informer(ns, { metrics: rec });
    await clock.quiesce();
    const listedAt = inf.watcher.resourceVersion;
    for (let i = 0; i < 3; i++) await createCm(other, `elsewhere-${i}`);
    await clock.advance(61_000); // the server bookmarks open watches every minute
    assert.equal(inf.watcher.resourceVersion, control().resourceVersion);
    assert.ok(Number(inf.watcher.resourceVersion) > Number(listedAt));
    control().compact();
    await cutAndAwait(inf, rec);
    await createCm(ns, 'after');
    await clock.settle();
    assert.deepEqual(storeState(inf), serverState(ns));
    assert.equal(rec.lists.length, 1, 'resumed from the bookmark, no 410');
    await inf.stop();
  });

  test('injected 500s: jittered exponential back-off at exact virtual times (random = 0)', async () => {
    const ns = await namespace();
    const rec = recorder();
    control().injectFault({ resource: 'configmaps', verb: 'list', namespace: ns, status: 500, times: 2 });
    const errors: string[] = [];
    const inf = informer(ns, { metrics: rec, onError: (_e, next) => errors.push(`${next.action}+${next.delayMs}`) });
    await clock.settle();
    assert.deepEqual(rec.lists, [0, 800, 2400].map((d) => rec.lists[0]! + d));
    assert.deepEqual(errors, ['list+800', 'list+1600']);
    await clock.advance(5000);
    const t0 = clock.now() - T0;
    control().injectFault({ resource: 'configmaps', verb: 'watch', namespace: ns, status: 500, times: 4 });
    await cutAndAwait(inf, rec);
    await clock.settle();
    // Cut at t0 → re-watch at once (500) → 800 → (500) → 1600 → (500) → 3200 → (500) → 6400 → ok. A success resets.
    assert.deepEqual(
      rec.watches.slice(1).map((t) => t - t0),
      [0, 800, 2400, 5600, 12000],
    );
    assert.equal(inf.watcher.state, 'watching');
    assert.equal(rec.lists.length, 3, 'HTTP 500 on a watch re-watches, it does not relist');
    await inf.stop();
  });

  test('429 waits at least the Retry-After the server asked for', async () => {
    const ns = await namespace();
    const rec = recorder();
    control().injectFault({ resource: 'configmaps', verb: 'list', namespace: ns, status: 429, retryAfterSeconds: 5, times: 1 });
    const inf = informer(ns, { metrics: rec });
    await clock.settle();
    assert.deepEqual(rec.lists.map((t) => t - rec.lists[0]!), [0, 5000]);
    await inf.stop();
  });

  test('the periodic resync relists; unchanged objects raise no event', async () => {
    const ns = await namespace();
    await createCm(ns, 'r1');
    const rec = recorder();
    const inf = informer(ns, { metrics: rec, resyncMs: 10 * 60_000 });
    await clock.quiesce();
    let events = 0;
    inf.store.onAdd(() => events++);
    inf.store.onUpdate(() => events++);
    inf.store.onDelete(() => events++);
    await clock.advance(10 * 60_000);
    await clock.quiesce();
    assert.equal(rec.lists.length, 2);
    assert.equal(rec.lists[1]! - rec.lists[0]!, 10 * 60_000);
    assert.equal(events, 0);
    assert.deepEqual(storeState(inf), serverState(ns));
    await inf.stop();
  });
});

describe('selectors', () => {
  test('label and field selectors apply to the list and to the watch', async () => {
    const ns = await namespace();
    await createCm(ns, 'a-pre', { app: 'a' });
    await createCm(ns, 'b-pre', { app: 'b' });
    await createCm(ns, 'a-other', { app: 'a' });
    const inf = informer(ns, { labelSelector: 'app=a', fieldSelector: 'metadata.name!=a-other' });
    await clock.quiesce();
    assert.deepEqual(Object.keys(storeState(inf)), ['a-pre']);
    await createCm(ns, 'a-new', { app: 'a' });
    await createCm(ns, 'b-new', { app: 'b' });
    await patchCm(ns, 'b-pre', { metadata: { labels: { app: 'a' } } });
    await patchCm(ns, 'a-pre', { metadata: { labels: { app: 'b' } } });
    await clock.quiesce();
    assert.deepEqual(Object.keys(storeState(inf)), ['a-new', 'b-pre']);
    const expected = Object.fromEntries(Object.entries(serverState(ns, 'app=a')).filter(([k]) => k !== 'a-other'));
    assert.deepEqual(storeState(inf), expected);
    await inf.stop();
  });
});

describe('stop', () => {
  test('stop() is quiet and leaves no watch, timer or socket behind', async () => {
    const ns = await namespace();
    const rec = recorder();
    const errors: unknown[] = [];
    const client = await bed.newClient();
    const inf = informer(ns, { client, metrics: rec, resyncMs: 60_000, onError: (e) => errors.push(e), name: 'stoppable' });
    await clock.quiesce();
    assert.equal(inf.watcher.state, 'watching');
    await inf.stop();
    assert.equal(inf.watcher.state, 'stopped');
    assert.deepEqual(errors, []);
    assert.deepEqual(clock.pendingTimers().filter((t) => t.name.includes('stoppable')), []);
    await clock.quiesce();
    assert.equal(clock.busy, 0);
    const agent = client.connection.agent as Agent;
    assert.equal(Object.values(agent.sockets).flat().length, 0, 'no socket in use');
    const before = rec.watches.length + rec.lists.length;
    await clock.advance(10 * 60_000);
    assert.equal(rec.watches.length + rec.lists.length, before, 'no restart');
    // The server learns of the closed socket asynchronously.
    await eventually(() => assert.equal(control().cutWatches(), 0, 'the server has no open watch'));
  });
});

// ---- a scripted server for a silent stream and a malformed line ----

async function scriptedWatchServer(onWatch: (res: import('node:http').ServerResponse, n: number) => void): Promise<{ client: KubeClient; watches: () => number; close(): Promise<void> }> {
  let watches = 0;
  const srv: Server = createServer((req, res) => {
    if ((req.url ?? '').includes('watch=true')) {
      onWatch(res, ++watches);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '10' }, items: [{ metadata: { name: 'a', namespace: 'default', resourceVersion: '5' } }] }));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const agent = new Agent({ keepAlive: true });
  const connection = { server: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, agent, namespace: 'default', source: 'test', headers: async () => ({}), close: () => agent.destroy() };
  return {
    client: new KubeClient(connection, { clock }),
    watches: () => watches,
    close: async () => {
      agent.destroy();
      srv.closeAllConnections();
      await new Promise<void>((r) => srv.close(() => r()));
    },
  };
}

describe('scripted servers', () => {
  test('the idle watchdog aborts a silent stream at timeoutSeconds + margin and re-watches', async () => {
    const s = await scriptedWatchServer((res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.flushHeaders(); // and then nothing, ever
    });
    const errors: string[] = [];
    const inf = new Informer({ client: s.client, ref: BUILTIN.configmaps, namespace: 'default', random: () => 0, resyncMs: 0, watchTimeoutSeconds: { min: 60, max: 60 }, idleMarginMs: 5000, onError: (e) => errors.push(String(e)) });
    try {
      inf.start();
      await settleUntil(clock, () => assert.equal(s.watches(), 1));
      await clock.advance(64_999);
      assert.equal(s.watches(), 1);
      await clock.advance(1);
      await settleUntil(clock, () => assert.equal(s.watches(), 2), { maxMs: 0 });
      assert.match(errors[0] ?? '', /no data for 65000 ms/);
      assert.equal(inf.store.get('default', 'a')?.metadata?.resourceVersion, '5');
    } finally {
      await inf.stop();
      await s.close();
    }
  });

  test('a burst of events in one chunk is handled a few at a time, in order, with I/O served between turns', async () => {
    const burst = 40;
    const s = await scriptedWatchServer((res, n) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      if (n !== 1) return void res.flushHeaders();
      let lines = '';
      for (let i = 0; i < burst; i++) lines += `${JSON.stringify({ type: 'ADDED', object: { metadata: { name: `p${i}`, namespace: 'default', resourceVersion: String(11 + i) } } })}\n`;
      res.write(lines); // one chunk
    });
    const inf = new Informer({ client: s.client, ref: BUILTIN.configmaps, namespace: 'default', random: () => 0, resyncMs: 0 });
    const added: string[] = [];
    // A turn of the loop requested as the burst starts: it must come before the burst's last event.
    let handledAtTurn: number | undefined;
    inf.store.onAdd((obj) => {
      added.push(obj.metadata?.name ?? '');
      if (added.length === 2) setImmediate(() => (handledAtTurn = added.length - 1));
    });
    try {
      inf.start();
      await settleUntil(clock, () => assert.equal(added.length, burst + 1));
      assert.deepEqual(added, ['a', ...Array.from({ length: burst }, (_, i) => `p${i}`)]);
      assert.ok(handledAtTurn !== undefined && handledAtTurn < burst, `the loop turned only after ${String(handledAtTurn)} of ${burst} events`);
      assert.equal(inf.watcher.resourceVersion, String(10 + burst));
    } finally {
      await inf.stop();
      await s.close();
    }
  });

  test('a malformed line is reported and the watch resumes from the last good version', async () => {
    const s = await scriptedWatchServer((res, n) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      if (n === 1) {
        res.write('{"type":"ADDED","object":{"metadata":{"name":"b","namespace":"default","resourceVersion":"11"}}}\n');
        res.write('{"type":"MODIFIED","object":\n');
      } else res.flushHeaders();
    });
    const errors: string[] = [];
    const rec = recorder();
    const inf = new Informer({ client: s.client, ref: BUILTIN.configmaps, namespace: 'default', random: () => 0, resyncMs: 0, metrics: rec, onError: (e, next) => errors.push(`${next.action}+${next.delayMs} ${String(e)}`) });
    try {
      inf.start();
      await settleUntil(clock, () => assert.equal(s.watches(), 2));
      assert.match(errors[0] ?? '', /^watch\+800 .*malformed watch line/);
      assert.equal(inf.watcher.resourceVersion, '11');
      assert.deepEqual(inf.store.keys().sort(), ['default/a', 'default/b']);
    } finally {
      await inf.stop();
      await s.close();
    }
  });
});
