import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { QuiescenceTimeout, VirtualClock } from './virtual-clock.ts';

const T0 = Date.UTC(2026, 0, 1);

describe('VirtualClock', () => {
  test('advance fires due timers in (time, creation) order and sets now for each', async () => {
    const clock = new VirtualClock(T0);
    const seen: string[] = [];
    clock.setTimeout(() => void seen.push(`b@${clock.now() - T0}`), 200);
    clock.setTimeout(() => void seen.push(`a@${clock.now() - T0}`), 100);
    clock.setTimeout(() => void seen.push(`c@${clock.now() - T0}`), 200);
    clock.setTimeout(() => void seen.push('late'), 1000);
    await clock.advance(500);
    assert.deepEqual(seen, ['a@100', 'b@200', 'c@200']);
    assert.equal(clock.now(), T0 + 500);
  });

  test('settle jumps through foreground timers and ignores background ones', async () => {
    const clock = new VirtualClock(T0);
    let heartbeats = 0;
    clock.setInterval(() => void heartbeats++, 10_000, { background: true });
    let done = false;
    clock.setTimeout(() => {
      clock.setTimeout(() => {
        done = true;
      }, 60_000);
    }, 5 * 60_000);
    const result = await clock.settle();
    assert.equal(done, true);
    assert.equal(result.quiescent, true);
    assert.equal(clock.now(), T0 + 6 * 60_000);
    assert.equal(heartbeats, 36); // background timers fired on the way, none waited for after
  });

  test('settle stops at its virtual deadline when work keeps being scheduled', async () => {
    const clock = new VirtualClock(T0);
    const tick = () => void clock.setTimeout(tick, 1000);
    tick();
    const result = await clock.settle(10_000);
    assert.equal(result.quiescent, false);
    assert.equal(clock.now(), T0 + 10_000);
  });

  test('time does not move while a tracked activity is busy', async () => {
    const clock = new VirtualClock(T0);
    const observed: number[] = [];
    const end = clock.activity.begin('request');
    clock.setTimeout(() => void observed.push(clock.now()), 50);
    const advancing = clock.advance(100);
    await new Promise((r) => setTimeout(r, 20)); // real time passes; virtual time must not
    assert.equal(clock.now(), T0);
    assert.deepEqual(observed, []);
    end();
    await advancing;
    assert.deepEqual(observed, [T0 + 50]);
  });

  test('quiesce looks again when work began and ended while it waited for I/O (an answer may still be on its way)', async () => {
    const clock = new VirtualClock(T0);
    let answered = false;
    // A server takes a request and answers at once (tracked, briefly); its answer reaches
    // the caller, which is not busy meanwhile, a couple of event-loop turns later.
    setImmediate(() => {
      clock.activity.begin('server answers')();
      setImmediate(() => setImmediate(() => void (answered = true)));
    });
    await clock.quiesce();
    assert.equal(answered, true);
  });

  test('quiesceAll waits for the other callers of quiesce and what they release, before time may move', async () => {
    const clock = new VirtualClock(T0);
    clock.setTimeout(() => {}, 10, { name: 'next' });
    // Work driven on the clock that itself waits for quiescence, starting a turn after the driver looks.
    let resumedAt: number | undefined;
    setImmediate(() => void clock.quiesce().then(() => (resumedAt = clock.now())));
    await clock.quiesceAll();
    assert.equal(resumedAt, T0, 'the work went on before the driver could move time');
    await clock.advance(10);
    assert.equal(clock.now(), T0 + 10);
  });

  test('an activity sleeping on the clock lets time move (retry with back-off)', async () => {
    const clock = new VirtualClock(T0);
    const attempts: number[] = [];
    const work = clock.activity.run('retry loop', async () => {
      for (const backoff of [10, 50, 250]) {
        attempts.push(clock.now() - T0);
        await clock.sleep(backoff);
      }
      attempts.push(clock.now() - T0);
    });
    await clock.settle();
    await work;
    assert.deepEqual(attempts, [0, 10, 60, 310]);
    assert.equal(clock.busy, 0);
  });

  test('timer callbacks are tracked until their promise settles', async () => {
    const clock = new VirtualClock(T0);
    let finished = false;
    clock.setTimeout(async () => {
      await new Promise((r) => setTimeout(r, 10)); // real async I/O
      finished = true;
    }, 100);
    await clock.advance(100);
    assert.equal(finished, true);
  });

  test('watch events count as busy until consumed; closing the stream forgets them', async () => {
    const clock = new VirtualClock(T0, { realWaitMs: 200 });
    clock.activity.sent('s1');
    clock.activity.sent('s1');
    assert.equal(clock.busy, 2);
    clock.activity.received('s1');
    assert.equal(clock.busy, 1);
    clock.activity.closeStream('s1');
    assert.equal(clock.busy, 0);
    clock.activity.received('s1'); // unknown or drained stream: no effect
    assert.equal(clock.busy, 0);
    clock.activity.sent('s1'); // a late write on a stream whose reader is gone: not work
    assert.equal(clock.busy, 0);
  });

  test('interval timers repeat until cancelled', async () => {
    const clock = new VirtualClock(T0);
    let n = 0;
    const timer = clock.setInterval(() => {
      n++;
      if (n === 3) timer.cancel();
    }, 100);
    await clock.advance(1000);
    assert.equal(n, 3);
  });

  test('sleep honours an abort signal', async () => {
    const clock = new VirtualClock(T0);
    const controller = new AbortController();
    const sleeping = clock.sleep(1000, controller.signal);
    controller.abort(new Error('stop'));
    await assert.rejects(sleeping, /stop/);
    assert.deepEqual(clock.pendingTimers(), []);
  });

  test('a system that never becomes idle fails with the busy labels', async () => {
    const clock = new VirtualClock(T0, { realWaitMs: 50 });
    clock.activity.begin('stuck reconcile');
    await assert.rejects(clock.quiesce(), (err: unknown) => err instanceof QuiescenceTimeout && /stuck reconcile/.test(err.message));
  });
});
