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
 * - subset i has a share p_i: its percentage; an unset limit shares what the
 *   percentages leave (100 − Σ%, split evenly between the unset subsets); an
 *   integer limit — only reachable when validation was bypassed — counts as
 *   its share of today's replicas;
 * - the j-th most valuable pod of subset i (ActivePods order, j = 1, 2, …)
 *   ranks at (j−1)/p_i; pods are kept in rank order, the front subset first
 *   on a tie. Because Adams' method never gives a subset more than
 *   ceil(p_i·n) of any n seats, keeping the n lowest ranks keeps every subset
 *   within its limit at n — for every n below today's count, in one scale-in
 *   or many, with no controller sync in between — whenever the pods allow it
 *   (a subset short of pods cannot be helped here: the rebalancer is for that);
 * - the cost is `TOP − (R·S + i)` with R = ⌊10000·(j−1)/p_i⌋ (p_i in
 *   percent): distinct ranks differ by at least 1/100 of a percent point, so
 *   R orders them exactly, and i breaks ties front first. TOP = 2³¹−1−S keeps
 *   the cost an int32; a rank too deep for the range (more than ~20,000 pods
 *   in a 1 % subset of 10 subsets) is clamped to S+1;
 * - D2: the `minReplicas` most valuable pods of subset i get 2³¹−1−i, above
 *   every balanced cost; a subset whose share is 0 (unset limits after
 *   100 %, or "0%") gets S−i, below them; FAKE pods keep −100·(S+1), lowest.
 * A pod's cost depends only on its subset, its share and its place j in the
 * subset, so a scale-out (new pods rank last) re-costs no existing pod.
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
  FAKE_SUBSET_NAME,
  MAX_INT32,
  POD_DELETION_COST_ANNOTATION,
  POD_DELETION_COST_NEGATIVE,
  POD_DELETION_COST_POSITIVE,
} from '../api/keys.ts';
import type { Subset, TargetReference, WorkloadSpread } from '../api/workloadspread.ts';
import { isPodActive } from '../k8s/pod.ts';
import { compareActivePods } from '../k8s/pod-ranking.ts';
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
}

/** The cost of every active pod, by pod name. Subsets whose limit cannot be resolved get none. */
export function computeDeletionCosts(input: DeletionCostInput): Map<string, number> {
  const subsets = input.ws.spec.subsets;
  const n = subsets.length;
  const costs = new Map<string, number>();
  const assign = (pods: readonly Pod[], cost: number): void => {
    for (const pod of pods) {
      const name = pod.metadata?.name;
      if (typeof name === 'string' && name !== '') costs.set(name, cost);
    }
  };

  const balanced = usesBalancedCosts(input.ws);
  for (const [version, groups] of input.byVersion) {
    const reverse = version !== input.latestVersion;
    if (balanced && !reverse) assignBalanced(groups, subsets, input.workloadReplicas, assign);
    else assignReference(groups, subsets, reverse, input.workloadReplicas, assign);
    const fake = (groups.get(FAKE_SUBSET_NAME) ?? []).filter((p) => isPodActive(p));
    assign(fake, POD_DELETION_COST_NEGATIVE * (n + 1));
  }
  return costs;
}

type Assign = (pods: readonly Pod[], cost: number) => void;

/** The active pods of a subset, least valuable first (ActivePods order; Array.prototype.sort is stable, like the reference's). */
function rankedPods(groups: ReadonlyMap<string, readonly Pod[]>, subset: Subset): Pod[] {
  return (groups.get(subset.name) ?? []).filter((p) => isPodActive(p)).sort(compareActivePods);
}

function minReplicasOf(subset: Subset): number {
  return typeof subset.minReplicas === 'number' && subset.minReplicas > 0 ? Math.floor(subset.minReplicas) : 0;
}

/** The reference's costs of one version (spec §4.5 step 2 with D2). */
function assignReference(groups: ReadonlyMap<string, readonly Pod[]>, subsets: readonly Subset[], reverse: boolean, workloadReplicas: number, assign: Assign): void {
  const n = subsets.length;
  subsets.forEach((subset, i) => {
    const e = reverse ? n - 1 - i : i;
    const positive = POD_DELETION_COST_POSITIVE * (n - e);
    const negative = POD_DELETION_COST_NEGATIVE * (e + 1);
    const protectedCost = POD_DELETION_COST_POSITIVE * (2 * n - e);
    const max = resolveMaxReplicas(subset.maxReplicas, workloadReplicas);
    if (max === undefined) return;
    const ranked = rankedPods(groups, subset);
    const min = minReplicasOf(subset);
    const surplus = max >= 0 ? Math.max(0, ranked.length - max) : 0;
    const protectedCount = Math.min(min, ranked.length);
    const negativeCount = Math.min(surplus, ranked.length - protectedCount);
    assign(ranked.slice(0, negativeCount), negative);
    assign(ranked.slice(negativeCount, ranked.length - protectedCount), positive);
    assign(ranked.slice(ranked.length - protectedCount), protectedCost);
  });
}

/** D17: whether the latest version's costs are balanced (some limit is a percentage). */
export function usesBalancedCosts(ws: Pick<WorkloadSpread, 'spec'>): boolean {
  return ws.spec.subsets.some((s) => typeof s.maxReplicas === 'string');
}

/** A subset's share in percent as a fraction `num/den`; num 0 for a subset that gets no share. */
export interface Share {
  num: number;
  den: number;
}

/** D17: each subset's share (see the module comment); undefined for a limit that cannot be parsed. */
export function subsetShares(subsets: readonly Subset[], workloadReplicas: number): (Share | undefined)[] {
  let percents = 0;
  let unset = 0;
  const parsed = subsets.map((s) => (s.maxReplicas === undefined ? undefined : parseIntOrPercent(s.maxReplicas)));
  parsed.forEach((p, i) => {
    if (subsets[i]?.maxReplicas === undefined) unset++;
    else if (p?.ok === true && p.isPercent) percents += Math.max(0, p.value);
  });
  const left = Math.max(0, 100 - percents);
  return parsed.map((p, i) => {
    if (subsets[i]?.maxReplicas === undefined) return { num: left, den: unset };
    if (p === undefined || !p.ok || p.value < 0) return undefined;
    if (p.isPercent) return { num: Math.min(p.value, 100), den: 1 };
    // An integer limit beside percentages (validation forbids mixing them): its share of today's replicas.
    return { num: Math.min(100 * p.value, 100 * Math.max(workloadReplicas, 1)), den: Math.max(workloadReplicas, 1) };
  });
}

/** The balanced cost of the j-th most valuable pod (j ≥ 1) of subset i of S, with share > 0. */
export function balancedCost(share: Share, j: number, i: number, S: number): number {
  const top = MAX_INT32 - S;
  const rank = Math.floor((10_000 * (j - 1) * share.den) / share.num);
  const key = rank * S + i;
  return key > top - (S + 1) ? S + 1 : top - key;
}

/** D17: the balanced costs of the latest version. */
function assignBalanced(groups: ReadonlyMap<string, readonly Pod[]>, subsets: readonly Subset[], workloadReplicas: number, assign: Assign): void {
  const S = subsets.length;
  const shares = subsetShares(subsets, workloadReplicas);
  subsets.forEach((subset, i) => {
    const share = shares[i];
    if (share === undefined) return;
    const ranked = rankedPods(groups, subset);
    const min = minReplicasOf(subset);
    ranked.forEach((pod, index) => {
      const j = ranked.length - index;
      if (j <= min) assign([pod], MAX_INT32 - i);
      else if (share.num <= 0) assign([pod], S - i);
      else assign([pod], balancedCost(share, j, i, S));
    });
  });
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
