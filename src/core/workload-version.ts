/**
 * The latest version of the target workload (spec §6.2, DECISIONS D12): the
 * pod version whose pods get the forward deletion-cost order; every other
 * version is drained from the first subsets first.
 *
 * - ReplicaSet: its own `pod-template-hash` label.
 * - Deployment: the hash of the non-deleting ReplicaSet it controls (selected
 *   by its selector) whose pod template equals the Deployment's once the hash
 *   label is ignored; none yet → not found, and the caller retries the sync.
 * - CloneSet with recreate versioning (D12): not found while the CloneSet's
 *   controller has not observed its generation, else the short form of
 *   `status.updateRevision`; without versioning `versionIgnored`.
 * - A missing workload → '' (no version is latest); anything else → `versionIgnored`.
 * Kinds are recognised by API group and kind; the version part of apiVersion
 * is ignored, so `apps.kruise.io/v1beta1` CloneSets work too (spec §9.15 lists
 * the reference's narrower behaviour).
 */
import { POD_TEMPLATE_HASH_LABEL, VERSION_IGNORED } from '../api/keys.ts';
import type { TargetReference } from '../api/workloadspread.ts';
import { deepEqual, isPlainObject } from '../k8s/json.ts';
import { labelSelectorAsSelector } from '../k8s/label-selector.ts';
import { apiVersionGroup, controllerRef } from '../k8s/pod.ts';
import type { KubeObject, LabelSelector } from '../k8s/types.ts';
import { shortRevisionHash } from './pod-version.ts';

export type LatestVersion =
  | { ok: true; version: string }
  | { ok: false; notFound: boolean; error: string };

export interface LatestVersionOptions {
  /** The CloneSet recreates pods on update, so its pods are versioned (D12); default false. */
  cloneSetRecreate?: boolean;
}

/** Whether a CloneSet recreates pods on update (`updateStrategy.type` ReCreate, the default). */
export function cloneSetRecreates(cloneSet: KubeObject | undefined): boolean {
  const spec = cloneSet?.['spec'];
  if (!isPlainObject(spec)) return true;
  const strategy = spec['updateStrategy'];
  if (!isPlainObject(strategy)) return true;
  const type = strategy['type'];
  return type === undefined || type === '' || type === 'ReCreate';
}

function hashLabel(obj: KubeObject): string {
  return obj.metadata?.labels?.[POD_TEMPLATE_HASH_LABEL] ?? '';
}

/**
 * A pod template with the hash label removed, normalised the way Go's semantic
 * equality sees it: an emptied label map, a null creationTimestamp and an
 * empty metadata object are the same as absent ones.
 */
function templateIgnoringHash(template: unknown): unknown {
  if (!isPlainObject(template)) return template;
  const { metadata, ...rest } = template;
  if (!isPlainObject(metadata)) return metadata === undefined || metadata === null ? rest : template;
  const meta: Record<string, unknown> = { ...metadata };
  if (isPlainObject(meta['labels'])) {
    const { [POD_TEMPLATE_HASH_LABEL]: _hash, ...labels } = meta['labels'];
    if (Object.keys(labels).length > 0) meta['labels'] = labels;
    else delete meta['labels'];
  }
  if (meta['creationTimestamp'] === null) delete meta['creationTimestamp'];
  return Object.keys(meta).length > 0 ? { ...rest, metadata: meta } : rest;
}

function specOf(obj: KubeObject): Record<string, unknown> {
  const spec = obj['spec'];
  return isPlainObject(spec) ? spec : {};
}

/**
 * The ReplicaSet found to carry a Deployment's current template, by the
 * Deployment object: cached objects are never changed in place (a new version
 * is a new object), so while both objects are the ones the cache holds the
 * comparison's answer stands — admission asks it for every pod of a rollout.
 */
const currentReplicaSet = new WeakMap<KubeObject, KubeObject>();

function deploymentVersion(deployment: KubeObject, replicaSets: readonly KubeObject[]): LatestVersion {
  const known = currentReplicaSet.get(deployment);
  if (known !== undefined && !known.metadata?.deletionTimestamp && replicaSets.includes(known)) return { ok: true, version: hashLabel(known) };
  const name = deployment.metadata?.name ?? '';
  const uid = deployment.metadata?.uid;
  const spec = specOf(deployment);
  const parsed = labelSelectorAsSelector((isPlainObject(spec['selector']) ? spec['selector'] : {}) as LabelSelector);
  if (!parsed.ok) return { ok: false, notFound: false, error: `deployment ${name}: invalid selector: ${parsed.error}` };
  const wanted = templateIgnoringHash(spec['template']);
  for (const rs of replicaSets) {
    if (rs.metadata?.deletionTimestamp) continue;
    if (uid === undefined || controllerRef(rs)?.uid !== uid) continue;
    if (!parsed.selector.matches(rs.metadata?.labels ?? {})) continue;
    if (deepEqual(templateIgnoringHash(specOf(rs)['template']), wanted)) {
      currentReplicaSet.set(deployment, rs);
      return { ok: true, version: hashLabel(rs) };
    }
  }
  return { ok: false, notFound: true, error: `no ReplicaSet of deployment ${name} matches its current pod template yet` };
}

function cloneSetVersion(cloneSet: KubeObject): LatestVersion {
  const status = isPlainObject(cloneSet['status']) ? cloneSet['status'] : {};
  const generation = cloneSet.metadata?.generation ?? 0;
  const observed = typeof status['observedGeneration'] === 'number' ? status['observedGeneration'] : 0;
  if (generation > observed) {
    return { ok: false, notFound: true, error: `cloneset ${cloneSet.metadata?.name ?? ''} generation ${generation} not yet observed` };
  }
  const revision = typeof status['updateRevision'] === 'string' ? status['updateRevision'] : '';
  return { ok: true, version: shortRevisionHash(revision) };
}

/** `latestWorkloadVersion` of spec §6.2 with D12. `workload` undefined means it does not exist. */
export function latestWorkloadVersion(
  targetRef: Pick<TargetReference, 'apiVersion' | 'kind'>,
  workload: KubeObject | undefined,
  replicaSets: readonly KubeObject[],
  options: LatestVersionOptions = {},
): LatestVersion {
  if (workload === undefined) return { ok: true, version: '' };
  const gv = apiVersionGroup(targetRef.apiVersion);
  const group = gv.ok ? gv.group : undefined;
  if (group === 'apps' && targetRef.kind === 'ReplicaSet') return { ok: true, version: hashLabel(workload) };
  if (group === 'apps' && targetRef.kind === 'Deployment') return deploymentVersion(workload, replicaSets);
  if (group === 'apps.kruise.io' && targetRef.kind === 'CloneSet' && options.cloneSetRecreate === true) {
    return cloneSetVersion(workload);
  }
  return { ok: true, version: VERSION_IGNORED };
}
