/**
 * The admission protocol, written once for every handler that books quota or
 * disruptions in a status (pod CREATE, pod DELETE and eviction, budget
 * records): settle the reads → decide on the caches → when the decision
 * needs the stored status (`kind: 'commit'`), decide again under the group
 * commit (D13) on the freshest copy → the final decision, or why it could not
 * be stored.
 *
 * The handler brings core's decision function and how a decision taken under
 * the commit becomes the round's answer (`round`: the status it writes, or
 * whether it holds alone); optionally a way to answer without a round (the
 * reservation pool: `claim`) and a hook that sees every decision taken in the
 * WorkloadSpread's serial lane (`decided`). The driver never interprets a
 * decision beyond `read` and `commit`: the rules stay in core, the answer to
 * the API server stays in the handler. Start at `drive`.
 */
import type { Decision, GroupCommit, StatusObject, WorkloadSpreadKey } from './group-commit.ts';
import { settle, type ReadThroughView } from './view-reads.ts';
import type { CallerGone } from './cpu-turns.ts';

export interface AdmissionSteps<D extends { kind: string }, O extends StatusObject<unknown>, S> {
  /** The view reads are made on (one per request); without one, decisions must not ask for reads. */
  view?: ReadThroughView;
  commit: GroupCommit<O, S>;
  /** Core's decision: on the caches (`current` absent), or under the commit on `current` (undefined: the object is gone). */
  decide(current?: { ws: O | undefined }): D;
  /** Which object a `commit` decision needs (undefined for any other decision). */
  commitKey(decision: D): WorkloadSpreadKey | undefined;
  /** The round's answer for a decision taken under the commit: the status it writes, or that it holds alone. */
  round(decision: Exclude<D, { kind: 'read' }>): Decision<Exclude<D, { kind: 'read' }>, S>;
  /**
   * An answer that needs no round (places reserved ahead), for the first
   * decision: tried before the admission queues (`current` undefined: on the
   * copy the answer was prepared on), and again inside the round on the
   * freshest copy.
   */
  claim?(first: Exclude<D, { kind: 'read' }>, current: O | undefined): Promise<Exclude<D, { kind: 'read' }> | undefined>;
  /** Every decision taken (also in the serial lane of a round), before the answer leaves. */
  decided?(decision: Exclude<D, { kind: 'read' }>): void;
  /**
   * Aborts when the caller (the API server) gave up on the review: nothing is
   * booked for it from then on — no place reserved ahead is taken and it does
   * not join a round — since no one would act on the answer (with
   * `failurePolicy: Ignore` the pod is even created without it).
   */
  signal?: CallerGone;
}

export type Driven<D> = { ok: true; decision: Exclude<D, { kind: 'read' }> } | { ok: false; error: string; conflict: boolean; key: WorkloadSpreadKey };

/** Why a review the caller gave up on books nothing. */
export const CALLER_GONE = 'the API server gave up on this review (it timed out or closed the connection) before its bookkeeping was stored; nothing was booked';

/** Settles the reads of one decision on the steps' view. */
function settled<D extends { kind: string }>(view: ReadThroughView | undefined, decide: () => D): Promise<Exclude<D, { kind: 'read' }>> {
  if (view !== undefined) return settle(view, decide);
  const decision = decide();
  if (decision.kind === 'read') return Promise.reject(new Error('internal error: a decision without a view asked for a read'));
  return Promise.resolve(decision as Exclude<D, { kind: 'read' }>);
}

/** Runs the protocol for one admission (see the module comment). */
export async function drive<D extends { kind: string }, O extends StatusObject<unknown>, S>(steps: AdmissionSteps<D, O, S>): Promise<Driven<D>> {
  const first = await settled(steps.view, () => steps.decide());
  steps.decided?.(first);
  const key = steps.commitKey(first);
  if (key === undefined) return { ok: true, decision: first };
  const gone = (): Driven<D> | undefined => (steps.signal?.aborted === true ? { ok: false, error: CALLER_GONE, conflict: false, key } : undefined);
  const early = gone();
  if (early !== undefined) return early;
  const claimed = await steps.claim?.(first, undefined);
  if (claimed !== undefined) return { ok: true, decision: claimed };
  const late = gone();
  if (late !== undefined) return late;
  const outcome = await steps.commit.submit<Exclude<D, { kind: 'read' }>>(key, async (current) => {
    const pooled = current === undefined ? undefined : await steps.claim?.(first, current);
    if (pooled !== undefined) return { value: pooled, alone: true };
    const decision = await settled(steps.view, () => steps.decide({ ws: current }));
    // Decided in the object's serial lane: the next admission sees this one.
    steps.decided?.(decision);
    return steps.round(decision);
  });
  return outcome.ok ? { ok: true, decision: outcome.value } : { ok: false, error: outcome.error, conflict: outcome.conflict, key };
}
