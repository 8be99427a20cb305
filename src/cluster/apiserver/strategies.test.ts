/**
 * The per-kind REST strategies, driven in-process through the control API
 * (same pipeline as HTTP): the defaults kubectl users see, validation with
 * upstream's messages, immutability rules, generation rules, and the
 * objects a new cluster starts with. One case per rule.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { imageTag } from './pod-defaults.ts';
import { podQOSClass } from './strategies/pod.ts';
import { startApiServer, type ApiServer } from './server.ts';
import { testCertificate } from '../../testing/apiserver-bed.ts';

let server: ApiServer;

before(async () => {
  server = await startApiServer({ clock: new VirtualClock(Date.UTC(2026, 0, 1)), certificate: testCertificate() });
});
after(async () => {
  await server.close();
});

async function create(obj: KubeObject): Promise<KubeObject> {
  const r = await server.control.create(obj);
  if (!r.ok) throw new Error(r.status.message);
  return r.value;
}

async function rejected(obj: KubeObject): Promise<string> {
  const r = await server.control.create(obj);
  assert.ok(!r.ok, 'expected a rejection');
  return r.status.message ?? '';
}

const template = (labels: Record<string, string>, restartPolicy?: string) => ({
  metadata: { labels },
  spec: { ...(restartPolicy !== undefined ? { restartPolicy } : {}), containers: [{ name: 'c', image: 'busybox:1.36' }] },
});

describe('bootstrap', () => {
  test('namespaces, system priority classes and the kubernetes Service exist at start', () => {
    const ns = server.control.list('v1', 'Namespace');
    assert.ok(ns.ok);
    assert.deepEqual(ns.value.items.map((n) => n.metadata?.name), ['default', 'kube-node-lease', 'kube-public', 'kube-system']);
    assert.equal(ns.value.items[0]?.metadata?.labels?.['kubernetes.io/metadata.name'], 'default');
    const pc = server.control.list('scheduling.k8s.io/v1', 'PriorityClass');
    assert.ok(pc.ok);
    assert.deepEqual(pc.value.items.map((p) => [p.metadata?.name, p['value']]), [['system-cluster-critical', 2000000000], ['system-node-critical', 2000001000]]);
    const svc = server.control.get('v1', 'Service', 'default', 'kubernetes');
    assert.ok(svc.ok);
    assert.equal((svc.value['spec'] as { clusterIP: string }).clusterIP, '10.96.0.1');
  });
});

describe('namespace defaults', () => {
  test('every namespace gets the default ServiceAccount and kube-root-ca.crt, re-created when deleted', async () => {
    await create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fresh' } });
    await server.core.idle();
    assert.ok(server.control.get('v1', 'ServiceAccount', 'fresh', 'default').ok);
    const ca = server.control.get('v1', 'ConfigMap', 'fresh', 'kube-root-ca.crt');
    assert.ok(ca.ok);
    assert.equal((ca.value['data'] as Record<string, string>)['ca.crt'], server.caPem);
    const deleted = await server.control.delete('v1', 'ServiceAccount', 'fresh', 'default');
    assert.ok(deleted.ok);
    await server.core.idle();
    assert.ok(server.control.get('v1', 'ServiceAccount', 'fresh', 'default').ok);
  });
});

describe('defaults', () => {
  test('imagePullPolicy follows the tag: latest or none → Always, anything else (or a digest) → IfNotPresent', () => {
    const cases: [string, string][] = [['nginx', 'latest'], ['nginx:latest', 'latest'], ['nginx:1.25', '1.25'], ['registry:5000/nginx', 'latest'], ['registry:5000/nginx:2', '2'], ['nginx@sha256:abc', '']];
    for (const [image, tag] of cases) assert.equal(imageTag(image), tag, image);
  });

  test('QoS class: BestEffort, Burstable, Guaranteed (requests default to limits)', () => {
    const spec = (resources: unknown) => ({ containers: [{ name: 'c', resources }] });
    assert.equal(podQOSClass(spec({})), 'BestEffort');
    assert.equal(podQOSClass(spec({ requests: { cpu: '100m' } })), 'Burstable');
    assert.equal(podQOSClass(spec({ requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } })), 'Guaranteed');
    assert.equal(podQOSClass(spec({ requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } })), 'Burstable');
  });

  test('a pod with limits only gets equal requests and is Guaranteed', async () => {
    const p = await create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'limits', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'x:1', resources: { limits: { cpu: '1', memory: '1Gi' } } }] } });
    const c = (p['spec'] as { containers: { resources: unknown }[] }).containers[0];
    assert.deepEqual(c?.resources, { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1', memory: '1Gi' } });
    assert.equal((p['status'] as { qosClass: string }).qosClass, 'Guaranteed');
  });

  test('Deployment: replicas 1, RollingUpdate 25%/25%, revisionHistoryLimit 10, progressDeadlineSeconds 600; templates get pod spec defaults but not enableServiceLinks', async () => {
    const d = await create({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'default' }, spec: { selector: { matchLabels: { a: 'b' } }, template: template({ a: 'b' }) } });
    const spec = d['spec'] as Record<string, unknown>;
    assert.equal(spec['replicas'], 1);
    assert.deepEqual(spec['strategy'], { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
    assert.equal(spec['revisionHistoryLimit'], 10);
    assert.equal(spec['progressDeadlineSeconds'], 600);
    const podSpec = (spec['template'] as { spec: Record<string, unknown> }).spec;
    assert.equal(podSpec['restartPolicy'], 'Always');
    assert.equal(podSpec['terminationGracePeriodSeconds'], 30);
    assert.equal(podSpec['enableServiceLinks'], undefined);
  });

  test('Recreate Deployments get no rollingUpdate', async () => {
    const d = await create({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'recreate', namespace: 'default' }, spec: { strategy: { type: 'Recreate' }, selector: { matchLabels: { a: 'r' } }, template: template({ a: 'r' }) } });
    assert.deepEqual((d['spec'] as { strategy: unknown }).strategy, { type: 'Recreate' });
  });

  test('StatefulSet: OrderedReady, RollingUpdate partition 0, revisionHistoryLimit 10, Retain PVCs', async () => {
    const s = await create({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 's', namespace: 'default' }, spec: { serviceName: 's', selector: { matchLabels: { a: 's' } }, template: template({ a: 's' }) } });
    const spec = s['spec'] as Record<string, unknown>;
    assert.equal(spec['podManagementPolicy'], 'OrderedReady');
    assert.deepEqual(spec['updateStrategy'], { type: 'RollingUpdate', rollingUpdate: { partition: 0 } });
    assert.equal(spec['revisionHistoryLimit'], 10);
    assert.equal(spec['replicas'], 1);
    assert.deepEqual(spec['persistentVolumeClaimRetentionPolicy'], { whenDeleted: 'Retain', whenScaled: 'Retain' });
    assert.deepEqual(s['status'], {});
  });

  test('Job: completions/parallelism 1, backoffLimit 6, NonIndexed, and a selector on its own uid', async () => {
    const j = await create({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j', namespace: 'default' }, spec: { template: template({}, 'Never') } });
    const spec = j['spec'] as Record<string, unknown>;
    const uid = j.metadata?.uid ?? '';
    assert.deepEqual([spec['completions'], spec['parallelism'], spec['backoffLimit'], spec['completionMode'], spec['suspend']], [1, 1, 6, 'NonIndexed', false]);
    assert.deepEqual(spec['selector'], { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } });
    assert.deepEqual((spec['template'] as { metadata: { labels: unknown } }).metadata.labels, {
      'job-name': 'j',
      'batch.kubernetes.io/job-name': 'j',
      'controller-uid': uid,
      'batch.kubernetes.io/controller-uid': uid,
    });
  });

  test('Service: ClusterIP type, next free cluster IP, TCP, targetPort = port, single-stack IPv4', async () => {
    const s = await create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc', namespace: 'default' }, spec: { selector: { a: 'b' }, ports: [{ port: 8080 }] } });
    assert.deepEqual(s['spec'], {
      selector: { a: 'b' },
      ports: [{ port: 8080, protocol: 'TCP', targetPort: 8080 }],
      type: 'ClusterIP',
      sessionAffinity: 'None',
      internalTrafficPolicy: 'Cluster',
      clusterIP: '10.96.0.2',
      clusterIPs: ['10.96.0.2'],
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
    });
    assert.deepEqual(s['status'], { loadBalancer: {} });
  });

  test('Secret: type Opaque, stringData folded into base64 data', async () => {
    const s = await create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sec', namespace: 'default' }, stringData: { user: 'admin' } });
    assert.equal(s['type'], 'Opaque');
    assert.deepEqual(s['data'], { user: Buffer.from('admin').toString('base64') });
    assert.equal(s['stringData'], undefined);
  });

  test('webhook configurations: Fail, Equivalent, 10 s, empty selectors, reinvocation Never, scope *, port 443', async () => {
    const m = await create({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'hooks' },
      webhooks: [{ name: 'pods.hooks.example.com', admissionReviewVersions: ['v1'], sideEffects: 'None', clientConfig: { service: { name: 's', namespace: 'default' } }, rules: [{ operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['widgets'] }] }],
    });
    const hook = (m['webhooks'] as Record<string, unknown>[])[0];
    assert.deepEqual([hook?.['failurePolicy'], hook?.['matchPolicy'], hook?.['timeoutSeconds'], hook?.['reinvocationPolicy']], ['Fail', 'Equivalent', 10, 'Never']);
    assert.deepEqual([hook?.['namespaceSelector'], hook?.['objectSelector']], [{}, {}]);
    assert.equal((hook?.['rules'] as { scope: string }[])[0]?.scope, '*');
    assert.equal((hook?.['clientConfig'] as { service: { port: number } }).service.port, 443);
    assert.equal(m.metadata?.generation, 1);
  });
});

describe('validation', () => {
  const cases: [string, KubeObject, string][] = [
    [
      'a Job whose pods would restart Always',
      { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'bad-job', namespace: 'default' }, spec: { template: template({}) } },
      'Job.batch "bad-job" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"',
    ],
    [
      'a Deployment without a selector',
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'nosel', namespace: 'default' }, spec: { template: template({ a: 'b' }) } },
      'Deployment.apps "nosel" is invalid: spec.selector: Required value',
    ],
    [
      'a Deployment whose selector misses the template',
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'miss', namespace: 'default' }, spec: { selector: { matchLabels: { a: 'b' } }, template: template({ a: 'c' }) } },
      'Deployment.apps "miss" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"a":"c"}: `selector` does not match template `labels`',
    ],
    [
      'a budget with minAvailable and maxUnavailable',
      { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'both', namespace: 'default' }, spec: { minAvailable: 1, maxUnavailable: 1 } },
      'minAvailable and maxUnavailable cannot be both set',
    ],
    [
      'a user priority class named system-*',
      { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'system-mine' }, value: 10 },
      'PriorityClass.scheduling.k8s.io "system-mine" is invalid: metadata.name: Forbidden: priority class names with \'system-\' prefix are reserved',
    ],
    [
      'a CRD whose name is not plural.group',
      { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'things.example.com' }, spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'widgets', kind: 'Widget' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] } },
      'CustomResourceDefinition.apiextensions.k8s.io "things.example.com" is invalid: metadata.name: Invalid value: "things.example.com": must be spec.names.plural+"."+spec.group',
    ],
    [
      'a webhook without sideEffects',
      { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'v' }, webhooks: [{ name: 'a.b.c', admissionReviewVersions: ['v1'], clientConfig: { url: 'https://x' } }] },
      'ValidatingWebhookConfiguration.admissionregistration.k8s.io "v" is invalid: webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun',
    ],
    [
      'a Service without ports',
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'noports', namespace: 'default' }, spec: {} },
      'Service "noports" is invalid: spec.ports: Required value',
    ],
    [
      'a pod without containers',
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'empty', namespace: 'default' }, spec: { containers: [] } },
      'Pod "empty" is invalid: spec.containers: Required value',
    ],
  ];
  for (const [what, obj, message] of cases) {
    test(what, async () => {
      assert.ok((await rejected(obj)).includes(message), await rejected(obj));
    });
  }

  test('selectors of apps/v1 workloads are immutable', async () => {
    await create({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'rs', namespace: 'default' }, spec: { selector: { matchLabels: { a: 'rs' } }, template: template({ a: 'rs', b: 'x' }) } });
    const r = await server.control.patch('apps/v1', 'ReplicaSet', 'default', 'rs', 'application/merge-patch+json', { spec: { selector: { matchLabels: { a: 'rs', b: 'x' } } } });
    assert.ok(!r.ok);
    assert.match(r.status.message ?? '', /spec\.selector: Invalid value: .*: field is immutable/);
  });

  test('a StatefulSet may only change replicas, template, updateStrategy, ...', async () => {
    await create({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'sts', namespace: 'default' }, spec: { serviceName: 'a', selector: { matchLabels: { a: 'sts' } }, template: template({ a: 'sts' }) } });
    const ok = await server.control.patch('apps/v1', 'StatefulSet', 'default', 'sts', 'application/merge-patch+json', { spec: { replicas: 3 } });
    assert.ok(ok.ok);
    const bad = await server.control.patch('apps/v1', 'StatefulSet', 'default', 'sts', 'application/merge-patch+json', { spec: { serviceName: 'b' } });
    assert.ok(!bad.ok);
    assert.match(bad.status.message ?? '', /spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden/);
  });

  test('an immutable ConfigMap keeps its data', async () => {
    await create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'frozen', namespace: 'default' }, immutable: true, data: { a: '1' } });
    const r = await server.control.patch('v1', 'ConfigMap', 'default', 'frozen', 'application/merge-patch+json', { data: { a: '2' } });
    assert.ok(!r.ok);
    assert.match(r.status.message ?? '', /data: Forbidden: field is immutable when `immutable` is set/);
  });
});

describe('generation', () => {
  test('ReplicaSets bump on spec changes only; ConfigMaps have none; custom resources bump on anything but metadata and status', async () => {
    const ann = await server.control.patch('apps/v1', 'ReplicaSet', 'default', 'rs', 'application/merge-patch+json', { metadata: { annotations: { x: 'y' } } });
    assert.ok(ann.ok);
    assert.equal(ann.value.object.metadata?.generation, 1);
    const spec = await server.control.patch('apps/v1', 'ReplicaSet', 'default', 'rs', 'application/merge-patch+json', { spec: { replicas: 4 } });
    assert.ok(spec.ok);
    assert.equal(spec.value.object.metadata?.generation, 2);
    const cm = await create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nogen', namespace: 'default' } });
    assert.equal(cm.metadata?.generation, undefined);
    await create({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.example.com' },
      spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'gadgets', kind: 'Gadget' }, versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
    });
    await create({ apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g', namespace: 'default' }, spec: { a: 1 } });
    const top = await server.control.patch('example.com/v1', 'Gadget', 'default', 'g', 'application/merge-patch+json', { extra: { b: 2 } });
    assert.ok(top.ok);
    assert.equal(top.value.object.metadata?.generation, 2);
    const status = await server.control.patch('example.com/v1', 'Gadget', 'default', 'g', 'application/merge-patch+json', { status: { ok: true } }, { subresource: 'status' });
    assert.ok(status.ok);
    assert.equal(status.value.object.metadata?.generation, 2);
  });
});
