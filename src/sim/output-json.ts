/**
 * `simulate --output json`: JSON Lines. The first line is the setup record
 * (`"step":"setup"`, `"action":"setup"`): the cluster once the scenario's
 * objects were applied and settled, with the events recorded meanwhile; it
 * has the keys of a step (its `expectations` are empty). Then one object per step, with exactly
 * the keys of issue 6 first and in its order —
 *   step, action, time, pods[{name, subset, node, phase, ready, deletionCost}],
 *   workloadSpreads[{namespace, name, status}], events[{reason, type, message}],
 *   expectations[{ok, path, expected, actual}]
 * — followed by extra keys (summary, elapsedMs, description, error, notes,
 * settled; per pod its namespace and WorkloadSpread; per event its object,
 * namespace, count and reporting controller; `budgets` — every disruption
 * budget with its domains — and, for drain and evict steps, `evictions`;
 * on the setup record, `raceSeed` under `--race-seed`).
 * Users script against this:
 * keys are only ever added. Pure.
 */
import type { Snapshot, StepResult } from './runner.ts';

/** The JSON object of one step (or of the setup), keys in the documented order. */
export function stepJson(s: StepResult | SetupRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {
    step: s.step,
    action: s.action,
    time: s.time,
    pods: s.pods.map((p) => ({ name: p.name, subset: p.subset, node: p.node, phase: p.phase, ready: p.ready, deletionCost: p.deletionCost, namespace: p.namespace, workloadSpread: p.workloadSpread })),
    workloadSpreads: s.workloadSpreads.map((w) => ({ namespace: w.namespace, name: w.name, status: w.status, target: w.target, replicas: w.replicas, subsets: w.subsets })),
    events: s.events.map((e) => ({ reason: e.reason, type: e.type, message: e.message, object: e.object, namespace: e.namespace, count: e.count, reportingController: e.reportingController })),
    expectations: s.expectations.map((e) => ({ ok: e.ok, path: e.path, expected: e.expected ?? null, actual: e.actual ?? null, ...(e.message === undefined ? {} : { message: e.message }) })),
    summary: s.summary,
    elapsedMs: s.elapsedMs,
  };
  if (s.description !== undefined) out['description'] = s.description;
  if (s.error !== undefined) out['error'] = s.error;
  if (s.notes !== undefined) out['notes'] = s.notes;
  if (s.settled !== undefined) out['settled'] = s.settled;
  out['budgets'] = s.budgets.map((b) => ({ kind: b.kind, namespace: b.namespace, name: b.name, mode: b.mode, limit: b.limit, observed: b.observed, domains: b.domains }));
  if (s.evictions !== undefined) out['evictions'] = s.evictions;
  return out;
}

/** One line (with its newline) per step. */
export function jsonLine(s: StepResult): string {
  return `${JSON.stringify(stepJson(s))}\n`;
}

/** The setup as a step-shaped record. */
export interface SetupRecord extends Snapshot {
  step: 'setup';
  action: 'setup';
  summary: string;
  expectations: [];
  description?: undefined;
  error?: undefined;
  notes?: undefined;
  settled?: undefined;
  evictions?: undefined;
}

/** The first line: the cluster after the `objects` were applied (and the events they caused); `raceSeed` when the run is in race mode. */
export function setupJsonLine(setup: Snapshot, objects: number, raceSeed?: number): string {
  const record: SetupRecord = { ...setup, step: 'setup', action: 'setup', summary: `apply ${objects} object${objects === 1 ? '' : 's'} and settle`, expectations: [] };
  return `${JSON.stringify({ ...stepJson(record), ...(raceSeed === undefined ? {} : { raceSeed }) })}\n`;
}
