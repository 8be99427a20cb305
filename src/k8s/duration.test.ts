import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatDuration, parseDuration } from './duration.ts';

describe('parseDuration: Go time.ParseDuration notation', () => {
  const valid: [string, number][] = [
    ['2s', 2_000],
    ['5m', 300_000],
    ['1h30m', 5_400_000],
    ['1h', 3_600_000],
    ['250ms', 250],
    ['1.5h', 5_400_000],
    ['1m30s', 90_000],
    ['.5s', 500],
    ['0', 0],
    ['0s', 0],
    [' 30s ', 30_000],
    ['1h2m3s4ms', 3_723_004],
  ];
  for (const [text, ms] of valid) {
    test(`${JSON.stringify(text)} is ${ms} ms`, () => assert.deepEqual(parseDuration(text), { ok: true, ms }));
  }

  const invalid: [unknown, RegExp][] = [
    [30, /write 30s or 30m/],
    ['30', /like 30s, 5m or 1h30m/],
    ['', /not empty/],
    ['5 m', /not "5 m"/],
    ['-5s', /not "-5s"/],
    ['1d', /not "1d"/],
    ['5mm', /not "5mm"/],
    [null, /must be a duration/],
    [true, /must be a duration/],
  ];
  for (const [value, message] of invalid) {
    test(`${JSON.stringify(value)} is refused`, () => {
      const r = parseDuration(value);
      assert.equal(r.ok, false);
      if (!r.ok) assert.match(r.error, message);
    });
  }
});

describe('formatDuration', () => {
  const cases: [number, string][] = [
    [0, '0s'],
    [250, '250ms'],
    [2_000, '2s'],
    [90_000, '1m30s'],
    [5_400_000, '1h30m'],
    [3_600_500, '1h0.5s'],
  ];
  for (const [ms, text] of cases) test(`${ms} ms is ${text}`, () => assert.equal(formatDuration(ms), text));

  test('what it prints parses back to the same milliseconds', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 * 24 * 3_600_000 }), (ms) => {
        assert.deepEqual(parseDuration(formatDuration(ms)), { ok: true, ms });
      }),
    );
  });
});
