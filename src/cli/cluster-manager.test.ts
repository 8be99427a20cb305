/**
 * `workloadspread cluster` runs the WorkloadSpread manager inside by default:
 * as a child process, `kubectl apply` of examples/elastic.yaml (a
 * WorkloadSpread and its Deployment) gets the pods their markers and subset
 * affinity, and `kubectl get ws` shows the status the controller wrote
 * (kubectl 1.32 from the test tools, src/testing/k8s-tools.ts); `--no-manager` leaves the CRD out.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../testing/eventually.ts';
import { k8sTools } from '../testing/k8s-tools.ts';

const KUBECTL = k8sTools().kubectl;
const bin = new URL('../../bin/workloadspread.js', import.meta.url).pathname;
const elastic = new URL('../../examples/elastic.yaml', import.meta.url).pathname;
const budget = new URL('../../examples/disruption-budget.yaml', import.meta.url).pathname;

function kubectl(kubeconfig: string, dir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(KUBECTL, ['--cache-dir', join(dir, 'cache'), ...args], { env: { ...process.env, KUBECONFIG: kubeconfig, HOME: dir }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr });
    });
  });
}

/** Runs `workloadspread cluster` with `args` until `fn` is done, then stops it with SIGINT (exit 0). */
async function withClusterProcess(args: string[], fn: (kubeconfig: string, dir: string, output: () => string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ws-cluster-mgr-'));
  const kubeconfig = join(dir, 'kc.yaml');
  const child = spawn(process.execPath, [bin, 'cluster', '--port', '0', '--kubeconfig', kubeconfig, '--nodes', 'zones=2,perZone=1,cpu=4', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    await eventually(() => assert.ok(existsSync(kubeconfig) && stdout.includes('Press Ctrl-C'), `not up yet; stderr: ${stderr}`), { timeoutMs: 60_000, intervalMs: 100 });
    await fn(kubeconfig, dir, () => stdout);
    child.kill('SIGINT');
    assert.equal(await exited, 130, stderr);
    assert.match(stdout, /Stopped\.\n$/);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('workloadspread cluster with the manager inside', () => {
  test('kubectl apply -f examples/elastic.yaml: the pods get their marker and subset affinity, the WorkloadSpread its status', async () => {
    await withClusterProcess([], async (kubeconfig, dir, output) => {
      assert.match(output(), /WorkloadSpread manager: running inside \(CRD installed, webhooks at https:\/\/127\.0\.0\.1:\d+, metrics at http:\/\/127\.0\.0\.1:\d+\/metrics\)/);
      const applied = await kubectl(kubeconfig, dir, 'apply', '-f', elastic);
      assert.equal(applied.code, 0, applied.stderr);
      assert.match(applied.stdout, /workloadspread\.apps\.kruise\.io\/web-spread created/);
      const jsonpath = '{range .items[*]}{.metadata.annotations.apps\\.kruise\\.io/matched-workloadspread} {.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0]}{"\\n"}{end}';
      await eventually(async () => {
        const got = await kubectl(kubeconfig, dir, 'get', 'pods', '-n', 'default', '-l', 'app=web', '-o', `jsonpath=${jsonpath}`);
        assert.equal(got.code, 0, got.stderr);
        const lines = got.stdout.split('\n').filter((l) => l.trim() !== '');
        assert.equal(lines.length, 50, `${lines.length} pods so far`);
        // 50 replicas, subset-normal takes up to 100: every pod goes there (its nodes do not exist here, so they stay Pending).
        for (const l of lines) assert.equal(l, '{"name":"web-spread","subset":"subset-normal","uid":"' + l.split('"uid":"')[1]?.split('"')[0] + '"} normal');
      }, { timeoutMs: 60_000, intervalMs: 250 });
      await eventually(async () => {
        const ws = await kubectl(kubeconfig, dir, 'get', 'ws', 'web-spread', '-n', 'default', '-o', 'jsonpath={.status.subsetStatuses[0].name} {.status.subsetStatuses[0].replicas} {.status.subsetStatuses[0].missingReplicas}');
        assert.equal(ws.code, 0, ws.stderr);
        assert.equal(ws.stdout, 'subset-normal 50 50');
      }, { timeoutMs: 60_000, intervalMs: 250 });
      // The DomainDisruptionBudget CRD is installed too, and the manager keeps budgets' status (the pods are Pending: in no zone yet).
      const ddb = await kubectl(kubeconfig, dir, 'apply', '-n', 'default', '-f', budget);
      assert.equal(ddb.code, 0, ddb.stderr);
      await eventually(async () => {
        const got = await kubectl(kubeconfig, dir, 'get', 'ddb', 'web-per-zone', '-n', 'default', '-o', 'jsonpath={.status.mode} {.status.domainCount}');
        assert.equal(got.code, 0, got.stderr);
        assert.equal(got.stdout, 'topologyKey=topology.kubernetes.io/zone 0');
      }, { timeoutMs: 60_000, intervalMs: 250 });
    });
  });

  test('--no-manager: no CRD, no manager', async () => {
    await withClusterProcess(['--no-manager'], async (kubeconfig, dir, output) => {
      assert.match(output(), /WorkloadSpread manager: not running \(--no-manager\)/);
      const crds = await kubectl(kubeconfig, dir, 'get', 'crd', '-o', 'name');
      assert.equal(crds.code, 0, crds.stderr);
      assert.doesNotMatch(crds.stdout, /workloadspreads/);
    });
  });
});
