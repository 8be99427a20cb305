/**
 * One WorkloadSpread per workload (spec §1.1, V26), also when two slipped past
 * validation together (the webhook checks its cache, so two created at the
 * same moment can both be accepted — issue 14 finding 4).
 *
 * The rule, in one place: among the WorkloadSpreads of a namespace that are
 * not being deleted and target the same workload (group, kind and name; the
 * version does not count), the one with the older creationTimestamp takes
 * precedence, then the one whose name sorts first (timestamps have second
 * precision, so two created together often tie), then the smaller uid. A
 * WorkloadSpread without a creationTimestamp (a manifest not yet created)
 * comes after every stored one.
 *
 * Used by admission's matching (a pod is placed only by the winner), by the
 * controller (the loser gets `DuplicateTarget=True`, a Warning event, and is
 * otherwise left alone: no status, no pod writes) and by validation (V26
 * reports only a WorkloadSpread that takes precedence over the one being
 * validated, so the winner stays editable while a loser exists).
 * Start at `precedingWorkloadSpread`.
 */
import type { WorkloadSpread, WorkloadSpreadCondition, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { EVENT_DUPLICATE_TARGET } from '../api/keys.ts';
import { apiVersionGroup } from '../k8s/pod.ts';
import { formatTime, parseTime } from '../k8s/time.ts';
import type { EngineEvent } from './events.ts';

/** The status condition type a loser carries. */
export const DUPLICATE_TARGET_CONDITION = 'DuplicateTarget';
export const DUPLICATE_TARGET_REASON = 'OlderWorkloadSpreadExists';

/** What the rule reads of a WorkloadSpread (any object shaped like one: a manifest, a review's object). */
type Spread = { metadata?: WorkloadSpread['metadata'] | undefined; spec?: WorkloadSpread['spec'] | undefined };

/** `group/kind/name` of a WorkloadSpread's target, undefined without a usable targetRef. */
export function targetKey(ws: Spread): string | undefined {
  const ref = ws.spec?.targetRef;
  if (ref === undefined || ref === null || typeof ref.apiVersion !== 'string' || typeof ref.kind !== 'string' || typeof ref.name !== 'string') return undefined;
  if (ref.kind === '' || ref.name === '') return undefined;
  const gv = apiVersionGroup(ref.apiVersion);
  return `${gv.ok ? gv.group : ''}/${ref.kind}/${ref.name}`;
}

export function isDeleting(ws: Spread): boolean {
  const ts = ws.metadata?.deletionTimestamp;
  return ts !== undefined && ts !== null && ts !== '';
}

function createdAt(ws: Spread): number {
  return parseTime(ws.metadata?.creationTimestamp) ?? Number.POSITIVE_INFINITY;
}

/** Whether `a` takes precedence over `b` (assumed to target the same workload): older, then name, then uid. */
export function takesPrecedence(a: Spread, b: Spread): boolean {
  const ta = createdAt(a);
  const tb = createdAt(b);
  if (ta !== tb) return ta < tb;
  const na = a.metadata?.name ?? '';
  const nb = b.metadata?.name ?? '';
  if (na !== nb) return na < nb;
  return (a.metadata?.uid ?? '') < (b.metadata?.uid ?? '');
}

function sameObject(a: Spread, b: Spread): boolean {
  return (a.metadata?.name ?? '') === (b.metadata?.name ?? '') && (a.metadata?.namespace ?? '') === (b.metadata?.namespace ?? '');
}

/**
 * The WorkloadSpread among `others` (same namespace) that wins `ws`'s workload
 * over `ws`, or undefined when `ws` is the one that counts. A deleting
 * WorkloadSpread never wins (the next one takes over as it goes).
 */
export function precedingWorkloadSpread<T extends Spread>(ws: Spread, others: readonly T[]): T | undefined {
  const key = targetKey(ws);
  if (key === undefined) return undefined;
  let winner: T | undefined;
  for (const other of others) {
    if (sameObject(other, ws) || isDeleting(other) || targetKey(other) !== key) continue;
    if (!takesPrecedence(other, ws)) continue;
    if (winner === undefined || takesPrecedence(other, winner)) winner = other;
  }
  return winner;
}

/**
 * The WorkloadSpreads that count: `spreads` without those another (non-deleting) one of the list takes precedence over; order kept.
 * One pass to find each workload's winner and one to filter: O(n), since admission asks for every pod.
 */
export function activeWorkloadSpreads<T extends Spread>(spreads: readonly T[]): readonly T[] {
  if (spreads.length < 2) return spreads;
  // A frozen list (the caches hand out one per namespace until a WorkloadSpread changes) cannot change: its answer is kept with it.
  if (!Object.isFrozen(spreads)) return active(spreads);
  let answer = activeMemo.get(spreads) as readonly T[] | undefined;
  if (answer === undefined) {
    answer = Object.freeze(active(spreads));
    activeMemo.set(spreads, answer);
  }
  return answer;
}

const activeMemo = new WeakMap<readonly Spread[], readonly Spread[]>();

function active<T extends Spread>(spreads: readonly T[]): T[] {
  const keys: (string | undefined)[] = [];
  for (const ws of spreads) keys.push(targetKey(ws));
  const winners = new Map<string, T>();
  for (let i = 0; i < spreads.length; i++) {
    const ws = spreads[i] as T;
    const key = keys[i];
    if (key === undefined || isDeleting(ws)) continue;
    const winner = winners.get(key);
    if (winner === undefined || (takesPrecedence(ws, winner) && !sameObject(ws, winner))) winners.set(key, ws);
  }
  const out: T[] = [];
  for (let i = 0; i < spreads.length; i++) {
    const ws = spreads[i] as T;
    const key = keys[i];
    const winner = key === undefined || isDeleting(ws) ? undefined : winners.get(key);
    if (winner === undefined || sameObject(winner, ws) || !takesPrecedence(winner, ws)) out.push(ws);
  }
  return out;
}

/** Whether the status carries the condition of a loser. */
export function hasDuplicateTarget(status: WorkloadSpreadStatus | undefined): boolean {
  return (status?.conditions ?? []).some((c) => c?.type === DUPLICATE_TARGET_CONDITION && c.status === 'True');
}

/**
 * The status of a loser: only `observedGeneration` and `DuplicateTarget=True`
 * naming the winner (its subset statuses would be stale; the winner's
 * controller adopts any pod the loser placed). The condition keeps its
 * lastTransitionTime while it stays true. `event` is set when the condition
 * is new (a Warning on the loser).
 */
export function duplicateTargetStatus(loser: WorkloadSpread, winner: Spread, now: number): { status: WorkloadSpreadStatus; event?: EngineEvent } {
  const namespace = loser.metadata?.namespace ?? '';
  const ref = loser.spec?.targetRef;
  const message = `${ref?.kind ?? 'the workload'} ${namespace}/${ref?.name ?? ''} is already spread by WorkloadSpread ${winner.metadata?.name ?? ''} (created earlier, or first by name at the same second); this WorkloadSpread is ignored until that one is deleted`;
  const previous = (loser.status?.conditions ?? []).find((c) => c?.type === DUPLICATE_TARGET_CONDITION && c.status === 'True');
  const condition: WorkloadSpreadCondition = {
    type: DUPLICATE_TARGET_CONDITION,
    status: 'True',
    lastTransitionTime: previous?.lastTransitionTime ?? formatTime(now),
    reason: DUPLICATE_TARGET_REASON,
    message,
  };
  const generation = loser.metadata?.generation;
  const status: WorkloadSpreadStatus = { ...(typeof generation === 'number' ? { observedGeneration: generation } : {}), conditions: [condition] };
  if (previous !== undefined) return { status };
  return {
    status,
    event: { type: 'Warning', reason: EVENT_DUPLICATE_TARGET, message, involved: { kind: 'WorkloadSpread', namespace, name: loser.metadata?.name ?? '' } },
  };
}
