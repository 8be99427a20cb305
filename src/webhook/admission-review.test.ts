import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { applyPatch } from 'rfc6902';
import { invalid, root } from '../k8s/field-errors.ts';
import {
  allowed,
  decodePatch,
  denied,
  errored,
  invalidObject,
  MAX_ADMISSION_BODY_BYTES,
  parseAdmissionReview,
  patched,
  responseResult,
  reviewResponse,
} from './admission-review.ts';

const fixture = (name: string): string => readFileSync(new URL(`../testing/fixtures/${name}`, import.meta.url), 'utf8');

describe('parseAdmissionReview', () => {
  test('reads a pod CREATE review and keeps the object raw (unknown fields included)', () => {
    const parsed = parseAdmissionReview(fixture('pod-create.json'));
    assert.ok(parsed.ok);
    const r = parsed.request;
    assert.equal(r.uid, '0f0e6c7a-1b52-4d56-9a8e-3a1c1a0b0001');
    assert.equal(r.operation, 'CREATE');
    assert.deepEqual(r.resource, { group: '', version: 'v1', resource: 'pods' });
    assert.equal(r.subResource, '');
    assert.equal(r.namespace, 'shop');
    assert.equal(r.dryRun, false);
    const obj = r.object as { metadata: Record<string, unknown>; spec: { containers: Record<string, unknown>[] } };
    assert.deepEqual(obj.metadata['x-unknown-metadata-field'], { kept: true });
    assert.deepEqual(obj.spec.containers[0]?.['x-future-field'], [1, 2, 3]);
  });

  test('reads the bytes a view covers, not the rest of its buffer (a body sliced out of a larger one)', () => {
    const text = fixture('pod-create.json');
    const around = Buffer.concat([Buffer.from('{"not":"this"}'), Buffer.from(text), Buffer.from('trailing')]);
    const view = new Uint8Array(around.buffer, around.byteOffset + '{"not":"this"}'.length, Buffer.byteLength(text));
    const parsed = parseAdmissionReview(view);
    assert.ok(parsed.ok);
    assert.equal(parsed.request.uid, '0f0e6c7a-1b52-4d56-9a8e-3a1c1a0b0001');
  });

  test('reads an eviction review: subresource and Eviction object', () => {
    const parsed = parseAdmissionReview(Buffer.from(fixture('pod-eviction.json')));
    assert.ok(parsed.ok);
    assert.equal(parsed.request.subResource, 'eviction');
    assert.equal(parsed.request.kind.kind, 'Eviction');
    assert.equal(parsed.request.oldObject, undefined);
  });

  const good = JSON.parse(fixture('pod-create.json')) as Record<string, unknown>;
  const cases: { name: string; body: string; code: number; message: RegExp; uid?: string }[] = [
    { name: 'empty body', body: '', code: 400, message: /empty/ },
    { name: 'not JSON', body: '{"apiVersion":', code: 400, message: /couldn't decode/ },
    { name: 'JSON but not an object', body: '[1,2]', code: 400, message: /not an AdmissionReview/ },
    { name: 'wrong apiVersion', body: JSON.stringify({ ...good, apiVersion: 'admission.k8s.io/v1beta1' }), code: 400, message: /expected apiVersion admission\.k8s\.io\/v1/, uid: '0f0e6c7a-1b52-4d56-9a8e-3a1c1a0b0001' },
    { name: 'wrong kind', body: JSON.stringify({ ...good, kind: 'Pod' }), code: 400, message: /kind AdmissionReview/ },
    { name: 'no request', body: JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }), code: 400, message: /no request/ },
    { name: 'no uid', body: JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { operation: 'CREATE' } }), code: 400, message: /no uid/ },
    { name: 'unknown operation', body: JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u', operation: 'PATCH' } }), code: 400, message: /unknown admission operation/, uid: 'u' },
    { name: 'over 3 MiB', body: 'x'.repeat(MAX_ADMISSION_BODY_BYTES + 1), code: 413, message: /too large/ },
  ];
  for (const c of cases) {
    test(`refuses: ${c.name}`, () => {
      const parsed = parseAdmissionReview(c.body);
      assert.equal(parsed.ok, false);
      if (parsed.ok) return;
      assert.equal(parsed.code, c.code);
      assert.match(parsed.message, c.message);
      if (c.uid !== undefined) assert.equal(parsed.uid, c.uid);
    });
  }

  test('never throws, whatever the body', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), fc.jsonValue().map((v) => JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: v }))), (body) => {
        const parsed = parseAdmissionReview(body);
        if (parsed.ok) assert.notEqual(parsed.request.uid, '');
        else assert.ok(parsed.code === 400 || parsed.code === 413);
      }),
    );
  });
});

describe('response builders', () => {
  test('allowed echoes the uid and carries warnings only when given', () => {
    assert.deepEqual(allowed('u1'), { uid: 'u1', allowed: true });
    assert.deepEqual(allowed('u1', ['careful']), { uid: 'u1', allowed: true, warnings: ['careful'] });
  });

  test('denied carries code, message and reason', () => {
    assert.deepEqual(denied('u2', 403, 'no', 'Forbidden'), { uid: 'u2', allowed: false, status: { code: 403, message: 'no', status: 'Failure', reason: 'Forbidden' } });
  });

  test('errored turns anything thrown into a message', () => {
    assert.equal(errored('u3', 500, new Error('boom')).status?.message, 'boom');
    assert.equal(errored('u3', 500, 'plain').status?.message, 'plain');
    assert.equal(errored('u3', 500, { weird: true }).status?.message, '{"weird":true}');
    assert.equal(errored('u3', 500, undefined).status?.message, 'undefined');
    assert.equal(errored('u3', 400, new Error('x')).uid, 'u3');
  });

  test('patched: the JSON Patch from the raw object reproduces the mutated copy, unknown fields untouched', () => {
    const raw = { metadata: { name: 'p', unknown: { deep: [1, { x: 2 }] } }, spec: { containers: [{ name: 'a' }] } };
    const mutated = structuredClone(raw) as Record<string, unknown> & typeof raw;
    (mutated.metadata as Record<string, unknown>)['annotations'] = { k: 'v' };
    mutated.spec.containers.push({ name: 'b' });
    const response = patched('u4', raw, mutated);
    assert.equal(response.allowed, true);
    assert.equal(response.patchType, 'JSONPatch');
    const ops = decodePatch(response);
    assert.ok(ops.length > 0);
    assert.ok(ops.every((op) => !JSON.stringify(op).includes('unknown')), 'no operation touches the unknown field');
    const target = structuredClone(raw);
    applyPatch(target, ops as Parameters<typeof applyPatch>[1]);
    assert.deepEqual(target, mutated);
  });

  test('patched without a change answers allowed with no patch', () => {
    assert.deepEqual(patched('u5', { a: 1 }, { a: 1 }), { uid: 'u5', allowed: true });
  });

  test('patched round-trips any pair of JSON objects (property)', () => {
    // rfc6902's applyPatch (the checker here) assigns keys plainly, so a "__proto__" key would set a prototype
    // instead of a property; such keys are left out of the generated objects.
    const noProto = (v: unknown): boolean => !JSON.stringify(v).includes('"__proto__"');
    const object = fc.dictionary(fc.string(), fc.jsonValue()).filter(noProto);
    fc.assert(
      fc.property(object, object, (a, b) => {
        const raw = JSON.parse(JSON.stringify(a)) as unknown;
        const want = JSON.parse(JSON.stringify(b)) as unknown;
        const target = structuredClone(raw);
        const results = applyPatch(target, decodePatch(patched('u', raw, want)) as Parameters<typeof applyPatch>[1]);
        assert.ok(results.every((r) => r === null));
        assert.deepEqual(target, want);
      }),
    );
  });

  test('invalidObject: 422 Invalid, every field error in the message, one cause per error', () => {
    const errors = [invalid(root('spec', 'targetRef'), 'x', 'bad ref'), invalid(root('spec', 'subsets').index(1).child('name'), '', '')];
    const response = invalidObject('u6', { group: 'apps.kruise.io', kind: 'WorkloadSpread' }, 'ws1', errors);
    assert.equal(response.allowed, false);
    assert.equal(response.status?.code, 422);
    assert.equal(response.status?.reason, 'Invalid');
    assert.match(response.status?.message ?? '', /^WorkloadSpread\.apps\.kruise\.io "ws1" is invalid: \[spec\.targetRef: .*bad ref, spec\.subsets\[1\]\.name: .*\]$/);
    assert.deepEqual(response.status?.details?.causes?.map((c) => c.field), ['spec.targetRef', 'spec.subsets[1].name']);
  });

  test('reviewResponse wraps in an AdmissionReview; responseResult labels', () => {
    assert.deepEqual(reviewResponse(allowed('u')), { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'u', allowed: true } });
    assert.equal(responseResult(allowed('u')), 'allowed');
    assert.equal(responseResult(patched('u', { a: 1 }, { a: 2 })), 'patched');
    assert.equal(responseResult(denied('u', 400, 'x')), 'denied');
    assert.equal(responseResult(errored('u', 500, 'x')), 'errored');
  });
});
