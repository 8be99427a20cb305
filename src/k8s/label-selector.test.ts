import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  fieldSelectorMatches,
  formatLabelSelector,
  labelSelectorAsSelector,
  labelsMatch,
  newRequirement,
  parseFieldSelector,
  parseSelector,
  selectorFromRequirements,
  selectorToString,
  type Requirement,
} from './label-selector.ts';
import type { LabelSelector } from './types.ts';

const KEY_REGEX_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_REGEX_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

function mustParse(s: string) {
  const r = parseSelector(s);
  if (!r.ok) assert.fail(`parse ${JSON.stringify(s)}: ${r.error}`);
  return r.selector;
}

function mustConvert(sel: LabelSelector | null | undefined) {
  const r = labelSelectorAsSelector(sel);
  if (!r.ok) assert.fail(`convert: ${r.error}`);
  return r.selector;
}

describe('parseSelector: accepted syntax and canonical String()', () => {
  const cases: [string, string][] = [
    ['', ''],
    ['x=a', 'x=a'],
    ['x==a', 'x==a'],
    ['x!=a', 'x!=a'],
    ['  x  =  a  ,\ty\n', 'x=a,y'],
    ['x', 'x'],
    ['!x', '!x'],
    ['x>1', 'x>1'],
    ['x<10', 'x<10'],
    ['x=', 'x='],
    ['x in (b,a,a)', 'x in (a,b)'],
    ['x notin (a)', 'x notin (a)'],
    ['x in (foo,,baz),y,z notin ()', 'x in (,baz,foo),y,z notin ()'],
    ['x in (in)', 'x in (in)'],
    ['in', 'in'],
    ['b=1,a=2', 'a=2,b=1'],
    ['x=a,x=b', 'x=a,x=b'],
    ['example.com/app=web', 'example.com/app=web'],
  ];
  for (const [input, want] of cases) {
    test(JSON.stringify(input), () => assert.equal(mustParse(input).toString(), want));
  }

  test('the empty string selects everything', () => {
    const s = mustParse('');
    assert.equal(s.empty, true);
    assert.equal(s.matches({}), true);
    assert.equal(s.matches(undefined), true);
  });
});

describe('parseSelector: errors', () => {
  const cases: [string, string][] = [
    [',x', "found ',', expected: !, identifier, or 'end of string'"],
    ['x,', "found '', expected: identifier after ','"],
    ['x=a b', "found 'b', expected: ',' or 'end of string'"],
    ['x y', "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt"],
    ['x in', "unable to parse requirement: found '' expected: '('"],
    ['x in (a', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['x in (a b)', "unable to parse requirement: found 'b', expected: ',' or ')'"],
    ['x in (=)', "unable to parse requirement: found '=', expected: ',', ')' or identifier"],
    ['!x=a', "found '=', expected: ',' or 'end of string'"],
    ['x>a', `unable to parse requirement: values[0]: Invalid value: "a": for 'Gt', 'Lt' operators, the value must be an integer`],
    ['x<-1', `unable to parse requirement: values[0][x]: Invalid value: "-1": ${VALUE_REGEX_MSG}`],
    ['x=a||b', `unable to parse requirement: values[0][x]: Invalid value: "a||b": ${VALUE_REGEX_MSG}`],
    ['-x=a', `unable to parse requirement: <nil>: Invalid value: "-x": name part ${KEY_REGEX_MSG}`],
    [
      'a/b/c=d',
      `unable to parse requirement: <nil>: Invalid value: "a/b/c": a valid label key ${KEY_REGEX_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ],
  ];
  for (const [input, want] of cases) {
    test(JSON.stringify(input), () => {
      const r = parseSelector(input);
      assert.equal(r.ok, false);
      if (!r.ok) assert.equal(r.error, want);
    });
  }
});

describe('requirement matching', () => {
  const cases: [string, Record<string, string> | undefined, boolean][] = [
    ['x=a', { x: 'a' }, true],
    ['x=a', { x: 'b' }, false],
    ['x=a', {}, false],
    ['x=', { x: '' }, true],
    ['x=', {}, false],
    ['x!=a', {}, true],
    ['x!=a', { x: 'a' }, false],
    ['x in (a,b)', { x: 'b' }, true],
    ['x in (a,b)', { x: 'c' }, false],
    ['x notin (a)', {}, true],
    ['x notin (a)', { x: 'b' }, true],
    ['x notin (a)', { x: 'a' }, false],
    ['x', { x: '' }, true],
    ['x', undefined, false],
    ['!x', undefined, true],
    ['!x', { x: 'a' }, false],
    ['x>5', { x: '6' }, true],
    ['x>5', { x: '5' }, false],
    ['x>5', { x: 'six' }, false],
    ['x>5', {}, false],
    ['x<5', { x: '-7' }, true],
    ['x>9007199254740992', { x: '9007199254740993' }, true],
    ['x=a,y=b', { x: 'a', y: 'b' }, true],
    ['x=a,y=b', { x: 'a' }, false],
  ];
  for (const [sel, labels, want] of cases) {
    test(`${sel} vs ${JSON.stringify(labels)}`, () => assert.equal(mustParse(sel).matches(labels), want));
  }
});

describe('labelSelectorAsSelector', () => {
  test('nil selects nothing', () => {
    for (const sel of [null, undefined]) {
      const s = mustConvert(sel);
      assert.equal(s.matches({}), false);
      assert.equal(s.matches({ a: 'b' }), false);
      assert.equal(s.empty, false);
      assert.equal(s.matchesNothing, true);
      assert.equal(s.toString(), '');
    }
  });

  test('an empty selector selects everything', () => {
    for (const sel of [{}, { matchLabels: {} }, { matchLabels: {}, matchExpressions: [] }]) {
      const s = mustConvert(sel);
      assert.equal(s.empty, true);
      assert.equal(s.matches({ any: 'thing' }), true);
      assert.equal(s.matches(undefined), true);
    }
  });

  test('matchLabels and matchExpressions are ANDed and print sorted by key', () => {
    const s = mustConvert({
      matchLabels: { tier: 'web', app: 'a' },
      matchExpressions: [
        { key: 'zone', operator: 'In', values: ['z2', 'z1'] },
        { key: 'gpu', operator: 'DoesNotExist' },
        { key: 'env', operator: 'NotIn', values: ['dev'] },
        { key: 'app', operator: 'Exists' },
      ],
    });
    assert.equal(s.toString(), 'app=a,app,env notin (dev),!gpu,tier=web,zone in (z1,z2)');
    assert.equal(s.matches({ app: 'a', tier: 'web', zone: 'z1' }), true);
    assert.equal(s.matches({ app: 'a', tier: 'web', zone: 'z1', gpu: 'x' }), false);
    assert.equal(s.matches({ app: 'a', tier: 'web', zone: 'z3' }), false);
    assert.equal(s.matches({ app: 'a', tier: 'web', zone: 'z1', env: 'dev' }), false);
  });

  const errors: [string, unknown, string][] = [
    ['In needs values', { matchExpressions: [{ key: 'a', operator: 'In' }] }, "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"],
    ['NotIn with an empty list', { matchExpressions: [{ key: 'a', operator: 'NotIn', values: [] }] }, "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"],
    ['Exists takes no values', { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }, 'values: Invalid value: []string{"x"}: values set must be empty for exists and does not exist'],
    ['unknown operator', { matchExpressions: [{ key: 'a', operator: 'Foo', values: ['x'] }] }, '"Foo" is not a valid label selector operator'],
    ['Gt is not a label selector operator', { matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] }, '"Gt" is not a valid label selector operator'],
    ['invalid key', { matchLabels: { 'bad key': 'x' } }, `key: Invalid value: "bad key": name part ${KEY_REGEX_MSG}`],
    ['invalid value', { matchLabels: { app: 'a b' } }, `values[0][app]: Invalid value: "a b": ${VALUE_REGEX_MSG}`],
    ['too long value', { matchLabels: { app: 'a'.repeat(64) } }, `values[0][app]: Invalid value: "${'a'.repeat(64)}": must be no more than 63 bytes`],
    ['empty prefix', { matchLabels: { '/a': 'x' } }, 'key: Invalid value: "/a": prefix part must be non-empty'],
    [
      'several problems are aggregated',
      { matchExpressions: [{ key: '', operator: 'In' }] },
      `[key: Invalid value: "": name part must be non-empty; name part ${KEY_REGEX_MSG}, values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty]`,
    ],
  ];
  for (const [name, sel, want] of errors) {
    test(`error: ${name}`, () => {
      const r = labelSelectorAsSelector(sel as LabelSelector);
      assert.equal(r.ok, false);
      if (!r.ok) assert.equal(r.error, want);
    });
  }

  test('malformed shapes are errors, not crashes', () => {
    for (const sel of [{ matchLabels: [] }, { matchExpressions: {} }, { matchExpressions: [42] }, { matchLabels: { a: 1 } }, 'x', { matchExpressions: [{ key: 'a', operator: 'In', values: [1] }] }]) {
      assert.equal(labelSelectorAsSelector(sel as unknown as LabelSelector).ok, false);
    }
  });

  test('labelsMatch, selectorToString and formatLabelSelector', () => {
    assert.equal(labelsMatch({ matchLabels: { a: 'b' } }, { a: 'b', c: 'd' }), true);
    assert.equal(labelsMatch({ matchLabels: { a: 'b' } }, { a: 'c' }), false);
    assert.equal(labelsMatch(undefined, { a: 'b' }), false);
    assert.equal(labelsMatch({ matchExpressions: [{ key: 'a', operator: 'Bogus' }] }, { a: 'b' }), false);
    assert.equal(selectorToString({ matchLabels: { b: '2', a: '1' } }), 'a=1,b=2');
    assert.equal(formatLabelSelector({}), '<none>');
    assert.equal(formatLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Bogus' }] }), '<error>');
    assert.equal(formatLabelSelector({ matchLabels: { a: '1' } }), 'a=1');
  });

  test('newRequirement rejects an unknown operator with the supported list', () => {
    const r = newRequirement('a', 'like', ['x']);
    assert.equal(r.ok, false);
    if (!r.ok) assert.equal(r.error, 'operator: Unsupported value: "like": supported values: "in", "notin", "=", "==", "!=", "gt", "lt", "exists", "!"');
  });
});

describe('selector string round trip (property)', () => {
  const key = fc.constantFrom('a', 'b', 'app', 'example.com/tier', 'x.y_z');
  const value = fc.constantFrom('', 'v', 'w1', 'in', 'notin', 'A-b.c');
  const intValue = fc.integer({ min: 0, max: 1000 }).map(String);
  const requirement: fc.Arbitrary<Requirement> = fc.oneof(
    fc.record({ key, operator: fc.constantFrom('=' as const, '==' as const, '!=' as const), values: value.map((v) => [v]) }),
    fc.record({ key, operator: fc.constantFrom('in' as const, 'notin' as const), values: fc.uniqueArray(value, { minLength: 1, maxLength: 3 }).map((v) => v.sort()) }),
    fc.record({ key, operator: fc.constantFrom('exists' as const, '!' as const), values: fc.constant([]) }),
    fc.record({ key, operator: fc.constantFrom('gt' as const, 'lt' as const), values: intValue.map((v) => [v]) }),
  );
  const labels = fc.dictionary(key, fc.oneof(value, intValue), { maxKeys: 4 });

  test('parse(String(s)) prints the same and matches the same labels', () => {
    fc.assert(
      fc.property(fc.array(requirement, { maxLength: 4 }), fc.array(labels, { minLength: 1, maxLength: 5 }), (reqs, labelSets) => {
        const s = selectorFromRequirements(reqs);
        const back = mustParse(s.toString());
        assert.equal(back.toString(), s.toString());
        for (const l of labelSets) assert.equal(back.matches(l), s.matches(l));
      }),
    );
  });
});

describe('field selectors', () => {
  const parsed: [string, { field: string; op: string; value: string }[]][] = [
    ['', []],
    ['metadata.name=foo', [{ field: 'metadata.name', op: '=', value: 'foo' }]],
    ['metadata.name==foo', [{ field: 'metadata.name', op: '=', value: 'foo' }]],
    ['status.phase!=Running', [{ field: 'status.phase', op: '!=', value: 'Running' }]],
    ['spec.nodeName=', [{ field: 'spec.nodeName', op: '=', value: '' }]],
    ['b=1,a=2', [{ field: 'a', op: '=', value: '2' }, { field: 'b', op: '=', value: '1' }]],
    ['a=x\\,y\\=z\\\\', [{ field: 'a', op: '=', value: 'x,y=z\\' }]],
    ['a=1,,b=2', [{ field: 'a', op: '=', value: '1' }, { field: 'b', op: '=', value: '2' }]],
    ['=', []],
    ['a=!b', [{ field: 'a', op: '=', value: '!b' }]],
  ];
  for (const [input, want] of parsed) {
    test(`parse ${JSON.stringify(input)}`, () => {
      const r = parseFieldSelector(input);
      assert.ok(r.ok, r.ok ? '' : r.error);
      if (r.ok) assert.deepEqual(r.requirements, want);
    });
  }

  const errors: [string, string][] = [
    ['abc', "invalid selector: 'abc'; can't understand 'abc'"],
    ['a=b\\x', 'invalid field selector: invalid escape sequence: \\x'],
    ['a=b\\', 'invalid field selector: invalid escape sequence: \\'],
    ['a=b=c', 'invalid field selector: unescaped character in value: 61'],
    ['a!==b', 'invalid field selector: unescaped character in value: 61'],
  ];
  for (const [input, want] of errors) {
    test(`error ${JSON.stringify(input)}`, () => {
      const r = parseFieldSelector(input);
      assert.equal(r.ok, false);
      if (!r.ok) assert.equal(r.error, want);
    });
  }

  test('matching treats a missing field as the empty string', () => {
    const reqs = (s: string) => {
      const r = parseFieldSelector(s);
      if (!r.ok) assert.fail(r.error);
      return r.requirements;
    };
    assert.equal(fieldSelectorMatches(reqs('spec.nodeName='), {}), true);
    assert.equal(fieldSelectorMatches(reqs('spec.nodeName='), { 'spec.nodeName': 'n1' }), false);
    assert.equal(fieldSelectorMatches(reqs('spec.nodeName!='), { 'spec.nodeName': 'n1' }), true);
    assert.equal(fieldSelectorMatches(reqs('metadata.name=a,metadata.namespace=ns'), { 'metadata.name': 'a', 'metadata.namespace': 'ns' }), true);
    assert.equal(fieldSelectorMatches(reqs('metadata.name=a,metadata.namespace=ns'), { 'metadata.name': 'a', 'metadata.namespace': 'other' }), false);
    assert.equal(fieldSelectorMatches(reqs(''), { x: 'y' }), true);
  });
});
