/**
 * Smoke tests with the real kubectl (skipped with a message when it is not on
 * PATH): get, apply twice (the second apply is a strategic-merge PATCH),
 * server-side apply, get -o json, scale, describe, get -w and delete — each
 * with nothing on stderr (no warnings, no discovery fallbacks).
 *
 * kubectl runs with its defaults: validation and patch computation read the
 * server's OpenAPI v3 documents.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import { pod, startTestCluster, testCertificate, type TestCluster } from '../../testing/apiserver-bed.ts';

const hasKubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
const skip = hasKubectl ? false : 'kubectl is not on PATH: skipping the kubectl smoke tests';

let c: TestCluster;
let dir: string;

function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('kubectl', ['--cache-dir', join(dir, 'cache'), ...args], { env: { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr });
    });
  });
}

const DEPLOYMENT = (replicas: number) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        ports:
        - containerPort: 80
`;

before(async () => {
  if (!hasKubectl) return;
  dir = mkdtempSync(join(tmpdir(), 'ws-kubectl-'));
  c = await startTestCluster(new VirtualClock(Date.UTC(2026, 0, 1)), testCertificate());
  await c.server.writeKubeconfig(join(dir, 'kubeconfig'));
});
after(async () => {
  if (!hasKubectl) return;
  await c.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('kubectl', { skip }, () => {
  test('get ns', async () => {
    const r = await kubectl('get', 'ns', '-o', 'name');
    assert.equal(r.stderr, '');
    assert.equal(r.code, 0);
    assert.deepEqual(r.stdout.trim().split('\n'), ['namespace/default', 'namespace/kube-node-lease', 'namespace/kube-public', 'namespace/kube-system']);
  });

  test('apply twice: create, then a strategic merge patch', async () => {
    writeFileSync(join(dir, 'deploy.yaml'), DEPLOYMENT(2));
    const first = await kubectl('apply', '-f', join(dir, 'deploy.yaml'));
    assert.equal(first.stderr, '');
    assert.equal(first.stdout.trim(), 'deployment.apps/web created');
    c.server.control.resetCounters();
    writeFileSync(join(dir, 'deploy.yaml'), DEPLOYMENT(3));
    const second = await kubectl('apply', '-f', join(dir, 'deploy.yaml'));
    assert.equal(second.stderr, '');
    assert.equal(second.stdout.trim(), 'deployment.apps/web configured');
    assert.equal(c.server.control.requestCount({ resource: 'deployments', verb: 'patch' }), 1);
    const got = await kubectl('get', 'deploy', 'web', '-o', 'json');
    assert.equal(got.stderr, '');
    const obj = JSON.parse(got.stdout) as { spec: { replicas: number }; metadata: { annotations: Record<string, string>; generation: number } };
    assert.equal(obj.spec.replicas, 3);
    assert.equal(obj.metadata.generation, 2);
    assert.ok(obj.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']?.includes('"replicas":3'));
  });

  test('scale and describe', async () => {
    const scaled = await kubectl('scale', 'deploy', 'web', '--replicas=5');
    assert.equal(scaled.stderr, '');
    assert.equal(scaled.stdout.trim(), 'deployment.apps/web scaled');
    const described = await kubectl('describe', 'deploy', 'web');
    assert.equal(described.stderr, '');
    assert.match(described.stdout, /Replicas:\s+5 desired/);
    assert.match(described.stdout, /RollingUpdateStrategy:\s+25% max unavailable, 25% max surge/);
  });

  test('server-side apply', async () => {
    writeFileSync(join(dir, 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  a: "1"\n');
    const r = await kubectl('apply', '--server-side', '-f', join(dir, 'cm.yaml'));
    assert.equal(r.stderr, '');
    assert.equal(r.stdout.trim(), 'configmap/ssa serverside-applied');
  });

  test('get -w prints objects as they change', async () => {
    const child = spawn('kubectl', ['--cache-dir', join(dir, 'cache'), 'get', 'pods', '-w', '-o', 'name'], { env: { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir } });
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const seen = new Promise<void>((resolve) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('pod/watched')) resolve();
      });
    });
    // The watch is open once kubectl has listed and started watching pods.
    while (c.server.control.requestCount({ resource: 'pods', verb: 'watch' }) === 0) await new Promise((r) => setImmediate(r));
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('watched') });
    await seen;
    child.kill();
    assert.equal(err.replace('No resources found in default namespace.\n', ''), '');
  });

  test('delete', async () => {
    const r = await kubectl('delete', 'deploy', 'web');
    assert.equal(r.stderr, '');
    assert.equal(r.stdout.trim(), 'deployment.apps "web" deleted');
    const gone = await kubectl('get', 'deploy', 'web');
    assert.equal(gone.code, 1);
    assert.equal(gone.stderr.trim(), 'Error from server (NotFound): deployments.apps "web" not found');
  });
});
