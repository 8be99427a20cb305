/**
 * The alerts of docs/operations.md are the rules the chart's PrometheusRule carries
 * (install-alerts.ts; chart.test.ts checks the chart against these): same names, expressions,
 * durations and severities, in the same order; and every series an expression names is one the
 * manager exposes (docs/operations.md's series table) or kube-state-metrics'.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { managerAlerts } from './install-alerts.ts';
import { INSTALL_NAMES } from './install-values.ts';

const doc = readFileSync('docs/operations.md', 'utf8');

/** The rows of the table whose header starts with `| alert |`, cells unescaped (`\|` is a pipe in a cell). */
function alertRows(): string[][] {
  const table = /\n\| alert \| expression \(PromQL\) \| for \| severity \| what it means \|\n\|[-|]+\|\n((?:\|.*\|\n)+)/.exec(doc)?.[1];
  assert.ok(table !== undefined, 'docs/operations.md has no alert table');
  return table
    .trim()
    .split('\n')
    .map((line) => line.slice(2, -2).split(/ \| /).map((cell) => cell.replaceAll('\\|', '|')));
}

const unquote = (cell: string | undefined) => (cell ?? '').replace(/^`(.*)`$/, '$1');

describe('the documented alerts are the PrometheusRule', () => {
  const rules = managerAlerts({ namespace: 'workloadspread-system', deployment: INSTALL_NAMES.manager, lease: INSTALL_NAMES.lease, inCluster: true });

  test('same alerts, expressions, durations and severities, in order', () => {
    const rows = alertRows();
    assert.deepEqual(
      rows.map((r) => [unquote(r[0]), unquote(r[1]), r[2], r[3]]),
      rules.map((r) => [r.alert, r.expr, r.for ?? '–', r.labels.severity]),
    );
  });

  test('every series an alert reads is one the manager exposes (or kube-state-metrics\')', () => {
    const exposed = new Set([...doc.matchAll(/^\| `([a-z_]+)`(?:, `([a-z_]+)`)? \| (?:counter|gauge|histogram)/gm)].flatMap((m) => [m[1], m[2]]).filter((n): n is string => n !== undefined));
    assert.ok(exposed.size > 20, `read ${exposed.size} series from the table`);
    for (const rule of rules) {
      const names = [...rule.expr.replace(/"[^"]*"/g, '').matchAll(/\b([a-z]+(?:_[a-z0-9]+)+)\b/g)].map((m) => m[1]);
      assert.ok(names.length > 0, rule.expr);
      for (const name of names) {
        if (name === undefined || name === 'histogram_quantile') continue;
        const series = name.replace(/_(bucket|count|sum)$/, '');
        assert.ok(exposed.has(series) || series.startsWith('kube_'), `${rule.alert}: ${series} is not in the series table`);
      }
    }
  });
});
