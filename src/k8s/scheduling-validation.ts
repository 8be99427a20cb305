/**
 * Validation of node selectors, node affinity terms and tolerations, with the
 * rules and messages of k8s.io/kubernetes/pkg/apis/core/validation
 * (ValidateNodeSelectorRequirement, ValidateNodeFieldSelectorRequirement,
 * ValidateNodeSelectorTerm, ValidateNodeSelector, ValidatePreferredSchedulingTerms,
 * ValidateTolerations). Used for WorkloadSpread subsets (spec §7 V12–V14) and
 * for pod specs.
 *
 * One deliberate addition: a Gt/Lt requirement whose single value is not a
 * base-10 int64 is rejected ("must be an integer"). Upstream accepts it and the
 * scheduler then never matches the term; rejecting it early is what a user wants.
 */
import { forbidden, invalid, notSupported, required, type FieldError, type FieldPath } from './field-errors.ts';
import { nameIsDNSSubdomain, validateLabelName, validateRequirementKeyAndValues } from './meta-validation.ts';
import { isValidLabelValue, parseInt64 } from './name-formats.ts';
import { arrayField, asArray, asNumber, asRecord, asString } from './raw-json.ts';

function stringValues(record: Record<string, unknown> | undefined): string[] {
  return (asArray(record?.['values']) ?? []).map((v) => asString(v) ?? '');
}

/** A `matchExpressions` entry (node labels). Values must be label values unless `allowInvalidLabelValues` (preferred terms). */
export function validateNodeSelectorRequirement(requirement: unknown, path: FieldPath, allowInvalidLabelValues = false): FieldError[] {
  const r = asRecord(requirement);
  const operator = asString(r?.['operator']) ?? '';
  const values = stringValues(r);
  const errs: FieldError[] = [];
  switch (operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) errs.push(required(path.child('values'), "must be specified when `operator` is 'In' or 'NotIn'"));
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0) errs.push(forbidden(path.child('values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      break;
    case 'Gt':
    case 'Lt':
      if (values.length !== 1) errs.push(required(path.child('values'), "must be specified single value when `operator` is 'Lt' or 'Gt'"));
      else if (parseInt64(values[0] as string) === undefined) errs.push(invalid(path.child('values').index(0), values[0], 'must be an integer'));
      break;
    default:
      errs.push(invalid(path.child('operator'), operator, 'not a valid selector operator'));
  }
  errs.push(...validateRequirementKeyAndValues(asString(r?.['key']) ?? '', values, path, allowInvalidLabelValues));
  return errs;
}

/** A `matchFields` entry: only `metadata.name`, only In/NotIn, exactly one value, which must be a node name. */
export function validateNodeFieldSelectorRequirement(requirement: unknown, path: FieldPath): FieldError[] {
  const r = asRecord(requirement);
  const operator = asString(r?.['operator']) ?? '';
  const key = asString(r?.['key']) ?? '';
  const values = stringValues(r);
  const errs: FieldError[] = [];
  if (operator === 'In' || operator === 'NotIn') {
    if (values.length !== 1) {
      errs.push(required(path.child('values'), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"));
    }
  } else {
    errs.push(invalid(path.child('operator'), operator, 'not a valid selector operator'));
  }
  if (key !== 'metadata.name') {
    errs.push(invalid(path.child('key'), key, 'not a valid field selector key'));
  } else {
    values.forEach((value, i) => {
      for (const msg of nameIsDNSSubdomain(value, false)) errs.push(invalid(path.child('values').index(i), value, msg));
    });
  }
  return errs;
}

/** `ValidateNodeSelectorTerm`: every matchExpressions entry, then every matchFields entry. An empty term is valid. */
export function validateNodeSelectorTerm(term: unknown, path: FieldPath, allowInvalidLabelValues = false): FieldError[] {
  const t = asRecord(term);
  const errs: FieldError[] = [];
  arrayField(t, 'matchExpressions').forEach((req, j) => {
    errs.push(...validateNodeSelectorRequirement(req, path.child('matchExpressions').index(j), allowInvalidLabelValues));
  });
  arrayField(t, 'matchFields').forEach((req, j) => {
    errs.push(...validateNodeFieldSelectorRequirement(req, path.child('matchFields').index(j)));
  });
  return errs;
}

/** `ValidateNodeSelector` (a required node affinity): at least one term, each term valid. */
export function validateNodeSelector(selector: unknown, path: FieldPath, allowInvalidLabelValues = false): FieldError[] {
  const terms = arrayField(asRecord(selector), 'nodeSelectorTerms');
  const termsPath = path.child('nodeSelectorTerms');
  if (terms.length === 0) return [required(termsPath, 'must have at least one node selector term')];
  return terms.flatMap((term, i) => validateNodeSelectorTerm(term, termsPath.index(i), allowInvalidLabelValues));
}

/** `ValidatePreferredSchedulingTerms`: weight in 1..100; the preference term is checked with label values allowed to be invalid. */
export function validatePreferredSchedulingTerms(terms: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  (asArray(terms) ?? []).forEach((term, i) => {
    const t = asRecord(term);
    const weight = asNumber(t?.['weight']) ?? 0;
    if (weight <= 0 || weight > 100) errs.push(invalid(path.index(i).child('weight'), weight, 'must be in the range 1-100'));
    errs.push(...validateNodeSelectorTerm(t?.['preference'], path.index(i).child('preference'), true));
  });
  return errs;
}

export const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;

/** `validateTaintEffect`: one of the three effects; empty only when `allowEmpty`. */
export function validateTaintEffect(effect: string, allowEmpty: boolean, path: FieldPath): FieldError[] {
  if (!allowEmpty && effect.length === 0) return [required(path, '')];
  if ((TAINT_EFFECTS as readonly string[]).includes(effect)) return [];
  return [notSupported(path, effect, TAINT_EFFECTS)];
}

/**
 * `ValidateTolerations`. Note the upstream quirk kept here: value problems are
 * reported on `.operator`, not `.value`.
 */
export function validateTolerations(tolerations: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  (asArray(tolerations) ?? []).forEach((toleration, i) => {
    const t = asRecord(toleration);
    const idx = path.index(i);
    const key = asString(t?.['key']) ?? '';
    const operator = asString(t?.['operator']) ?? '';
    const value = asString(t?.['value']) ?? '';
    const effect = asString(t?.['effect']) ?? '';
    const hasSeconds = t?.['tolerationSeconds'] !== undefined && t?.['tolerationSeconds'] !== null;
    if (key.length > 0) errs.push(...validateLabelName(key, idx.child('key')));
    if (key.length === 0 && operator !== 'Exists') {
      errs.push(invalid(idx.child('operator'), operator, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'));
    }
    if (hasSeconds && effect !== 'NoExecute') {
      errs.push(invalid(idx.child('effect'), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    switch (operator) {
      case 'Equal':
      case '': {
        const problems = isValidLabelValue(value);
        if (problems.length > 0) errs.push(invalid(idx.child('operator'), value, problems.join(';')));
        break;
      }
      case 'Exists':
        if (value.length > 0) errs.push(invalid(idx.child('operator'), value, "value must be empty when `operator` is 'Exists'"));
        break;
      default:
        errs.push(notSupported(idx.child('operator'), operator, ['Equal', 'Exists']));
    }
    if (effect.length > 0) errs.push(...validateTaintEffect(effect, true, idx.child('effect')));
  });
  return errs;
}
