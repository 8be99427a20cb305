/** The watcher's decisions, one row per rule, and the back-off numbers. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { backoffDelay, WATCH_BACKOFF } from './backoff.ts';
import { afterList, afterWatch, type Step, type StepContext, type WatchOutcome } from './watcher-state.ts';

const ctx = (failures = 0, resourceVersion = '42'): StepContext => ({ failures, resourceVersion, policy: WATCH_BACKOFF, random: () => 0 });
const watch = (o: Partial<WatchOutcome>): WatchOutcome => ({ end: 'closed', events: 0, progressed: false, durationMs: 60_000, ...o });

describe('after a list', () => {
  test('success → watch from the list version now, failures reset', () => {
    assert.deepEqual(afterList({ type: 'listed', resourceVersion: '7' }, ctx(3)), { next: 'watch', delayMs: 0, failures: 0, resourceVersion: '7', cause: 'listed' });
  });
  test('failure → list again after the back-off', () => {
    assert.deepEqual(afterList({ type: 'listFailed', code: 500 }, ctx(0)), { next: 'list', delayMs: 800, failures: 1, resourceVersion: '', cause: 'listFailed' });
    assert.equal(afterList({ type: 'listFailed' }, ctx(2)).delayMs, 3200);
  });
  test('failure with Retry-After → at least that long', () => {
    assert.equal(afterList({ type: 'listFailed', code: 429, retryAfterMs: 5000 }, ctx(0)).delayMs, 5000);
    assert.equal(afterList({ type: 'listFailed', code: 429, retryAfterMs: 100 }, ctx(0)).delayMs, 800);
  });
});

describe('after a watch', () => {
  const rows: [string, WatchOutcome, StepContext, Step][] = [
    ['clean close after a while → re-watch now from the last version', watch({}), ctx(2), { next: 'watch', delayMs: 0, failures: 2, resourceVersion: '42', cause: 'watchClosed' }],
    ['clean close with events → re-watch now, failures reset', watch({ events: 3, progressed: true, durationMs: 10 }), ctx(2), { next: 'watch', delayMs: 0, failures: 0, resourceVersion: '42', cause: 'watchClosed' }],
    ['very short close with nothing → back off, then re-watch', watch({ durationMs: 999 }), ctx(0), { next: 'watch', delayMs: 800, failures: 1, resourceVersion: '42', cause: 'shortWatch' }],
    ['short close after a bookmark is not "very short"', watch({ durationMs: 5, progressed: true }), ctx(0), { next: 'watch', delayMs: 0, failures: 0, resourceVersion: '42', cause: 'watchClosed' }],
    ['410 → relist now', watch({ end: 'gone', durationMs: 0 }), ctx(0), { next: 'list', delayMs: 0, failures: 0, resourceVersion: '', cause: 'gone' }],
    ['410 at once on a watch from a fresh list → back off before relisting', watch({ end: 'gone', durationMs: 0, fromList: true }), ctx(0), { next: 'list', delayMs: 800, failures: 1, resourceVersion: '', cause: 'gone' }],
    ['idle watchdog → re-watch now', watch({ end: 'idle', durationMs: 330_000 }), ctx(1), { next: 'watch', delayMs: 0, failures: 1, resourceVersion: '42', cause: 'idle' }],
    ['resync → relist now', watch({ end: 'resync' }), ctx(0), { next: 'list', delayMs: 0, failures: 0, resourceVersion: '', cause: 'resync' }],
    ['malformed line → back off, re-watch from the last good version', watch({ end: 'malformed', events: 1, progressed: true }), ctx(4), { next: 'watch', delayMs: 800, failures: 1, resourceVersion: '42', cause: 'malformed' }],
    ['500 → back off, re-watch', watch({ end: 'error', code: 500, durationMs: 0 }), ctx(1), { next: 'watch', delayMs: 1600, failures: 2, resourceVersion: '42', cause: 'watchFailed' }],
    ['network error → back off, re-watch', watch({ end: 'error', durationMs: 0 }), ctx(0), { next: 'watch', delayMs: 800, failures: 1, resourceVersion: '42', cause: 'watchFailed' }],
    ['429 with Retry-After → wait for it, re-watch', watch({ end: 'error', code: 429, retryAfterMs: 9000 }), ctx(0), { next: 'watch', delayMs: 9000, failures: 1, resourceVersion: '42', cause: 'watchFailed' }],
    ['403/404 → back off, relist', watch({ end: 'error', code: 404 }), ctx(0), { next: 'list', delayMs: 800, failures: 1, resourceVersion: '', cause: 'watchFailed' }],
  ];
  for (const [name, outcome, context, expected] of rows) test(name, () => assert.deepEqual(afterWatch(outcome, context), expected));
});

describe('back-off', () => {
  test('800 ms doubling to 30 s, exact with random = 0', () => {
    assert.deepEqual([0, 1, 2, 3, 4, 5, 6, 7, 100].map((n) => backoffDelay(WATCH_BACKOFF, n, () => 0)), [0, 800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000]);
  });
  test('property: jitter stays within [base, base·(1+jitter)] and under the cap', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 80 }), fc.double({ min: 0, max: 1, noNaN: true }), (n, r) => {
        const base = Math.min(30_000, 800 * 2 ** (n - 1));
        const d = backoffDelay(WATCH_BACKOFF, n, () => r);
        assert.ok(d >= Math.min(base, 30_000) && d <= Math.min(30_000, Math.round(base * 1.25)), `${n} ${r} → ${d}`);
      }),
    );
  });
});
