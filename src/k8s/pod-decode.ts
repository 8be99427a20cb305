/**
 * "Would Go's json.Unmarshal accept this pod template?" — the type check that
 * happens before any validation when an API server, or the reference's
 * WorkloadSpread webhook (spec §7 V15, "failed to unmarshal: ..."), decodes a
 * pod template. Returns the first problem in the words of encoding/json
 * (`json: cannot unmarshal string into Go struct field PodSpec.spec.containers
 * of type []v1.Container`) or of resource.Quantity for malformed quantities.
 *
 * Only the fields that WorkloadSpread patches and pod validation read are
 * typed here; anything else is accepted as Go would accept an unknown field.
 * JSON null is accepted everywhere (Go leaves the zero value).
 */
import { parseQuantityNanos } from './quantity.ts';

/** Upstream's resource.ErrFormatWrong text. */
export const QUANTITY_FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

type Shape =
  | { kind: 'string'; goType?: string }
  | { kind: 'bool' }
  | { kind: 'int'; goType: string }
  | { kind: 'quantity' }
  | { kind: 'list'; goType: string; item: Shape }
  | { kind: 'map'; goType: string; value: Shape }
  | { kind: 'struct'; name: string; goType: string; fields: Record<string, Shape> };

const str = (goType?: string): Shape => (goType === undefined ? { kind: 'string' } : { kind: 'string', goType });
const int32: Shape = { kind: 'int', goType: 'int32' };
const ptrInt64: Shape = { kind: 'int', goType: '*int64' };
const bool: Shape = { kind: 'bool' };
const strings: Shape = { kind: 'list', goType: '[]string', item: str() };
const stringMap: Shape = { kind: 'map', goType: 'map[string]string', value: str() };
const resourceList: Shape = { kind: 'map', goType: 'v1.ResourceList', value: { kind: 'quantity' } };

function struct(name: string, fields: Record<string, Shape>, pointer = false): Shape {
  return { kind: 'struct', name, goType: `${pointer ? '*' : ''}v1.${name}`, fields };
}
function list(item: Shape & { kind: 'struct' }): Shape {
  return { kind: 'list', goType: `[]v1.${item.name}`, item };
}

const requirement = struct('NodeSelectorRequirement', { key: str(), operator: str('v1.NodeSelectorOperator'), values: strings }) as Shape & { kind: 'struct' };
const term = struct('NodeSelectorTerm', { matchExpressions: list(requirement), matchFields: list(requirement) }) as Shape & { kind: 'struct' };
const preferred = struct('PreferredSchedulingTerm', { weight: int32, preference: term }) as Shape & { kind: 'struct' };
const nodeAffinity = struct(
  'NodeAffinity',
  {
    requiredDuringSchedulingIgnoredDuringExecution: struct('NodeSelector', { nodeSelectorTerms: list(term) }, true),
    preferredDuringSchedulingIgnoredDuringExecution: list(preferred),
  },
  true,
);
const toleration = struct('Toleration', {
  key: str(),
  operator: str('v1.TolerationOperator'),
  value: str(),
  effect: str('v1.TaintEffect'),
  tolerationSeconds: ptrInt64,
}) as Shape & { kind: 'struct' };
const keySelector = (name: string): Shape => struct(name, { name: str(), key: str(), optional: bool }, true);
const envVar = struct('EnvVar', {
  name: str(),
  value: str(),
  valueFrom: struct(
    'EnvVarSource',
    {
      fieldRef: struct('ObjectFieldSelector', { apiVersion: str(), fieldPath: str() }, true),
      resourceFieldRef: struct('ResourceFieldSelector', { containerName: str(), resource: str(), divisor: { kind: 'quantity' } }, true),
      configMapKeyRef: keySelector('ConfigMapKeySelector'),
      secretKeyRef: keySelector('SecretKeySelector'),
    },
    true,
  ),
}) as Shape & { kind: 'struct' };
const port = struct('ContainerPort', { name: str(), hostPort: int32, containerPort: int32, protocol: str('v1.Protocol'), hostIP: str() }) as Shape & {
  kind: 'struct';
};
const mount = struct('VolumeMount', { name: str(), readOnly: bool, mountPath: str(), subPath: str(), subPathExpr: str() }) as Shape & { kind: 'struct' };
const container = struct('Container', {
  name: str(),
  image: str(),
  command: strings,
  args: strings,
  workingDir: str(),
  ports: list(port),
  env: list(envVar),
  resources: struct('ResourceRequirements', { limits: resourceList, requests: resourceList }),
  volumeMounts: list(mount),
  imagePullPolicy: str('v1.PullPolicy'),
  terminationMessagePolicy: str('v1.TerminationMessagePolicy'),
  restartPolicy: str('*v1.ContainerRestartPolicy'),
}) as Shape & { kind: 'struct' };
const volume = struct('Volume', {
  name: str(),
  emptyDir: struct('EmptyDirVolumeSource', { medium: str('v1.StorageMedium'), sizeLimit: { kind: 'quantity' } }, true),
  hostPath: struct('HostPathVolumeSource', { path: str() }, true),
  persistentVolumeClaim: struct('PersistentVolumeClaimVolumeSource', { claimName: str(), readOnly: bool }, true),
  configMap: struct('ConfigMapVolumeSource', { name: str() }, true),
  secret: struct('SecretVolumeSource', { secretName: str() }, true),
}) as Shape & { kind: 'struct' };
const podSpec = struct('PodSpec', {
  volumes: list(volume),
  initContainers: list(container),
  containers: list(container),
  restartPolicy: str('v1.RestartPolicy'),
  terminationGracePeriodSeconds: ptrInt64,
  activeDeadlineSeconds: ptrInt64,
  dnsPolicy: str('v1.DNSPolicy'),
  nodeSelector: stringMap,
  serviceAccountName: str(),
  nodeName: str(),
  hostname: str(),
  subdomain: str(),
  affinity: struct('Affinity', { nodeAffinity }, true),
  schedulerName: str(),
  tolerations: list(toleration),
  priorityClassName: str(),
  priority: { kind: 'int', goType: '*int32' },
});
const objectMeta = struct('ObjectMeta', { name: str(), generateName: str(), namespace: str(), labels: stringMap, annotations: stringMap });
const podTemplateSpec = struct('PodTemplateSpec', { metadata: objectMeta, spec: podSpec });

function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'object') return 'object';
  return typeof value;
}

class DecodeFailure {
  constructor(readonly message: string) {}
}

/** encoding/json's UnmarshalTypeError text; a number that does not fit an integer type is shown with its literal. */
function mismatch(value: unknown, owner: string, path: string[], goType: string): DecodeFailure {
  const shown = typeof value === 'number' && goType.includes('int') ? `number ${String(value)}` : jsonKind(value);
  const target = path.length === 0 ? 'Go value' : `Go struct field ${owner}.${path.join('.')}`;
  return new DecodeFailure(`json: cannot unmarshal ${shown} into ${target} of type ${goType}`);
}

/** Walks `value` against `shape`; `owner` is the innermost Go struct, `path` the JSON field path from the root. */
function check(value: unknown, shape: Shape, owner: string, path: string[]): DecodeFailure | undefined {
  if (value === null || value === undefined) return undefined;
  switch (shape.kind) {
    case 'string':
      return typeof value === 'string' ? undefined : mismatch(value, owner, path, shape.goType ?? 'string');
    case 'bool':
      return typeof value === 'boolean' ? undefined : mismatch(value, owner, path, 'bool');
    case 'int':
      return typeof value === 'number' && Number.isInteger(value) ? undefined : mismatch(value, owner, path, shape.goType);
    case 'quantity':
      if (typeof value !== 'string' && typeof value !== 'number') return mismatch(value, owner, path, 'resource.Quantity');
      return parseQuantityNanos(typeof value === 'string' ? value.trim() : value) === undefined ? new DecodeFailure(QUANTITY_FORMAT_ERROR) : undefined;
    case 'list': {
      if (!Array.isArray(value)) return mismatch(value, owner, path, shape.goType);
      for (const item of value) {
        const failure = check(item, shape.item, owner, path);
        if (failure) return failure;
      }
      return undefined;
    }
    case 'map': {
      if (typeof value !== 'object' || Array.isArray(value)) return mismatch(value, owner, path, shape.goType);
      for (const item of Object.values(value as Record<string, unknown>)) {
        const failure = check(item, shape.value, owner, path);
        if (failure) return failure;
      }
      return undefined;
    }
    case 'struct': {
      if (typeof value !== 'object' || Array.isArray(value)) return mismatch(value, owner, path, shape.goType);
      for (const [key, fieldValue] of Object.entries(value as Record<string, unknown>)) {
        const fieldShape = shape.fields[key];
        if (fieldShape === undefined) continue;
        const failure = check(fieldValue, fieldShape, shape.name, [...path, key]);
        if (failure) return failure;
      }
      return undefined;
    }
  }
}

/** The decode error of a PodTemplateSpec (`{metadata, spec}`), or undefined when Go would decode it. */
export function podTemplateDecodeError(template: unknown): string | undefined {
  return check(template, podTemplateSpec, 'PodTemplateSpec', [])?.message;
}

/** The decode error of a bare PodSpec, or undefined. */
export function podSpecDecodeError(spec: unknown): string | undefined {
  return check(spec, podSpec, 'PodSpec', [])?.message;
}
