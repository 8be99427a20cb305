/**
 * Events as data (spec §4.7, DECISIONS D11). The engine never records an event
 * itself: it returns `EngineEvent`s and the controller or webhook hands them to
 * the Kubernetes event recorder.
 *
 * Every builder here produces the reference's reason and, word for word, its
 * message text (including the reference's "unschedulabe" spelling, which users
 * may grep for), so dashboards and alerts written for Kruise keep matching.
 * The one deliberate change: `PatchPodDeletionCostFailed` prints the cost as a
 * plain number where the reference prints a Go formatting error (`%!d(string=…)`).
 *
 * The reference records all of these on the WorkloadSpread, so `involved` names
 * the WorkloadSpread; so do D18's `Rebalancing` and `RebalanceBlocked`, which
 * are ours.
 */
import {
  EVENT_CREATE_POD_FAILED,
  EVENT_DELETE_POD_FAILED,
  EVENT_NO_SUBSET_AVAILABLE,
  EVENT_PATCH_DELETION_COST_FAILED,
  EVENT_REBALANCE_BLOCKED,
  EVENT_REBALANCING,
  EVENT_RECOVER_SCHEDULABLE,
  EVENT_SUBSET_PATCH_REFUSED,
  FAKE_SUBSET_NAME,
} from '../api/keys.ts';
import { ALLOW_PRIVILEGED_FLAG } from '../api/subset-patch-policy.ts';

export type EngineEventType = 'Normal' | 'Warning';

export interface InvolvedObject {
  kind: 'Pod' | 'WorkloadSpread';
  namespace: string;
  name: string;
}

export interface EngineEvent {
  type: EngineEventType;
  reason: string;
  message: string;
  involved?: InvolvedObject;
}

/** The namespace and name of a WorkloadSpread, the object these events are about. */
export interface WorkloadSpreadRef {
  namespace: string;
  name: string;
}

/** A WorkloadSpread's ref from its metadata; missing fields become '' (never throws). */
export function workloadSpreadRef(ws: { metadata?: { namespace?: string; name?: string } | undefined }): WorkloadSpreadRef {
  return { namespace: ws.metadata?.namespace ?? '', name: ws.metadata?.name ?? '' };
}

function onWorkloadSpread(ws: WorkloadSpreadRef): InvolvedObject {
  return { kind: 'WorkloadSpread', namespace: ws.namespace, name: ws.name };
}

/** A creatingPods reservation expired unobserved (spec §4.4 step 4); `podId` is the pod name or generated uid. */
export function createPodFailedEvent(ws: WorkloadSpreadRef, podId: string): EngineEvent {
  return {
    type: 'Warning',
    reason: EVENT_CREATE_POD_FAILED,
    message: `Pod ${ws.namespace}/${podId} was expected to be created but it wasn't`,
    involved: onWorkloadSpread(ws),
  };
}

/** A deletingPods entry expired while the pod is still active (spec §4.4 step 3). */
export function deletePodFailedEvent(ws: WorkloadSpreadRef, podName: string): EngineEvent {
  return {
    type: 'Warning',
    reason: EVENT_DELETE_POD_FAILED,
    message: `Pod ${ws.namespace}/${podName} was expected to be deleted but it wasn't`,
    involved: onWorkloadSpread(ws),
  };
}

/** Deleting a schedule-failed pod failed (spec §4.6); the controller builds this after its DELETE call. */
export function deleteUnschedulablePodFailedEvent(
  ws: WorkloadSpreadRef,
  pod: { namespace: string; name: string },
  subset: string,
): EngineEvent {
  return {
    type: 'Warning',
    reason: EVENT_DELETE_POD_FAILED,
    message: `Failed to delete unschedulabe Pod ${pod.namespace}/${pod.name} in Subset ${subset} of WorkloadSpread ${ws.namespace}/${ws.name}`,
    involved: onWorkloadSpread(ws),
  };
}

/** A subset left `Schedulable=False` after the recovery window (spec §4.6, D10). */
export function recoverSchedulableEvent(ws: WorkloadSpreadRef, subset: string): EngineEvent {
  return {
    type: 'Normal',
    reason: EVENT_RECOVER_SCHEDULABLE,
    message: `Subset ${subset} of WorkloadSpread ${ws.namespace}/${ws.name} is recovered from unschedulable to schedulable`,
    involved: onWorkloadSpread(ws),
  };
}

/** Writing a pod's deletion cost failed (spec §4.5 step 3); `subset` is the FAKE name for unmatched pods. */
export function patchDeletionCostFailedEvent(
  ws: WorkloadSpreadRef,
  pod: { namespace: string; name: string },
  subset: string,
  cost: number | string,
): EngineEvent {
  return {
    type: 'Warning',
    reason: EVENT_PATCH_DELETION_COST_FAILED,
    message: `WorkloadSpread ${ws.namespace}/${ws.name} failed to patch deletion-cost annotation to ${cost} for Pod ${pod.namespace}/${pod.name} in subset ${subset}`,
    involved: onWorkloadSpread(ws),
  };
}

/**
 * D11: admission found no subset with quota and let the pod in unchanged.
 * `pod` is the pod's name, or its generateName prefix when it has no name yet.
 */
export function noSubsetAvailableEvent(
  ws: WorkloadSpreadRef,
  pod: string,
  workload: { kind: string; name: string },
): EngineEvent {
  const podLabel = pod === '' ? 'a new pod' : `pod ${ws.namespace}/${pod}`;
  return {
    type: 'Warning',
    reason: EVENT_NO_SUBSET_AVAILABLE,
    message: `No subset of WorkloadSpread ${ws.namespace}/${ws.name} has quota left: ${podLabel} of ${workload.kind} ${ws.namespace}/${workload.name} was admitted without subset placement`,
    involved: onWorkloadSpread(ws),
  };
}

/**
 * D20: the subset's patch would change protected fields of a new pod (a
 * WorkloadSpread stored before validation refused such patches), so the pod
 * was placed without the patch.
 */
export function subsetPatchRefusedEvent(ws: WorkloadSpreadRef, subset: string, pod: string, fields: readonly string[]): EngineEvent {
  const podLabel = pod === '' ? 'a new pod' : `pod ${ws.namespace}/${pod}`;
  return {
    type: 'Warning',
    reason: EVENT_SUBSET_PATCH_REFUSED,
    message: `The patch of subset ${subset} of WorkloadSpread ${ws.namespace}/${ws.name} was not applied to ${podLabel}: it changes ${fields.join(', ')}, which a subset patch may not change (identity and ownership never; privilege-bearing fields only with ${ALLOW_PRIVILEGED_FLAG}); the pod was placed without it`,
    involved: onWorkloadSpread(ws),
  };
}

/** D18: a pod was evicted so that its replacement is placed in `to` (`from` may be the FAKE name: no subset). */
export function rebalancingEvent(ws: WorkloadSpreadRef, pod: string, from: string, to: string): EngineEvent {
  const source = from === FAKE_SUBSET_NAME ? 'no subset' : `subset ${from}`;
  return {
    type: 'Normal',
    reason: EVENT_REBALANCING,
    message: `Evicted pod ${ws.namespace}/${pod} from ${source}: its replacement goes to subset ${to}`,
    involved: onWorkloadSpread(ws),
  };
}

/** D18: a move is wanted and cannot be made now; `reason` is the status reason (NoRoom, EvictionRefused, ...). */
export function rebalanceBlockedEvent(ws: WorkloadSpreadRef, reason: string, message: string): EngineEvent {
  return {
    type: 'Warning',
    reason: EVENT_REBALANCE_BLOCKED,
    message: `Rebalancing of WorkloadSpread ${ws.namespace}/${ws.name} is blocked (${reason}): ${message}`,
    involved: onWorkloadSpread(ws),
  };
}
