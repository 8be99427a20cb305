/**
 * `workloadspread validate` on DomainDisruptionBudget manifests (issue 7):
 * the bundled example is valid, each kind of bad input is reported with its
 * field path and exit 1, WorkloadSpreads and budgets in one file are reported
 * in file order, and a file with only other kinds still says what it looked for.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { captureIo } from '../testing/cli-io.ts';
import { main } from './main.ts';

async function run(args: string[], files: Record<string, string> = {}) {
  const io = captureIo(files);
  const code = await main(args, io);
  return { code, out: io.stdout, err: io.stderr };
}

const budget = (spec: string, name = 'b'): string => `apiVersion: policy.workloadspread.io/v1alpha1
kind: DomainDisruptionBudget
metadata: {name: ${name}}
spec:
${spec}`;

describe('workloadspread validate: DomainDisruptionBudgets', () => {
  test('the bundled example is valid', async () => {
    const r = await run(['validate', '-f', 'examples/disruption-budget.yaml']);
    assert.equal(r.code, 0, r.out + r.err);
    assert.equal(r.out, 'examples/disruption-budget.yaml: DomainDisruptionBudget default/web-per-zone: valid\n');
  });

  const bad: [string, string, RegExp][] = [
    ['both budgets', '  selector: {matchLabels: {app: web}}\n  maxUnavailable: 1\n  minAvailable: 1\n', /spec\.minAvailable|spec\.maxUnavailable/],
    ['neither budget', '  selector: {matchLabels: {app: web}}\n', /spec\.(maxUnavailable|minAvailable)/],
    ['two domain modes', '  selector: {matchLabels: {app: web}}\n  maxUnavailable: 1\n  topologyKey: zone\n  workloadSpreadRef: {name: ws}\n', /spec\.(topologyKey|workloadSpreadRef)/],
    ['empty selector', '  selector: {}\n  maxUnavailable: 1\n', /spec\.selector/],
    ['percent over 100%', '  selector: {matchLabels: {app: web}}\n  maxUnavailable: 150%\n', /spec\.maxUnavailable/],
    ['invalid label key', '  selector: {matchLabels: {app: web}}\n  maxUnavailable: 1\n  topologyKey: "bad key!"\n', /spec\.topologyKey/],
  ];
  for (const [name, spec, path] of bad) {
    test(`${name}: exit 1 with the field named`, async () => {
      const r = await run(['validate', '-f', 'b.yaml'], { 'b.yaml': budget(spec) });
      assert.equal(r.code, 1, r.out);
      assert.match(r.out, /^b\.yaml: DomainDisruptionBudget default\/b: invalid\n/);
      assert.match(r.out, path);
    });
  }

  test('a workloadSpreadRef to a WorkloadSpread that is nowhere is valid (the status says so)', async () => {
    const r = await run(['validate', '-f', 'b.yaml'], { 'b.yaml': budget('  selector: {matchLabels: {app: web}}\n  maxUnavailable: 1\n  workloadSpreadRef: {name: missing}\n') });
    assert.equal(r.code, 0, r.out);
  });

  test('WorkloadSpreads and budgets are reported in file order; one invalid budget fails the run', async () => {
    const ws = readFileSync('examples/elastic.yaml', 'utf8');
    const text = `${budget('  selector: {matchLabels: {app: web}}\n  minAvailable: 1\n', 'first')}\n---\n${ws}\n---\n${budget('  selector: {matchLabels: {app: web}}\n', 'last')}`;
    const r = await run(['validate', '-f', 'm.yaml'], { 'm.yaml': text });
    assert.equal(r.code, 1);
    const heads = r.out.split('\n').filter((l) => l.startsWith('m.yaml'));
    assert.deepEqual(heads, ['m.yaml: DomainDisruptionBudget default/first: valid', 'm.yaml: WorkloadSpread default/web-spread: valid', 'm.yaml: DomainDisruptionBudget default/last: invalid']);
  });

  test('a budget of another group is not ours', async () => {
    const r = await run(['validate', '-f', 'o.yaml'], { 'o.yaml': budget('  selector: {}\n').replace('policy.workloadspread.io', 'example.com') });
    assert.equal(r.code, 1);
    assert.match(r.err, /no WorkloadSpread \(apps\.kruise\.io\) or DomainDisruptionBudget \(policy\.workloadspread\.io\) found in o\.yaml/);
  });
});
