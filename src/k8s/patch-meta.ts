/**
 * Strategic-merge-patch metadata of the built-in kinds the embedded API server
 * serves: the `patchStrategy` / `patchMergeKey` struct tags of k8s.io/api,
 * transcribed by hand. Only fields with a tag (or leading to one) are listed;
 * every other list is replaced and every other map merged. Lists marked
 * `+listType=atomic` without a tag (tolerations, node affinity terms, taints,
 * container resizePolicy and statuses, CRD versions...) are therefore replaced.
 * Custom resources have no strategic-merge metadata: `patchMetaForKind`
 * returns undefined for them (the API server answers 415).
 */
export type PatchStrategy = 'merge' | 'replace' | 'retainKeys' | 'merge,retainKeys';

export interface PatchMeta {
  /** Struct fields by JSON name. */
  fields?: Record<string, PatchMeta>;
  /** For a list field: the metadata of its elements. */
  items?: PatchMeta;
  /** For a map[string]T field: the metadata of every value. */
  map?: PatchMeta;
  /** For a merge-strategy list of objects: the field identifying an element. */
  mergeKey?: string;
  /** The field's patchStrategy tag; absent means maps merge and lists replace. */
  strategy?: PatchStrategy;
}

const mergeBy = (mergeKey: string, items?: PatchMeta): PatchMeta => ({ strategy: 'merge', mergeKey, ...(items !== undefined ? { items } : {}) });
const mergeRetainingBy = (mergeKey: string): PatchMeta => ({ strategy: 'merge,retainKeys', mergeKey });
/** A list of primitives merged as a set (e.g. finalizers). */
const mergeSet: PatchMeta = { strategy: 'merge' };
const conditionsByType: PatchMeta = mergeBy('type');

export const OBJECT_META_PATCH_META: PatchMeta = {
  fields: {
    ownerReferences: mergeBy('uid'),
    finalizers: mergeSet,
  },
};

const CONTAINER: PatchMeta = {
  fields: {
    ports: mergeBy('containerPort'),
    env: mergeBy('name'),
    volumeMounts: mergeBy('mountPath'),
    volumeDevices: mergeBy('devicePath'),
  },
};

export const POD_SPEC_PATCH_META: PatchMeta = {
  fields: {
    volumes: mergeRetainingBy('name'),
    initContainers: mergeBy('name', CONTAINER),
    containers: mergeBy('name', CONTAINER),
    ephemeralContainers: mergeBy('name', CONTAINER),
    imagePullSecrets: mergeBy('name'),
    hostAliases: mergeBy('ip'),
    topologySpreadConstraints: mergeBy('topologyKey'),
    schedulingGates: mergeBy('name'),
    resourceClaims: mergeRetainingBy('name'),
  },
};

const POD_STATUS: PatchMeta = {
  fields: {
    conditions: conditionsByType,
    podIPs: mergeBy('ip'),
    hostIPs: mergeBy('ip'),
    resourceClaimStatuses: mergeRetainingBy('name'),
  },
};

export const POD_PATCH_META: PatchMeta = {
  fields: { metadata: OBJECT_META_PATCH_META, spec: POD_SPEC_PATCH_META, status: POD_STATUS },
};

export const POD_TEMPLATE_SPEC_PATCH_META: PatchMeta = {
  fields: { metadata: OBJECT_META_PATCH_META, spec: POD_SPEC_PATCH_META },
};

const metadataOnly: PatchMeta = { fields: { metadata: OBJECT_META_PATCH_META } };

/** A kind whose spec has a pod template at `spec.template` and whose status has typed conditions. */
const withPodTemplate: PatchMeta = {
  fields: {
    metadata: OBJECT_META_PATCH_META,
    spec: { fields: { template: POD_TEMPLATE_SPEC_PATCH_META } },
    status: { fields: { conditions: conditionsByType } },
  },
};

const withConditions: PatchMeta = {
  fields: { metadata: OBJECT_META_PATCH_META, status: { fields: { conditions: conditionsByType } } },
};

const NODE: PatchMeta = {
  fields: {
    metadata: OBJECT_META_PATCH_META,
    spec: { fields: { podCIDRs: mergeSet } },
    status: { fields: { conditions: conditionsByType, addresses: mergeBy('type') } },
  },
};

const SERVICE: PatchMeta = {
  fields: {
    metadata: OBJECT_META_PATCH_META,
    spec: { fields: { ports: mergeBy('port') } },
    status: { fields: { conditions: conditionsByType } },
  },
};

const CRON_JOB: PatchMeta = {
  fields: {
    metadata: OBJECT_META_PATCH_META,
    spec: { fields: { jobTemplate: { fields: { metadata: OBJECT_META_PATCH_META, spec: { fields: { template: POD_TEMPLATE_SPEC_PATCH_META } } } } } },
  },
};

const WEBHOOK_CONFIGURATION: PatchMeta = { fields: { metadata: OBJECT_META_PATCH_META, webhooks: mergeBy('name') } };

const TABLE = new Map<string, PatchMeta>([
  ['v1/Pod', POD_PATCH_META],
  ['v1/PodTemplate', { fields: { metadata: OBJECT_META_PATCH_META, template: POD_TEMPLATE_SPEC_PATCH_META } }],
  ['v1/ReplicationController', withPodTemplate],
  ['v1/Node', NODE],
  ['v1/Service', SERVICE],
  ['v1/ServiceAccount', { fields: { metadata: OBJECT_META_PATCH_META, secrets: mergeBy('name') } }],
  ['v1/Namespace', withConditions],
  ['v1/PersistentVolumeClaim', withConditions],
  ['v1/PersistentVolume', metadataOnly],
  ['v1/ConfigMap', metadataOnly],
  ['v1/Secret', metadataOnly],
  ['v1/Event', metadataOnly],
  ['v1/Endpoints', metadataOnly],
  ['v1/LimitRange', metadataOnly],
  ['v1/ResourceQuota', metadataOnly],
  ['events.k8s.io/v1/Event', metadataOnly],
  ['apps/v1/Deployment', withPodTemplate],
  ['apps/v1/ReplicaSet', withPodTemplate],
  ['apps/v1/StatefulSet', withPodTemplate],
  ['apps/v1/DaemonSet', withPodTemplate],
  ['apps/v1/ControllerRevision', metadataOnly],
  ['batch/v1/Job', withPodTemplate],
  ['batch/v1/CronJob', CRON_JOB],
  ['policy/v1/PodDisruptionBudget', withConditions],
  ['coordination.k8s.io/v1/Lease', metadataOnly],
  ['scheduling.k8s.io/v1/PriorityClass', metadataOnly],
  ['admissionregistration.k8s.io/v1/MutatingWebhookConfiguration', WEBHOOK_CONFIGURATION],
  ['admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration', WEBHOOK_CONFIGURATION],
  ['apiextensions.k8s.io/v1/CustomResourceDefinition', metadataOnly],
  // RBAC: no list carries a patch strategy (rules and subjects are replaced whole).
  ['rbac.authorization.k8s.io/v1/Role', metadataOnly],
  ['rbac.authorization.k8s.io/v1/ClusterRole', metadataOnly],
  ['rbac.authorization.k8s.io/v1/RoleBinding', metadataOnly],
  ['rbac.authorization.k8s.io/v1/ClusterRoleBinding', metadataOnly],
]);

/** The strategic-merge metadata of a built-in kind; undefined for kinds without it (custom resources). */
export function patchMetaForKind(apiVersion: string, kind: string): PatchMeta | undefined {
  return TABLE.get(`${apiVersion}/${kind}`);
}
