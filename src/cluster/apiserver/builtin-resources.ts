/**
 * The built-in resources the embedded API server serves, with the names,
 * short names, categories, verbs and subresources of a Kubernetes 1.32
 * API server's discovery, in upstream's group order. Subresource handlers that
 * need the server (pods/binding, pods/eviction, namespaces/finalize) are
 * attached by the server core after construction.
 */
import { accessReviewResources } from './access-review.ts';
import type { Authorizer } from './authorization.ts';
import type { ResourceDef, ResourceStrategy, ScaleSpec } from './resource-def.ts';
import { controllerRevisionStrategy, deploymentStrategy, replicaSetStrategy, statefulSetStrategy } from './strategies/apps.ts';
import { jobStrategy } from './strategies/batch.ts';
import { configMapStrategy, endpointsStrategy, eventStrategy, namespaceStrategy, nodeStrategy, secretStrategy, serviceAccountStrategy } from './strategies/core.ts';
import { EVENTS_V1_CONVERSION, eventsV1Strategy } from './strategies/events.ts';
import { customResourceDefinitionStrategy, webhookConfigurationStrategy } from './strategies/extensions.ts';
import { leaseStrategy, podDisruptionBudgetStrategy, priorityClassStrategy } from './strategies/policy.ts';
import { podStrategy } from './strategies/pod.ts';
import { clusterRoleStrategy, RBAC_GROUP, roleBindingStrategy, roleStrategy } from './strategies/rbac.ts';
import { serviceStrategy, type ServiceAllocator } from './strategies/service.ts';

export const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

interface Names {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  verbs?: string[];
  status?: boolean;
  scale?: ScaleSpec;
}

function def(names: Names, strategy: ResourceStrategy): ResourceDef {
  const subresources: ResourceDef['subresources'] = {};
  if (names.status === true) subresources.status = true;
  if (names.scale !== undefined) subresources.scale = names.scale;
  return {
    group: names.group,
    version: names.version,
    kind: names.kind,
    listKind: `${names.kind}List`,
    plural: names.plural,
    singular: names.kind.toLowerCase(),
    namespaced: names.namespaced,
    shortNames: names.shortNames ?? [],
    categories: names.categories ?? [],
    verbs: names.verbs ?? ALL_VERBS,
    subresources,
    strategy,
    builtin: true,
  };
}

const WORKLOAD_SCALE: ScaleSpec = { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.spec.selector' };

export function builtinResources(deps: { serviceAllocator: ServiceAllocator; authorizer: Authorizer }): ResourceDef[] {
  const core = (n: Omit<Names, 'group' | 'version'>, s: ResourceStrategy) => def({ group: '', version: 'v1', ...n }, s);
  return [
    core({ kind: 'ConfigMap', plural: 'configmaps', namespaced: true, shortNames: ['cm'] }, configMapStrategy()),
    core({ kind: 'Endpoints', plural: 'endpoints', namespaced: true, shortNames: ['ep'] }, endpointsStrategy()),
    core({ kind: 'Event', plural: 'events', namespaced: true, shortNames: ['ev'] }, eventStrategy()),
    core(
      { kind: 'Namespace', plural: 'namespaces', namespaced: false, shortNames: ['ns'], verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'], status: true },
      namespaceStrategy(),
    ),
    core({ kind: 'Node', plural: 'nodes', namespaced: false, shortNames: ['no'], status: true }, nodeStrategy()),
    core({ kind: 'Pod', plural: 'pods', namespaced: true, shortNames: ['po'], categories: ['all'], status: true }, podStrategy()),
    core({ kind: 'Secret', plural: 'secrets', namespaced: true }, secretStrategy()),
    core({ kind: 'ServiceAccount', plural: 'serviceaccounts', namespaced: true, shortNames: ['sa'] }, serviceAccountStrategy()),
    core(
      {
        kind: 'Service',
        plural: 'services',
        namespaced: true,
        shortNames: ['svc'],
        categories: ['all'],
        verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
        status: true,
      },
      serviceStrategy(deps.serviceAllocator),
    ),
    def(
      { group: 'apps', version: 'v1', kind: 'ControllerRevision', plural: 'controllerrevisions', namespaced: true },
      controllerRevisionStrategy(),
    ),
    def(
      { group: 'apps', version: 'v1', kind: 'Deployment', plural: 'deployments', namespaced: true, shortNames: ['deploy'], categories: ['all'], status: true, scale: WORKLOAD_SCALE },
      deploymentStrategy(),
    ),
    def(
      { group: 'apps', version: 'v1', kind: 'ReplicaSet', plural: 'replicasets', namespaced: true, shortNames: ['rs'], categories: ['all'], status: true, scale: WORKLOAD_SCALE },
      replicaSetStrategy(),
    ),
    def(
      { group: 'apps', version: 'v1', kind: 'StatefulSet', plural: 'statefulsets', namespaced: true, shortNames: ['sts'], categories: ['all'], status: true, scale: WORKLOAD_SCALE },
      statefulSetStrategy(),
    ),
    { ...def({ group: 'events.k8s.io', version: 'v1', kind: 'Event', plural: 'events', namespaced: true, shortNames: ['ev'] }, eventsV1Strategy()), conversion: EVENTS_V1_CONVERSION },
    ...accessReviewResources(deps.authorizer),
    def({ group: 'batch', version: 'v1', kind: 'Job', plural: 'jobs', namespaced: true, categories: ['all'], status: true }, jobStrategy()),
    def({ group: 'policy', version: 'v1', kind: 'PodDisruptionBudget', plural: 'poddisruptionbudgets', namespaced: true, shortNames: ['pdb'], status: true }, podDisruptionBudgetStrategy()),
    def({ group: RBAC_GROUP, version: 'v1', kind: 'ClusterRoleBinding', plural: 'clusterrolebindings', namespaced: false }, roleBindingStrategy(false)),
    def({ group: RBAC_GROUP, version: 'v1', kind: 'ClusterRole', plural: 'clusterroles', namespaced: false }, clusterRoleStrategy()),
    def({ group: RBAC_GROUP, version: 'v1', kind: 'RoleBinding', plural: 'rolebindings', namespaced: true }, roleBindingStrategy(true)),
    def({ group: RBAC_GROUP, version: 'v1', kind: 'Role', plural: 'roles', namespaced: true }, roleStrategy()),
    def(
      { group: 'admissionregistration.k8s.io', version: 'v1', kind: 'MutatingWebhookConfiguration', plural: 'mutatingwebhookconfigurations', namespaced: false, categories: ['api-extensions'] },
      webhookConfigurationStrategy(true),
    ),
    def(
      { group: 'admissionregistration.k8s.io', version: 'v1', kind: 'ValidatingWebhookConfiguration', plural: 'validatingwebhookconfigurations', namespaced: false, categories: ['api-extensions'] },
      webhookConfigurationStrategy(false),
    ),
    def(
      { group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition', plural: 'customresourcedefinitions', namespaced: false, shortNames: ['crd', 'crds'], categories: ['api-extensions'], status: true },
      customResourceDefinitionStrategy(),
    ),
    def({ group: 'scheduling.k8s.io', version: 'v1', kind: 'PriorityClass', plural: 'priorityclasses', namespaced: false, shortNames: ['pc'] }, priorityClassStrategy()),
    def({ group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', plural: 'leases', namespaced: true }, leaseStrategy()),
  ];
}
