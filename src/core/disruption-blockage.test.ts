import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { computeBudgetStatus } from './disruption-budget.ts';
import { DEFAULT_BLOCKED_THRESHOLD_MS, domainBlockages } from './disruption-blockage.ts';
import { budget, node, nodeMap, pod, STORY_1, STORY_2, T0 } from '../testing/budget-fixtures.ts';
import type { DomainDisruptionBudgetStatus } from '../api/disruption-budget.ts';

const MIN = 60_000;
const nodes = nodeMap([node('a1', 'a'), node('a2', 'a'), node('b1', 'b'), node('bar1', 'bar')]);

function status(spec: Parameters<typeof budget>[0], pods: Parameters<typeof computeBudgetStatus>[1], at = T0): DomainDisruptionBudgetStatus {
  return computeBudgetStatus(budget(spec), pods, nodes, undefined, at).status;
}

describe('domainBlockages (D14 events)', () => {
  test('story 2: a zone whose unready pod uses up its one disruption is blocked; due after the threshold; the other zone is not', () => {
    const s = status(STORY_2, [pod('a-1', { node: 'a1' }), pod('a-2', { node: 'a2', ready: false }), pod('b-1', { node: 'b1' }), pod('b-2', { node: 'b1' })]);
    const early = domainBlockages(s, T0 + 4 * MIN);
    assert.deepEqual(early.blocked.map((b) => [b.domain, b.due, b.since, b.expectedPods, b.currentHealthy, b.desiredHealthy]), [['a', false, T0, 2, 1, 1]]);
    assert.equal(early.nextDueInMs, 6 * MIN);
    const late = domainBlockages(s, T0 + DEFAULT_BLOCKED_THRESHOLD_MS);
    assert.deepEqual(late.blocked.map((b) => [b.domain, b.due]), [['a', true]]);
    assert.equal(late.nextDueInMs, undefined);
  });

  test('a custom threshold', () => {
    const s = status(STORY_2, [pod('a-1', { node: 'a1', ready: false })]);
    assert.equal(domainBlockages(s, T0 + 2 * MIN, 2 * MIN).blocked[0]?.due, true);
    assert.equal(domainBlockages(s, T0 + 2 * MIN - 1, 2 * MIN).blocked[0]?.due, false);
  });

  test('blocked by construction (maxUnavailable 0, story 1) is not news', () => {
    const s = status(STORY_1, [pod('a-1', { node: 'a1' }), pod('bar-1', { node: 'bar1' })]);
    assert.equal(s.domains?.[0]?.disruptionsAllowed, 0);
    assert.deepEqual(domainBlockages(s, T0 + 60 * MIN).blocked, []);
  });

  test('a domain with no pods, or allowing disruptions, is not blocked', () => {
    assert.deepEqual(domainBlockages(status(STORY_2, []), T0 + 60 * MIN).blocked, []);
    assert.deepEqual(domainBlockages(status(STORY_2, [pod('a-1', { node: 'a1' })]), T0 + 60 * MIN).blocked, []);
  });

  test('the blockage starts when the DisruptionAllowed condition turned False (kept across recomputations)', () => {
    const first = budget(STORY_2);
    first.status = computeBudgetStatus(first, [pod('a-1', { node: 'a1' })], nodes, undefined, T0).status;
    const later = computeBudgetStatus(first, [pod('a-1', { node: 'a1', ready: false })], nodes, undefined, T0 + 3 * MIN).status;
    assert.equal(domainBlockages(later, T0 + 5 * MIN).blocked[0]?.since, T0 + 3 * MIN);
  });

  test('malformed statuses never throw', () => {
    for (const s of [undefined, {}, { domains: null }, { domains: [null, 1, { name: 3 }, { name: 'x', expectedPods: 'two' }] }] as unknown[]) {
      assert.deepEqual(domainBlockages(s as DomainDisruptionBudgetStatus, T0).blocked, []);
    }
  });
});
