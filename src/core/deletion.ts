/**
 * What admission records when a placed pod is deleted or evicted (spec §3.4):
 * `deletingPods[name] = now` and `missingReplicas++` in the pod's subset, in
 * the versioned status of the pod's version, so the subset's quota frees up
 * before the controller observes the pod gone. Start at `recordDeletion`.
 *
 * Gates, in the reference's order: `shouldRecordDeletion` (marker, activeness,
 * controller ref) before the WorkloadSpread is read; then in `recordDeletion`
 * the single-unlimited-subset shortcut and the StatefulSet branch (neither
 * ever writes), the version entry (initialized as on create), an already
 * recorded name, a marker subset absent from the status, and unlimited
 * subsets (-1) — except those with a minReplicas, which keep bookkeeping (D2).
 * The increment has no upper cap: the controller caps at the limit later.
 */
import type { WorkloadSpread, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { isPlainObject } from '../k8s/json.ts';
import { controllerRef, isPodActive } from '../k8s/pod.ts';
import { formatTime } from '../k8s/time.ts';
import type { Pod } from '../k8s/types.ts';
import type { Marker } from './marker.ts';
import {
  findRecordedSubset,
  keepsBookkeeping,
  specSubsets,
  versionSubsetStatuses,
  withVersionStatuses,
  type WorkloadReplicasResult,
} from './subset-choice.ts';

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
  /** The workload replicas (§5.1), or a function giving them, needed only to initialize a version entry with percentages. */
  workloadReplicas: number | (() => WorkloadReplicasResult);
  now: number;
}

export type DeletionRecord =
  /** Nothing to write; `error` set when the version entry could not be initialized (the deletion is then denied). */
  | { changed: false; error?: string }
  | { changed: true; status: WorkloadSpreadStatus };

/** Records the deletion of a placed pod (spec §3.4 step 4). */
export function recordDeletion(input: RecordDeletionInput): DeletionRecord {
  const { ws, pod, marker, version } = input;
  const subsets = specSubsets(ws);
  const only = subsets[0];
  if (subsets.length === 1 && only !== undefined && only.maxReplicas === undefined) return { changed: false };
  if (ws.spec?.targetRef?.kind === 'StatefulSet') return { changed: false };

  const replicas = input.workloadReplicas;
  const resolved = versionSubsetStatuses(ws, version, typeof replicas === 'number' ? () => ({ ok: true, replicas }) : replicas);
  if (!resolved.ok) return { changed: false, error: resolved.error };
  const statuses = resolved.statuses;

  const podName = pod.metadata?.name;
  if (podName === undefined || podName === '') return { changed: false };
  if (findRecordedSubset(statuses, podName) !== undefined) return { changed: false };
  const status = statuses.find((s) => s.name === marker.subset);
  if (status === undefined) return { changed: false };
  if (status.missingReplicas === -1 && !keepsBookkeeping(subsets.find((s) => s.name === marker.subset))) {
    return { changed: false };
  }
  const deleting = isPlainObject(status.deletingPods) ? (status.deletingPods as Record<string, string>) : {};
  deleting[podName] = formatTime(input.now);
  status.deletingPods = deleting;
  if (status.missingReplicas >= 0) status.missingReplicas++;
  return { changed: true, status: withVersionStatuses(ws, version, statuses) };
}
