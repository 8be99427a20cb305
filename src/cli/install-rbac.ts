/**
 * The manager's RBAC, least privilege: exactly the API calls the code makes,
 * each rule with the module that needs it. The Helm chart's
 * `templates/rbac.yaml` renders the same rules (a test compares them), so
 * when a module starts calling something new, change both here and there.
 *
 * Cluster-wide (ClusterRole), because WorkloadSpreads and their pods live in
 * every namespace:
 * - pods: list/watch (kube/caches.ts informer), get (caches.getFullPod for
 *   rules that need fields the trimmed cache drops), patch (kube/pod-writer.ts:
 *   deletion cost, subset metadata), delete (pod-writer: Adaptive reschedule);
 * - pods/eviction: create (controller/rebalancer.ts moves pods through the
 *   Eviction API, D18, so disruption budgets decide);
 * - nodes: list/watch (caches; D3 simulation schedule). Never read singly.
 * - workloadspreads: list/watch (caches), get (kube/status-writer.ts re-reads
 *   after a conflict); workloadspreads/status: update (status-writer PUTs).
 * - deployments, replicasets, statefulsets, jobs: list/watch (caches). Never
 *   read singly: their caches list them in their only served version before
 *   the manager is ready (webhooks answer, the controller runs), so the reads
 *   workload-resolver.ts makes for kinds not cached yet never reach them;
 * - apps.kruise.io clonesets: list/watch/get (caches watch them while
 *   discovery serves them); statefulsets (Advanced StatefulSet): get only
 *   (owner chains and targets are read through discovery, not watched);
 * - policy.workloadspread.io domaindisruptionbudgets (D14): list/watch
 *   (kube/budget-cache.ts informer), get (kube/budget-status-writer.ts
 *   re-reads after a conflict); domaindisruptionbudgets/status: update;
 * - events.k8s.io events: create, patch (client/event-recorder.ts: new Event,
 *   then series patches). The core `events` resource is never written.
 * - mutating/validatingwebhookconfigurations: get, list, watch, update, ONLY
 *   ours by name (webhook/certs.ts patchCaBundle does a read-modify-write of
 *   `caBundle`; webhook/configuration-keeper.ts watches both by a
 *   `metadata.name` field selector and keeps the caBundle and, with the
 *   `namespaces` scope, the pod webhooks' namespaces current); left out when
 *   cert-manager injects the bundle and the scope is `cluster` (the manager
 *   then never touches the configurations).
 * - custom workloads of the whitelist (D6): get/list/watch (caches start an
 *   informer per whitelisted kind and sub-resource kind) and `<kind>/scale`
 *   get (workload-resolver reads the scale subresource of custom targets).
 *   Their plural names cannot be derived from the whitelist's kinds, so the
 *   installer names them (`rbac.customWorkloads`).
 *
 * In the manager's namespace only (Role):
 * - leases: get/update on ours by name, create (client/leader-election.ts),
 *   only with leader election;
 * - secrets: get/update on the certificate Secret by name, create
 *   (webhook/certs.ts SecretCertificates); not needed with cert-manager;
 * - configmaps: list/watch on the whitelist config map by name
 *   (kube/whitelist-source.ts watches it with a `metadata.name` field
 *   selector, which the API server authorizes against resourceNames; it is
 *   never read singly).
 * Not needed: customresourcedefinitions (CloneSet and custom kinds are found
 * through discovery, which every authenticated user may read), namespaces
 * (namespaceSelector is evaluated by the API server), services, endpoints.
 * `create` cannot be limited by resourceNames in Kubernetes RBAC, hence the
 * separate create rules.
 *
 * Tested: the end-to-end tests run the manager as the chart's ServiceAccount with
 * exactly these rules on the embedded cluster, which enforces RBAC (a refused
 * request fails them); src/manager/rbac-ablation.e2e.test.ts removes each verb of
 * each rule in turn and shows a story breaking without it.
 */

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** A custom workload kind the manager must read (whitelist entries and their sub-resource kinds). */
export interface CustomWorkloadAccess {
  apiGroup: string;
  /** Plural resource names, e.g. `rollouts`. */
  resources: string[];
}

export interface RbacOptions {
  /** Replicas elect a leader through a Lease (false: one replica, no Lease). */
  leaderElection: boolean;
  /**
   * The manager keeps fields of our webhook configurations: the `caBundle`
   * (unless cert-manager injects it) or, with the `namespaces` scope, the pod
   * webhooks' namespaces.
   */
  keepWebhookConfigurations: boolean;
  /** The manager keeps generated certificates in a Secret (false with cert-manager). */
  certificateSecret: boolean;
  mutatingConfigurationName: string;
  validatingConfigurationName: string;
  leaseName: string;
  secretName: string;
  whitelistConfigMapName: string;
  customWorkloads: CustomWorkloadAccess[];
}

const READ = ['get', 'list', 'watch'];

/** The ClusterRole's rules, in a fixed order. */
export function managerClusterRules(options: RbacOptions): PolicyRule[] {
  const rules: PolicyRule[] = [
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'patch', 'delete'] },
    { apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] },
    { apiGroups: [''], resources: ['nodes'], verbs: ['list', 'watch'] },
    { apiGroups: ['apps.kruise.io'], resources: ['workloadspreads'], verbs: READ },
    { apiGroups: ['apps.kruise.io'], resources: ['workloadspreads/status'], verbs: ['update'] },
    { apiGroups: ['apps'], resources: ['deployments', 'replicasets', 'statefulsets'], verbs: ['list', 'watch'] },
    { apiGroups: ['batch'], resources: ['jobs'], verbs: ['list', 'watch'] },
    { apiGroups: ['apps.kruise.io'], resources: ['clonesets'], verbs: READ },
    { apiGroups: ['apps.kruise.io'], resources: ['statefulsets'], verbs: ['get'] },
    { apiGroups: ['policy.workloadspread.io'], resources: ['domaindisruptionbudgets'], verbs: READ },
    { apiGroups: ['policy.workloadspread.io'], resources: ['domaindisruptionbudgets/status'], verbs: ['update'] },
    { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
  ];
  if (options.keepWebhookConfigurations) {
    rules.push(
      { apiGroups: ['admissionregistration.k8s.io'], resources: ['mutatingwebhookconfigurations'], verbs: ['get', 'list', 'watch', 'update'], resourceNames: [options.mutatingConfigurationName] },
      { apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingwebhookconfigurations'], verbs: ['get', 'list', 'watch', 'update'], resourceNames: [options.validatingConfigurationName] },
    );
  }
  for (const custom of options.customWorkloads) {
    rules.push(
      { apiGroups: [custom.apiGroup], resources: [...custom.resources], verbs: READ },
      { apiGroups: [custom.apiGroup], resources: custom.resources.map((r) => `${r}/scale`), verbs: ['get'] },
    );
  }
  return rules;
}

/** The Role's rules in the manager's namespace, in a fixed order. */
export function managerNamespaceRules(options: RbacOptions): PolicyRule[] {
  const rules: PolicyRule[] = [];
  if (options.leaderElection) {
    rules.push(
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'update'], resourceNames: [options.leaseName] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
    );
  }
  if (options.certificateSecret) {
    rules.push(
      { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'update'], resourceNames: [options.secretName] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
    );
  }
  rules.push({ apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'watch'], resourceNames: [options.whitelistConfigMapName] });
  return rules;
}
