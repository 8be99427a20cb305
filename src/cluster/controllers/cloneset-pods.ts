/**
 * What an OpenKruise CloneSet (`apps.kruise.io/v1alpha1`) says and what its
 * pods carry, as pure functions for the embedded CloneSet controller:
 *
 * - `cloneSetSpec`: the fields the controller acts on, with Kruise's webhook
 *   defaults where a field is missing (replicas 1, revisionHistoryLimit 10,
 *   updateStrategy.type ReCreate, maxUnavailable 20%, no partition/surge);
 * - revision labels (kruise `WriteRevisionHash`/`EqualToRevisionHash`):
 *   `controller-revision-hash` holds the revision name `<set>-<hash>`,
 *   `pod-template-hash` its short form (the last `-` segment); a pod is at a
 *   revision when either form matches;
 * - a pod is "specified to delete" when it carries the
 *   `apps.kruise.io/specified-delete` label (any value) or is named in
 *   `spec.scaleStrategy.podsToDelete`;
 * - `newCloneSetPod`: the pod of a revision — the template's labels,
 *   annotations, finalizers and spec, the revision labels, the instance id
 *   (`apps.kruise.io/cloneset-instance-id`, also the name suffix
 *   `<set>-<id>`), the lifecycle state Normal and a controller reference.
 *   No readiness gate for in-place updates is injected: in-place updates are
 *   done as recreates here (cloneset.ts).
 */
import { deepClone } from '../../k8s/json.ts';
import { LIFECYCLE_STATE_LABEL, LIFECYCLE_STATE_NORMAL } from '../../k8s/cloneset-pod-ranking.ts';
import { ownerReferenceFor } from '../../k8s/owner.ts';
import { asArray, asNumber, asRecord, asString, stringMap } from '../../k8s/raw-json.ts';
import type { IntOrString, KubeObject, Pod, PodSpec } from '../../k8s/types.ts';
import { CONTROLLER_REVISION_LABEL } from './controller-revisions.ts';
import { scaledIntOrPercent } from './int-or-percent.ts';

export const CLONESET_API_VERSION = 'apps.kruise.io/v1alpha1';
export const CLONESET_KIND = 'CloneSet';
export const CLONESET_INSTANCE_ID_LABEL = 'apps.kruise.io/cloneset-instance-id';
export const SPECIFIED_DELETE_LABEL = 'apps.kruise.io/specified-delete';
export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';
export { CONTROLLER_REVISION_LABEL };

/** Kruise's default `updateStrategy.maxUnavailable`. */
export const DEFAULT_MAX_UNAVAILABLE = '20%';
export const DEFAULT_REVISION_HISTORY_LIMIT = 10;
/** Length of a generated instance id (kruise `LengthOfInstanceID`). */
export const INSTANCE_ID_LENGTH = 5;
/** k8s.io/apimachinery rand.String's alphabet (no vowels, no confusable digits). */
const ID_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export interface CloneSetSpecView {
  replicas: number;
  minReadySeconds: number;
  revisionHistoryLimit: number;
  podsToDelete: string[];
  /** `scaleStrategy.maxUnavailable`: unavailable pods at most while scaling out (undefined: no limit). */
  scaleMaxUnavailable: IntOrString | undefined;
  /** `updateStrategy.type`: ReCreate, InPlaceIfPossible or InPlaceOnly. */
  updateType: string;
  partition: IntOrString | undefined;
  maxSurge: IntOrString | undefined;
  maxUnavailable: IntOrString;
  paused: boolean;
}

function intOrString(v: unknown): IntOrString | undefined {
  return typeof v === 'number' || typeof v === 'string' ? v : undefined;
}

function count(v: unknown, fallback: number): number {
  const n = asNumber(v);
  return n !== undefined && Number.isInteger(n) && n >= 0 ? n : fallback;
}

export function cloneSetSpec(cs: KubeObject): CloneSetSpecView {
  const spec = asRecord(cs['spec']) ?? {};
  const scale = asRecord(spec['scaleStrategy']) ?? {};
  const update = asRecord(spec['updateStrategy']) ?? {};
  return {
    replicas: count(spec['replicas'], 1),
    minReadySeconds: count(spec['minReadySeconds'], 0),
    revisionHistoryLimit: count(spec['revisionHistoryLimit'], DEFAULT_REVISION_HISTORY_LIMIT),
    podsToDelete: (asArray(scale['podsToDelete']) ?? []).filter((n): n is string => typeof n === 'string'),
    scaleMaxUnavailable: intOrString(scale['maxUnavailable']),
    updateType: asString(update['type']) || 'ReCreate',
    partition: intOrString(update['partition']),
    maxSurge: intOrString(update['maxSurge']),
    maxUnavailable: intOrString(update['maxUnavailable']) ?? DEFAULT_MAX_UNAVAILABLE,
    paused: update['paused'] === true,
  };
}

/**
 * kruise `util.CalculatePartitionReplicas`: the pods kept at the old revision.
 * A percentage rounds up (a partition above 0 % keeps at least one old pod),
 * but one below 100 % of more than one replica leaves at least one pod to
 * update; the result lies in [0, replicas]. A malformed value counts as 0
 * (Kruise logs it and updates everything).
 */
export function partitionReplicas(partition: IntOrString | undefined, replicas: number): number {
  if (partition === undefined) return 0;
  const scaled = scaledIntOrPercent(partition, replicas, true);
  if (!scaled.ok) return 0;
  let value = scaled.value;
  if (replicas > 1 && value === replicas && scaled.percent && partition !== '100%') value = replicas - 1;
  return Math.max(Math.min(value, replicas), 0);
}

/** The short form of a revision name: its last `-` segment (kruise `GetShortHash`). */
export function shortHash(revision: string): string {
  const parts = revision.split('-');
  return parts[parts.length - 1] ?? '';
}

/** kruise `EqualToRevisionHash`: the pod's controller-revision-hash is the revision, in full or short form. */
export function isAtRevision(pod: KubeObject, revision: string): boolean {
  const label = pod.metadata?.labels?.[CONTROLLER_REVISION_LABEL] ?? '';
  return label === revision || shortHash(label) === shortHash(revision);
}

export function isSpecifiedDelete(spec: Pick<CloneSetSpecView, 'podsToDelete'>, pod: KubeObject): boolean {
  const labels = pod.metadata?.labels;
  if (labels !== undefined && labels !== null && SPECIFIED_DELETE_LABEL in labels) return true;
  return spec.podsToDelete.includes(pod.metadata?.name ?? '');
}

/** `count` fresh instance ids, none used by `pods` (kruise `getOrGenAvailableIDs` without PVCs to reuse). */
export function newInstanceIds(count: number, pods: readonly KubeObject[], random: () => number): string[] {
  const taken = new Set(pods.map((p) => p.metadata?.labels?.[CLONESET_INSTANCE_ID_LABEL] ?? '').filter((id) => id !== ''));
  const ids: string[] = [];
  while (ids.length < count) {
    let id = '';
    for (let i = 0; i < INSTANCE_ID_LENGTH; i++) id += ID_ALPHABET[Math.floor(random() * ID_ALPHABET.length)] ?? 'b';
    if (taken.has(id)) continue;
    taken.add(id);
    ids.push(id);
  }
  return ids;
}

/**
 * newVersionedPods for one pod: `cs` as of `revision` (its template is that
 * revision's), named `<set>-<id>`.
 */
export function newCloneSetPod(cs: KubeObject, revision: string, id: string): Pod {
  const setName = cs.metadata?.name ?? '';
  const template = asRecord(asRecord(cs['spec'])?.['template']) ?? {};
  const tmeta = asRecord(template['metadata']) ?? {};
  const labels: Record<string, string> = Object.fromEntries(stringMap(tmeta['labels']));
  labels[CONTROLLER_REVISION_LABEL] = revision;
  labels[POD_TEMPLATE_HASH_LABEL] = shortHash(revision);
  labels[CLONESET_INSTANCE_ID_LABEL] = id;
  labels[LIFECYCLE_STATE_LABEL] = LIFECYCLE_STATE_NORMAL;
  const metadata: Pod['metadata'] = {
    name: `${setName}-${id}`,
    generateName: `${setName}-`,
    namespace: cs.metadata?.namespace ?? '',
    labels,
    ownerReferences: [ownerReferenceFor({ ...cs, apiVersion: CLONESET_API_VERSION, kind: CLONESET_KIND })],
  };
  const annotations = Object.fromEntries(stringMap(tmeta['annotations']));
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  const finalizers = (asArray(tmeta['finalizers']) ?? []).filter((f): f is string => typeof f === 'string');
  if (finalizers.length > 0) metadata.finalizers = finalizers;
  const spec = deepClone(asRecord(template['spec']) ?? {}) as PodSpec;
  if (!Array.isArray(spec.containers)) spec.containers = [];
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec };
}
