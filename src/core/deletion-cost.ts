/**
 * Deletion cost (spec §4.5, DECISIONS D2, D7 and D17): the
 * `controller.kubernetes.io/pod-deletion-cost` values that make a ReplicaSet
 * scale-down remove pods in the WorkloadSpread's order.
 *
 * The reference's costs (every spec whose limits are integers or unset, and
 * every older pod version). With S subsets and the effective index e of a
 * subset (its spec index for the latest pod version, the mirrored index
 * S-1-i for older versions, so a rollout drains old pods from the first
 * subsets first):
 * - pods within the subset's limit get `100*(S-e)`, the surplus (the least
 *   valuable pods in ActivePods order) gets `-100*(e+1)`;
 * - D2: the `minReplicas` most valuable pods get `100*(2S-e)`, above every
 *   normal cost; they are never counted as surplus;
 * - pods in no subset (FAKE) get `-100*(S+1)`, in every version;
 * - inactive pods get nothing and are never patched.
 * Limits resolve against the total workload replicas, not a version's share.
 *
 * D17, balanced costs (the latest version of a spec with a percentage limit).
 * The reference's costs order whole subsets (back ones first), so after a
 * scale-in the percentages no longer hold: 20/20/60 % at 10 replicas costs
 * 300/200/100 and a scale to 5 keeps 2/2/1. Balanced costs interleave the
 * subsets by their shares instead (a divisor method, Adams'):
 * - limited subset i has a share p_i, its percentage (an integer limit —
 *   only reachable when validation was bypassed — counts as its share of
 *   today's replicas); the j-th most valuable pod of subset i (ActivePods
 *   order, j = 1, 2, …) ranks at (j−1)/p_i;
 * - the pods of unset subsets are never over a limit: each is kept down to
 *   the smallest size n at which the limited subsets can no longer make up n
 *   within their limits (the k-th most valuable ranks at n_k − 1, pooled over
 *   the unset subsets), and those never needed — overflow — rank below
 *   everything else, removed first, the back subset first (the reference's
 *   "back first" for an elastic pool);
 * - pods are kept in rank order, the front subset first on a tie. Because Adams' method never gives a subset more than
 *   ceil(p_i·n) of any n seats, keeping the n lowest ranks keeps every subset
 *   within its limit at n — for every n below today's count, in one scale-in
 *   or many, with no controller sync in between — whenever the pods allow it
 *   (`balanced-scale-in.test.ts` checks it against the ReplicaSet ranking);
 * - the cost is `TOP − (R·S + i)` with R = ⌊10000·(j−1)/p_i⌋ (p_i in
 *   percent): distinct ranks differ by at least 1/100 of a percent point, so
 *   R orders them exactly, and i breaks ties front first. TOP = 2³¹−1−S keeps
 *   the cost an int32; a rank too deep for the range (more than ~20,000 pods
 *   in a 1 % subset of 10 subsets) is clamped to S+1;
 * - D2: the `minReplicas` most valuable pods of subset i get 2³¹−1−i, above
 *   every balanced cost; a "0%" subset and overflow pods get S−i, below them;
 *   FAKE pods keep −100·(S+1), lowest.
 * A limited pod's cost depends only on its subset, its share and its place j
 * in the subset, and an unset pod's on sizes up to today's count, which a
 * healthy scale-out (limited subsets filled first, new pods last) leaves as
 * they were: a scale-out re-costs no existing pod. While the workload moves
 * (pods admitted but not yet seen, or the workload controller removing pods),
 * a pod keeps a place of its subset that this sync's table lacks, so the
 * controller does not move pods back and forth behind the webhook or under a
 * scale-in (`holdsPlace`); the gap is filled once the workload settles.
 *
 * With 30/30/rest at 10 replicas (3/3/4), the rest's pods are needed from
 * sizes 3, 6, 9 and 10, so they rank 2, 5, 8, 9 and a scale to 4 keeps 2/1/1.
 *
 * Worked example, 20/20/60 % (S = 3): a's pods rank 0, 5, 10, …; b's 0, 5,
 * 10, …; c's 0, 1.67, 3.33, 5, …. At 10 replicas (2/2/6) R·S+i is
 * a: 0, 1500; b: 1, 1501; c: 2, 500, 1001, 1502, 2000, 2501, and the costs
 * are TOP minus those. Kept longest first: a b c c c a b c c c. Scaling to 5
 * keeps 1/1/3, to 4 keeps 1/1/2, to 2 keeps 1/1/0 — within ceil(0.2·n),
 * ceil(0.2·n), ceil(0.6·n) each time — and to 8 keeps 2/2/4.
 *
 * Start at `computeDeletionCosts`, then `deletionCostPatches`.
 */
import {
  CREATE_POD_TIMEOUT_MS,
  FAKE_SUBSET_NAME,
  MAX_INT32,
  POD_DELETION_COST_ANNOTATION,
  POD_DELETION_COST_NEGATIVE,
  POD_DELETION_COST_POSITIVE,
} from '../api/keys.ts';
import type { Subset, TargetReference, WorkloadSpread } from '../api/workloadspread.ts';
import { isPodActive } from '../k8s/pod.ts';
import { parseTime } from '../k8s/time.ts';
import { sortActivePods } from '../k8s/pod-ranking.ts';
import type { Pod } from '../k8s/types.ts';
import { parseIntOrPercent, resolveMaxReplicas } from './percent.ts';

const RANKED_KINDS = new Set(['Deployment', 'ReplicaSet', 'CloneSet']);
const NEVER_RANKED_KINDS = new Set(['StatefulSet', 'Job']);

/**
 * D7: whether the target's pods are scaled down by a ReplicaSet-like ranking
 * that honours deletion cost. Deployment, ReplicaSet and CloneSet always (by
 * kind, as the reference); StatefulSet (ordinal order) and Job never; any
 * other kind when its pods are owned by ReplicaSets (e.g. Argo Rollouts).
 */
export function writesDeletionCost(
  targetRef: Pick<TargetReference, 'kind'> | undefined,
  options: { ownedByReplicaSets?: boolean } = {},
): boolean {
  const kind = targetRef?.kind;
  if (typeof kind !== 'string') return false;
  if (RANKED_KINDS.has(kind)) return true;
  if (NEVER_RANKED_KINDS.has(kind)) return false;
  return options.ownedByReplicaSets === true;
}

export interface DeletionCostInput {
  ws: Pick<WorkloadSpread, 'spec'>;
  /** Per pod version: per subset name (and FAKE) the pods, as `groupPodsBySubset` returns them. */
  byVersion: ReadonlyMap<string, ReadonlyMap<string, readonly Pod[]>>;
  /** `latestWorkloadVersion`; every other version gets the reverse order. */
  latestVersion: string;
  workloadReplicas: number;
  /**
   * Epoch milliseconds. With it, a balanced place a pod holds outside this
   * sync's places is kept while the workload moves (`holdsPlace`); without
   * it (tests, one-off tables) every such pod is moved at once.
   */
  now?: number;
}

export interface DeletionCostPlan {
  /** The cost of every active pod, by pod name. */
  costs: Map<string, number>;
  /** When a held place ages out (`holdsPlace`): sync again after this many ms. */
  recheckAfterMs?: number;
}

/** The cost of every active pod, by pod name. Subsets whose limit cannot be resolved get none. */
export function computeDeletionCosts(input: DeletionCostInput): Map<string, number> {
  return planDeletionCosts(input).costs;
}

/**
 * D21: may `pod` keep the cost it holds — a place of its own subset at some
 * size, though not one of this sync's places — instead of being moved into
 * a free place? Moving it is right once the workload has settled, and
 * wasted (usually twice) while it moves:
 * - scale-out: the webhook gave the pod its place counting pods admitted
 *   before it that this view does not show yet; they arrive holding the
 *   places below (and, for an unset subset, the sizes its places depend
 *   on), so moving this pod would take one of theirs and a later sync would
 *   move one of them back. Any such pod was admitted before this one and is
 *   created, or has failed, within `CREATE_POD_TIMEOUT_MS` of it (the window
 *   a reservation counts in), so the place is held while the pod is younger
 *   than that;
 * - scale-in (more active pods than the workload's replicas): the workload
 *   controller is removing the least valuable pods, chosen by the costs they
 *   carry now, so the gaps it leaves are filled when it is done.
 * Returns whether the place is held and, for a young pod, until when.
 */
export function holdsPlace(pod: Pod, scalingIn: boolean, now: number): { held: boolean; untilMs?: number } {
  if (scalingIn) return { held: true };
  const created = parseTime(pod.metadata?.creationTimestamp);
  if (created === undefined) return { held: false };
  const until = created + CREATE_POD_TIMEOUT_MS;
  return now < until ? { held: true, untilMs: until } : { held: false };
}

/** `computeDeletionCosts` with the time the next sync is needed for a held place (see `holdsPlace`). */
export function planDeletionCosts(input: DeletionCostInput): DeletionCostPlan {
  const subsets = input.ws.spec.subsets;
  const n = subsets.length;
  const costs = new Map<string, number>();
  let recheckAt: number | undefined;
  const now = input.now;
  const scalingIn = now !== undefined && activePodCount(input.byVersion) > input.workloadReplicas;
  const shares = limitedShares(subsets, input.workloadReplicas);
  // Loops rather than per-call callbacks in this per-sync path (see sortActivePods).
  for (const [version, groups] of input.byVersion) {
    const latest = version === input.latestVersion;
    const ranked: Pod[][] = [];
    const counts: number[] = [];
    for (const subset of subsets) {
      const pods = rankedPods(groups, subset);
      ranked.push(pods);
      counts.push(pods.length);
    }
    const table = costsByPlace(input.ws, counts, input.workloadReplicas, latest);
    const sticky = latest && usesBalancedCosts(input.ws);
    for (let i = 0; i < ranked.length; i++) {
      const pods = ranked[i] as Pod[];
      const places = table[i] ?? [];
      // Most valuable first: the list is least valuable first.
      const byValue = [...pods].reverse();
      if (!sticky) {
        for (let j = 0; j < byValue.length; j++) setCost(costs, byValue[j] as Pod, places[j]);
        continue;
      }
      // D17/D21: a pod keeps a place it already holds — the cost it was born with — so readiness and
      // same-second creations reordering pods never re-cost them; the free places go in value order.
      const free = new Map<number, number>();
      for (const c of places) if (c !== undefined) free.set(c, (free.get(c) ?? 0) + 1);
      const inTable = new Set(places);
      const heldAside = new Set<number>();
      const waiting: Pod[] = [];
      for (const pod of byValue) {
        const held = heldCost(pod);
        if (held !== undefined && (free.get(held) ?? 0) > 0) {
          free.set(held, (free.get(held) ?? 0) - 1);
          setCost(costs, pod, held);
          continue;
        }
        // A place of this subset that is not one of today's (a duplicate of one is not held).
        if (held !== undefined && now !== undefined && !inTable.has(held) && !heldAside.has(held) && isRankedPlace(held, i, n, shares[i])) {
          const hold = holdsPlace(pod, scalingIn, now);
          if (hold.held) {
            heldAside.add(held);
            setCost(costs, pod, held);
            if (hold.untilMs !== undefined) recheckAt = Math.min(recheckAt ?? Number.POSITIVE_INFINITY, hold.untilMs);
            continue;
          }
        }
        waiting.push(pod);
      }
      let next = 0;
      for (const pod of waiting) {
        while (next < places.length && ((places[next] === undefined) || (free.get(places[next] as number) ?? 0) === 0)) next++;
        const cost = places[next];
        if (cost === undefined) break;
        free.set(cost, (free.get(cost) ?? 0) - 1);
        setCost(costs, pod, cost);
      }
    }
    for (const pod of groups.get(FAKE_SUBSET_NAME) ?? []) {
      const name = pod.metadata?.name;
      if (isPodActive(pod) && typeof name === 'string' && name !== '') costs.set(name, unplacedCost(input.ws));
    }
  }
  return recheckAt === undefined || now === undefined ? { costs } : { costs, recheckAfterMs: Math.max(1, recheckAt - now) };
}

function setCost(costs: Map<string, number>, pod: Pod, cost: number | undefined): void {
  const name = pod.metadata?.name;
  if (cost !== undefined && typeof name === 'string' && name !== '') costs.set(name, cost);
}

function activePodCount(byVersion: DeletionCostInput['byVersion']): number {
  let count = 0;
  for (const groups of byVersion.values()) for (const pods of groups.values()) for (const pod of pods) if (isPodActive(pod)) count++;
  return count;
}

/**
 * Whether `cost` is a balanced rank place of subset i of S at some size: an
 * Adams place (j−1)/p of a limited subset, or a size n−1 of an unset one.
 * Protected (minReplicas), overflow and clamped costs are not.
 */
function isRankedPlace(cost: number, i: number, S: number, share: Share | null | undefined): boolean {
  const key = MAX_INT32 - S - cost;
  if (!Number.isSafeInteger(key) || key < 0 || key % S !== i || cost <= S + 1) return false;
  const rank = (key - i) / S;
  if (share === undefined) return false;
  if (share === null) return rank % 100 === 0 && costOfRank(rank, i, S) === cost;
  if (share.num <= 0) return false;
  const j = Math.ceil((rank * share.num) / (10_000 * share.den)) + 1;
  return balancedCost(share, j, i, S) === cost;
}

/** The cost of a pod in no subset of the spec (FAKE, spec §4.5): below every subset's, in every version. */
export function unplacedCost(ws: Pick<WorkloadSpread, 'spec'>): number {
  return POD_DELETION_COST_NEGATIVE * (ws.spec.subsets.length + 1);
}

/** The deletion cost a pod carries now, if it carries a valid one. */
function heldCost(pod: Pod): number | undefined {
  const raw = pod.metadata?.annotations?.[POD_DELETION_COST_ANNOTATION];
  if (raw === undefined || !/^-?\d+$/.test(raw)) return undefined;
  const value = Number(raw);
  return Number.isSafeInteger(value) ? value : undefined;
}

/**
 * The deletion cost of every place in every subset of one pod version:
 * `table[i][j-1]` is the cost of the j-th most valuable active pod of subset
 * i when the subsets hold `counts[i]` active pods; `undefined` entries (a limit
 * that cannot be resolved) get no cost. The controller maps its ranked pods
 * onto this table; admission reads the new pod's place in it (the new pod is
 * the least valuable of its subset), so a pod is born with the cost the
 * controller would give it (D21).
 */
export function costsByPlace(ws: Pick<WorkloadSpread, 'spec'>, counts: readonly number[], workloadReplicas: number, latest: boolean): (number | undefined)[][] {
  const subsets = ws.spec.subsets;
  return latest && usesBalancedCosts(ws) ? balancedTable(subsets, counts, workloadReplicas) : referenceTable(subsets, counts, !latest, workloadReplicas);
}

/**
 * D21: the cost a new pod is born with. It is the least valuable pod of its
 * subset — the last place — among `counts` (this version's pods per subset,
 * the new one included), so the controller later computes the same value
 * for it and writes nothing.
 */
export function birthCost(ws: Pick<WorkloadSpread, 'spec'>, subsetName: string, counts: readonly number[], workloadReplicas: number, latest: boolean): number | undefined {
  const subsets = ws.spec.subsets;
  const i = subsets.findIndex((s) => s.name === subsetName);
  const count = counts[i] ?? 0;
  if (i < 0 || count < 1) return undefined;
  // The place's entry of `costsByPlace`, without building the table (admission asks once per pod, so the table would cost O(pods) each time).
  const subset = subsets[i] as Subset;
  if (!(latest && usesBalancedCosts(ws))) return referenceCost(referenceTerms(subsets, i, count, !latest, workloadReplicas), count);
  const shares = limitedShares(subsets, workloadReplicas);
  const share = shares[i];
  const min = protectedPlaces(subset, count);
  const own = balancedPlaceCost(share, min, count, i, subsets.length);
  if (share !== null || count <= min) return own;
  let found = own;
  assignUnsetPlaces(subsets, shares, counts, (u, place, cost) => {
    if (u !== i || place !== count - 1) return false;
    found = cost;
    return true;
  });
  return found;
}

/** The active pods of a subset, least valuable first (ActivePods order; Array.prototype.sort is stable, like the reference's). */
function rankedPods(groups: ReadonlyMap<string, readonly Pod[]>, subset: Subset): Pod[] {
  const active: Pod[] = [];
  for (const p of groups.get(subset.name) ?? []) if (isPodActive(p)) active.push(p);
  return sortActivePods(active);
}

/** D2: how many of a subset's `count` places are protected by its minReplicas (its most valuable ones). */
function protectedPlaces(subset: Subset, count: number): number {
  const min = typeof subset.minReplicas === 'number' && subset.minReplicas > 0 ? Math.floor(subset.minReplicas) : 0;
  return Math.min(min, count);
}

/** The reference's costs of one version (spec §4.5 step 2 with D2), by place. */
function referenceTable(subsets: readonly Subset[], counts: readonly number[], reverse: boolean, workloadReplicas: number): (number | undefined)[][] {
  const table: (number | undefined)[][] = [];
  for (let i = 0; i < subsets.length; i++) {
    const count = counts[i] ?? 0;
    const terms = referenceTerms(subsets, i, count, reverse, workloadReplicas);
    const row: (number | undefined)[] = [];
    for (let place = 1; place <= count; place++) row.push(referenceCost(terms, place));
    table.push(row);
  }
  return table;
}

/** What the reference's cost of a place of subset i depends on; undefined when its limit cannot be resolved. */
interface ReferenceTerms {
  n: number;
  e: number;
  count: number;
  protectedCount: number;
  negativeCount: number;
}

function referenceTerms(subsets: readonly Subset[], i: number, count: number, reverse: boolean, workloadReplicas: number): ReferenceTerms | undefined {
  const n = subsets.length;
  const subset = subsets[i] as Subset;
  const max = resolveMaxReplicas(subset.maxReplicas, workloadReplicas);
  if (max === undefined) return undefined;
  const protectedCount = protectedPlaces(subset, count);
  // The surplus (beyond the limit) are the least valuable places, never the protected ones.
  const negativeCount = Math.min(max >= 0 ? Math.max(0, count - max) : 0, count - protectedCount);
  return { n, e: reverse ? n - 1 - i : i, count, protectedCount, negativeCount };
}

/** The reference's cost of the j-th most valuable place (j ≥ 1). */
function referenceCost(terms: ReferenceTerms | undefined, j: number): number | undefined {
  if (terms === undefined) return undefined;
  const { n, e, count, protectedCount, negativeCount } = terms;
  if (j <= protectedCount) return POD_DELETION_COST_POSITIVE * (2 * n - e);
  if (j > count - negativeCount) return POD_DELETION_COST_NEGATIVE * (e + 1);
  return POD_DELETION_COST_POSITIVE * (n - e);
}

/** D17: whether the latest version's costs are balanced (some limit is a percentage). */
export function usesBalancedCosts(ws: Pick<WorkloadSpread, 'spec'>): boolean {
  return ws.spec.subsets.some((s) => typeof s.maxReplicas === 'string');
}

/** A limited subset's share in percent as a fraction `num/den`. */
export interface Share {
  num: number;
  den: number;
}

/**
 * D17: each limited subset's share (see the module comment): its percentage,
 * or for an integer limit beside percentages (validation forbids mixing them)
 * its share of today's replicas. Null for an unset limit; undefined for a
 * limit that cannot be parsed.
 */
export function limitedShares(subsets: readonly Subset[], workloadReplicas: number): (Share | null | undefined)[] {
  return subsets.map((s) => {
    if (s.maxReplicas === undefined) return null;
    const p = parseIntOrPercent(s.maxReplicas);
    if (!p.ok || p.value < 0) return undefined;
    if (p.isPercent) return { num: Math.min(p.value, 100), den: 1 };
    const replicas = Math.max(workloadReplicas, 1);
    return { num: Math.min(100 * p.value, 100 * replicas), den: replicas };
  });
}

/** The balanced cost of a rank R (⌊100·rank⌋) of subset i of S: TOP − (R·S + i), clamped to S+1. */
function costOfRank(rank: number, i: number, S: number): number {
  const top = MAX_INT32 - S;
  const key = rank * S + i;
  return key > top - (S + 1) ? S + 1 : top - key;
}

/** The balanced cost of the j-th most valuable pod (j ≥ 1) of limited subset i of S, with a share > 0. */
export function balancedCost(share: Share, j: number, i: number, S: number): number {
  return costOfRank(Math.floor((10_000 * (j - 1) * share.den) / share.num), i, S);
}

/**
 * D17: the balanced costs of the latest version, by place. Limited subsets:
 * Adams' ranks. Unset subsets: their pods are never over a limit, so each is
 * kept down to the smallest size at which the limited subsets cannot make up
 * the count within their limits — the k-th most valuable unset pod (pooled
 * over the unset subsets, the subset with the most places left first, then
 * the front one) ranks at n_k − 1, n_k the first size at which k of them are
 * needed; those never needed rank below every balanced place (overflow,
 * removed first, back subset first).
 */
function balancedTable(subsets: readonly Subset[], counts: readonly number[], workloadReplicas: number): (number | undefined)[][] {
  const S = subsets.length;
  const shares = limitedShares(subsets, workloadReplicas);
  const table: (number | undefined)[][] = [];
  for (let i = 0; i < S; i++) {
    const count = counts[i] ?? 0;
    const min = protectedPlaces(subsets[i] as Subset, count);
    const row: (number | undefined)[] = [];
    for (let place = 1; place <= count; place++) row.push(balancedPlaceCost(shares[i], min, place, i, S));
    table.push(row);
  }
  assignUnsetPlaces(subsets, shares, counts, (i, place, cost) => {
    (table[i] as (number | undefined)[])[place] = cost;
    return false;
  });
  return table;
}

/**
 * The balanced cost of the j-th most valuable place of subset i (`min`: its
 * protected places); for an unset subset (share null) the overflow cost,
 * which `assignUnsetPlaces` replaces for the places it finds needed.
 */
function balancedPlaceCost(share: Share | null | undefined, min: number, j: number, i: number, S: number): number | undefined {
  if (share === undefined) return undefined;
  if (j <= min) return MAX_INT32 - i;
  if (share === null) return S - i; // an unset place, unless the pass below finds it needed
  if (share.num <= 0) return S - i;
  return balancedCost(share, j, i, S);
}

/**
 * Unset subsets: the places the limited ones cannot stand in for, size by
 * size. Calls `assign(i, place, cost)` for each needed place of an unset
 * subset i (0-based, after its protected ones) in the order they are found;
 * stops early when it answers true.
 */
function assignUnsetPlaces(subsets: readonly Subset[], shares: readonly (Share | null | undefined)[], counts: readonly number[], assign: (i: number, place: number, cost: number) => boolean): void {
  const S = subsets.length;
  const unset: number[] = [];
  for (let i = 0; i < S; i++) if (shares[i] === null) unset.push(i);
  if (unset.length === 0) return;
  const mins = subsets.map((subset, i) => protectedPlaces(subset, counts[i] ?? 0));
  let total = 0;
  let heldByUnset = 0;
  for (let i = 0; i < S; i++) {
    total += counts[i] ?? 0;
    if (shares[i] === null) heldByUnset += mins[i] ?? 0;
  }
  const next = mins.slice(); // the next place to fill of each unset subset, 0-based
  let needed = 0;
  for (let n = 1; n <= total; n++) {
    // The places the limited subsets (within their limits) and the unset subsets' protected pods hold at size n.
    let held = heldByUnset;
    for (let i = 0; i < S; i++) {
      const share = shares[i];
      if (share === null || share === undefined) continue;
      const min = mins[i] ?? 0;
      held += Math.min(counts[i] ?? 0, Math.max(min, Math.ceil((share.num * n) / (100 * share.den))));
    }
    const need = n - held;
    while (needed < need) {
      // The unset subset with the most places left, the front one on a tie.
      let pick = -1;
      let left = 0;
      for (const u of unset) {
        const l = (counts[u] ?? 0) - (next[u] ?? 0);
        if (l > left) {
          pick = u;
          left = l;
        }
      }
      if (pick < 0) return;
      const place = next[pick] ?? 0;
      next[pick] = place + 1;
      needed++;
      if (assign(pick, place, costOfRank(100 * (n - 1), pick, S))) return;
    }
  }
}

export interface DeletionCostPatch {
  pod: string;
  cost: number;
}

/**
 * The pods whose annotation must change, in pod order: the stored string
 * differs from the cost's decimal form. An absent annotation stands for "0",
 * so a cost of 0 never adds one; inactive pods are never patched.
 */
export function deletionCostPatches(pods: readonly Pod[], costs: ReadonlyMap<string, number>): DeletionCostPatch[] {
  const patches: DeletionCostPatch[] = [];
  for (const pod of pods) {
    const name = pod.metadata?.name;
    if (typeof name !== 'string' || name === '') continue;
    const cost = costs.get(name);
    if (cost === undefined || !isPodActive(pod)) continue;
    const current = pod.metadata?.annotations?.[POD_DELETION_COST_ANNOTATION];
    const wanted = String(cost);
    if (current === undefined ? wanted === '0' : current === wanted) continue;
    patches.push({ pod: name, cost });
  }
  return patches;
}
