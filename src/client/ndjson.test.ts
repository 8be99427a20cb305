/** Watch framing: lines survive any chunking (property), malformed lines are reported. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeWatchLine, LineSplitter } from './ndjson.ts';

describe('decodeWatchLine', () => {
  const cases: [string, string, string][] = [
    ['an event', '{"type":"ADDED","object":{"metadata":{"name":"a"}}}', 'ADDED'],
    ['a bookmark', '{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"7"}}}', 'BOOKMARK'],
    ['an in-stream error', '{"type":"ERROR","object":{"kind":"Status","code":410}}', 'ERROR'],
    ['not JSON', '{"type":', 'MALFORMED'],
    ['JSON but not an object', '[1,2]', 'MALFORMED'],
    ['an unknown type', '{"type":"CHANGED","object":{}}', 'MALFORMED'],
    ['no object', '{"type":"ADDED"}', 'MALFORMED'],
    ['a null object', '{"type":"DELETED","object":null}', 'MALFORMED'],
  ];
  for (const [name, line, type] of cases) test(name, () => assert.equal(decodeWatchLine(line).type, type));

  test('a malformed line keeps its text and says why', () => {
    const ev = decodeWatchLine('{"type":"CHANGED","object":{}}');
    assert.deepEqual(ev, { type: 'MALFORMED', line: '{"type":"CHANGED","object":{}}', error: 'unknown event type "CHANGED"' });
  });
});

describe('LineSplitter', () => {
  test('property: any split of the bytes gives the same lines', () => {
    const line = fc.string({ unit: fc.constantFrom('a', 'ü', '€', '😀', '{', '"', ' ', '\r') }).map((s) => s.replace(/\r+$/, ''));
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 30 }), (lines, cuts) => {
        const bytes = Buffer.from(lines.map((l) => `${l}\n`).join(''), 'utf8');
        const points = [...new Set(cuts.map((c) => (bytes.length === 0 ? 0 : c % bytes.length)))].sort((a, b) => a - b);
        const splitter = new LineSplitter();
        const out: string[] = [];
        let prev = 0;
        for (const p of [...points, bytes.length]) {
          out.push(...splitter.push(bytes.subarray(prev, p)));
          prev = p;
        }
        assert.equal(splitter.end(), undefined);
        assert.deepEqual(out, lines);
      }),
    );
  });

  test('CRLF endings are trimmed; an unterminated rest comes out at the end', () => {
    const s = new LineSplitter();
    assert.deepEqual(s.push(Buffer.from('a\r\nb\nc')), ['a', 'b']);
    assert.equal(s.end(), 'c');
    assert.equal(s.end(), undefined);
  });
});
