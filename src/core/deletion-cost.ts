/**
 * Deletion cost (spec §4.5, DECISIONS D2 and D7): the
 * `controller.kubernetes.io/pod-deletion-cost` values that make a ReplicaSet
 * scale-down remove pods in the WorkloadSpread's order.
 *
 * With n subsets and the effective index e of a subset (its spec index for the
 * latest pod version, the mirrored index n-1-i for older versions, so a
 * rollout drains old pods from the first subsets first):
 * - pods within the subset's limit get `100*(n-e)`, the surplus (the least
 *   valuable pods in ActivePods order) gets `-100*(e+1)`;
 * - D2: the `minReplicas` most valuable pods get `100*(2n-e)`, above every
 *   normal cost; they are never counted as surplus;
 * - pods in no subset (FAKE) get `-100*(n+1)`, in every version;
 * - inactive pods get nothing and are never patched.
 * Limits resolve against the total workload replicas, not a version's share.
 *
 * Start at `computeDeletionCosts`, then `deletionCostPatches`.
 */
import {
  FAKE_SUBSET_NAME,
  POD_DELETION_COST_ANNOTATION,
  POD_DELETION_COST_NEGATIVE,
  POD_DELETION_COST_POSITIVE,
} from '../api/keys.ts';
import type { TargetReference, WorkloadSpread } from '../api/workloadspread.ts';
import { isPodActive } from '../k8s/pod.ts';
import { compareActivePods } from '../k8s/pod-ranking.ts';
import type { Pod } from '../k8s/types.ts';
import { resolveMaxReplicas } from './percent.ts';

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

  for (const [version, groups] of input.byVersion) {
    const reverse = version !== input.latestVersion;
    subsets.forEach((subset, i) => {
      const e = reverse ? n - 1 - i : i;
      const positive = POD_DELETION_COST_POSITIVE * (n - e);
      const negative = POD_DELETION_COST_NEGATIVE * (e + 1);
      const protectedCost = POD_DELETION_COST_POSITIVE * (2 * n - e);
      const active = (groups.get(subset.name) ?? []).filter((p) => isPodActive(p));
      const max = resolveMaxReplicas(subset.maxReplicas, input.workloadReplicas);
      if (max === undefined) return;
      const min = typeof subset.minReplicas === 'number' && subset.minReplicas > 0 ? Math.floor(subset.minReplicas) : 0;
      const surplus = max >= 0 ? Math.max(0, active.length - max) : 0;
      if (surplus === 0 && min === 0) {
        assign(active, positive);
        return;
      }
      // Least valuable first; Array.prototype.sort is stable, like the reference's sort.
      const ranked = [...active].sort(compareActivePods);
      const protectedCount = Math.min(min, ranked.length);
      const negativeCount = Math.min(surplus, ranked.length - protectedCount);
      assign(ranked.slice(0, negativeCount), negative);
      assign(ranked.slice(negativeCount, ranked.length - protectedCount), positive);
      assign(ranked.slice(ranked.length - protectedCount), protectedCost);
    });
    const fake = (groups.get(FAKE_SUBSET_NAME) ?? []).filter((p) => isPodActive(p));
    assign(fake, POD_DELETION_COST_NEGATIVE * (n + 1));
  }
  return costs;
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
