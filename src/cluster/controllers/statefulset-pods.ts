/**
 * The pods of a StatefulSet as its controller sees them (upstream's
 * stateful_set_utils.go): identity from the name (`<set>-<ordinal>`), the
 * predicates that gate ordered progress, the pod a set creates for an
 * ordinal, the replica counters of its status, and tolerant readers for the
 * set's spec. Pure: no I/O; `now` is a parameter.
 *
 * Invariants:
 * - a pod whose name does not end in `-<int32>` has ordinal -1 and is ignored;
 * - "created" means the API server gave the pod a phase (a freshly built pod
 *   object has none), "healthy" means Running, Ready and not terminating;
 * - a nil `spec.replicas` counts as 1 (DECISIONS D4).
 * Start at `newStatefulSetPod` and `replicaCounts`.
 */
import { deepClone } from '../../k8s/json.ts';
import { ownerReferenceFor } from '../../k8s/owner.ts';
import { isPodReady, podPhase, podReadyTime } from '../../k8s/pod.ts';
import { asArray, asNumber, asRecord, asString, stringMap } from '../../k8s/raw-json.ts';
import type { IntOrString, KubeObject, Pod, PodSpec } from '../../k8s/types.ts';
import { STATEFULSET_REVISION_LABEL } from './statefulset-revisions.ts';

export const STATEFULSET_POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';

const MAX_INT32 = 2147483647;
const ORDINAL_NAME = /^(.*)-([0-9]+)$/;

// ---- the set's spec, read defensively ----

export interface StatefulSetSpecView {
  replicas: number;
  /** `spec.ordinals.start` (0 when unset). */
  start: number;
  parallel: boolean;
  onDelete: boolean;
  /** Present when the strategy is RollingUpdate with a `rollingUpdate` block. */
  rollingUpdate: { partition: number; maxUnavailable: IntOrString | undefined } | undefined;
  minReadySeconds: number;
  revisionHistoryLimit: number;
  serviceName: string;
}

export function specView(set: KubeObject): StatefulSetSpecView {
  const spec = asRecord(set['spec']) ?? {};
  const strategy = asRecord(spec['updateStrategy']) ?? {};
  const type = asString(strategy['type']) ?? 'RollingUpdate';
  const ru = asRecord(strategy['rollingUpdate']);
  const maxUnavailable = ru?.['maxUnavailable'];
  return {
    replicas: Math.max(0, Math.trunc(asNumber(spec['replicas']) ?? 1)),
    start: Math.max(0, Math.trunc(asNumber(asRecord(spec['ordinals'])?.['start']) ?? 0)),
    parallel: spec['podManagementPolicy'] === 'Parallel',
    onDelete: type === 'OnDelete',
    rollingUpdate:
      type === 'RollingUpdate' && ru !== undefined
        ? { partition: Math.max(0, Math.trunc(asNumber(ru['partition']) ?? 0)), maxUnavailable: typeof maxUnavailable === 'number' || typeof maxUnavailable === 'string' ? maxUnavailable : undefined }
        : undefined,
    minReadySeconds: Math.max(0, asNumber(spec['minReadySeconds']) ?? 0),
    revisionHistoryLimit: Math.max(0, Math.trunc(asNumber(spec['revisionHistoryLimit']) ?? 10)),
    serviceName: asString(spec['serviceName']) ?? '',
  };
}

// ---- identity ----

/** getParentNameAndOrdinal: `web-3` → ['web', 3]; ['', -1] when the name has no int32 ordinal. */
export function parentAndOrdinal(name: string): [string, number] {
  const m = ORDINAL_NAME.exec(name);
  if (m === null) return ['', -1];
  const n = Number(m[2]);
  return n <= MAX_INT32 ? [m[1] ?? '', n] : [m[1] ?? '', -1];
}

export function ordinalOf(pod: KubeObject): number {
  return parentAndOrdinal(pod.metadata?.name ?? '')[1];
}

/** isMemberOf: the pod's name says it belongs to the set. */
export function isMemberOf(setName: string, pod: KubeObject): boolean {
  return parentAndOrdinal(pod.metadata?.name ?? '')[0] === setName;
}

export function podName(setName: string, ordinal: number): string {
  return `${setName}-${ordinal}`;
}

/** The identity labels a member must carry (name and index), missing or wrong ones only. */
export function missingIdentityLabels(pod: KubeObject): Record<string, string> {
  const name = pod.metadata?.name ?? '';
  const labels = pod.metadata?.labels ?? {};
  const want: Record<string, string> = { [STATEFULSET_POD_NAME_LABEL]: name, [POD_INDEX_LABEL]: String(ordinalOf(pod)) };
  return Object.fromEntries(Object.entries(want).filter(([k, v]) => labels[k] !== v));
}

// ---- predicates ----

export const isCreated = (pod: Pod): boolean => podPhase(pod) !== '';
export const isFailed = (pod: Pod): boolean => podPhase(pod) === 'Failed';
export const isSucceeded = (pod: Pod): boolean => podPhase(pod) === 'Succeeded';
export const isPending = (pod: Pod): boolean => podPhase(pod) === 'Pending';

export function isTerminating(obj: KubeObject): boolean {
  const ts: unknown = obj.metadata?.deletionTimestamp;
  return ts !== undefined && ts !== null;
}

export function isRunningAndReady(pod: Pod): boolean {
  return podPhase(pod) === 'Running' && isPodReady(pod);
}

/** podutil.IsPodAvailable on a running pod: ready for strictly more than `minReadySeconds`. */
export function isRunningAndAvailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  if (!isRunningAndReady(pod)) return false;
  if (minReadySeconds <= 0) return true;
  const since = podReadyTime(pod);
  return since !== undefined && since + minReadySeconds * 1000 < now;
}

export function isHealthy(pod: Pod): boolean {
  return isRunningAndReady(pod) && !isTerminating(pod);
}

export function revisionOf(pod: KubeObject): string {
  return pod.metadata?.labels?.[STATEFULSET_REVISION_LABEL] ?? '';
}

// ---- the pod of an ordinal ----

/**
 * newStatefulSetPod + setPodRevision: the pod `set` (as of a revision, i.e.
 * with that revision's template) runs at `ordinal`. Like upstream it keeps
 * the template's labels, annotations and finalizers, adds the identity and
 * revision labels, the controller reference, and hostname/subdomain.
 * volumeClaimTemplates are not turned into PVC volumes: the embedded cluster
 * has no storage (see statefulset.ts).
 */
export function newStatefulSetPod(set: KubeObject, ordinal: number, revision: string): Pod {
  const setName = set.metadata?.name ?? '';
  const template = asRecord(asRecord(set['spec'])?.['template']) ?? {};
  const tmeta = asRecord(template['metadata']) ?? {};
  const name = podName(setName, ordinal);
  const labels: Record<string, string> = Object.fromEntries(stringMap(tmeta['labels']));
  labels[STATEFULSET_POD_NAME_LABEL] = name;
  labels[POD_INDEX_LABEL] = String(ordinal);
  labels[STATEFULSET_REVISION_LABEL] = revision;
  const metadata: Pod['metadata'] = {
    name,
    generateName: `${setName}-`,
    namespace: set.metadata?.namespace ?? '',
    labels,
    ownerReferences: [ownerReferenceFor({ ...set, apiVersion: 'apps/v1', kind: 'StatefulSet' })],
  };
  const annotations = Object.fromEntries(stringMap(tmeta['annotations']));
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  const finalizers = (asArray(tmeta['finalizers']) ?? []).filter((f): f is string => typeof f === 'string');
  if (finalizers.length > 0) metadata.finalizers = finalizers;
  const spec = deepClone(asRecord(template['spec']) ?? {}) as PodSpec;
  if (!Array.isArray(spec.containers)) spec.containers = [];
  spec['hostname'] = name;
  const serviceName = specView(set).serviceName;
  if (serviceName !== '') spec['subdomain'] = serviceName;
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec };
}

// ---- status counters ----

export interface ReplicaCounts {
  replicas: number;
  readyReplicas: number;
  availableReplicas: number;
  currentReplicas: number;
  updatedReplicas: number;
}

/** computeReplicaStatus over every list given (replicas and condemned). */
export function replicaCounts(pods: readonly Pod[], minReadySeconds: number, currentRevision: string, updateRevision: string, now: number): ReplicaCounts {
  const c: ReplicaCounts = { replicas: 0, readyReplicas: 0, availableReplicas: 0, currentReplicas: 0, updatedReplicas: 0 };
  for (const pod of pods) {
    if (isCreated(pod)) c.replicas++;
    if (isRunningAndReady(pod)) {
      c.readyReplicas++;
      if (isRunningAndAvailable(pod, minReadySeconds, now)) c.availableReplicas++;
    }
    if (isCreated(pod) && !isTerminating(pod)) {
      const rev = revisionOf(pod);
      if (rev === currentRevision) c.currentReplicas++;
      if (rev === updateRevision) c.updatedReplicas++;
    }
  }
  return c;
}
