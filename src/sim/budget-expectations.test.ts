/**
 * Budget records and the two budget checks of `expect:` (budgets,
 * refusedEvictions): parsing with field paths, one case per rule of the
 * evaluation, and the reports' tables. Pure.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeObject } from '../k8s/types.ts';
import { BUDGET_CHECK_READERS, evaluateBudgetCheck, type BudgetCheck } from './budget-expectations.ts';
import { budgetRecords, findBudget, type BudgetRecord } from '../core/budget-records.ts';
import { budgetTable, budgetsSection, evictionTable, evictionsHtml } from './budget-report.ts';
import type { EvictionRecord } from './drain.ts';
import { Problems } from './field-reader.ts';

const ddb = (name: string, status: unknown, extra: Record<string, unknown> = {}): KubeObject =>
  ({ apiVersion: 'policy.workloadspread.io/v1alpha1', kind: 'DomainDisruptionBudget', metadata: { name, namespace: 'default', generation: 1 }, spec: { maxUnavailable: 1, topologyKey: 'zone' }, status, ...extra }) as KubeObject;

const zoneStatus = {
  observedGeneration: 1,
  mode: 'topologyKey=zone',
  domains: [
    { name: 'a', expectedPods: 2, currentHealthy: 2, desiredHealthy: 1, disruptionsAllowed: 1 },
    { name: 'b', expectedPods: 2, currentHealthy: 1, desiredHealthy: 1, disruptionsAllowed: 0, disruptedPods: { 'web-2': '2026-01-01T00:00:05Z' } },
  ],
};

describe('budgetRecords', () => {
  test('a DomainDisruptionBudget keeps its domains, a PodDisruptionBudget is one domain "all"', () => {
    const pdb = { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'web-pdb', namespace: 'default', generation: 2 }, spec: { minAvailable: '50%' }, status: { observedGeneration: 1, expectedPods: 4, currentHealthy: 4, desiredHealthy: 2, disruptionsAllowed: 2 } } as KubeObject;
    const records = budgetRecords([ddb('app', zoneStatus)], [pdb]);
    assert.deepEqual(records.map((r) => [r.kind, r.name, r.mode, r.limit, r.observed]), [
      ['DomainDisruptionBudget', 'app', 'topologyKey=zone', 'maxUnavailable 1', true],
      ['PodDisruptionBudget', 'web-pdb', 'pdb', 'minAvailable 50%', false],
    ]);
    assert.deepEqual(records[0]?.domains[1], { name: 'b', expectedPods: 2, currentHealthy: 1, desiredHealthy: 1, disruptionsAllowed: 0, disruptedPods: ['web-2'] });
    assert.deepEqual(records[1]?.domains, [{ name: 'all', expectedPods: 4, currentHealthy: 4, desiredHealthy: 2, disruptionsAllowed: 2, disruptedPods: [] }]);
  });
  test('junk statuses give zeros and no domains, never a crash', () => {
    const records = budgetRecords([ddb('x', 'nope'), ddb('y', { domains: [null, { name: 3 }, { name: 'ok', expectedPods: 'many' }] })], [{ metadata: {} } as KubeObject]);
    assert.deepEqual(records.map((r) => r.domains.map((d) => [d.name, d.expectedPods])), [[], [], [['ok', 0]]]);
  });
  test('findBudget prefers a DomainDisruptionBudget over a PDB of the same name', () => {
    const both = budgetRecords([ddb('same', zoneStatus)], [{ kind: 'PodDisruptionBudget', metadata: { name: 'same', namespace: 'default' }, status: {} } as KubeObject]);
    assert.equal(findBudget(both, { namespace: 'default', name: 'same' })?.kind, 'DomainDisruptionBudget');
    assert.equal(findBudget(both, { namespace: 'other', name: 'same' }), undefined);
  });
});

function parse(key: 'budgets' | 'refusedEvictions', value: unknown): { check: BudgetCheck | undefined; paths: string[] } {
  const problems = new Problems();
  const check = BUDGET_CHECK_READERS[key](value, `expect.${key}`, problems);
  return { check, paths: problems.list.map((p) => p.path) };
}

describe('parsing', () => {
  test('budgets: per budget, per domain, the fields; null for "no such domain"', () => {
    const { check, paths } = parse('budgets', { app: { a: { disruptionsAllowed: 1, expectedPods: 2 }, c: null }, 'team/x': { all: { disruptedPods: 0 } } });
    assert.deepEqual(paths, []);
    assert.deepEqual(check, {
      check: 'budgets',
      budgets: [
        { key: 'app', namespace: 'default', name: 'app', domains: { a: { expectedPods: 2, disruptionsAllowed: 1 }, c: null } },
        { key: 'team/x', namespace: 'team', name: 'x', domains: { all: { disruptedPods: 0 } } },
      ],
    });
  });
  const bad: [string, 'budgets' | 'refusedEvictions', unknown, string[]][] = [
    ['unknown field', 'budgets', { app: { a: { allowed: 1 } } }, ['expect.budgets.app.a.allowed', 'expect.budgets.app.a']],
    ['negative count', 'budgets', { app: { a: { expectedPods: -1 } } }, ['expect.budgets.app.a.expectedPods']],
    ['label-like domain names are quoted in paths', 'budgets', { app: { '<none>': { currentHealthy: 'x' } } }, ['expect.budgets.app["<none>"].currentHealthy']],
    ['refusedEvictions needs a key', 'refusedEvictions', {}, ['expect.refusedEvictions']],
    ['refusedEvictions unknown key', 'refusedEvictions', { count: 1, pod: 'x' }, ['expect.refusedEvictions.pod']],
    ['refusedEvictions pods are names', 'refusedEvictions', { pods: [1] }, ['expect.refusedEvictions.pods[0]']],
    ['a negative count', 'refusedEvictions', -2, ['expect.refusedEvictions']],
  ];
  for (const [name, key, value, paths] of bad) test(name, () => assert.deepEqual(parse(key, value).paths, paths));
  test('refusedEvictions: a number is the count; names may be one string', () => {
    assert.deepEqual(parse('refusedEvictions', 0).check, { check: 'refusedEvictions', count: 0 });
    assert.deepEqual(parse('refusedEvictions', { budget: 'app', domain: ['b', 'c'], evicted: 2 }).check, { check: 'refusedEvictions', budget: ['app'], domain: ['b', 'c'], evicted: 2 });
  });
});

const records: BudgetRecord[] = budgetRecords([ddb('app', zoneStatus)], []);

const eviction = (pod: string, result: EvictionRecord['result'], refusals: number, by: string[] = [], domains: string[] = []): EvictionRecord => ({
  namespace: 'default',
  pod,
  node: 'n1',
  result,
  attempts: refusals + (result === 'evicted' ? 1 : 0),
  refusals,
  refusedBy: by,
  refusedIn: domains,
  ...(result === 'evicted' ? { evictedAt: '2026-01-01T00:00:10Z', goneAt: '2026-01-01T00:00:12Z' } : {}),
});

describe('evaluating budgets', () => {
  const run = (value: unknown) => {
    const { check } = parse('budgets', value);
    assert.ok(check !== undefined);
    return evaluateBudgetCheck(check, records, []);
  };
  test('each field of each domain is one result, named by its path', () => {
    assert.deepEqual(run({ app: { a: { disruptionsAllowed: 1, expectedPods: 2 }, b: { disruptedPods: 1, currentHealthy: 1 } } }).map((r) => [r.path, r.ok, r.actual]), [
      ['budgets.app.a.expectedPods', true, 2],
      ['budgets.app.a.disruptionsAllowed', true, 1],
      ['budgets.app.b.currentHealthy', true, 1],
      ['budgets.app.b.disruptedPods', true, 1],
    ]);
  });
  test('a wrong value fails with expected and actual', () => {
    const [r] = run({ app: { b: { disruptionsAllowed: 1 } } });
    assert.deepEqual([r?.ok, r?.expected, r?.actual], [false, 1, 0]);
  });
  test('a missing domain says which domains exist; null holds only for a missing domain', () => {
    const [missing] = run({ app: { c: { expectedPods: 0 } } });
    assert.deepEqual([missing?.ok, missing?.actual, missing?.message], [false, null, 'DomainDisruptionBudget app has domains a, b']);
    assert.deepEqual(run({ app: { c: null, a: null } }).map((r) => r.ok), [true, false]);
  });
  test('a missing budget is named', () => {
    assert.equal(run({ nope: { a: { expectedPods: 1 } } })[0]?.message, 'no budget default/nope');
  });
});

describe('evaluating refusedEvictions', () => {
  const evictions = [
    eviction('web-1', 'evicted', 0),
    eviction('web-2', 'evicted', 3, ['DomainDisruptionBudget/app'], ['a']),
    eviction('web-3', 'refused', 12, ['DomainDisruptionBudget/app', 'PodDisruptionBudget/web-pdb'], ['a']),
  ];
  const run = (value: unknown, list = evictions) => {
    const { check } = parse('refusedEvictions', value);
    assert.ok(check !== undefined);
    return evaluateBudgetCheck(check, [], list);
  };
  test('count and pods: pods refused at least once, even if evicted later', () => {
    assert.deepEqual(run({ count: 2, pods: ['web-3', 'web-2'] }).map((r) => [r.path, r.ok, r.actual]), [
      ['refusedEvictions.count', true, 2],
      ['refusedEvictions.pods', true, ['web-2', 'web-3']],
    ]);
  });
  test('budget by name, or by Kind/name', () => {
    assert.deepEqual(run({ budget: ['app', 'web-pdb'] }).map((r) => r.ok), [true]);
    assert.deepEqual(run({ budget: 'app' }).map((r) => [r.ok, r.actual]), [[false, ['app', 'web-pdb']]]);
    assert.deepEqual(run({ budget: ['DomainDisruptionBudget/app', 'PodDisruptionBudget/web-pdb'] }).map((r) => r.ok), [true]);
  });
  test('domain and evicted', () => {
    assert.deepEqual(run({ domain: 'a', evicted: 2 }).map((r) => [r.path, r.ok, r.actual]), [
      ['refusedEvictions.domain', true, 'a'],
      ['refusedEvictions.evicted', true, 2],
    ]);
  });
  test('no refusals: count 0 holds, anything else explains', () => {
    assert.equal(run(0, [eviction('web-1', 'evicted', 0)])[0]?.ok, true);
    assert.equal(run({ count: 1 }, [eviction('web-1', 'evicted', 0)])[0]?.message, 'no eviction was refused (1 attempted)');
  });
});

describe('reports', () => {
  test('the budgets table lists every domain with its numbers and awaited pods', () => {
    assert.equal(
      budgetTable(records),
      [
        '  budgets',
        '    BUDGET                                        DOMAIN  EXPECTED  HEALTHY  DESIRED  ALLOWED  AWAITING DELETION',
        '    ddb/app (maxUnavailable 1, topologyKey=zone)  a       2         2        1        1        -',
        '                                                  b       2         1        1        0        web-2',
        '',
      ].join('\n'),
    );
    assert.equal(budgetTable([]), '');
  });
  test('the evictions table says who refused, and when pods went', () => {
    const text = evictionTable([eviction('web-2', 'evicted', 3, ['DomainDisruptionBudget/app'], ['a']), eviction('web-3', 'refused', 12, ['DomainDisruptionBudget/app'], ['a'])]);
    assert.match(text, /web-2 +n1 +evicted after 3 refusal\(s\) +DomainDisruptionBudget\/app \(a\) +- +00:00:10 +00:00:12/);
    assert.match(text, /web-3 +n1 +refused 12× +DomainDisruptionBudget\/app \(a\)/);
  });
  test('HTML escapes what comes from the cluster', () => {
    const html = evictionsHtml([eviction('<b>x</b>', 'refused', 1, ['DomainDisruptionBudget/<i>'])]);
    assert.ok(!html.includes('<b>x</b>') && html.includes('&lt;b&gt;x&lt;/b&gt;'));
    const section = budgetsSection([{ label: 'setup', budgets: records }, { label: '1', budgets: [] }]);
    assert.match(section, /<td>ddb\/app<\/td><td>b<\/td><td class="num"[^>]*><span class="bad">0<\/span><\/td><td><\/td>/);
    assert.equal(budgetsSection([{ label: '1', budgets: [] }]), '');
  });
});
