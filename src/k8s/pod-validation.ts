/**
 * Pod spec and pod template validation: a faithful subset of
 * k8s.io/kubernetes/pkg/apis/core/validation (ValidatePodSpec,
 * ValidatePodTemplateSpec), enough to catch what a WorkloadSpread subset patch
 * can break (spec §7 V15, user-issues #11) and to give the embedded API server
 * upstream's answers for common mistakes. Paths and messages are upstream's.
 *
 * Reproduced: containers required; container and init-container names (DNS-1123
 * labels, unique across both lists); image required; ports (1..65535, protocol,
 * unique names, host port conflicts); env names and valueFrom exclusivity with
 * the key selectors; envFrom; resources (resource-validation.ts);
 * volumes (unique DNS-1123 names, exactly one source, the required field of the
 * common sources); volumeMounts (volume exists, unique mountPath, subPath
 * relative without `..`); restartPolicy, dnsPolicy, imagePullPolicy,
 * terminationMessagePolicy enums; init-container restartPolicy and the probes
 * they may not carry; nodeSelector labels; node affinity; tolerations;
 * serviceAccountName, nodeName, priorityClassName, hostname, subdomain;
 * activeDeadlineSeconds; terminationGracePeriodSeconds ≥ 0; template labels,
 * annotations and the pod-deletion-cost annotation.
 *
 * NOT reproduced: probe and lifecycle handler contents, security contexts,
 * pod (anti-)affinity terms, topology spread constraints, DNS config, host
 * aliases, sysctls, OS-specific rules, resource claims, hugepage divisibility,
 * ephemeral containers (only rejected in templates), per-source fields of the
 * rarer volume types, mount propagation.
 *
 * Fields that the API server defaults before validating (restartPolicy,
 * dnsPolicy, imagePullPolicy, terminationMessagePolicy, port protocol,
 * terminationGracePeriodSeconds) are accepted when unset, as if defaulted.
 */
import { forbidden, invalid, notFound, notSupported, required, duplicate, type FieldError, type FieldPath } from './field-errors.ts';
import { nameIsDNSSubdomain, validateAnnotations, validateLabels } from './meta-validation.ts';
import { inclusiveRangeError, isConfigMapKey, isDNS1123Label, isEnvVarName, isQualifiedName, isValidPortName, isValidPortNum } from './name-formats.ts';
import { quantityNanos, validateResourceRequirements } from './resource-validation.ts';
import { validateNodeSelector, validatePreferredSchedulingTerms, validateTolerations } from './scheduling-validation.ts';
import { arrayField, asNumber, asRecord, asString, stringField, type JsonRecord } from './raw-json.ts';

const MAX_INT32 = 2147483647;
const NEGATIVE = 'must be greater than or equal to 0';
const DELETION_COST_ANNOTATION = 'controller.kubernetes.io/pod-deletion-cost';

/** The volume sources of core/v1, in upstream's checking order, with the path upstream uses in its "more than 1" error. */
const VOLUME_SOURCES: readonly (readonly [json: string, forbiddenPath: string])[] = [
  ['emptyDir', 'emptyDir'], ['hostPath', 'hostPath'], ['gitRepo', 'gitRepo'], ['gcePersistentDisk', 'gcePersistentDisk'],
  ['awsElasticBlockStore', 'awsElasticBlockStore'], ['secret', 'secret'], ['nfs', 'nfs'], ['iscsi', 'iscsi'],
  ['glusterfs', 'glusterfs'], ['flocker', 'flocker'], ['persistentVolumeClaim', 'persistentVolumeClaim'], ['rbd', 'rbd'],
  ['cinder', 'cinder'], ['cephfs', 'cephFS'], ['quobyte', 'quobyte'], ['downwardAPI', 'downwarAPI'], ['fc', 'fc'],
  ['flexVolume', 'flexVolume'], ['configMap', 'configMap'], ['azureFile', 'azureFile'], ['vsphereVolume', 'vsphereVolume'],
  ['photonPersistentDisk', 'photonPersistentDisk'], ['portworxVolume', 'portworxVolume'], ['azureDisk', 'azureDisk'],
  ['storageos', 'storageos'], ['projected', 'projected'], ['scaleIO', 'scaleIO'], ['csi', 'csi'], ['ephemeral', 'ephemeral'],
  ['image', 'image'],
];

/** The one required field of the common volume sources (upstream: `Required value` with no detail). */
const VOLUME_SOURCE_REQUIRED: Readonly<Record<string, string>> = {
  hostPath: 'path', persistentVolumeClaim: 'claimName', secret: 'secretName', configMap: 'name', csi: 'driver', nfs: 'server',
};

function validateVolumeSource(volume: JsonRecord, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  let count = 0;
  for (const [key, forbiddenName] of VOLUME_SOURCES) {
    const source = volume[key];
    if (source === undefined || source === null) continue;
    if (count > 0) {
      errs.push(forbidden(path.child(forbiddenName), 'may not specify more than 1 volume type'));
      continue;
    }
    count++;
    const record = asRecord(source);
    const requiredField = VOLUME_SOURCE_REQUIRED[key];
    if (requiredField !== undefined && stringField(record, requiredField).length === 0) errs.push(required(path.child(key, requiredField), ''));
    if (key === 'emptyDir' && record?.['sizeLimit'] !== undefined && record['sizeLimit'] !== null) {
      const size = quantityNanos(record['sizeLimit']);
      if (size !== undefined && size < 0n) errs.push(forbidden(path.child('emptyDir', 'sizeLimit'), 'SizeLimit field must be a valid resource quantity'));
    }
  }
  if (count === 0) errs.push(required(path, 'must specify a volume type'));
  return errs;
}

/** `ValidateVolumes`: returns the names that validated cleanly (mounts may only refer to those) and the errors. */
function validateVolumes(volumes: unknown[], path: FieldPath): { names: Set<string>; errors: FieldError[] } {
  const names = new Set<string>();
  const errors: FieldError[] = [];
  volumes.forEach((raw, i) => {
    const volume = asRecord(raw) ?? {};
    const idx = path.index(i);
    const name = stringField(volume, 'name');
    const el = validateVolumeSource(volume, idx);
    if (name.length === 0) el.push(required(idx.child('name'), ''));
    else el.push(...isDNS1123Label(name).map((m) => invalid(idx.child('name'), name, m)));
    if (names.has(name)) el.push(duplicate(idx.child('name'), name));
    if (el.length === 0) names.add(name);
    else errors.push(...el);
  });
  return { names, errors };
}

function validateLocalDescendingPath(target: string, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (target.startsWith('/')) errs.push(invalid(path, target, 'must be a relative path'));
  if (target.split('/').includes('..')) errs.push(invalid(path, target, "must not contain '..'"));
  return errs;
}

function validateVolumeMounts(mounts: unknown[], volumes: Set<string>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const mountPoints = new Set<string>();
  mounts.forEach((raw, i) => {
    const mount = asRecord(raw);
    const idx = path.index(i);
    const name = stringField(mount, 'name');
    const mountPath = stringField(mount, 'mountPath');
    const subPath = stringField(mount, 'subPath');
    const subPathExpr = stringField(mount, 'subPathExpr');
    if (name.length === 0) errs.push(required(idx.child('name'), ''));
    if (!volumes.has(name)) errs.push(notFound(idx.child('name'), name));
    if (mountPath.length === 0) errs.push(required(idx.child('mountPath'), ''));
    if (mountPoints.has(mountPath)) errs.push(invalid(idx.child('mountPath'), mountPath, 'must be unique'));
    mountPoints.add(mountPath);
    // Upstream reports subPath problems on the list's path, not the entry's.
    if (subPath.length > 0) errs.push(...validateLocalDescendingPath(subPath, path.child('subPath')));
    if (subPathExpr.length > 0) {
      if (subPath.length > 0) errs.push(invalid(idx.child('subPathExpr'), subPathExpr, 'subPathExpr and subPath are mutually exclusive'));
      errs.push(...validateLocalDescendingPath(subPathExpr, path.child('subPathExpr')));
    }
  });
  return errs;
}

function validatePorts(ports: unknown[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  ports.forEach((raw, i) => {
    const port = asRecord(raw);
    const idx = path.index(i);
    const name = stringField(port, 'name');
    if (name.length > 0) {
      const problems = isValidPortName(name);
      if (problems.length > 0) errs.push(...problems.map((m) => invalid(idx.child('name'), name, m)));
      else if (names.has(name)) errs.push(duplicate(idx.child('name'), name));
      else names.add(name);
    }
    const containerPort = asNumber(port?.['containerPort']) ?? 0;
    if (containerPort === 0) errs.push(required(idx.child('containerPort'), ''));
    else errs.push(...isValidPortNum(containerPort).map((m) => invalid(idx.child('containerPort'), containerPort, m)));
    const hostPort = asNumber(port?.['hostPort']) ?? 0;
    if (hostPort !== 0) errs.push(...isValidPortNum(hostPort).map((m) => invalid(idx.child('hostPort'), hostPort, m)));
    const protocol = stringField(port, 'protocol');
    if (protocol.length > 0 && !['SCTP', 'TCP', 'UDP'].includes(protocol)) errs.push(notSupported(idx.child('protocol'), protocol, ['SCTP', 'TCP', 'UDP']));
  });
  return errs;
}

/** Host ports must not collide (protocol/hostIP/port) across the given containers. */
function hostPortConflicts(containers: unknown[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  containers.forEach((c, ci) => {
    arrayField(asRecord(c), 'ports').forEach((p, pi) => {
      const port = asRecord(p);
      const hostPort = asNumber(port?.['hostPort']) ?? 0;
      if (hostPort === 0) return;
      const key = `${stringField(port, 'protocol') || 'TCP'}/${stringField(port, 'hostIP')}/${hostPort}`;
      if (seen.has(key)) errs.push(duplicate(path.index(ci).child('ports').index(pi).child('hostPort'), key));
      else seen.add(key);
    });
  });
  return errs;
}

const ENV_FIELD_PATHS = ['metadata.name', 'metadata.namespace', 'metadata.uid', 'spec.nodeName', 'spec.serviceAccountName',
  'status.hostIP', 'status.hostIPs', 'status.podIP', 'status.podIPs'];
const CONVERTIBLE_FIELD_PATHS = new Set([...ENV_FIELD_PATHS, 'metadata.annotations', 'metadata.labels', 'spec.restartPolicy',
  'spec.schedulerName', 'status.phase']);
const RESOURCE_FIELD_PATHS = ['limits.cpu', 'limits.ephemeral-storage', 'limits.memory', 'requests.cpu', 'requests.ephemeral-storage', 'requests.memory'];

function validateFieldRef(ref: JsonRecord, path: FieldPath): FieldError[] {
  const fieldPath = stringField(ref, 'fieldPath');
  if (fieldPath.length === 0) return [required(path.child('fieldPath'), '')];
  const subscripted = /^(.*)\['(.*)'\]$/.exec(fieldPath);
  const base = subscripted ? (subscripted[1] as string) : fieldPath;
  if (!CONVERTIBLE_FIELD_PATHS.has(base)) {
    return [invalid(path.child('fieldPath'), fieldPath, `error converting fieldPath: field label not supported: ${fieldPath}`)];
  }
  if (subscripted) {
    const key = subscripted[2] as string;
    if (base === 'metadata.annotations') return isQualifiedName(key.toLowerCase()).map((m) => invalid(path, key.toLowerCase(), m));
    if (base === 'metadata.labels') return isQualifiedName(key).map((m) => invalid(path, key, m));
    return [invalid(path, base, 'does not support subscript')];
  }
  if (!ENV_FIELD_PATHS.includes(base)) return [notSupported(path.child('fieldPath'), base, [...ENV_FIELD_PATHS].sort())];
  return [];
}

function validateKeySelector(ref: JsonRecord, path: FieldPath): FieldError[] {
  const name = stringField(ref, 'name');
  const key = stringField(ref, 'key');
  const errs = nameIsDNSSubdomain(name, false).map((m) => invalid(path.child('name'), name, m));
  if (key.length === 0) errs.push(required(path.child('key'), ''));
  else errs.push(...isConfigMapKey(key).map((m) => invalid(path.child('key'), key, m)));
  return errs;
}

function validateEnv(env: unknown[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  env.forEach((raw, i) => {
    const ev = asRecord(raw);
    const idx = path.index(i);
    const name = stringField(ev, 'name');
    if (name.length === 0) errs.push(required(idx.child('name'), ''));
    else errs.push(...isEnvVarName(name).map((m) => invalid(idx.child('name'), name, m)));
    const from = asRecord(ev?.['valueFrom']);
    if (from === undefined) return;
    const fromPath = idx.child('valueFrom');
    let sources = 0;
    const fieldRef = asRecord(from['fieldRef']);
    if (fieldRef) { sources++; errs.push(...validateFieldRef(fieldRef, fromPath.child('fieldRef'))); }
    const resourceRef = asRecord(from['resourceFieldRef']);
    if (resourceRef) {
      sources++;
      const resource = stringField(resourceRef, 'resource');
      const refPath = fromPath.child('resourceFieldRef');
      if (resource.length === 0) errs.push(required(refPath.child('resource'), ''));
      else if (!RESOURCE_FIELD_PATHS.includes(resource) && !/^(requests|limits)\.hugepages-/.test(resource)) {
        errs.push(notSupported(refPath.child('resource'), resource, RESOURCE_FIELD_PATHS));
      }
    }
    const configMapRef = asRecord(from['configMapKeyRef']);
    if (configMapRef) { sources++; errs.push(...validateKeySelector(configMapRef, fromPath.child('configMapKeyRef'))); }
    const secretRef = asRecord(from['secretKeyRef']);
    if (secretRef) { sources++; errs.push(...validateKeySelector(secretRef, fromPath.child('secretKeyRef'))); }
    if (sources === 0) {
      errs.push(invalid(fromPath, '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'));
    } else if (stringField(ev, 'value').length > 0) {
      errs.push(invalid(fromPath, '', 'may not be specified when `value` is not empty'));
    } else if (sources > 1) {
      errs.push(invalid(fromPath, '', 'may not have more than one field specified at a time'));
    }
  });
  return errs;
}

function validateEnvFrom(envFrom: unknown[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  envFrom.forEach((raw, i) => {
    const ef = asRecord(raw);
    const idx = path.index(i);
    const prefix = stringField(ef, 'prefix');
    if (prefix.length > 0) errs.push(...isEnvVarName(prefix).map((m) => invalid(idx.child('prefix'), prefix, m)));
    let sources = 0;
    for (const key of ['configMapRef', 'secretRef']) {
      const ref = asRecord(ef?.[key]);
      if (ref === undefined) continue;
      sources++;
      const name = stringField(ref, 'name');
      if (name.length === 0) errs.push(required(idx.child(key, 'name'), ''));
      else errs.push(...nameIsDNSSubdomain(name, true).map((m) => invalid(idx.child(key, 'name'), name, m)));
    }
    if (sources === 0) errs.push(invalid(path, '', 'must specify one of: `configMapRef` or `secretRef`'));
    else if (sources > 1) errs.push(invalid(path, '', 'may not have more than one field specified at a time'));
  });
  return errs;
}

/** `validateContainerCommon`: what regular and init containers share. */
function validateContainerCommon(container: JsonRecord, volumes: Set<string>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const name = stringField(container, 'name');
  if (name.length === 0) errs.push(required(path.child('name'), ''));
  else errs.push(...isDNS1123Label(name).map((m) => invalid(path.child('name'), name, m)));
  if (stringField(container, 'image').length === 0) errs.push(required(path.child('image'), ''));
  const tmp = stringField(container, 'terminationMessagePolicy');
  if (tmp.length > 0 && tmp !== 'File' && tmp !== 'FallbackToLogsOnError') {
    errs.push(notSupported(path.child('terminationMessagePolicy'), tmp, ['File', 'FallbackToLogsOnError']));
  }
  errs.push(...validatePorts(arrayField(container, 'ports'), path.child('ports')));
  errs.push(...validateEnv(arrayField(container, 'env'), path.child('env')));
  errs.push(...validateEnvFrom(arrayField(container, 'envFrom'), path.child('envFrom')));
  errs.push(...validateVolumeMounts(arrayField(container, 'volumeMounts'), volumes, path.child('volumeMounts')));
  const pull = stringField(container, 'imagePullPolicy');
  if (pull.length > 0 && !['Always', 'IfNotPresent', 'Never'].includes(pull)) {
    errs.push(notSupported(path.child('imagePullPolicy'), pull, ['Always', 'IfNotPresent', 'Never']));
  }
  errs.push(...validateResourceRequirements(container['resources'], path.child('resources')));
  return errs;
}

function validateContainers(containers: unknown[], volumes: Set<string>, path: FieldPath): FieldError[] {
  if (containers.length === 0) return [required(path, '')];
  const errs: FieldError[] = [];
  const names = new Set<string>();
  containers.forEach((raw, i) => {
    const container = asRecord(raw) ?? {};
    const idx = path.index(i);
    errs.push(...validateContainerCommon(container, volumes, idx));
    const name = stringField(container, 'name');
    if (names.has(name)) errs.push(duplicate(idx.child('name'), name));
    else names.add(name);
    if (container['restartPolicy'] !== undefined && container['restartPolicy'] !== null) {
      errs.push(forbidden(idx.child('restartPolicy'), 'may not be set for non-init containers'));
    }
  });
  errs.push(...hostPortConflicts(containers, path));
  return errs;
}

function validateInitContainers(initContainers: unknown[], containers: unknown[], volumes: Set<string>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set(containers.map((c) => stringField(asRecord(c), 'name')));
  initContainers.forEach((raw, i) => {
    const container = asRecord(raw) ?? {};
    const idx = path.index(i);
    errs.push(...validateContainerCommon(container, volumes, idx));
    const restartPolicy = asString(container['restartPolicy']);
    if (restartPolicy !== undefined && restartPolicy !== 'Always') errs.push(notSupported(idx.child('restartPolicy'), restartPolicy, ['Always']));
    const name = stringField(container, 'name');
    if (names.has(name)) errs.push(duplicate(idx.child('name'), name));
    else if (name.length > 0) names.add(name);
    errs.push(...hostPortConflicts([container], path));
    if (restartPolicy !== 'Always') {
      for (const field of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe']) {
        if (container[field] !== undefined && container[field] !== null) {
          errs.push(forbidden(idx.child(field), 'may not be set for init containers without restartPolicy=Always'));
        }
      }
    }
  });
  return errs;
}

function dnsNameErrors(spec: JsonRecord, field: string, path: FieldPath, check: (v: string) => string[]): FieldError[] {
  const value = stringField(spec, field);
  return value.length > 0 ? check(value).map((m) => invalid(path.child(field), value, m)) : [];
}

/** `ValidatePodSpec` (the subset described in the header), in upstream's order. */
export function validatePodSpec(spec: unknown, path: FieldPath): FieldError[] {
  const s = asRecord(spec) ?? {};
  const errs: FieldError[] = [];
  const grace = asNumber(s['terminationGracePeriodSeconds']);
  if (grace !== undefined && grace < 0) errs.push(invalid(path.child('terminationGracePeriodSeconds'), grace, NEGATIVE));
  const volumes = validateVolumes(arrayField(s, 'volumes'), path.child('volumes'));
  errs.push(...volumes.errors);
  errs.push(...validateContainers(arrayField(s, 'containers'), volumes.names, path.child('containers')));
  errs.push(...validateInitContainers(arrayField(s, 'initContainers'), arrayField(s, 'containers'), volumes.names, path.child('initContainers')));
  const restartPolicy = stringField(s, 'restartPolicy');
  if (restartPolicy.length > 0 && !['Always', 'OnFailure', 'Never'].includes(restartPolicy)) {
    errs.push(notSupported(path.child('restartPolicy'), restartPolicy, ['Always', 'OnFailure', 'Never']));
  }
  const dnsPolicy = stringField(s, 'dnsPolicy');
  const dnsPolicies = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
  if (dnsPolicy.length > 0 && !dnsPolicies.includes(dnsPolicy)) errs.push(notSupported(path.child('dnsPolicy'), dnsPolicy, dnsPolicies));
  errs.push(...validateLabels(s['nodeSelector'], path.child('nodeSelector')));
  const nodeAffinity = asRecord(asRecord(s['affinity'])?.['nodeAffinity']);
  if (nodeAffinity) {
    const naPath = path.child('affinity', 'nodeAffinity');
    const requiredTerms = nodeAffinity['requiredDuringSchedulingIgnoredDuringExecution'];
    if (requiredTerms !== undefined && requiredTerms !== null) {
      errs.push(...validateNodeSelector(requiredTerms, naPath.child('requiredDuringSchedulingIgnoredDuringExecution')));
    }
    const preferred = arrayField(nodeAffinity, 'preferredDuringSchedulingIgnoredDuringExecution');
    if (preferred.length > 0) errs.push(...validatePreferredSchedulingTerms(preferred, naPath.child('preferredDuringSchedulingIgnoredDuringExecution')));
  }
  errs.push(...dnsNameErrors(s, 'serviceAccountName', path, (v) => nameIsDNSSubdomain(v, false)));
  errs.push(...dnsNameErrors(s, 'nodeName', path, (v) => nameIsDNSSubdomain(v, false)));
  const deadline = asNumber(s['activeDeadlineSeconds']);
  if (deadline !== undefined && (deadline < 1 || deadline > MAX_INT32)) {
    errs.push(invalid(path.child('activeDeadlineSeconds'), deadline, inclusiveRangeError(1, MAX_INT32)));
  }
  errs.push(...dnsNameErrors(s, 'hostname', path, isDNS1123Label));
  errs.push(...dnsNameErrors(s, 'subdomain', path, isDNS1123Label));
  errs.push(...validateTolerations(s['tolerations'], path.child('tolerations')));
  errs.push(...dnsNameErrors(s, 'priorityClassName', path, (v) => nameIsDNSSubdomain(v, false)));
  return errs;
}

/** Go's validFirstDigit + strconv.ParseInt(v, 10, 32): no `+`, no leading zeros. */
function isDeletionCost(value: string): boolean {
  if (!/^(-[0-9]+|0|[1-9][0-9]*)$/.test(value)) return false;
  const n = Number(value);
  return n >= -2147483648 && n <= MAX_INT32;
}

/** `ValidatePodTemplateSpec`: labels and annotations (on the template's own path, as upstream), then the pod spec under `.spec`. */
export function validatePodTemplateSpec(template: unknown, path: FieldPath): FieldError[] {
  const t = asRecord(template) ?? {};
  const meta = asRecord(t['metadata']);
  const errs = validateLabels(meta?.['labels'], path.child('labels'));
  errs.push(...validateAnnotations(meta?.['annotations'], path.child('annotations')));
  const cost = asString(asRecord(meta?.['annotations'])?.[DELETION_COST_ANNOTATION]);
  if (cost !== undefined && !isDeletionCost(cost)) {
    errs.push(invalid(path.child('annotations').key(DELETION_COST_ANNOTATION), cost, 'must be a 32bit integer'));
  }
  const spec = asRecord(t['spec']);
  errs.push(...validatePodSpec(spec, path.child('spec')));
  if (arrayField(spec, 'ephemeralContainers').length > 0) {
    errs.push(forbidden(path.child('spec', 'ephemeralContainers'), 'ephemeral containers not allowed in pod template'));
  }
  return errs;
}
