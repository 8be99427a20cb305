/**
 * Label selector requirements and the selector they form, with the semantics
 * of k8s.io/apimachinery/pkg/labels: NewRequirement's validation (and its
 * error texts), Requirement.Matches, the canonical String() form, and
 * internalSelector (an AND of requirements kept sorted by key).
 * The structured and string front ends live in label-selector.ts and
 * label-selector-parse.ts; both build on this module.
 */
import { isLabelKey, isLabelValue, parseInt64 } from './validation.ts';

/** Operators as `k8s.io/apimachinery/pkg/selection` spells them. */
export type SelectorOperator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

export interface Requirement {
  readonly key: string;
  readonly operator: SelectorOperator;
  readonly values: readonly string[];
}

export interface Selector {
  matches(labels: Record<string, string> | undefined): boolean;
  /** True when the selector does not restrict anything (selects everything). */
  readonly empty: boolean;
  /** True only for the select-nothing selector (a nil structured selector). */
  readonly matchesNothing: boolean;
  /** The ANDed requirements, sorted by key; empty for both everything and nothing. */
  readonly requirements: readonly Requirement[];
  toString(): string;
}

export type SelectorResult = { ok: true; selector: Selector } | { ok: false; error: string };
export type RequirementResult = { ok: true; requirement: Requirement } | { ok: false; error: string };

const BINARY_OPERATORS: SelectorOperator[] = ['in', 'notin', '=', '==', '!=', 'gt', 'lt'];
const VALID_OPERATORS: SelectorOperator[] = [...BINARY_OPERATORS, 'exists', '!'];

// ---------------------------------------------------------------------------
// Field paths and error texts (k8s.io/apimachinery/pkg/util/validation/field).
// A path of `undefined` is Go's nil *field.Path, which prints as "<nil>".

export type FieldPath = string | undefined;
const child = (p: FieldPath, name: string): string => (p === undefined || p === '' ? name : `${p}.${name}`);
const index = (p: FieldPath, i: number): string => `${p ?? ''}[${i}]`;
const mapKey = (p: FieldPath, k: string): string => `${p ?? ''}[${k}]`;
const pathString = (p: FieldPath): string => p ?? '<nil>';

/** Go's %q for a string (JSON quoting differs only for rare control characters). */
export const goQuote = (s: string): string => JSON.stringify(s);

function goStringSlice(values: readonly string[] | undefined): string {
  if (values === undefined) return '[]string(nil)';
  return `[]string{${values.map(goQuote).join(', ')}}`;
}

function invalid(p: FieldPath, shown: string, detail: string): string {
  return `${pathString(p)}: Invalid value: ${shown}: ${detail}`;
}

/** utilerrors.NewAggregate(...).Error(): one message as is, several de-duplicated in brackets. */
export function aggregateErrors(messages: readonly string[]): string {
  const unique = [...new Set(messages)];
  if (unique.length === 1) return unique[0] ?? '';
  return `[${unique.join(', ')}]`;
}

// ---------------------------------------------------------------------------
// Requirements

/**
 * labels.NewRequirement: validates key, operator arity and values and returns
 * every problem at once. `values === undefined` stands for a nil slice (it
 * only changes how an error prints the value).
 */
export function newRequirement(
  key: string,
  operator: string,
  values: readonly string[] | undefined,
  path?: FieldPath,
): RequirementResult {
  const errs: string[] = [];
  const keyErrs = isLabelKey(key);
  if (keyErrs.length > 0) errs.push(invalid(child(path, 'key'), goQuote(key), keyErrs.join('; ')));
  const vals = values ?? [];
  const valuesPath = child(path, 'values');
  switch (operator) {
    case 'in':
    case 'notin':
      if (vals.length === 0) errs.push(invalid(valuesPath, goStringSlice(values), "for 'in', 'notin' operators, values set can't be empty"));
      break;
    case '=':
    case '==':
    case '!=':
      if (vals.length !== 1) errs.push(invalid(valuesPath, goStringSlice(values), 'exact-match compatibility requires one single value'));
      break;
    case 'exists':
    case '!':
      if (vals.length !== 0) errs.push(invalid(valuesPath, goStringSlice(values), 'values set must be empty for exists and does not exist'));
      break;
    case 'gt':
    case 'lt':
      if (vals.length !== 1) errs.push(invalid(valuesPath, goStringSlice(values), "for 'Gt', 'Lt' operators, exactly one value is required"));
      vals.forEach((v, i) => {
        if (parseInt64(v) === undefined) errs.push(invalid(index(valuesPath, i), goQuote(v), "for 'Gt', 'Lt' operators, the value must be an integer"));
      });
      break;
    default:
      errs.push(
        `${child(path, 'operator')}: Unsupported value: ${goQuote(operator)}: supported values: ${VALID_OPERATORS.map(goQuote).join(', ')}`,
      );
  }
  vals.forEach((v, i) => {
    const valueErrs = isLabelValue(v);
    if (valueErrs.length > 0) errs.push(invalid(mapKey(index(valuesPath, i), key), goQuote(v), valueErrs.join('; ')));
  });
  if (errs.length > 0) return { ok: false, error: aggregateErrors(errs) };
  return { ok: true, requirement: { key, operator: operator as SelectorOperator, values: [...vals] } };
}

function lookup(labels: Record<string, string> | undefined, key: string): string | undefined {
  if (labels === undefined || labels === null || typeof labels !== 'object') return undefined;
  if (!Object.prototype.hasOwnProperty.call(labels, key)) return undefined;
  const v: unknown = labels[key];
  // A non-string label value cannot come off the wire; treat it as absent rather than guess.
  return typeof v === 'string' ? v : undefined;
}

/** Requirement.Matches: NotIn and != also match when the label is absent; Gt/Lt compare int64s. */
export function requirementMatches(r: Requirement, labels: Record<string, string> | undefined): boolean {
  const value = lookup(labels, r.key);
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return value !== undefined && r.values.includes(value);
    case 'notin':
    case '!=':
      return value === undefined || !r.values.includes(value);
    case 'exists':
      return value !== undefined;
    case '!':
      return value === undefined;
    case 'gt':
    case 'lt': {
      if (value === undefined || r.values.length !== 1) return false;
      const have = parseInt64(value);
      const want = parseInt64(r.values[0] ?? '');
      if (have === undefined || want === undefined) return false;
      return r.operator === 'gt' ? have > want : have < want;
    }
    default:
      return false;
  }
}

const SYMBOL: Record<SelectorOperator, string> = {
  '=': '=',
  '==': '==',
  '!=': '!=',
  in: ' in ',
  notin: ' notin ',
  gt: '>',
  lt: '<',
  exists: '',
  '!': '',
};

/** Requirement.String(): values of a multi-valued requirement print sorted. */
export function requirementToString(r: Requirement): string {
  const head = `${r.operator === '!' ? '!' : ''}${r.key}`;
  if (r.operator === 'exists' || r.operator === '!') return head;
  const values = r.values.length === 1 ? (r.values[0] ?? '') : [...r.values].sort().join(',');
  const body = r.operator === 'in' || r.operator === 'notin' ? `(${values})` : values;
  return `${head}${SYMBOL[r.operator]}${body}`;
}

function sortByKey(reqs: readonly Requirement[]): Requirement[] {
  // Upstream sorts by key only; a stable sort keeps same-key requirements in the order given.
  return [...reqs].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** A selector ANDing `reqs` (sorted by key, like internalSelector.Add). No requirements = everything. */
export function selectorFromRequirements(reqs: readonly Requirement[]): Selector {
  const sorted = sortByKey(reqs);
  return {
    matches: (labels) => sorted.every((r) => requirementMatches(r, labels)),
    empty: sorted.length === 0,
    matchesNothing: false,
    requirements: sorted,
    toString: () => sorted.map(requirementToString).join(','),
  };
}

export const EVERYTHING: Selector = selectorFromRequirements([]);
export const NOTHING: Selector = {
  matches: () => false,
  empty: false,
  matchesNothing: true,
  requirements: [],
  toString: () => '',
};

/** labels.SelectorFromSet: equality on every entry, without validation; empty set = everything. */
export function selectorFromSet(set: Record<string, string> | undefined): Selector {
  if (set === undefined || set === null) return EVERYTHING;
  return selectorFromRequirements(Object.keys(set).map((k) => ({ key: k, operator: '=' as const, values: [String(set[k])] })));
}

