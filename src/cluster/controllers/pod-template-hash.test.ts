/**
 * pod-template-hash: FNV-32a test vectors, the safe alphabet mapping, and the
 * properties the Deployment controller relies on (key order does not matter,
 * any change of the template or of the collision count changes the hash).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { canonicalJson, computePodTemplateHash, fnv32a, safeEncodeString } from './pod-template-hash.ts';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('fnv32a', () => {
  const vectors: [string, number][] = [
    ['', 0x811c9dc5],
    ['a', 0xe40c292c],
    ['foobar', 0xbf9cf968],
  ];
  for (const [input, hash] of vectors) test(`"${input}" → 0x${hash.toString(16)}`, () => assert.equal(fnv32a(bytes(input)), hash));
  test('continues from a previous hash like one pass over the concatenation', () => {
    assert.equal(fnv32a(bytes('bar'), fnv32a(bytes('foo'))), fnv32a(bytes('foobar')));
  });
});

describe('safeEncodeString', () => {
  test('digits map through bcdfghjklmnpqrstvwxz2456789 by code point, as apimachinery does', () => {
    assert.equal(safeEncodeString('0123456789'), '456789bcdf');
  });
});

describe('canonicalJson', () => {
  test('sorts keys at every level, keeps array order, drops undefined', () => {
    assert.equal(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: undefined } }), '{"a":{"d":[3,{"y":2,"z":1}]},"b":1}');
  });
});

describe('computePodTemplateHash', () => {
  const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] } };

  test('only safe characters, as a decimal uint32 maps to (at most 10 of them)', () => {
    assert.match(computePodTemplateHash(template), /^[bcdf456789]{1,10}$/);
  });

  test('the collision count changes the hash, and 0 is not the same as none', () => {
    const hashes = new Set([computePodTemplateHash(template), computePodTemplateHash(template, 0), computePodTemplateHash(template, 1)]);
    assert.equal(hashes.size, 3);
  });

  test('a different image is a different hash', () => {
    const other = { ...template, spec: { containers: [{ name: 'app', image: 'nginx:1.26' }] } };
    assert.notEqual(computePodTemplateHash(other), computePodTemplateHash(template));
  });

  test('property: the order of keys never matters', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 6 }), (obj) => {
        const reversed = Object.fromEntries(Object.entries(obj).reverse());
        assert.equal(computePodTemplateHash(reversed), computePodTemplateHash(obj));
      }),
    );
  });
});
