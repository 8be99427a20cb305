/**
 * The install's settings: the same tree as the Helm chart's values.yaml
 * (charts/workloadspread/values.yaml), typed, with the chart's defaults. A
 * test parses values.yaml and requires it to equal `DEFAULT_INSTALL_VALUES`,
 * so the two cannot drift; install-manifests.ts builds the objects from it.
 * Also the objects' names (`installNames`): a base (`workloadspread`, or
 * `fullnameOverride`/`nameOverride`) and a suffix, not derived from the
 * release — one install per cluster. The manager looks some of them up at run
 * time; the install passes those through its flags (Service, Lease,
 * whitelist config map, certificate Secret). The two webhook configurations
 * keep fixed names whatever the base: the manager watches and repairs them by
 * name, and they are cluster-wide.
 */
import { DEFAULT_CONFIGMAP_NAME } from '../api/keys.ts';
import { DEFAULT_SECRET_NAME, MUTATING_CONFIGURATION_NAME, VALIDATING_CONFIGURATION_NAME } from '../webhook/names.ts';
import { DEFAULT_LEASE_NAME, DEFAULT_WEBHOOK_SERVICE, VERSION } from '../manager/defaults.ts';
import type { CustomWorkloadAccess } from './install-rbac.ts';
import { DEFAULT_LEASE_TIMINGS } from './lease-timings.ts';
import { DEFAULT_BURST, DEFAULT_QPS } from '../client/rate-limit.ts';

/** The release of this checkout (package.json, Chart.yaml appVersion; a test checks all three). */
export const INSTALL_VERSION = VERSION;

export const DEFAULT_INSTALL_NAMESPACE = 'workloadspread-system';

/** The base of the names when neither `fullnameOverride` nor `nameOverride` is set. */
export const DEFAULT_NAME_BASE = 'workloadspread';

export interface InstallNames {
  /** ClusterRole(Binding), Role(Binding), Deployment, PodDisruptionBudget, NetworkPolicy, ServiceMonitor, PrometheusRule; the Lease (`--leader-election-id`). */
  manager: string;
  /** `serviceAccount.name`, else the manager's name. */
  serviceAccount: string;
  /** The webhook Service (`--webhook-service`). */
  service: string;
  /** The generated certificates' Secret (`--cert-secret`). */
  secret: string;
  lease: string;
  /** The whitelist ConfigMap (`--whitelist-configmap`). */
  whitelistConfigMap: string;
  /** Fixed, whatever the base. */
  mutating: string;
  validating: string;
  /** With cert-manager: the Certificate, its Secret, and the self-signed Issuer. */
  certificate: string;
  certificateSecret: string;
  issuer: string;
  /** Where the cert-manager Secret is mounted (`--cert-dir`). */
  certDir: string;
  /** The ConfigMap holding `webhook.clientAuth.caBundle`, and where it is mounted (`--client-ca-file`). */
  clientCaConfigMap: string;
  clientCaDir: string;
  /** The opt-in NetworkPolicy (`networkPolicy.enabled`). */
  networkPolicy: string;
  /** With metrics.serviceMonitor: the metrics Service (the ServiceMonitor is named like the manager). */
  metricsService: string;
  /** `helm test`'s pod, ServiceAccount, Role and RoleBinding (the chart only). */
  test: string;
}

/** The base of the names: `fullnameOverride`, else `nameOverride`, else `workloadspread`. */
export function nameBase(values: Pick<InstallValues, 'nameOverride' | 'fullnameOverride'>): string {
  return values.fullnameOverride !== '' ? values.fullnameOverride : values.nameOverride !== '' ? values.nameOverride : DEFAULT_NAME_BASE;
}

/** Every object's name for these values (the chart's templates/_helpers.tpl). */
export function installNames(values: Pick<InstallValues, 'nameOverride' | 'fullnameOverride' | 'serviceAccount'>): InstallNames {
  const base = nameBase(values);
  const manager = `${base}-manager`;
  return {
    manager,
    serviceAccount: values.serviceAccount.name !== '' ? values.serviceAccount.name : manager,
    service: `${base}-webhook`,
    secret: `${base}-webhook-certs`,
    lease: manager,
    whitelistConfigMap: `${base}-configuration`,
    mutating: MUTATING_CONFIGURATION_NAME,
    validating: VALIDATING_CONFIGURATION_NAME,
    certificate: `${base}-webhook`,
    certificateSecret: `${base}-webhook-tls`,
    issuer: `${base}-selfsigned`,
    certDir: '/etc/workloadspread/certs',
    clientCaConfigMap: `${base}-webhook-client-ca`,
    clientCaDir: '/etc/workloadspread/client-ca',
    networkPolicy: manager,
    metricsService: `${base}-metrics`,
    test: `${base}-test`,
  };
}

/** The names of the default install: the manager's own defaults (a test keeps them equal). */
export const INSTALL_NAMES: Readonly<InstallNames> = Object.freeze(installNames({ nameOverride: '', fullnameOverride: '', serviceAccount: { create: true, name: '', annotations: {} } }));

/** The manager's flag defaults, which the default names must equal (the install then passes no name flags). */
export const MANAGER_DEFAULT_NAMES = Object.freeze({ service: DEFAULT_WEBHOOK_SERVICE, secret: DEFAULT_SECRET_NAME, lease: DEFAULT_LEASE_NAME, whitelistConfigMap: DEFAULT_CONFIGMAP_NAME });

type Json = unknown;

export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface InstallValues {
  nameOverride: string;
  fullnameOverride: string;
  namespace: { create: boolean; name: string };
  crds: { install: boolean; keep: boolean };
  image: { repository: string; tag: string; pullPolicy: string };
  imagePullSecrets: Json[];
  replicas: number;
  /** Go durations (`15s`), the manager's `--leader-elect-*` flags; passed with leader election on. */
  leaderElection: { enabled: boolean; leaseDuration: string; renewDeadline: string; retryPeriod: string };
  logLevel: string;
  manager: {
    enabled: boolean;
    workers: number;
    unschedulableRecoverySeconds: number;
    guardPodDeletion: boolean;
    allowPrivilegedSubsetPatches: boolean;
    /** The client-side rate limit (`--kube-api-qps`, `--kube-api-burst`). */
    kubeApi: { qps: number; burst: number };
    /** `--watch-namespaces` (empty: every namespace). */
    watchNamespaces: string[];
    extraArgs: string[];
  };
  webhook: {
    url: string;
    port: number;
    host: string;
    clientAuth: { caBundle: string; allowedNames: string[] };
    failurePolicy: 'Fail' | 'Ignore';
    timeoutSeconds: number;
    scope: 'namespaces' | 'cluster';
    excludeNamespaces: string[];
    namespaceSelector: { matchExpressions: LabelSelectorRequirement[] };
  };
  certificates: { certManager: { enabled: boolean; issuerRef: Record<string, Json> } };
  networkPolicy: { enabled: boolean; webhookFrom: Json[]; metricsFrom: Json[]; healthFrom: Json[] };
  metrics: { port: number; secure: boolean; prometheusRule: { enabled: boolean; labels: Record<string, string> }; serviceMonitor: { enabled: boolean; interval: string; scrapeTimeout: string; labels: Record<string, string> } };
  health: { port: number };
  whitelist: { workloads: Json[] };
  rbac: { customWorkloads: CustomWorkloadAccess[] };
  serviceAccount: { create: boolean; name: string; annotations: Record<string, string> };
  podSecurityContext: Record<string, Json>;
  securityContext: Record<string, Json>;
  tests: { enabled: boolean };
  resources: Record<string, Json>;
  podDisruptionBudget: { enabled: boolean; maxUnavailable: number | string };
  priorityClassName: string;
  hostNetwork: boolean;
  dnsPolicy: '' | 'ClusterFirst' | 'ClusterFirstWithHostNet' | 'Default' | 'None';
  podAnnotations: Record<string, string>;
  podLabels: Record<string, string>;
  nodeSelector: Record<string, string>;
  tolerations: Json[];
  affinity: Record<string, Json>;
  topologySpreadConstraints: Json[];
}

const MANAGER_SELECTOR = { 'app.kubernetes.io/name': 'workloadspread', 'app.kubernetes.io/component': 'manager' };

/** The chart's defaults. Returns a fresh copy each time (callers may edit it). */
export function defaultInstallValues(): InstallValues {
  return {
    nameOverride: '',
    fullnameOverride: '',
    namespace: { create: false, name: '' },
    crds: { install: true, keep: true },
    image: { repository: 'workloadspread', tag: '', pullPolicy: 'IfNotPresent' },
    imagePullSecrets: [],
    replicas: 2,
    leaderElection: { enabled: true, ...DEFAULT_LEASE_TIMINGS },
    logLevel: 'info',
    manager: { enabled: true, workers: 3, unschedulableRecoverySeconds: 300, guardPodDeletion: false, allowPrivilegedSubsetPatches: false, kubeApi: { qps: DEFAULT_QPS, burst: DEFAULT_BURST }, watchNamespaces: [], extraArgs: [] },
    webhook: {
      url: '',
      port: 9443,
      host: '',
      clientAuth: { caBundle: '', allowedNames: [] },
      failurePolicy: 'Fail',
      timeoutSeconds: 10,
      scope: 'namespaces',
      excludeNamespaces: [],
      namespaceSelector: { matchExpressions: [] },
    },
    certificates: { certManager: { enabled: false, issuerRef: {} } },
    networkPolicy: { enabled: false, webhookFrom: [], metricsFrom: [], healthFrom: [] },
    metrics: { port: 8080, secure: false, prometheusRule: { enabled: false, labels: {} }, serviceMonitor: { enabled: false, interval: '', scrapeTimeout: '', labels: {} } },
    health: { port: 8081 },
    whitelist: { workloads: [] },
    rbac: { customWorkloads: [] },
    serviceAccount: { create: true, name: '', annotations: {} },
    podSecurityContext: { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } },
    securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } },
    tests: { enabled: true },
    resources: { requests: { cpu: '100m', memory: '192Mi' }, limits: { cpu: '1', memory: '512Mi' } },
    podDisruptionBudget: { enabled: true, maxUnavailable: 1 },
    priorityClassName: '',
    hostNetwork: false,
    dnsPolicy: '',
    podAnnotations: {},
    podLabels: {},
    nodeSelector: {},
    tolerations: [],
    affinity: {
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { ...MANAGER_SELECTOR } } } },
        ],
      },
    },
    topologySpreadConstraints: [
      { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { ...MANAGER_SELECTOR } } },
    ],
  };
}

/** Labels selecting the manager's pods (Deployment selector, Service, PDB, anti-affinity). */
export function managerSelectorLabels(): Record<string, string> {
  return { ...MANAGER_SELECTOR };
}

/** Labels on every object of the install (the chart adds Helm's own on top). */
export function commonLabels(): Record<string, string> {
  return { 'app.kubernetes.io/name': 'workloadspread', 'app.kubernetes.io/version': INSTALL_VERSION };
}
