/**
 * The Helm chart (charts/workloadspread) through the real helm 3.17 (src/testing/helm.ts):
 * `helm lint --strict`, `helm template` with default and non-default values (every document
 * parses, the kinds and key fields are there), values.yaml equals the TS defaults, the chart
 * refuses bad values with helm's own messages, and it renders exactly the objects
 * `workloadspread manifests` builds for the same values (Helm's own labels and `helm test`'s hooks
 * aside): the webhook URL mode, a manager outside the cluster, name overrides, the ServiceAccount,
 * security contexts and the PrometheusRule included. The install round trips against the embedded
 * cluster are chart-install.test.ts and chart-upgrade.test.ts.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { parse } from 'yaml';
import { generatedCrdFiles } from '../api/crd.ts';
import { WHITELIST_CONFIGMAP_KEY } from '../api/keys.ts';
import { parseWhitelist } from '../api/whitelist.ts';
import { parseManifests } from '../k8s/yaml.ts';
import type { KubeObject } from '../k8s/types.ts';
import { webhookConfigurations } from '../webhook/registration.ts';
import { CHART_DIR, helm, helmTemplate, helmTemplateRaw, helmValues } from '../testing/helm.ts';
import { alertRulesFile, managerAlerts } from './install-alerts.ts';
import { installObjects, rbacOptions } from './install-manifests.ts';
import { managerClusterRules, managerNamespaceRules } from './install-rbac.ts';
import { defaultInstallValues, INSTALL_NAMES, INSTALL_VERSION, MANAGER_DEFAULT_NAMES, type InstallValues } from './install-values.ts';

const HELM_LABELS = ['helm.sh/chart', 'app.kubernetes.io/managed-by', 'app.kubernetes.io/instance'];

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test navigation of parsed YAML

const isHook = (o: KubeObject) => o.metadata?.annotations?.['helm.sh/hook'] !== undefined;

/** The release's objects (`helm test`'s hooks left out; `renderHooks` has them). */
async function render(values: Record<string, unknown> = {}): Promise<KubeObject[]> {
  return (await helmTemplate(values, { release: 'ws', namespace: 'workloadspread-system' })).filter((o) => !isHook(o));
}

async function renderHooks(values: Record<string, unknown> = {}): Promise<KubeObject[]> {
  return (await helmTemplate(values, { release: 'ws', namespace: 'workloadspread-system' })).filter(isHook);
}

/** The rendered objects without the CRDs (checked on their own). */
const workloadObjects = (objects: KubeObject[]) => objects.filter((o) => o.kind !== 'CustomResourceDefinition');

function find(objects: KubeObject[], kind: string, name?: string): Obj {
  const found = objects.find((o) => o.kind === kind && (name === undefined || o.metadata?.name === name));
  assert.ok(found, `no ${kind} ${name ?? ''} in ${objects.map((o) => o.kind).join(', ')}`);
  return found as Obj;
}

function key(o: KubeObject): string {
  return `${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
}

/** Removes the labels only Helm adds, at every level (objects and pod templates). */
function withoutHelmLabels(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutHelmLabels);
  if (typeof v !== 'object' || v === null) return v;
  const out: Obj = {};
  for (const [k, val] of Object.entries(v)) {
    if (k === 'labels' && typeof val === 'object' && val !== null) {
      out[k] = Object.fromEntries(Object.entries(val).filter(([l]) => !HELM_LABELS.includes(l)));
    } else {
      out[k] = withoutHelmLabels(val);
    }
  }
  return out;
}

const NON_DEFAULT: Record<string, unknown> = {
  namespace: { create: true, name: 'ws-system' },
  crds: { keep: false },
  image: { repository: 'registry.example.com:5000/platform/workloadspread', tag: '1.2.3', pullPolicy: 'Always' },
  imagePullSecrets: [{ name: 'pull' }],
  replicas: 3,
  leaderElection: { leaseDuration: '1m30s', renewDeadline: '1500ms', retryPeriod: '1.2s' },
  logLevel: 'debug',
  manager: { workers: 8, unschedulableRecoverySeconds: 120, kubeApi: { qps: 7.5, burst: 120 }, extraArgs: ['--extra=1'], guardPodDeletion: true },
  webhook: { port: 10250, failurePolicy: 'Ignore', timeoutSeconds: 5, scope: 'cluster', excludeNamespaces: ['team-a', 'kube-system'], namespaceSelector: { matchExpressions: [{ key: 'workloadspread.io/enabled', operator: 'In', values: ['true'] }] } },
  certificates: { certManager: { enabled: true } },
  metrics: { port: 9090, serviceMonitor: { enabled: true, interval: '30s', scrapeTimeout: '10s', labels: { release: 'prometheus' } } },
  health: { port: 9091 },
  whitelist: { workloads: [{ Group: 'argoproj.io', Version: 'v1alpha1', Kind: 'Rollout', subResources: [{ Group: 'apps', Version: 'v1', Kind: 'ReplicaSet' }], replicasPath: 'spec.replicas' }] },
  rbac: { customWorkloads: [{ apiGroup: 'argoproj.io', resources: ['rollouts'] }] },
  serviceAccount: { annotations: { 'iam.example.com/role': 'ws' } },
  resources: { requests: { cpu: '200m', memory: '256Mi' }, limits: { cpu: null, memory: '1Gi' } }, // maps merge with the defaults; null removes one
  podDisruptionBudget: { enabled: false },
  priorityClassName: 'system-cluster-critical',
  hostNetwork: true,
  podAnnotations: { 'prometheus.io/scrape': 'true' },
  podLabels: { team: 'platform' },
  nodeSelector: { 'node-role.example.com/infra': 'true' },
  tolerations: [{ key: 'infra', operator: 'Exists', effect: 'NoSchedule' }],
  affinity: { podAntiAffinity: null, nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] }] } } },
  topologySpreadConstraints: [],
};

describe('chart metadata and sources of truth', () => {
  test('helm lint --strict passes', async () => {
    const r = await helm(['lint', '--strict', CHART_DIR]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
    assert.doesNotMatch(r.stdout, /\[(WARNING|ERROR)\]/);
  });

  test('values.yaml is exactly the TS defaults (install-values.ts), as helm reads it', async () => {
    assert.deepEqual(parse(readFileSync(`${CHART_DIR}/values.yaml`, 'utf8')), defaultInstallValues());
    assert.deepEqual(await helmValues({}), defaultInstallValues());
  });

  test('one version everywhere: Chart.yaml version and appVersion, package.json, INSTALL_VERSION', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    const metadata = parse(readFileSync(`${CHART_DIR}/Chart.yaml`, 'utf8')) as Record<string, unknown>;
    assert.equal(metadata['apiVersion'], 'v2');
    assert.equal(metadata['appVersion'], pkg.version);
    assert.equal(metadata['version'], pkg.version);
    assert.equal(INSTALL_VERSION, pkg.version);
  });

  test('files/prometheus-rules.yaml holds the generated alerting rules (npx tsx scripts/gen-alerts.ts writes it)', () => {
    assert.equal(readFileSync(`${CHART_DIR}/files/prometheus-rules.yaml`, 'utf8'), alertRulesFile());
  });

  test('the default names are the manager\'s flag defaults, so the default install passes no name flags', () => {
    for (const [key, name] of Object.entries(MANAGER_DEFAULT_NAMES)) assert.equal(INSTALL_NAMES[key as keyof typeof MANAGER_DEFAULT_NAMES], name, key);
  });

  test('files/crds/ holds the generated CRDs, byte for byte (npx tsx scripts/gen-crds.ts writes both copies); no crds/ folder, which Helm would never upgrade', () => {
    const files = generatedCrdFiles();
    assert.deepEqual(readdirSync(`${CHART_DIR}/files/crds`).sort(), files.map((f) => f.fileName).sort());
    for (const f of files) assert.equal(readFileSync(`${CHART_DIR}/files/crds/${f.fileName}`, 'utf8'), f.content, f.fileName);
    assert.ok(!readdirSync(CHART_DIR).includes('crds'));
  });
});

describe('the CRDs are part of the release', () => {
  test('rendered as generated, with the install labels and helm.sh/resource-policy: keep', async () => {
    const crds = (await render()).filter((o) => o.kind === 'CustomResourceDefinition');
    const generated = generatedCrdFiles().map((f) => {
      const parsed = parseManifests(f.content);
      assert.ok(parsed.ok);
      return parsed.documents[0]?.object as KubeObject;
    });
    assert.deepEqual(crds.map((c) => c.metadata?.name), generated.map((c) => c.metadata?.name));
    for (const [i, crd] of crds.entries()) {
      assert.deepEqual(crd.metadata?.annotations, { 'helm.sh/resource-policy': 'keep' });
      assert.equal(crd.metadata?.labels?.['app.kubernetes.io/instance'], 'ws');
      const { metadata: _m, ...rest } = crd;
      const { metadata: _g, ...want } = generated[i] as KubeObject;
      assert.deepEqual(rest, want);
    }
  });

  test('crds.keep=false drops the keep annotation; crds.install=false leaves the CRDs out', async () => {
    const unkept = (await render({ crds: { keep: false } })).filter((o) => o.kind === 'CustomResourceDefinition');
    assert.equal(unkept.length, 2);
    for (const crd of unkept) assert.equal(crd.metadata?.annotations, undefined);
    assert.ok(!(await render({ crds: { install: false } })).some((o) => o.kind === 'CustomResourceDefinition'));
  });
});

describe('helm template with default values', () => {
  let objects: KubeObject[] = [];
  before(async () => {
    objects = workloadObjects(await render());
  });

  test('renders the install: kinds in order, all in the release namespace', () => {
    assert.deepEqual(objects.map((o) => o.kind).sort(), ['ClusterRole', 'ClusterRoleBinding', 'ConfigMap', 'Deployment', 'MutatingWebhookConfiguration', 'PodDisruptionBudget', 'Role', 'RoleBinding', 'Service', 'ServiceAccount', 'ValidatingWebhookConfiguration']);
    for (const o of objects) {
      const clusterScoped = ['ClusterRole', 'ClusterRoleBinding', 'MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'].includes(o.kind ?? '');
      assert.equal(o.metadata?.namespace, clusterScoped ? undefined : 'workloadspread-system', key(o));
      assert.equal(o.metadata?.labels?.['app.kubernetes.io/managed-by'], 'Helm');
      assert.equal(o.metadata?.labels?.['app.kubernetes.io/instance'], 'ws');
      assert.equal(o.metadata?.labels?.['helm.sh/chart'], 'workloadspread-0.1.0');
    }
  });

  test('Deployment: 2 replicas, leader election, hardened pod, probes, resources, spread across nodes and zones', () => {
    const d = find(objects, 'Deployment');
    assert.equal(d.spec.replicas, 2);
    assert.deepEqual(d.spec.strategy.rollingUpdate, { maxUnavailable: 0, maxSurge: 1 });
    const pod = d.spec.template.spec;
    assert.deepEqual(pod.securityContext, { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } });
    const c = pod.containers[0];
    assert.equal(c.image, 'workloadspread:0.1.0');
    assert.deepEqual(c.securityContext, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } });
    assert.ok(c.args.includes('--leader-elect=true'));
    // The manager's own defaults (controller-runtime's), stated so the Deployment shows them.
    for (const arg of ['--leader-elect-lease-duration=15s', '--leader-elect-renew-deadline=10s', '--leader-elect-retry-period=2s', '--kube-api-qps=20', '--kube-api-burst=30']) assert.ok(c.args.includes(arg), arg);
    assert.ok(c.args.includes('--namespace=$(POD_NAMESPACE)'));
    assert.ok(c.args.includes('--webhook-port=9443'));
    assert.ok(c.args.includes('--health-addr=:8081'));
    assert.ok(!c.args.some((a: string) => a.startsWith('--cert-dir')));
    assert.deepEqual(c.env[0], { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } });
    assert.deepEqual(c.livenessProbe.httpGet, { path: '/healthz', port: 'health' });
    assert.deepEqual(c.readinessProbe.httpGet, { path: '/readyz', port: 'health' });
    assert.deepEqual(c.ports.map((p: Obj) => [p.name, p.containerPort]), [['webhook', 9443], ['metrics', 8080], ['health', 8081]]);
    assert.deepEqual(c.resources, { requests: { cpu: '100m', memory: '192Mi' }, limits: { cpu: '1', memory: '512Mi' } });
    assert.deepEqual(c.volumeMounts, [{ name: 'tmp', mountPath: '/tmp' }]);
    assert.equal(pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey, 'kubernetes.io/hostname');
    assert.equal(pod.topologySpreadConstraints[0].topologyKey, 'topology.kubernetes.io/zone');
    assert.deepEqual(d.spec.selector.matchLabels, { 'app.kubernetes.io/name': 'workloadspread', 'app.kubernetes.io/component': 'manager' });
    for (const [k, v] of Object.entries(d.spec.selector.matchLabels)) assert.equal(d.spec.template.metadata.labels[k], v);
  });

  test('Service 443 → the webhook port; PDB allows one manager pod down', () => {
    const s = find(objects, 'Service');
    assert.equal(s.metadata.name, INSTALL_NAMES.service);
    assert.deepEqual(s.spec.ports, [{ name: 'https', port: 443, targetPort: 'webhook', protocol: 'TCP' }]);
    const pdb = find(objects, 'PodDisruptionBudget');
    assert.equal(pdb.spec.maxUnavailable, 1);
    assert.deepEqual(pdb.spec.selector.matchLabels, s.spec.selector);
  });

  test('RBAC: exactly the rules the code needs, bound to the manager ServiceAccount', () => {
    const rules = (kind: string) => find(objects, kind).rules.map((r: Obj) => `${r.apiGroups.join(',')}|${r.resources.join(',')}|${r.verbs.join(',')}|${(r.resourceNames ?? []).join(',')}`);
    assert.deepEqual(rules('ClusterRole'), [
      '|pods|get,list,watch,patch,delete|',
      '|pods/eviction|create|',
      '|nodes|list,watch|',
      'apps.kruise.io|workloadspreads|get,list,watch|',
      'apps.kruise.io|workloadspreads/status|update|',
      'apps|deployments,replicasets,statefulsets|list,watch|',
      'batch|jobs|list,watch|',
      'apps.kruise.io|clonesets|get,list,watch|',
      'apps.kruise.io|statefulsets|get|',
      'policy.workloadspread.io|domaindisruptionbudgets|get,list,watch|',
      'policy.workloadspread.io|domaindisruptionbudgets/status|update|',
      'events.k8s.io|events|create,patch|',
      'admissionregistration.k8s.io|mutatingwebhookconfigurations|get,list,watch,update|workloadspread-mutating-webhook-configuration',
      'admissionregistration.k8s.io|validatingwebhookconfigurations|get,list,watch,update|workloadspread-validating-webhook-configuration',
    ]);
    assert.deepEqual(rules('Role'), [
      'coordination.k8s.io|leases|get,update|workloadspread-manager',
      'coordination.k8s.io|leases|create|',
      '|secrets|get,update|workloadspread-webhook-certs',
      '|secrets|create|',
      '|configmaps|list,watch|workloadspread-configuration',
    ]);
    assert.deepEqual(find(objects, 'ClusterRole').rules, managerClusterRules(rbacOptions(defaultInstallValues())));
    assert.deepEqual(find(objects, 'Role').rules, managerNamespaceRules(rbacOptions(defaultInstallValues())));
    for (const binding of ['ClusterRoleBinding', 'RoleBinding']) {
      assert.deepEqual(find(objects, binding).subjects, [{ kind: 'ServiceAccount', name: 'workloadspread-manager', namespace: 'workloadspread-system' }]);
    }
    // No wildcard anywhere.
    for (const r of [...find(objects, 'ClusterRole').rules, ...find(objects, 'Role').rules]) {
      for (const field of ['apiGroups', 'resources', 'verbs']) assert.ok(!r[field].includes('*'), JSON.stringify(r));
    }
  });

  test('webhook configurations: what src/webhook/registration.ts registers, pointed at the Service, caBundle left to the manager', () => {
    const wanted = webhookConfigurations({
      managerNamespace: 'workloadspread-system',
      endpoint: { service: { name: INSTALL_NAMES.service, namespace: 'workloadspread-system', port: 443 } },
      scope: { kind: 'namespaces', workloadSpreads: [], budgets: [] },
    });
    for (const [kind, want] of [['MutatingWebhookConfiguration', wanted.mutating], ['ValidatingWebhookConfiguration', wanted.validating]] as const) {
      const have = find(objects, kind);
      assert.equal(have.metadata.name, want.metadata?.name);
      assert.deepEqual(have.webhooks, want['webhooks']);
    }
    const m = find(objects, 'MutatingWebhookConfiguration').webhooks[0];
    assert.equal(m.failurePolicy, 'Fail');
    // The namespaces scope: installed, the pod webhooks reach no namespace until the manager names them.
    assert.deepEqual(m.namespaceSelector, {
      matchExpressions: [
        { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['workloadspread-system', 'kube-system'] },
        { key: 'kubernetes.io/metadata.name', operator: 'DoesNotExist' },
      ],
    });
    assert.equal(m.clientConfig.caBundle, undefined);
    assert.ok(!find(objects, 'Deployment').spec.template.spec.containers[0].args.some((a: string) => a.startsWith('--webhook-scope')), 'namespaces is the manager\'s default');
  });

  test('scope cluster: the pod webhooks reach every namespace but the excluded ones, and the manager is told so', async () => {
    const cluster = await render({ webhook: { scope: 'cluster' } });
    for (const w of find(cluster, 'MutatingWebhookConfiguration').webhooks) {
      assert.deepEqual(w.namespaceSelector, { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['workloadspread-system', 'kube-system'] }] });
    }
    assert.ok(find(cluster, 'Deployment').spec.template.spec.containers[0].args.includes('--webhook-scope=cluster'));
  });

  test('cert-manager with the namespaces scope: access to our webhook configurations by name (the selectors), none to Secrets', async () => {
    const objects2 = await render({ certificates: { certManager: { enabled: true } } });
    const rules = (find(objects2, 'ClusterRole').rules as Obj[]).filter((r) => r.apiGroups.includes('admissionregistration.k8s.io'));
    assert.deepEqual(rules.map((r) => [r.resources, r.verbs, r.resourceNames]), [
      [['mutatingwebhookconfigurations'], ['get', 'list', 'watch', 'update'], ['workloadspread-mutating-webhook-configuration']],
      [['validatingwebhookconfigurations'], ['get', 'list', 'watch', 'update'], ['workloadspread-validating-webhook-configuration']],
    ]);
    assert.ok(!(find(objects2, 'Role').rules as Obj[]).some((r) => r.resources.includes('secrets')));
  });

  test('the whitelist ConfigMap holds an empty whitelist the manager parses', () => {
    const cm = find(objects, 'ConfigMap');
    assert.equal(cm.metadata.name, 'workloadspread-configuration');
    const parsed = parseWhitelist(cm.data[WHITELIST_CONFIGMAP_KEY]);
    assert.ok(parsed.ok);
    assert.deepEqual(parsed.whitelist.workloads, []);
  });

  test('namespace.name overrides the release namespace everywhere', async () => {
    for (const o of await render({ namespace: { name: 'elsewhere' } })) {
      if (o.metadata?.namespace !== undefined) assert.equal(o.metadata.namespace, 'elsewhere', key(o));
    }
  });
});

describe('helm template with non-default values', () => {
  let objects: KubeObject[] = [];
  before(async () => {
    objects = await render(NON_DEFAULT);
  });

  test('guardPodDeletion: every pod deletion reaches the manager (no objectSelector on the pod DELETE webhook)', () => {
    const hooks = find(objects, 'ValidatingWebhookConfiguration').webhooks as { name: string; objectSelector: unknown }[];
    assert.deepEqual(hooks.find((h) => h.name === 'vpod.workloadspread.io')?.objectSelector, {});
    assert.ok(find(objects, 'Deployment').spec.template.spec.containers[0].args.includes('--guard-pod-deletion=true'));
  });

  test('namespace, cert-manager objects, no PDB', () => {
    const kinds = objects.map((o) => o.kind);
    assert.ok(kinds.includes('Namespace'));
    assert.ok(kinds.includes('Issuer') && kinds.includes('Certificate'));
    assert.ok(!kinds.includes('PodDisruptionBudget'));
    assert.equal(find(objects, 'Namespace').metadata.name, 'ws-system');
    const cert = find(objects, 'Certificate');
    assert.deepEqual(cert.spec.dnsNames, ['workloadspread-webhook.ws-system.svc', 'workloadspread-webhook.ws-system.svc.cluster.local']);
    assert.deepEqual(cert.spec.issuerRef, { kind: 'Issuer', name: 'workloadspread-selfsigned' });
  });

  test('Deployment follows the values', () => {
    const d = find(objects, 'Deployment');
    assert.equal(d.metadata.namespace, 'ws-system');
    assert.equal(d.spec.replicas, 3);
    const pod = d.spec.template.spec;
    const c = pod.containers[0];
    assert.equal(c.image, 'registry.example.com:5000/platform/workloadspread:1.2.3');
    assert.equal(c.imagePullPolicy, 'Always');
    for (const arg of ['--webhook-port=10250', '--metrics-addr=:9090', '--health-addr=:9091', '--workers=8', '--unschedulable-recovery-seconds=120', '--log-level=debug', '--cert-dir=/etc/workloadspread/certs', '--extra=1']) assert.ok(c.args.includes(arg), arg);
    for (const arg of ['--kube-api-qps=7.5', '--kube-api-burst=120', '--leader-elect-lease-duration=1m30s', '--leader-elect-renew-deadline=1500ms', '--leader-elect-retry-period=1.2s']) assert.ok(c.args.includes(arg), arg);
    assert.deepEqual(c.resources, { requests: { cpu: '200m', memory: '256Mi' }, limits: { memory: '1Gi' } });
    assert.deepEqual(c.volumeMounts[1], { name: 'certs', mountPath: '/etc/workloadspread/certs', readOnly: true });
    assert.deepEqual(pod.volumes[1], { name: 'certs', secret: { secretName: 'workloadspread-webhook-tls' } });
    assert.equal(pod.priorityClassName, 'system-cluster-critical');
    assert.deepEqual(pod.imagePullSecrets, [{ name: 'pull' }]);
    assert.deepEqual(pod.nodeSelector, { 'node-role.example.com/infra': 'true' });
    assert.equal(pod.tolerations[0].key, 'infra');
    assert.deepEqual(Object.keys(pod.affinity), ['nodeAffinity']);
    assert.equal(pod.topologySpreadConstraints, undefined);
    assert.equal(d.spec.template.metadata.labels.team, 'platform');
    assert.equal(d.spec.template.metadata.annotations['prometheus.io/scrape'], 'true');
    assert.equal(find(objects, 'ServiceAccount').metadata.annotations['iam.example.com/role'], 'ws');
  });

  test('webhooks: failure policy, timeout, excluded namespaces, extra selector, cert-manager CA injection', () => {
    for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
      const config = find(objects, kind);
      assert.equal(config.metadata.annotations['cert-manager.io/inject-ca-from'], 'ws-system/workloadspread-webhook');
      for (const w of config.webhooks) {
        assert.equal(w.failurePolicy, 'Ignore');
        assert.equal(w.timeoutSeconds, 5);
        assert.equal(w.clientConfig.service.namespace, 'ws-system');
        if (w.name === 'vworkloadspread.workloadspread.io' || w.name === 'vdomaindisruptionbudget.workloadspread.io') {
          assert.deepEqual(w.namespaceSelector, {});
        } else {
          assert.deepEqual(w.namespaceSelector.matchExpressions, [
            { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['ws-system', 'kube-system', 'team-a'] },
            { key: 'workloadspread.io/enabled', operator: 'In', values: ['true'] },
          ]);
        }
      }
    }
  });

  test('RBAC: no Secret or webhook-configuration access with cert-manager and the cluster scope; custom workloads and their scale', () => {
    const cluster = find(objects, 'ClusterRole').rules as Obj[];
    assert.ok(!cluster.some((r) => r.apiGroups.includes('admissionregistration.k8s.io')));
    assert.deepEqual(cluster.slice(-2), [
      { apiGroups: ['argoproj.io'], resources: ['rollouts'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['argoproj.io'], resources: ['rollouts/scale'], verbs: ['get'] },
    ]);
    assert.ok(!(find(objects, 'Role').rules as Obj[]).some((r) => r.resources.includes('secrets')));
  });

  test('the whitelist reaches the ConfigMap as JSON the manager parses', () => {
    const parsed = parseWhitelist(find(objects, 'ConfigMap').data[WHITELIST_CONFIGMAP_KEY]);
    assert.ok(parsed.ok, parsed.ok ? '' : parsed.error);
    assert.deepEqual(parsed.whitelist.workloads.map((w) => `${w.group}/${w.version}/${w.kind}:${w.replicasPath}:${w.subResources.map((s) => s.kind).join()}`), ['argoproj.io/v1alpha1/Rollout:spec.replicas:ReplicaSet']);
  });

  test('hostNetwork: the pods on the node network with cluster DNS still working, the namespace allowing it', () => {
    const pod = find(objects, 'Deployment').spec.template.spec;
    assert.equal(pod.hostNetwork, true);
    assert.equal(pod.dnsPolicy, 'ClusterFirstWithHostNet');
    assert.equal(find(objects, 'Namespace').metadata.labels['pod-security.kubernetes.io/enforce'], 'privileged');
  });

  test('dnsPolicy: empty keeps Kubernetes\' default; a value of your own wins, with or without hostNetwork', async () => {
    const pod = async (values: Record<string, unknown>) => find(await render(values), 'Deployment').spec.template.spec;
    const plain = await pod({});
    assert.equal(plain.hostNetwork, undefined);
    assert.equal(plain.dnsPolicy, undefined);
    assert.equal((await pod({ hostNetwork: true, dnsPolicy: 'Default' })).dnsPolicy, 'Default');
    assert.equal((await pod({ dnsPolicy: 'None' })).dnsPolicy, 'None');
  });

  test('ServiceMonitor: a metrics Service and a monitor scraping it, with your labels, interval and timeout', () => {
    const service = find(objects, 'Service', INSTALL_NAMES.metricsService);
    assert.equal(service.metadata.labels['app.kubernetes.io/component'], 'metrics');
    assert.deepEqual(service.spec.ports, [{ name: 'metrics', port: 9090, targetPort: 'metrics', protocol: 'TCP' }]);
    assert.deepEqual(service.spec.selector, find(objects, 'Deployment').spec.selector.matchLabels);
    const monitor = find(objects, 'ServiceMonitor');
    assert.equal(monitor.metadata.labels.release, 'prometheus');
    assert.deepEqual(monitor.spec.selector.matchLabels, { 'app.kubernetes.io/name': 'workloadspread', 'app.kubernetes.io/component': 'metrics' });
    assert.deepEqual(monitor.spec.namespaceSelector, { matchNames: ['ws-system'] });
    assert.deepEqual(monitor.spec.endpoints, [{ port: 'metrics', path: '/metrics', scheme: 'http', interval: '30s', scrapeTimeout: '10s' }]);
    // The webhook Service must not be selected by the monitor.
    assert.equal(find(objects, 'Service', INSTALL_NAMES.service).metadata.labels['app.kubernetes.io/component'], undefined);
  });

  test('an issuerRef of your own replaces the self-signed Issuer', async () => {
    const own = await render({ certificates: { certManager: { enabled: true, issuerRef: { kind: 'ClusterIssuer', name: 'corp-ca' } } } });
    assert.ok(!own.some((o) => o.kind === 'Issuer'));
    assert.deepEqual(find(own, 'Certificate').spec.issuerRef, { kind: 'ClusterIssuer', name: 'corp-ca' });
  });

  test('one replica without leader election: no Lease rules, no --leader-elect', async () => {
    const single = await render({ replicas: 1, leaderElection: { enabled: false } });
    assert.ok(!find(single, 'Deployment').spec.template.spec.containers[0].args.some((a: string) => a.startsWith('--leader-elect')));
    assert.ok(!(find(single, 'Role').rules as Obj[]).some((r) => r.resources.includes('leases')));
  });
});

/** Who may call the webhook (issue 14): client CA, listen address, NetworkPolicy, privileged subset patches. */
const SECURITY: Record<string, unknown> = {
  manager: { allowPrivilegedSubsetPatches: true },
  webhook: { host: '10.1.2.3', clientAuth: { caBundle: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n', allowedNames: ['kube-apiserver-admission', 'apiserver-2'] } },
  networkPolicy: { enabled: true, webhookFrom: [{ ipBlock: { cidr: '10.0.0.0/24' } }], metricsFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }] },
};

describe('helm template with the security values (issue 14)', () => {
  let objects: KubeObject[] = [];
  before(async () => {
    objects = await render(SECURITY);
  });

  test('the client CA becomes a ConfigMap mounted for --client-ca-file, with the allowed names; the listen address and privileged patches reach the flags', () => {
    assert.equal(find(objects, 'ConfigMap', INSTALL_NAMES.clientCaConfigMap).data['ca.crt'], (SECURITY['webhook'] as Obj).clientAuth.caBundle);
    const pod = find(objects, 'Deployment').spec.template.spec;
    const c = pod.containers[0];
    for (const arg of ['--webhook-host=10.1.2.3', '--client-ca-file=/etc/workloadspread/client-ca/ca.crt', '--client-cert-allowed-names=kube-apiserver-admission,apiserver-2', '--allow-privileged-subset-patches=true']) {
      assert.ok(c.args.includes(arg), arg);
    }
    assert.deepEqual(c.volumeMounts.at(-1), { name: 'client-ca', mountPath: '/etc/workloadspread/client-ca', readOnly: true });
    assert.deepEqual(pod.volumes.at(-1), { name: 'client-ca', configMap: { name: INSTALL_NAMES.clientCaConfigMap } });
  });

  test('the NetworkPolicy admits only the three ports, each from its peers (none given: any source)', () => {
    const np = find(objects, 'NetworkPolicy');
    assert.deepEqual(np.spec.podSelector, { matchLabels: { 'app.kubernetes.io/name': 'workloadspread', 'app.kubernetes.io/component': 'manager' } });
    assert.deepEqual(np.spec.policyTypes, ['Ingress']);
    assert.deepEqual(np.spec.ingress, [
      { ports: [{ protocol: 'TCP', port: 9443 }], from: [{ ipBlock: { cidr: '10.0.0.0/24' } }] },
      { ports: [{ protocol: 'TCP', port: 8080 }], from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }] },
      { ports: [{ protocol: 'TCP', port: 8081 }] },
    ]);
  });

  test('defaults: no client CA, no NetworkPolicy, no listen address flag', async () => {
    const plain = await render();
    assert.ok(!plain.some((o) => o.kind === 'NetworkPolicy' || o.metadata?.name === INSTALL_NAMES.clientCaConfigMap));
    const args = find(plain, 'Deployment').spec.template.spec.containers[0].args as string[];
    assert.ok(!args.some((a) => a.startsWith('--client-ca-file') || a.startsWith('--webhook-host') || a.startsWith('--allow-privileged')), args.join(' '));
  });

  test('allowed names without a CA are refused', async () => {
    const r = await helmTemplateRaw({ webhook: { clientAuth: { allowedNames: ['x'] } } });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /allowedNames needs webhook\.clientAuth\.caBundle/);
  });
});

/** What a platform engineer sets (issue 22): names, an existing ServiceAccount, OpenShift-friendly security contexts, alerts. */
const PLATFORM: Record<string, unknown> = {
  fullnameOverride: 'platform-ws',
  serviceAccount: { create: false, name: 'ws-identity' },
  podSecurityContext: { runAsUser: null, runAsGroup: null },
  securityContext: { readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
  certificates: { certManager: { enabled: true } },
  metrics: { prometheusRule: { enabled: true, labels: { release: 'prometheus' } }, serviceMonitor: { enabled: true } },
  networkPolicy: { enabled: true },
  webhook: { clientAuth: { caBundle: 'PEM' } },
};

describe('webhook.url: the webhooks called at a URL, never beside a Service reference', () => {
  test('helm template --set webhook.url=https://example:9443 renders url (with each webhook\'s path) and no service', async () => {
    const r = await helm(['template', 'ws', CHART_DIR, '--namespace', 'workloadspread-system', '--set', 'webhook.url=https://example:9443']);
    assert.equal(r.code, 0, r.stderr);
    const parsed = parseManifests(r.stdout);
    assert.ok(parsed.ok);
    const objects = parsed.documents.map((d) => d.object as KubeObject);
    const hooks = [...find(objects, 'MutatingWebhookConfiguration').webhooks, ...find(objects, 'ValidatingWebhookConfiguration').webhooks] as Obj[];
    assert.deepEqual(hooks.map((w) => [w.name, w.clientConfig]), [
      ['mpod.workloadspread.io', { url: 'https://example:9443/mutate-pod' }],
      ['vpod.workloadspread.io', { url: 'https://example:9443/validate-pod' }],
      ['vpodeviction.workloadspread.io', { url: 'https://example:9443/validate-pod' }],
      ['vworkloadspread.workloadspread.io', { url: 'https://example:9443/validate-apps-kruise-io-workloadspread' }],
      ['vdomaindisruptionbudget.workloadspread.io', { url: 'https://example:9443/validate-policy-workloadspread-io-domaindisruptionbudget' }],
    ]);
    assert.doesNotMatch(r.stdout, /\n\s+service:\n/, 'no service reference anywhere');
    // The in-cluster manager is told the URL (its generated certificate then covers the host); it never registers.
    const args = find(objects, 'Deployment').spec.template.spec.containers[0].args as string[];
    assert.ok(args.includes('--webhook-url=https://example:9443'), args.join(' '));
    assert.ok(!args.some((a) => a.startsWith('--register-webhooks')), args.join(' '));
  });

  test('the same configurations src/webhook/registration.ts builds for that URL (trailing slashes dropped)', async () => {
    const objects = await render({ webhook: { url: 'https://ws.example.com/hooks//' } });
    const wanted = webhookConfigurations({ managerNamespace: 'workloadspread-system', endpoint: { url: 'https://ws.example.com/hooks' }, scope: { kind: 'namespaces', workloadSpreads: [], budgets: [] } });
    assert.deepEqual(find(objects, 'MutatingWebhookConfiguration').webhooks, wanted.mutating['webhooks']);
    assert.deepEqual(find(objects, 'ValidatingWebhookConfiguration').webhooks, wanted.validating['webhooks']);
  });

  test('manager.enabled=false: no Deployment, Service, PDB, NetworkPolicy or ServiceMonitor; the ServiceAccount and RBAC stay for the manager outside', async () => {
    const objects = await render({ manager: { enabled: false }, webhook: { url: 'https://10.0.0.5:9443' }, networkPolicy: { enabled: true }, metrics: { serviceMonitor: { enabled: true }, prometheusRule: { enabled: true } } });
    assert.deepEqual(objects.map((o) => o.kind).filter((k) => k !== 'CustomResourceDefinition').sort(), ['ClusterRole', 'ClusterRoleBinding', 'ConfigMap', 'MutatingWebhookConfiguration', 'PrometheusRule', 'Role', 'RoleBinding', 'ServiceAccount', 'ValidatingWebhookConfiguration']);
    const alerts = (find(objects, 'PrometheusRule').spec.groups[0].rules as Obj[]).map((r) => r.alert);
    assert.ok(!alerts.includes('WorkloadSpreadManagerUnavailable'), 'no alert on a Deployment that is not there');
    assert.ok(alerts.includes('WorkloadSpreadAdmissionErrors'));
  });

  test('refused: manager.enabled=false without a URL; a URL that is not https; --register-webhooks or --webhook-url in extraArgs', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ manager: { enabled: false } }, /manager\.enabled=false needs webhook\.url/],
      [{ webhook: { url: 'http://example:9443' } }, /- webhook\.url: Does not match pattern/],
      [{ webhook: { url: 'https://user@example:9443' } }, /- webhook\.url: Does not match pattern/],
      [{ webhook: { url: 'https://example:9443/?x=1' } }, /- webhook\.url: Does not match pattern/],
      [{ manager: { extraArgs: ['--register-webhooks'] } }, /manager\.extraArgs: --register-webhooks is not for the chart/],
      [{ manager: { extraArgs: ['--webhook-url=https://x'] } }, /manager\.extraArgs: --webhook-url=https:\/\/x is not for the chart/],
    ];
    for (const [values, pattern] of cases) {
      const r = await helmTemplateRaw(values);
      assert.notEqual(r.code, 0, JSON.stringify(values));
      assert.match(r.stderr, pattern);
    }
    assert.throws(() => installObjects({ namespace: 'x', values: { ...defaultInstallValues(), manager: { ...defaultInstallValues().manager, enabled: false } } }), /manager\.enabled=false needs webhook\.url/);
  });
});

describe('fitting a platform: names, ServiceAccount, security contexts, alerts, helm test', () => {
  let objects: KubeObject[] = [];
  before(async () => {
    objects = await render(PLATFORM);
  });

  test('fullnameOverride renames every object but the webhook configurations; the manager is told the names it looks up', async () => {
    const names = objects.filter((o) => o.kind !== 'CustomResourceDefinition').map((o) => `${o.kind}/${o.metadata?.name}`).sort();
    assert.deepEqual(names, [
      'Certificate/platform-ws-webhook',
      'ClusterRole/platform-ws-manager',
      'ClusterRoleBinding/platform-ws-manager',
      'ConfigMap/platform-ws-configuration',
      'ConfigMap/platform-ws-webhook-client-ca',
      'Deployment/platform-ws-manager',
      'Issuer/platform-ws-selfsigned',
      `MutatingWebhookConfiguration/${INSTALL_NAMES.mutating}`,
      'NetworkPolicy/platform-ws-manager',
      'PodDisruptionBudget/platform-ws-manager',
      'PrometheusRule/platform-ws-manager',
      'Role/platform-ws-manager',
      'RoleBinding/platform-ws-manager',
      'Service/platform-ws-metrics',
      'Service/platform-ws-webhook',
      'ServiceMonitor/platform-ws-manager',
      `ValidatingWebhookConfiguration/${INSTALL_NAMES.validating}`,
    ]);
    const pod = find(objects, 'Deployment').spec.template.spec;
    for (const arg of ['--webhook-service=platform-ws-webhook', '--cert-secret=platform-ws-webhook-certs', '--leader-election-id=platform-ws-manager', '--whitelist-configmap=platform-ws-configuration']) assert.ok(pod.containers[0].args.includes(arg), arg);
    assert.deepEqual(pod.volumes.map((v: Obj) => v.secret?.secretName ?? v.configMap?.name).filter(Boolean), ['platform-ws-webhook-tls', 'platform-ws-webhook-client-ca']);
    for (const w of find(objects, 'ValidatingWebhookConfiguration').webhooks) assert.equal(w.clientConfig.service.name, 'platform-ws-webhook');
    assert.equal(find(objects, 'MutatingWebhookConfiguration').metadata.annotations['cert-manager.io/inject-ca-from'], 'workloadspread-system/platform-ws-webhook');
    const roleNames = (find(objects, 'Role').rules as Obj[]).map((r) => (r.resourceNames ?? []).join()).filter((n) => n !== '');
    assert.deepEqual(roleNames, ['platform-ws-manager', 'platform-ws-configuration'], 'the Lease and the whitelist (cert-manager: no Secret)');
    // nameOverride alone does the same; fullnameOverride wins.
    assert.equal(find(await render({ nameOverride: 'ws2' }), 'Deployment').metadata.name, 'ws2-manager');
    assert.equal(find(await render({ nameOverride: 'ws2', fullnameOverride: 'ws3' }), 'Deployment').metadata.name, 'ws3-manager');
    // The generated certificates' Secret follows the name too.
    assert.ok((find(await render({ fullnameOverride: 'ws3' }), 'Role').rules as Obj[]).some((r) => r.resourceNames?.[0] === 'ws3-webhook-certs'));
  });

  test('serviceAccount.create=false: none rendered, the Deployment and both bindings use the name given', () => {
    assert.ok(!objects.some((o) => o.kind === 'ServiceAccount'));
    assert.equal(find(objects, 'Deployment').spec.template.spec.serviceAccountName, 'ws-identity');
    for (const binding of ['ClusterRoleBinding', 'RoleBinding']) assert.deepEqual(find(objects, binding).subjects, [{ kind: 'ServiceAccount', name: 'ws-identity', namespace: 'workloadspread-system' }]);
  });

  test('security contexts: the defaults can lose keys (OpenShift assigns the user) and be replaced', () => {
    const pod = find(objects, 'Deployment').spec.template.spec;
    assert.deepEqual(pod.securityContext, { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    assert.deepEqual(pod.containers[0].securityContext, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } }, 'maps merge with the defaults');
  });

  test('the PrometheusRule: every documented alert, names and namespace of this install, your labels', () => {
    const rule = find(objects, 'PrometheusRule');
    assert.equal(rule.metadata.labels.release, 'prometheus');
    assert.deepEqual(rule.spec.groups, [{ name: 'workloadspread', rules: managerAlerts({ namespace: 'workloadspread-system', deployment: 'platform-ws-manager', lease: 'platform-ws-manager', inCluster: true }) }]);
    const exprs = (rule.spec.groups[0].rules as Obj[]).map((r) => r.expr as string);
    assert.ok(exprs.some((e) => e.includes('deployment="platform-ws-manager"')));
    assert.ok(exprs.some((e) => e.includes('leader_election_master_status{namespace="workloadspread-system", name="platform-ws-manager"}')));
    assert.ok(!exprs.some((e) => e.includes('__')), 'every stand-in name replaced');
  });

  test('off by default: no PrometheusRule', async () => {
    assert.ok(!(await render()).some((o) => o.kind === 'PrometheusRule'));
  });

  test('helm test: a pod in the manager image running files/webhook-test.cjs as a ServiceAccount that may only create WorkloadSpreads; tests.enabled=false drops it', async () => {
    const hooks = await renderHooks(PLATFORM);
    assert.deepEqual(hooks.map((o) => `${o.kind}/${o.metadata?.name}`).sort(), ['Pod/platform-ws-test', 'Role/platform-ws-test', 'RoleBinding/platform-ws-test', 'ServiceAccount/platform-ws-test']);
    for (const o of hooks) assert.equal(o.metadata?.annotations?.['helm.sh/hook'], 'test');
    const pod = find(hooks, 'Pod');
    assert.equal(pod.metadata.annotations['helm.sh/hook-weight'], '1', 'after its ServiceAccount and RBAC');
    assert.equal(pod.spec.serviceAccountName, 'platform-ws-test');
    assert.equal(pod.spec.restartPolicy, 'Never');
    const c = pod.spec.containers[0];
    assert.equal(c.image, 'workloadspread:0.1.0');
    assert.deepEqual(c.command, ['node', '-e']);
    assert.deepEqual(c.args, [readFileSync(`${CHART_DIR}/files/webhook-test.cjs`, 'utf8')]);
    assert.deepEqual(pod.spec.securityContext, { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    assert.deepEqual(find(hooks, 'Role').rules, [{ apiGroups: ['apps.kruise.io'], resources: ['workloadspreads'], verbs: ['create'] }]);
    assert.deepEqual(await renderHooks({ tests: { enabled: false } }), []);
  });
});

describe('the chart refuses bad values', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['several replicas without leader election', { replicas: 2, leaderElection: { enabled: false } }, /leaderElection\.enabled must stay true/],
    ['an unknown failure policy', { webhook: { failurePolicy: 'Sometimes' } }, /- webhook\.failurePolicy: webhook\.failurePolicy must be one of the following: "Fail", "Ignore"/],
    ['a webhook timeout above 30 s', { webhook: { timeoutSeconds: 31 } }, /- webhook\.timeoutSeconds: Must be less than or equal to 30/],
    ['zero replicas', { replicas: 0 }, /- replicas: Must be greater than or equal to 1/],
    ['a log level the manager does not know', { logLevel: 'verbose' }, /- logLevel: logLevel must be one of the following: "debug", "info", "warn", "error"/],
    ['a misspelt top-level key', { replica: 3 }, /- \(root\): Additional property replica is not allowed/],
    ['a DNS policy Kubernetes does not have', { dnsPolicy: 'Cluster' }, /- dnsPolicy: dnsPolicy must be one of the following/],
    ['a scrape interval that is not a duration', { metrics: { serviceMonitor: { interval: 'soon' } } }, /- metrics\.serviceMonitor\.interval: Does not match pattern/],
    ['a Lease duration that is not a Go duration', { leaderElection: { leaseDuration: '15' } }, /- leaderElection\.leaseDuration: Does not match pattern/],
    ['a Lease duration not longer than the renew deadline', { leaderElection: { leaseDuration: '10s' } }, /leaderElection\.leaseDuration \(10s\) must be longer than leaderElection\.renewDeadline \(10s\)/],
    ['a renew deadline not longer than 1.2 × the retry period', { leaderElection: { renewDeadline: '2400ms' } }, /leaderElection\.renewDeadline \(2400ms\) must be longer than 1\.2 × leaderElection\.retryPeriod \(2s\)/],
    ['a retry period of 0', { leaderElection: { retryPeriod: '0s' } }, /leaderElection\.retryPeriod must be longer than 0, got 0s/],
    ['a negative API rate', { manager: { kubeApi: { qps: -1 } } }, /- manager\.kubeApi\.qps: Must be greater than or equal to 0/],
    ['a burst of 0', { manager: { kubeApi: { burst: 0 } } }, /- manager\.kubeApi\.burst: Must be greater than or equal to 1/],
  ];
  for (const [name, values, pattern] of cases) {
    test(name, async () => {
      const r = await helmTemplateRaw(values);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, pattern);
    });
  }

  test('`manifests` refuses the Lease timings the chart refuses, with the same words', () => {
    const lease = (timings: Partial<InstallValues['leaderElection']>) => () => {
      const values = defaultInstallValues();
      values.leaderElection = { ...values.leaderElection, ...timings };
      return installObjects({ namespace: 'x', values });
    };
    assert.throws(lease({ leaseDuration: '10s' }), /leaderElection\.leaseDuration \(10s\) must be longer than leaderElection\.renewDeadline \(10s\)/);
    assert.throws(lease({ renewDeadline: '2400ms' }), /leaderElection\.renewDeadline \(2400ms\) must be longer than 1\.2 × leaderElection\.retryPeriod \(2s\)/);
    assert.throws(lease({ retryPeriod: '0s' }), /leaderElection\.retryPeriod must be longer than 0, got 0s/);
    assert.throws(lease({ leaseDuration: '15' }), /leaderElection\.leaseDuration must be a duration like 30s/);
    assert.doesNotThrow(lease({ renewDeadline: '2401ms' }));
  });
});

describe('`workloadspread manifests` and the chart render the same objects', () => {
  const cases: [string, Record<string, unknown>][] = [
    ['default values (with the namespace object)', { namespace: { create: true, name: 'workloadspread-system' } }],
    ['non-default values', NON_DEFAULT],
    ['the security values', { ...SECURITY, namespace: { name: 'workloadspread-system' } }],
    ['a webhook URL with the manager in the cluster, cert-manager covering the URL host', { namespace: { name: 'workloadspread-system' }, webhook: { url: 'https://webhook.example.com:9443/ws/' }, certificates: { certManager: { enabled: true } }, metrics: { prometheusRule: { enabled: true } } }],
    ['a manager outside the cluster (URL, manager.enabled=false), with everything that needs the pods turned on', { namespace: { name: 'workloadspread-system' }, manager: { enabled: false }, webhook: { url: 'https://10.0.0.5:9443', clientAuth: { caBundle: 'PEM' } }, networkPolicy: { enabled: true }, metrics: { prometheusRule: { enabled: true }, serviceMonitor: { enabled: true } } }],
    ['a platform: names, an existing ServiceAccount, OpenShift security contexts, a PrometheusRule', { ...PLATFORM, namespace: { name: 'workloadspread-system' } }],
  ];
  for (const [name, overrides] of cases) {
    test(name, async () => {
      const values = (await helmValues(overrides)) as unknown as InstallValues;
      const namespace = values.namespace.name;
      const fromChart = (await render(overrides)).map(withoutHelmLabels) as KubeObject[];
      const fromTs = installObjects({ namespace, values });
      assert.deepEqual(fromChart.map(key).sort(), fromTs.map(key).sort());
      const byKey = new Map(fromTs.map((o) => [key(o), o]));
      for (const o of fromChart) assert.deepEqual(o, byKey.get(key(o)), key(o));
    });
  }
});
