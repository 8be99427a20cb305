/**
 * The published package (issue 15): `npm pack` holds the executables, the compiled JavaScript
 * (dist/, what `prepack` builds) and the examples — no sources, no tests — and, laid out as
 * `npm install -g` lays it out (the package under lib/node_modules, its `bin` entries linked into
 * bin/), it runs the compiled JavaScript: `workloadspread`, the kubectl plugin
 * `kubectl-workloadspread` (`kubectl workloadspread status` through a real kubectl, against the
 * embedded cluster) and `kubectl_complete-workloadspread` (kubectl's plugin completion).
 *
 * The dependencies are the checkout's node_modules, linked beside the package, so nothing is
 * downloaded. kubectl is the packaged kubectl 1.32 (src/testing/k8s-tools.ts), first on PATH.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { workloadSpreadCrd } from '../api/crd.ts';
import { realClock } from '../clock/clock.ts';
import { BUILTIN } from '../client/resources.ts';
import { startCluster, type EmbeddedCluster } from '../cluster/index.ts';
import type { KubeObject } from '../k8s/types.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import { VERSION } from '../manager/defaults.ts';
import { eventually } from '../testing/eventually.ts';
import { k8sTools } from '../testing/k8s-tools.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; bin: Record<string, string>; files: string[]; scripts: Record<string, string>; dependencies: Record<string, string> };

function exec(file: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(file, args, { cwd: options.cwd ?? ROOT, env: options.env ?? process.env, maxBuffer: 64 * 1024 * 1024, timeout: 280_000 }, (err, stdout, stderr) => {
      done({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr });
    });
  });
}

describe('the published package', () => {
  let dir: string;
  let prefix: string;
  let files: string[] = [];
  let built: { code: number; stdout: string; stderr: string };
  let env: NodeJS.ProcessEnv;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ws-package-'));
    const source = join(dir, 'source');
    mkdirSync(source);
    // What `npm pack` sees after `prepack` (npm run build): the checkout's files plus dist/.
    built = await exec(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', join(source, 'dist')]);
    for (const f of ['package.json', 'README.md', 'bin', 'examples', 'src']) cpSync(join(ROOT, f), join(source, f), { recursive: true });
    const packed = await exec('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: source });
    assert.equal(packed.code, 0, packed.stderr);
    const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
    files = (info?.files ?? []).map((f) => f.path);
    // `npm install -g`: the package in lib/node_modules, its dependencies beside it, `bin` linked into bin/.
    prefix = join(dir, 'prefix');
    const installed = join(prefix, 'lib', 'node_modules', pkg.name);
    mkdirSync(installed, { recursive: true });
    const untar = spawnSync('tar', ['-xzf', join(dir, info?.filename ?? ''), '-C', installed, '--strip-components=1'], { encoding: 'utf8' });
    assert.equal(untar.status, 0, untar.stderr);
    symlinkSync(join(ROOT, 'node_modules'), join(installed, 'node_modules'), 'dir');
    mkdirSync(join(prefix, 'bin'));
    for (const [name, path] of Object.entries(pkg.bin)) {
      chmodSync(join(installed, path), 0o755);
      symlinkSync(join('..', 'lib', 'node_modules', pkg.name, path), join(prefix, 'bin', name));
    }
    env = { ...process.env, PATH: `${join(prefix, 'bin')}${delimiter}${process.env['PATH'] ?? ''}` };
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  test('prepack builds dist/ (npm run build), and the build compiles', () => {
    assert.equal(pkg.scripts['prepack'], 'npm run build');
    assert.equal(built.code, 0, built.stdout + built.stderr);
  });

  test('npm pack holds bin/, the compiled JavaScript and the examples — no sources, no tests, no test support', () => {
    assert.deepEqual(pkg.files, ['bin/', 'dist/', 'examples/']);
    for (const f of ['package.json', 'README.md', 'bin/launch.js', 'dist/cli/entry.js', 'dist/cli/kubectl-entry.js', 'dist/cli/kubectl-complete-entry.js', 'dist/cli/validate.js', 'examples/demo/workloadspread.yaml', 'examples/demo/deployment.yaml']) {
      assert.ok(files.includes(f), `${f} is in the package`);
    }
    for (const bin of Object.values(pkg.bin)) assert.ok(files.includes(bin), `${bin} is in the package`);
    assert.deepEqual(files.filter((f) => f.startsWith('src/') || /\.test\.(js|ts)$/.test(f) || f.includes('/testing/') || f.endsWith('.ts')), []);
  });

  test('package.json bin: workloadspread, the kubectl plugin and its completion, each a node script', () => {
    assert.deepEqual(Object.keys(pkg.bin).sort(), ['kubectl-workloadspread', 'kubectl_complete-workloadspread', 'workloadspread']);
    for (const path of Object.values(pkg.bin)) assert.match(readFileSync(join(ROOT, path), 'utf8'), /^#!\/usr\/bin\/env node\n/);
    assert.equal(pkg.dependencies['tsx'], undefined, 'the published package runs dist/: tsx is a dev dependency');
  });

  test('the installed workloadspread runs the compiled JavaScript: --version, manifests, validate -f -', async () => {
    assert.ok(!existsSync(join(prefix, 'lib', 'node_modules', pkg.name, 'src')), 'no sources installed, so bin/launch.js runs dist/');
    const version = await exec('workloadspread', ['--version'], { env, cwd: dir });
    assert.equal(version.code, 0, version.stderr);
    assert.equal(version.stdout, `${VERSION}\n`);
    const manifests = await exec('workloadspread', ['manifests', 'crd'], { env, cwd: dir });
    assert.equal(manifests.code, 0, manifests.stderr);
    assert.equal(manifests.stdout.split('---\n')[0], readFileSync(join(ROOT, 'deploy/crds/apps.kruise.io_workloadspreads.yaml'), 'utf8'));
    const validate = spawnSync('workloadspread', ['validate', '-f', '-'], { env, cwd: dir, input: readFileSync(join(ROOT, 'examples/elastic.yaml')), encoding: 'utf8' });
    assert.equal(validate.status, 0, validate.stderr);
    assert.equal(validate.stdout, '<stdin>: WorkloadSpread default/web-spread: valid\n');
  });

  test('kubectl-workloadspread names itself as kubectl users call it; completion scripts for bash, zsh and fish', async () => {
    const help = await exec('kubectl-workloadspread', ['--help'], { env, cwd: dir });
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^Usage: kubectl workloadspread /);
    const complete = await exec('kubectl_complete-workloadspread', ['status', '-o', 'y'], { env, cwd: dir });
    assert.equal(complete.stdout, 'yaml\n:4\n');
    const bash = await exec('workloadspread', ['completion', 'bash'], { env, cwd: dir });
    assert.match(bash.stdout, /complete -F __workloadspread_complete workloadspread\n$/);
    const zsh = await exec('workloadspread', ['completion', 'zsh'], { env, cwd: dir });
    assert.match(zsh.stdout, /^#compdef workloadspread\n/);
    const fish = await exec('workloadspread', ['completion', 'fish'], { env, cwd: dir });
    assert.match(fish.stdout, /complete -c workloadspread -f -a '\(__workloadspread_complete\)'\n$/);
  });

  describe('through kubectl', () => {
    let cluster: EmbeddedCluster | undefined;
    let kubeconfig: string;
    /** The package's bin/ and the packaged kubectl first on PATH: kubectl finds the plugin there. */
    let kenv: NodeJS.ProcessEnv;

    before(async () => {
      kenv = { ...env, PATH: `${dirname(k8sTools().kubectl)}${delimiter}${env['PATH'] ?? ''}` };
      cluster = await startCluster({ clock: realClock() });
      await cluster.client.create(BUILTIN.customresourcedefinitions, workloadSpreadCrd() as KubeObject);
      await eventually(() => cluster!.client.list(WORKLOADSPREAD_REF, { limit: 1 }), { timeoutMs: 30_000, intervalMs: 100 });
      await cluster.client.create(WORKLOADSPREAD_REF, {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'WorkloadSpread',
        metadata: { name: 'web-spread', namespace: 'default', labels: { team: 'web' } },
        spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets: [{ name: 'a', maxReplicas: 2 }, { name: 'b' }] },
      } as KubeObject);
      kubeconfig = join(dir, 'kubeconfig');
      await cluster.writeKubeconfig(kubeconfig);
      kenv['KUBECONFIG'] = kubeconfig;
    });

    after(async () => {
      await cluster?.stop();
    });

    test('kubectl workloadspread status works (kubectl 1.32 finds the plugin on PATH), with kubectl\'s flags; kubectl completes it', async () => {
      const version = await exec('kubectl', ['version', '--client'], { env: kenv, cwd: dir });
      assert.match(version.stdout, /Client Version: v1\.32\./);
      const list = await exec('kubectl', ['plugin', 'list'], { env: kenv, cwd: dir });
      assert.match(list.stdout, /kubectl-workloadspread\n/);
      const status = await exec('kubectl', ['workloadspread', 'status'], { env: kenv, cwd: dir });
      assert.equal(status.code, 0, status.stderr);
      assert.match(status.stdout, /^WorkloadSpread default\/web-spread → Deployment web \(not found\)\n/);
      const selected = await exec('kubectl', ['workloadspread', 'status', '-A', '-l', 'team=web', '-o', 'yaml', '--kubeconfig', kubeconfig], { env: { ...kenv, KUBECONFIG: '' }, cwd: dir });
      assert.equal(selected.code, 0, selected.stderr);
      assert.match(selected.stdout, /^apiVersion: v1\nkind: List\nmetadata:\n {2}resourceVersion: ""\nitems:\n- apiVersion: workloadspread\.io\/v1alpha1\n {2}kind: WorkloadSpreadView\n {2}metadata:\n {4}name: web-spread\n/);
      const none = await exec('kubectl', ['workloadspread', 'status', '-A', '-l', 'team=db', '-o', 'json'], { env: kenv, cwd: dir });
      assert.equal(none.stdout, '{\n    "apiVersion": "v1",\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    },\n    "items": []\n}\n');
      const names = await exec('kubectl', ['workloadspread', 'status', '-A', '-o', 'jsonpath={.items[*].metadata.name}'], { env: kenv, cwd: dir });
      assert.equal(names.stdout, 'web-spread', names.stderr);
      const missingContext = await exec('kubectl', ['workloadspread', 'status', '--context', 'nope'], { env: kenv, cwd: dir });
      assert.equal(missingContext.code, 1);
      assert.match(missingContext.stderr, /^error: .*context "nope" is not in the kubeconfig\n$/);
      // kubectl (1.26+) completes plugin arguments through kubectl_complete-workloadspread.
      const completed = await exec('kubectl', ['__complete', 'workloadspread', 'st'], { env: kenv, cwd: dir });
      assert.match(completed.stdout, /^status\n/);
      const named = await exec('kubectl', ['__complete', 'workloadspread', 'status', ''], { env: kenv, cwd: dir });
      assert.equal(named.stdout, 'web-spread\n:4\n', named.stderr);
    });
  });
});
