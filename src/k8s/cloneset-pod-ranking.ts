/**
 * The order in which an OpenKruise CloneSet picks pods to delete on scale-in
 * (kruise pkg/controller/cloneset/utils/pod_sorter.go `ActivePodsWithRanks`
 * with its same-node ranker), as a comparator for a stable sort; "smaller"
 * means less valuable, deleted first. Pure.
 *
 * It is the ReplicaSet's order (pod-ranking.ts) with three differences a
 * WorkloadSpread user can see:
 * - rule 3 looks at availability before readiness: a pod ready for less than
 *   the CloneSet's `minReadySeconds` (or in a lifecycle state other than
 *   Normal) goes before an available one, whatever its deletion cost;
 * - the co-location rank only counts the CloneSet's own pods, and on a node
 *   with n of them the most valuable one gets rank 0 and the others n-1 … 1;
 * - ready and creation times are compared exactly, without the ReplicaSet's
 *   logarithmic buckets.
 * The order, rule by rule: unassigned < assigned; Pending < Unknown <
 * Running; not available < available; not ready < ready; lower
 * `controller.kubernetes.io/pod-deletion-cost` < higher; higher rank < lower;
 * ready more recently < longer; more restarts < fewer; newer < older.
 * Kruise sorts with Go's unstable sort, we with a stable one: pods the order
 * cannot tell apart may come out in another order than on a real cluster.
 * Start at `cloneSetPodsToDelete`.
 */
import { getPodCondition, isPodReady, maxContainerRestarts, podDeletionCost, podPhase, podReadyTime } from './pod.ts';
import { afterOrZero, creationTime, nodeNameOf, phaseOrdinal, sameTime } from './pod-ranking.ts';
import type { Pod } from './types.ts';

/** The label of a pod's lifecycle state (kruise apis/apps/pub `LifecycleStateKey`). */
export const LIFECYCLE_STATE_LABEL = 'lifecycle.apps.kruise.io/state';
export const LIFECYCLE_STATE_NORMAL = 'Normal';
/** The readiness-gate condition of an in-place update (kruise `InPlaceUpdateReady`). */
export const IN_PLACE_UPDATE_READY = 'InPlaceUpdateReady';

/**
 * kruise `IsPodUpdateReady`: Running, Ready for strictly longer than
 * `minReadySeconds` at `now`, and an in-place update condition, when
 * present, True. With 0 seconds: what the CloneSet's status counts as ready.
 */
export function isCloneSetPodUpdateReady(pod: Pod, minReadySeconds: number, now: number): boolean {
  if (podPhase(pod) !== 'Running' || !isPodReady(pod)) return false;
  if (minReadySeconds > 0) {
    const since = podReadyTime(pod);
    if (since === undefined || !(since + minReadySeconds * 1000 < now)) return false;
  }
  const inPlace = getPodCondition(pod.status, IN_PLACE_UPDATE_READY);
  return inPlace === undefined || inPlace.status === 'True';
}

/**
 * A CloneSet pod counts as available (kruise `IsPodAvailable` of the sync
 * package): its lifecycle state is empty or Normal and it is update-ready
 * after `minReadySeconds`.
 */
export function isCloneSetPodAvailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  const state = pod.metadata?.labels?.[LIFECYCLE_STATE_LABEL] ?? '';
  if (state !== '' && state !== LIFECYCLE_STATE_NORMAL) return false;
  return isCloneSetPodUpdateReady(pod, minReadySeconds, now);
}

interface Ranking {
  rank(pod: Pod): number;
  available?: (pod: Pod) => boolean;
}

function less(a: Pod, b: Pod, r: Ranking): boolean {
  const na = nodeNameOf(a);
  const nb = nodeNameOf(b);
  if (na !== nb && (na === '' || nb === '')) return na === '';
  const pa = phaseOrdinal(a);
  const pb = phaseOrdinal(b);
  if (pa !== pb) return pa < pb;
  if (r.available !== undefined) {
    const aa = r.available(a);
    if (aa !== r.available(b)) return !aa;
  }
  const ra = isPodReady(a);
  if (ra !== isPodReady(b)) return !ra;
  const da = podDeletionCost(a);
  const db = podDeletionCost(b);
  if (da !== db) return da < db;
  const ka = r.rank(a);
  const kb = r.rank(b);
  if (ka !== kb) return ka > kb;
  if (ra && isPodReady(b)) {
    const ta = podReadyTime(a);
    const tb = podReadyTime(b);
    if (!sameTime(ta, tb)) return afterOrZero(ta, tb);
  }
  const ca = maxContainerRestarts(a);
  const cb = maxContainerRestarts(b);
  if (ca !== cb) return ca > cb;
  const ta = creationTime(a);
  const tb = creationTime(b);
  if (!sameTime(ta, tb)) return afterOrZero(ta, tb);
  return false;
}

function comparator(r: Ranking): (a: Pod, b: Pod) => number {
  return (a, b) => (less(a, b, r) ? -1 : less(b, a, r) ? 1 : 0);
}

const NO_RANK: Ranking = { rank: () => 0 };

/**
 * The same-node ranker: on every node holding more than one of `pods`, the
 * pods sorted by the order above (no rank, no availability) lose their most
 * valuable one, and the rest get ranks n-1 … 1, the least valuable the
 * highest. Pods alone on their node, or unassigned, rank 0.
 */
export function sameNodeRanks(pods: readonly Pod[]): Map<Pod, number> {
  const onNode = new Map<string, Pod[]>();
  for (const pod of pods) {
    const node = nodeNameOf(pod);
    if (node !== '') onNode.set(node, [...(onNode.get(node) ?? []), pod]);
  }
  const ranks = new Map<Pod, number>();
  for (const group of onNode.values()) {
    if (group.length <= 1) continue;
    const rest = [...group].sort(comparator(NO_RANK)).slice(0, -1);
    rest.forEach((pod, i) => ranks.set(pod, rest.length - i));
  }
  return ranks;
}

/** The CloneSet order over `pods` (first = deleted first), ranked among themselves as Kruise's `choosePodsToDelete` does. */
export function rankCloneSetPods(pods: readonly Pod[], minReadySeconds: number, now: number): Pod[] {
  const ranks = sameNodeRanks(pods);
  return [...pods].sort(comparator({ rank: (p) => ranks.get(p) ?? 0, available: (p) => isCloneSetPodAvailable(p, minReadySeconds, now) }));
}

/** Negative when `a` goes before `b` in the CloneSet order, with the given ranks (tests and callers that rank themselves). */
export function compareCloneSetPods(a: Pod, b: Pod, ranks: ReadonlyMap<Pod, number>, available?: (pod: Pod) => boolean): number {
  return comparator({ rank: (p) => ranks.get(p) ?? 0, ...(available === undefined ? {} : { available }) })(a, b);
}

/** The `diff` pods a CloneSet deletes from `pods` on scale-in (all of them, unsorted, when diff covers every pod). */
export function cloneSetPodsToDelete(pods: readonly Pod[], diff: number, minReadySeconds: number, now: number): Pod[] {
  if (!(diff > 0)) return [];
  if (diff >= pods.length) return [...pods];
  return rankCloneSetPods(pods, minReadySeconds, now).slice(0, diff);
}
