/**
 * Validation of object metadata and label selectors, reproducing
 * k8s.io/apimachinery/pkg/api/validation (ObjectMeta) and
 * .../apis/meta/v1/validation (labels, label selectors) with their messages.
 *
 * All functions take raw JSON (anything may be malformed) and return field
 * errors; wrong-typed values are read as absent, never thrown on.
 * Go iterates maps in random order; we iterate in key insertion order, so the
 * set of errors matches upstream and the order is deterministic.
 */
import { forbidden, invalid, required, tooLong, type FieldError, type FieldPath } from './field-errors.ts';
import { byteLength, isDNS1035Label, isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue } from './name-formats.ts';
import { arrayField, asArray, asRecord, asString, stringMap } from './raw-json.ts';

/** `metav1validation.ValidateLabelName`: one Invalid per problem of the key. */
export function validateLabelName(name: string, path: FieldPath): FieldError[] {
  return isQualifiedName(name).map((msg) => invalid(path, name, msg));
}

/** `metav1validation.ValidateLabels`: keys and values; errors are reported on the map's path, not per key. */
/**
 * The part label-selector and node-selector requirements share: the key is a
 * label name and, unless invalid values are tolerated, every value a label value.
 */
export function validateRequirementKeyAndValues(key: string, values: readonly string[], path: FieldPath, allowInvalidLabelValues: boolean): FieldError[] {
  const errs = validateLabelName(key, path.child('key'));
  if (!allowInvalidLabelValues) {
    values.forEach((value, i) => {
      for (const msg of isValidLabelValue(value)) errs.push(invalid(path.child('values').index(i), value, msg));
    });
  }
  return errs;
}

export function validateLabels(labels: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const [key, value] of stringMap(labels)) {
    errs.push(...validateLabelName(key, path));
    for (const msg of isValidLabelValue(value)) errs.push(invalid(path, value, msg));
  }
  return errs;
}

/** Total size limit of a metadata.annotations map (keys + values, in bytes). */
export const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES = 256 * 1024;

/** `ValidateAnnotations`: keys are qualified names compared case-insensitively; keys + values ≤ 256 KiB. */
export function validateAnnotations(annotations: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  let total = 0;
  for (const [key, value] of stringMap(annotations)) {
    for (const msg of isQualifiedName(key.toLowerCase())) errs.push(invalid(path, key, msg));
    total += byteLength(key) + byteLength(value);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES) errs.push(tooLong(path, '', TOTAL_ANNOTATION_SIZE_LIMIT_BYTES));
  return errs;
}

/** A name rule: the problems of a name, with `prefix` true for generateName (a trailing dash is then allowed). */
export type NameRule = (name: string, prefix: boolean) => string[];

function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
}

export const nameIsDNSSubdomain: NameRule = (name, prefix) => isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
export const nameIsDNSLabel: NameRule = (name, prefix) => isDNS1123Label(prefix ? maskTrailingDash(name) : name);
export const nameIsDNS1035Label: NameRule = (name, prefix) => isDNS1035Label(prefix ? maskTrailingDash(name) : name);

/** The name rule upstream applies to a kind: Namespaces are DNS labels, Services DNS-1035 labels, the rest DNS subdomains. */
export function nameRuleForKind(kind: string): NameRule {
  if (kind === 'Namespace') return nameIsDNSLabel;
  if (kind === 'Service') return nameIsDNS1035Label;
  return nameIsDNSSubdomain;
}

/**
 * The name part of `ValidateObjectMeta` (for the API server on create):
 * `generateName` is checked as a prefix, and one of name/generateName is required.
 * `metaPath` is the path of the metadata object (errors go to `.name` / `.generateName`).
 */
export function validateObjectMetaName(name: unknown, metaPath: FieldPath, kind: string, options: { generateName?: unknown; rule?: NameRule } = {}): FieldError[] {
  const rule = options.rule ?? nameRuleForKind(kind);
  const errs: FieldError[] = [];
  const generateName = asString(options.generateName) ?? '';
  if (generateName.length > 0) {
    for (const msg of rule(generateName, true)) errs.push(invalid(metaPath.child('generateName'), generateName, msg));
  }
  const n = asString(name) ?? '';
  if (n.length === 0) errs.push(required(metaPath.child('name'), 'name or generateName is required'));
  else for (const msg of rule(n, false)) errs.push(invalid(metaPath.child('name'), n, msg));
  return errs;
}

const FIELD_IMMUTABLE = 'field is immutable';

/**
 * The immutability part of `ValidateObjectMetaUpdate`: name, namespace, uid and
 * creationTimestamp may not change, and generation may not go down.
 * (The resourceVersion-must-be-set rule is left to the API server's update path.)
 */
export function validateObjectMetaUpdate(newMeta: unknown, oldMeta: unknown, metaPath: FieldPath): FieldError[] {
  const next = asRecord(newMeta);
  const prev = asRecord(oldMeta);
  const errs: FieldError[] = [];
  for (const key of ['name', 'namespace', 'uid', 'creationTimestamp']) {
    const a = asString(next?.[key]) ?? '';
    const b = asString(prev?.[key]) ?? '';
    if (a !== b) errs.push(invalid(metaPath.child(key), a, FIELD_IMMUTABLE));
  }
  const newGeneration = typeof next?.['generation'] === 'number' ? next['generation'] : 0;
  const oldGeneration = typeof prev?.['generation'] === 'number' ? prev['generation'] : 0;
  if (newGeneration < oldGeneration) errs.push(invalid(metaPath.child('generation'), newGeneration, 'must not be decremented'));
  return errs;
}

/**
 * `metav1validation.ValidateLabelSelectorRequirement`: In/NotIn need values,
 * Exists/DoesNotExist forbid them, other operators are invalid; key syntax; each
 * value must be a valid label value unless `allowInvalidLabelValues`.
 */
export function validateLabelSelectorRequirement(requirement: unknown, path: FieldPath, allowInvalidLabelValues = false): FieldError[] {
  const r = asRecord(requirement);
  const errs: FieldError[] = [];
  const operator = asString(r?.['operator']) ?? '';
  const values = (asArray(r?.['values']) ?? []).map((v) => asString(v) ?? '');
  switch (operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) errs.push(required(path.child('values'), "must be specified when `operator` is 'In' or 'NotIn'"));
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0) errs.push(forbidden(path.child('values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      break;
    default:
      errs.push(invalid(path.child('operator'), operator, 'not a valid selector operator'));
  }
  errs.push(...validateRequirementKeyAndValues(asString(r?.['key']) ?? '', values, path, allowInvalidLabelValues));
  return errs;
}

/** `metav1validation.ValidateLabelSelector`: matchLabels as labels, then each matchExpressions entry. A null selector is valid. */
export function validateLabelSelector(selector: unknown, path: FieldPath, options: { allowInvalidLabelValues?: boolean } = {}): FieldError[] {
  const s = asRecord(selector);
  if (s === undefined) return [];
  const errs = validateLabels(s['matchLabels'], path.child('matchLabels'));
  arrayField(s, 'matchExpressions').forEach((expr, i) => {
    errs.push(...validateLabelSelectorRequirement(expr, path.child('matchExpressions').index(i), options.allowInvalidLabelValues ?? false));
  });
  return errs;
}
