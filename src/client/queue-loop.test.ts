import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { silentLogger } from './logger.ts';
import { QueueLoop, type QueueLoopOptions } from './queue-loop.ts';

function harness(overrides: Partial<QueueLoopOptions> = {}) {
  const clock = new VirtualClock(0);
  const handled: string[] = [];
  const subscribers: ((keys: Iterable<string>) => void)[] = [];
  let unsubscribed = 0;
  let synced!: () => void;
  const sync = new Promise<void>((resolve) => (synced = resolve));
  const keys = new Set(['ns/a', 'ns/b']);
  const loop = new QueueLoop({
    name: 'test',
    clock,
    log: silentLogger,
    workers: 2,
    resyncMs: 60_000,
    waitForSync: () => sync,
    subscribe: (add) => {
      subscribers.push(add);
      return [() => void unsubscribed++, () => void unsubscribed++];
    },
    keys: () => keys,
    handle: async (key) => void handled.push(key),
    ...overrides,
  });
  return { clock, loop, handled, subscribers, synced, keys, unsubscribed: () => unsubscribed };
}

describe('QueueLoop', () => {
  test('nothing runs before the caches sync; then every key once, events add keys, the resync adds them all again', async () => {
    const h = harness();
    const started = h.loop.start();
    await h.clock.quiesce();
    assert.deepEqual([h.handled, h.subscribers.length], [[], 0], 'waiting for the caches');
    h.synced();
    await started;
    await h.clock.quiesce();
    assert.deepEqual(h.handled.sort(), ['ns/a', 'ns/b']);
    h.subscribers[0]?.(['ns/c']);
    await h.clock.quiesce();
    assert.deepEqual(h.handled.at(-1), 'ns/c');
    h.handled.length = 0;
    await h.clock.advance(60_000);
    assert.deepEqual(h.handled.sort(), ['ns/a', 'ns/b'], 'the resync');
    await h.loop.stop();
    assert.equal(h.unsubscribed(), 2, 'every subscription undone');
  });

  test('resyncMs 0: no resync; a stopped loop does not start again', async () => {
    const h = harness({ resyncMs: 0 });
    h.synced();
    await h.loop.start();
    await h.clock.quiesce();
    h.handled.length = 0;
    await h.clock.advance(10 * 60_000);
    assert.deepEqual(h.handled, []);
    await h.loop.stop();
    await h.loop.start();
    assert.equal(h.subscribers.length, 1, 'not subscribed twice');
  });

  test('a stop while waiting for the caches: nothing is subscribed or run afterwards', async () => {
    const h = harness();
    const started = h.loop.start();
    await h.loop.stop();
    h.synced();
    await started;
    await h.clock.quiesce();
    assert.deepEqual([h.handled, h.subscribers.length], [[], 0]);
  });

  test('start twice starts once: the second call returns the first promise; the owned informers start once', async () => {
    const informer = fakeInformer();
    const h = harness({ informers: [informer] });
    h.synced();
    informer.synced();
    const first = h.loop.start();
    assert.equal(h.loop.start(), first);
    await first;
    await h.loop.start();
    assert.deepEqual([informer.starts(), h.subscribers.length], [1, 1]);
    await h.loop.stop();
  });

  test('stop before start: nothing starts, then or later', async () => {
    const informer = fakeInformer();
    const h = harness({ informers: [informer] });
    h.synced();
    informer.synced();
    await h.loop.stop();
    await h.loop.start();
    await h.clock.quiesce();
    assert.deepEqual([informer.starts(), h.subscribers.length, h.handled], [0, 0, []]);
  });

  test('stop is idempotent: the hooks and the informers stop once, in order; each sync in flight sees its signal abort first', async () => {
    const log: string[] = [];
    const informer = fakeInformer(log);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inSync = new Promise<void>((resolve) => (entered = resolve));
    const h = harness({
      informers: [informer],
      keys: () => ['ns/slow'],
      handle: async (key, context) => {
        context.signal.addEventListener('abort', () => log.push(`signal aborted for ${key}`));
        entered();
        await held;
      },
      onStopping: () => void log.push('onStopping'),
      onStopped: () => void log.push('onStopped'),
    });
    h.synced();
    informer.synced();
    await h.loop.start();
    await inSync;
    const first = h.loop.stop();
    assert.equal(h.loop.stop(), first);
    release();
    await first;
    await h.loop.stop();
    assert.deepEqual(log, ['onStopping', 'signal aborted for ns/slow', 'informer stopped', 'onStopped']);
  });

  test('a stop while the owned informers list: the wait gives up, start resolves and nothing runs', async () => {
    const informer = fakeInformer();
    const h = harness({ informers: [informer] });
    h.synced();
    const started = h.loop.start();
    await h.loop.stop();
    await started;
    await h.clock.quiesce();
    assert.deepEqual([informer.starts(), informer.stops(), h.subscribers.length, h.handled], [1, 1, 0, []]);
  });

  test("the caller's signal cancels the wait: start rejects with its reason, stop ends what started", async () => {
    const informer = fakeInformer();
    const h = harness({ informers: [informer], waitForSync: () => Promise.resolve() });
    const abort = new AbortController();
    const started = h.loop.start(abort.signal);
    abort.abort(new Error('lost the lease'));
    await assert.rejects(started, /lost the lease/);
    await h.loop.stop();
    assert.deepEqual([informer.stops(), h.subscribers.length], [1, 0]);
  });

  test('the queue gets the race hook: in race mode a sync waits its drawn delay on the clock', async () => {
    const delays: string[] = [];
    const h = harness({ resyncMs: 0, races: { seed: 1, delay: (kind, channel) => (delays.push(`${kind} ${channel}`), 50), rank: () => 0 } });
    h.synced();
    await h.loop.start();
    await h.clock.quiesce();
    assert.deepEqual(h.handled, [], 'both syncs wait');
    await h.clock.advance(50);
    assert.deepEqual([h.handled.sort(), delays], [['ns/a', 'ns/b'], ['sync test', 'sync test']]);
    await h.loop.stop();
  });
});

/** An informer as the loop sees it: counts starts and stops, syncs when told, honours the wait's signal. */
function fakeInformer(log: string[] = []) {
  let starts = 0;
  let stops = 0;
  let synced!: () => void;
  const sync = new Promise<void>((resolve) => (synced = resolve));
  return {
    start: () => void starts++,
    stop: async () => {
      stops++;
      log.push('informer stopped');
    },
    waitForSync: (signal?: AbortSignal) =>
      new Promise<void>((resolve, reject) => {
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
        void sync.then(resolve);
      }),
    synced: () => synced(),
    starts: () => starts,
    stops: () => stops,
  };
}
