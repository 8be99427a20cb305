/**
 * The AdmissionReview exchange as plain functions: which review version a
 * webhook gets, the options object per operation, the checks of an answer
 * (strict for v1, lenient for v1beta1) and how a denial becomes the error.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AdmissionAttributes } from './admission.ts';
import { ADMISSION_V1, ADMISSION_V1BETA1, applyWebhookPatch, operationOptions, reviewDecodeError, reviewVersionFor, verifyAdmissionResponse, webhookRejection } from './admission-review.ts';
import type { ResourceDef } from './resource-def.ts';

function attrs(over: Partial<AdmissionAttributes> = {}): AdmissionAttributes {
  return {
    operation: 'CREATE',
    resource: { group: '', version: 'v1', plural: 'pods' } as ResourceDef,
    subresource: '',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    namespace: 'ns',
    name: 'p',
    object: { metadata: { name: 'p' } },
    oldObject: undefined,
    options: {},
    dryRun: false,
    user: { username: 'u', groups: [] },
    ...over,
  };
}

describe('review version', () => {
  const cases: [string[], string | undefined][] = [
    [['v1'], ADMISSION_V1],
    [['v1beta1', 'v1'], ADMISSION_V1BETA1],
    [['v2', 'v1'], ADMISSION_V1],
    [['v2'], undefined],
  ];
  for (const [versions, expected] of cases) test(`${versions.join(',')} → ${String(expected)}`, () => assert.equal(reviewVersionFor(versions), expected));
});

describe('options', () => {
  test('per operation, with dryRun folded in', () => {
    assert.deepEqual(operationOptions(attrs()), { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' });
    assert.deepEqual(operationOptions(attrs({ operation: 'UPDATE', dryRun: true })), { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1', dryRun: ['All'] });
    assert.deepEqual(operationOptions(attrs({ operation: 'DELETE', options: { propagationPolicy: 'Foreground' } })), { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', propagationPolicy: 'Foreground' });
    assert.equal(operationOptions(attrs({ operation: 'CONNECT' })), null);
  });
});

describe('verifying an answer', () => {
  const uid = 'u-1';
  const v1 = (response: Record<string, unknown>) => ({ apiVersion: ADMISSION_V1, kind: 'AdmissionReview', response });
  test('v1: uid and apiVersion/kind must match', () => {
    assert.deepEqual(verifyAdmissionResponse(ADMISSION_V1, uid, true, v1({ uid: 'other', allowed: true })), { ok: false, error: 'expected response.uid="u-1", got "other"' });
    assert.deepEqual(verifyAdmissionResponse(ADMISSION_V1, uid, true, { kind: 'AdmissionReview', response: { uid, allowed: true } }), {
      ok: false,
      error: 'expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got /, Kind=AdmissionReview',
    });
    assert.deepEqual(verifyAdmissionResponse(ADMISSION_V1, uid, true, { apiVersion: ADMISSION_V1, kind: 'AdmissionReview' }), { ok: false, error: 'webhook response was absent' });
  });
  test('v1beta1: neither uid nor apiVersion/kind is checked', () => {
    const r = verifyAdmissionResponse(ADMISSION_V1BETA1, uid, true, { response: { allowed: true } });
    assert.ok(r.ok && r.response.allowed);
  });
  test('patches: only with a patchType, only from mutating webhooks; decoded from base64', () => {
    const patch = Buffer.from('[{"op":"add","path":"/a","value":1}]').toString('base64');
    assert.deepEqual(verifyAdmissionResponse(ADMISSION_V1, uid, true, v1({ uid, allowed: true, patch })), { ok: false, error: 'webhook returned response.patch but not response.patchType' });
    assert.deepEqual(verifyAdmissionResponse(ADMISSION_V1, uid, false, v1({ uid, allowed: true, patch, patchType: 'JSONPatch' })), { ok: false, error: 'validating webhook may not return response.patch' });
    const ok = verifyAdmissionResponse(ADMISSION_V1, uid, true, v1({ uid, allowed: true, patch, patchType: 'JSONPatch', warnings: ['w'] }));
    assert.ok(ok.ok);
    assert.deepEqual([ok.response.patch, ok.response.patchType, ok.response.warnings], ['[{"op":"add","path":"/a","value":1}]', 'JSONPatch', ['w']]);
  });
  test('decode errors name the field like the Go decoder', () => {
    assert.equal(reviewDecodeError({ response: { allowed: 'yes' } }), 'json: cannot unmarshal string into Go struct field AdmissionResponse.response.allowed of type bool');
    assert.equal(reviewDecodeError({ response: { patch: 'QU=D' } }), 'illegal base64 data at input byte 2');
    assert.equal(reviewDecodeError([]), 'json: cannot unmarshal array into Go value of type v1.AdmissionReview');
    assert.equal(reviewDecodeError({ response: { uid: 'x', allowed: true, warnings: ['a'] } }), undefined);
  });
});

describe('a denial as an error (ToStatusErr)', () => {
  const cases: [string, Record<string, unknown>, number, string][] = [
    ['message', { message: 'no' }, 400, 'admission webhook "h.example.com" denied the request: no'],
    ['reason when there is no message', { reason: 'NotAllowed' }, 400, 'admission webhook "h.example.com" denied the request: NotAllowed'],
    ['neither', {}, 400, 'admission webhook "h.example.com" denied the request without explanation'],
    ['code below 400', { code: 302, message: 'x' }, 400, 'admission webhook "h.example.com" denied the request: x'],
    ['429 passes through', { code: 429, message: 'x' }, 429, 'admission webhook "h.example.com" denied the request: x'],
    ['500 passes through', { code: 500, message: 'x' }, 500, 'admission webhook "h.example.com" denied the request: x'],
  ];
  for (const [name, result, code, message] of cases) {
    test(name, () => {
      const s = webhookRejection('h.example.com', result);
      assert.deepEqual([s.code, s.message, s.status], [code, message, 'Failure']);
    });
  }
  test('details are kept (e.g. retryAfterSeconds for a 429)', () => {
    const s = webhookRejection('h.example.com', { code: 429, message: 'later', reason: 'TooManyRequests', details: { retryAfterSeconds: 5 } });
    assert.deepEqual([s.reason, s.details], ['TooManyRequests', { retryAfterSeconds: 5 }]);
  });
});

describe('applying a patch', () => {
  test('operations apply in order to a copy; a failing one is an error', () => {
    const obj = { metadata: { name: 'p', labels: { a: '1' } } };
    const r = applyWebhookPatch(obj, '[{"op":"add","path":"/metadata/labels/b","value":"2"},{"op":"remove","path":"/metadata/labels/a"}]');
    assert.ok(r.ok);
    assert.deepEqual(r.object.metadata?.labels, { b: '2' });
    assert.deepEqual(obj.metadata.labels, { a: '1' }, 'the original is untouched');
    const bad = applyWebhookPatch(obj, '[{"op":"remove","path":"/spec"}]');
    assert.equal(bad.ok, false);
    assert.deepEqual(applyWebhookPatch(obj, '{"op":"add"}'), { ok: false, error: 'json: cannot unmarshal object into Go value of type jsonpatch.Patch' });
  });
});
