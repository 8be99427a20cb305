import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseManifests, renderManifests } from './yaml.ts';

describe('parseManifests', () => {
  test('YAML 1.1 scalars, as kubectl reads them', () => {
    const r = parseManifests('a: yes\nb: on\nc: 0755\nd: "yes"\n');
    assert.ok(r.ok);
    assert.deepEqual(r.documents[0]?.object, { a: true, b: true, c: 493, d: 'yes' });
  });
  test('several documents, empty ones skipped, Lists expanded', () => {
    const r = parseManifests('---\nkind: A\n---\n---\nkind: List\nitems:\n- kind: B\n- kind: C\n');
    assert.ok(r.ok);
    assert.deepEqual(r.documents.map((d) => [d.index, d.object.kind]), [[1, 'A'], [3, 'B'], [3, 'C']]);
  });
  test('JSON input works too', () => {
    const r = parseManifests('{"kind":"Pod","metadata":{"name":"p"}}');
    assert.ok(r.ok);
    assert.equal(r.documents[0]?.object.kind, 'Pod');
  });
  test('errors name the source, the document and the line', () => {
    const r = parseManifests('kind: A\n---\nkind: [1,\n', 'f.yaml');
    assert.equal(r.ok, false);
    if (!r.ok) assert.match(r.error, /^f\.yaml: document 2 \(line \d+\): not valid YAML: /);
  });
  test('a document that is not a mapping is an error', () => {
    const r = parseManifests('- a\n- b\n', 'f.yaml');
    assert.deepEqual(r, { ok: false, error: 'f.yaml: document 1: expected a Kubernetes object (a mapping), found a list' });
  });
  test('an alias bomb ("billion laughs") is an error naming the document, not an exception', () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const r = parseManifests(`kind: A\n---\n${levels.join('\n')}\n`, 'bomb.yaml');
    assert.equal(r.ok, false);
    if (!r.ok) assert.match(r.error, /^bomb\.yaml: document 2: not valid YAML: too many aliases/);
  });
  test('empty input has no documents', () => {
    assert.deepEqual(parseManifests(''), { ok: true, documents: [] });
  });
  test('render round-trips', () => {
    const objs = [{ kind: 'A', metadata: { name: 'a' } }, { kind: 'B' }];
    const r = parseManifests(renderManifests(objs));
    assert.ok(r.ok);
    assert.deepEqual(r.documents.map((d) => d.object), objs);
  });
});
