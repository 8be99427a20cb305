/**
 * One-line, human descriptions of scenario steps and expectation results,
 * shared by the table and HTML reports (and the demo's narration):
 * `scale Deployment default/web to 7`, `advance 5m`,
 * `subsets.a: expected 2, got 3`. Pure.
 */
import type { SettleOutcome } from './backend.ts';
import { describeDrain } from './drain.ts';
import { formatDuration } from '../k8s/duration.ts';
import type { ExpectationResult } from './evaluate.ts';
import type { ObjectRef, StepAction } from './steps.ts';

const ref = (t: ObjectRef): string => `${t.kind} ${t.namespace === '' || t.namespace === 'default' ? '' : `${t.namespace}/`}${t.name}`;

export function describeAction(a: StepAction): string {
  switch (a.action) {
    case 'scale':
      return `scale ${ref(a.target)} to ${a.replicas}`;
    case 'apply':
      return `apply ${a.object.kind ?? ''} ${a.object.metadata?.name ?? ''}`;
    case 'patch':
      return `patch ${ref(a.target)} (${a.patchType}): ${JSON.stringify(a.patch)}`;
    case 'delete':
      return 'pods' in a ? `delete ${a.pods.count} pod(s) of subset ${a.pods.subset}` : `delete ${ref(a.target)}`;
    case 'evict':
      return a.pods.by === 'name' ? `evict pod ${a.pods.name}` : `evict ${a.pods.count} pod(s) of subset ${a.pods.subset}`;
    case 'drain':
      return describeDrain(a);
    case 'cordon':
    case 'uncordon':
      return `${a.action} node ${a.node}`;
    case 'deleteNode':
      return `delete node ${a.node}`;
    case 'addNodes':
      return `add node(s) ${a.nodes.map((n) => n.name).join(', ')}`;
    case 'taint':
      return `taint node ${a.node} ${a.taint.key}${a.taint.value === undefined ? '' : `=${a.taint.value}`}:${a.taint.effect}`;
    case 'untaint':
      return `untaint node ${a.node} ${a.key}${a.effect === undefined ? '' : `:${a.effect}`}`;
    case 'rollout':
      return `roll out ${ref(a.target)} (pod template changed)`;
    case 'createPods':
      return `create ${a.count} pod(s) owned by ${ref(a.owner)}`;
    case 'advance':
      return `advance ${formatDuration(a.ms)}`;
    case 'settle':
      return `settle (at most ${formatDuration(a.timeoutMs)})`;
    case 'expect':
      return 'expect';
  }
}

/** A value as users wrote it: strings bare, everything else as JSON. */
export function showValue(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined) return 'nothing';
  return JSON.stringify(v);
}

/** `subsets.a = 2` when it held, `subsets.a: expected 2, got 3 (hint)` when not; `error: the scale step failed: …` for a refused step. */
export function describeExpectation(e: ExpectationResult): string {
  if (e.ok) return `${e.path} = ${showValue(e.actual)}`;
  // A step that failed without `expectFailure`: say what failed and why.
  if (e.path === 'error' && e.expected === null) return `error: ${e.message ?? 'the step failed'}: ${showValue(e.actual)}`;
  return `${e.path}: expected ${showValue(e.expected)}, got ${showValue(e.actual)}${e.message === undefined ? '' : ` (${e.message})`}`;
}

/** Elapsed clock time as `+1m30s`, to the second (timers fire a millisecond late or so). */
export function showElapsed(ms: number): string {
  return `+${formatDuration(ms >= 1000 ? Math.round(ms / 1000) * 1000 : ms)}`;
}

/** Why a settle ended before the cluster settled, in words, naming what it still waited for (undefined when it ended settled). */
export function describeUnsettled(settled: SettleOutcome | undefined): string | undefined {
  if (settled === undefined || settled.quiescent) return undefined;
  const after = formatDuration(Math.round(settled.elapsedMs / 1000) * 1000);
  const waiting = settled.waitingFor === undefined || settled.waitingFor.length === 0 ? '' : `; still waiting for: ${settled.waitingFor.join('; ')}`;
  if (settled.spinning !== undefined) return `the settle stopped after ${after}: only "${settled.spinning}" kept firing (at least every 100 ms) and nothing changed (e.g. a Deployment past its progress deadline with a pod that never becomes available)${waiting}`;
  if (settled.idle === true) return `nothing was left to run after ${after}, but the cluster did not settle${waiting}`;
  return `the cluster did not settle within the timeout (${after})${waiting}`;
}
