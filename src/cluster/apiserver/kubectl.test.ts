/**
 * Smoke tests with the real kubectl (1.32, from src/testing/k8s-tools.ts): get, apply twice (the second apply is a strategic-merge PATCH),
 * server-side apply, get -o json, scale, describe, get -w and delete — each
 * with nothing on stderr (no warnings, no discovery fallbacks).
 *
 * kubectl runs with its defaults: validation and patch computation read the
 * server's OpenAPI v3 documents.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import { k8sTools } from '../../testing/k8s-tools.ts';
import { pod, startTestCluster, testCertificate, type TestCluster } from '../../testing/apiserver-bed.ts';

const KUBECTL = k8sTools().kubectl;

let c: TestCluster;
let dir: string;

function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(KUBECTL, ['--cache-dir', join(dir, 'cache'), ...args], { env: { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir }, timeout: 60_000 }, (err, stdout, stderr) => {
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
  dir = mkdtempSync(join(tmpdir(), 'ws-kubectl-'));
  c = await startTestCluster(new VirtualClock(Date.UTC(2026, 0, 1)), testCertificate());
  await c.server.writeKubeconfig(join(dir, 'kubeconfig'));
});
after(async () => {
  await c.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('kubectl', () => {
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

  test('server-side apply of a field another manager owns fails with the conflict; --force-conflicts takes it', async () => {
    writeFileSync(join(dir, 'cm-other.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  a: "2"\n');
    const refused = await kubectl('apply', '--server-side', '--field-manager=other', '-f', join(dir, 'cm-other.yaml'));
    assert.notEqual(refused.code, 0);
    assert.equal(refused.stdout, '');
    assert.match(refused.stderr, /^error: Apply failed with 1 conflict: conflict with "kubectl": \.data\.a\nPlease review the fields above--they currently have other managers\./);
    const unchanged = JSON.parse((await kubectl('get', 'cm', 'ssa', '-o', 'json')).stdout) as { data: Record<string, string> };
    assert.deepEqual(unchanged.data, { a: '1' });

    const forced = await kubectl('apply', '--server-side', '--field-manager=other', '--force-conflicts', '-f', join(dir, 'cm-other.yaml'));
    assert.equal(forced.stderr, '');
    assert.equal(forced.code, 0);
    assert.equal(forced.stdout.trim(), 'configmap/ssa serverside-applied');
    const got = await kubectl('get', 'cm', 'ssa', '-o', 'json', '--show-managed-fields');
    const obj = JSON.parse(got.stdout) as { data: Record<string, string>; metadata: { managedFields: { manager: string; operation: string; fieldsV1: unknown }[] } };
    assert.deepEqual(obj.data, { a: '2' });
    // kubectl owned only `a`: its entry is gone; `other` owns it now.
    assert.deepEqual(
      obj.metadata.managedFields.map((e) => [e.manager, e.operation, e.fieldsV1]),
      [['other', 'Apply', { 'f:data': { 'f:a': {} } }]],
    );
  });

  test('server-side apply of replicas after kubectl scale conflicts with the scale subresource\'s manager', async () => {
    // `scale and describe` scaled web to 5 through /scale.
    writeFileSync(join(dir, 'deploy-ssa.yaml'), DEPLOYMENT(2));
    const refused = await kubectl('apply', '--server-side', '--field-manager=ci', '-f', join(dir, 'deploy-ssa.yaml'));
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /^error: Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps\/v1: \.spec\.replicas\n/);
    // The same value is no conflict: ownership is shared.
    writeFileSync(join(dir, 'deploy-ssa.yaml'), DEPLOYMENT(5));
    const shared = await kubectl('apply', '--server-side', '--field-manager=ci', '-f', join(dir, 'deploy-ssa.yaml'));
    assert.equal(shared.stderr, '');
    assert.equal(shared.stdout.trim(), 'deployment.apps/web serverside-applied');
  });

  test('get -w prints objects as they change', async () => {
    const child = spawn(KUBECTL, ['--cache-dir', join(dir, 'cache'), 'get', 'pods', '-w', '-o', 'name'], { env: { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir } });
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

describe('kubectl with RBAC objects and the auth commands', () => {
  test('create role, rolebinding, clusterrole, clusterrolebinding (protobuf bodies); get -o wide shows the role and subjects', async () => {
    for (const args of [
      ['create', 'role', 'reader', '--verb=get,list', '--resource=pods'],
      ['create', 'rolebinding', 'reader', '--role=reader', '--user=alice', '--serviceaccount=default:bot'],
      ['create', 'clusterrole', 'node-reader', '--verb=get', '--resource=nodes'],
      ['create', 'clusterrolebinding', 'node-reader', '--clusterrole=node-reader', '--group=ops'],
    ]) {
      const r = await kubectl(...args);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, '');
    }
    const wide = await kubectl('get', 'rolebinding', 'reader', '-o', 'wide', '--no-headers');
    assert.match(wide.stdout, /^reader\s+Role\/reader\s+\S+\s+alice\s+default\/bot\s*$/m);
    const binding = JSON.parse((await kubectl('get', 'clusterrolebinding', 'node-reader', '-o', 'json')).stdout) as { roleRef: unknown; subjects: unknown };
    assert.deepEqual(binding.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'node-reader' });
    assert.deepEqual(binding.subjects, [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'ops' }]);
    assert.match((await kubectl('get', 'clusterroles')).stdout, /^NAME\s+CREATED AT\ncluster-admin\s+\d{4}-\d\d-\d\dT[^\n]*\nnode-reader\s+\d{4}-\d\d-\d\dT/m);
    // Every cluster starts with cluster-admin bound to system:masters, the admin's group.
    assert.match((await kubectl('get', 'clusterrolebinding', 'cluster-admin', '-o', 'wide', '--no-headers')).stdout, /^cluster-admin\s+ClusterRole\/cluster-admin\s+\S+\s+system:masters\s*$/m);
  });

  test('the API server validates RBAC objects as upstream does, and keeps roleRef immutable', async () => {
    const bad = await kubectl('create', 'clusterrolebinding', 'bad', '--clusterrole=x', '--serviceaccount=nons');
    assert.equal(bad.code, 1);
    const rule = await kubectl('create', 'role', 'no-verbs', '--verb=get', '--resource=pods', '--dry-run=client', '-o', 'json');
    const noVerbs = { ...(JSON.parse(rule.stdout) as Record<string, unknown>), rules: [{ apiGroups: [''], resources: ['pods'], verbs: [] }] };
    writeFileSync(join(dir, 'no-verbs.json'), JSON.stringify(noVerbs));
    const refused = await kubectl('create', '-f', join(dir, 'no-verbs.json'));
    assert.equal(refused.code, 1);
    assert.equal(refused.stderr.trim(), 'The Role "no-verbs" is invalid: rules[0].verbs: Required value: verbs must contain at least one value');
    const changed = await kubectl('patch', 'rolebinding', 'reader', '--type=merge', '-p', '{"roleRef":{"name":"other"}}');
    assert.equal(changed.code, 1);
    assert.match(changed.stderr, /roleRef: Invalid value: .*cannot change roleRef/);
  });

  test('auth can-i, can-i --list and whoami answer for the kubeconfig\'s admin', async () => {
    assert.deepEqual(await kubectl('auth', 'can-i', 'delete', 'rolebindings'), { code: 0, stdout: 'yes\n', stderr: '' });
    assert.deepEqual(await kubectl('auth', 'can-i', 'create', 'clusterrolebindings', '--all-namespaces'), { code: 0, stdout: 'yes\n', stderr: '' });
    assert.deepEqual(await kubectl('auth', 'can-i', 'get', '/healthz'), { code: 0, stdout: 'yes\n', stderr: '' });
    const list = await kubectl('auth', 'can-i', '--list');
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]$/m);
    assert.match(list.stdout, /^\s+\[\*\]\s+\[\]\s+\[\*\]$/m);
    const whoami = await kubectl('auth', 'whoami', '-o', 'json');
    assert.deepEqual((JSON.parse(whoami.stdout) as { status: unknown }).status, { userInfo: { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] } });
  });

  test('explain reads the protobuf OpenAPI v2 document, for built-in kinds and CRDs alike', async () => {
    const crd = await kubectl('apply', '-f', new URL('../../../deploy/crds/apps.kruise.io_workloadspreads.yaml', import.meta.url).pathname);
    assert.equal(crd.code, 0, crd.stderr);
    await c.server.core.idle();
    const rb = await kubectl('explain', 'rolebinding.roleRef', '--output=plaintext-openapiv2');
    assert.equal(rb.code, 0, rb.stderr);
    assert.match(rb.stdout, /FIELDS:\n\s+apiGroup\t<string>/);
    const ws = await kubectl('explain', 'workloadspread.spec.subsets', '--output=plaintext-openapiv2');
    assert.equal(ws.code, 0, ws.stderr);
    assert.match(ws.stdout, /RESOURCE: subsets <\[\]Object>/);
    assert.match(ws.stdout, /\n {3}maxReplicas\t</);
  });
});
