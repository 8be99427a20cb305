import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { byteLength } from './name-formats.ts';

describe('byteLength (Go len of a string)', () => {
  test('ASCII, 2-, 3- and 4-byte characters, lone surrogates', () => {
    assert.equal(byteLength(''), 0);
    assert.equal(byteLength('app.kubernetes.io/name'), 22);
    assert.equal(byteLength('é'), 2);
    assert.equal(byteLength('€'), 3);
    assert.equal(byteLength('😀'), 4);
    assert.equal(byteLength('\ud800'), 3, 'a lone high surrogate is written as U+FFFD');
    assert.equal(byteLength('\udc00x'), 4, 'a lone low surrogate too');
    assert.equal(byteLength('\ud800\ud800'), 6);
  });

  test('equals the length of the UTF-8 encoding for any string', () => {
    const utf8 = new TextEncoder();
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) })), (s) => {
        assert.equal(byteLength(s), utf8.encode(s).length);
      }),
      { numRuns: 2000 },
    );
  });
});
