/**
 * The `expect:` step: what a scenario asserts about the cluster, read from
 * YAML into `ExpectSpec` — an ordered list of checks (results come out in
 * the order the user wrote them) about one WorkloadSpread and its target.
 *
 * Checks (issue 6 §2 plus the pod-field and node-label checks):
 *   subsets     {subset: n}              active pods per subset (marker annotation)
 *   unassigned  n                        active pods of the target without a subset of this WorkloadSpread
 *   pods        n                        active pods of the target
 *   ready       n                        active pods of the target that are Ready
 *   costs       {subset: [c, …]}         sorted distinct deletion costs (null: no annotation)
 *   status      {subset: {field: v}}     fields of the top-level subset status
 *   conditions  {subset: {type: status}} subset conditions ("True"/"False"; null: absent)
 *   events      [{reason, type, message, object, count}]   events since the previous expect
 *   podFields   [{subset, field, value}] a field (kubectl JSONPath) of every active pod of the subset
 *   nodeLabels  {label: {value: n}}      active pods per value of a label of their node
 *   rebalance   {pending, moves, reason} status.rebalance (D18): pods out of place, moves in
 *                                        flight, the reason (null: rebalancing off)
 *   budgets, refusedEvictions            disruption budgets and refused evictions
 *                                        (budget-expectations.ts; need no WorkloadSpread)
 * `workloadSpread: [namespace/]name` picks the WorkloadSpread when the
 * scenario has several. Only the keys given are checked.
 *
 * Extending (e.g. disruption budgets): one more `ExpectCheck` variant, its
 * reader in `READERS` and its evaluator in evaluate.ts. Pure.
 */
import { parseJsonPath, relaxedJsonPath } from '../k8s/jsonpath.ts';
import { BUDGET_CHECK_READERS, isBudgetCheck, type BudgetCheck } from './budget-expectations.ts';
import { child, describeType, item, readList, readMapping, readNonNegativeInt, readString, rejectUnknownKeys, type Problems } from './field-reader.ts';

export interface WorkloadSpreadRef {
  namespace: string;
  name: string;
}

export interface EventMatcher {
  reason?: string;
  type?: string;
  /** A part of the message. */
  message?: string;
  /** `Kind` or `Kind/name` of the object the event is about. */
  object?: string;
  /** Exactly this many matching events (default: at least one). */
  count?: number;
}

export interface PodFieldCheck {
  /** Default: every active pod of the target. */
  subset?: string;
  /** As written (`spec.containers[0].resources.limits.cpu`). */
  field: string;
  /** The kubectl JSONPath template it became (`{.spec.containers[0]…}`). */
  template: string;
  value: unknown;
}

export type ExpectCheck =
  | { check: 'subsets'; counts: Record<string, number> }
  | { check: 'unassigned' | 'pods' | 'ready'; count: number }
  | { check: 'costs'; costs: Record<string, (number | null)[]> }
  | { check: 'status'; fields: Record<string, Record<string, unknown>> }
  | { check: 'conditions'; conditions: Record<string, Record<string, string | null>> }
  | { check: 'events'; events: EventMatcher[] }
  | { check: 'podFields'; fields: PodFieldCheck[] }
  | { check: 'nodeLabels'; labels: Record<string, Record<string, number>> }
  | { check: 'rebalance'; rebalance: RebalanceCheck }
  | BudgetCheck;

/** D18: what `status.rebalance` must say; only the keys given are checked. */
export interface RebalanceCheck {
  pending?: number;
  /** Moves in flight. */
  moves?: number;
  /** The reason; null: no `status.rebalance` at all (rebalancing off). */
  reason?: string | null;
}

export type CheckName = ExpectCheck['check'];

export interface ExpectSpec {
  /** The WorkloadSpread the checks are about (undefined when no check needs one, e.g. only events). */
  workloadSpread?: WorkloadSpreadRef;
  checks: ExpectCheck[];
}

type Reader = (value: unknown, path: string, problems: Problems) => ExpectCheck | undefined;

function countMap(value: unknown, path: string, problems: Problems): Record<string, number> | undefined {
  const map = readMapping(value, path, problems);
  if (map === undefined) return undefined;
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(map)) {
    const n = readNonNegativeInt(v, child(path, k), problems);
    if (n !== undefined) out[k] = n;
  }
  return out;
}

/** Condition statuses: "True"/"False"/"Unknown", YAML booleans as True/False, null for "absent". */
function conditionStatus(value: unknown, path: string, problems: Problems): string | null | undefined {
  if (value === null) return null;
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (value === 'True' || value === 'False' || value === 'Unknown') return value;
  problems.add(path, `must be "True", "False", "Unknown" or null (absent), not ${describeType(value)}`);
  return undefined;
}

function readEventMatcher(value: unknown, path: string, problems: Problems): EventMatcher | undefined {
  const map = readMapping(value, path, problems);
  if (map === undefined) return undefined;
  rejectUnknownKeys(map, ['reason', 'type', 'message', 'object', 'count'], path, problems);
  const m: EventMatcher = {};
  for (const key of ['reason', 'message', 'object'] as const) {
    if (map[key] === undefined) continue;
    const s = readString(map[key], child(path, key), problems);
    if (s !== undefined) m[key] = s;
  }
  if (map['type'] !== undefined) {
    if (map['type'] === 'Normal' || map['type'] === 'Warning') m.type = map['type'];
    else problems.add(child(path, 'type'), `must be Normal or Warning, not ${describeType(map['type'])}`);
  }
  if (map['count'] !== undefined) {
    const n = readNonNegativeInt(map['count'], child(path, 'count'), problems);
    if (n !== undefined) m.count = n;
  }
  if (m.reason === undefined && m.type === undefined && m.message === undefined && m.object === undefined) problems.add(path, 'needs at least one of reason, type, message, object');
  return m;
}

function readPodField(value: unknown, path: string, problems: Problems): PodFieldCheck | undefined {
  const map = readMapping(value, path, problems);
  if (map === undefined) return undefined;
  rejectUnknownKeys(map, ['subset', 'field', 'value'], path, problems);
  const field = readString(map['field'], child(path, 'field'), problems);
  let template: string | undefined;
  if (field !== undefined) {
    const relaxed = relaxedJsonPath(field);
    const parsed = relaxed.ok ? parseJsonPath(relaxed.template) : relaxed;
    if (!parsed.ok) problems.add(child(path, 'field'), `not a JSONPath: ${parsed.error}`);
    else if (relaxed.ok) template = relaxed.template;
  }
  if (!Object.hasOwn(map, 'value')) problems.add(child(path, 'value'), 'required');
  const subset = map['subset'] === undefined ? undefined : readString(map['subset'], child(path, 'subset'), problems);
  if (field === undefined || template === undefined || !Object.hasOwn(map, 'value')) return undefined;
  const check: PodFieldCheck = { field, template, value: map['value'] };
  if (subset !== undefined) check.subset = subset;
  return check;
}

const READERS: Readonly<Record<CheckName, Reader>> = {
  subsets: (value, path, problems) => {
    const counts = countMap(value, path, problems);
    return counts === undefined ? undefined : { check: 'subsets', counts };
  },
  unassigned: (value, path, problems) => {
    const count = readNonNegativeInt(value, path, problems);
    return count === undefined ? undefined : { check: 'unassigned', count };
  },
  pods: (value, path, problems) => {
    const count = readNonNegativeInt(value, path, problems);
    return count === undefined ? undefined : { check: 'pods', count };
  },
  ready: (value, path, problems) => {
    const count = readNonNegativeInt(value, path, problems);
    return count === undefined ? undefined : { check: 'ready', count };
  },
  costs: (value, path, problems) => {
    const map = readMapping(value, path, problems);
    if (map === undefined) return undefined;
    const costs: Record<string, (number | null)[]> = {};
    for (const [subset, v] of Object.entries(map)) {
      const list = readList(v, child(path, subset), problems);
      if (list === undefined) continue;
      const values: (number | null)[] = [];
      list.forEach((c, i) => {
        if (c === null || (typeof c === 'number' && Number.isSafeInteger(c))) values.push(c);
        else problems.add(item(child(path, subset), i), `must be an integer deletion cost (or null: no annotation), not ${describeType(c)}`);
      });
      costs[subset] = values;
    }
    return { check: 'costs', costs };
  },
  status: (value, path, problems) => {
    const map = readMapping(value, path, problems);
    if (map === undefined) return undefined;
    const fields: Record<string, Record<string, unknown>> = {};
    for (const [subset, v] of Object.entries(map)) {
      const f = readMapping(v, child(path, subset), problems);
      if (f !== undefined) fields[subset] = f;
    }
    return { check: 'status', fields };
  },
  conditions: (value, path, problems) => {
    const map = readMapping(value, path, problems);
    if (map === undefined) return undefined;
    const conditions: Record<string, Record<string, string | null>> = {};
    for (const [subset, v] of Object.entries(map)) {
      const types = readMapping(v, child(path, subset), problems);
      if (types === undefined) continue;
      const out: Record<string, string | null> = {};
      for (const [type, status] of Object.entries(types)) {
        const s = conditionStatus(status, child(child(path, subset), type), problems);
        if (s !== undefined) out[type] = s;
      }
      conditions[subset] = out;
    }
    return { check: 'conditions', conditions };
  },
  events: (value, path, problems) => {
    const list = readList(value, path, problems);
    if (list === undefined) return undefined;
    const events: EventMatcher[] = [];
    list.forEach((v, i) => {
      const m = readEventMatcher(v, item(path, i), problems);
      if (m !== undefined) events.push(m);
    });
    return { check: 'events', events };
  },
  podFields: (value, path, problems) => {
    const list = readList(value, path, problems);
    if (list === undefined) return undefined;
    const fields: PodFieldCheck[] = [];
    list.forEach((v, i) => {
      const f = readPodField(v, item(path, i), problems);
      if (f !== undefined) fields.push(f);
    });
    return { check: 'podFields', fields };
  },
  nodeLabels: (value, path, problems) => {
    const map = readMapping(value, path, problems);
    if (map === undefined) return undefined;
    const labels: Record<string, Record<string, number>> = {};
    for (const [label, v] of Object.entries(map)) {
      const counts = countMap(v, child(path, label), problems);
      if (counts !== undefined) labels[label] = counts;
    }
    return { check: 'nodeLabels', labels };
  },
  rebalance: (value, path, problems) => {
    const map = readMapping(value, path, problems);
    if (map === undefined) return undefined;
    rejectUnknownKeys(map, ['pending', 'moves', 'reason'], path, problems);
    const rebalance: RebalanceCheck = {};
    for (const key of ['pending', 'moves'] as const) {
      if (map[key] === undefined) continue;
      const n = readNonNegativeInt(map[key], child(path, key), problems);
      if (n !== undefined) rebalance[key] = n;
    }
    if (map['reason'] === null) rebalance.reason = null;
    else if (map['reason'] !== undefined) {
      const reason = readString(map['reason'], child(path, 'reason'), problems);
      if (reason !== undefined) rebalance.reason = reason;
    }
    if (Object.keys(map).length === 0) problems.add(path, 'needs at least one of pending, moves, reason');
    return { check: 'rebalance', rebalance };
  },
  ...BUDGET_CHECK_READERS,
};

export const CHECK_NAMES = Object.keys(READERS) as CheckName[];

/** Checks that are about a WorkloadSpread and its target (all but events and the budget checks). */
const needsWorkloadSpread = (c: ExpectCheck): boolean => c.check !== 'events' && !isBudgetCheck(c);

/**
 * Reads an `expect:` mapping. `readWorkloadSpread` resolves the
 * `workloadSpread` key (undefined: the scenario's only one) and reports
 * problems itself.
 */
export function parseExpectations(
  value: unknown,
  path: string,
  problems: Problems,
  readWorkloadSpread: (value: unknown, path: string) => WorkloadSpreadRef | undefined,
): ExpectSpec | undefined {
  const map = readMapping(value, path, problems);
  if (map === undefined) return undefined;
  rejectUnknownKeys(map, ['workloadSpread', ...CHECK_NAMES], path, problems);
  const checks: ExpectCheck[] = [];
  for (const [key, v] of Object.entries(map)) {
    const reader = (READERS as Record<string, Reader | undefined>)[key];
    if (reader === undefined) continue;
    const check = reader(v, child(path, key), problems);
    if (check !== undefined) checks.push(check);
  }
  if (Object.keys(map).length === 0) problems.add(path, `needs at least one check: ${CHECK_NAMES.join(', ')}`);
  const spec: ExpectSpec = { checks };
  if (map['workloadSpread'] !== undefined || checks.some(needsWorkloadSpread)) {
    const ws = readWorkloadSpread(map['workloadSpread'], child(path, 'workloadSpread'));
    if (ws !== undefined) spec.workloadSpread = ws;
  }
  return spec;
}
