import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { main } from './main.ts';
import { captureIo } from '../testing/cli-io.ts';

const EXAMPLES = ['elastic', 'zone-ratio', 'adaptive', 'per-arch', 'statefulset', 'min-replicas', 'rebalance'];

const INVALID = `
apiVersion: apps.kruise.io/v1alpha1
kind: WorkloadSpread
metadata: {name: bad}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  subsets:
    - {name: a, maxReplicas: 40%}
    - {name: b, maxReplicas: 70%}
`;

async function run(args: string[], files: Record<string, string> = {}) {
  const io = captureIo(files);
  const code = await main(args, io);
  return { code, out: io.stdout, err: io.stderr };
}

describe('workloadspread validate', () => {
  test('every bundled example is valid', async () => {
    const r = await run(['validate', '-f', ...EXAMPLES.map((e) => `examples/${e}.yaml`)]);
    assert.equal(r.code, 0, r.out + r.err);
    assert.equal(r.out.trim().split('\n').length, EXAMPLES.length);
    assert.match(r.out, /examples\/elastic.yaml: WorkloadSpread default\/web-spread: valid/);
  });

  test('an invalid manifest exits 1 and prints each error with its field path', async () => {
    const r = await run(['validate', '-f', 'bad.yaml'], { 'bad.yaml': INVALID });
    assert.equal(r.code, 1);
    assert.match(r.out, /bad.yaml: WorkloadSpread default\/bad: invalid/);
    assert.match(r.out, /spec\.subsets\[1\]\.maxReplicas: Invalid value: "70%": the sum of all subsets' maxReplicas exceeds 100%/);
  });

  test('the rebalancing annotations (D18): a bad value names the annotation and the value', async () => {
    const text = readFileSync('examples/rebalance.yaml', 'utf8').replace('workloadspread.io/rebalance: "true"', 'workloadspread.io/rebalance: "yes"').replace('# workloadspread.io/rebalance-max-in-flight: "1"', 'workloadspread.io/rebalance-max-in-flight: "0"');
    const r = await run(['validate', '-f', 'r.yaml'], { 'r.yaml': text });
    assert.equal(r.code, 1);
    assert.match(r.out, /metadata\.annotations\[workloadspread\.io\/rebalance\]: Invalid value: "yes": must be "true" or "false"/);
    assert.match(r.out, /metadata\.annotations\[workloadspread\.io\/rebalance-max-in-flight\]: Invalid value: "0": must be an integer from 1 to 100/);
  });

  test('subset patches are checked against a workload found in the same files (V15)', async () => {
    const text = `${readFileSync('examples/per-arch.yaml', 'utf8')}`.replace('name: main\n              resources:\n                limits: {cpu: 500m', 'name: main\n              resources:\n                limits: {cpu: lots');
    const r = await run(['validate', '-f', 'p.yaml'], { 'p.yaml': text });
    assert.equal(r.code, 1);
    assert.match(r.out, /spec\.subsets\[0\]\.patch/);
  });

  test('two WorkloadSpreads for one workload conflict (V26)', async () => {
    const one = readFileSync('examples/elastic.yaml', 'utf8');
    const two = one.replace('name: web-spread', 'name: web-spread-2');
    const r = await run(['validate', '-f', 'a.yaml', 'b.yaml'], { 'a.yaml': one, 'b.yaml': two });
    assert.equal(r.code, 1);
    assert.match(r.out, /in conflict with other WorkloadSpread/);
  });

  test('YAML 1.1 like kubectl: `on` is a boolean, so a subset named on is a type error', async () => {
    const text = INVALID.replace('{name: a, maxReplicas: 40%}', '{name: on, maxReplicas: 40%}');
    const r = await run(['validate', '-f', 'y.yaml'], { 'y.yaml': text });
    assert.equal(r.code, 1);
    assert.match(r.out, /spec\.subsets\[0\]\.name/);
  });

  test('bad input: one line, the right exit code, no stack trace', async () => {
    const missing = await run(['validate', '-f', 'does-not-exist.yaml']);
    assert.equal(missing.code, 2);
    assert.equal(missing.err, 'error: cannot read does-not-exist.yaml: no such file\n');

    const notYaml = await run(['validate', '-f', 'x.yaml'], { 'x.yaml': 'a: [1,\n' });
    assert.equal(notYaml.code, 1);
    assert.match(notYaml.err, /^error: x\.yaml: document 1 \(line \d+\): not valid YAML: /);
    assert.equal(notYaml.err.trim().split('\n').length, 1);

    const none = await run(['validate', '-f', 'd.yaml'], { 'd.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n' });
    assert.equal(none.code, 1);
    assert.equal(none.err, 'error: no WorkloadSpread (apps.kruise.io) or DomainDisruptionBudget (policy.workloadspread.io) found in d.yaml\n');

    const noFlag = await run(['validate']);
    assert.equal(noFlag.code, 2);
    assert.match(noFlag.err, /required option '-f, --filename <file...>' not specified/);
  });
});

describe('workloadspread plan', () => {
  test('JSON output has exactly the documented shape', async () => {
    const r = await run(['plan', '-f', 'examples/elastic.yaml', '--replicas', '50,150,80', '-o', 'json']);
    assert.equal(r.code, 0, r.err);
    const parsed = JSON.parse(r.out) as unknown;
    assert.deepEqual(parsed, {
      steps: [
        { replicas: 50, subsets: { 'subset-normal': { limit: 100, pods: 50, costs: [200] }, 'subset-elastic': { limit: null, pods: 0, costs: [] } }, placed: 50, unplaced: 0, unassigned: 0 },
        { replicas: 150, subsets: { 'subset-normal': { limit: 100, pods: 100, costs: [200] }, 'subset-elastic': { limit: null, pods: 50, costs: [100] } }, placed: 150, unplaced: 0, unassigned: 0 },
        { replicas: 80, subsets: { 'subset-normal': { limit: 100, pods: 80, costs: [200] }, 'subset-elastic': { limit: null, pods: 0, costs: [] } }, placed: 80, unplaced: 0, unassigned: 0 },
      ],
    });
  });

  test('pods no subset can take are shown unplaced, with what happens to them, never in a subset over its limit', async () => {
    const spread = `apiVersion: apps.kruise.io/v1alpha1
kind: WorkloadSpread
metadata: {name: ws}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  subsets:
    - {name: zone-a, maxReplicas: 2, requiredNodeSelectorTerm: {matchExpressions: [{key: zone, operator: In, values: [a]}]}}
    - {name: zone-b, maxReplicas: 2, requiredNodeSelectorTerm: {matchExpressions: [{key: zone, operator: In, values: [b]}]}}
`;
    const json = await run(['plan', '-f', 'ws.yaml', '--replicas', '6,3', '-o', 'json'], { 'ws.yaml': spread });
    assert.equal(json.code, 0, json.err);
    const parsed = JSON.parse(json.out) as { steps: { subsets: Record<string, { limit: number; pods: number }>; placed: number; unplaced: number }[]; unplacedPods?: { event: { reason: string }; next: string } };
    assert.deepEqual(parsed.steps.map((s) => [s.subsets['zone-a']?.pods, s.subsets['zone-b']?.pods, s.placed, s.unplaced]), [[2, 2, 4, 2], [2, 1, 3, 0]]);
    assert.equal(parsed.unplacedPods?.event.reason, 'NoSubsetAvailable');
    assert.match(parsed.unplacedPods?.next ?? '', /depends on the cluster's nodes/);
    const table = await run(['plan', '-f', 'ws.yaml', '--replicas', '6'], { 'ws.yaml': spread });
    assert.match(table.out, /\(unplaced\)\s+-\s+2\s+-/);
    assert.match(table.out, /\(unplaced\): pods no subset can take \(step 1: 2\)\. Each is admitted unchanged \(no subset is injected\), with a Warning event NoSubsetAvailable/);
    // Without unplaced pods, no such note and no unplacedPods key.
    const none = await run(['plan', '-f', 'examples/elastic.yaml', '--replicas', '5', '-o', 'json']);
    assert.equal((JSON.parse(none.out) as { unplacedPods?: unknown }).unplacedPods, undefined);
  });

  test('table output has a row per step and subset', async () => {
    const r = await run(['plan', '-f', 'examples/zone-ratio.yaml', '--replicas', '10']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /STEP\s+REPLICAS\s+SUBSET\s+LIMIT\s+PODS\s+DELETION COSTS/);
    // Percentages: balanced costs (D17), one per pod — listed when few, a range when many.
    assert.match(r.out, /1\s+10\s+zone-a\s+2\s+2\s+2147482144,2147483644/);
    assert.match(r.out, /\s+zone-c\s+6\s+6\s+2147481143…2147483642 \(6 values\)/);
  });

  test('bad --replicas is a usage error', async () => {
    for (const bad of ['', '10,,5', '-3', 'ten', '1.5']) {
      const r = await run(['plan', '-f', 'examples/elastic.yaml', '--replicas', bad]);
      assert.equal(r.code, 2, bad);
      assert.match(r.err, /^error: --replicas/, bad);
    }
  });

  test('an invalid WorkloadSpread is reported, not planned', async () => {
    const r = await run(['plan', '-f', 'bad.yaml', '--replicas', '10'], { 'bad.yaml': INVALID });
    assert.equal(r.code, 1);
    assert.match(r.err, /maxReplicas exceeds 100%/);
    assert.equal(r.out, '');
  });

  test('unknown output format is a usage error', async () => {
    const r = await run(['plan', '-f', 'examples/elastic.yaml', '--replicas', '1', '-o', 'xml']);
    assert.equal(r.code, 2);
  });
});

describe('workloadspread manifests', () => {
  test('`manifests crd` prints the checked-in CRDs (WorkloadSpread, then DomainDisruptionBudget)', async () => {
    const r = await run(['manifests', 'crd']);
    assert.equal(r.code, 0);
    const files = ['deploy/crds/apps.kruise.io_workloadspreads.yaml', 'deploy/crds/policy.workloadspread.io_domaindisruptionbudgets.yaml'];
    assert.equal(r.out, files.map((f) => readFileSync(f, 'utf8')).join('---\n'));
  });
  test('unknown set is a usage error', async () => {
    const r = await run(['manifests', 'everything']);
    assert.equal(r.code, 2);
  });
});

describe('the installed command', () => {
  test('runs from a source checkout and maps errors to exit codes without stack traces', () => {
    const ok = spawnSync(process.execPath, ['bin/workloadspread.js', 'plan', '-f', 'examples/elastic.yaml', '--replicas', '120', '-o', 'json'], { encoding: 'utf8' });
    assert.equal(ok.status, 0, ok.stderr);
    assert.equal((JSON.parse(ok.stdout) as { steps: unknown[] }).steps.length, 1);
    const bad = spawnSync(process.execPath, ['bin/workloadspread.js', 'validate', '-f', 'nope.yaml'], { encoding: 'utf8' });
    assert.equal(bad.status, 2);
    assert.doesNotMatch(bad.stderr, /\n\s+at /);
    const unknown = spawnSync(process.execPath, ['bin/workloadspread.js', 'frobnicate'], { encoding: 'utf8' });
    assert.equal(unknown.status, 2);
  });
});
