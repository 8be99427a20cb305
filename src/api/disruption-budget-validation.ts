/**
 * DomainDisruptionBudget validation (DECISIONS D14; the "Bad input"),
 * as the validating webhook and `workloadspread validate` run it.
 *
 * Start with `validateDomainDisruptionBudget`: the structural check against
 * the TypeBox schema first (a structurally broken object gets only those
 * errors, as the API server would stop there), then the metadata name, then
 * the semantic rules, each reporting a Kubernetes field error on the field a
 * user has to change:
 * - `spec.selector`: required, with at least one requirement (an empty
 *   selector would silently govern every pod of the namespace), valid as a
 *   label selector;
 * - exactly one of `maxUnavailable` / `minAvailable`; each an int ≥ 0 or a
 *   percentage `<digits>%` no larger than 100% (what a PodDisruptionBudget
 *   accepts);
 * - at most one of `nodeSelectorTerm`, `topologyKey`, `workloadSpreadRef`;
 *   the term valid by the core node-selector rules and not empty (an empty
 *   term matches no node, so the budget would govern nothing); the key a
 *   valid label key; the WorkloadSpread name a DNS subdomain.
 * A `workloadSpreadRef` to a WorkloadSpread that does not exist is valid: the
 * budget's status says so (condition WorkloadSpreadFound=False).
 * Never throws, whatever the input.
 */
import { forbidden, invalid, required, root, typeInvalid, type FieldError, type FieldPath } from '../k8s/field-errors.ts';
import { asRecord, jsonTypeName, type JsonRecord } from '../k8s/raw-json.ts';
import { isDNS1123Subdomain, isQualifiedName, validateLabelSelector, validateNodeSelectorTerm, validateObjectMetaUpdate } from '../k8s/validation.ts';
import { DomainDisruptionBudgetSchema } from './disruption-budget.ts';
import { validateResource } from '../k8s/crd-schema/resource-validation.ts';
import { metadataErrors } from './validation.ts';

const present = (v: unknown): boolean => v !== undefined && v !== null;

/** The three ways to name domains, in the order the messages list them. */
const DOMAIN_MODES = ['nodeSelectorTerm', 'topologyKey', 'workloadSpreadRef'] as const;

const PERCENT = /^[0-9]+%$/;

/** An int ≥ 0, or `<digits>%` with at most 100: the values a budget can be resolved from. */
function intOrPercentErrors(value: unknown, path: FieldPath): FieldError[] {
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) return [invalid(path, value, 'must be an integer or a percentage such as "25%"')];
    return value < 0 ? [invalid(path, value, 'must be greater than or equal to 0')] : [];
  }
  if (typeof value !== 'string') return [invalid(path, value, 'must be an integer or a percentage such as "25%"')];
  if (!PERCENT.test(value)) return [invalid(path, value, 'a percentage must be digits followed by "%", such as "25%"')];
  return Number(value.slice(0, -1)) > 100 ? [invalid(path, value, 'must not be greater than 100%')] : [];
}

function selectorErrors(spec: JsonRecord, path: FieldPath): FieldError[] {
  const selectorPath = path.child('selector');
  const selector = asRecord(spec['selector']);
  if (selector === undefined) return [required(selectorPath, 'a budget must say which pods it protects')];
  const labels = asRecord(selector['matchLabels']);
  const expressions = Array.isArray(selector['matchExpressions']) ? selector['matchExpressions'] : [];
  if ((labels === undefined || Object.keys(labels).length === 0) && expressions.length === 0) {
    return [invalid(selectorPath, selector, 'must not be empty: an empty selector would govern every pod of the namespace')];
  }
  return validateLabelSelector(selector, selectorPath);
}

function amountErrors(spec: JsonRecord, path: FieldPath): FieldError[] {
  const max = spec['maxUnavailable'];
  const min = spec['minAvailable'];
  if (present(max) && present(min)) return [forbidden(path.child('minAvailable'), 'may not be set together with spec.maxUnavailable: set exactly one of them')];
  if (!present(max) && !present(min)) return [required(path.child('maxUnavailable'), 'exactly one of spec.maxUnavailable and spec.minAvailable must be set')];
  return present(max) ? intOrPercentErrors(max, path.child('maxUnavailable')) : intOrPercentErrors(min, path.child('minAvailable'));
}

function domainModeErrors(spec: JsonRecord, path: FieldPath): FieldError[] {
  const set = DOMAIN_MODES.filter((mode) => present(spec[mode]));
  const errs: FieldError[] = [];
  for (const extra of set.slice(1)) {
    errs.push(forbidden(path.child(extra), `may not be set together with spec.${set[0] ?? ''}: a budget names its domains one way only`));
  }
  if (errs.length > 0) return errs;
  const mode = set[0];
  if (mode === 'nodeSelectorTerm') {
    const term = asRecord(spec['nodeSelectorTerm']) ?? {};
    const termPath = path.child('nodeSelectorTerm');
    const count = (key: string): number => (Array.isArray(term[key]) ? (term[key] as unknown[]).length : 0);
    if (count('matchExpressions') + count('matchFields') === 0) {
      return [required(termPath, 'must have at least one matchExpressions or matchFields requirement: an empty term matches no node')];
    }
    return validateNodeSelectorTerm(term, termPath);
  }
  if (mode === 'topologyKey') {
    const key = spec['topologyKey'];
    const keyPath = path.child('topologyKey');
    if (key === '') return [required(keyPath, 'must name a node label, such as topology.kubernetes.io/zone')];
    return typeof key === 'string' ? isQualifiedName(key).map((msg) => invalid(keyPath, key, msg)) : [];
  }
  if (mode === 'workloadSpreadRef') {
    const name = asRecord(spec['workloadSpreadRef'])?.['name'];
    const namePath = path.child('workloadSpreadRef', 'name');
    if (name === undefined || name === null || name === '') return [required(namePath, 'must name a WorkloadSpread in the namespace of the budget')];
    return typeof name === 'string' ? isDNS1123Subdomain(name).map((msg) => invalid(namePath, name, msg)) : [];
  }
  return [];
}

/** The semantic rules on a spec that passed the structural check. */
export function validateDomainDisruptionBudgetSpec(spec: unknown): FieldError[] {
  const s = asRecord(spec) ?? {};
  const path = root('spec');
  return [...selectorErrors(s, path), ...amountErrors(s, path), ...domainModeErrors(s, path)];
}

/** Missing spec and selector are reported by the semantic rules, with their messages. */
const SEMANTIC_REQUIRED = new Set(['spec', 'spec.selector', 'spec.workloadSpreadRef.name']);

/**
 * Every rule; empty when the budget is valid. `strict`: unknown fields are
 * errors, as the API server's strict field validation (`workloadspread validate`).
 */
export function validateDomainDisruptionBudget(budget: unknown, options: { strict?: boolean } = {}): FieldError[] {
  if (jsonTypeName(budget) !== 'object') {
    const actual = jsonTypeName(budget);
    return [typeInvalid(root(''), actual, `must be of type object: "${actual}"`)];
  }
  const structural = validateResource(budget as JsonRecord, DomainDisruptionBudgetSchema, { skipRequired: SEMANTIC_REQUIRED, ...(options.strict === true ? { unknownFields: 'error' as const } : {}) });
  if (structural.length > 0) return structural;
  const obj = budget as JsonRecord;
  const errs: FieldError[] = metadataErrors(obj['metadata']);
  if (!present(obj['spec'])) return [...errs, required(root('spec'), 'a DomainDisruptionBudget needs a spec with a selector and maxUnavailable or minAvailable')];
  return [...errs, ...validateDomainDisruptionBudgetSpec(obj['spec'])];
}

/** On UPDATE: the usual metadata immutability, then every rule on the new object (the spec may change freely). */
export function validateDomainDisruptionBudgetUpdate(oldBudget: unknown, newBudget: unknown): FieldError[] {
  const errs = validateObjectMetaUpdate(asRecord(newBudget)?.['metadata'], asRecord(oldBudget)?.['metadata'], root('metadata'));
  return [...validateDomainDisruptionBudget(newBudget), ...errs];
}
