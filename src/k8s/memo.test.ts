import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { boundedMemo } from './memo.ts';

describe('boundedMemo', () => {
  test('computes once per key, also an undefined answer, and forgets everything when full', () => {
    const calls: string[] = [];
    const half = boundedMemo(2, (s: string) => s, (s: string) => {
      calls.push(s);
      return s === 'x' ? undefined : s.length;
    });
    assert.equal(half('ab'), 2);
    assert.equal(half('ab'), 2);
    assert.equal(half('x'), undefined);
    assert.equal(half('x'), undefined);
    assert.deepEqual(calls, ['ab', 'x']);
    half('abc'); // full: forgets ab and x
    half('ab');
    assert.deepEqual(calls, ['ab', 'x', 'abc', 'ab']);
  });

  test('keys built from several arguments', () => {
    let n = 0;
    const pair = boundedMemo(10, (a: string, b: number) => `${a}/${b}`, (a: string, b: number) => `${a}${b}${++n}`);
    assert.equal(pair('a', 1), 'a11');
    assert.equal(pair('a', 1), 'a11');
    assert.equal(pair('a', 2), 'a22');
  });
});
