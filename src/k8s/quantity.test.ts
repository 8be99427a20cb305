import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ceilValue, formatBytes, formatQuantityMilli, milliValue, parseQuantity, parseQuantityNanos } from './quantity.ts';

describe('parseQuantity: valid quantities', () => {
  const cases: [string | number, number][] = [
    ['0', 0],
    ['1', 1],
    ['100m', 0.1],
    ['250m', 0.25],
    ['1Ki', 1024],
    ['1Mi', 1048576],
    ['1.5Gi', 1610612736],
    ['1.5Ki', 1536],
    ['1e3', 1000],
    ['1E3', 1000],
    ['1e+3', 1000],
    ['1e-3', 0.001],
    ['1E', 1e18],
    ['1k', 1000],
    ['500M', 5e8],
    ['2G', 2e9],
    ['1n', 1e-9],
    ['1u', 1e-6],
    ['-1', -1],
    ['+1', 1],
    ['.5', 0.5],
    ['5.', 5],
    ['007', 7],
    // upstream quirks: a bare sign or a bare dot parse as zero
    ['-', 0],
    ['+', 0],
    ['.', 0],
    ['Gi', 0],
    ['m', 0],
    // finer than a nano-unit rounds up to one nano-unit
    ['0.1n', 1e-9],
    // the e-exponent is parsed as int64 and kept as int32: 2^32 wraps to 0
    ['1e4294967296', 1],
    [2, 2],
    [0.5, 0.5],
    [1e21, 1e21],
  ];
  for (const [input, want] of cases) {
    test(JSON.stringify(input), () => assert.equal(parseQuantity(input), want));
  }
});

describe('parseQuantity: invalid quantities', () => {
  const cases: unknown[] = ['', 'abc', '1K', '1ki', '1e', '1i', '1.5.5', '1 Gi', ' 1', '1Gi ', '1Mi5', '1m5', '1e3.5', '--1', NaN, Infinity, null, undefined, {}];
  for (const input of cases) {
    test(String(JSON.stringify(input)), () => {
      assert.equal(parseQuantity(input as string), undefined);
      assert.equal(milliValue(input as string), undefined);
      assert.equal(ceilValue(input as string), undefined);
    });
  }
});

describe('rounding like Quantity.MilliValue and Quantity.Value', () => {
  const cases: [string, number, number][] = [
    // input, milliValue, ceilValue
    ['100m', 100, 1],
    ['1', 1000, 1],
    ['2.5', 2500, 3],
    ['0.1m', 1, 1],
    ['1n', 1, 1],
    ['-1n', -1, -1],
    ['-0.5', -500, -1],
    ['1Ki', 1024000, 1024],
    ['1Gi', 1073741824000, 1073741824],
  ];
  for (const [input, milli, value] of cases) {
    test(input, () => {
      assert.equal(milliValue(input), milli);
      assert.equal(ceilValue(input), value);
    });
  }

  test('binary quantities are capped at 2^63-1', () => {
    assert.equal(parseQuantityNanos('10Ei'), 9223372036854775807n * 1_000_000_000n);
    assert.equal(parseQuantityNanos('8Ei'), 9223372036854775807n * 1_000_000_000n);
    assert.equal(parseQuantityNanos('7Ei'), 7n * 2n ** 60n * 1_000_000_000n);
  });

  test('decimal quantities keep exact values beyond 2^53', () => {
    assert.equal(parseQuantityNanos('9007199254740993'), 9007199254740993n * 1_000_000_000n);
  });
});

describe('formatting', () => {
  const milli: [number, string][] = [
    [250, '250m'],
    [2000, '2'],
    [1500, '1500m'],
    [1000000, '1k'],
    [0, '0'],
    [0.5, '1m'],
    [-250, '-250m'],
  ];
  for (const [input, want] of milli) test(`formatQuantityMilli(${input})`, () => assert.equal(formatQuantityMilli(input), want));

  const bytes: [number, string][] = [
    [1073741824, '1Gi'],
    [536870912, '512Mi'],
    [1536, '1536'],
    [512, '512'],
    [1000000, '1000000'],
    [2048000, '2000Ki'],
    [0, '0'],
  ];
  for (const [input, want] of bytes) test(`formatBytes(${input})`, () => assert.equal(formatBytes(input), want));

  test('formatted values parse back to the same amount (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 40 }), (n) => {
        assert.equal(milliValue(formatQuantityMilli(n)), n);
        assert.equal(parseQuantity(formatBytes(n)), n);
      }),
    );
  });
});
