import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseIntOrPercent, resolveMaxReplicas, scaledValue, subsetQuota } from './percent.ts';

// spec §5.3: every worked number.
describe('scaledValue rounds percentages up, bit-exact with intstr', () => {
  const cases: [string | number, number, number][] = [
    ['20%', 10, 2], ['30%', 10, 3], ['50%', 10, 5],
    ['80%', 5, 4], ['100%', 5, 5],
    ['34%', 10, 4], ['33%', 10, 4],
    ['50%', 14, 7], ['50%', 18, 9], ['25%', 4, 1], ['75%', 4, 3], ['20%', 5, 1],
    ['30%', 0, 0],
    [7, 100, 7], [0, 5, 0],
    ['50%', -1, 0], ['100%', -1, -1],
  ];
  for (const [value, total, want] of cases) {
    test(`${JSON.stringify(value)} of ${total} -> ${want}`, () => {
      const got = scaledValue(value, total, true);
      assert.equal(got.ok, true);
      if (got.ok) assert.equal(got.value, want);
    });
  }

  test('34/33/33% of 10 sums to 12 (> 10), issue #877', () => {
    const sum = ['34%', '33%', '33%'].reduce((acc, p) => {
      const r = scaledValue(p, 10);
      return acc + (r.ok ? r.value : NaN);
    }, 0);
    assert.equal(sum, 12);
  });

  test('rounding down is floor', () => {
    const r = scaledValue('33%', 10, false);
    assert.deepEqual(r, { ok: true, value: 3, isPercent: true });
  });

  test('matches integer ceil for every non-negative percent and total', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 1_000_000 }), (p, total) => {
      const r = scaledValue(`${p}%`, total);
      return r.ok && r.value === Math.floor((p * total + 99) / 100);
    }));
  });
});

describe('parseIntOrPercent rejects what strconv.Atoi rejects', () => {
  for (const bad of ['0.2%', '50.2%', 'abc', '50', '%', ' 5%', '5 %', '1e2%']) {
    test(`rejects ${JSON.stringify(bad)}`, () => {
      assert.equal(parseIntOrPercent(bad).ok, false);
    });
  }
  test('accepts signs like Atoi', () => {
    assert.deepEqual(parseIntOrPercent('-1%'), { ok: true, value: -1, isPercent: true });
    assert.deepEqual(parseIntOrPercent('+5%'), { ok: true, value: 5, isPercent: true });
  });
  test('rejects non-integer numbers', () => {
    assert.equal(parseIntOrPercent(1.5).ok, false);
  });
});

describe('resolveMaxReplicas', () => {
  test('nil is unlimited (-1)', () => assert.equal(resolveMaxReplicas(undefined, 10), -1));
  test('percent resolves against the total', () => assert.equal(resolveMaxReplicas('30%', 10), 3));
  test('invalid or negative is undefined (defensive path, spec §4.4.1)', () => {
    assert.equal(resolveMaxReplicas('x', 10), undefined);
    assert.equal(resolveMaxReplicas(-3, 10), undefined);
  });
  test('subsetQuota treats nil as int32 max', () => {
    assert.equal(subsetQuota(undefined, 10), 2147483647);
    assert.equal(subsetQuota('50%', 5), 3);
  });
});
