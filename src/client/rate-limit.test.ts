/**
 * The client-side token bucket on the virtual clock: a full bucket of
 * `burst` at start, then `qps` tokens a second, waiters served in arrival
 * order, an aborted wait gives its token back, no limit at qps ≤ 0.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { TokenBucket } from './rate-limit.ts';

/** Starts `n` takes at once; resolves with the virtual time at which each got its token. */
async function takeAll(clock: VirtualClock, bucket: TokenBucket, n: number): Promise<number[]> {
  const start = clock.now();
  const times: number[] = [];
  const all = Array.from({ length: n }, (_, i) => bucket.take().then(() => (times[i] = clock.now() - start)));
  await clock.quiesce();
  while (times.filter((t) => t !== undefined).length < n) await clock.advance(10);
  await Promise.all(all);
  return times;
}

describe('client rate limiter (token bucket)', () => {
  test('a burst of `burst` goes at once, the rest at qps, first come first served', async () => {
    const clock = new VirtualClock();
    const bucket = new TokenBucket(clock, { qps: 10, burst: 3 });
    const waits: number[] = [];
    bucket.onWait = (ms) => waits.push(ms);
    const times = await takeAll(clock, bucket, 6);
    assert.deepEqual(times.slice(0, 3), [0, 0, 0]);
    // 10 a second: one token every 100 ms, in the order asked.
    assert.ok(times[3] !== undefined && times[3] >= 100 && times[3] < 110, `4th at ${times[3]}`);
    assert.ok(times[4] !== undefined && times[4] >= 200 && times[4] < 210, `5th at ${times[4]}`);
    assert.ok(times[5] !== undefined && times[5] >= 300 && times[5] < 310, `6th at ${times[5]}`);
    assert.deepEqual(waits, [0, 0, 0, 100, 200, 300]);
  });

  test('the bucket refills while idle, never above burst', async () => {
    const clock = new VirtualClock();
    const bucket = new TokenBucket(clock, { qps: 5, burst: 2 });
    await takeAll(clock, bucket, 2);
    await clock.advance(60_000);
    const times = await takeAll(clock, bucket, 3);
    assert.deepEqual(times.slice(0, 2), [0, 0], 'two tokens after a long idle time');
    assert.ok(times[2] !== undefined && times[2] >= 200, `the third waits for a token: ${times[2]}`);
  });

  test('an aborted wait rejects and gives its token back to the next caller', async () => {
    const clock = new VirtualClock();
    const bucket = new TokenBucket(clock, { qps: 1, burst: 1 });
    await bucket.take();
    const abort = new AbortController();
    const cancelled = bucket.take(abort.signal);
    abort.abort();
    await assert.rejects(cancelled);
    const times = await takeAll(clock, bucket, 1);
    assert.ok(times[0] !== undefined && times[0] <= 1_010, `the next caller waits one token, not two: ${times[0]}`);
  });

  test('qps 0 or less: no limit', async () => {
    const clock = new VirtualClock();
    const bucket = new TokenBucket(clock, { qps: 0, burst: 1 });
    assert.equal(bucket.enabled, false);
    assert.deepEqual(await takeAll(clock, bucket, 50), new Array(50).fill(0));
  });

  test('bad settings are refused with the field named', () => {
    const clock = new VirtualClock();
    assert.throws(() => new TokenBucket(clock, { qps: Number.NaN, burst: 1 }), /qps and burst must be numbers/);
    assert.throws(() => new TokenBucket(clock, { qps: 5, burst: 0 }), /burst must be at least 1/);
  });
});
