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
});
