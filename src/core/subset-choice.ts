/**
 * Which subset a new pod goes to, and the quota it reserves (spec §2.3 C
 * steps 2–6; DECISIONS D2, D3, D13): the quota path of admission.ts, which
 * also decides when it applies. Start at `chooseSubset`. Admission first
 * sizes the stored room of percentage limits at the workload's current
 * replicas (`withRoomAtReplicas`, D22).
 *
 * The decision reads and writes only `status.versionedSubsetStatuses[version]`
 * (the pod's version, §6.1); the subsets considered are those in that stored
 * list, in stored order (§9.19: a subset added to the spec is invisible until
 * the controller rewrites the status). A reservation is a `creatingPods` entry
 * plus `missingReplicas--`; it is returned as a whole new status for the caller
 * to write, never applied here. Steps 1 and 7 (reading and writing the
 * WorkloadSpread) are the group commit's.
 *
 * Invariants: a subset whose missingReplicas is 0 is never chosen except by an
 * idempotent retry (the pod's name is already recorded); inputs are never
 * mutated; feeding the returned status into the next call gives the same
 * decisions as admitting the pods one by one (group commit, D13).
 *
 * Booked deletions (issue 14): the quota a `deletingPods` entry released is
 * used only once the deletion is observed (`deletionObserved`: the pod is gone
 * or terminating). A forged or refused deletion of a running pod then frees
 * nothing, while a replacement — created after the deletion took effect — gets
 * the slot as in the reference. Until then the subset counts the pod as
 * still there (a new pod may go to a later subset, never over a limit).
 */
import { SUBSET_SCHEDULABLE } from '../api/keys.ts';
import { named, type Subset, type SubsetStatus, type WorkloadSpread, type WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { formatTime } from '../k8s/time.ts';
import type { Pod } from '../k8s/types.ts';
import { resolveMaxReplicas } from './percent.ts';

export type WorkloadReplicasResult = { ok: true; replicas: number } | { ok: false; error: string };

export interface ChooseSubsetInput {
  ws: WorkloadSpread;
  pod: Pod;
  /** `podVersion(pod)`: the key of the versioned status the pod's quota comes from. */
  version: string;
  /** The workload replicas (§5.1); called only when a version entry must be initialized and a subset uses a percentage. */
  workloadReplicas: () => WorkloadReplicasResult;
  now: number;
  /** A fresh UUID for pods that have no name yet (generateName). */
  newUid: () => string;
  /** D3 simulation schedule: whether some node of the subset can host the pod. Pass it only for Adaptive WorkloadSpreads without disableSimulationSchedule. */
  canHost?: (subset: Subset) => boolean;
  /** Whether the deletion booked for this pod name was observed (gone or terminating); omitted: every booked deletion counts, as the reference. */
  deletionObserved?: (podName: string) => boolean;
  /**
   * Give a pod without a name a marker uid even where nothing is reserved
   * (an unlimited subset), so that the pod can be told apart once it exists:
   * admission counts such placements until the cache shows them (D21).
   */
  identifyUnreserved?: boolean;
}

export type SubsetChoice =
  | { kind: 'chosen'; subset: string; uid?: string; status?: WorkloadSpreadStatus }
  /** No subset can take the pod (an initialized version entry alone is not worth a write, as in the reference). */
  | { kind: 'none' }
  | { kind: 'error'; message: string };

/** Whether some subset's maxReplicas is a percentage (so the workload replicas are needed). */
export function subsetsUsePercent(ws: WorkloadSpread): boolean {
  return ws.spec.subsets.some((s) => typeof s.maxReplicas === 'string');
}

function freshStatus(name: string, missingReplicas: number): SubsetStatus {
  return { name, replicas: 0, missingReplicas, creatingPods: {}, deletingPods: {} };
}

/**
 * The pod version's subset statuses as a private copy (each subset status a
 * copy of its fields; its maps and conditions are shared with the stored
 * status, so a caller replaces them and never changes them in place; the
 * stored status may be a cached object), initialized when the
 * entry is absent or empty (§2.3 C.2): one status per spec subset, in spec
 * order, missingReplicas = the resolved limit (-1 when unlimited); the
 * workload replicas are asked for only when some limit is a percentage. A
 * limit that cannot be resolved (validation rejects those) is an error.
 * Shared by admission on create (§2.3) and on delete (§3.4).
 */
export function versionSubsetStatuses(
  ws: WorkloadSpread,
  version: string,
  workloadReplicas: () => WorkloadReplicasResult,
): { ok: true; statuses: SubsetStatus[]; initialized: boolean } | { ok: false; error: string } {
  const stored = ws.status?.versionedSubsetStatuses?.[version];
  if (stored !== undefined && stored.length > 0) return { ok: true, statuses: stored.map((st) => ({ ...st })), initialized: false };
  let total = 0;
  if (subsetsUsePercent(ws)) {
    const replicas = workloadReplicas();
    if (!replicas.ok) return { ok: false, error: replicas.error };
    total = replicas.replicas;
  }
  const statuses: SubsetStatus[] = [];
  for (const subset of ws.spec.subsets) {
    const limit = resolveMaxReplicas(subset.maxReplicas, total);
    if (limit === undefined) {
      return { ok: false, error: `maxReplicas ${JSON.stringify(subset.maxReplicas)} of subset ${subset.name} is not valid` };
    }
    statuses.push(freshStatus(subset.name, limit));
  }
  return { ok: true, statuses, initialized: true };
}

/**
 * D22: the WorkloadSpread as admission must decide on it — each stored subset
 * status of the version whose limit is a percentage gets at least the room
 * that limit leaves at the workload's current replicas beside the subset's
 * occupancy: `missingReplicas = max(missingReplicas, limit − occupancy)`.
 *
 * Why: a percentage limit grows with the workload, but the stored
 * missingReplicas was computed (by the controller, or by the admission that
 * initialized the entry, §2.3 C.2) at the replicas of that moment, and a
 * workload creates the pods of a scale-out before a status for the new count
 * can exist — a CloneSet even reports its new generation observed only after
 * creating them (spec §6.2). Deciding on the stored room alone, every pod of
 * that round finds its subset full and is admitted unplaced, then adopted by
 * whatever subset its node is in, over the limit (spec §9.4).
 *
 * Where the stored status is current this changes nothing: the controller's
 * missingReplicas is never below limit − occupancy, and admission's own
 * reservations and deletions keep it so. After a scale-out it is the room the
 * new limit leaves. A scale-in lowers nothing (the stored room stands until
 * the controller recomputes, as in the reference). Integer limits do not
 * depend on the replicas; unlimited subsets (-1), subsets gone from the spec,
 * and a version with no stored entry (initialized at the current replicas
 * anyway) are left alone; so is everything when the replicas cannot be had
 * (the caller sees that through its own getter). Pure: `ws` itself when
 * nothing changes, else a copy with the version's list replaced.
 */
export function withRoomAtReplicas(ws: WorkloadSpread, version: string, workloadReplicas: () => WorkloadReplicasResult): WorkloadSpread {
  const stored = ws.status?.versionedSubsetStatuses?.[version];
  if (stored === undefined || stored.length === 0 || !subsetsUsePercent(ws)) return ws;
  const replicas = workloadReplicas();
  if (!replicas.ok) return ws;
  let changed = false;
  const statuses = stored.map((status) => {
    if (status.missingReplicas < 0) return status;
    const subset = named(ws.spec.subsets, status.name);
    if (typeof subset?.maxReplicas !== 'string') return status;
    const limit = resolveMaxReplicas(subset.maxReplicas, replicas.replicas);
    if (limit === undefined) return status;
    const room = limit - occupancy(status);
    if (room <= status.missingReplicas) return status;
    changed = true;
    return { ...status, missingReplicas: room };
  });
  return changed ? { ...ws, status: withVersionStatuses(ws, version, statuses) } : ws;
}

/** The subset whose creatingPods or deletingPods already records this pod name (§2.3 C.3, §3.4). */
export function findRecordedSubset(statuses: readonly SubsetStatus[], podName: string | undefined): string | undefined {
  if (podName === undefined || podName === '') return undefined;
  for (const status of statuses) {
    if (hasKey(status.creatingPods, podName) || hasKey(status.deletingPods, podName)) return status.name;
  }
  return undefined;
}

/**
 * Whether an unlimited subset keeps creating/deleting entries, so that its
 * occupancy is exact: only with a `minReplicas` (D2), whose reservations
 * decide placement. (Limited subsets always keep them.) An unlimited subset
 * of a spec with a percentage needs its count for its pods' birth costs
 * (D17/D21) but takes it from the pods this manager knows of instead
 * (`countPlaced`): a reservation there would cost a status write per pod.
 */
export function keepsBookkeeping(subset: Subset | undefined): boolean {
  return subset !== undefined && typeof subset.minReplicas === 'number' && subset.minReplicas > 0;
}

/**
 * Whether admission reserves places in the subset (creatingPods /
 * deletingPods, occupancy in the status): a limited subset always, an
 * unlimited one only with a minReplicas. The others' pods are counted from
 * the pods themselves (`countPlaced`) where a count is needed.
 */
export function reservesPlaces(subset: Subset | undefined): boolean {
  return subset !== undefined && (subset.maxReplicas !== undefined || keepsBookkeeping(subset));
}

/** A copy of the status with `versionedSubsetStatuses[version]` replaced. */
export function withVersionStatuses(ws: WorkloadSpread, version: string, statuses: SubsetStatus[]): WorkloadSpreadStatus {
  // A new status object sharing every other part with the stored one (statuses are never changed in place).
  return { ...ws.status, versionedSubsetStatuses: { ...ws.status?.versionedSubsetStatuses, [version]: statuses } };
}

export function isSchedulableFalse(status: SubsetStatus): boolean {
  return (status.conditions ?? []).some((c) => c.type === SUBSET_SCHEDULABLE && c.status === 'False');
}

/** Booked deletions of the subset not yet observed (each released a slot that is not free yet). */
export function unobservedDeletions(status: SubsetStatus, deletionObserved: ((podName: string) => boolean) | undefined): number {
  if (deletionObserved === undefined || status.deletingPods === undefined) return 0;
  return Object.keys(status.deletingPods).filter((name) => !deletionObserved(name)).length;
}

/** A subset with room: missingReplicas > 0 once unobserved deletions are taken back, or -1 (unlimited). */
function hasQuota(status: SubsetStatus, deletionObserved?: (podName: string) => boolean): boolean {
  return status.missingReplicas === -1 || status.missingReplicas - unobservedDeletions(status, deletionObserved) > 0;
}

/** D2 occupancy of a subset within one version: replicas + |creatingPods| - |deletingPods observed|. */
export function occupancy(status: SubsetStatus, deletionObserved?: (podName: string) => boolean): number {
  return status.replicas + countKeys(status.creatingPods) - countKeys(status.deletingPods) + unobservedDeletions(status, deletionObserved);
}

/** Decides the subset of a new pod on the quota path (spec §2.3 C.2–C.6). */
export function chooseSubset(input: ChooseSubsetInput): SubsetChoice {
  const { ws, pod, version } = input;
  const subsets = ws.spec.subsets;
  const resolved = versionSubsetStatuses(ws, version, input.workloadReplicas);
  if (!resolved.ok) return { kind: 'error', message: resolved.error };
  const statuses = resolved.statuses;

  const podName = pod.metadata?.name;
  const recorded = findRecordedSubset(statuses, podName);
  if (recorded !== undefined) return { kind: 'chosen', subset: recorded };

  let index = pickSubset(ws, statuses, input.canHost, input.deletionObserved);
  // D3: when simulation rules out every subset with quota, fall back to the quota-only choice, as the
  // reference would: the pod then waits in its subset (and Adaptive rescheduling moves it on) instead
  // of being admitted without any placement at all.
  if (index === undefined && input.canHost !== undefined) index = pickSubset(ws, statuses, undefined, input.deletionObserved);
  if (index === undefined) return { kind: 'none' };

  const chosen = statuses[index] as SubsetStatus;
  if (chosen.missingReplicas === -1 && !keepsBookkeeping(named(subsets, chosen.name))) {
    if (input.identifyUnreserved === true && (podName === undefined || podName === '')) return { kind: 'chosen', subset: chosen.name, uid: input.newUid() };
    return { kind: 'chosen', subset: chosen.name };
  }
  let uid: string | undefined;
  let key: string;
  if (podName !== undefined && podName !== '') {
    key = podName;
  } else {
    uid = input.newUid();
    key = uid;
  }
  chosen.creatingPods = { ...chosen.creatingPods, [key]: formatTime(input.now) };
  if (chosen.missingReplicas > 0) chosen.missingReplicas--;
  const status = withVersionStatuses(ws, version, statuses);
  return uid === undefined ? { kind: 'chosen', subset: chosen.name, status } : { kind: 'chosen', subset: chosen.name, uid, status };
}

/**
 * The index (in `statuses`) of the subset to take: first the D2 pass (spec
 * order, a subset below its minReplicas), then the normal pass (stored order).
 * Both skip Schedulable=False, subsets without quota, and subsets `canHost`
 * rejects. A stored subset no longer in the spec is not simulated (nothing
 * describes its nodes) and stays eligible, as in the reference.
 */
function pickSubset(
  ws: WorkloadSpread,
  statuses: readonly SubsetStatus[],
  canHost: ((subset: Subset) => boolean) | undefined,
  deletionObserved: ((podName: string) => boolean) | undefined,
): number | undefined {
  const subsets = ws.spec.subsets;
  const eligible = (status: SubsetStatus, subset: Subset | undefined): boolean =>
    !isSchedulableFalse(status) && hasQuota(status, deletionObserved) && (canHost === undefined || subset === undefined || canHost(subset));
  for (const subset of subsets) {
    if (!(typeof subset.minReplicas === 'number' && subset.minReplicas > 0)) continue;
    const index = statuses.findIndex((s) => s.name === subset.name);
    const status = statuses[index];
    if (status === undefined) continue; // §9.19: not in this version's status yet
    if (occupancy(status, deletionObserved) < (subset.minReplicas ?? 0) && eligible(status, subset)) return index;
  }
  for (let index = 0; index < statuses.length; index++) {
    const status = statuses[index] as SubsetStatus;
    if (eligible(status, named(subsets, status.name))) return index;
  }
  return undefined;
}

function hasKey(map: Record<string, string> | undefined, key: string): boolean {
  return map !== undefined && Object.hasOwn(map, key);
}

function countKeys(map: Record<string, string> | undefined): number {
  return map === undefined ? 0 : Object.keys(map).length;
}
