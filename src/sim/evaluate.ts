/**
 * Checking an `expect:` step against what the simulator observed: one
 * `ExpectationResult` per value checked, with a path naming it
 * (`subsets.subset-a`, `status.subset-a.missingReplicas`, `events[0]`),
 * the expected and the actual value, in the order the scenario wrote them.
 * Pure; the checks are described in expectations.ts.
 */
import type { SubsetStatus } from '../api/workloadspread.ts';
import { deepEqual, isPlainObject } from '../k8s/json.ts';
import { findResults, parseJsonPath } from '../k8s/jsonpath.ts';
import type { Node, Pod } from '../k8s/types.ts';
import { evaluateBudgetCheck } from './budget-expectations.ts';
import type { BudgetRecord } from '../core/budget-records.ts';
import type { EvictionRecord } from './drain.ts';
import type { EventMatcher, ExpectCheck, ExpectSpec } from './expectations.ts';
import { child, item } from './field-reader.ts';
import type { EventRecord, PodRecord, WorkloadSpreadRecord } from './observation.ts';

export interface ExpectationResult {
  ok: boolean;
  /** What was checked: `subsets.subset-a`, `costs.subset-b`, `events[0]`. */
  path: string;
  expected: unknown;
  actual: unknown;
  /** A hint when expected and actual alone do not explain the failure. */
  message?: string;
}

export interface EvaluationInput {
  spec: ExpectSpec;
  /** Active pods of every WorkloadSpread target, with the raw pods in the same order. */
  pods: readonly PodRecord[];
  rawPods: readonly Pod[];
  workloadSpreads: readonly WorkloadSpreadRecord[];
  /** Events recorded since the previous expect step. */
  events: readonly EventRecord[];
  nodes: readonly Node[];
  /** Budgets after the step (budgets checks). */
  budgets?: readonly BudgetRecord[];
  /** Evictions of the steps since the previous expect (refusedEvictions checks). */
  evictions?: readonly EvictionRecord[];
}

interface Scope {
  pods: { record: PodRecord; raw: Pod | undefined }[];
  ws: WorkloadSpreadRecord | undefined;
  input: EvaluationInput;
}

const result = (path: string, expected: unknown, actual: unknown, ok = deepEqual(expected, actual)): ExpectationResult => ({ ok, path, expected, actual });

/** Scalars compare by their text (a quantity `1` in YAML equals the pod's `"1"`); lists and maps compare deeply. */
function sameValue(expected: unknown, actual: unknown): boolean {
  const scalar = (v: unknown) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
  if (scalar(expected) && scalar(actual)) return String(expected) === String(actual);
  return deepEqual(expected, actual);
}

function distinctCosts(pods: readonly PodRecord[]): (number | null)[] {
  const values = [...new Set(pods.map((p) => p.deletionCost))];
  return values.sort((a, b) => (a === null ? -1 : b === null ? 1 : a - b));
}

function statusField(status: SubsetStatus | undefined, field: string, expected: unknown): unknown {
  if (status === undefined) return null;
  const value = (status as unknown as Record<string, unknown>)[field];
  // `creatingPods: 0` counts the entries of a map.
  if (typeof expected === 'number' && (isPlainObject(value) || value === undefined) && (field === 'creatingPods' || field === 'deletingPods')) return Object.keys(value ?? {}).length;
  return value ?? null;
}

function matchesEvent(m: EventMatcher, e: EventRecord): boolean {
  if (m.reason !== undefined && m.reason !== e.reason) return false;
  if (m.type !== undefined && m.type !== e.type) return false;
  if (m.message !== undefined && !e.message.includes(m.message)) return false;
  if (m.object !== undefined) {
    const want = m.object.includes('/') ? e.object : e.object.slice(0, e.object.indexOf('/'));
    if (want !== m.object) return false;
  }
  return true;
}

function podFieldValues(template: string, pods: readonly (Pod | undefined)[]): unknown[] {
  const parsed = parseJsonPath(template);
  if (!parsed.ok) return [];
  return pods.map((pod) => {
    const found = findResults(parsed.path, pod ?? {}, { allowMissingKeys: true });
    const first = found.ok ? found.results[0] : undefined;
    if (first === undefined || first.length === 0) return null;
    return first.length === 1 ? first[0] : first;
  });
}

function evaluateCheck(check: ExpectCheck, scope: Scope): ExpectationResult[] {
  const { pods, ws, input } = scope;
  const inSubset = (subset: string) => pods.filter((p) => p.record.subset === subset);
  switch (check.check) {
    case 'subsets':
      return Object.entries(check.counts).map(([s, n]) => result(child('subsets', s), n, inSubset(s).length));
    case 'unassigned':
      return [result('unassigned', check.count, pods.filter((p) => p.record.subset === null).length)];
    case 'pods':
      return [result('pods', check.count, pods.length)];
    case 'ready':
      return [result('ready', check.count, pods.filter((p) => p.record.ready).length)];
    case 'costs':
      return Object.entries(check.costs).map(([s, costs]) => {
        const want = [...new Set(costs)].sort((a, b) => (a === null ? -1 : b === null ? 1 : a - b));
        return result(child('costs', s), want, distinctCosts(inSubset(s).map((p) => p.record)));
      });
    case 'status':
      return Object.entries(check.fields).flatMap(([s, fields]) => {
        const status = (ws?.status.subsetStatuses ?? []).find((x) => x.name === s);
        return Object.entries(fields).map(([field, expected]) => {
          const r = result(child(child('status', s), field), expected, statusField(status, field, expected));
          if (status === undefined) r.message = `the WorkloadSpread has no status for subset ${s} yet`;
          return r;
        });
      });
    case 'conditions':
      return Object.entries(check.conditions).flatMap(([s, types]) => {
        const status = (ws?.status.subsetStatuses ?? []).find((x) => x.name === s);
        return Object.entries(types).map(([type, expected]) => {
          const condition = (status?.conditions ?? []).find((c) => c.type === type);
          return result(child(child('conditions', s), type), expected, condition?.status ?? null);
        });
      });
    case 'rebalance': {
      const stored = ws !== undefined && 'rebalance' in ws.status ? ws.status.rebalance : undefined;
      const out: ExpectationResult[] = [];
      const r = check.rebalance;
      const off = stored === undefined ? 'the WorkloadSpread has no status.rebalance (rebalancing off, or not looked at yet)' : undefined;
      const withHint = (e: ExpectationResult): ExpectationResult => {
        if (!e.ok && off !== undefined) e.message = off;
        else if (!e.ok && stored?.message !== undefined) e.message = `${stored.reason ?? ''}: ${stored.message}`;
        return e;
      };
      if (r.pending !== undefined) out.push(withHint(result('rebalance.pending', r.pending, stored?.pending ?? null)));
      if (r.moves !== undefined) out.push(withHint(result('rebalance.moves', r.moves, stored === undefined ? null : (stored.moves ?? []).length)));
      if (r.reason !== undefined) out.push(withHint(result('rebalance.reason', r.reason, stored === undefined ? null : (stored.reason ?? null))));
      return out;
    }
    case 'events':
      return check.events.map((m, i) => {
        const matching = input.events.filter((e) => matchesEvent(m, e));
        const total = matching.reduce((sum, e) => sum + e.count, 0);
        const { count, ...what } = m;
        const r = result(item('events', i), count === undefined ? { ...what, count: '>=1' } : m, count === undefined ? { ...what, count: total } : { ...what, count: total }, count === undefined ? total >= 1 : total === count);
        if (!r.ok) {
          const seen = [...new Set(input.events.map((e) => e.reason))];
          r.message = `events since the previous expect: ${seen.length === 0 ? 'none' : seen.join(', ')}`;
        }
        return r;
      });
    case 'podFields':
      return check.fields.map((f) => {
        const selected = f.subset === undefined ? pods : inSubset(f.subset);
        const path = `${f.subset === undefined ? 'podFields.*' : child('podFields', f.subset)}.${f.field.replace(/^\{?\.?|\}$/g, '')}`;
        if (selected.length === 0) return { ...result(path, f.value, null, false), message: f.subset === undefined ? 'no active pods' : `no active pods in subset ${f.subset}` };
        const values = podFieldValues(f.template, selected.map((p) => p.raw));
        const distinct = values.filter((v, i) => values.findIndex((w) => deepEqual(v, w)) === i);
        const ok = values.every((v) => sameValue(f.value, v));
        const r = result(path, f.value, distinct.length === 1 ? distinct[0] : distinct, ok);
        if (!ok) r.message = `${values.filter((v) => !sameValue(f.value, v)).length} of ${values.length} pods differ`;
        return r;
      });
    case 'budgets':
    case 'refusedEvictions':
      return evaluateBudgetCheck(check, input.budgets ?? [], input.evictions ?? []);
    case 'nodeLabels': {
      const labelsOf = new Map(input.nodes.map((n) => [n.metadata?.name ?? '', n.metadata?.labels ?? {}]));
      return Object.entries(check.labels).flatMap(([label, counts]) =>
        Object.entries(counts).map(([value, n]) => {
          const actual = pods.filter((p) => p.record.node !== null && labelsOf.get(p.record.node)?.[label] === value).length;
          return result(child(child('nodeLabels', label), value), n, actual);
        }),
      );
    }
  }
}

/** Evaluates every check of an expect step, in order. */
export function evaluateExpectations(input: EvaluationInput): ExpectationResult[] {
  const target = input.spec.workloadSpread;
  const wsKey = target === undefined ? undefined : `${target.namespace}/${target.name}`;
  const pods: Scope['pods'] = [];
  input.pods.forEach((record, i) => {
    if (record.workloadSpread === wsKey) pods.push({ record, raw: input.rawPods[i] });
  });
  const ws = input.workloadSpreads.find((w) => `${w.namespace}/${w.name}` === wsKey);
  const scope: Scope = { pods, ws, input };
  return input.spec.checks.flatMap((c) => evaluateCheck(c, scope));
}
