/**
 * settleVirtual: a settle on the virtual clock ends when no foreground timer
 * is left, at its timeout, or — the addition — when only a busy loop is
 * left that changes nothing the scenario observes.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { settleVirtual, SPIN_STEP_MS, SPIN_STEPS } from './embedded-backend.ts';

/** A timer that re-arms itself every `ms` forever, as a rate-limited requeue that never succeeds. */
function busyLoop(clock: VirtualClock, ms: number, name: string): { fired: () => number } {
  let fired = 0;
  const arm = (): void => {
    clock.setTimeout(() => {
      fired++;
      arm();
    }, ms, { name });
  };
  arm();
  return { fired: () => fired };
}

const constant = async () => 'same';

describe('settleVirtual', () => {
  test('nothing pending: quiescent at once; one far timer: runs it, then quiescent', async () => {
    const clock = new VirtualClock(0);
    assert.deepEqual(await settleVirtual(clock, 60_000, constant), { quiescent: true, elapsedMs: 0 });
    let ran = false;
    clock.setTimeout(() => void (ran = true), 30_000, { name: 'recovery' });
    assert.deepEqual(await settleVirtual(clock, 60_000, constant), { quiescent: true, elapsedMs: 30_000 });
    assert.equal(ran, true);
  });

  test('a timer beyond the timeout: stops at the timeout, not quiescent, not spinning', async () => {
    const clock = new VirtualClock(0);
    clock.setTimeout(() => {}, 120_000, { name: 'later' });
    assert.deepEqual(await settleVirtual(clock, 60_000, constant), { quiescent: false, elapsedMs: 60_000 });
  });

  test('a 5 ms loop while nothing changes: stops after SPIN_STEPS short steps, naming the timer', async () => {
    const clock = new VirtualClock(0);
    const loop = busyLoop(clock, 5, 'deployment-controller requeue');
    const r = await settleVirtual(clock, 30 * 60_000, constant);
    assert.equal(r.quiescent, false);
    assert.equal(r.spinning, 'deployment-controller requeue');
    assert.ok(loop.fired() >= SPIN_STEPS - 1 && loop.fired() <= SPIN_STEPS + 1, String(loop.fired()));
    assert.ok(r.elapsedMs < 60_000);
  });

  test('a 100 ms loop (a rate-limited requeue once the queue\'s overall bucket is spent) is a busy loop too', async () => {
    const clock = new VirtualClock(0);
    busyLoop(clock, 100, 'deployment-controller requeue');
    const r = await settleVirtual(clock, 30 * 60_000, constant);
    assert.equal(r.spinning, 'deployment-controller requeue');
    assert.ok(r.elapsedMs <= (SPIN_STEPS + 1) * 100, String(r.elapsedMs));
  });

  test('a 5 ms loop while the cluster keeps changing: runs to the timeout', async () => {
    const clock = new VirtualClock(0);
    busyLoop(clock, 5, 'busy');
    let n = 0;
    const r = await settleVirtual(clock, 30_000, async () => String(n++));
    assert.deepEqual(r, { quiescent: false, elapsedMs: 30_000 });
  });

  test('steps longer than SPIN_STEP_MS never count as a busy loop', async () => {
    const clock = new VirtualClock(0);
    busyLoop(clock, SPIN_STEP_MS + 1, 'poll');
    const r = await settleVirtual(clock, 60_000, constant);
    assert.deepEqual(r, { quiescent: false, elapsedMs: 60_000 });
  });

  test('an aborted settle throws the abort reason', async () => {
    const clock = new VirtualClock(0);
    busyLoop(clock, 100, 'poll');
    const stop = new AbortController();
    stop.abort(new Error('Ctrl-C'));
    await assert.rejects(settleVirtual(clock, 60_000, constant, stop.signal), /Ctrl-C/);
  });
});
