/**
 * The two pod orderings of k8s.io/kubernetes pkg/controller/controller_utils.go,
 * as comparators for a stable sort; "smaller" means less valuable, deleted first.
 *
 * - compareActivePods: `ActivePods.Less` (used by WorkloadSpread's deletion
 *   cost, spec §4.5 step 2); `sortActivePods` sorts by it.
 * - compareActivePodsWithRanks: `ActivePodsWithRanks.Less` with PodDeletionCost
 *   and LogarithmicScaleDown on (every Kubernetes ≥ 1.22): the order in which a
 *   ReplicaSet picks pods to delete on scale-down.
 *
 * Each comparator is antisymmetric and returns 0 exactly when upstream's Less
 * is false both ways. Caveat reproduced from upstream: with logarithmic
 * bucketing the UID tie-break applies only to pods whose times differ but share
 * a bucket, so for some triples of pods the order is not transitive; upstream
 * feeds it to an unstable sort, we to a stable one, and results may then differ
 * only among such pods.
 */
import type { Pod } from './types.ts';
import { parseTime } from './time.ts';
import { isPodActive, isPodReady, maxContainerRestarts, podDeletionCost, podReadyTime } from './pod.ts';

export interface RankedPod {
  pod: Pod;
  /** Active related pods on the same node (more = deleted earlier). */
  rank: number;
}

/** Go's zero time.Time; metav1.Time serializes it as null, but a literal one may still appear. */
const GO_ZERO_TIME_MS = -62135596800000; // 0001-01-01T00:00:00Z
const isZero = (t: number | undefined): t is undefined => t === undefined || t === GO_ZERO_TIME_MS;

export function nodeNameOf(pod: Pod): string {
  const n: unknown = pod?.spec?.nodeName;
  return typeof n === 'string' ? n : '';
}

function uidOf(pod: Pod): string {
  const uid: unknown = pod?.metadata?.uid;
  return typeof uid === 'string' ? uid : '';
}

export function creationTime(pod: Pod): number | undefined {
  const ts: unknown = pod?.metadata?.creationTimestamp;
  return parseTime(typeof ts === 'string' ? ts : undefined);
}

/** Pending (and anything unknown to the table, including "") < Unknown < Running. */
export function phaseOrdinal(pod: Pod): number {
  const phase: unknown = pod?.status?.phase;
  return phase === 'Running' ? 2 : phase === 'Unknown' ? 1 : 0;
}

export const sameTime = (a: number | undefined, b: number | undefined): boolean => (isZero(a) && isZero(b)) || a === b;

/** t1 is after t2, where a zero time counts as later than any other. */
export function afterOrZero(t1: number | undefined, t2: number | undefined): boolean {
  if (isZero(t1) || isZero(t2)) return isZero(t1);
  return t1 > t2;
}

/** Go's math.Frexp for a positive finite x: x = frac × 2^exp with frac in [0.5, 1). */
function frexp(x: number): [number, number] {
  let exp = Math.floor(Math.log2(x)) + 1;
  let frac = x / 2 ** exp;
  while (frac >= 1) {
    exp++;
    frac = x / 2 ** exp;
  }
  while (frac < 0.5) {
    exp--;
    frac = x / 2 ** exp;
  }
  return [frac, exp];
}

/** Go's math.Log2, formula for formula, so that bucket boundaries round the way upstream's do. */
function goLog2(x: number): number {
  const [frac, exp] = frexp(x);
  if (frac === 0.5) return exp - 1;
  return Math.log(frac) * Math.LOG2E + exp;
}

/** floor(log2(now − t)) with the difference in nanoseconds; −1 when it is not positive. */
function logarithmicRank(t: number, now: number): number {
  const d = (now - t) * 1e6;
  return d > 0 ? Math.trunc(goLog2(d)) : -1;
}

/** One step of rules 6 and 8: times compared on the log scale, same bucket → lower UID first. */
function lessByLogTime(ta: number | undefined, tb: number | undefined, a: Pod, b: Pod, now: number): boolean {
  if (isZero(ta) || isZero(tb) || !Number.isFinite(now)) return afterOrZero(ta, tb);
  const diff = logarithmicRank(ta, now) - logarithmicRank(tb, now);
  if (diff === 0) return uidOf(a) < uidOf(b);
  return diff < 0;
}

/** What rules 1–3 read of a pod. */
interface PlacementKeys {
  node: string;
  phase: number;
  ready: boolean;
}

function placementKeys(pod: Pod): PlacementKeys {
  return { node: nodeNameOf(pod), phase: phaseOrdinal(pod), ready: isPodReady(pod) };
}

/** Rules 1–3, shared by both orders; undefined when they do not decide. */
function lessByPlacementAndReadiness(a: PlacementKeys, b: PlacementKeys): boolean | undefined {
  if (a.node !== b.node && (a.node === '' || b.node === '')) return a.node === '';
  if (a.phase !== b.phase) return a.phase < b.phase;
  if (a.ready !== b.ready) return !a.ready;
  return undefined;
}

/** What `ActivePods.Less` reads of a pod, read once per pod for a sort. */
interface ActiveKeys extends PlacementKeys {
  readyTime: number | undefined;
  restarts: number;
  created: number | undefined;
}

function activeKeys(pod: Pod): ActiveKeys {
  const ready = isPodReady(pod);
  return { node: nodeNameOf(pod), phase: phaseOrdinal(pod), ready, readyTime: ready ? podReadyTime(pod) : undefined, restarts: maxContainerRestarts(pod), created: creationTime(pod) };
}

/** `ActivePods.Less` on the keys of two pods: rules 1–3, then readiness time, restarts, creation. */
function activeKeysLess(a: ActiveKeys, b: ActiveKeys): boolean {
  const early = lessByPlacementAndReadiness(a, b);
  if (early !== undefined) return early;
  if (a.ready && b.ready && !sameTime(a.readyTime, b.readyTime)) return afterOrZero(a.readyTime, b.readyTime);
  if (a.restarts !== b.restarts) return a.restarts > b.restarts;
  if (!sameTime(a.created, b.created)) return afterOrZero(a.created, b.created);
  return false;
}

function compareActiveKeys(a: ActiveKeys, b: ActiveKeys): number {
  if (activeKeysLess(a, b)) return -1;
  if (activeKeysLess(b, a)) return 1;
  return 0;
}

function activePodsWithRanksLess(a: RankedPod, b: RankedPod, now: number): boolean {
  const early = lessByPlacementAndReadiness(placementKeys(a.pod), placementKeys(b.pod));
  if (early !== undefined) return early;
  const da = podDeletionCost(a.pod);
  const db = podDeletionCost(b.pod);
  if (da !== db) return da < db;
  if (a.rank !== b.rank) return a.rank > b.rank;
  if (isPodReady(a.pod) && isPodReady(b.pod)) {
    const ta = podReadyTime(a.pod);
    const tb = podReadyTime(b.pod);
    if (!sameTime(ta, tb)) return lessByLogTime(ta, tb, a.pod, b.pod, now);
  }
  const ca = maxContainerRestarts(a.pod);
  const cb = maxContainerRestarts(b.pod);
  if (ca !== cb) return ca > cb;
  const ta = creationTime(a.pod);
  const tb = creationTime(b.pod);
  if (!sameTime(ta, tb)) return lessByLogTime(ta, tb, a.pod, b.pod, now);
  return false;
}

/** Kubernetes' ActivePods order (spec §4.5): negative when `a` is less valuable than `b`. */
export function compareActivePods(a: Pod, b: Pod): number {
  return compareActiveKeys(activeKeys(a), activeKeys(b));
}

interface KeyedPod {
  pod: Pod;
  keys: ActiveKeys;
}

const compareKeyedPods = (a: KeyedPod, b: KeyedPod): number => compareActiveKeys(a.keys, b.keys);

/**
 * `pods` sorted by `compareActivePods` (stable), each pod's keys read once rather than at every comparison.
 * Loops and a module-level comparator, not per-call closures: V8 keeps a closure's optimized code only while
 * a closure holds it, so callbacks made anew on each call are compiled again after each full GC.
 */
export function sortActivePods(pods: readonly Pod[]): Pod[] {
  const keyed: KeyedPod[] = [];
  for (const pod of pods) keyed.push({ pod, keys: activeKeys(pod) });
  keyed.sort(compareKeyedPods);
  const out: Pod[] = [];
  for (const e of keyed) out.push(e.pod);
  return out;
}

/** The ReplicaSet scale-down order at time `now` (epoch ms): negative when `a` goes first. */
export function compareActivePodsWithRanks(a: RankedPod, b: RankedPod, now: number): number {
  if (activePodsWithRanksLess(a, b, now)) return -1;
  if (activePodsWithRanksLess(b, a, now)) return 1;
  return 0;
}

/**
 * `pods` in ReplicaSet deletion order (first = deleted first). Each pod's rank
 * is the number of active `relatedPods` on its node (getPodsRankedByRelatedPodsOnSameNode;
 * unassigned pods share the "" node, which only ever compares them with each other).
 */
export function rankPodsForScaleDown(pods: Pod[], relatedPods: Pod[], now: number): Pod[] {
  const onNode = new Map<string, number>();
  for (const p of relatedPods) {
    if (isPodActive(p)) onNode.set(nodeNameOf(p), (onNode.get(nodeNameOf(p)) ?? 0) + 1);
  }
  return pods
    .map((pod): RankedPod => ({ pod, rank: onNode.get(nodeNameOf(pod)) ?? 0 }))
    .sort((a, b) => compareActivePodsWithRanks(a, b, now))
    .map((r) => r.pod);
}

/** The `diff` pods a ReplicaSet deletes when scaling down (all of them, unsorted, when diff covers every pod). */
export function podsToDeleteOnScaleDown(pods: Pod[], relatedPods: Pod[], diff: number, now: number): Pod[] {
  if (!(diff > 0)) return [];
  if (diff >= pods.length) return [...pods];
  return rankPodsForScaleDown(pods, relatedPods, now).slice(0, diff);
}
