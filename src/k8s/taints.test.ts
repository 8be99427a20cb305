import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { findUntoleratedTaint, isSchedulingTaint, tolerationToleratesTaint, tolerationsTolerateTaint } from './taints.ts';
import type { Taint, Toleration } from './types.ts';

const taint: Taint = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };

describe('tolerationToleratesTaint', () => {
  const cases: [string, Toleration, Taint, boolean][] = [
    ['Equal with same key/value/effect', { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }, taint, true],
    ['operator defaults to Equal', { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }, taint, true],
    ['Equal with a different value', { key: 'dedicated', operator: 'Equal', value: 'cpu', effect: 'NoSchedule' }, taint, false],
    ['Equal with an empty value against a valued taint', { key: 'dedicated', operator: 'Equal', effect: 'NoSchedule' }, taint, false],
    ['Equal with empty value against a value-less taint', { key: 'k', operator: 'Equal' }, { key: 'k', effect: 'NoExecute' }, true],
    ['Exists ignores the value', { key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }, taint, true],
    ['empty effect matches every effect', { key: 'dedicated', operator: 'Exists' }, { ...taint, effect: 'NoExecute' }, true],
    ['a different effect does not match', { key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }, taint, false],
    ['empty key with Exists matches every key', { operator: 'Exists' }, taint, true],
    ['empty key with Exists and an effect matches only that effect', { operator: 'Exists', effect: 'NoExecute' }, taint, false],
    ['a different key does not match', { key: 'other', operator: 'Exists' }, taint, false],
    ['an unknown operator tolerates nothing', { key: 'dedicated', operator: 'Gt', value: 'gpu' }, taint, false],
    ['PreferNoSchedule taint with matching toleration', { key: 'k', operator: 'Exists', effect: 'PreferNoSchedule' }, { key: 'k', effect: 'PreferNoSchedule' }, true],
  ];
  for (const [name, t, tt, want] of cases) {
    test(name, () => assert.equal(tolerationToleratesTaint(t, tt), want));
  }
});

describe('tolerationsTolerateTaint and findUntoleratedTaint', () => {
  const taints: Taint[] = [
    { key: 'soft', effect: 'PreferNoSchedule' },
    { key: 'a', value: '1', effect: 'NoSchedule' },
    { key: 'b', effect: 'NoExecute' },
  ];

  test('any one toleration suffices', () => {
    assert.equal(tolerationsTolerateTaint([{ key: 'x', operator: 'Exists' }, { key: 'b', operator: 'Exists' }], { key: 'b', effect: 'NoExecute' }), true);
    assert.equal(tolerationsTolerateTaint(undefined, { key: 'b', effect: 'NoExecute' }), false);
    assert.equal(tolerationsTolerateTaint([], { key: 'b', effect: 'NoExecute' }), false);
  });

  test('returns the first untolerated taint in node order', () => {
    assert.deepEqual(findUntoleratedTaint(taints, []), taints[0]);
    assert.deepEqual(findUntoleratedTaint(taints, [], isSchedulingTaint), taints[1]);
    assert.deepEqual(findUntoleratedTaint(taints, [{ key: 'a', value: '1' }], isSchedulingTaint), taints[2]);
  });

  test('returns undefined when every (filtered) taint is tolerated', () => {
    assert.equal(findUntoleratedTaint(taints, [{ operator: 'Exists' }]), undefined);
    assert.equal(findUntoleratedTaint(taints, [{ key: 'a', operator: 'Exists' }, { key: 'b', operator: 'Exists' }], isSchedulingTaint), undefined);
    assert.equal(findUntoleratedTaint(undefined, undefined), undefined);
  });
});
