/**
 * Which status changes admission needs now (issue 13). Pod admission reads,
 * per subset and pod version, how much room is left (`missingReplicas`), how
 * many places are taken (`occupancy`: active + reserved − booked deletions;
 * not for an unlimited subset without minReplicas) and the Schedulable
 * condition; the WorkloadSpread's conditions and
 * observedGeneration say which spec the status is for. A change of any of
 * these is written at once. Of the sums over versions (`subsetStatuses`)
 * admission reads only the Schedulable condition (StatefulSet ordinals).
 *
 * The rest of what the controller recomputes does not change any admission
 * answer: a reserved pod showing up moves it from `creatingPods` to
 * `replicas` (the occupancy stays the same), a booked deletion observed
 * leaves `deletingPods` as `replicas` drops (same), and the display fields
 * (`ready`, `placed`, `subsetCount` and their integer twins) follow readiness, and pods counted in
 * an unlimited subset without minReplicas change nothing admission reads. The controller may
 * hold such changes back for a bounded time and write them together, so a
 * scale-out of N pods does not cost N status writes (each one a full write
 * of the object and a watch event to every watcher). Keeping a reservation a
 * little longer is also the safe direction: a retried admission of the pod
 * still finds it. Pure.
 */
import type { Subset, SubsetStatus, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { deepEqual } from '../k8s/json.ts';
import { READINESS_CONDITION_TYPES } from './ready-condition.ts';
import { isSchedulableFalse, keepsBookkeeping, occupancy } from './subset-choice.ts';

/**
 * What admission reads of one subset's status. The occupancy of an unlimited
 * subset without minReplicas is read by nothing: it always has room, and a
 * pod's place there decides no cost of an all-integer spec (a balanced spec
 * counts those pods from the pods themselves, core/placed-count.ts).
 */
function admissionFacts(s: SubsetStatus, spec: readonly Subset[]): unknown {
  const counted = s.missingReplicas !== -1 || keepsBookkeeping(spec.find((x) => x.name === s.name));
  return [s.name, s.missingReplicas, counted ? occupancy(s) : null, isSchedulableFalse(s), (s.conditions ?? []).map((c) => [c.type, c.status])];
}

function subsetsFacts(list: readonly SubsetStatus[] | undefined, spec: readonly Subset[]): unknown {
  return list === undefined ? undefined : list.map((s) => admissionFacts(s, spec));
}

/** The part of a status admission decisions depend on, for the spec's `subsets`. */
function admissionFactsOf(subsets: readonly Subset[], status: WorkloadSpreadStatus | undefined): unknown {
  if (status === undefined) return undefined;
  const versions: Record<string, unknown> = {};
  for (const [version, list] of Object.entries(status.versionedSubsetStatuses ?? {})) versions[version] = subsetsFacts(list, subsets);
  return {
    observedGeneration: status.observedGeneration,
    // Ready, Reconciling and Stalled are for people and GitOps tools, not admission (ready-condition.ts decides when they are urgent).
    conditions: (status.conditions ?? []).filter((c) => !READINESS_CONDITION_TYPES.includes(c?.type)).map((c) => [c.type, c.status, c.reason]),
    // The sums over versions are read only for their conditions (the StatefulSet path skips a Schedulable=False subset).
    subsets: (status.subsetStatuses ?? []).map((s) => [s.name, isSchedulableFalse(s)]),
    versions,
  };
}

/**
 * Whether writing `next` over `stored` changes what admission reads (write it
 * now); false when only bookkeeping moves and display fields differ (may be
 * held back). `subsets`: the spec's.
 */
export function admissionNeedsWrite(subsets: readonly Subset[], stored: WorkloadSpreadStatus | undefined, next: WorkloadSpreadStatus): boolean {
  return !deepEqual(admissionFactsOf(subsets, stored), admissionFactsOf(subsets, next));
}
