/**
 * Expectations about disruption budgets (issue 7), two checks of `expect:`:
 *
 *   budgets:            {budget: {domain: {field: n} | null}}
 *     a budget is `[namespace/]name` (a DomainDisruptionBudget, else a
 *     PodDisruptionBudget of that name, whose one domain is `all`); fields
 *     are expectedPods, currentHealthy, desiredHealthy, disruptionsAllowed
 *     and disruptedPods (how many evictions are awaited); `null` says the
 *     budget has no such domain (e.g. pods a nodeSelectorTerm leaves out).
 *   refusedEvictions:   n | {count, pods, budget, domain, evicted}
 *     about the evictions of the `drain` and `evict` steps since the
 *     previous expect: count = pods refused at least once (429), pods = their
 *     names, budget / domain = which budgets and domains refused (a name, or
 *     a list; `Kind/name` to tell a PDB from a DDB), evicted = pods whose
 *     eviction went through. A bare number is `{count: n}`.
 * Neither check needs a WorkloadSpread. Results are named like the others
 * (`budgets.app-ddb.b.disruptionsAllowed`, `refusedEvictions.count`). Pure.
 */
import { deepEqual } from '../k8s/json.ts';
import type { BudgetRecord } from '../core/budget-records.ts';
import { findBudget } from '../core/budget-records.ts';
import type { EvictionRecord } from './drain.ts';
import { child, describeType, readList, readMapping, readNonNegativeInt, readString, rejectUnknownKeys, type Problems } from './field-reader.ts';

export const DOMAIN_FIELDS = ['expectedPods', 'currentHealthy', 'desiredHealthy', 'disruptionsAllowed', 'disruptedPods'] as const;
export type DomainField = (typeof DOMAIN_FIELDS)[number];

export interface BudgetExpectation {
  /** As written (`app-ddb`, `team/app-ddb`). */
  key: string;
  namespace: string;
  name: string;
  /** null: the domain must not exist. */
  domains: Record<string, Partial<Record<DomainField, number>> | null>;
}

export interface RefusedEvictionsExpectation {
  count?: number;
  pods?: string[];
  budget?: string[];
  domain?: string[];
  evicted?: number;
}

export type BudgetCheck = { check: 'budgets'; budgets: BudgetExpectation[] } | ({ check: 'refusedEvictions' } & RefusedEvictionsExpectation);

export interface BudgetCheckResult {
  ok: boolean;
  path: string;
  expected: unknown;
  actual: unknown;
  message?: string;
}

/** `name`, or `namespace/name`. */
function budgetRef(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { namespace: 'default', name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

function readBudgets(value: unknown, path: string, problems: Problems): BudgetCheck | undefined {
  const map = readMapping(value, path, problems);
  if (map === undefined) return undefined;
  const budgets: BudgetExpectation[] = [];
  for (const [key, v] of Object.entries(map)) {
    const p = child(path, key);
    const domainsMap = readMapping(v, p, problems);
    if (domainsMap === undefined) continue;
    const domains: BudgetExpectation['domains'] = {};
    for (const [domain, fieldsValue] of Object.entries(domainsMap)) {
      const dp = child(p, domain);
      if (fieldsValue === null) {
        domains[domain] = null;
        continue;
      }
      const fields = readMapping(fieldsValue, dp, problems);
      if (fields === undefined) continue;
      rejectUnknownKeys(fields, DOMAIN_FIELDS, dp, problems);
      const out: Partial<Record<DomainField, number>> = {};
      for (const f of DOMAIN_FIELDS) {
        if (fields[f] === undefined) continue;
        const n = readNonNegativeInt(fields[f], child(dp, f), problems);
        if (n !== undefined) out[f] = n;
      }
      if (!DOMAIN_FIELDS.some((f) => fields[f] !== undefined)) problems.add(dp, `needs at least one of ${DOMAIN_FIELDS.join(', ')} (or null: no such domain)`);
      domains[domain] = out;
    }
    budgets.push({ key, ...budgetRef(key), domains });
  }
  return { check: 'budgets', budgets };
}

/** A name or a list of names. */
function readNames(value: unknown, path: string, problems: Problems): string[] | undefined {
  if (typeof value === 'string') return [readString(value, path, problems)].filter((s): s is string => s !== undefined);
  const list = readList(value, path, problems);
  if (list === undefined) return undefined;
  const out: string[] = [];
  list.forEach((v, i) => {
    const s = readString(v, `${path}[${i}]`, problems);
    if (s !== undefined) out.push(s);
  });
  return out;
}

function readRefusedEvictions(value: unknown, path: string, problems: Problems): BudgetCheck | undefined {
  if (typeof value === 'number') {
    const n = readNonNegativeInt(value, path, problems);
    return n === undefined ? undefined : { check: 'refusedEvictions', count: n };
  }
  const map = readMapping(value, path, problems);
  if (map === undefined) return undefined;
  const keys = ['count', 'pods', 'budget', 'domain', 'evicted'] as const;
  rejectUnknownKeys(map, keys, path, problems);
  if (!keys.some((k) => map[k] !== undefined)) {
    problems.add(path, `needs at least one of ${keys.join(', ')} (or a number: the count), not ${describeType(value)}`);
    return undefined;
  }
  const out: BudgetCheck = { check: 'refusedEvictions' };
  for (const k of ['count', 'evicted'] as const) {
    if (map[k] === undefined) continue;
    const n = readNonNegativeInt(map[k], child(path, k), problems);
    if (n !== undefined) out[k] = n;
  }
  for (const k of ['pods', 'budget', 'domain'] as const) {
    if (map[k] === undefined) continue;
    const names = readNames(map[k], child(path, k), problems);
    if (names !== undefined) out[k] = names;
  }
  return out;
}

export const BUDGET_CHECK_READERS: Readonly<Record<BudgetCheck['check'], (value: unknown, path: string, problems: Problems) => BudgetCheck | undefined>> = {
  budgets: readBudgets,
  refusedEvictions: readRefusedEvictions,
};

export const isBudgetCheck = (c: { check: string }): c is BudgetCheck => c.check === 'budgets' || c.check === 'refusedEvictions';

const result = (path: string, expected: unknown, actual: unknown, ok = deepEqual(expected, actual)): BudgetCheckResult => ({ ok, path, expected, actual });

const distinctSorted = (values: readonly string[]): string[] => [...new Set(values)].sort();

/** One name stays a string in results, several are a list (as the user wrote them). */
const shown = (names: string[], asWritten: string[]): string | string[] => (asWritten.length === 1 && names.length <= 1 ? (names[0] ?? '') : names);

function evaluateBudgets(check: Extract<BudgetCheck, { check: 'budgets' }>, budgets: readonly BudgetRecord[]): BudgetCheckResult[] {
  const out: BudgetCheckResult[] = [];
  for (const b of check.budgets) {
    const budget = findBudget(budgets, b);
    const base = child('budgets', b.key);
    for (const [domainName, fields] of Object.entries(b.domains)) {
      const dp = child(base, domainName);
      const domain = budget?.domains.find((d) => d.name === domainName);
      if (fields === null) {
        out.push({ ...result(dp, null, domain === undefined ? null : 'present', domain === undefined), ...(domain === undefined ? {} : { message: `the budget has domain ${domainName}` }) });
        continue;
      }
      for (const [field, expected] of Object.entries(fields)) {
        const raw = domain === undefined ? null : field === 'disruptedPods' ? domain.disruptedPods.length : domain[field as Exclude<DomainField, 'disruptedPods'>];
        const r = result(child(dp, field), expected, raw);
        if (budget === undefined) r.message = `no budget ${b.namespace}/${b.name}`;
        else if (domain === undefined) r.message = `${budget.kind} ${b.name} has ${budget.domains.length === 0 ? 'no domains (yet)' : `domains ${budget.domains.map((d) => d.name).join(', ')}`}`;
        else if (!budget.observed) r.message = 'the status is not computed for the current spec yet';
        out.push(r);
      }
    }
  }
  return out;
}

function evaluateRefusals(check: Extract<BudgetCheck, { check: 'refusedEvictions' }>, evictions: readonly EvictionRecord[]): BudgetCheckResult[] {
  const refused = evictions.filter((e) => e.refusals > 0);
  const out: BudgetCheckResult[] = [];
  const path = (k: string) => child('refusedEvictions', k);
  if (check.count !== undefined) out.push(result(path('count'), check.count, distinctSorted(refused.map((e) => `${e.namespace}/${e.pod}`)).length));
  if (check.pods !== undefined) out.push(result(path('pods'), distinctSorted(check.pods), distinctSorted(refused.map((e) => e.pod))));
  if (check.budget !== undefined) {
    const withKind = check.budget.some((b) => b.includes('/'));
    const actual = distinctSorted(refused.flatMap((e) => e.refusedBy.map((label) => (withKind ? label : label.slice(label.indexOf('/') + 1)))));
    const want = distinctSorted(check.budget);
    out.push(result(path('budget'), shown(want, check.budget), shown(actual, check.budget), deepEqual(want, actual)));
  }
  if (check.domain !== undefined) {
    const actual = distinctSorted(refused.flatMap((e) => e.refusedIn));
    const want = distinctSorted(check.domain);
    out.push(result(path('domain'), shown(want, check.domain), shown(actual, check.domain), deepEqual(want, actual)));
  }
  if (check.evicted !== undefined) out.push(result(path('evicted'), check.evicted, evictions.filter((e) => e.result === 'evicted').length));
  const failed = out.filter((r) => !r.ok);
  if (failed.length > 0) {
    const seen = refused.map((e) => `${e.pod} (${e.refusals}× by ${e.refusedBy.join(', ') || 'an unnamed budget'})`);
    for (const r of failed) r.message = refused.length === 0 ? `no eviction was refused (${evictions.length} attempted)` : `refused: ${seen.join(', ')}`;
  }
  return out;
}

/** Evaluates a budget check against the budgets after the step and the evictions since the previous expect. */
export function evaluateBudgetCheck(check: BudgetCheck, budgets: readonly BudgetRecord[], evictions: readonly EvictionRecord[]): BudgetCheckResult[] {
  return check.check === 'budgets' ? evaluateBudgets(check, budgets) : evaluateRefusals(check, evictions);
}
