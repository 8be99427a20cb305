/**
 * What admission records when a placed pod is deleted or evicted (spec §3.4):
 * `deletingPods[name] = now` and `missingReplicas++` in the pod's subset, in
 * the versioned status of the pod's version, so the subset's quota frees up
 * before the controller observes the pod gone. Start at `recordDeletion`.
 *
 * Gates, in the reference's order: `shouldRecordDeletion` (marker, activeness,
 * controller ref) before the WorkloadSpread is read; admission.ts then takes
 * only the quota path here (§2.3 A and B never write); in `recordDeletion`
 * the version entry (initialized as on create), an already recorded name, a
 * marker subset absent from the status, and unlimited subsets (-1) — except
 * those with a minReplicas, which keep bookkeeping (D2).
 * The increment has no upper cap: the controller caps at the limit later —
 * except, with D18's rebalancing on, in a subset above its limit
 * (`staysAtLimitWithoutPod`).
 */
import { rebalanceSettings } from '../api/rebalance-settings.ts';
import { named, type SubsetStatus, type WorkloadSpread, type WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { controllerRef, isPodActive } from '../k8s/pod.ts';
import { formatTime } from '../k8s/time.ts';
import type { Pod } from '../k8s/types.ts';
import type { Marker } from './marker.ts';
import { resolveMaxReplicas } from './percent.ts';
import { findRecordedSubset, keepsBookkeeping, occupancy, versionSubsetStatuses, withVersionStatuses, type WorkloadReplicasResult } from './subset-choice.ts';

/** Whether a DELETE/eviction of this pod is the WorkloadSpread's business at all (no marker, inactive or unowned pods are not). */
export function shouldRecordDeletion(pod: Pod, marker: Marker | undefined): boolean {
  if (marker === undefined || marker.name === '') return false;
  if (!isPodActive(pod)) return false;
  return controllerRef(pod) !== undefined;
}

export interface RecordDeletionInput {
  /** The WorkloadSpread named by the marker. */
  ws: WorkloadSpread;
  pod: Pod;
  marker: Marker;
  /** `podVersion(pod)`. */
  version: string;
  /** The workload replicas (§5.1), asked for only to initialize a version entry with percentages. */
  workloadReplicas: () => WorkloadReplicasResult;
  now: number;
}

export type DeletionRecord =
  /** Nothing to write; `error` set when the version entry could not be initialized (the deletion is then denied). */
  | { changed: false; error?: string }
  | { changed: true; status: WorkloadSpreadStatus };

/** Records the deletion of a placed pod (spec §3.4 step 4), on the quota path. */
export function recordDeletion(input: RecordDeletionInput): DeletionRecord {
  const { ws, pod, marker, version } = input;
  const resolved = versionSubsetStatuses(ws, version, input.workloadReplicas);
  if (!resolved.ok) return { changed: false, error: resolved.error };
  const statuses = resolved.statuses;

  const podName = pod.metadata?.name;
  if (podName === undefined || podName === '') return { changed: false };
  if (findRecordedSubset(statuses, podName) !== undefined) return { changed: false };
  const status = named(statuses, marker.subset);
  if (status === undefined) return { changed: false };
  if (status.missingReplicas === -1 && !keepsBookkeeping(named(ws.spec.subsets, marker.subset))) {
    return { changed: false };
  }
  const stillFull = status.missingReplicas === 0 && staysAtLimitWithoutPod(input, status);
  status.deletingPods = { ...status.deletingPods, [podName]: formatTime(input.now) };
  if (status.missingReplicas >= 0 && !stillFull) status.missingReplicas++;
  return { changed: true, status: withVersionStatuses(ws, version, statuses) };
}

/**
 * D18: with rebalancing on, a deletion frees no quota in a subset that still
 * holds at least its limit without the pod (it is above its limit): otherwise
 * the replacement of a pod the rebalancer moves out of an over-full subset
 * would be admitted straight back into it. Without the annotation the
 * reference's unconditional increment stands (spec §3.4). A percentage limit
 * that cannot be resolved keeps the reference's behaviour too.
 */
function staysAtLimitWithoutPod(input: RecordDeletionInput, status: SubsetStatus): boolean {
  const settings = rebalanceSettings(input.ws);
  if (!settings.ok || !settings.settings.enabled) return false;
  const subset = named(input.ws.spec.subsets, status.name);
  if (subset?.maxReplicas === undefined) return false;
  let total = 0;
  if (typeof subset.maxReplicas === 'string') {
    const replicas = input.workloadReplicas();
    if (!replicas.ok) return false;
    total = replicas.replicas;
  }
  const limit = resolveMaxReplicas(subset.maxReplicas, total);
  return limit !== undefined && limit >= 0 && occupancy(status) - 1 >= limit;
}
