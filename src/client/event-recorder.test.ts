/**
 * EventRecorder against the embedded API server on the virtual clock: the
 * Event's fields, aggregation into a series within the window (and a new
 * Event after it), coalescing of bursts, a series whose Event vanished, and
 * failures that are logged, never thrown.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../clock/virtual-clock.ts';
import type { ServingCertificate } from './loopback-certificates.ts';
import type { KubeObject } from '../k8s/types.ts';
import { startClientTestBed, testBedCertificate, type ClientTestBed } from '../testing/client-test-bed.ts';
import { EventRecorder, SERIES_WINDOW_MS, type EventRecorderOptions } from './event-recorder.ts';
import { memoryLogger } from './logger.ts';
import { BUILTIN } from './resources.ts';

const T0 = Date.UTC(2026, 0, 1);
let cert: ServingCertificate;
let clock: VirtualClock;
let bed: ClientTestBed;
let podSeq = 0;

before(async () => {
  cert = testBedCertificate();
  clock = new VirtualClock(T0);
  bed = await startClientTestBed(clock, cert);
});
after(async () => {
  await bed.close();
});

type Event = KubeObject & { note?: string; reason?: string; type?: string; action?: string; eventTime?: string; reportingController?: string; reportingInstance?: string; regarding?: Record<string, unknown>; series?: { count: number; lastObservedTime: string } };

function recorder(extra: Partial<EventRecorderOptions> = {}): EventRecorder {
  return new EventRecorder({ client: bed.client, reportingController: 'workloadspread.io/manager', reportingInstance: 'manager-0', ...extra });
}

async function pod(): Promise<KubeObject> {
  const name = `ev-pod-${++podSeq}`;
  return bed.client.create<KubeObject>(BUILTIN.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
}

async function eventsAbout(name: string, namespace = 'default'): Promise<Event[]> {
  const list = await bed.client.list<Event>(BUILTIN.eventsV1, { namespace, fieldSelector: `regarding.name=${name}` });
  return list.items;
}

const MICRO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

describe('EventRecorder', () => {
  test('the first occurrence creates an events.k8s.io/v1 Event with every field', async () => {
    const p = await pod();
    const rec = recorder();
    await clock.advance(1234);
    rec.record(p, { type: 'Warning', reason: 'SubsetFull', note: 'no subset has room', action: 'Admit' });
    await rec.flush();
    const [ev, ...rest] = await eventsAbout(p.metadata?.name ?? '');
    assert.equal(rest.length, 0);
    assert.ok(ev);
    assert.equal(ev.type, 'Warning');
    assert.equal(ev.reason, 'SubsetFull');
    assert.equal(ev.note, 'no subset has room');
    assert.equal(ev.action, 'Admit');
    assert.equal(ev.reportingController, 'workloadspread.io/manager');
    assert.equal(ev.reportingInstance, 'manager-0');
    assert.equal(ev.eventTime, '2026-01-01T00:00:01.234000Z');
    assert.match(ev.eventTime ?? '', MICRO);
    assert.deepEqual(ev.regarding, { apiVersion: 'v1', kind: 'Pod', name: p.metadata?.name, namespace: 'default', uid: p.metadata?.uid, resourceVersion: p.metadata?.resourceVersion });
    assert.equal(ev.series, undefined);
    assert.ok(ev.metadata?.name?.startsWith(`${p.metadata?.name}.`));
  });

  test('repeats within the window PATCH the series of the same Event', async () => {
    const p = await pod();
    const rec = recorder();
    const input = { type: 'Normal' as const, reason: 'Rescheduled', note: 'moved to zone b', action: 'Reconcile' };
    rec.record(p, input);
    await rec.flush();
    const creates = bed.server.control.requestCount({ resource: 'events', verb: 'create' });
    const patches = bed.server.control.requestCount({ resource: 'events', verb: 'patch' });
    await clock.advance(60_000);
    rec.record(p, input);
    await rec.flush();
    await clock.advance(60_000);
    rec.record(p, input);
    await rec.flush();
    const events = await eventsAbout(p.metadata?.name ?? '');
    assert.equal(events.length, 1);
    assert.equal(events[0]?.series?.count, 3);
    assert.equal(events[0]?.series?.lastObservedTime, new Date(clock.now()).toISOString().replace('Z', '000Z'));
    assert.equal(bed.server.control.requestCount({ resource: 'events', verb: 'create' }), creates, 'no new Event');
    assert.equal(bed.server.control.requestCount({ resource: 'events', verb: 'patch' }) - patches, 2);
  });

  test('a different note, reason or object is another Event; after the window a new Event starts', async () => {
    const p = await pod();
    const q = await pod();
    const rec = recorder();
    rec.record(p, { type: 'Normal', reason: 'A', note: 'one', action: 'X' });
    rec.record(p, { type: 'Normal', reason: 'A', note: 'two', action: 'X' });
    rec.record(p, { type: 'Normal', reason: 'B', note: 'one', action: 'X' });
    rec.record(q, { type: 'Normal', reason: 'A', note: 'one', action: 'X' });
    await rec.flush();
    assert.equal((await eventsAbout(p.metadata?.name ?? '')).length, 3);
    assert.equal((await eventsAbout(q.metadata?.name ?? '')).length, 1);
    await clock.advance(SERIES_WINDOW_MS + 1);
    rec.record(q, { type: 'Normal', reason: 'A', note: 'one', action: 'X' });
    await rec.flush();
    const events = await eventsAbout(q.metadata?.name ?? '');
    assert.equal(events.length, 2);
    assert.deepEqual(events.map((e) => e.series?.count), [undefined, undefined]);
  });

  test('a burst is coalesced: one create, few patches, the full count', async () => {
    const p = await pod();
    const rec = recorder();
    const before = bed.server.control.requestCount({ resource: 'events' });
    for (let i = 0; i < 20; i++) rec.record(p, { type: 'Warning', reason: 'Burst', note: 'again', action: 'Admit' });
    await rec.flush();
    const events = await eventsAbout(p.metadata?.name ?? '');
    assert.equal(events.length, 1);
    assert.equal(events[0]?.series?.count, 20);
    assert.ok(bed.server.control.requestCount({ resource: 'events' }) - before <= 3, 'writes are folded together');
  });

  test('an Event deleted meanwhile: the series continues in a new Event with its count', async () => {
    const p = await pod();
    const rec = recorder();
    const input = { type: 'Normal' as const, reason: 'Expired', note: 'ttl', action: 'X' };
    rec.record(p, input);
    await rec.flush();
    const [first] = await eventsAbout(p.metadata?.name ?? '');
    await bed.client.delete(BUILTIN.eventsV1, first?.metadata?.name ?? '', { namespace: 'default' });
    rec.record(p, input);
    await rec.flush();
    const events = await eventsAbout(p.metadata?.name ?? '');
    assert.equal(events.length, 1);
    assert.notEqual(events[0]?.metadata?.name, first?.metadata?.name);
    assert.equal(events[0]?.series?.count, 2);
  });

  test('cluster-scoped objects get their Events in default; long notes are cut to 1 KiB', async () => {
    const rec = recorder();
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-ev', uid: 'u-1' } };
    rec.record(node, { type: 'Normal', reason: 'Long', note: 'ü'.repeat(2000), action: 'X' });
    await rec.flush();
    const [ev] = await eventsAbout('node-ev');
    assert.ok(ev);
    assert.equal(ev.metadata?.namespace, 'default');
    assert.ok(Buffer.byteLength(ev.note ?? '', 'utf8') <= 1024);
    assert.ok(ev.note?.endsWith('...'));
  });

  test('failures are logged, never thrown; transient ones are retried on the clock', async () => {
    const p = await pod();
    const log = memoryLogger();
    const rec = recorder({ log });
    bed.server.control.injectFault({ resource: 'events', verb: 'create', status: 403, times: 1 });
    assert.doesNotThrow(() => rec.record(p, { type: 'Normal', reason: 'Denied', note: 'x', action: 'X' }));
    await rec.flush();
    assert.equal(log.lines.filter((l) => l.level === 'warn').length, 1);
    assert.equal((await eventsAbout(p.metadata?.name ?? '')).filter((e) => e.reason === 'Denied').length, 0);

    bed.server.control.injectFault({ resource: 'events', verb: 'create', status: 500, times: 2 });
    const started = clock.now();
    rec.record(p, { type: 'Normal', reason: 'Retried', note: 'x', action: 'X' });
    const flushed = rec.flush();
    await clock.settle();
    await flushed;
    assert.equal(clock.now() - started, 1000 + 2000, 'retries after 1 s and 2 s');
    assert.equal((await eventsAbout(p.metadata?.name ?? '')).filter((e) => e.reason === 'Retried').length, 1);
  });
});
