import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createMergePatch, jsonMergePatch } from './merge-patch.ts';
import { deepClone, deepEqual } from './json.ts';

describe('jsonMergePatch: RFC 7396 appendix A', () => {
  const cases: [unknown, unknown, unknown][] = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [['a', 'b'], ['c', 'd'], ['c', 'd']],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  cases.forEach(([target, patch, want], i) => {
    test(`example ${i + 1}: ${JSON.stringify(target)} + ${JSON.stringify(patch)}`, () => {
      assert.deepEqual(jsonMergePatch(target, patch), want);
    });
  });
});

describe('jsonMergePatch: safety', () => {
  test('never mutates its inputs and shares no structure with them', () => {
    const target = { a: { b: [1, 2] }, keep: { x: 1 } };
    const patch = { a: { c: { d: 1 } }, n: [{ z: 1 }] };
    const t0 = deepClone(target);
    const p0 = deepClone(patch);
    const out = jsonMergePatch(target, patch) as { keep: { x: number }; n: { z: number }[] };
    assert.deepEqual(target, t0);
    assert.deepEqual(patch, p0);
    out.keep.x = 2;
    (out.n[0] as { z: number }).z = 2;
    assert.equal(target.keep.x, 1);
    assert.equal((patch.n[0] as { z: number }).z, 1);
  });

  test('"__proto__" is an ordinary key', () => {
    const patch = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as unknown;
    const out = jsonMergePatch({}, patch) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.deepEqual(Object.keys(out).sort(), ['__proto__', 'a']);
  });
});

describe('createMergePatch', () => {
  test('minimal patch: changes, additions and deletions', () => {
    const original = { a: 1, b: { c: 2, d: 3 }, e: [1], gone: 'x' };
    const modified = { a: 1, b: { c: 2, d: 4 }, e: [1, 2], added: true };
    assert.deepEqual(createMergePatch(original, modified), { b: { d: 4 }, e: [1, 2], added: true, gone: null });
    assert.deepEqual(createMergePatch(original, deepClone(original)), {});
  });

  // Objects whose values are never null (a merge patch cannot set null); arrays may hold anything.
  const { doc } = fc.letrec<{ value: unknown; arr: unknown[]; doc: Record<string, unknown> }>((tie) => ({
    value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.string({ maxLength: 3 }), fc.integer(), fc.boolean(), tie('arr'), tie('doc')),
    arr: fc.array(fc.oneof(tie('value'), fc.constant(null)), { maxLength: 3 }),
    doc: fc.dictionary(fc.constantFrom('a', 'b', 'c', 'spec', 'x'), tie('value'), { maxKeys: 4 }),
  }));

  test('applying the patch between two documents reproduces the second (property)', () => {
    fc.assert(
      fc.property(doc, doc, (original, modified) => {
        const patch = createMergePatch(original, modified);
        assert.ok(deepEqual(jsonMergePatch(original, patch), modified));
      }),
    );
  });
});
