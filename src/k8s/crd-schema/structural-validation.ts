/**
 * Whether a CRD version's `openAPIV3Schema` is structural and well formed
 * (apiextensions-apiserver: ValidateCustomResourceDefinitionOpenAPISchema and
 * structuralschema.ValidateStructural), with upstream's paths
 * (`spec.versions[0].schema.openAPIV3Schema.properties[spec].type`) and texts.
 *
 * Checked: the root is an object; every property, item and map value has a
 * `type` (unless int-or-string, preserve-unknown-fields or an embedded
 * resource) from the OpenAPI set, never `null`; arrays have `items` (a schema,
 * not a list); no `$ref`, `id`, `patternProperties`, `definitions`,
 * `dependencies` nor `additionalItems`; no `uniqueItems: true`; `properties`
 * and `additionalProperties` (a schema or false) are exclusive;
 * `x-kubernetes-preserve-unknown-fields` is true or absent;
 * `x-kubernetes-int-or-string` has no `type` and only the integer/string
 * anyOf (directly or as `allOf[0].anyOf`) inside value validations; embedded resources are
 * objects with properties or preserved fields; `x-kubernetes-list-type` is
 * atomic/set/map, map lists name their keys; value validations (`allOf`,
 * `anyOf`, `oneOf`, `not`) carry no type, default, nullable or x-kubernetes
 * extension, description or title; root `metadata` restricts at most name
 * and generateName;
 * defaults validate against their schema and have no unknown fields.
 * Skipped (accepted as written): CEL rules (`x-kubernetes-validations`), the
 * "value validation properties must be mirrored in the skeleton" rule, the
 * list-map key required-or-defaulted rule, and format names.
 */
import { forbidden, invalid, notSupported, required, type FieldError, type FieldPath } from '../field-errors.ts';
import { pruneValue } from './prune.ts';
import { asSchema, type Schema } from './structural.ts';
import { compileSchema } from './validator.ts';

const TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const LIST_TYPES = ['atomic', 'map', 'set'];
const VALUE_VALIDATIONS = ['allOf', 'anyOf', 'oneOf'] as const;
/** JSONSchemaProps keywords a CRD schema may not use (upstream's specStandardValidatorV3). */
const UNSUPPORTED = ['id', 'additionalItems', 'patternProperties', 'definitions', 'dependencies', '$ref'];

type Level = 'root' | 'field' | 'item' | 'value-validation';

function isIntOrStringAnyOf(s: Schema): boolean {
  const branches = s['anyOf'];
  if (!Array.isArray(branches) || branches.length !== 2) return false;
  const types = branches.map((x) => asSchema(x)?.['type']);
  return types[0] === 'integer' && types[1] === 'string' && branches.every((x) => Object.keys(asSchema(x) ?? {}).length === 1);
}

/**
 * One branch of a value validation. `allowIntOrString`: the branch is one of the integer/string
 * pair of an int-or-string node (its `type` is allowed); `intOrStringAllOf`: the branch is
 * `allOf[0]` of an int-or-string node, which may hold that pair as its `anyOf`.
 */
function checkValueValidation(s: Schema, path: FieldPath, errs: FieldError[], allowIntOrString: boolean, intOrStringAllOf = false): void {
  if (s['type'] !== undefined && !allowIntOrString) errs.push(forbidden(path.child('type'), 'must be empty to be structural'));
  for (const generic of ['description', 'title']) {
    if (s[generic] !== undefined && s[generic] !== '') errs.push(forbidden(path.child(generic), 'must be empty to be structural'));
  }
  if (s['default'] !== undefined) errs.push(forbidden(path.child('default'), 'must be empty to be structural'));
  if (s['nullable'] !== undefined) errs.push(forbidden(path.child('nullable'), 'must be false to be structural'));
  for (const ext of ['x-kubernetes-preserve-unknown-fields', 'x-kubernetes-embedded-resource', 'x-kubernetes-int-or-string']) {
    if (s[ext] !== undefined) errs.push(forbidden(path.child(ext), 'must be false to be structural'));
  }
  if (s['$ref'] !== undefined) errs.push(forbidden(path.child('$ref'), '$ref is not supported'));
  const props = asSchema(s['properties']);
  for (const [k, v] of Object.entries(props ?? {})) {
    const child = asSchema(v);
    if (child !== undefined) checkValueValidation(child, path.child('properties').key(k), errs, false);
  }
  const items = asSchema(s['items']);
  if (items !== undefined) checkValueValidation(items, path.child('items'), errs, false);
  for (const key of VALUE_VALIDATIONS) {
    (Array.isArray(s[key]) ? (s[key] as unknown[]) : []).forEach((x, i) => {
      const child = asSchema(x);
      if (child !== undefined) checkValueValidation(child, path.child(key).index(i), errs, key === 'anyOf' && intOrStringAllOf && isIntOrStringAnyOf(s));
    });
  }
  const not = asSchema(s['not']);
  if (not !== undefined) checkValueValidation(not, path.child('not'), errs, false);
}

function checkDefault(s: Schema, path: FieldPath, errs: FieldError[]): void {
  if (!('default' in s)) return;
  const value = structuredClone(s['default']);
  if (value === null && s['nullable'] !== true) {
    errs.push(invalid(path.child('default'), null, 'must not be null for a non-nullable field'));
    return;
  }
  const unknown = pruneValue(value, s);
  if (unknown.length > 0) errs.push(invalid(path.child('default'), s['default'], `must not have unknown fields: ${unknown.join(', ')}`));
  errs.push(...compileSchema(s).validate(s['default'], path.child('default').toString()));
}

function checkNode(node: unknown, path: FieldPath, level: Level, errs: FieldError[]): void {
  if (Array.isArray(node)) {
    errs.push(forbidden(path, 'items must be a schema object and not an array'));
    return;
  }
  const s = asSchema(node);
  if (s === undefined) {
    errs.push(invalid(path, node ?? null, 'must be a schema object'));
    return;
  }
  const type = s['type'];
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'];
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  for (const keyword of UNSUPPORTED) if (s[keyword] !== undefined) errs.push(forbidden(path.child(keyword), `${keyword} is not supported`));
  if (type === 'null') errs.push(forbidden(path.child('type'), 'type cannot be set to null, use nullable as an alternative'));
  else if (type !== undefined && (typeof type !== 'string' || !TYPES.includes(type))) errs.push(notSupported(path.child('type'), type, TYPES));
  if (s['uniqueItems'] === true) errs.push(forbidden(path.child('uniqueItems'), 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  if (level === 'root' && type !== 'object') {
    if (type === undefined || type === '') errs.push(required(path.child('type'), 'must not be empty at the root'));
    else errs.push(invalid(path.child('type'), type, 'must be object at the root'));
  } else if ((type === undefined || type === '') && !intOrString && preserve !== true && !embedded) {
    errs.push(required(path.child('type'), level === 'item' ? 'must not be empty for specified array items' : 'must not be empty for specified object fields'));
  }
  if (preserve !== undefined && preserve !== true) errs.push(invalid(path.child('x-kubernetes-preserve-unknown-fields'), preserve, 'must be true or undefined'));
  if (intOrString && type !== undefined) errs.push(invalid(path.child('type'), type, 'must be empty if x-kubernetes-int-or-string is true'));
  if (embedded) {
    if (type !== 'object') errs.push(invalid(path.child('type'), type ?? '', 'must be object if x-kubernetes-embedded-resource is true'));
    if (asSchema(s['properties']) === undefined && preserve !== true) {
      errs.push(required(path.child('properties'), 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields'));
    }
  }
  if (s['properties'] !== undefined && s['additionalProperties'] !== undefined && s['additionalProperties'] !== true) {
    errs.push(forbidden(path.child('additionalProperties'), 'additionalProperties and properties are mutual exclusive'));
  }
  if (type === 'array' && s['items'] === undefined) errs.push(required(path.child('items'), 'must be specified'));
  const listType = s['x-kubernetes-list-type'];
  if (listType !== undefined) {
    if (typeof listType !== 'string' || !LIST_TYPES.includes(listType)) errs.push(notSupported(path.child('x-kubernetes-list-type'), listType, LIST_TYPES));
    else if (type !== 'array') errs.push(invalid(path.child('x-kubernetes-list-type'), listType, 'must only be used if type is array'));
    if (listType === 'map') {
      const keys = s['x-kubernetes-list-map-keys'];
      const itemProps = asSchema(asSchema(s['items'])?.['properties']) ?? {};
      if (!Array.isArray(keys) || keys.length === 0) errs.push(required(path.child('x-kubernetes-list-map-keys'), 'must not be empty if x-kubernetes-list-type is map'));
      else if (keys.some((k) => typeof k !== 'string' || !(k in itemProps))) errs.push(invalid(path.child('x-kubernetes-list-map-keys'), keys, 'entries must all be names of item properties'));
    }
  } else if (s['x-kubernetes-list-map-keys'] !== undefined) {
    errs.push(forbidden(path.child('x-kubernetes-list-map-keys'), 'must not be set if x-kubernetes-list-type is not map'));
  }

  const props = asSchema(s['properties']);
  if (s['properties'] !== undefined && props === undefined) errs.push(invalid(path.child('properties'), s['properties'], 'must be a map of schemas'));
  for (const [k, v] of Object.entries(props ?? {})) {
    const childPath = path.child('properties').key(k);
    if (level === 'root' && k === 'metadata') {
      checkRootMetadata(v, childPath, errs);
      continue;
    }
    checkNode(v, childPath, 'field', errs);
  }
  if (s['items'] !== undefined) checkNode(s['items'], path.child('items'), 'item', errs);
  const additional = s['additionalProperties'];
  if (asSchema(additional) !== undefined) checkNode(additional, path.child('additionalProperties'), 'field', errs);
  for (const key of VALUE_VALIDATIONS) {
    const intOrStringForm = key === 'anyOf' && intOrString && isIntOrStringAnyOf(s);
    (Array.isArray(s[key]) ? (s[key] as unknown[]) : []).forEach((x, i) => {
      const child = asSchema(x);
      if (child !== undefined) checkValueValidation(child, path.child(key).index(i), errs, intOrStringForm, key === 'allOf' && i === 0 && intOrString);
    });
  }
  if (intOrString && Array.isArray(s['anyOf']) && !isIntOrStringAnyOf(s)) {
    errs.push(forbidden(path.child('anyOf'), 'only the integer/string anyOf form may accompany x-kubernetes-int-or-string'));
  }
  const not = asSchema(s['not']);
  if (not !== undefined) checkValueValidation(not, path.child('not'), errs, false);
  checkDefault(s, path, errs);
}

function checkRootMetadata(node: unknown, path: FieldPath, errs: FieldError[]): void {
  const s = asSchema(node);
  if (s === undefined) return;
  const allowedKeys = new Set(['type', 'properties', 'description']);
  const props = asSchema(s['properties']) ?? {};
  const extra = Object.keys(s).some((k) => !allowedKeys.has(k)) || Object.keys(props).some((k) => k !== 'name' && k !== 'generateName') || (s['type'] !== undefined && s['type'] !== 'object');
  if (extra) {
    errs.push(forbidden(path, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
    return;
  }
  for (const [k, v] of Object.entries(props)) {
    const child = asSchema(v);
    if (child !== undefined && child['type'] !== undefined && child['type'] !== 'string') errs.push(invalid(path.child('properties').key(k).child('type'), child['type'], 'must be string'));
  }
}

/** Field errors of one version's `openAPIV3Schema` at `path`. */
export function validateStructuralSchema(schema: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  checkNode(schema, path, 'root', errs);
  return errs;
}
