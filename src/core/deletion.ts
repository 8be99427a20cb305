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
 * The increment has no upper cap: the controller caps at the limit later.
 */
import type { WorkloadSpread, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { controllerRef, isPodActive } from '../k8s/pod.ts';
import { formatTime } from '../k8s/time.ts';
import type { Pod } from '../k8s/types.ts';
import type { Marker } from './marker.ts';
import { findRecordedSubset, keepsBookkeeping, versionSubsetStatuses, withVersionStatuses, type WorkloadReplicasResult } from './subset-choice.ts';

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
  const status = statuses.find((s) => s.name === marker.subset);
  if (status === undefined) return { changed: false };
  if (status.missingReplicas === -1 && !keepsBookkeeping(ws, ws.spec.subsets.find((s) => s.name === marker.subset))) {
    return { changed: false };
  }
  status.deletingPods = { ...status.deletingPods, [podName]: formatTime(input.now) };
  if (status.missingReplicas >= 0) status.missingReplicas++;
  return { changed: true, status: withVersionStatuses(ws, version, statuses) };
}
