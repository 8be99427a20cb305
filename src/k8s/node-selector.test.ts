import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  nodeSelectorMatches,
  nodeSelectorRequirementMatchesLabels,
  nodeSelectorTermMatches,
  podMatchesNodeSelectorAndAffinity,
  preferredSchedulingTermsScore,
} from './node-selector.ts';
import type { Node, NodeSelectorRequirement, NodeSelectorTerm, Pod } from './types.ts';

const node = (name: string, labels: Record<string, string> = {}): Node => ({ metadata: { name, labels } });
const n1 = node('n1', { zone: 'a', cores: '8', arch: 'amd64' });

describe('nodeSelectorRequirementMatchesLabels', () => {
  const labels = { zone: 'a', cores: '8', big: '9223372036854775807', word: 'eight' };
  const cases: [string, NodeSelectorRequirement, boolean][] = [
    ['In matches a listed value', { key: 'zone', operator: 'In', values: ['a', 'b'] }, true],
    ['In does not match another value', { key: 'zone', operator: 'In', values: ['b'] }, false],
    ['In does not match an absent label', { key: 'rack', operator: 'In', values: ['a'] }, false],
    ['In without values is invalid', { key: 'zone', operator: 'In' }, false],
    ['In with an empty list is invalid', { key: 'zone', operator: 'In', values: [] }, false],
    ['NotIn matches when the label is absent', { key: 'rack', operator: 'NotIn', values: ['r1'] }, true],
    ['NotIn matches another value', { key: 'zone', operator: 'NotIn', values: ['b'] }, true],
    ['NotIn rejects a listed value', { key: 'zone', operator: 'NotIn', values: ['a'] }, false],
    ['Exists', { key: 'zone', operator: 'Exists' }, true],
    ['Exists on an absent label', { key: 'rack', operator: 'Exists' }, false],
    ['Exists with values is invalid', { key: 'zone', operator: 'Exists', values: ['a'] }, false],
    ['DoesNotExist on an absent label', { key: 'rack', operator: 'DoesNotExist' }, true],
    ['DoesNotExist on a present label', { key: 'zone', operator: 'DoesNotExist' }, false],
    ['Gt', { key: 'cores', operator: 'Gt', values: ['4'] }, true],
    ['Gt is strict', { key: 'cores', operator: 'Gt', values: ['8'] }, false],
    ['Lt', { key: 'cores', operator: 'Lt', values: ['16'] }, true],
    ['Lt is strict', { key: 'cores', operator: 'Lt', values: ['8'] }, false],
    ['Gt compares int64 exactly', { key: 'big', operator: 'Gt', values: ['9223372036854775806'] }, true],
    ['Gt with a non-integer label does not match', { key: 'word', operator: 'Gt', values: ['1'] }, false],
    ['Gt with a non-integer value is invalid', { key: 'cores', operator: 'Gt', values: ['x'] }, false],
    ['Gt with two values is invalid', { key: 'cores', operator: 'Gt', values: ['1', '2'] }, false],
    ['Gt on an absent label', { key: 'rack', operator: 'Gt', values: ['1'] }, false],
    ['Gt with a negative value is an invalid label value upstream', { key: 'cores', operator: 'Gt', values: ['-1'] }, false],
    ['unknown operator', { key: 'zone', operator: 'Equals', values: ['a'] }, false],
    ['invalid key', { key: 'bad key', operator: 'Exists' }, false],
  ];
  for (const [name, req, want] of cases) {
    test(name, () => assert.equal(nodeSelectorRequirementMatchesLabels(req, labels), want));
  }
  test('a requirement changed in place is judged as it is now, not as it was first parsed', () => {
    const req: NodeSelectorRequirement = { key: 'zone', operator: 'In', values: ['a'] };
    assert.equal(nodeSelectorRequirementMatchesLabels(req, labels), true);
    req.values![0] = 'b';
    assert.equal(nodeSelectorRequirementMatchesLabels(req, labels), false);
    req.values = ['b', 'a'];
    assert.equal(nodeSelectorRequirementMatchesLabels(req, labels), true);
    req.operator = 'NotIn';
    assert.equal(nodeSelectorRequirementMatchesLabels(req, labels), false);
    req.key = 'rack';
    assert.equal(nodeSelectorRequirementMatchesLabels(req, labels), true);
    req.operator = 'Exists';
    delete req.values;
    assert.equal(nodeSelectorRequirementMatchesLabels(req, labels), false);
  });
});

describe('nodeSelectorTermMatches', () => {
  const cases: [string, NodeSelectorTerm, Node, boolean][] = [
    ['an empty term matches nothing', {}, n1, false],
    ['empty lists match nothing', { matchExpressions: [], matchFields: [] }, n1, false],
    ['expressions are ANDed', { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }, { key: 'arch', operator: 'In', values: ['arm64'] }] }, n1, false],
    ['all expressions hold', { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }, { key: 'cores', operator: 'Gt', values: ['2'] }] }, n1, true],
    ['one invalid requirement fails the term', { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }, { key: 'cores', operator: 'Gt', values: [] }] }, n1, false],
    ['matchFields In on metadata.name', { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }, n1, true],
    ['matchFields In on another name', { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n2'] }] }, n1, false],
    ['matchFields NotIn', { matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n2'] }] }, n1, true],
    ['matchFields needs exactly one value', { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1', 'n2'] }] }, n1, false],
    ['matchFields supports only In/NotIn', { matchFields: [{ key: 'metadata.name', operator: 'Exists' }] }, n1, false],
    ['matchFields on an unsupported field matches nothing', { matchFields: [{ key: 'metadata.uid', operator: 'NotIn', values: ['x'] }] }, n1, false],
    ['fields AND expressions', { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }], matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n2'] }] }, n1, false],
    ['matchFields are ignored for a node without a name (upstream)', { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n2'] }] }, node('', { zone: 'a' }), true],
    ['labels missing entirely', { matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] }, { metadata: { name: 'x' } }, true],
  ];
  for (const [name, term, nd, want] of cases) {
    test(name, () => assert.equal(nodeSelectorTermMatches(term, nd), want));
  }
});

describe('nodeSelectorMatches', () => {
  test('terms are ORed', () => {
    const sel = {
      nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] }, { matchExpressions: [{ key: 'arch', operator: 'In', values: ['amd64'] }] }],
    };
    assert.equal(nodeSelectorMatches(sel, n1), true);
    assert.equal(nodeSelectorMatches(sel, node('n2', { zone: 'c' })), false);
  });
  test('an invalid term does not stop another from matching', () => {
    const sel = { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'Bogus' }] }, { matchExpressions: [{ key: 'zone', operator: 'Exists' }] }] };
    assert.equal(nodeSelectorMatches(sel, n1), true);
  });
  test('no terms match nothing', () => {
    assert.equal(nodeSelectorMatches({ nodeSelectorTerms: [] }, n1), false);
    assert.equal(nodeSelectorMatches({} as never, n1), false);
  });
});

describe('preferredSchedulingTermsScore', () => {
  test('sums the weights of matching terms; zero weights and empty terms are skipped', () => {
    const terms = [
      { weight: 10, preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] } },
      { weight: 5, preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] } },
      { weight: 3, preference: { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] } },
      { weight: 0, preference: { matchExpressions: [{ key: 'zone', operator: 'Exists' }] } },
      { weight: 7, preference: {} },
    ];
    assert.equal(preferredSchedulingTermsScore(terms, n1), 13);
    assert.equal(preferredSchedulingTermsScore(undefined, n1), 0);
  });
});

describe('podMatchesNodeSelectorAndAffinity', () => {
  const pod = (spec: Partial<Pod['spec']>): Pod => ({ metadata: { name: 'p' }, spec: { containers: [], ...spec } });
  const cases: [string, Pod, boolean][] = [
    ['no constraints', pod({}), true],
    ['nodeSelector satisfied', pod({ nodeSelector: { zone: 'a', arch: 'amd64' } }), true],
    ['nodeSelector value differs', pod({ nodeSelector: { zone: 'b' } }), false],
    ['nodeSelector label missing', pod({ nodeSelector: { rack: '' } }), false],
    [
      'required affinity satisfied',
      pod({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }] } } } }),
      true,
    ],
    [
      'required affinity not satisfied',
      pod({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] }] } } } }),
      false,
    ],
    ['required affinity with no terms matches nothing', pod({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } } } }), false],
    [
      'both must hold',
      pod({
        nodeSelector: { zone: 'b' },
        affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'Exists' }] }] } } },
      }),
      false,
    ],
    [
      'preferred terms do not filter',
      pod({ affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] } }] } } }),
      true,
    ],
  ];
  for (const [name, p, want] of cases) {
    test(name, () => assert.equal(podMatchesNodeSelectorAndAffinity(p, n1), want));
  }
});
