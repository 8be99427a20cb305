import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatFieldError } from '../k8s/field-errors.ts';
import { validateDomainDisruptionBudget, validateDomainDisruptionBudgetUpdate } from './disruption-budget-validation.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- fixtures are raw JSON that tests reshape freely
type Json = any;

const ZONE = 'topology.kubernetes.io/zone';

/** KEP-8 story 2 as a DomainDisruptionBudget: at most 1 unavailable per zone. */
function story2(): Json {
  return {
    apiVersion: 'policy.workloadspread.io/v1alpha1',
    kind: 'DomainDisruptionBudget',
    metadata: { name: 'app-ddb', namespace: 'default' },
    spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'foo' } }, topologyKey: ZONE },
  };
}

function variant(mutate: (b: Json) => void): Json {
  const b = story2();
  mutate(b);
  return b;
}

const check = (b: unknown): string[] => validateDomainDisruptionBudget(b).map(formatFieldError);

describe('accepted budgets', () => {
  const cases: [string, Json][] = [
    ['story 2: maxUnavailable 1 per zone', story2()],
    [
      'story 1: maxUnavailable 0 on every zone but bar',
      variant((b) => {
        b.spec.maxUnavailable = 0;
        delete b.spec.topologyKey;
        b.spec.nodeSelectorTerm = { matchExpressions: [{ key: ZONE, operator: 'NotIn', values: ['bar'] }, { key: ZONE, operator: 'Exists' }] };
      }),
    ],
    ['story 3: one overall budget', variant((b) => delete b.spec.topologyKey)],
    ['minAvailable as a percentage', variant((b) => { delete b.spec.maxUnavailable; b.spec.minAvailable = '50%'; })],
    ['100% is the top', variant((b) => (b.spec.maxUnavailable = '100%'))],
    ['0%', variant((b) => (b.spec.maxUnavailable = '0%'))],
    ['workloadSpreadRef (the WorkloadSpread need not exist)', variant((b) => { delete b.spec.topologyKey; b.spec.workloadSpreadRef = { name: 'web-spread' }; })],
    ['matchExpressions only', variant((b) => (b.spec.selector = { matchExpressions: [{ key: 'app', operator: 'In', values: ['foo'] }] }))],
    ['AlwaysAllow for unready pods', variant((b) => (b.spec.unhealthyPodEvictionPolicy = 'AlwaysAllow'))],
    ['matchFields on node names', variant((b) => { delete b.spec.topologyKey; b.spec.nodeSelectorTerm = { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-1'] }] }; })],
  ];
  for (const [name, b] of cases) test(name, () => assert.deepEqual(check(b), []));
});

describe('refused budgets: one case per rule, with the field to fix', () => {
  const cases: [string, Json, string[]][] = [
    [
      'both maxUnavailable and minAvailable',
      variant((b) => (b.spec.minAvailable = 2)),
      ['spec.minAvailable: Forbidden: may not be set together with spec.maxUnavailable: set exactly one of them'],
    ],
    [
      'neither maxUnavailable nor minAvailable',
      variant((b) => delete b.spec.maxUnavailable),
      ['spec.maxUnavailable: Required value: exactly one of spec.maxUnavailable and spec.minAvailable must be set'],
    ],
    [
      'two domain modes',
      variant((b) => (b.spec.workloadSpreadRef = { name: 'web' })),
      ['spec.workloadSpreadRef: Forbidden: may not be set together with spec.topologyKey: a budget names its domains one way only'],
    ],
    [
      'three domain modes: the two extra ones are named',
      variant((b) => { b.spec.workloadSpreadRef = { name: 'web' }; b.spec.nodeSelectorTerm = { matchExpressions: [{ key: ZONE, operator: 'Exists' }] }; }),
      [
        'spec.topologyKey: Forbidden: may not be set together with spec.nodeSelectorTerm: a budget names its domains one way only',
        'spec.workloadSpreadRef: Forbidden: may not be set together with spec.nodeSelectorTerm: a budget names its domains one way only',
      ],
    ],
    ['no selector', variant((b) => delete b.spec.selector), ['spec.selector: Required value: a budget must say which pods it protects']],
    ['empty selector', variant((b) => (b.spec.selector = {})), ['spec.selector: Invalid value: {}: must not be empty: an empty selector would govern every pod of the namespace']],
    [
      'selector with empty lists',
      variant((b) => (b.spec.selector = { matchLabels: {}, matchExpressions: [] })),
      ['spec.selector: Invalid value: {"matchLabels":{},"matchExpressions":[]}: must not be empty: an empty selector would govern every pod of the namespace'],
    ],
    [
      'selector with a bad operator',
      variant((b) => (b.spec.selector = { matchExpressions: [{ key: 'app', operator: 'Near', values: ['x'] }] })),
      ['spec.selector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator'],
    ],
    ['percent over 100%', variant((b) => (b.spec.maxUnavailable = '101%')), ['spec.maxUnavailable: Invalid value: "101%": must not be greater than 100%']],
    ['minAvailable over 100%', variant((b) => { delete b.spec.maxUnavailable; b.spec.minAvailable = '150%'; }), ['spec.minAvailable: Invalid value: "150%": must not be greater than 100%']],
    ['a negative int', variant((b) => (b.spec.maxUnavailable = -1)), ['spec.maxUnavailable: Invalid value: -1: must be greater than or equal to 0']],
    ['not a percentage', variant((b) => (b.spec.maxUnavailable = '1.5%')), ['spec.maxUnavailable: Invalid value: "1.5%": a percentage must be digits followed by "%", such as "25%"']],
    ['a bare number string', variant((b) => (b.spec.maxUnavailable = '3')), ['spec.maxUnavailable: Invalid value: "3": a percentage must be digits followed by "%", such as "25%"']],
    ['a negative percentage', variant((b) => (b.spec.maxUnavailable = '-5%')), ['spec.maxUnavailable: Invalid value: "-5%": a percentage must be digits followed by "%", such as "25%"']],
    [
      'an invalid topologyKey',
      variant((b) => (b.spec.topologyKey = 'bad key!')),
      [
        `spec.topologyKey: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
      ],
    ],
    ['an empty topologyKey', variant((b) => (b.spec.topologyKey = '')), ['spec.topologyKey: Required value: must name a node label, such as topology.kubernetes.io/zone']],
    [
      'an empty nodeSelectorTerm',
      variant((b) => { delete b.spec.topologyKey; b.spec.nodeSelectorTerm = {}; }),
      ['spec.nodeSelectorTerm: Required value: must have at least one matchExpressions or matchFields requirement: an empty term matches no node'],
    ],
    [
      'a nodeSelectorTerm broken by the core rules',
      variant((b) => { delete b.spec.topologyKey; b.spec.nodeSelectorTerm = { matchExpressions: [{ key: ZONE, operator: 'In' }] }; }),
      ["spec.nodeSelectorTerm.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"],
    ],
    [
      'a workloadSpreadRef name that is not a DNS subdomain',
      variant((b) => { delete b.spec.topologyKey; b.spec.workloadSpreadRef = { name: 'Web_Spread' }; }),
      [
        `spec.workloadSpreadRef.name: Invalid value: "Web_Spread": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      ],
    ],
    [
      'a workloadSpreadRef without a name',
      variant((b) => { delete b.spec.topologyKey; b.spec.workloadSpreadRef = {}; }),
      ['spec.workloadSpreadRef.name: Required value: must name a WorkloadSpread in the namespace of the budget'],
    ],
    ['an unknown unhealthyPodEvictionPolicy', variant((b) => (b.spec.unhealthyPodEvictionPolicy = 'Never')), ['spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: "IfHealthyBudget", "AlwaysAllow"']],
    ['no spec', variant((b) => delete b.spec), ['spec: Required value: a DomainDisruptionBudget needs a spec with a selector and maxUnavailable or minAvailable']],
    [
      'a bad name',
      variant((b) => (b.metadata.name = 'App_DDB')),
      [
        `metadata.name: Invalid value: "App_DDB": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      ],
    ],
    ['structural: a selector that is a string stops there', variant((b) => { b.spec.selector = 'app=foo'; b.spec.minAvailable = 1; }), ['spec.selector: Invalid value: "string": spec.selector in body must be of type object: "string"']],
    ['structural: maxUnavailable of the wrong type', variant((b) => (b.spec.maxUnavailable = true)), ['spec.maxUnavailable: Invalid value: "boolean": spec.maxUnavailable in body must be of type integer,string: "boolean"']],
  ];
  for (const [name, b, want] of cases) test(name, () => assert.deepEqual(check(b), want));
});

describe('update', () => {
  test('the spec may change; the name may not', () => {
    const old = { ...story2(), metadata: { name: 'app-ddb', namespace: 'default', uid: 'u1', resourceVersion: '5' } };
    const changed = variant((b) => { b.metadata = { ...old.metadata }; b.spec.maxUnavailable = 2; });
    assert.deepEqual(validateDomainDisruptionBudgetUpdate(old, changed).map(formatFieldError), []);
    const renamed = variant((b) => { b.metadata = { ...old.metadata, name: 'other' }; });
    assert.ok(validateDomainDisruptionBudgetUpdate(old, renamed).some((e) => e.field === 'metadata.name'));
  });
  test('a new invalid spec is refused on update too', () => {
    assert.deepEqual(validateDomainDisruptionBudgetUpdate(story2(), variant((b) => (b.spec.minAvailable = 1))).map((e) => e.field), ['spec.minAvailable']);
  });
});

describe('never throws', () => {
  test('on anything at all', () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        const errs = validateDomainDisruptionBudget(value);
        assert.ok(Array.isArray(errs));
      }),
      { numRuns: 500 },
    );
  });
  test('on specs of random shapes', () => {
    const field = fc.oneof(fc.constant(undefined), fc.constant(null), fc.integer({ min: -3, max: 200 }), fc.string(), fc.constantFrom('10%', '101%', '0%'), fc.dictionary(fc.string(), fc.anything()), fc.array(fc.anything()));
    fc.assert(
      fc.property(fc.record({ selector: field, maxUnavailable: field, minAvailable: field, nodeSelectorTerm: field, topologyKey: field, workloadSpreadRef: field }), (spec) => {
        const errs = validateDomainDisruptionBudget({ metadata: { name: 'x' }, spec });
        assert.ok(Array.isArray(errs));
      }),
      { numRuns: 500 },
    );
  });
  test('a valid spec is accepted whatever int or percent it uses', () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 100 }).map((n) => `${n}%`)), fc.boolean(), (amount, useMax) => {
        const b = story2();
        delete b.spec.maxUnavailable;
        b.spec[useMax ? 'maxUnavailable' : 'minAvailable'] = amount;
        assert.deepEqual(check(b), []);
      }),
    );
  });
});
