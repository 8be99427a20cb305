/**
 * One reconcile of a WorkloadSpread as a pure plan (spec §4.2): the controller
 * and the `plan` CLI call `planReconcile` and apply what it returns; neither
 * re-implements a rule.
 *
 * Order, as the reference runs it: group pods (adopting unmarked ones) →
 * deletion costs → status → Schedulable conditions → pods to delete; then
 * the top-level Ready condition (ready-condition.ts), which the reference
 * does not have.
 * The caller applies adoptions and cost patches first, then writes the status
 * when `statusChanged` (D9), then deletes the `scheduleFailed` pods, then requeues after
 * `requeueAfterMs` (the smallest positive delay any step asked for).
 *
 * When a subset's maxReplicas cannot be resolved (validation prevents it), the
 * reference fails the sync before writing anything; here `error` is set, the
 * status is the stored one, and only the adoptions remain.
 */
import { deepClone, deepEqual } from '../k8s/json.ts';
import { isPodActive } from '../k8s/pod.ts';
import type { Node, Pod } from '../k8s/types.ts';
import type { WorkloadSpread, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { groupPodsBySubset } from './adoption.ts';
import type { Adoption } from './adoption.ts';
import { deletionCostPatches, planDeletionCosts } from './deletion-cost.ts';
import type { DeletionCostPatch } from './deletion-cost.ts';
import type { EngineEvent } from './events.ts';
import { hasManagedLabel, markedSubset } from './marker.ts';
import { resolveMaxReplicas } from './percent.ts';
import type { PodVersionOptions } from './pod-version.ts';
import { readinessConditions } from './ready-condition.ts';
import { applySchedulableConditions } from './reschedule.ts';
import { computeWorkloadSpreadStatus, soonerRequeue } from './subset-status.ts';

export interface ReconcileInput {
  ws: WorkloadSpread;
  /** The WorkloadSpread's pods (`podsForWorkloadSpread`), in listing order. */
  pods: readonly Pod[];
  nodeByName: (name: string) => Node | undefined;
  workloadReplicas: number;
  /** `latestWorkloadVersion`; only used when `writeDeletionCost`. */
  latestVersion: string;
  /** Epoch milliseconds. */
  now: number;
  /** Unschedulable recovery window in seconds (D10); default 300. */
  recoverySeconds?: number;
  /** `writesDeletionCost(targetRef, ...)` (D7). */
  writeDeletionCost: boolean;
  podVersionOptions?: PodVersionOptions;
  /** False when the target workload does not exist (default true); read by the Ready condition. */
  workloadFound?: boolean;
  /** False when pod events reached the caller after it read `pods` (default true); keeps Ready from turning True. */
  podsCurrent?: boolean;
}

export interface ReconcilePlan {
  status: WorkloadSpreadStatus;
  /** D9: write the status only when this is true. */
  statusChanged: boolean;
  adoptions: Adoption[];
  deletionCostPatches: DeletionCostPatch[];
  /**
   * Active pods marked in one of this WorkloadSpread's subsets that lack the
   * managed label (placed by an older release or by Kruise): without it the
   * pod DELETE webhook's objectSelector would hide their deletions. Written
   * with the same merge patch as a cost change of the same pod.
   */
  labelPatches: string[];
  /** Pods to delete after the status write (Adaptive rescheduling), with their subsets for `deleteUnschedulablePodFailedEvent`. */
  scheduleFailed: { pod: string; subset: string }[];
  events: EngineEvent[];
  requeueAfterMs?: number;
  /** Set when the sync cannot proceed (an unresolvable maxReplicas); nothing but adoptions should be applied. */
  error?: string;
}

/**
 * The top-level and the per-version computations see the same reservations and
 * the same subsets, so they can raise the same event twice in one sync.
 */
function dedupe(events: readonly EngineEvent[]): EngineEvent[] {
  const seen = new Set<string>();
  return events.filter((e) => {
    const key = JSON.stringify([e.type, e.reason, e.message, e.involved ?? null]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** A sync that cannot proceed: keep the stored status, apply nothing but the adoptions. */
function failedPlan(stored: WorkloadSpreadStatus, adoptions: Adoption[], error: string): ReconcilePlan {
  return { status: stored, statusChanged: false, adoptions, deletionCostPatches: [], labelPatches: [], scheduleFailed: [], events: [], error };
}

/** The active pods marked for this WorkloadSpread and a subset that lack the managed label. */
function labelPatchesOf(pods: readonly Pod[], wsName: string): string[] {
  const names: string[] = [];
  for (const p of pods) {
    const name = p.metadata?.name;
    if (typeof name === 'string' && name !== '' && isPodActive(p) && markedSubset(p, wsName) !== undefined && !hasManagedLabel(p)) names.push(name);
  }
  return names;
}

export function planReconcile(input: ReconcileInput): ReconcilePlan {
  const { ws, workloadReplicas, now } = input;
  const wsName = ws.metadata.name ?? '';
  const subsets = ws.spec.subsets;
  // A copy only for a plan that keeps the stored status (the common path computes a new one).
  const stored = (): WorkloadSpreadStatus => (ws.status !== null && typeof ws.status === 'object' ? deepClone(ws.status) : {});

  const groupInput = {
    ws,
    pods: input.pods,
    nodeByName: input.nodeByName,
    workloadReplicas,
    ...(input.podVersionOptions === undefined ? {} : { podVersionOptions: input.podVersionOptions }),
  };
  const grouped = groupPodsBySubset(groupInput);

  const invalid = subsets.find((s) => resolveMaxReplicas(s.maxReplicas, workloadReplicas) === undefined);
  if (invalid !== undefined) {
    return failedPlan(stored(), grouped.adoptions, `maxReplicas of subset ${invalid.name} cannot be resolved against ${workloadReplicas} workload replicas`);
  }

  let patches: DeletionCostPatch[] = [];
  let costRecheck: number | undefined;
  if (input.writeDeletionCost) {
    const costs = planDeletionCosts({
      ws,
      byVersion: grouped.byVersion,
      latestVersion: input.latestVersion,
      workloadReplicas,
      now,
    });
    patches = deletionCostPatches(grouped.pods, costs.costs);
    costRecheck = costs.recheckAfterMs;
  }

  const computed = computeWorkloadSpreadStatus({
    ws,
    bySubset: grouped.bySubset,
    byVersion: grouped.byVersion,
    workloadReplicas,
    now,
  });
  if (computed.status === undefined) {
    // Unreachable after the check above; kept so a future rule cannot write a half status.
    return failedPlan(stored(), grouped.adoptions, 'status could not be computed');
  }

  const conditioned = applySchedulableConditions({
    ws,
    status: computed.status,
    bySubset: grouped.bySubset,
    byVersion: grouped.byVersion,
    now,
    ...(input.recoverySeconds === undefined ? {} : { recoverySeconds: input.recoverySeconds }),
  });

  const health = readinessConditions({
    ws,
    status: conditioned.status,
    bySubset: grouped.bySubset,
    byVersion: grouped.byVersion,
    workloadReplicas,
    workloadFound: input.workloadFound ?? true,
    podsCurrent: input.podsCurrent ?? true,
    now,
  });

  const plan: ReconcilePlan = {
    status: health.status,
    statusChanged: !deepEqual(health.status, ws.status ?? undefined),
    adoptions: grouped.adoptions,
    deletionCostPatches: patches,
    labelPatches: labelPatchesOf(grouped.pods, wsName),
    scheduleFailed: conditioned.scheduleFailed
      .map((f) => ({ pod: f.pod.metadata?.name ?? '', subset: f.subset }))
      .filter((f) => f.pod !== ''),
    events: dedupe([...computed.events, ...conditioned.events]),
  };
  const requeue = soonerRequeue(soonerRequeue(computed.requeueAfterMs, conditioned.requeueAfterMs), costRecheck);
  if (requeue !== undefined) plan.requeueAfterMs = requeue;
  return plan;
}
