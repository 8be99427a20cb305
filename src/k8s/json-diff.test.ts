import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { applyPatch, type Operation } from 'rfc6902';
import { diffJson, escapePointerToken } from './json-diff.ts';
import { deepClone, deepEqual } from './json.ts';

/** Applies `ops` to a copy of `from` with an independent RFC 6902 implementation. */
function applied(from: unknown, ops: readonly unknown[]): unknown {
  const doc = { root: deepClone(from) };
  const rooted = (ops as Operation[]).map((op) => ({ ...op, path: `/root${op.path}` }));
  const errors = applyPatch(doc, rooted);
  for (const err of errors) assert.equal(err, null, `operation failed: ${String(err)}`);
  return JSON.parse(JSON.stringify(doc.root)) as unknown;
}

function countNodes(v: unknown): number {
  if (Array.isArray(v)) return 1 + v.reduce((n: number, x) => n + countNodes(x), 0);
  if (typeof v === 'object' && v !== null) return 1 + Object.values(v).reduce((n: number, x) => n + countNodes(x), 0);
  return 1;
}

// rfc6902 (the independent applier) refuses `__proto__` paths; that key has its own test below.
const keyArb = fc.oneof(fc.constantFrom('a', 'b', 'c', 'x/y', 'm~n', '', '0', '-'), fc.string({ maxLength: 4 })).filter((k) => k !== '__proto__');
const jsonArb = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ maxLength: 5 }), fc.boolean(), fc.constant(null)),
    fc.array(tie('value'), { maxLength: 6 }),
    fc.dictionary(keyArb, tie('value'), { maxKeys: 5 }),
  ),
})).value;

/** `to` derived from `from` by the edits an admission makes: appends, edits inside elements, key changes. */
function mutate(v: unknown, rnd: () => number, fresh: () => unknown): unknown {
  if (Array.isArray(v)) {
    const out = v.map((x) => (rnd() < 0.3 ? mutate(x, rnd, fresh) : x));
    if (rnd() < 0.3) out.push(fresh());
    if (rnd() < 0.15 && out.length > 0) out.splice(Math.floor(rnd() * out.length), 1);
    if (rnd() < 0.1) out.unshift(fresh());
    return out;
  }
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const r = rnd();
      if (r < 0.1) continue;
      Object.defineProperty(out, k, { value: r < 0.4 ? mutate(x, rnd, fresh) : x, enumerable: true, writable: true, configurable: true });
    }
    if (rnd() < 0.3) out[`k${Math.floor(rnd() * 100)}`] = fresh();
    return out;
  }
  return rnd() < 0.3 ? fresh() : v;
}

describe('diffJson', () => {
  test('equal documents need no operation; identity is enough to skip a subtree', () => {
    const shared = { big: Array.from({ length: 1000 }, (_, i) => ({ i })) };
    assert.deepEqual(diffJson({ a: shared, b: 1 }, { a: shared, b: 1 }), []);
    assert.deepEqual(diffJson({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }), []);
    assert.deepEqual(diffJson({ a: 1, u: undefined }, { a: 1 }), [], 'an undefined property is absent');
  });

  test('appends to arrays, edits inside elements, removes keys, escapes pointers', () => {
    const from = { spec: { tolerations: [{ key: 'a' }], 'x/y': 1, 'm~n': { v: 1 } }, gone: true };
    const to = { spec: { tolerations: [{ key: 'a' }, { key: 'b' }], 'x/y': 2, 'm~n': { v: 1, w: 2 } } };
    const ops = diffJson(from, to);
    assert.deepEqual(
      [...ops].sort((p, q) => p.path.localeCompare(q.path)),
      [
        { op: 'remove', path: '/gone' },
        { op: 'add', path: '/spec/m~0n/w', value: 2 },
        { op: 'add', path: '/spec/tolerations/1', value: { key: 'b' } },
        { op: 'replace', path: '/spec/x~1y', value: 2 },
      ],
    );
    assert.deepEqual(applied(from, ops), to);
  });

  test('a shortened array loses its tail from the end', () => {
    const ops = diffJson({ a: [1, 2, 3, 4] }, { a: [1, 9] });
    assert.deepEqual(ops.filter((o) => o.op === 'remove').map((o) => o.path), ['/a/3', '/a/2']);
    assert.deepEqual(applied({ a: [1, 2, 3, 4] }, ops), { a: [1, 9] });
  });

  test('type changes and the root are replaced whole', () => {
    assert.deepEqual(diffJson({ a: [1] }, { a: { 0: 1 } }), [{ op: 'replace', path: '/a', value: { 0: 1 } }]);
    assert.deepEqual(diffJson([1], { x: 1 }), [{ op: 'replace', path: '', value: { x: 1 } }]);
    assert.deepEqual(diffJson(1, 2), [{ op: 'replace', path: '', value: 2 }]);
  });

  test('a key named __proto__ is an ordinary key', () => {
    const from = JSON.parse('{"a":{"__proto__":{"x":1}}}') as unknown;
    const to = JSON.parse('{"a":{"__proto__":{"x":2}},"__proto__":3}') as unknown;
    assert.deepEqual(
      [...diffJson(from, to)].sort((p, q) => p.path.localeCompare(q.path)),
      [
        { op: 'add', path: '/__proto__', value: 3 },
        { op: 'replace', path: '/a/__proto__/x', value: 2 },
      ],
    );
  });

  test('escapePointerToken follows RFC 6901', () => {
    assert.equal(escapePointerToken('a/b~c'), 'a~1b~0c');
    assert.equal(escapePointerToken('~1'), '~01');
    assert.equal(escapePointerToken('plain'), 'plain');
  });

  test('for random documents, the patch applied to the first gives the second, in at most one operation per node', () => {
    fc.assert(
      fc.property(jsonArb, fc.integer(), fc.array(jsonArb, { minLength: 1, maxLength: 8 }), (from, seed, freshValues) => {
        let s = seed >>> 0;
        const rnd = (): number => {
          s = (s * 1103515245 + 12345) >>> 0;
          return s / 2 ** 32;
        };
        let f = 0;
        const fresh = (): unknown => freshValues[f++ % freshValues.length];
        const to = JSON.parse(JSON.stringify(mutate(from, rnd, fresh) ?? null)) as unknown;
        const ops = diffJson(from, to);
        assert.ok(deepEqual(applied(from, ops), to));
        assert.ok(ops.length <= countNodes(from) + countNodes(to));
      }),
      { numRuns: 500 },
    );
  });

  test('unrelated random documents also diff correctly', () => {
    fc.assert(
      fc.property(jsonArb, jsonArb, (from, to) => {
        assert.ok(deepEqual(applied(from, diffJson(from, to)), JSON.parse(JSON.stringify(to)) as unknown));
      }),
      { numRuns: 300 },
    );
  });

  test('huge arrays: one operation per changed element, none for the shared ones', () => {
    const terms = Array.from({ length: 5000 }, (_, i) => ({ matchExpressions: [{ key: `k${i}`, operator: 'Exists' }] }));
    const tolerations = Array.from({ length: 5000 }, (_, i) => ({ key: `t${i}`, operator: 'Exists' }));
    const from = { spec: { tolerations, affinity: { nodeAffinity: { required: { nodeSelectorTerms: terms } } } } };
    const subsetReq = { key: 'zone', operator: 'In', values: ['a'] };
    const to = {
      spec: {
        tolerations: [...tolerations, { key: 'pool', operator: 'Exists' }],
        affinity: { nodeAffinity: { required: { nodeSelectorTerms: terms.map((t) => ({ matchExpressions: [...t.matchExpressions, subsetReq] })) } } },
      },
    };
    const ops = diffJson(from, to);
    assert.equal(ops.length, 5001);
    assert.deepEqual(applied(from, ops), to);
  });

  test('deep nesting does not exhaust the call stack', () => {
    let from: unknown = 0;
    let to: unknown = 1;
    for (let i = 0; i < 100_000; i++) {
      from = [from];
      to = [to];
    }
    const ops = diffJson(from, to);
    assert.equal(ops.length, 1);
    assert.equal(ops[0]?.op, 'replace');
    assert.equal(ops[0]?.path.split('/').length, 100_001);
  });
});
