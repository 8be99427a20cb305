/**
 * The chart's install round trip with the real helm 3.17 and kubectl 1.32 (src/testing/k8s-tools.ts)
 * against `workloadspread cluster --no-manager` run as a child process, as a user would:
 *
 * - `helm template --validate` and `kubectl apply --dry-run=server` of the chart;
 * - the README's `helm install` command, run as written there (with helm and kubectl on PATH);
 * - `helm upgrade` from an older chart whose CRD lacks a printer column: the CRD is upgraded
 *   with the release (the reason the CRDs are templates, not crds/), values change the Deployment;
 * - `helm rollback` to the first revision, then the upgrade again;
 * - `helm uninstall` as docs/operations.md says: the release's objects go, the CRDs stay;
 * - `kubectl auth can-i` answers for the kubeconfig's identity.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse, stringify } from 'yaml';
import { eventually } from '../testing/eventually.ts';
import { CHART_DIR, helm, kubectl, runTool, type ToolResult } from '../testing/helm.ts';
import { k8sTools } from '../testing/k8s-tools.ts';

const bin = new URL('../../bin/workloadspread.js', import.meta.url).pathname;
const NS = 'workloadspread-system';
const RELEASE = 'workloadspread';

/** The README's `helm install` command (the "With Helm" block of "Install into a cluster"). */
function readmeInstallCommand(): string {
  const readme = readFileSync('README.md', 'utf8');
  const block = /\*\*With Helm\*\*[\s\S]*?```sh\n([\s\S]*?)\n```/.exec(readme)?.[1];
  assert.ok(block !== undefined, 'README.md has no "With Helm" install block');
  assert.match(block, /^helm install /);
  return block;
}

/** docs/operations.md's uninstall block (webhook configurations first, then helm uninstall, then what the manager made). */
function operationsUninstallCommands(): string {
  const doc = readFileSync('docs/operations.md', 'utf8');
  const block = /## Uninstall[\s\S]*?```sh\n([\s\S]*?)\n```/.exec(doc)?.[1];
  assert.ok(block !== undefined, 'docs/operations.md has no uninstall block');
  assert.match(block, /helm uninstall workloadspread -n workloadspread-system/);
  return block;
}

/** Runs `workloadspread cluster --no-manager` until `fn` is done, then stops it with SIGINT. */
async function withCluster(fn: (kubeconfig: string, dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ws-chart-install-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const child = spawn(process.execPath, [bin, 'cluster', '--no-manager', '--port', '0', '--kubeconfig', kubeconfig, '--nodes', 'zones=2,perZone=1,cpu=4'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  try {
    await eventually(() => assert.ok(existsSync(kubeconfig) && stdout.includes('Press Ctrl-C'), `not up yet; stderr: ${stderr}`), { timeoutMs: 60_000, intervalMs: 100 });
    await fn(kubeconfig, dir);
  } finally {
    if (child.exitCode === null) child.kill('SIGINT');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

function ok(r: ToolResult, what: string): string {
  assert.equal(r.code, 0, `${what}: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

describe('helm install, upgrade, rollback and uninstall on the embedded cluster', () => {
  test('the documented commands work, the CRDs follow the release, uninstall keeps them', async () => {
    await withCluster(async (kubeconfig, dir) => {
      const home = join(dir, 'home');
      const k = async (...args: string[]) => ok(await kubectl(args, { kubeconfig, home }), `kubectl ${args.join(' ')}`);
      const h = async (...args: string[]) => ok(await helm(args, { kubeconfig, home }), `helm ${args.join(' ')}`);
      const shell = async (script: string) => ok(await runTool('bash', ['-c', script], { kubeconfig, home, env: { PATH: `${dirname(k8sTools().helm)}:${process.env['PATH'] ?? ''}` } }), script);

      // Validation against the cluster, before anything is installed.
      await h('template', RELEASE, CHART_DIR, '-n', 'default', '--validate');
      // Without `helm test`'s hooks, which only `helm test` creates (its pod needs its ServiceAccount stored first).
      const rendered = await h('template', RELEASE, CHART_DIR, '-n', 'default', '--skip-tests');
      assert.doesNotMatch(rendered, /workloadspread-test/);
      const dry = ok(await kubectl(['apply', '--dry-run=server', '-f', '-'], { kubeconfig, home, input: rendered }), 'kubectl apply --dry-run=server');
      assert.match(dry, /customresourcedefinition\.apiextensions\.k8s\.io\/workloadspreads\.apps\.kruise\.io created \(server dry run\)/);
      assert.match(dry, /clusterrolebinding\.rbac\.authorization\.k8s\.io\/workloadspread-manager created \(server dry run\)/);
      // The embedded cluster comes with OpenKruise's CloneSet CRD, as a cluster with Kruise does.
      const kruise = 'customresourcedefinition.apiextensions.k8s.io/clonesets.apps.kruise.io\n';
      assert.equal(await k('get', 'crd', '-o', 'name'), kruise, 'a dry run stores nothing');

      // An "older" chart: the same, but its WorkloadSpread CRD lacks its first printer column.
      const old = join(dir, 'old-chart');
      cpSync(CHART_DIR, old, { recursive: true });
      const crdFile = join(old, 'files', 'crds', 'apps.kruise.io_workloadspreads.yaml');
      const crd = parse(readFileSync(crdFile, 'utf8')) as { spec: { versions: { additionalPrinterColumns: { name: string }[] }[] } };
      const removed = crd.spec.versions[0]?.additionalPrinterColumns.shift()?.name ?? '';
      assert.notEqual(removed, '');
      writeFileSync(crdFile, stringify(crd));
      const hasColumn = async () => (await k('get', 'crd', 'workloadspreads.apps.kruise.io', '-o', 'jsonpath={.spec.versions[0].additionalPrinterColumns[*].name}')).split(' ').includes(removed);

      // Install: the README's command, against the old chart.
      await shell(readmeInstallCommand().replace(' charts/workloadspread ', ` ${old} `));
      assert.equal(await hasColumn(), false);
      assert.equal(await k('get', 'deploy', 'workloadspread-manager', '-n', NS, '-o', 'jsonpath={.spec.replicas} {.spec.template.spec.containers[0].image}'), '2 registry.example.com/platform/workloadspread:0.1.0');
      assert.equal(await k('get', 'crd', 'workloadspreads.apps.kruise.io', '-o', "jsonpath={.metadata.annotations['helm\\.sh/resource-policy']} {.metadata.annotations['meta\\.helm\\.sh/release-name']}"), `keep ${RELEASE}`);
      assert.match(await k('get', 'clusterrole,clusterrolebinding', '-l', 'app.kubernetes.io/name=workloadspread', '-o', 'name'), /clusterrole\.rbac\.authorization\.k8s\.io\/workloadspread-manager\nclusterrolebinding\.rbac\.authorization\.k8s\.io\/workloadspread-manager/);
      assert.equal(await k('auth', 'can-i', 'create', 'clusterrolebindings'), 'yes\n');

      // Upgrade to this chart with other values (the documented form, with a values file): the CRD gains its column.
      writeFileSync(join(dir, 'my-values.yaml'), 'image: {repository: registry.example.com/platform/workloadspread}\nreplicas: 3\nmetrics: {port: 9090}\n');
      await shell(`helm upgrade ${RELEASE} charts/workloadspread -n ${NS} -f ${join(dir, 'my-values.yaml')}`);
      assert.equal(await hasColumn(), true, `the upgrade brought the ${removed} column`);
      assert.equal(await k('get', 'deploy', 'workloadspread-manager', '-n', NS, '-o', 'jsonpath={.spec.replicas} {.spec.template.spec.containers[0].ports[1].containerPort}'), '3 9090');

      // Rollback to the install: the old Deployment and the old CRD.
      await h('rollback', RELEASE, '1', '-n', NS);
      assert.equal(await k('get', 'deploy', 'workloadspread-manager', '-n', NS, '-o', 'jsonpath={.spec.replicas}'), '2');
      assert.equal(await hasColumn(), false);
      assert.match(await h('history', RELEASE, '-n', NS), /3\s+.*deployed\s+workloadspread-0\.1\.0\s+0\.1\.0\s+Rollback to 1/);

      // Uninstall as docs/operations.md says: everything of the release goes, the CRDs stay (keep).
      await shell(operationsUninstallCommands());
      assert.equal(await k('get', 'deploy,sa,cm,svc,pdb,role,rolebinding', '-n', NS, '-l', 'app.kubernetes.io/name=workloadspread', '-o', 'name'), '');
      assert.equal(await k('get', 'clusterrole,clusterrolebinding,mutatingwebhookconfiguration,validatingwebhookconfiguration', '-l', 'app.kubernetes.io/name=workloadspread', '-o', 'name'), '');
      assert.equal(await k('get', 'crd', '-o', 'name'), `${kruise}customresourcedefinition.apiextensions.k8s.io/domaindisruptionbudgets.policy.workloadspread.io\ncustomresourcedefinition.apiextensions.k8s.io/workloadspreads.apps.kruise.io\n`);
      assert.equal(await h('list', '-A', '-q'), '');
    });
  });
});
