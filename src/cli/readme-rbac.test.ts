/**
 * README.md's RBAC table is what the install grants: each row (but the one
 * for custom workloads, which depends on `rbac.customWorkloads`) is a rule of
 * install-rbac.ts with the default install values, and each such rule has its
 * row — same role, API group, resources, resourceNames or not, and verbs.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { managerClusterRules, managerNamespaceRules, type PolicyRule } from './install-rbac.ts';
import { rbacOptions } from './install-manifests.ts';
import { defaultInstallValues } from './install-values.ts';

const README = new URL('../../README.md', import.meta.url).pathname;

/** `role|group|resources|named|verbs`, one key per rule. */
function ruleKey(role: string, rule: PolicyRule): string {
  return [role, rule.apiGroups.join(','), [...rule.resources].sort().join(','), rule.resourceNames === undefined ? 'any' : 'named', [...rule.verbs].sort().join(',')].join('|');
}

function tableRows(): string[][] {
  const text = readFileSync(README, 'utf8');
  const at = text.indexOf('<!-- rbac-table -->');
  assert.ok(at >= 0, 'README.md has no <!-- rbac-table --> marker');
  const lines = text.slice(at).split('\n').slice(1);
  const rows: string[][] = [];
  for (const line of lines.slice(2)) {
    if (!line.startsWith('|')) break;
    rows.push(line.split('|').slice(1, -1).map((c) => c.trim()));
  }
  return rows;
}

function rowKey(row: string[]): string | undefined {
  const [role = '', group = '', resources = '', verbs = ''] = row;
  if (group.startsWith('your ')) return undefined; // the custom workloads' row
  const apiGroup = group === 'core' ? '' : /^`([^`]+)`$/.exec(group)?.[1];
  assert.ok(apiGroup !== undefined, `API group cell ${JSON.stringify(group)}`);
  const names = [...resources.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string).sort();
  const named = /\(.*by name\)/.test(resources) ? 'named' : 'any';
  const verbList = verbs.split(',').map((v) => v.trim()).sort();
  return [role, apiGroup, names.join(','), named, verbList.join(',')].join('|');
}

describe('README RBAC table', () => {
  test('matches the rules the install grants (default values)', () => {
    const options = rbacOptions(defaultInstallValues());
    const granted = [...managerClusterRules(options).map((r) => ruleKey('ClusterRole', r)), ...managerNamespaceRules(options).map((r) => ruleKey('Role', r))].sort();
    const shown = tableRows().flatMap((row) => {
      const key = rowKey(row);
      return key === undefined ? [] : [key];
    }).sort();
    assert.deepEqual(shown, granted);
  });
});
