import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  duplicate,
  fieldErrorBody,
  forbidden,
  formatFieldError,
  formatFieldErrors,
  formatGoValue,
  goQuote,
  internalError,
  invalid,
  invalidObjectMessage,
  invalidStatusCauses,
  notFound,
  notSupported,
  required,
  root,
  tooLong,
  tooMany,
  typeInvalid,
} from './field-errors.ts';

describe('FieldPath prints like field.Path.String()', () => {
  const cases: [string, string, string][] = [
    ['the brief example', root('spec').child('subsets').index(1).child('maxReplicas').key('x').toString(), 'spec.subsets[1].maxReplicas[x]'],
    ['child with several names', root('spec').child('scheduleStrategy', 'adaptive').toString(), 'spec.scheduleStrategy.adaptive'],
    ['root with several names', root('metadata', 'annotations').key('a/b').toString(), 'metadata.annotations[a/b]'],
    ['empty root (field.NewPath(""))', root('').toString(), '[]'],
    ['index right after root', root('values').index(0).toString(), 'values[0]'],
  ];
  for (const [name, got, want] of cases) test(name, () => assert.equal(got, want));

  test('paths are immutable', () => {
    const base = root('spec');
    base.child('a');
    assert.equal(base.toString(), 'spec');
  });
});

describe('formatFieldError matches (*field.Error).Error()', () => {
  const p = root('spec').child('subsets').index(1).child('maxReplicas');
  const cases: [string, ReturnType<typeof invalid>, string][] = [
    ['Invalid with a string (issue example)', invalid(p, '70%', "the sum of all subsets' maxReplicas exceeds 100%"),
      `spec.subsets[1].maxReplicas: Invalid value: "70%": the sum of all subsets' maxReplicas exceeds 100%`],
    ['Invalid with an int', invalid(p, -100, 'maxReplicas is not valid for subset'), 'spec.subsets[1].maxReplicas: Invalid value: -100: maxReplicas is not valid for subset'],
    ['Invalid with a bool', invalid(p, true, 'x'), 'spec.subsets[1].maxReplicas: Invalid value: true: x'],
    ['Invalid with an object (JSON, key order kept)', invalid('spec.targetRef', { apiVersion: 'apps/v1', kind: 'Deployment', name: '' }, 'empty TargetReference is not valid for WorkloadSpread.'),
      'spec.targetRef: Invalid value: {"apiVersion":"apps/v1","kind":"Deployment","name":""}: empty TargetReference is not valid for WorkloadSpread.'],
    ['Invalid with nil', invalid('spec.x', undefined, 'd'), 'spec.x: Invalid value: null: d'],
    ['Invalid with an empty detail', invalid('spec.subsets[0].name', ''), 'spec.subsets[0].name: Invalid value: ""'],
    ['Invalid with a float', invalid('x', 0.5, 'd'), 'x: Invalid value: 0.5: d'],
    ['Required', required('spec.targetRef', 'no targetRef defined in WorkloadSpread'), 'spec.targetRef: Required value: no targetRef defined in WorkloadSpread'],
    ['Required without detail', required('spec.containers'), 'spec.containers: Required value'],
    ['Duplicate', duplicate('spec.containers[1].name', 'x'), 'spec.containers[1].name: Duplicate value: "x"'],
    ['NotSupported', notSupported('spec.dnsPolicy', 'x', ['a', 'b']), 'spec.dnsPolicy: Unsupported value: "x": supported values: "a", "b"'],
    ['NotSupported without choices', notSupported('f', 'x', []), 'f: Unsupported value: "x"'],
    ['Forbidden', forbidden('spec.values', 'detail'), 'spec.values: Forbidden: detail'],
    ['NotFound', notFound('spec.volumeMounts[0].name', 'data'), 'spec.volumeMounts[0].name: Not found: "data"'],
    ['Internal error', internalError('spec.targetRef', 'boom'), 'spec.targetRef: Internal error: boom'],
    ['TooLong never prints the value', tooLong('metadata.annotations', 'x'.repeat(10), 262144), 'metadata.annotations: Too long: may not be more than 262144 bytes'],
    ['TooLong of 1 byte', tooLong('f', '', 1), 'f: Too long: may not be more than 1 byte'],
    ['TooMany', tooMany('f', 5, 3), 'f: Too many: 5: must have at most 3 items'],
    ['TooMany with an unknown count', tooMany('f', -1, 1), 'f: Too many: must have at most 1 item'],
    ['TypeInvalid', typeInvalid('spec.subsets', 'object', 'spec.subsets in body must be of type array: "object"'),
      'spec.subsets: Invalid value: "object": spec.subsets in body must be of type array: "object"'],
  ];
  for (const [name, error, want] of cases) test(name, () => assert.equal(formatFieldError(error), want));

  test('the body is the message without the field (Status causes)', () => {
    assert.equal(fieldErrorBody(notFound('a', 'b')), 'Not found: "b"');
    assert.deepEqual(invalidStatusCauses([required('spec.x', 'd')]), [{ reason: 'FieldValueRequired', message: 'Required value: d', field: 'spec.x' }]);
  });
});

describe('Go value printing', () => {
  const cases: [unknown, string][] = [
    ['a"b\\c', '"a\\"b\\\\c"'],
    ['tab\tnew\nline', '"tab\\tnew\\nline"'],
    ['\x01', '"\\x01"'],
    ['日本', '"日本"'],
    ['\u00ad', '"\\u00ad"'],
    [30, '30'],
    [-1, '-1'],
    [1.5, '1.5'],
    [1234567.5, '1.2345675e+06'],
    [0.00001, '1e-05'],
    [null, 'null'],
    [['a', 'b'], '["a","b"]'],
    [{ a: '<&>' }, '{"a":"\\u003c\\u0026\\u003e"}'],
  ];
  for (const [value, want] of cases) test(`${JSON.stringify(value)} → ${want}`, () => assert.equal(formatGoValue(value), want));

  test('goQuote output is always a quoted string literal that JSON-parses back for ASCII input', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'ab"\\ 09xyz/%'.split('')) }), (s) => {
        const quoted = goQuote(s);
        assert.equal(JSON.parse(quoted), s);
      }),
    );
  });
});

describe('aggregates (errors.NewInvalid)', () => {
  const a = invalid('spec.a', 'x', 'bad');
  const b = required('spec.b', 'missing');
  test('one error prints alone', () => assert.equal(formatFieldErrors([a]), 'spec.a: Invalid value: "x": bad'));
  test('several print bracketed, comma-separated', () => {
    assert.equal(formatFieldErrors([a, b]), '[spec.a: Invalid value: "x": bad, spec.b: Required value: missing]');
  });
  test('identical messages are printed once', () => assert.equal(formatFieldErrors([a, a, b, a]), '[spec.a: Invalid value: "x": bad, spec.b: Required value: missing]'));
  test('duplicates collapsing to one print without brackets', () => assert.equal(formatFieldErrors([a, a]), 'spec.a: Invalid value: "x": bad'));
  test('an empty list prints as a nil aggregate', () => assert.equal(formatFieldErrors([]), '<nil>'));
  test('invalidObjectMessage qualifies the kind with the group and quotes the name', () => {
    assert.equal(
      invalidObjectMessage('WorkloadSpread', 'apps.kruise.io', 'ws-1', [a, b]),
      'WorkloadSpread.apps.kruise.io "ws-1" is invalid: [spec.a: Invalid value: "x": bad, spec.b: Required value: missing]',
    );
    assert.equal(invalidObjectMessage('Pod', '', 'p', [b]), 'Pod "p" is invalid: spec.b: Required value: missing');
  });
});
