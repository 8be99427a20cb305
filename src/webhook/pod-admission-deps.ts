/**
 * What the pod admission handlers (pod-create.ts, pod-delete.ts,
 * validate-pod.ts) are given: the caches as core's view, the API reads behind
 * it, the group commit, where events go, and the optional parts (the
 * reservation pool, recent placements, metrics). Built once per process in
 * kube-sources.ts.
 */
import type { Clock } from '../clock/clock.ts';
import type { Logger } from '../client/logger.ts';
import type { SubsetPatchPolicy } from '../api/subset-patch-policy.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import type { ClusterView } from '../core/cluster-view.ts';
import type { EngineEvent } from '../core/events.ts';
import type { GroupCommit } from './group-commit.ts';
import type { WebhookMetrics } from './metrics.ts';
import type { RecentPlacements } from './recent-placements.ts';
import type { ReservationPool } from './reservation-pool.ts';
import type { ApiReads } from './view-reads.ts';

/** Where admission reports user-facing events (a kube EventRecorder in the manager). */
export interface AdmissionEvents {
  record(ws: WorkloadSpread, event: EngineEvent): void;
}

export interface PodAdmissionDeps {
  clock: Clock;
  /** The caches, as core's view of the cluster. */
  view: ClusterView;
  /** Reads from the API server for what the view cannot answer. */
  reads: ApiReads;
  commit: GroupCommit;
  events: AdmissionEvents;
  metrics?: WebhookMetrics;
  log?: Logger;
  /** UUIDs for pods created without a name (generateName); default crypto.randomUUID. */
  newUid?: () => string;
  /** D20: what subset patches may change (`--allow-privileged-subset-patches`); default: no privilege-bearing fields. */
  subsetPatches?: SubsetPatchPolicy;
  /** D21: placements answered without a reservation, counted for birth costs until the cache shows the pods. */
  recent?: RecentPlacements;
  /** Places reserved ahead for pods without a name (a burst costs a handful of writes); without it every reservation is written by its own round. */
  pool?: ReservationPool;
}
