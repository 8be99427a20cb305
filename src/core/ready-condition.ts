/**
 * The WorkloadSpread's top-level health in kstatus's terms: `Ready`, and
 * `Reconciling` or `Stalled` beside it while it is not (sigs.k8s.io/cli-utils
 * kstatus: `Reconciling=True` reads as InProgress, `Stalled=True` as Failed,
 * neither as Current once `status.observedGeneration` equals
 * `metadata.generation`; `kubectl wait --for=condition=Ready` and Argo CD
 * read `Ready`). Every condition carries the generation it was set for.
 *
 * `Ready=True` (reason `Spread`) means the status describes the current spec
 * and the pods the controller saw, and the spread holds:
 * - the workload exists, and this WorkloadSpread is the one that spreads it
 *   (a duplicate is `Stalled`, reason `DuplicateTarget`);
 * - no admission or deletion booked by the webhook is still unobserved
 *   (`creatingPods`, `deletingPods`; places reserved ahead do not count);
 * - the workload has as many active pods as it asks for (a Job: at most its
 *   parallelism; not judged when the replicas are unknown, or when a
 *   `targetFilter.selector` picks part of the pods and no replicas path says
 *   how many);
 * - no subset is `Schedulable=False`;
 * - no subset holds more active pods than its `maxReplicas`;
 * - every active pod is in a subset;
 * - the rebalancer, when on, is not in the middle of moving pods;
 * - no pod event reached the controller while it computed this status (this
 *   only keeps a WorkloadSpread that is not Ready from turning Ready: the
 *   next reconcile, already queued, judges the new events).
 * The first rule that fails gives the reason of `Ready=False`, in the order
 * above. It is `Stalled` when nothing will change without someone acting: a
 * duplicate; a subset over its limit or pods outside every subset while no
 * rollout (pods of more than one version) and no rebalancing move is under
 * way. Every other reason is `Reconciling`: the controller or the workload is
 * still moving. Reconciling and Stalled are present only while True
 * (kstatus's "abnormal-true" convention).
 *
 * Pure. Start at `readinessConditions`; `readyChanged` tells the controller
 * which status changes it must not hold back.
 */
import type { Subset, SubsetStatus, WorkloadSpread, WorkloadSpreadCondition, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { FAKE_SUBSET_NAME, RESERVED_AHEAD_PREFIX } from '../api/keys.ts';
import { rebalanceRequested } from '../api/rebalance-settings.ts';
import { apiVersionGroup, isPodActive, isPodReady } from '../k8s/pod.ts';
import { formatTime } from '../k8s/time.ts';
import type { Pod } from '../k8s/types.ts';
import { resolveMaxReplicas } from './percent.ts';
import { isSchedulableFalse } from './subset-choice.ts';
import { DUPLICATE_TARGET_CONDITION } from './target-conflict.ts';

export const CONDITION_READY = 'Ready';
export const CONDITION_RECONCILING = 'Reconciling';
export const CONDITION_STALLED = 'Stalled';
/** The condition types this module owns; every other top-level condition is left alone. */
export const READINESS_CONDITION_TYPES: readonly string[] = [CONDITION_READY, CONDITION_RECONCILING, CONDITION_STALLED];

/** Reasons, in the order the rules are checked. */
export const READY_REASONS = {
  duplicateTarget: 'DuplicateTarget',
  workloadNotFound: 'WorkloadNotFound',
  podsPending: 'PodsPending',
  converging: 'Converging',
  subsetUnschedulable: 'SubsetUnschedulable',
  subsetOverLimit: 'SubsetOverLimit',
  podsOutsideSubsets: 'PodsOutsideSubsets',
  rebalancing: 'Rebalancing',
  podsChanging: 'PodsChanging',
  spread: 'Spread',
} as const;
export type ReadyReason = (typeof READY_REASONS)[keyof typeof READY_REASONS];

/** Rebalancer reasons that mean a move is under way (api REBALANCE_REASONS). */
const REBALANCE_MOVING = new Set(['Moving', 'WaitingForStatus', 'WaitingForReadiness']);

export type Verdict =
  | { ready: true; reason: ReadyReason; message: string }
  | { ready: false; kind: 'Reconciling' | 'Stalled'; reason: ReadyReason; message: string };

export interface ReadinessInput {
  ws: WorkloadSpread;
  /** The status just computed (subset statuses with their Schedulable conditions, rebalance carried over). */
  status: WorkloadSpreadStatus;
  /** Per subset name (and FAKE), the pods of every version. */
  bySubset: ReadonlyMap<string, readonly Pod[]>;
  /** Per pod version, per subset name (and FAKE), the pods. */
  byVersion: ReadonlyMap<string, ReadonlyMap<string, readonly Pod[]>>;
  workloadReplicas: number;
  /** False when the target workload does not exist. */
  workloadFound: boolean;
  /** False when pod events reached the controller after it read the pods for this status. */
  podsCurrent: boolean;
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

function activeCount(pods: readonly Pod[] | undefined): number {
  let n = 0;
  for (const p of pods ?? []) if (isPodActive(p)) n++;
  return n;
}

/** Unobserved bookkeeping of a subset status: admissions not seen as pods yet (reserved-ahead places apart), and deletions not seen yet. */
function pendingBookings(s: SubsetStatus): number {
  const creating = s.creatingPods !== null && typeof s.creatingPods === 'object' ? Object.keys(s.creatingPods).filter((k) => !k.startsWith(RESERVED_AHEAD_PREFIX)).length : 0;
  const deleting = s.deletingPods !== null && typeof s.deletingPods === 'object' ? Object.keys(s.deletingPods).length : 0;
  return creating + deleting;
}

/** Every subset status of a status: the unversioned list and each version's. */
export function allSubsetStatuses(status: WorkloadSpreadStatus): SubsetStatus[] {
  const lists = [status.subsetStatuses ?? [], ...Object.values(status.versionedSubsetStatuses ?? {})];
  return lists.flatMap((l) => (Array.isArray(l) ? l : []));
}

/**
 * How many active pods the workload should have: `exact` for kinds that keep
 * `replicas` pods running, `atMost` for a Job (its pods finish), undefined
 * when it cannot be known.
 */
export function expectedActivePods(ws: Pick<WorkloadSpread, 'spec'>, workloadReplicas: number): { count: number; exact: boolean } | undefined {
  if (!(workloadReplicas >= 0)) return undefined;
  const filter = ws.spec.targetFilter;
  const selector = filter?.selector;
  const paths = filter?.replicasPathList;
  if (selector !== undefined && selector !== null && !(Array.isArray(paths) && paths.length > 0)) return undefined;
  const ref = ws.spec.targetRef;
  const group = apiVersionGroup(ref?.apiVersion ?? '');
  const isJob = group.ok && group.group === 'batch' && ref?.kind === 'Job';
  return { count: workloadReplicas, exact: !isJob };
}

/** Active pods of more than one pod version: a rollout is replacing pods. */
function rolloutUnderWay(byVersion: ReadonlyMap<string, ReadonlyMap<string, readonly Pod[]>>): boolean {
  let versions = 0;
  for (const groups of byVersion.values()) {
    let active = 0;
    for (const pods of groups.values()) active += activeCount(pods);
    if (active > 0) versions++;
  }
  return versions > 1;
}

/** The rules, in order; the first that fails decides. */
export function readinessVerdict(input: ReadinessInput): Verdict {
  const { ws, status, bySubset, byVersion, workloadReplicas } = input;
  const subsets: readonly Subset[] = ws.spec.subsets;
  const ref = ws.spec.targetRef;
  const target = `${ref?.kind ?? 'workload'} ${ref?.name ?? ''}`;
  const reconciling = (reason: ReadyReason, message: string): Verdict => ({ ready: false, kind: 'Reconciling', reason, message });
  const stalled = (reason: ReadyReason, message: string): Verdict => ({ ready: false, kind: 'Stalled', reason, message });

  if (!input.workloadFound) return reconciling(READY_REASONS.workloadNotFound, `${target} does not exist (yet)`);

  const booked = allSubsetStatuses(status).reduce((n, s) => n + pendingBookings(s), 0);
  if (booked > 0) {
    return reconciling(READY_REASONS.podsPending, `${plural(booked, 'pod creation or deletion', 'pod creations or deletions')} admitted by the webhook not observed yet`);
  }

  let active = 0;
  for (const pods of bySubset.values()) active += activeCount(pods);
  const expected = expectedActivePods(ws, workloadReplicas);
  if (expected !== undefined && (expected.exact ? active !== expected.count : active > expected.count)) {
    return reconciling(READY_REASONS.converging, `${target} has ${plural(active, 'active pod')}, it asks for ${expected.exact ? '' : 'at most '}${expected.count}`);
  }

  const unschedulable = (status.subsetStatuses ?? []).filter((s) => isSchedulableFalse(s)).map((s) => s.name);
  if (unschedulable.length > 0) {
    return reconciling(
      READY_REASONS.subsetUnschedulable,
      `subset ${unschedulable.join(', ')} ${unschedulable.length === 1 ? 'is' : 'are'} Schedulable=False: new pods go to later subsets until the recovery window ends`,
    );
  }

  const rollout = rolloutUnderWay(byVersion);
  const rebalanceReason = status.rebalance?.reason;
  const rebalancing = rebalanceRequested(ws) && (rebalanceReason === undefined || REBALANCE_MOVING.has(rebalanceReason));
  const over: string[] = [];
  for (const subset of subsets) {
    const max = resolveMaxReplicas(subset.maxReplicas, workloadReplicas);
    if (max === undefined || max < 0) continue;
    const pods = activeCount(bySubset.get(subset.name));
    if (pods > max) over.push(`${subset.name} holds ${pods} (limit ${max})`);
  }
  if (over.length > 0) {
    const message = `subset ${over.join(', ')}`;
    if (rollout) return reconciling(READY_REASONS.subsetOverLimit, `${message}; a rollout is replacing pods`);
    if (rebalancing) return reconciling(READY_REASONS.subsetOverLimit, `${message}; the rebalancer is moving pods`);
    return stalled(READY_REASONS.subsetOverLimit, `${message}; running pods leave it only on a scale-in, a rollout, or with rebalancing on`);
  }

  const outside = activeCount(bySubset.get(FAKE_SUBSET_NAME));
  if (outside > 0) {
    const message = `${plural(outside, 'active pod')} in no subset`;
    if (rollout) return reconciling(READY_REASONS.podsOutsideSubsets, `${message}; a rollout is replacing pods`);
    return stalled(READY_REASONS.podsOutsideSubsets, `${message}: no subset had room when ${outside === 1 ? 'it was' : 'they were'} created, or ${outside === 1 ? 'its node matches' : 'their nodes match'} no subset`);
  }

  const pending = status.rebalance?.pending;
  if (rebalancing && typeof pending === 'number' && pending > 0) {
    return reconciling(READY_REASONS.rebalancing, `the rebalancer is moving pods (${plural(pending, 'pod')} to move, ${rebalanceReason ?? 'starting'})`);
  }

  // Only a turn to Ready waits for the pods to hold still: one that is Ready stays so (its next sync judges the new events).
  if (!input.podsCurrent && readyStatus(ws.status) !== 'True') {
    return reconciling(READY_REASONS.podsChanging, 'pods changed while this status was computed; the next reconcile decides');
  }

  const used = subsets.filter((s) => activeCount(bySubset.get(s.name)) > 0).length;
  return { ready: true, reason: READY_REASONS.spread, message: `${plural(active, 'active pod')} in ${plural(used, 'subset')}, every subset within its limit` };
}

function findCondition(conditions: unknown, type: string): WorkloadSpreadCondition | undefined {
  if (!Array.isArray(conditions)) return undefined;
  return (conditions as unknown[]).find(
    (c): c is WorkloadSpreadCondition => c !== null && typeof c === 'object' && (c as { type?: unknown }).type === type,
  );
}

/** A condition that keeps the stored lastTransitionTime while its status stays the same. */
function condition(old: unknown, type: string, status: 'True' | 'False', reason: string, message: string, generation: number | undefined, now: number): WorkloadSpreadCondition {
  const previous = findCondition(old, type);
  const since = previous !== undefined && previous.status === status && typeof previous.lastTransitionTime === 'string' ? previous.lastTransitionTime : formatTime(now);
  return {
    type,
    status,
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    lastTransitionTime: since,
    reason,
    message,
  };
}

/**
 * The conditions of a verdict: `Ready`, then `Reconciling` or `Stalled`
 * when not ready. `old`: the stored conditions (for lastTransitionTime).
 */
export function verdictConditions(verdict: Verdict, old: unknown, generation: number | undefined, now: number): WorkloadSpreadCondition[] {
  const ready = condition(old, CONDITION_READY, verdict.ready ? 'True' : 'False', verdict.reason, verdict.message, generation, now);
  if (verdict.ready) return [ready];
  return [ready, condition(old, verdict.kind, 'True', verdict.reason, verdict.message, generation, now)];
}

/** `conditions` with the readiness conditions replaced by `next` (other types kept, in order, before them). */
export function withReadinessConditions(conditions: readonly WorkloadSpreadCondition[] | undefined, next: readonly WorkloadSpreadCondition[]): WorkloadSpreadCondition[] {
  const others = (conditions ?? []).filter((c) => !READINESS_CONDITION_TYPES.includes(c?.type));
  return [...others, ...next];
}

/**
 * The integer counts the printer columns read: the workload's replicas
 * (absent when unknown), active pods in subsets, ready ones among them.
 */
export function podCounts(subsets: readonly Subset[], bySubset: ReadonlyMap<string, readonly Pod[]>, workloadReplicas: number): Pick<WorkloadSpreadStatus, 'workloadReplicas' | 'placedReplicas' | 'readyReplicas'> {
  let placed = 0;
  let ready = 0;
  const seen = new Set<string>();
  for (const subset of subsets) {
    if (seen.has(subset.name)) continue;
    seen.add(subset.name);
    for (const pod of bySubset.get(subset.name) ?? []) {
      if (!isPodActive(pod)) continue;
      placed++;
      if (isPodReady(pod)) ready++;
    }
  }
  return { ...(workloadReplicas >= 0 ? { workloadReplicas } : {}), placedReplicas: placed, readyReplicas: ready };
}

/**
 * `status` (just computed, with its subset statuses) with the readiness
 * conditions set and the counts the printer columns read. Inputs are not
 * mutated.
 */
export function readinessConditions(input: ReadinessInput & { now: number }): { status: WorkloadSpreadStatus; verdict: Verdict } {
  const verdict = readinessVerdict(input);
  const generation = typeof input.ws.metadata?.generation === 'number' ? input.ws.metadata.generation : undefined;
  const next = verdictConditions(verdict, input.ws.status?.conditions, generation, input.now);
  const status: WorkloadSpreadStatus = {
    ...input.status,
    ...podCounts(input.ws.spec.subsets, input.bySubset, input.workloadReplicas),
    conditions: withReadinessConditions(input.status.conditions, next),
  };
  return { status, verdict };
}

/** The stored `Ready` condition's status ('True', 'False') or undefined. */
export function readyStatus(status: WorkloadSpreadStatus | undefined): string | undefined {
  return findCondition(status?.conditions, CONDITION_READY)?.status;
}

/** What `kubectl wait` and kstatus read: each readiness condition's status and generation, and the status's generation. */
function healthFacts(status: WorkloadSpreadStatus | undefined): unknown[] {
  return [
    status?.observedGeneration,
    ...READINESS_CONDITION_TYPES.map((type) => {
      const c = findCondition(status?.conditions, type);
      return c === undefined ? null : [c.status, c.observedGeneration ?? null];
    }),
  ];
}

/**
 * Whether writing `next` over `stored` changes what `kubectl wait` or a
 * GitOps health check reads: the status of Ready, Reconciling or Stalled, or
 * the generation they were set for. Such a change is written at once; a
 * change of reason or message alone may wait with the other display fields.
 */
export function readyChanged(stored: WorkloadSpreadStatus | undefined, next: WorkloadSpreadStatus): boolean {
  return JSON.stringify(healthFacts(stored)) !== JSON.stringify(healthFacts(next));
}

/**
 * The status of a duplicate (core/target-conflict.ts `duplicateTargetStatus`)
 * with `Ready=False` and `Stalled=True`, reason `DuplicateTarget`: it will not
 * spread anything until the WorkloadSpread that takes precedence is deleted.
 */
export function duplicateReadiness(loser: WorkloadSpread, status: WorkloadSpreadStatus, now: number): WorkloadSpreadStatus {
  const duplicate = findCondition(status.conditions, DUPLICATE_TARGET_CONDITION);
  const message = duplicate?.message ?? 'another WorkloadSpread spreads the same workload and takes precedence';
  const verdict: Verdict = { ready: false, kind: 'Stalled', reason: READY_REASONS.duplicateTarget, message };
  const generation = typeof loser.metadata?.generation === 'number' ? loser.metadata.generation : undefined;
  return { ...status, conditions: withReadinessConditions(status.conditions, verdictConditions(verdict, loser.status?.conditions, generation, now)) };
}
