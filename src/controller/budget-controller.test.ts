/**
 * The budget controller's event mapping (which budget keys a pod, node or
 * WorkloadSpread event enqueues), on budgets in a store; syncs themselves
 * run end to end in src/manager/budgets.e2e.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { VirtualClock } from '../clock/virtual-clock.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { budget, pod, STORY_1, STORY_2, STORY_3, ZONE } from '../testing/budget-fixtures.ts';
import type { DomainDisruptionBudget } from '../api/disruption-budget.ts';
import type { BudgetCache } from '../kube/budget-cache.ts';
import type { BudgetStatusWriter } from '../kube/budget-status-writer.ts';
import type { ManagerCaches } from '../kube/caches.ts';
import { BudgetController } from './budget-controller.ts';

function controller(budgets: DomainDisruptionBudget[]): BudgetController {
  const store = { list: (ns?: string) => budgets.filter((b) => ns === undefined || b.metadata.namespace === ns) };
  // Only the budget store is read by the mapping; the rest is never touched here.
  return new BudgetController({
    clock: new VirtualClock(),
    budgets: { store } as unknown as BudgetCache,
    caches: {} as ManagerCaches,
    writer: {} as BudgetStatusWriter,
  });
}

const other = (b: DomainDisruptionBudget) => ({ ...b, metadata: { ...b.metadata, namespace: 'other' } });

describe('BudgetController event mapping', () => {
  const budgets = [
    budget(STORY_1, 'story1'),
    budget(STORY_2, 'story2'),
    budget(STORY_3, 'story3', {}),
    budget({ maxUnavailable: 1, workloadSpreadRef: { name: 'spread' } }, 'by-subset'),
    budget({ maxUnavailable: 1, topologyKey: ZONE, selector: { matchLabels: { app: 'db' } } }, 'db'),
    other(budget(STORY_2, 'elsewhere')),
  ];
  const c = controller(budgets);

  test('a pod: the budgets of its namespace whose selector matches it', () => {
    assert.deepEqual(c.budgetsForPod(pod('web-1', { node: 'a1' })), ['default/story1', 'default/story2', 'default/story3', 'default/by-subset']);
    assert.deepEqual(c.budgetsForPod(pod('db-1', { labels: { app: 'db' } })), ['default/db']);
    assert.deepEqual(c.budgetsForPod(pod('x', { labels: { app: 'none' } })), []);
    assert.deepEqual(c.budgetsForPod(pod('y', { namespace: 'other' })), ['other/elsewhere']);
  });

  test('a node: every budget whose domains depend on node labels (topologyKey, nodeSelectorTerm)', () => {
    assert.deepEqual(c.budgetsByNode(), ['default/story1', 'default/story2', 'default/db', 'other/elsewhere']);
  });

  test('a WorkloadSpread: the budgets of its namespace referring to it', () => {
    const ws = (namespace: string, name: string) => ({ metadata: { namespace, name } }) as WorkloadSpread;
    assert.deepEqual(c.budgetsForWorkloadSpread(ws('default', 'spread')), ['default/by-subset']);
    assert.deepEqual(c.budgetsForWorkloadSpread(ws('default', 'another')), []);
    assert.deepEqual(c.budgetsForWorkloadSpread(ws('other', 'spread')), []);
  });
});
