/**
 * Development-time only (scripts/gen-openapi.ts and the drift test; the
 * server never imports this): derives the compact description of the
 * built-in kinds from the model classes of @kubernetes/client-node, which are
 * generated from Kubernetes' OpenAPI document and list every field with its
 * type. Definitions get upstream's names (`io.k8s.api.core.v1.PodSpec`,
 * `io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`): a type belongs to the
 * group of the first served kind (in the order below) that reaches it.
 */

/** The served kinds: group, version, kind, and client-node's class. */
export const ROOT_KINDS: [string, string, string, string][] = [
  ['', 'v1', 'Pod', 'V1Pod'],
  ['', 'v1', 'Node', 'V1Node'],
  ['', 'v1', 'Namespace', 'V1Namespace'],
  ['', 'v1', 'Event', 'CoreV1Event'],
  ['', 'v1', 'ConfigMap', 'V1ConfigMap'],
  ['', 'v1', 'Secret', 'V1Secret'],
  ['', 'v1', 'ServiceAccount', 'V1ServiceAccount'],
  ['', 'v1', 'Service', 'V1Service'],
  ['', 'v1', 'Binding', 'V1Binding'],
  ['', 'v1', 'Endpoints', 'V1Endpoints'],
  ['', 'v1', 'PodTemplate', 'V1PodTemplate'],
  ['', 'v1', 'ReplicationController', 'V1ReplicationController'],
  ['', 'v1', 'PersistentVolumeClaim', 'V1PersistentVolumeClaim'],
  ['', 'v1', 'PersistentVolume', 'V1PersistentVolume'],
  ['', 'v1', 'LimitRange', 'V1LimitRange'],
  ['', 'v1', 'ResourceQuota', 'V1ResourceQuota'],
  ['apps', 'v1', 'DaemonSet', 'V1DaemonSet'],
  ['batch', 'v1', 'CronJob', 'V1CronJob'],
  ['apps', 'v1', 'Deployment', 'V1Deployment'],
  ['apps', 'v1', 'ReplicaSet', 'V1ReplicaSet'],
  ['apps', 'v1', 'StatefulSet', 'V1StatefulSet'],
  ['apps', 'v1', 'ControllerRevision', 'V1ControllerRevision'],
  ['batch', 'v1', 'Job', 'V1Job'],
  ['coordination.k8s.io', 'v1', 'Lease', 'V1Lease'],
  ['policy', 'v1', 'PodDisruptionBudget', 'V1PodDisruptionBudget'],
  ['policy', 'v1', 'Eviction', 'V1Eviction'],
  ['scheduling.k8s.io', 'v1', 'PriorityClass', 'V1PriorityClass'],
  ['events.k8s.io', 'v1', 'Event', 'EventsV1Event'],
  ['autoscaling', 'v1', 'Scale', 'V1Scale'],
  ['apiextensions.k8s.io', 'v1', 'CustomResourceDefinition', 'V1CustomResourceDefinition'],
  ['admissionregistration.k8s.io', 'v1', 'MutatingWebhookConfiguration', 'V1MutatingWebhookConfiguration'],
  ['admissionregistration.k8s.io', 'v1', 'ValidatingWebhookConfiguration', 'V1ValidatingWebhookConfiguration'],
  ['rbac.authorization.k8s.io', 'v1', 'ClusterRole', 'V1ClusterRole'],
  ['rbac.authorization.k8s.io', 'v1', 'ClusterRoleBinding', 'V1ClusterRoleBinding'],
  ['rbac.authorization.k8s.io', 'v1', 'Role', 'V1Role'],
  ['rbac.authorization.k8s.io', 'v1', 'RoleBinding', 'V1RoleBinding'],
  ['authorization.k8s.io', 'v1', 'SelfSubjectAccessReview', 'V1SelfSubjectAccessReview'],
  ['authorization.k8s.io', 'v1', 'SelfSubjectRulesReview', 'V1SelfSubjectRulesReview'],
  ['authorization.k8s.io', 'v1', 'SubjectAccessReview', 'V1SubjectAccessReview'],
  ['authorization.k8s.io', 'v1', 'LocalSubjectAccessReview', 'V1LocalSubjectAccessReview'],
  ['authentication.k8s.io', 'v1', 'SelfSubjectReview', 'V1SelfSubjectReview'],
  ['authentication.k8s.io', 'v1', 'TokenRequest', 'AuthenticationV1TokenRequest'],
];

const META_TYPES = new Set([
  'ObjectMeta',
  'ListMeta',
  'LabelSelector',
  'LabelSelectorRequirement',
  'OwnerReference',
  'ManagedFieldsEntry',
  'Condition',
  'Status',
  'StatusDetails',
  'StatusCause',
  'DeleteOptions',
  'Preconditions',
]);

/** The types each non-core group defines itself; anything else reached from its kinds is core/v1 (pod templates, volume claims...). */
const OWN_TYPES: Record<string, RegExp> = {
  apps: /^(Deployment|ReplicaSet|StatefulSet|DaemonSet|ControllerRevision|RollingUpdate)/,
  batch: /^(Job|CronJob|PodFailurePolicy|SuccessPolicy|UncountedTerminatedPods)/,
  'coordination.k8s.io': /^Lease/,
  policy: /^(PodDisruptionBudget|Eviction)/,
  'scheduling.k8s.io': /^PriorityClass/,
  autoscaling: /^Scale/,
  'events.k8s.io': /^Event/,
  'apiextensions.k8s.io': /^(CustomResource|JSONSchemaProps|ExternalDocumentation|ValidationRule|SelectableField|WebhookConversion|ServiceReference|WebhookClientConfig)/,
  'admissionregistration.k8s.io': /^(MutatingWebhook|ValidatingWebhook|RuleWithOperations|MatchCondition|ServiceReference|WebhookClientConfig)/,
  'rbac.authorization.k8s.io': /^(ClusterRole|Role|PolicyRule|AggregationRule|Subject)/,
  'authorization.k8s.io': /^(SelfSubject|SubjectAccess|LocalSubjectAccess|SubjectRules|ResourceAttributes|NonResourceAttributes|ResourceRule|NonResourceRule|FieldSelectorAttributes|LabelSelectorAttributes)/,
  'authentication.k8s.io': /^(SelfSubjectReview|UserInfo|TokenRequest|BoundObjectReference)/,
};

const GROUP_PREFIXES: Record<string, string> = { Core: '', Events: 'events.k8s.io', Admissionregistration: 'admissionregistration.k8s.io', Apiextensions: 'apiextensions.k8s.io', Rbac: 'rbac.authorization.k8s.io', Authentication: 'authentication.k8s.io' };

interface Attribute {
  name: string;
  baseName: string;
  type: string;
  format: string;
}
type ModelClass = { getAttributeTypeMap(): Attribute[] };

function packageOf(group: string, version: string): string {
  if (group === '') return `io.k8s.api.core.${version}`;
  if (group === 'apiextensions.k8s.io') return `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.${version}`;
  // The Go package's name: the group's first label (rbac.authorization.k8s.io → rbac).
  return `io.k8s.api.${group.split('.')[0] ?? group}.${version}`;
}

/** The compact description, as the text of the generated TypeScript module. */
export async function compactSchemas(): Promise<string> {
  const k8s = (await import('@kubernetes/client-node')) as unknown as Record<string, ModelClass | undefined>;
  const defs = new Map<string, { props: Record<string, string>; gvk?: [string, string, string] }>();
  const nameOfClass = new Map<string, string>();

  const defName = (cls: string, group: string, version: string): string => {
    const known = nameOfClass.get(cls);
    if (known !== undefined) return known;
    let base = cls;
    let g = group;
    let v = version;
    const prefixed = /^(Core|Events|Admissionregistration|Apiextensions|Rbac|Authentication)(V\d+(?:alpha\d+|beta\d+)?)(.+)$/.exec(cls);
    const plain = /^(V\d+(?:alpha\d+|beta\d+)?)(.+)$/.exec(cls);
    if (prefixed !== null) {
      g = GROUP_PREFIXES[prefixed[1] as string] ?? group;
      v = (prefixed[2] as string).toLowerCase();
      base = prefixed[3] as string;
    } else if (plain !== null) {
      v = (plain[1] as string).toLowerCase();
      base = plain[2] as string;
    }
    if (g !== '' && prefixed === null && !(OWN_TYPES[g]?.test(base) ?? false)) g = '';
    const full = META_TYPES.has(base) ? `io.k8s.apimachinery.pkg.apis.meta.v1.${base}` : `${packageOf(g, v)}.${base}`;
    nameOfClass.set(cls, full);
    return full;
  };

  const compactType = (t: string, format: string, group: string, version: string, queue: [string, string, string][]): string => {
    const arr = /^Array<(.+)>$/.exec(t);
    if (arr !== null) return `[]${compactType(arr[1] as string, format, group, version, queue)}`;
    const map = /^\{ \[key: string\]: (.+); \}$/.exec(t);
    if (map !== null) return `{}${compactType(map[1] as string, format, group, version, queue)}`;
    switch (t) {
      case 'string':
        return format === 'byte' ? 'string/byte' : 'string';
      case 'number':
        return format === 'int32' || format === 'int64' ? `integer/${format}` : format === 'double' ? 'number/double' : 'number';
      case 'boolean':
        return 'boolean';
      case 'Date':
      case 'V1MicroTime':
        return 'string/date-time';
      case 'IntOrString':
        return 'int-or-string';
      case 'object':
        return 'object';
      case 'any':
        return 'any';
      default:
        queue.push([t, group, version]);
        return `#${defName(t, group, version)}`;
    }
  };

  for (const [group, version, kind, cls] of ROOT_KINDS) {
    const queue: [string, string, string][] = [[cls, group, version]];
    const rootName = defName(cls, group, version);
    while (queue.length > 0) {
      const [c, g, v] = queue.shift() as [string, string, string];
      const name = defName(c, g, v);
      if (defs.has(name)) continue;
      const model = k8s[c];
      if (model === undefined || typeof model.getAttributeTypeMap !== 'function') throw new Error(`no model class ${c}`);
      const entry: { props: Record<string, string>; gvk?: [string, string, string] } = { props: {} };
      defs.set(name, entry);
      for (const a of model.getAttributeTypeMap()) entry.props[a.baseName] = compactType(a.type, a.format, g, v, queue);
    }
    const root = defs.get(rootName);
    if (root !== undefined) root.gvk = [group, version, kind];
  }
  const sorted = [...defs.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const lines = sorted.map(([name, d]) => `  ${JSON.stringify(name)}: ${JSON.stringify(d.gvk === undefined ? { p: d.props } : { k: d.gvk, p: d.props })},`);
  return [
    '// Generated by `npx tsx scripts/gen-openapi.ts` from the model classes of @kubernetes/client-node. Do not edit by hand.',
    '// Each definition: `k` = [group, version, kind] for kinds, `p` = field → compact type (see openapi/schemas.ts).',
    'export const BUILTIN_DEFINITIONS: Record<string, { k?: [string, string, string]; p: Record<string, string> }> = {',
    ...lines,
    '};',
    '',
  ].join('\n');
}
