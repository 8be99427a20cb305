/**
 * The whole install as plain objects, for `workloadspread manifests` (kubectl
 * users): CRDs, Namespace, ServiceAccount, RBAC, whitelist ConfigMap,
 * Service, Deployment, PodDisruptionBudget, the webhook configurations,
 * with cert-manager its Issuer and Certificate, with
 * metrics.serviceMonitor a metrics Service and a ServiceMonitor, with
 * metrics.prometheusRule the alerting rules (install-alerts.ts). With
 * `manager.enabled: false` (a manager outside the cluster, `webhook.url`)
 * no Deployment, Service, PodDisruptionBudget, NetworkPolicy or
 * ServiceMonitor. The Helm chart renders the same objects from the same
 * values (charts/workloadspread; a test renders both and compares them object
 * by object, Helm's own labels and its `helm test` hooks aside).
 *
 * Shared sources of truth: the webhook configurations are
 * `webhookConfigurations()` of src/webhook/registration.ts (what the manager
 * itself registers) with the install's settings applied on top; the rules are
 * install-rbac.ts; the CRDs are the generated ones of src/api/crd.ts.
 * Pure: values in, objects out. Start at `installObjects`.
 */
import { domainDisruptionBudgetCrd, workloadSpreadCrd } from '../api/crd.ts';
import { WHITELIST_CONFIGMAP_KEY } from '../api/keys.ts';
import type { KubeObject } from '../k8s/types.ts';
import { watchNamespacesScopeProblem, webhookConfigurations } from '../webhook/registration.ts';
import { parseDuration } from '../k8s/duration.ts';
import { managerAlerts } from './install-alerts.ts';
import { leaseTimingsProblem } from './lease-timings.ts';
import { managerClusterRules, managerNamespaceRules, type RbacOptions } from './install-rbac.ts';
import { commonLabels, DEFAULT_NAME_BASE, installNames, INSTALL_VERSION, managerSelectorLabels, nameBase, type InstallNames, type InstallValues } from './install-values.ts';

export interface InstallOptions {
  /** The manager's namespace. */
  namespace: string;
  values: InstallValues;
}

type Obj = Record<string, unknown>;

function meta(name: string, namespace?: string, extra: Obj = {}): Obj {
  return { name, ...(namespace === undefined ? {} : { namespace }), labels: commonLabels(), ...extra };
}

function isEmptyValue(v: unknown): boolean {
  if (v === undefined || v === null || v === '' || v === false || v === 0) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.keys(v).length === 0;
  return false;
}

/** Sets `key` only when the value is not empty (the chart's `{{- with }}` blocks). */
function withValue(target: Obj, key: string, value: unknown): void {
  if (!isEmptyValue(value)) target[key] = value;
}

/** JSON with keys sorted at every level, as Go's encoding/json (and the chart's toJson) writes maps. */
export function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Obj;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${sortedJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}

export function rbacOptions(values: InstallValues): RbacOptions {
  const certManager = values.certificates.certManager.enabled;
  const names = installNames(values);
  return {
    leaderElection: values.leaderElection.enabled,
    keepWebhookConfigurations: !certManager || values.webhook.scope === 'namespaces',
    certificateSecret: !certManager,
    mutatingConfigurationName: names.mutating,
    validatingConfigurationName: names.validating,
    leaseName: names.lease,
    secretName: names.secret,
    whitelistConfigMapName: names.whitelistConfigMap,
    customWorkloads: values.rbac.customWorkloads,
    secureMetrics: values.metrics.secure,
  };
}

/**
 * The Lease timings as the chart checks them (client-go's rules, which the manager checks at
 * start): each a Go duration, leaseDuration > renewDeadline > 1.2 × retryPeriod > 0.
 */
export function checkLeaseTimings(lease: InstallValues['leaderElection']): void {
  const ms = (key: 'leaseDuration' | 'renewDeadline' | 'retryPeriod'): number => {
    const parsed = parseDuration(lease[key]);
    if (!parsed.ok) throw new Error(`leaderElection.${key} ${parsed.error}`);
    return parsed.ms;
  };
  const problem = leaseTimingsProblem(
    { leaseDuration: ms('leaseDuration'), renewDeadline: ms('renewDeadline'), retryPeriod: ms('retryPeriod') },
    { leaseDuration: 'leaderElection.leaseDuration', renewDeadline: 'leaderElection.renewDeadline', retryPeriod: 'leaderElection.retryPeriod' },
    lease,
  );
  if (problem !== undefined) throw new Error(problem);
}

/** `webhook.url` without trailing slashes ('' for the Service). */
export function webhookUrl(values: InstallValues): string {
  return values.webhook.url.replace(/\/+$/, '');
}

/** The `workloadspread manager` flags of the Deployment (the image's entrypoint is `… manager`). */
export function managerArgs(values: InstallValues): string[] {
  const names = installNames(values);
  const url = webhookUrl(values);
  const args = [
    '--namespace=$(POD_NAMESPACE)',
    `--webhook-port=${values.webhook.port}`,
    ...(values.webhook.host === '' ? [] : [`--webhook-host=${values.webhook.host}`]),
    ...(url === '' ? [] : [`--webhook-url=${url}`]),
    // The names the manager looks up, when they are not its defaults.
    ...(nameBase(values) === DEFAULT_NAME_BASE ? [] : [`--webhook-service=${names.service}`, `--cert-secret=${names.secret}`, `--leader-election-id=${names.lease}`, `--whitelist-configmap=${names.whitelistConfigMap}`]),
    `--metrics-addr=:${values.metrics.port}`,
    ...(values.metrics.secure ? ['--metrics-secure=true'] : []),
    `--health-addr=:${values.health.port}`,
    `--workers=${values.manager.workers}`,
    `--unschedulable-recovery-seconds=${values.manager.unschedulableRecoverySeconds}`,
    `--log-level=${values.logLevel}`,
    `--kube-api-qps=${values.manager.kubeApi.qps}`,
    `--kube-api-burst=${values.manager.kubeApi.burst}`,
  ];
  if (values.manager.watchNamespaces.length > 0) {
    if (values.webhook.scope !== 'namespaces') throw new Error(watchNamespacesScopeProblem('manager.watchNamespaces', 'webhook.scope: namespaces'));
    args.push(`--watch-namespaces=${values.manager.watchNamespaces.join(',')}`);
  }
  if (values.webhook.scope !== 'namespaces') args.push(`--webhook-scope=${values.webhook.scope}`);
  if (values.leaderElection.enabled) {
    const lease = values.leaderElection;
    args.push('--leader-elect=true', `--leader-elect-lease-duration=${lease.leaseDuration}`, `--leader-elect-renew-deadline=${lease.renewDeadline}`, `--leader-elect-retry-period=${lease.retryPeriod}`);
  }
  if (values.certificates.certManager.enabled) args.push(`--cert-dir=${names.certDir}`);
  if (values.manager.guardPodDeletion) args.push('--guard-pod-deletion=true');
  if (values.manager.allowPrivilegedSubsetPatches) args.push('--allow-privileged-subset-patches=true');
  if (values.webhook.clientAuth.caBundle !== '') {
    args.push(`--client-ca-file=${names.clientCaDir}/ca.crt`);
    if (values.webhook.clientAuth.allowedNames.length > 0) args.push(`--client-cert-allowed-names=${values.webhook.clientAuth.allowedNames.join(',')}`);
  }
  return [...args, ...values.manager.extraArgs];
}

function deployment(namespace: string, values: InstallValues, names: InstallNames): Obj {
  const certManager = values.certificates.certManager.enabled;
  const tag = values.image.tag === '' ? INSTALL_VERSION : values.image.tag;
  const volumeMounts: Obj[] = [{ name: 'tmp', mountPath: '/tmp' }];
  const volumes: Obj[] = [{ name: 'tmp', emptyDir: {} }];
  if (certManager) {
    volumeMounts.push({ name: 'certs', mountPath: names.certDir, readOnly: true });
    volumes.push({ name: 'certs', secret: { secretName: names.certificateSecret } });
  }
  if (values.webhook.clientAuth.caBundle !== '') {
    volumeMounts.push({ name: 'client-ca', mountPath: names.clientCaDir, readOnly: true });
    volumes.push({ name: 'client-ca', configMap: { name: names.clientCaConfigMap } });
  }
  const container: Obj = {
    name: 'manager',
    image: `${values.image.repository}:${tag}`,
    imagePullPolicy: values.image.pullPolicy,
    args: managerArgs(values),
    env: [
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    ],
    ports: [
      { name: 'webhook', containerPort: values.webhook.port, protocol: 'TCP' },
      { name: 'metrics', containerPort: values.metrics.port, protocol: 'TCP' },
      { name: 'health', containerPort: values.health.port, protocol: 'TCP' },
    ],
    livenessProbe: { httpGet: { path: '/healthz', port: 'health' }, initialDelaySeconds: 15, periodSeconds: 20, failureThreshold: 3 },
    readinessProbe: { httpGet: { path: '/readyz', port: 'health' }, initialDelaySeconds: 5, periodSeconds: 10, failureThreshold: 3 },
  };
  withValue(container, 'securityContext', values.securityContext);
  withValue(container, 'resources', values.resources);
  container['volumeMounts'] = volumeMounts;
  const podSpec: Obj = { serviceAccountName: names.serviceAccount };
  withValue(podSpec, 'securityContext', values.podSecurityContext);
  podSpec['terminationGracePeriodSeconds'] = 30;
  if (values.hostNetwork) podSpec['hostNetwork'] = true;
  withValue(podSpec, 'dnsPolicy', values.dnsPolicy !== '' ? values.dnsPolicy : values.hostNetwork ? 'ClusterFirstWithHostNet' : '');
  podSpec['containers'] = [container];
  podSpec['volumes'] = volumes;
  withValue(podSpec, 'priorityClassName', values.priorityClassName);
  withValue(podSpec, 'imagePullSecrets', values.imagePullSecrets);
  withValue(podSpec, 'nodeSelector', values.nodeSelector);
  withValue(podSpec, 'tolerations', values.tolerations);
  withValue(podSpec, 'affinity', values.affinity);
  withValue(podSpec, 'topologySpreadConstraints', values.topologySpreadConstraints);
  const podMeta: Obj = { labels: { ...commonLabels(), ...managerSelectorLabels(), ...values.podLabels } };
  withValue(podMeta, 'annotations', values.podAnnotations);
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: meta(names.manager, namespace),
    spec: {
      replicas: values.replicas,
      selector: { matchLabels: managerSelectorLabels() },
      // Never fewer serving replicas than wanted during a rollout: the webhook fails closed.
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template: { metadata: podMeta, spec: podSpec },
    },
  };
}

/** The webhook configurations the manager would register, with the install's policy on top. */
function webhooks(namespace: string, values: InstallValues, names: InstallNames): Obj[] {
  const url = webhookUrl(values);
  const built = webhookConfigurations({
    managerNamespace: namespace,
    endpoint: url !== '' ? { url } : { service: { name: names.service, namespace, port: 443 } },
    timeoutSeconds: values.webhook.timeoutSeconds,
    labels: commonLabels(),
    guardPodDeletion: values.manager.guardPodDeletion,
    // Installed, the namespaces scope reaches no namespace; the elected manager fills them in.
    scope: values.webhook.scope === 'namespaces' ? { kind: 'namespaces', workloadSpreads: [], budgets: [] } : { kind: 'cluster' },
  });
  const annotations = values.certificates.certManager.enabled ? { 'cert-manager.io/inject-ca-from': `${namespace}/${names.certificate}` } : undefined;
  const adjust = (config: KubeObject): Obj => {
    const list = Array.isArray(config['webhooks']) ? (config['webhooks'] as Obj[]) : [];
    return {
      ...config,
      metadata: { ...config.metadata, ...(annotations === undefined ? {} : { annotations }) },
      webhooks: list.map((w) => {
        const selector = (w['namespaceSelector'] ?? {}) as { matchExpressions?: { key: string; operator: string; values?: string[] }[] };
        const expressions = (selector.matchExpressions ?? []).map((e) =>
          e.key === 'kubernetes.io/metadata.name' && e.operator === 'NotIn' ? { ...e, values: [...new Set([...(e.values ?? []), ...values.webhook.excludeNamespaces])] } : e,
        );
        // Extra namespace requirements apply to the pod webhooks only (those with a namespace selector).
        const namespaceSelector = expressions.length === 0 ? {} : { matchExpressions: [...expressions, ...values.webhook.namespaceSelector.matchExpressions] };
        return { ...w, failurePolicy: values.webhook.failurePolicy, namespaceSelector };
      }),
    };
  };
  return [adjust(built.mutating), adjust(built.validating)];
}

/** The host of `webhook.url` as a certificate names it: a DNS name, or an IP address (IPv6 without brackets). */
export function urlHost(url: string): { dns: string } | { ip: string } | undefined {
  if (url === '') return undefined;
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
  return /^[0-9.]+$/.test(host) || host.includes(':') ? { ip: host } : { dns: host };
}

function certManagerObjects(namespace: string, values: InstallValues, names: InstallNames): Obj[] {
  const out: Obj[] = [];
  let issuerRef = values.certificates.certManager.issuerRef;
  if (isEmptyValue(issuerRef)) {
    issuerRef = { kind: 'Issuer', name: names.issuer };
    out.push({ apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: meta(names.issuer, namespace), spec: { selfSigned: {} } });
  }
  const service = names.service;
  // With webhook.url, the certificate also covers the URL's host.
  const host = urlHost(webhookUrl(values));
  const spec: Obj = {
    secretName: names.certificateSecret,
    dnsNames: [`${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`, ...(host !== undefined && 'dns' in host ? [host.dns] : [])],
  };
  if (host !== undefined && 'ip' in host) spec['ipAddresses'] = [host.ip];
  spec['issuerRef'] = issuerRef;
  out.push({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: meta(names.certificate, namespace), spec });
  return out;
}

/** The opt-in NetworkPolicy: ingress only to the manager's three ports, each from its peers (none listed: any source). */
function networkPolicy(namespace: string, values: InstallValues, names: InstallNames): Obj {
  const rule = (port: number, from: unknown[]): Obj => ({ ports: [{ protocol: 'TCP', port }], ...(from.length === 0 ? {} : { from }) });
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: meta(names.networkPolicy, namespace),
    spec: {
      podSelector: { matchLabels: managerSelectorLabels() },
      policyTypes: ['Ingress'],
      ingress: [
        rule(values.webhook.port, values.networkPolicy.webhookFrom),
        rule(values.metrics.port, values.networkPolicy.metricsFrom),
        rule(values.health.port, values.networkPolicy.healthFrom),
      ],
    },
  };
}

/** Every object of the install, in apply order (CRDs and the namespace first). */
export function installObjects(options: InstallOptions): KubeObject[] {
  const { namespace, values } = options;
  if (values.replicas > 1 && !values.leaderElection.enabled) throw new Error('leader election must stay on with more than one replica');
  if (values.webhook.clientAuth.allowedNames.length > 0 && values.webhook.clientAuth.caBundle === '') throw new Error('webhook.clientAuth.allowedNames needs webhook.clientAuth.caBundle');
  checkLeaseTimings(values.leaderElection);
  if (!values.manager.enabled && values.webhook.url === '') throw new Error('manager.enabled=false needs webhook.url: where the API server reaches the manager running outside');
  for (const arg of values.manager.extraArgs) {
    if (/^--(register-webhooks|webhook-url)([= ]|$)/.test(arg)) throw new Error(`manager.extraArgs: ${arg} is not for the chart (it ships the webhook configurations; set webhook.url for a URL)`);
  }
  const names = installNames(values);
  const inCluster = values.manager.enabled;
  const crds: KubeObject[] = [];
  // The objects behind the generated CRD files (the same, without a YAML round trip: `manifests` starts faster).
  for (const crd of values.crds.install ? [workloadSpreadCrd(), domainDisruptionBudgetCrd()] : []) {
    const copy = JSON.parse(JSON.stringify(crd)) as KubeObject;
    // As the chart renders them (templates/crds.yaml): the install's labels, and kept on `helm uninstall`.
    copy.metadata = { ...(values.crds.keep ? { annotations: { 'helm.sh/resource-policy': 'keep' } } : {}), labels: commonLabels(), ...copy.metadata };
    crds.push(copy);
  }
  const rbac = rbacOptions(values);
  const selector = managerSelectorLabels();
  const objects: Obj[] = [...crds];
  if (values.namespace.create) {
    // Host networking is outside every Pod Security level but privileged.
    const level = values.hostNetwork ? 'privileged' : 'restricted';
    objects.push({ apiVersion: 'v1', kind: 'Namespace', metadata: meta(namespace, undefined, { labels: { ...commonLabels(), 'pod-security.kubernetes.io/enforce': level } }) });
  }
  if (values.serviceAccount.create) {
    const saMeta = meta(names.serviceAccount, namespace);
    withValue(saMeta, 'annotations', values.serviceAccount.annotations);
    objects.push({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: saMeta });
  }
  const subject = [{ kind: 'ServiceAccount', name: names.serviceAccount, namespace }];
  objects.push(
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: meta(names.manager), rules: managerClusterRules(rbac) },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: meta(names.manager), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: names.manager }, subjects: subject },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: meta(names.manager, namespace), rules: managerNamespaceRules(rbac) },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: meta(names.manager, namespace), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: names.manager }, subjects: subject },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(names.whitelistConfigMap, namespace), data: { [WHITELIST_CONFIGMAP_KEY]: sortedJson(values.whitelist) } },
  );
  if (inCluster && values.webhook.clientAuth.caBundle !== '') {
    objects.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(names.clientCaConfigMap, namespace), data: { 'ca.crt': values.webhook.clientAuth.caBundle } });
  }
  if (values.certificates.certManager.enabled) objects.push(...certManagerObjects(namespace, values, names));
  const monitor = values.metrics.serviceMonitor;
  if (inCluster) {
    objects.push(
      { apiVersion: 'v1', kind: 'Service', metadata: meta(names.service, namespace), spec: { selector, ports: [{ name: 'https', port: 443, targetPort: 'webhook', protocol: 'TCP' }] } },
      deployment(namespace, values, names),
    );
    if (monitor.enabled) {
      objects.push({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: meta(names.metricsService, namespace, { labels: { ...commonLabels(), 'app.kubernetes.io/component': 'metrics' } }),
        spec: { selector, ports: [{ name: 'metrics', port: values.metrics.port, targetPort: 'metrics', protocol: 'TCP' }] },
      });
    }
    if (values.podDisruptionBudget.enabled) {
      objects.push({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: meta(names.manager, namespace), spec: { maxUnavailable: values.podDisruptionBudget.maxUnavailable, selector: { matchLabels: selector } } });
    }
    if (values.networkPolicy.enabled) objects.push(networkPolicy(namespace, values, names));
  }
  objects.push(...webhooks(namespace, values, names));
  if (inCluster && monitor.enabled) {
    const endpoint: Obj = { port: 'metrics', path: '/metrics', scheme: 'http' };
    if (values.metrics.secure) Object.assign(endpoint, { scheme: 'https', bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token', tlsConfig: { insecureSkipVerify: true } });
    withValue(endpoint, 'interval', monitor.interval);
    withValue(endpoint, 'scrapeTimeout', monitor.scrapeTimeout);
    objects.push({
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'ServiceMonitor',
      metadata: meta(names.manager, namespace, { labels: { ...commonLabels(), ...monitor.labels } }),
      spec: {
        namespaceSelector: { matchNames: [namespace] },
        selector: { matchLabels: { 'app.kubernetes.io/name': 'workloadspread', 'app.kubernetes.io/component': 'metrics' } },
        endpoints: [endpoint],
      },
    });
  }
  if (values.metrics.prometheusRule.enabled) {
    objects.push({
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PrometheusRule',
      metadata: meta(names.manager, namespace, { labels: { ...commonLabels(), ...values.metrics.prometheusRule.labels } }),
      spec: { groups: [{ name: 'workloadspread', rules: managerAlerts({ namespace, deployment: names.manager, lease: names.lease, inCluster }) }] },
    });
  }
  return objects as KubeObject[];
}
