/**
 * WorkQueue on the virtual clock: de-duplication, one worker per key,
 * re-queue of keys added while processing, per-key exponential back-off at
 * exact virtual times, requeue-after (foreground and background), terminal
 * errors, shutdown with and without draining, metrics; and a property test
 * over random schedules: never two handlers for one key at once, every key
 * processed at least once after its last add.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { ApiError } from './errors.ts';
import { memoryLogger } from './logger.ts';
import { TerminalError, WorkQueue, type WorkHandler } from './workqueue.ts';

const T0 = Date.UTC(2026, 0, 1);

function setup(workers = 1, handler?: (key: string, log: string[], clock: VirtualClock, q: WorkQueue<string>) => ReturnType<WorkHandler<string>>) {
  const clock = new VirtualClock(T0);
  const log: string[] = [];
  const logger = memoryLogger();
  const q = new WorkQueue<string>({ clock, name: 'test', log: logger });
  const running = q.run(workers, (key) => {
    log.push(`${key}@${clock.now() - T0}`);
    return handler?.(key, log, clock, q);
  });
  return { clock, q, log, logger, running };
}

describe('WorkQueue', () => {
  test('a key added many times before it is taken is processed once, FIFO across keys', async () => {
    const clock = new VirtualClock(T0);
    const q = new WorkQueue<string>({ clock });
    for (const k of ['a', 'b', 'a', 'c', 'b', 'a']) q.add(k);
    assert.equal(q.length, 3);
    const seen: string[] = [];
    const running = q.run(1, (k) => void seen.push(k));
    await clock.settle();
    assert.deepEqual(seen, ['a', 'b', 'c']);
    await q.shutdown();
    await running;
  });

  test('turnPerSync: I/O that arrives during a sync is served before the next queued sync, not after all of them', async () => {
    const orders: Record<string, string[]> = {};
    for (const turnPerSync of [false, true]) {
      const clock = new VirtualClock(T0);
      const q = new WorkQueue<string>({ clock, turnPerSync });
      const order: string[] = [];
      for (const k of ['a', 'b', 'c']) q.add(k);
      const running = q.run(1, (k) => {
        order.push(k);
        // What a socket read stands for: work that waits for the event loop's next turn.
        if (k === 'a') setImmediate(() => order.push('io'));
      });
      await clock.settle();
      await new Promise((resolve) => setImmediate(resolve));
      orders[String(turnPerSync)] = order;
      await q.shutdown();
      await running;
    }
    assert.deepEqual(orders['false'], ['a', 'b', 'c', 'io'], 'without it, keys queued together run back to back');
    assert.deepEqual(orders['true'], ['a', 'io', 'b', 'c']);
  });

  test('a key added while processing is processed again after done, never concurrently', async () => {
    let active = 0;
    let maxActive = 0;
    let calls = 0;
    const { clock, q, log, running } = setup(3, async (key, _log, clock, q) => {
      active++;
      maxActive = Math.max(maxActive, active);
      if (calls++ === 0) {
        q.add(key);
        q.add(key);
      }
      await clock.sleep(100);
      active--;
    });
    q.add('a');
    await clock.settle();
    assert.deepEqual(log, ['a@0', 'a@100']);
    assert.equal(maxActive, 1);
    await q.shutdown();
    await running;
  });

  test('errors requeue with per-key exponential back-off 5 ms · 2^n; success forgets', async () => {
    let failuresLeft = 3;
    const { clock, q, log, logger, running } = setup(1, (key) => {
      if (key === 'flaky' && failuresLeft-- > 0) throw new Error('boom');
    });
    q.add('flaky');
    await clock.settle();
    assert.deepEqual(log, ['flaky@0', 'flaky@5', 'flaky@15', 'flaky@35']);
    assert.equal(q.numRequeues('flaky'), 0);
    assert.deepEqual(logger.lines.map((l) => l.level), ['warn', 'warn', 'warn']);
    await q.shutdown();
    await running;
  });

  test('the back-off caps at 1000 s', () => {
    const q = new WorkQueue<string>({ clock: new VirtualClock(T0) });
    assert.deepEqual([0, 1, 2, 10, 17, 18, 40, 1000].map((n) => q.backoffFor(n)), [5, 10, 20, 5120, 655_360, 1_000_000, 1_000_000, 1_000_000]);
  });

  test('a failure while the key\'s retry is already waiting does not push the retry further out', async () => {
    // Events (a pod becoming ready) run the key between retries; while the cause lasts those runs fail too.
    let down = true;
    const { clock, q, log, running } = setup(1, (key) => {
      if (key === 'rs' && down) throw new Error('webhook down');
    });
    q.add('rs');
    await clock.advance(1);
    for (let i = 0; i < 12; i++) {
      q.add('rs');
      await clock.advance(0);
    }
    // Without the rule each of those 12 failures doubled the back-off: the next retry would be 5 ms · 2^13 ≈ 41 s away.
    assert.equal(q.numRequeues('rs'), 1, 'only the failure that scheduled the retry counts');
    await clock.advance(4);
    assert.deepEqual(log.slice(-1), ['rs@5'], 'the retry came when the first failure scheduled it');
    down = false;
    await clock.settle();
    assert.equal(log.at(-1), 'rs@15');
    assert.equal(q.numRequeues('rs'), 0);
    await q.shutdown();
    await running;
  });

  test('retries of many keys together: 10 per second after a burst of 100 (client-go\'s controller rate limiter)', async () => {
    const { clock, q, log, running } = setup(4, (key) => {
      if (!log.includes(`${key}@retried`)) {
        log.push(`${key}@retried`);
        throw new Error('first run fails');
      }
    });
    for (let i = 0; i < 150; i++) q.add(`k${i}`);
    await clock.settle();
    const retryTime = (key: string) => Number(log.filter((l) => l.startsWith(`${key}@`) && !l.endsWith('@retried'))[1]?.split('@')[1]);
    assert.equal(retryTime('k0'), 5, 'within the burst: the per-key back-off');
    assert.equal(retryTime('k99'), 5);
    assert.equal(retryTime('k100'), 100, 'past the burst: one token per 100 ms');
    assert.equal(retryTime('k149'), 5000);
    await q.shutdown();
    await running;
  });

  test('conflicts retry quietly (debug, not warn)', async () => {
    let first = true;
    const { clock, q, logger, running } = setup(1, () => {
      if (first) {
        first = false;
        throw new ApiError(409, { reason: 'Conflict', code: 409 }, { method: 'PUT', path: '/x' });
      }
    });
    q.add('k');
    await clock.settle();
    assert.deepEqual(logger.lines.map((l) => l.level), ['debug']);
    await q.shutdown();
    await running;
  });

  test('a terminal error is logged and not retried', async () => {
    const clock = new VirtualClock(T0);
    const logger = memoryLogger();
    const errors: boolean[] = [];
    const q = new WorkQueue<string>({ clock, log: logger, metrics: { errors: (t) => errors.push(t) } });
    let calls = 0;
    const running = q.run(1, () => {
      calls++;
      throw new TerminalError('the spec is invalid');
    });
    q.add('bad');
    await clock.settle();
    assert.equal(calls, 1);
    assert.deepEqual(errors, [true]);
    assert.equal(logger.lines[0]?.level, 'error');
    await q.shutdown();
    await running;
  });

  test('requeueAfter processes the key again after the delay; background requeues do not hold settle()', async () => {
    let n = 0;
    const { clock, q, log, running } = setup(1, () => {
      n++;
      if (n === 1) return { requeueAfterMs: 1000 };
      if (n === 2) return { requeueAfterMs: 300_000, background: true };
      return undefined;
    });
    q.add('r');
    const settled = await clock.settle();
    assert.deepEqual(log, ['r@0', 'r@1000']);
    assert.equal(settled.quiescent, true);
    assert.equal(clock.now() - T0, 1000, 'settle() did not wait for the background requeue');
    await clock.advance(300_000);
    assert.deepEqual(log, ['r@0', 'r@1000', 'r@301000']);
    await q.shutdown();
    await running;
  });

  test('addAfter keeps the earliest pending time per key', async () => {
    const { clock, q, log, running } = setup(1);
    q.addAfter('a', 500);
    q.addAfter('a', 100);
    q.addAfter('b', 100);
    q.addAfter('b', 500);
    q.addAfter('c', 0);
    await clock.settle();
    assert.deepEqual(log, ['c@0', 'a@100', 'b@100']);
    await q.shutdown();
    await running;
  });

  test('shutdown drains what is queued, ignores later adds, cancels delayed adds', async () => {
    const { clock, q, log, running } = setup(1, async (_k, _log, clock) => {
      await clock.sleep(10);
    });
    q.add('a');
    q.add('b');
    q.add('c');
    q.addAfter('later', 5000);
    const done = q.shutdown();
    q.add('ignored');
    q.addRateLimited('ignored-too');
    await clock.settle();
    await done;
    await running;
    assert.deepEqual(log, ['a@0', 'b@10', 'c@20']);
    assert.deepEqual(clock.pendingTimers(), []);
    assert.equal(await q.get(), undefined);
  });

  test('shutdown without drain drops the queue and aborts the handlers\' signal', async () => {
    const clock = new VirtualClock(T0);
    const q = new WorkQueue<string>({ clock });
    const seen: string[] = [];
    let aborted = false;
    const running = q.run(1, async (key, ctx) => {
      seen.push(key);
      try {
        await clock.sleep(1000, ctx.signal);
      } catch {
        aborted = true;
      }
    });
    q.add('a');
    q.add('b');
    await clock.quiesce();
    await q.shutdown({ drain: false });
    await running;
    assert.deepEqual(seen, ['a']);
    assert.equal(aborted, true);
  });

  test('an item waits while its worker sleeps on the clock, and time passes meanwhile', async () => {
    const { clock, q, log, running } = setup(1, async (key, _log, clock) => {
      if (key === 'sleeper') await clock.sleep(250);
    });
    q.add('sleeper');
    q.add('next');
    await clock.settle();
    assert.deepEqual(log, ['sleeper@0', 'next@250']);
    await q.shutdown();
    await running;
  });

  test('metrics: depth, adds, retries, latency, work duration', async () => {
    const clock = new VirtualClock(T0);
    const m = { depth: [] as number[], adds: 0, retries: 0, latency: [] as number[], work: [] as number[] };
    const q = new WorkQueue<string>({
      clock,
      metrics: { depth: (d) => m.depth.push(d), adds: () => m.adds++, retries: () => m.retries++, latency: (ms) => m.latency.push(ms), workDuration: (ms) => m.work.push(ms) },
    });
    q.add('a');
    q.add('b');
    await clock.advance(7);
    let failed = false;
    const running = q.run(1, async () => {
      await clock.sleep(3);
      if (!failed) {
        failed = true;
        throw new Error('once');
      }
    });
    await clock.settle();
    assert.equal(m.adds, 3, 'two adds and the rate-limited one');
    assert.equal(m.retries, 1);
    assert.deepEqual(m.latency, [7, 10, 0]);
    assert.deepEqual(m.work, [3, 3, 3]);
    assert.deepEqual(m.depth.slice(0, 3), [1, 2, 1]);
    await q.shutdown();
    await running;
  });

  test('manual get/done', async () => {
    const clock = new VirtualClock(T0);
    const q = new WorkQueue<string>({ clock });
    q.add('x');
    const key = await q.get();
    assert.equal(key, 'x');
    q.add('x');
    assert.equal(q.length, 0, 'queued again only at done');
    q.done('x');
    assert.equal(q.length, 1);
    assert.equal(await q.get(), 'x');
  });

  test('property: never two handlers on one key at once; every key processed after its last add', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.record({ key: fc.constantFrom('a', 'b', 'c', 'd', 'e'), at: fc.integer({ min: 0, max: 60 }), delayed: fc.integer({ min: 0, max: 30 }) }), { minLength: 1, maxLength: 40 }),
        fc.array(fc.integer({ min: 0, max: 25 }), { minLength: 1, maxLength: 10 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 10 }),
        async (workers, adds, durations, fails) => {
          const clock = new VirtualClock(T0);
          const q = new WorkQueue<string>({ clock });
          const active = new Set<string>();
          const events: { key: string; type: 'add' | 'start' }[] = [];
          const failuresOf = new Map<string, number>();
          let calls = 0;
          let overlap: string | undefined;
          for (const a of adds) {
            clock.setTimeout(() => {
              // A delayed add may be merged into an earlier pending one; either way the
              // key must be processed after this call.
              events.push({ key: a.key, type: 'add' });
              if (a.delayed > 0) q.addAfter(a.key, a.delayed);
              else q.add(a.key);
            }, a.at);
          }
          const running = q.run(workers, async (key) => {
            if (active.has(key)) overlap = key;
            active.add(key);
            events.push({ key, type: 'start' });
            const i = calls++;
            await clock.sleep(durations[i % durations.length]!);
            active.delete(key);
            const failed = failuresOf.get(key) ?? 0;
            if (fails[i % fails.length] === true && failed < 2) {
              failuresOf.set(key, failed + 1);
              throw new Error('transient');
            }
          });
          await clock.settle();
          await q.shutdown();
          await running;
          assert.equal(overlap, undefined, `two handlers ran for ${overlap ?? ''}`);
          for (const key of new Set(adds.map((a) => a.key))) {
            const lastAdd = events.map((e) => e.type === 'add' && e.key === key).lastIndexOf(true);
            const lastStart = events.map((e) => e.type === 'start' && e.key === key).lastIndexOf(true);
            assert.ok(lastStart > lastAdd, `${key} was not processed after its last add`);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
