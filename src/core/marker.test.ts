import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalMarkerText, formatMarker, parseMarker, readMarker } from './marker.ts';
import { MATCHED_WORKLOADSPREAD_ANNOTATION } from '../api/keys.ts';

describe('marker annotation (spec §1.5)', () => {
  test('written with the exact key order, uid omitted when empty', () => {
    assert.equal(formatMarker({ name: 'ws', subset: 'a' }), '{"name":"ws","subset":"a"}');
    assert.equal(formatMarker({ name: 'ws', subset: 'a', uid: '' }), '{"name":"ws","subset":"a"}');
    assert.equal(formatMarker({ name: 'ws', subset: 'a', uid: 'u-1' }), '{"name":"ws","subset":"a","uid":"u-1"}');
  });

  test('read with case-insensitive keys, like Go json', () => {
    assert.deepEqual(parseMarker('{"Name":"ws","Subset":"b"}'), { name: 'ws', subset: 'b' });
    assert.deepEqual(parseMarker('{"NAME":"ws","subset":"b","UID":"x"}'), { name: 'ws', subset: 'b', uid: 'x' });
  });

  test('an exact-case key wins over a folded one whatever the order', () => {
    assert.deepEqual(parseMarker('{"name":"exact","Name":"folded","subset":"a"}'), { name: 'exact', subset: 'a' });
    assert.deepEqual(parseMarker('{"Name":"folded","name":"exact","subset":"a"}'), { name: 'exact', subset: 'a' });
  });

  test('unknown keys are ignored, missing keys are empty', () => {
    assert.deepEqual(parseMarker('{"name":"ws","extra":1}'), { name: 'ws', subset: '' });
  });

  test('invalid values are "no marker"', () => {
    for (const bad of ['', 'not json', '[]', '"s"', 'null', '{"name":1,"subset":"a"}']) {
      assert.equal(parseMarker(bad), undefined, bad);
    }
    assert.equal(parseMarker(undefined), undefined);
  });

  test('round trip', () => {
    const m = { name: 'ws-1', subset: 'subset-a', uid: '0d6c3a1e' };
    assert.deepEqual(parseMarker(formatMarker(m)), m);
  });

  test('readMarker reads the pod annotation', () => {
    const pod = { metadata: { annotations: { [MATCHED_WORKLOADSPREAD_ANNOTATION]: '{"name":"w","subset":"s"}' } } };
    assert.deepEqual(readMarker(pod), { name: 'w', subset: 's' });
    assert.equal(readMarker({ metadata: {} }), undefined);
  });
  test('readMarker sees a changed annotation on the same object; a marker read is frozen', () => {
    const annotations: Record<string, string> = { [MATCHED_WORKLOADSPREAD_ANNOTATION]: '{"name":"w","subset":"s"}' };
    const pod = { metadata: { annotations } };
    const first = readMarker(pod);
    assert.deepEqual(first, { name: 'w', subset: 's' });
    assert.equal(readMarker(pod), first);
    assert.ok(Object.isFrozen(first));
    annotations[MATCHED_WORKLOADSPREAD_ANNOTATION] = '{"name":"w","subset":"t"}';
    assert.deepEqual(readMarker(pod), { name: 'w', subset: 't' });
    delete annotations[MATCHED_WORKLOADSPREAD_ANNOTATION];
    assert.equal(readMarker(pod), undefined);
  });

  test('the canonical text is the first copy parsed; the marker shows only its fields', () => {
    const first = '{"name":"w","subset":"s","uid":"0c4f6a2e-canonical"}';
    const marker = parseMarker(first);
    // An equal text that is another string in memory, as each watch event brings one.
    const copy = JSON.parse(JSON.stringify({ t: first })).t as string;
    assert.equal(canonicalMarkerText(copy), first);
    assert.equal(parseMarker(copy), marker);
    assert.deepEqual(marker, { name: 'w', subset: 's', uid: '0c4f6a2e-canonical' });
    assert.deepEqual({ ...marker }, { name: 'w', subset: 's', uid: '0c4f6a2e-canonical' });
    assert.deepEqual(Object.getOwnPropertySymbols(marker).map((k) => Object.getOwnPropertyDescriptor(marker, k)?.enumerable), [false]);
    assert.equal(JSON.stringify(marker), '{"name":"w","subset":"s","uid":"0c4f6a2e-canonical"}');
    const invalid = '{"name":1}';
    assert.equal(canonicalMarkerText(invalid), invalid);
    assert.equal(canonicalMarkerText(''), '');
  });
});
