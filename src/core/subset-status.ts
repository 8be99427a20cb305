/**
 * Subset status computation (spec §4.4): what the controller believes each
 * subset holds, recomputed from the observed pods on every reconcile, merged
 * with the webhook's optimistic bookkeeping (creatingPods / deletingPods).
 *
 * Start at `computeSubsetStatus` (one subset, one pod list), then
 * `computeWorkloadSpreadStatus` (the top-level list, one list per pod version,
 * and the display fields of DECISIONS D1: `subsetCount`, `ready` — ready pods
 * in subsets over workload replicas — and `placed`).
 *
 * Invariants and deliberate reproductions:
 * - `replicas` counts active pods only (user-issues #16); `missingReplicas` is
 *   -1 for an unlimited subset and otherwise in [0, max].
 * - Expiry is strict: an entry stored at t survives while `t + timeout >= now`.
 *   Stored times have second precision (spec §1.4), so the maths runs on the
 *   parsed stored value, never on when the entry was written.
 * - The deleting adjustment is interleaved with the per-pod decrement, so the
 *   result depends on pod order when a subset is over its limit (spec §4.4 step 6).
 * - Bookkeeping entries are handled the same way whether or not the subset is
 *   limited: the webhook only writes them for limited subsets and, with D2,
 *   for subsets with `minReplicas`, whose occupancy must stay exact.
 * - Old status is matched by subset name (user-issues #8); nothing here throws
 *   on a missing or malformed old status.
 */
import { CREATE_POD_TIMEOUT_MS, DELETE_POD_TIMEOUT_MS, RESERVED_AHEAD_PREFIX } from '../api/keys.ts';
import type { Subset, SubsetStatus, WorkloadSpread, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { isPodActive, isPodReady } from '../k8s/pod.ts';
import { parseTime } from '../k8s/time.ts';
import type { Pod } from '../k8s/types.ts';
import { createPodFailedEvent, deletePodFailedEvent, workloadSpreadRef } from './events.ts';
import type { EngineEvent, WorkloadSpreadRef } from './events.ts';
import { readMarker } from './marker.ts';
import { resolveMaxReplicas } from './percent.ts';

/** The smaller of two requeue delays, ignoring absent and non-positive ones (spec §4.1 "smallest positive"). */
export function soonerRequeue(a: number | undefined, b: number | undefined): number | undefined {
  const ok = (x: number | undefined): x is number => x !== undefined && Number.isFinite(x) && x > 0;
  if (ok(a) && ok(b)) return Math.min(a, b);
  if (ok(a)) return a;
  if (ok(b)) return b;
  return undefined;
}

/** The string-valued entries of a stored time map; anything malformed reads as empty. */
function timeEntries(value: unknown): [string, string][] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  return Object.entries(value as Record<string, unknown>).filter(
    (entry): entry is [string, string] => typeof entry[1] === 'string',
  );
}

export interface SubsetStatusInput {
  /** Whose events these are (namespace and name in the event messages); empty when omitted. */
  ws?: WorkloadSpreadRef;
  subset: Subset;
  /** The subset's pods, in the order the controller listed them (tests use name order). */
  pods: readonly Pod[];
  /** The previous status of the subset with the same name, if any. */
  old: SubsetStatus | undefined;
  workloadReplicas: number;
  /** Epoch milliseconds. */
  now: number;
}

export interface SubsetStatusResult {
  /** Undefined on the defensive path: maxReplicas cannot be resolved (validation prevents it). */
  status: SubsetStatus | undefined;
  requeueAfterMs?: number;
  events: EngineEvent[];
}

/** spec §4.4 steps 1–5 for one subset. */
export function computeSubsetStatus(input: SubsetStatusInput): SubsetStatusResult {
  const { subset, pods, old, now } = input;
  const ws = input.ws ?? { namespace: '', name: '' };
  const max = resolveMaxReplicas(subset.maxReplicas, input.workloadReplicas);
  if (max === undefined) return { status: undefined, events: [] };

  const events: EngineEvent[] = [];
  let requeue: number | undefined;
  let missing = max;
  let replicas = 0;
  const creating = new Map(timeEntries(old?.creatingPods));
  const oldDeleting = new Map(timeEntries(old?.deletingPods));
  const deleting: Record<string, string> = {};

  for (const pod of pods) {
    const name = pod.metadata?.name ?? '';
    const uid = readMarker(pod)?.uid;
    creating.delete(uid !== undefined && uid !== '' ? uid : name);
    if (!isPodActive(pod)) continue;
    replicas++;
    if (missing > 0) missing--;
    const stored = oldDeleting.get(name);
    if (stored === undefined) continue;
    const t = parseTime(stored);
    const expiry = t === undefined ? Number.NEGATIVE_INFINITY : t + DELETE_POD_TIMEOUT_MS;
    if (expiry < now) {
      events.push(deletePodFailedEvent(ws, name));
      continue;
    }
    deleting[name] = stored;
    if (missing < max) missing++;
    requeue = soonerRequeue(requeue, expiry - now);
  }

  const kept: Record<string, string> = {};
  for (const [id, stored] of creating) {
    const t = parseTime(stored);
    const expiry = t === undefined ? Number.NEGATIVE_INFINITY : t + CREATE_POD_TIMEOUT_MS;
    if (expiry < now) {
      // A place reserved ahead that no pod claimed (its manager stopped before giving it back) is no failed creation.
      if (!id.startsWith(RESERVED_AHEAD_PREFIX)) events.push(createPodFailedEvent(ws, id));
      continue;
    }
    kept[id] = stored;
    if (missing > 0) missing--;
    requeue = soonerRequeue(requeue, expiry - now);
  }

  const status: SubsetStatus = { name: subset.name, replicas, missingReplicas: missing };
  // Empty maps are left out, as the reference's JSON (omitempty) does, so a
  // recomputed status compares equal to the stored one (D9).
  if (Object.keys(kept).length > 0) status.creatingPods = kept;
  if (Object.keys(deleting).length > 0) status.deletingPods = deleting;
  const result: SubsetStatusResult = { status, events };
  if (requeue !== undefined) result.requeueAfterMs = requeue;
  return result;
}

export interface SubsetListResult {
  /** Undefined when some subset took the defensive path. */
  statuses: SubsetStatus[] | undefined;
  requeueAfterMs?: number;
  events: EngineEvent[];
}

/** One status per spec subset, in spec order, each against its same-named old status. */
export function computeSubsetStatuses(input: {
  ws: WorkloadSpreadRef;
  subsets: readonly Subset[];
  podsOf: (subset: string) => readonly Pod[];
  old: readonly SubsetStatus[] | undefined;
  workloadReplicas: number;
  now: number;
}): SubsetListResult {
  const oldByName = statusesByName(input.old);
  const statuses: SubsetStatus[] = [];
  const events: EngineEvent[] = [];
  let requeue: number | undefined;
  for (const subset of input.subsets) {
    const r = computeSubsetStatus({
      ws: input.ws,
      subset,
      pods: input.podsOf(subset.name),
      old: oldByName.get(subset.name),
      workloadReplicas: input.workloadReplicas,
      now: input.now,
    });
    if (r.status === undefined) return { statuses: undefined, events: [] };
    statuses.push(r.status);
    events.push(...r.events);
    requeue = soonerRequeue(requeue, r.requeueAfterMs);
  }
  const result: SubsetListResult = { statuses, events };
  if (requeue !== undefined) result.requeueAfterMs = requeue;
  return result;
}

/** Old statuses keyed by name; malformed entries are skipped, the first of a duplicated name wins. */
export function statusesByName(old: readonly SubsetStatus[] | undefined | unknown): Map<string, SubsetStatus> {
  const byName = new Map<string, SubsetStatus>();
  if (!Array.isArray(old)) return byName;
  for (const entry of old as unknown[]) {
    if (entry === null || typeof entry !== 'object') continue;
    const name = (entry as { name?: unknown }).name;
    if (typeof name !== 'string' || byName.has(name)) continue;
    byName.set(name, entry as SubsetStatus);
  }
  return byName;
}

export interface WorkloadSpreadStatusInput {
  ws: WorkloadSpread;
  /** Pods of every version per subset (and FAKE), in listing order. */
  bySubset: ReadonlyMap<string, readonly Pod[]>;
  /** Per pod version, pods per subset (and FAKE). */
  byVersion: ReadonlyMap<string, ReadonlyMap<string, readonly Pod[]>>;
  workloadReplicas: number;
  now: number;
}

export interface WorkloadSpreadStatusResult {
  /** Undefined on the defensive path (an unresolvable maxReplicas): write nothing. */
  status: WorkloadSpreadStatus | undefined;
  requeueAfterMs?: number;
  events: EngineEvent[];
}

/**
 * Status assembly (spec §4.4 "calculateWorkloadSpreadStatus") without the
 * Schedulable conditions, which `reschedule.ts` adds afterwards (spec §4.6).
 */
export function computeWorkloadSpreadStatus(input: WorkloadSpreadStatusInput): WorkloadSpreadStatusResult {
  const { ws, bySubset, byVersion, workloadReplicas, now } = input;
  const ref = workloadSpreadRef(ws);
  const subsets = ws.spec.subsets;
  const oldStatus: Partial<WorkloadSpreadStatus> =
    ws.status !== null && typeof ws.status === 'object' ? ws.status : {};
  const events: EngineEvent[] = [];
  let requeue: number | undefined;
  const noPods: readonly Pod[] = [];

  const top = computeSubsetStatuses({
    ws: ref,
    subsets,
    podsOf: (name) => bySubset.get(name) ?? noPods,
    old: oldStatus.subsetStatuses,
    workloadReplicas,
    now,
  });
  if (top.statuses === undefined) return { status: undefined, events: [] };
  events.push(...top.events);
  requeue = soonerRequeue(requeue, top.requeueAfterMs);

  const oldVersioned =
    oldStatus.versionedSubsetStatuses !== null && typeof oldStatus.versionedSubsetStatuses === 'object'
      ? oldStatus.versionedSubsetStatuses
      : {};
  const versioned: Record<string, SubsetStatus[]> = {};
  for (const [version, groups] of byVersion) {
    const r = computeSubsetStatuses({
      ws: ref,
      subsets,
      podsOf: (name) => groups.get(name) ?? noPods,
      old: oldVersioned[version],
      workloadReplicas,
      now,
    });
    if (r.statuses === undefined) return { status: undefined, events: [] };
    versioned[version] = r.statuses;
    events.push(...r.events);
    requeue = soonerRequeue(requeue, r.requeueAfterMs);
  }
  // Versions without pods survive only while they still hold reservations the
  // webhook made and no pod has confirmed yet.
  for (const version of Object.keys(oldVersioned)) {
    if (byVersion.has(version)) continue;
    const r = computeSubsetStatuses({
      ws: ref,
      subsets,
      podsOf: () => noPods,
      old: oldVersioned[version],
      workloadReplicas,
      now,
    });
    if (r.statuses === undefined) return { status: undefined, events: [] };
    events.push(...r.events);
    const held = r.statuses.reduce(
      (sum, s) => sum + s.replicas + Object.keys(s.creatingPods ?? {}).length + Object.keys(s.deletingPods ?? {}).length,
      0,
    );
    if (held > 0) {
      versioned[version] = r.statuses;
      requeue = soonerRequeue(requeue, r.requeueAfterMs);
    }
  }

  const status: WorkloadSpreadStatus = { observedGeneration: ws.metadata?.generation ?? 0 };
  if (top.statuses.length > 0) status.subsetStatuses = top.statuses;
  if (Object.keys(versioned).length > 0) status.versionedSubsetStatuses = versioned;
  status.subsetCount = subsets.length;
  let readyPods = 0;
  for (const s of subsets) for (const p of bySubset.get(s.name) ?? noPods) if (isPodActive(p) && isPodReady(p)) readyPods++;
  status.ready = displayRatio(readyPods, workloadReplicas);
  status.placed = placedColumn(top.statuses, workloadReplicas);
  // D18: the rebalancer's part of the status is its own; the reconcile carries it over unchanged.
  if (oldStatus.rebalance !== undefined) status.rebalance = oldStatus.rebalance;
  const result: WorkloadSpreadStatusResult = { status, events };
  if (requeue !== undefined) result.requeueAfterMs = requeue;
  return result;
}

/** `7/10` of the display columns ("?" when the workload's replicas are unknown). */
export function displayRatio(count: number, workloadReplicas: number): string {
  return `${count}/${workloadReplicas < 0 ? '?' : workloadReplicas}`;
}

/** D1's `Placed` column: active pods placed in a subset over workload replicas (the `Ready` column counts the ready ones among them). */
export function placedColumn(statuses: readonly SubsetStatus[], workloadReplicas: number): string {
  return displayRatio(statuses.reduce((sum, s) => sum + s.replicas, 0), workloadReplicas);
}

