/**
 * The install's settings: the same tree as the Helm chart's values.yaml
 * (charts/workloadspread/values.yaml), typed, with the chart's defaults. A
 * test parses values.yaml and requires it to equal `DEFAULT_INSTALL_VALUES`,
 * so the two cannot drift; install-manifests.ts builds the objects from it.
 * Also the fixed names the manager uses for its objects (the webhook
 * configurations, Service, Secret, Lease and whitelist config map are looked
 * up by name at run time, so they are constants, not per-release names).
 */
import { DEFAULT_CONFIGMAP_NAME } from '../api/keys.ts';
import { DEFAULT_SECRET_NAME, MUTATING_CONFIGURATION_NAME, VALIDATING_CONFIGURATION_NAME } from '../webhook/names.ts';
import { DEFAULT_LEASE_NAME, DEFAULT_WEBHOOK_SERVICE, VERSION } from '../manager/defaults.ts';
import type { CustomWorkloadAccess } from './install-rbac.ts';

/** The release of this checkout (package.json, Chart.yaml appVersion; a test checks all three). */
export const INSTALL_VERSION = VERSION;

export const DEFAULT_INSTALL_NAMESPACE = 'workloadspread-system';

export const INSTALL_NAMES = Object.freeze({
  /** ServiceAccount, ClusterRole(Binding), Role(Binding), Deployment, PodDisruptionBudget. */
  manager: 'workloadspread-manager',
  service: DEFAULT_WEBHOOK_SERVICE,
  secret: DEFAULT_SECRET_NAME,
  lease: DEFAULT_LEASE_NAME,
  whitelistConfigMap: DEFAULT_CONFIGMAP_NAME,
  mutating: MUTATING_CONFIGURATION_NAME,
  validating: VALIDATING_CONFIGURATION_NAME,
  /** With cert-manager: the Certificate, its Secret, and the self-signed Issuer. */
  certificate: 'workloadspread-webhook',
  certificateSecret: 'workloadspread-webhook-tls',
  issuer: 'workloadspread-selfsigned',
  /** Where the cert-manager Secret is mounted (`--cert-dir`). */
  certDir: '/etc/workloadspread/certs',
  /** The ConfigMap holding `webhook.clientAuth.caBundle`, and where it is mounted (`--client-ca-file`). */
  clientCaConfigMap: 'workloadspread-webhook-client-ca',
  clientCaDir: '/etc/workloadspread/client-ca',
  /** The opt-in NetworkPolicy (`networkPolicy.enabled`). */
  networkPolicy: 'workloadspread-manager',
  /** With metrics.serviceMonitor: the metrics Service (the ServiceMonitor is named like the manager). */
  metricsService: 'workloadspread-metrics',
});

type Json = unknown;

export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface InstallValues {
  namespace: { create: boolean; name: string };
  crds: { install: boolean; keep: boolean };
  image: { repository: string; tag: string; pullPolicy: string };
  imagePullSecrets: Json[];
  replicas: number;
  leaderElection: { enabled: boolean };
  logLevel: string;
  manager: { workers: number; unschedulableRecoverySeconds: number; guardPodDeletion: boolean; allowPrivilegedSubsetPatches: boolean; extraArgs: string[] };
  webhook: {
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
  metrics: { port: number; secure: boolean; serviceMonitor: { enabled: boolean; interval: string; scrapeTimeout: string; labels: Record<string, string> } };
  health: { port: number };
  whitelist: { workloads: Json[] };
  rbac: { customWorkloads: CustomWorkloadAccess[] };
  serviceAccount: { annotations: Record<string, string> };
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
    namespace: { create: false, name: '' },
    crds: { install: true, keep: true },
    image: { repository: 'workloadspread', tag: '', pullPolicy: 'IfNotPresent' },
    imagePullSecrets: [],
    replicas: 2,
    leaderElection: { enabled: true },
    logLevel: 'info',
    manager: { workers: 3, unschedulableRecoverySeconds: 300, guardPodDeletion: false, allowPrivilegedSubsetPatches: false, extraArgs: [] },
    webhook: {
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
    metrics: { port: 8080, secure: false, serviceMonitor: { enabled: false, interval: '', scrapeTimeout: '', labels: {} } },
    health: { port: 8081 },
    whitelist: { workloads: [] },
    rbac: { customWorkloads: [] },
    serviceAccount: { annotations: {} },
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '1', memory: '512Mi' } },
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
