/**
 * `workloadspread cluster`: the --nodes grammar, usage errors, and the real
 * thing as a child process — kubeconfig written, kubectl sees the nodes
 * (kubectl 1.32 from src/testing/k8s-tools.ts), Ctrl-C exits 130 (as the
 * README says) once it has stopped everything and removed the kubeconfig.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from './main.ts';
import { DEFAULT_LAYOUT, layoutNodes, parseNodeLayout, runCluster } from './cluster.ts';
import { captureIo } from '../testing/cli-io.ts';
import { eventually } from '../testing/eventually.ts';
import { k8sTools } from '../testing/k8s-tools.ts';

const KUBECTL = k8sTools().kubectl;

describe('--nodes', () => {
  const cases: { text: string; want: ReturnType<typeof parseNodeLayout> }[] = [
    { text: '', want: { ok: true, layout: DEFAULT_LAYOUT } },
    { text: 'zones=3,perZone=2,cpu=8,memory=32Gi', want: { ok: true, layout: { zones: 3, perZone: 2, cpu: '8', memory: '32Gi', pods: '110' } } },
    { text: 'perZone=5, zones=1 ,pods=20,cpu=500m', want: { ok: true, layout: { zones: 1, perZone: 5, cpu: '500m', memory: '32Gi', pods: '20' } } },
    { text: 'zones=0', want: { ok: false, error: '--nodes: zones must be an integer from 1 to 26, got "0"' } },
    { text: 'zones=27', want: { ok: false, error: '--nodes: zones must be an integer from 1 to 26, got "27"' } },
    { text: 'perZone=two', want: { ok: false, error: '--nodes: perZone must be an integer from 1 to 1000, got "two"' } },
    { text: 'cpu=lots', want: { ok: false, error: '--nodes: cpu must be a positive quantity, got "lots"' } },
    { text: 'gpus=1', want: { ok: false, error: '--nodes: unknown key "gpus" (expected zones, perZone, cpu, memory, pods)' } },
    { text: 'zones', want: { ok: false, error: '--nodes: expected key=value, got "zones"' } },
  ];
  for (const c of cases) test(JSON.stringify(c.text), () => assert.deepEqual(parseNodeLayout(c.text), c.want));

  test('nodes are named by zone and labelled with it', () => {
    const nodes = layoutNodes({ ...DEFAULT_LAYOUT, zones: 2, perZone: 2 });
    assert.deepEqual(nodes.map((n) => [n.name, n.labels?.['topology.kubernetes.io/zone']]), [
      ['node-a-1', 'zone-a'],
      ['node-a-2', 'zone-a'],
      ['node-b-1', 'zone-b'],
      ['node-b-2', 'zone-b'],
    ]);
    assert.deepEqual(nodes[0]?.capacity, { cpu: '8', memory: '32Gi', pods: '110' });
  });
});

describe('usage errors exit 2 with one line', () => {
  test('a bad --nodes', async () => {
    const io = captureIo();
    assert.equal(await main(['cluster', '--nodes', 'zones=x'], io), 2);
    assert.equal(io.stderr, 'error: --nodes: zones must be an integer from 1 to 26, got "x"\n');
  });

  test('a bad --port', async () => {
    const io = captureIo();
    assert.equal(await main(['cluster', '--port', '70000'], io), 2);
    assert.equal(io.stderr.split('\n').length, 2);
    assert.match(io.stderr, /^error: --port must be a number from 0 to 65535/);
  });

  test('never ~/.kube/config', async () => {
    const home = mkdtempSync(join(tmpdir(), 'ws-home-'));
    try {
      const io = captureIo();
      io.env['HOME'] = home;
      assert.equal(await main(['cluster', '--port', '0', '--kubeconfig', join(home, '.kube', 'config')], io), 2);
      assert.equal(io.stderr, 'error: --kubeconfig: refusing to overwrite ~/.kube/config; pass another file\n');
      assert.equal(existsSync(join(home, '.kube', 'config')), false);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('the kubeconfig: outside the working tree, readable by its owner only', () => {
  /** Runs the command in-process (no manager, one node) until `check` has looked at what it wrote. */
  async function runOnce(home: string, args: { kubeconfig?: string }, check: () => void): Promise<{ code: number; stdout: string }> {
    const io = captureIo();
    io.env['HOME'] = home;
    let stop: (signal: string) => void = () => {};
    const stopped = new Promise<string>((resolve) => (stop = resolve));
    let failure: unknown;
    const code = await runCluster({ port: '0', nodes: 'zones=1,perZone=1', manager: false, ...args }, io, {
      waitForStop: () => stopped,
      onReady: () => {
        try {
          check();
        } catch (err) {
          failure = err;
        }
        stop('');
      },
    });
    if (failure !== undefined) throw failure;
    return { code, stdout: io.stdout };
  }

  test('by default ~/.kube/workloadspread-embedded.kubeconfig, mode 0600 (~/.kube made 0700), nothing in the current directory; removed on exit', async () => {
    const home = mkdtempSync(join(tmpdir(), 'ws-home-'));
    try {
      const path = join(home, '.kube', 'workloadspread-embedded.kubeconfig');
      const { code, stdout } = await runOnce(home, {}, () => {
        assert.equal(statSync(path).mode & 0o777, 0o600);
        assert.equal(statSync(join(home, '.kube')).mode & 0o777, 0o700);
        assert.equal(existsSync('workloadspread.kubeconfig'), false, 'not in the working tree');
      });
      assert.equal(code, 130);
      assert.match(stdout, new RegExp(`kubeconfig: ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(readable by you only; removed on exit\\)`));
      assert.match(stdout, /export KUBECONFIG=.*\/\.kube\/workloadspread-embedded\.kubeconfig\n/);
      assert.equal(existsSync(path), false, 'removed on exit');
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test('--kubeconfig FILE: there, 0600 even over a file that was readable by others', async () => {
    const home = mkdtempSync(join(tmpdir(), 'ws-home-'));
    try {
      const path = join(home, 'mine.yaml');
      writeFileSync(path, 'old\n', { mode: 0o644 });
      const { code } = await runOnce(home, { kubeconfig: path }, () => assert.equal(statSync(path).mode & 0o777, 0o600));
      assert.equal(code, 130);
      assert.equal(existsSync(join(home, '.kube')), false, 'the default place is left alone');
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: nginx, image: 'nginx:1.25', resources: {requests: {cpu: 100m}}}]
`;

function kubectl(kubeconfig: string, dir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(KUBECTL, ['--cache-dir', join(dir, 'cache'), ...args], { env: { ...process.env, KUBECONFIG: kubeconfig, HOME: dir }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr });
    });
  });
}

describe('the command as a process', () => {
  test('writes the kubeconfig, serves kubectl, and stops cleanly on SIGINT', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'ws-cluster-'));
    const kubeconfig = join(dir, 'kc.yaml');
    const bin = new URL('../../bin/workloadspread.js', import.meta.url).pathname;
    const child = spawn(process.execPath, [bin, 'cluster', '--port', '0', '--kubeconfig', kubeconfig, '--nodes', 'zones=2,perZone=1,cpu=4'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await eventually(() => assert.ok(existsSync(kubeconfig) && stdout.includes('Press Ctrl-C'), `no kubeconfig yet; stderr: ${stderr}`), { timeoutMs: 60_000, intervalMs: 100 });
      assert.match(stdout, new RegExp(`export KUBECONFIG=${kubeconfig.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      const r = await kubectl(kubeconfig, dir, 'get', 'nodes', '-o', 'name');
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(r.stdout.trim().split('\n'), ['node/node-a-1', 'node/node-b-1']);
      // The acceptance: a Deployment applied with kubectl runs on the fake nodes, and scales in.
      writeFileSync(join(dir, 'web.yaml'), DEPLOYMENT);
      const applied = await kubectl(kubeconfig, dir, 'apply', '--validate=false', '-f', join(dir, 'web.yaml'));
      assert.equal(applied.code, 0, applied.stderr);
      const podsOf = async () => {
        const got = await kubectl(kubeconfig, dir, 'get', 'pods', '-l', 'app=web', '-o', 'jsonpath={range .items[*]}{.spec.nodeName} {.status.phase} {.metadata.deletionTimestamp}{"\\n"}{end}');
        assert.equal(got.code, 0, got.stderr);
        return got.stdout.split('\n').filter((l) => l.trim() !== '');
      };
      await eventually(async () => {
        const lines = await podsOf();
        assert.equal(lines.length, 3, lines.join('; '));
        for (const l of lines) assert.match(l, /^node-[ab]-1 Running $/);
      }, { timeoutMs: 60_000, intervalMs: 250 });
      const scaled = await kubectl(kubeconfig, dir, 'scale', 'deployment/web', '--replicas=1');
      assert.equal(scaled.code, 0, scaled.stderr);
      await eventually(async () => assert.deepEqual((await podsOf()).length, 1), { timeoutMs: 60_000, intervalMs: 250 });
      child.kill('SIGINT');
      assert.equal(await exited, 130, `Ctrl-C exits 130 after stopping everything; ${stderr}`);
      assert.match(stdout, /SIGINT: stopping the cluster\.\.\.\nStopped\.\n$/);
      assert.equal(existsSync(kubeconfig), false);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
