/**
 * Node selectors and node affinity as the scheduler evaluates them
 * (k8s.io/component-helpers/scheduling/corev1/nodeaffinity).
 *
 * Invariants:
 * - a term with neither matchExpressions nor matchFields selects no node;
 *   terms are ORed, requirements inside a term ANDed; no terms → no node;
 * - a requirement that upstream's parser rejects (In/NotIn without values,
 *   Exists with values, Gt/Lt without exactly one int64 value, an invalid label
 *   key or value, an unknown operator) makes its term match nothing;
 * - NotIn and DoesNotExist match nodes without the label; Gt/Lt compare the
 *   label and the value as base-10 int64 and never match an unparsable label;
 * - matchFields supports In/NotIn with exactly one value on `metadata.name`.
 *   Upstream compares any other field against "" (the API server's validation
 *   rejects such keys); here an unsupported field simply matches no node.
 *   As upstream, matchFields are ignored for a node that has no name.
 */
import type { Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod, PreferredSchedulingTerm } from './types.ts';
import { newRequirement, requirementMatches, type SelectorOperator } from './label-requirement.ts';
import { isPlainObject } from './json.ts';
import { boundedMemo } from './memo.ts';

const OPERATORS = new Map<unknown, SelectorOperator>([
  ['In', 'in'],
  ['NotIn', 'notin'],
  ['Exists', 'exists'],
  ['DoesNotExist', '!'],
  ['Gt', 'gt'],
  ['Lt', 'lt'],
]);

function valuesOf(req: NodeSelectorRequirement): string[] | undefined | 'invalid' {
  const v: unknown = req.values;
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) return 'invalid';
  return v as string[];
}

/** Whether one matchExpressions requirement holds for a node's labels (false when the requirement is invalid). */
export function nodeSelectorRequirementMatchesLabels(req: NodeSelectorRequirement, labels: Record<string, string> | undefined): boolean {
  if (!isPlainObject(req)) return false;
  const op = OPERATORS.get(req.operator);
  const values = valuesOf(req);
  if (op === undefined || values === 'invalid' || typeof req.key !== 'string') return false;
  const parsed = parsedOnce(req, req.key, op, values);
  return parsed.ok && requirementMatches(parsed.requirement, labels);
}

type Parsed = ReturnType<typeof newRequirement>;

/**
 * The parse of each requirement object seen, with the text it was parsed
 * from: a workload's terms are the same objects for all of its pods (and
 * checked against every node), so most asks are answered without building
 * the text key; an object changed in place since is parsed again.
 */
const parsedByObject = new WeakMap<object, { key: string; op: SelectorOperator; values: readonly string[] | undefined; parsed: Parsed }>();

function parsedOnce(req: object, key: string, op: SelectorOperator, values: string[] | undefined): Parsed {
  const seen = parsedByObject.get(req);
  if (seen !== undefined && seen.key === key && seen.op === op && sameValues(seen.values, values)) return seen.parsed;
  const parsed = parsedRequirement(key, op, values);
  parsedByObject.set(req, { key, op, values: values === undefined ? undefined : [...values], parsed });
  return parsed;
}

function sameValues(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Requirements parsed lately, by their text. The scheduler checks a pod's
 * node affinity against every node, and the pods of one workload share
 * their terms, so parsing (with the label key and value validation) once per
 * distinct requirement is what upstream's per-pod pre-filter parse amounts
 * to.
 */
const parsedRequirement = boundedMemo(
  4096,
  (key: string, op: SelectorOperator, values: string[] | undefined) => JSON.stringify([key, op, values ?? null]),
  newRequirement,
);

/** One matchFields requirement against the node name; undefined when upstream would reject it. */
function fieldRequirementMatches(req: NodeSelectorRequirement, nodeName: string): boolean | undefined {
  if (!isPlainObject(req)) return undefined;
  const values = valuesOf(req);
  if (values === 'invalid' || values === undefined || values.length !== 1) return undefined;
  if (req.key !== 'metadata.name') return undefined;
  if (req.operator === 'In') return nodeName === values[0];
  if (req.operator === 'NotIn') return nodeName !== values[0];
  return undefined;
}

function listOf<T>(v: T[] | undefined | unknown): T[] {
  return Array.isArray(v) ? (v as T[]) : [];
}

function nodeName(node: Node): string {
  const name: unknown = node?.metadata?.name;
  return typeof name === 'string' ? name : '';
}

function nodeLabels(node: Node): Record<string, string> | undefined {
  const labels: unknown = node?.metadata?.labels;
  return isPlainObject(labels) ? (labels as Record<string, string>) : undefined;
}

/** A NodeSelectorTerm: all matchExpressions on the labels AND all matchFields; an empty term matches nothing. */
export function nodeSelectorTermMatches(term: NodeSelectorTerm, node: Node): boolean {
  if (!isPlainObject(term) || node === null || typeof node !== 'object') return false;
  const expressions = listOf<NodeSelectorRequirement>(term.matchExpressions);
  const fields = listOf<NodeSelectorRequirement>(term.matchFields);
  if (expressions.length === 0 && fields.length === 0) return false;
  const labels = nodeLabels(node);
  const name = nodeName(node);
  // Every field requirement must be well-formed even when it ends up ignored.
  const fieldResults = fields.map((f) => fieldRequirementMatches(f, name));
  if (fieldResults.some((r) => r === undefined)) return false;
  if (!expressions.every((e) => nodeSelectorRequirementMatchesLabels(e, labels))) return false;
  return name === '' || fieldResults.every((r) => r === true);
}

/** A NodeSelector: its terms ORed; a selector without terms matches nothing. */
export function nodeSelectorMatches(selector: NodeSelector, node: Node): boolean {
  if (!isPlainObject(selector)) return false;
  return listOf<NodeSelectorTerm>(selector.nodeSelectorTerms).some((t) => nodeSelectorTermMatches(t, node));
}

/** The NodeAffinity score of a node: the sum of the weights of the preferred terms it matches. */
export function preferredSchedulingTermsScore(terms: PreferredSchedulingTerm[] | undefined, node: Node): number {
  let score = 0;
  for (const t of listOf(terms)) {
    if (!isPlainObject(t) || typeof t.weight !== 'number' || t.weight === 0) continue;
    if (nodeSelectorTermMatches(t.preference as NodeSelectorTerm, node)) score += t.weight;
  }
  return score;
}

/**
 * The scheduler's NodeAffinity filter: every `spec.nodeSelector` entry equals
 * the node's label, and the required node affinity (when set) matches.
 */
export function podMatchesNodeSelectorAndAffinity(pod: Pod, node: Node): boolean {
  const spec: unknown = pod?.spec;
  if (!isPlainObject(spec)) return true;
  const labels = nodeLabels(node) ?? {};
  const nodeSelector = spec.nodeSelector;
  if (isPlainObject(nodeSelector)) {
    for (const [k, v] of Object.entries(nodeSelector)) {
      if (!Object.prototype.hasOwnProperty.call(labels, k) || labels[k] !== v) return false;
    }
  }
  const affinity = spec.affinity;
  const nodeAffinity = isPlainObject(affinity) ? affinity.nodeAffinity : undefined;
  const required = isPlainObject(nodeAffinity) ? nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution : undefined;
  if (required === undefined || required === null) return true;
  return nodeSelectorMatches(required as NodeSelector, node);
}
