/**
 * Label selectors as k8s.io/apimachinery interprets them: the structured
 * `metav1.LabelSelector` (LabelSelectorAsSelector), the `?labelSelector=`
 * string syntax (labels.Parse) and its canonical String() form, plus field
 * selectors (fields.ParseSelector) since both travel as list query parameters.
 *
 * Invariants: a nil structured selector selects nothing, `{}` selects
 * everything; requirements are ANDed and kept sorted by key (stable), which is
 * also the order String() prints them in (used for `status.selector`).
 * Errors are returned as data, with upstream's message texts.
 * Start with `labelSelectorAsSelector` and `parseSelector`.
 */
import type { LabelSelector } from './types.ts';
import { isPlainObject } from './json.ts';
import {
  EVERYTHING,
  NOTHING,
  goQuote,
  newRequirement,
  selectorFromRequirements,
  type Requirement,
  type SelectorOperator,
  type SelectorResult,
} from './label-requirement.ts';

export {
  EVERYTHING,
  NOTHING,
  aggregateErrors,
  newRequirement,
  requirementMatches,
  requirementToString,
  selectorFromRequirements,
  selectorFromSet,
  type Requirement,
  type RequirementResult,
  type Selector,
  type SelectorOperator,
  type SelectorResult,
} from './label-requirement.ts';

// ---------------------------------------------------------------------------
// metav1.LabelSelectorAsSelector

const OPERATOR_OF = new Map<unknown, SelectorOperator>([
  ['In', 'in'],
  ['NotIn', 'notin'],
  ['Exists', 'exists'],
  ['DoesNotExist', '!'],
]);

/** metav1.LabelSelectorAsSelector: nil → nothing, no requirements → everything, else the AND of all. */
export function labelSelectorAsSelector(sel: LabelSelector | undefined | null): SelectorResult {
  if (sel === undefined || sel === null) return { ok: true, selector: NOTHING };
  if (!isPlainObject(sel)) return { ok: false, error: 'invalid label selector: not an object' };
  const matchLabels: unknown = sel.matchLabels ?? {};
  const matchExpressions: unknown = sel.matchExpressions ?? [];
  if (!isPlainObject(matchLabels)) return { ok: false, error: 'invalid label selector: matchLabels must be an object' };
  if (!Array.isArray(matchExpressions)) return { ok: false, error: 'invalid label selector: matchExpressions must be a list' };
  const labelKeys = Object.keys(matchLabels).sort();
  if (labelKeys.length + matchExpressions.length === 0) return { ok: true, selector: EVERYTHING };

  const reqs: Requirement[] = [];
  for (const k of labelKeys) {
    const v = matchLabels[k];
    if (typeof v !== 'string') return { ok: false, error: `invalid label selector: matchLabels[${k}] must be a string` };
    const r = newRequirement(k, '=', [v]);
    if (!r.ok) return r;
    reqs.push(r.requirement);
  }
  for (const expr of matchExpressions as unknown[]) {
    if (!isPlainObject(expr)) return { ok: false, error: 'invalid label selector: a match expression must be an object' };
    const op = OPERATOR_OF.get(expr.operator);
    if (op === undefined) return { ok: false, error: `${goQuote(String(expr.operator ?? ''))} is not a valid label selector operator` };
    const values = stringList(expr.values);
    if (values === 'invalid') return { ok: false, error: 'invalid label selector: values must be a list of strings' };
    // Upstream copies the values with append([]string(nil), ...): an empty list becomes nil.
    const r = newRequirement(typeof expr.key === 'string' ? expr.key : '', op, values !== undefined && values.length > 0 ? values : undefined);
    if (!r.ok) return r;
    reqs.push(r.requirement);
  }
  return { ok: true, selector: selectorFromRequirements(reqs) };
}

function stringList(v: unknown): string[] | undefined | 'invalid' {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) return 'invalid';
  return v as string[];
}

/** Whether `labels` match the structured selector; an invalid (or nil) selector matches nothing. */
export function labelsMatch(selector: LabelSelector | undefined, labels: Record<string, string> | undefined): boolean {
  const r = labelSelectorAsSelector(selector);
  return r.ok && r.selector.matches(labels);
}

/** The canonical string of a structured selector, as `status.selector` carries it ('' when invalid). */
export function selectorToString(sel: LabelSelector | undefined | null): string {
  const r = labelSelectorAsSelector(sel);
  return r.ok ? r.selector.toString() : '';
}

/** metav1.FormatLabelSelector, for display: "<error>" when invalid, "<none>" when it prints empty. */
export function formatLabelSelector(sel: LabelSelector | undefined | null): string {
  const r = labelSelectorAsSelector(sel);
  if (!r.ok) return '<error>';
  const s = r.selector.toString();
  return s === '' ? '<none>' : s;
}

export { parseSelector } from './label-selector-parse.ts';
export { parseFieldSelector, fieldSelectorMatches, type FieldRequirement } from './field-selector.ts';
