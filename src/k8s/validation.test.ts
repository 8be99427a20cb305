import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatFieldError, root, type FieldError } from './field-errors.ts';
import {
  isConfigMapKey,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isEnvVarName,
  isQualifiedName,
  isValidLabelValue,
  isValidPortName,
  validateAnnotations,
  validateLabelSelector,
  validateLabels,
  validateNodeSelector,
  validateNodeSelectorTerm,
  validateObjectMetaName,
  validateObjectMetaUpdate,
  validatePreferredSchedulingTerms,
  validateTolerations,
} from './validation.ts';

const texts = (errors: FieldError[]): string[] => errors.map(formatFieldError);

const KEY_REGEX_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_REGEX_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

describe('string formats', () => {
  const cases: [string, string[], string[]][] = [
    ['qualified name: plain', isQualifiedName('app'), []],
    ['qualified name: prefixed', isQualifiedName('topology.kubernetes.io/zone'), []],
    ['qualified name: empty', isQualifiedName(''), ['name part must be non-empty', `name part ${KEY_REGEX_MSG}`]],
    ['qualified name: empty prefix', isQualifiedName('/a'), ['prefix part must be non-empty']],
    ['qualified name: bad prefix', isQualifiedName('Foo/a'), [`prefix part ${SUBDOMAIN_MSG}`]],
    ['qualified name: too long', isQualifiedName('a'.repeat(64)), ['name part must be no more than 63 bytes']],
    ['qualified name: bad char', isQualifiedName('a b'), [`name part ${KEY_REGEX_MSG}`]],
    ['qualified name: two slashes', isQualifiedName('a/b/c'), [`a valid label key ${KEY_REGEX_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`]],
    ['label value: empty ok', isValidLabelValue(''), []],
    ['label value: bad', isValidLabelValue('-a'), [VALUE_REGEX_MSG]],
    ['label value: too long', isValidLabelValue('a'.repeat(64)), ['must be no more than 63 bytes']],
    ['dns label: dots', isDNS1123Label('a.b'), ['must not contain dots']],
    ['dns label: upper case', isDNS1123Label('Main'), [LABEL_MSG]],
    ['dns label: too long', isDNS1123Label('a'.repeat(64)), ['must be no more than 63 characters']],
    ['dns subdomain: ok', isDNS1123Subdomain('a.b-c'), []],
    ['dns subdomain: bad', isDNS1123Subdomain('a_b'), [SUBDOMAIN_MSG]],
    ['dns-1035: digit first', isDNS1035Label('1a'), ["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"]],
    ['env name: digit first', isEnvVarName('1A'), ["a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')"]],
    ['env name: ..x', isEnvVarName('..x'), ["must not start with '..'"]],
    ['config key: ok', isConfigMapKey('a.b_c-d'), []],
    ['port name: several problems', isValidPortName('-A--'), [
      'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
      'must contain at least one letter (a-z)',
      'must not contain consecutive hyphens',
      'must not begin or end with a hyphen',
    ]],
  ];
  for (const [name, got, want] of cases) test(name, () => assert.deepEqual(got, want));

  test('every [a-z0-9-] string that starts and ends alphanumerically and is ≤ 63 long is a DNS label', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'abcxyz019-'.split('')), minLength: 1, maxLength: 63 }), (s) => {
        const valid = /^[a-z0-9]/.test(s) && /[a-z0-9]$/.test(s);
        assert.equal(isDNS1123Label(s).length === 0, valid);
      }),
    );
  });
});

describe('labels, annotations, names', () => {
  test('labels: key and value problems are reported on the map path', () => {
    assert.deepEqual(texts(validateLabels({ 'a b': 'x', ok: '-v' }, root('metadata', 'labels'))), [
      `metadata.labels: Invalid value: "a b": name part ${KEY_REGEX_MSG}`,
      `metadata.labels: Invalid value: "-v": ${VALUE_REGEX_MSG}`,
    ]);
  });
  test('labels: malformed input is not a crash', () => {
    assert.deepEqual(validateLabels('oops', root('l')), []);
    assert.deepEqual(validateLabels(null, root('l')), []);
  });
  test('annotations: keys are checked lower-cased, values are free', () => {
    assert.deepEqual(validateAnnotations({ 'Example.com/Key': '---' }, root('a')), []);
    assert.equal(validateAnnotations({ 'a/b/c': '' }, root('a')).length, 1);
  });
  test('annotations: total size above 256 KiB is TooLong', () => {
    assert.deepEqual(texts(validateAnnotations({ a: 'x'.repeat(256 * 1024) }, root('metadata', 'annotations'))), [
      'metadata.annotations: Too long: may not be more than 262144 bytes',
    ]);
    assert.deepEqual(validateAnnotations({ a: 'x'.repeat(256 * 1024 - 1) }, root('metadata', 'annotations')), []);
  });
  test('object names: required, DNS subdomain, generateName as a prefix', () => {
    const meta = root('metadata');
    assert.deepEqual(texts(validateObjectMetaName(undefined, meta, 'WorkloadSpread')), ['metadata.name: Required value: name or generateName is required']);
    assert.deepEqual(texts(validateObjectMetaName('Bad_Name', meta, 'Pod')), [`metadata.name: Invalid value: "Bad_Name": ${SUBDOMAIN_MSG}`]);
    assert.deepEqual(validateObjectMetaName(undefined, meta, 'Pod', { generateName: 'web-' }), [
      { type: 'FieldValueRequired', field: 'metadata.name', badValue: '', detail: 'name or generateName is required' },
    ]);
    assert.equal(validateObjectMetaName('a.b', meta, 'Namespace')[0]?.detail, 'must not contain dots');
    assert.equal(validateObjectMetaName('1svc', meta, 'Service').length, 1);
  });
  test('object meta update: name, namespace, uid and creationTimestamp are immutable', () => {
    assert.deepEqual(
      texts(validateObjectMetaUpdate({ name: 'b', namespace: 'ns', uid: 'u' }, { name: 'a', namespace: 'ns', uid: 'u' }, root('metadata'))),
      ['metadata.name: Invalid value: "b": field is immutable'],
    );
    assert.deepEqual(texts(validateObjectMetaUpdate({ generation: 1 }, { generation: 2 }, root('metadata'))), [
      'metadata.generation: Invalid value: 1: must not be decremented',
    ]);
  });
});

describe('label selectors (metav1 validation)', () => {
  const p = root('spec', 'selector');
  const cases: [string, unknown, string[]][] = [
    ['null is valid', null, []],
    ['In without values', { matchExpressions: [{ key: 'a', operator: 'In' }] }, ["spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"]],
    ['Exists with values', { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }, ["spec.selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"]],
    ['unknown operator', { matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] }, ['spec.selector.matchExpressions[0].operator: Invalid value: "Gt": not a valid selector operator']],
    ['bad value', { matchExpressions: [{ key: 'a', operator: 'In', values: ['ok', '-x'] }] }, [`spec.selector.matchExpressions[0].values[1]: Invalid value: "-x": ${VALUE_REGEX_MSG}`]],
    ['bad matchLabels key', { matchLabels: { '/x': 'y' } }, ['spec.selector.matchLabels: Invalid value: "/x": prefix part must be non-empty']],
  ];
  for (const [name, selector, want] of cases) test(name, () => assert.deepEqual(texts(validateLabelSelector(selector, p)), want));
});

describe('node selector terms (V12) and preferred terms (V13)', () => {
  const p = root('spec', 'subsets').index(0).child('requiredNodeSelectorTerm');
  const expr = (e: Record<string, unknown>) => ({ matchExpressions: [e] });
  const cases: [string, unknown, string[]][] = [
    ['a valid In', expr({ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['zone-a'] }), []],
    ['In needs values', expr({ key: 'k', operator: 'In' }), ["spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"]],
    ['NotIn needs values', expr({ key: 'k', operator: 'NotIn', values: [] }), ["spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"]],
    ['Exists forbids values', expr({ key: 'k', operator: 'Exists', values: ['x'] }), ["spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"]],
    ['DoesNotExist forbids values', expr({ key: 'k', operator: 'DoesNotExist', values: ['x'] }), ["spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"]],
    ['Gt needs exactly one value', expr({ key: 'k', operator: 'Gt', values: ['1', '2'] }), ["spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt'"]],
    ['Lt value must be an integer', expr({ key: 'k', operator: 'Lt', values: ['ten'] }), ['spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].values[0]: Invalid value: "ten": must be an integer']],
    ['Gt with an integer', expr({ key: 'k', operator: 'Gt', values: ['5'] }), []],
    ['unknown operator', expr({ key: 'k', operator: 'Near', values: ['x'] }), ['spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator']],
    ['bad key', expr({ key: 'a/b/c', operator: 'Exists' }), [`spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].key: Invalid value: "a/b/c": a valid label key ${KEY_REGEX_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`]],
    ['bad label value in a required term', expr({ key: 'k', operator: 'In', values: ['a b'] }), [`spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].values[0]: Invalid value: "a b": ${VALUE_REGEX_MSG}`]],
    ['matchFields: metadata.name In one node', { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-1'] }] }, []],
    ['matchFields: only metadata.name', { matchFields: [{ key: 'metadata.labels', operator: 'In', values: ['x'] }] }, ['spec.subsets[0].requiredNodeSelectorTerm.matchFields[0].key: Invalid value: "metadata.labels": not a valid field selector key']],
    ['matchFields: exactly one value', { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a', 'b'] }] }, ["spec.subsets[0].requiredNodeSelectorTerm.matchFields[0].values: Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector"]],
    ['matchFields: In/NotIn only', { matchFields: [{ key: 'metadata.name', operator: 'Exists' }] }, ['spec.subsets[0].requiredNodeSelectorTerm.matchFields[0].operator: Invalid value: "Exists": not a valid selector operator']],
    ['matchFields: node name syntax', { matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['Node_1'] }] }, [`spec.subsets[0].requiredNodeSelectorTerm.matchFields[0].values[0]: Invalid value: "Node_1": ${SUBDOMAIN_MSG}`]],
    ['garbage does not crash', 'nonsense', []],
  ];
  for (const [name, term, want] of cases) test(name, () => assert.deepEqual(texts(validateNodeSelectorTerm(term, p)), want));

  test('preferred terms: weight 1..100, invalid label values tolerated', () => {
    const pp = root('spec', 'subsets').index(0).child('preferredNodeSelectorTerms');
    const term = (weight: number, values: string[]) => ({ weight, preference: { matchExpressions: [{ key: 'k', operator: 'In', values }] } });
    assert.deepEqual(texts(validatePreferredSchedulingTerms([term(0, ['a']), term(101, ['a b']), term(100, ['x'])], pp)), [
      'spec.subsets[0].preferredNodeSelectorTerms[0].weight: Invalid value: 0: must be in the range 1-100',
      'spec.subsets[0].preferredNodeSelectorTerms[1].weight: Invalid value: 101: must be in the range 1-100',
    ]);
    assert.deepEqual(texts(validatePreferredSchedulingTerms([{ weight: 1, preference: { matchExpressions: [{ key: 'k', operator: 'Exists', values: ['v'] }] } }], pp)), [
      "spec.subsets[0].preferredNodeSelectorTerms[0].preference.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
    ]);
  });

  test('a required node affinity needs at least one term', () => {
    assert.deepEqual(texts(validateNodeSelector({ nodeSelectorTerms: [] }, root('affinity'))), [
      'affinity.nodeSelectorTerms: Required value: must have at least one node selector term',
    ]);
  });
});

describe('tolerations (V14)', () => {
  const p = root('spec', 'subsets').index(0).child('tolerations');
  const cases: [string, unknown, string[]][] = [
    ['Exists with an empty key tolerates everything', [{ operator: 'Exists' }], []],
    ['Equal with key and value', [{ key: 'ecs', operator: 'Equal', value: 'v', effect: 'NoSchedule' }], []],
    ['empty operator means Equal', [{ key: 'ecs', value: 'v' }], []],
    ['empty key requires Exists', [{ operator: 'Equal' }], ['spec.subsets[0].tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"']],
    ['Exists forbids a value (reported on operator)', [{ key: 'k', operator: 'Exists', value: 'v' }], ['spec.subsets[0].tolerations[0].operator: Invalid value: "v": value must be empty when `operator` is \'Exists\'']],
    ['value must be a label value', [{ key: 'k', value: 'a b' }], [`spec.subsets[0].tolerations[0].operator: Invalid value: "a b": ${VALUE_REGEX_MSG}`]],
    ['unknown operator', [{ key: 'k', operator: 'Gt' }], ['spec.subsets[0].tolerations[0].operator: Unsupported value: "Gt": supported values: "Equal", "Exists"']],
    ['unknown effect', [{ key: 'k', operator: 'Exists', effect: 'NoRun' }], ['spec.subsets[0].tolerations[0].effect: Unsupported value: "NoRun": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"']],
    ['tolerationSeconds needs NoExecute', [{ key: 'k', operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 30 }], ["spec.subsets[0].tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set"]],
    ['tolerationSeconds with NoExecute', [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }], []],
    ['bad key', [{ key: 'a b', operator: 'Exists' }], [`spec.subsets[0].tolerations[0].key: Invalid value: "a b": name part ${KEY_REGEX_MSG}`]],
    ['second entry indexed', [{ operator: 'Exists' }, { operator: 'Exists', effect: 'x' }], ['spec.subsets[0].tolerations[1].effect: Unsupported value: "x": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"']],
    ['garbage does not crash', [null, 7], [
      'spec.subsets[0].tolerations[0].operator: Invalid value: "": operator must be Exists when `key` is empty, which means "match all values and all keys"',
      'spec.subsets[0].tolerations[1].operator: Invalid value: "": operator must be Exists when `key` is empty, which means "match all values and all keys"',
    ]],
  ];
  for (const [name, tolerations, want] of cases) test(name, () => assert.deepEqual(texts(validateTolerations(tolerations, p)), want));
});
