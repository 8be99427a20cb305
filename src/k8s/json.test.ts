import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { deepClone, deepEqual, isPlainObject } from './json.ts';

describe('isPlainObject', () => {
  const cases: [string, unknown, boolean][] = [
    ['object literal', { a: 1 }, true],
    ['null-prototype object', Object.create(null) as unknown, true],
    ['parsed JSON', JSON.parse('{"x":[1]}') as unknown, true],
    ['array', [1], false],
    ['null', null, false],
    ['string', 'x', false],
    ['Date', new Date(0), false],
    ['class instance', new (class X {})(), false],
  ];
  for (const [name, value, want] of cases) {
    test(name, () => assert.equal(isPlainObject(value), want));
  }
});

describe('deepEqual', () => {
  const cases: [string, unknown, unknown, boolean][] = [
    ['key order is irrelevant', { a: 1, b: { c: 2, d: 3 } }, { b: { d: 3, c: 2 }, a: 1 }, true],
    ['undefined property equals absent', { a: 1, b: undefined }, { a: 1 }, true],
    ['undefined property does not equal null', { a: null }, {}, false],
    ['array order matters', [1, 2], [2, 1], false],
    ['array length matters', [1], [1, 1], false],
    ['undefined array element equals null', [undefined], [null], true],
    ['different values', { a: 1 }, { a: 2 }, false],
    ['array vs object', [], {}, false],
    ['string vs number', '1', 1, false],
    ['nested equal', { a: [{ b: 'x' }] }, { a: [{ b: 'x' }] }, true],
    ['extra key', { a: 1 }, { a: 1, b: 2 }, false],
  ];
  for (const [name, a, b, want] of cases) {
    test(name, () => {
      assert.equal(deepEqual(a, b), want);
      assert.equal(deepEqual(b, a), want, 'symmetric');
    });
  }

  test('agrees with JSON round trip equality on JSON values (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const copy = JSON.parse(JSON.stringify(v)) as unknown;
        assert.ok(deepEqual(v, copy));
      }),
    );
  });
});

describe('deepClone', () => {
  test('copies deeply and shares nothing', () => {
    const src = { a: { b: [1, { c: 2 }] } };
    const copy = deepClone(src);
    assert.deepEqual(copy, src);
    (copy.a.b[1] as { c: number }).c = 3;
    assert.equal((src.a.b[1] as { c: number }).c, 2);
  });

  test('a "__proto__" key (as JSON.parse makes it) stays an own key of the copy, and changes no prototype', () => {
    const src = JSON.parse('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>;
    const copy = deepClone(src);
    assert.deepEqual(Object.keys(copy), ['__proto__', 'a']);
    assert.equal(Object.getPrototypeOf(copy), Object.prototype);
    assert.equal((copy as { polluted?: boolean }).polluted, undefined);
    assert.notEqual(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value, Object.getOwnPropertyDescriptor(src, '__proto__')?.value);
  });

  test('as structuredClone: undefined properties kept, a null-prototype object becomes a plain one, Dates and Maps copied', () => {
    const bare = Object.create(null) as Record<string, unknown>;
    bare['k'] = 'v';
    const when = new Date(0);
    const src = { u: undefined, bare, when, map: new Map([['a', { b: 1 }]]) };
    const copy = deepClone(src);
    assert.deepEqual(copy, structuredClone(src));
    assert.ok('u' in copy);
    assert.equal(Object.getPrototypeOf(copy.bare), Object.prototype);
    assert.notEqual(copy.when, when);
    assert.equal(copy.when.getTime(), 0);
    assert.notEqual(copy.map.get('a'), src.map.get('a'));
    assert.throws(() => deepClone({ f: () => 1 }), { name: 'DataCloneError' });
  });

  test('a value nested a thousand deep is copied whole', () => {
    let src: unknown = { leaf: true };
    for (let i = 0; i < 1_000; i++) src = i % 2 === 0 ? [src] : { next: src };
    const copy = deepClone(src);
    assert.deepEqual(copy, src);
    assert.notEqual(copy, src);
  });
});
