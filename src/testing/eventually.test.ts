/** eventually (real clock) and settleUntil (virtual clock). */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { eventually, settleUntil } from './eventually.ts';

const T0 = Date.UTC(2026, 0, 1);

describe('eventually', () => {
  test('retries until the check stops throwing, and returns its value', async () => {
    let n = 0;
    const value = await eventually(() => {
      n++;
      assert.ok(n >= 3, 'not yet');
      return 'done';
    }, { intervalMs: 1 });
    assert.equal(value, 'done');
    assert.equal(n, 3);
  });

  test('false means not yet', async () => {
    let n = 0;
    await eventually(() => ++n >= 2, { intervalMs: 1 });
    assert.equal(n, 2);
  });

  test('gives up with the last error of the check', async () => {
    await assert.rejects(eventually(() => assert.equal(1, 2, 'one is not two'), { timeoutMs: 30, intervalMs: 5 }), /still failing after 30 ms: one is not two/);
  });
});

describe('settleUntil', () => {
  test('moves virtual time only as far as needed', async () => {
    const clock = new VirtualClock(T0);
    let fired = 0;
    clock.setTimeout(() => void fired++, 1000);
    clock.setTimeout(() => void fired++, 5000);
    clock.setInterval(() => {}, 60_000, { background: true });
    await settleUntil(clock, () => assert.equal(fired, 1));
    assert.equal(clock.now(), T0 + 1000);
  });

  test('returns at once when the check already holds', async () => {
    const clock = new VirtualClock(T0);
    clock.setTimeout(() => {}, 1000);
    assert.equal(await settleUntil(clock, () => 7), 7);
    assert.equal(clock.now(), T0);
  });

  test('fails when nothing is left to run, or past maxMs', async () => {
    const clock = new VirtualClock(T0);
    await assert.rejects(settleUntil(clock, () => assert.fail('never')), /nothing left to run on the virtual clock: never/);
    clock.setInterval(() => {}, 1000);
    await assert.rejects(settleUntil(clock, () => assert.fail('never'), { maxMs: 10_000 }), /still failing after 10000 virtual ms/);
    assert.equal(clock.now(), T0 + 10_000);
  });
});
