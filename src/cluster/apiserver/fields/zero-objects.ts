/**
 * The empty object of a kind a create is compared with, as upstream's field
 * manager compares it (`scope.Creater.New(kind)`, serialized): for built-in
 * kinds, the Go zero value, which already has the structs that are not
 * pointers (`spec`, `spec.template`, `spec.strategy`...) and the fields
 * without `omitempty` (`containers: null`). A create therefore owns those
 * nodes' fields, not the nodes themselves: `f:spec` is never a member of a
 * built-in kind's entry, `f:labels` is (`.`), as on a real cluster. Custom
 * resources are unstructured: their empty object has nothing, so a create
 * owns `spec` itself too.
 * Only the parts outside `status` matter (status is not owned through the main
 * resource of kinds with a status subresource).
 */
import type { KubeObject } from '../../../k8s/types.ts';
import { apiVersionOf, type ResourceDef } from '../resource-def.ts';

const TEMPLATE = { metadata: { creationTimestamp: null }, spec: { containers: null } };

const ZERO: Record<string, KubeObject> = {
  'v1/Pod': { spec: { containers: null } },
  'v1/PodTemplate': { template: TEMPLATE },
  'v1/ReplicationController': { spec: {} },
  'v1/Node': { spec: {} },
  'v1/Service': { spec: {} },
  'v1/Namespace': { spec: {} },
  'v1/PersistentVolumeClaim': { spec: { resources: {} } },
  'v1/PersistentVolume': { spec: {} },
  'v1/Event': { involvedObject: {}, source: {}, firstTimestamp: null, lastTimestamp: null, eventTime: null, reportingComponent: '', reportingInstance: '' },
  'v1/LimitRange': { spec: { limits: null } },
  'v1/ResourceQuota': { spec: {} },
  'events.k8s.io/v1/Event': { eventTime: null },
  'apps/v1/Deployment': { spec: { selector: null, template: TEMPLATE, strategy: {} } },
  'apps/v1/ReplicaSet': { spec: { selector: null, template: TEMPLATE } },
  'apps/v1/StatefulSet': { spec: { selector: null, template: TEMPLATE, updateStrategy: {} } },
  'apps/v1/DaemonSet': { spec: { selector: null, template: TEMPLATE, updateStrategy: {} } },
  'apps/v1/ControllerRevision': { revision: 0 },
  'batch/v1/Job': { spec: { template: TEMPLATE } },
  'batch/v1/CronJob': { spec: { schedule: '', jobTemplate: { metadata: { creationTimestamp: null }, spec: { template: TEMPLATE } } } },
  'policy/v1/PodDisruptionBudget': { spec: {} },
  'coordination.k8s.io/v1/Lease': { spec: {} },
  'scheduling.k8s.io/v1/PriorityClass': { value: 0 },
  'rbac.authorization.k8s.io/v1/Role': { rules: null },
  'rbac.authorization.k8s.io/v1/ClusterRole': { rules: null },
  'rbac.authorization.k8s.io/v1/RoleBinding': { roleRef: {} },
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': { roleRef: {} },
  'apiextensions.k8s.io/v1/CustomResourceDefinition': { spec: { group: '', names: { plural: '', kind: '' }, scope: '', versions: null } },
};

const NOTHING: KubeObject = {};

/** The (shared, never mutated) empty object of a resource's kind. */
export function zeroObject(def: ResourceDef): KubeObject {
  if (!def.builtin) return NOTHING;
  return ZERO[`${apiVersionOf(def)}/${def.kind}`] ?? NOTHING;
}
