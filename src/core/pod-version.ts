/**
 * The version of a pod (spec §6.1, DECISIONS D12): the key of
 * `status.versionedSubsetStatuses` its quota is taken from.
 *
 * - Pods owned by a ReplicaSet (or a Deployment): `pod-template-hash`, else the
 *   last `-` segment of `controller-revision-hash`, else `versionIgnored`.
 * - CloneSet pods: versioned the same way when the CloneSet recreates pods on
 *   update (D12: the reference's switch for this never takes effect), so the
 *   surge pods of a rollout get the new revision's full quota.
 * - Every other owner (StatefulSet, Job, custom kinds): `versionIgnored`.
 */
import {
  CONTROLLER_REVISION_HASH_LABEL,
  POD_TEMPLATE_HASH_LABEL,
  VERSION_IGNORED,
} from '../api/keys.ts';
import { controllerRef } from '../k8s/owner.ts';
import type { KubeObject } from '../k8s/types.ts';

const VERSIONED_OWNER_KINDS = new Set(['deployment', 'replicaset']);

export interface PodVersionOptions {
  /** The pod's CloneSet recreates pods on update (CloneSet `updateStrategy.type` ReCreate, its default). */
  cloneSetRecreate?: boolean;
}

/** Whether pods owned by this controller kind carry a version. */
export function isVersionedOwnerKind(kind: string | undefined, options: PodVersionOptions = {}): boolean {
  if (kind === undefined) return false;
  const lower = kind.toLowerCase();
  return VERSIONED_OWNER_KINDS.has(lower) || (lower === 'cloneset' && options.cloneSetRecreate === true);
}

/** The version string of a labelled object (pod) whose owner is versioned. */
export function versionFromLabels(labels: Record<string, string> | undefined): string {
  const hash = labels?.[POD_TEMPLATE_HASH_LABEL];
  if (hash !== undefined && hash !== '') return hash;
  const revision = labels?.[CONTROLLER_REVISION_HASH_LABEL];
  if (revision !== undefined && revision !== '') return shortRevisionHash(revision);
  return VERSION_IGNORED;
}

/** The part of a revision name after its last `-` (the whole string when there is none). */
export function shortRevisionHash(revision: string): string {
  const i = revision.lastIndexOf('-');
  return i >= 0 ? revision.slice(i + 1) : revision;
}

/** `podVersion` of spec §6.1 with D12. */
export function podVersion(pod: KubeObject, options: PodVersionOptions = {}): string {
  const owner = controllerRef(pod);
  if (!isVersionedOwnerKind(owner?.kind, options)) return VERSION_IGNORED;
  return versionFromLabels(pod.metadata?.labels);
}
