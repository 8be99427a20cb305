/**
 * Schema validation of custom resources (apiextensions-apiserver
 * `validation.ValidateCustomResource`, whose texts come from kube-openapi's
 * validators): a walk of the value beside its CRD `openAPIV3Schema`, reporting
 * the field errors the API server reports:
 *
 *   type      → `spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`
 *   enum      → `spec.x: Unsupported value: "c": supported values: "a", "b"`
 *   required  → `spec.x: Required value`
 *   minimum   → `spec.n: Invalid value: -1: spec.n in body should be greater than or equal to 0`
 *   maxLength → `spec.s: Too long: may not be more than 3 bytes`
 *   pattern   → `spec.s: Invalid value: "A": spec.s in body should match '^[a-z]+$'`
 *   format    → `spec.t: Invalid value: "x": spec.t in body must be of type date-time: "x"`
 * Paths use kube-openapi's spelling (`spec.items[0].name`).
 *
 * OpenAPI v3.0 specifics: `nullable`, `x-kubernetes-int-or-string` (an
 * integer or a string; the integer an int32, as Go's intstr holds), boolean
 * `exclusiveMinimum`/`exclusiveMaximum`, integer formats int32/int64 bounding
 * the value. A JSON `null` is a value like any other (of type "null"): the
 * API server prunes the nulls of non-nullable fields before it validates
 * (prune.ts; resource-validation.ts does both).
 * String formats: the ones Kubernetes checks that users meet (date-time,
 * date, uuid, ipv4, ipv6, cidr, mac, hostname, email, byte, duration, uri);
 * other format names are accepted unchecked, as upstream ignores unknown
 * formats. Errors come per node in a fixed order: type, enum, value
 * validations (not, anyOf, oneOf, allOf), then the keywords of the value's
 * JSON type (numbers: bounds, multipleOf; strings: lengths, pattern, format;
 * arrays: item counts, uniqueness, items; objects: property counts, required,
 * map values, properties). Errors inside anyOf/oneOf/not branches are
 * summarised by the combinator's own error; allOf branches report their own.
 *
 * Pure and dependency-free, so the processes that only read objects (the
 * kubectl plugin's `status`) validate with it cheaply.
 */
import { invalid, notSupported, required, tooLong, tooMany, typeInvalid, type FieldError } from '../field-errors.ts';
import { jsonTypeName } from '../raw-json.ts';
import { asSchema, type Schema } from './structural.ts';

const FORMATS: Record<string, RegExp | ((s: string) => boolean)> = {
  'date-time': /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/,
  date: /^\d{4}-\d{2}-\d{2}$/,
  uuid: /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
  ipv4: /^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/,
  ipv6: (s) => s.includes(':') && /^[0-9a-fA-F:.]+$/.test(s),
  cidr: /^[0-9a-fA-F:.]+\/\d{1,3}$/,
  mac: /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$/,
  hostname: /^(?=.{1,253}$)[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/,
  email: /^[^\s@]+@[^\s@]+$/,
  byte: /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/,
  duration: /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/,
  uri: /^[a-zA-Z][a-zA-Z0-9+.-]*:/,
};

const INT_RANGES: Record<string, [number, number]> = {
  int32: [-2147483648, 2147483647],
  int64: [-9223372036854775808, 9223372036854775807],
};

/** A compiled validator of one CRD version's schema. */
export interface SchemaValidator {
  /** Field errors of `obj`; `rootPath` prefixes every path (a default is checked at its own place in the CRD). */
  validate(obj: unknown, rootPath?: string): FieldError[];
}

function numberText(n: unknown): string {
  return typeof n === 'number' ? String(n) : JSON.stringify(n);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isRecord(value);
    case 'null':
      return value === null;
    default:
      return true;
  }
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isRecord(a) && isRecord(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

const childPath = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);

/** The compiled patterns of a schema: compiled on first use, shared by every walk. */
type Patterns = Map<string, RegExp>;

function walk(value: unknown, s: Schema, path: string, patterns: Patterns, out: FieldError[]): void {
  const nullable = s['nullable'] === true;
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  let types: string[] | undefined;
  if (intOrString) types = ['integer', 'string'];
  else if (typeof s['type'] === 'string' && s['type'] !== '') types = [s['type']];
  if (types !== undefined && nullable) types = [...types, 'null'];
  if (types !== undefined && !types.some((t) => hasType(value, t))) {
    const actual = jsonTypeName(value);
    out.push(typeInvalid(path, actual, `${path} in body must be of type ${types.join(',')}: ${JSON.stringify(actual)}`));
  }
  const enumValues = s['enum'];
  if (Array.isArray(enumValues) && !(nullable && value === null) && !enumValues.some((e) => deepEqual(e, value))) {
    out.push(notSupported(path, value, enumValues.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)))));
  }
  const not = asSchema(s['not']);
  if (not !== undefined && validates(value, not, patterns)) out.push(invalid(path, value, `${path} in body must not validate the schema (not)`));
  // The integer/string anyOf that accompanies int-or-string says what the type already says.
  const anyOf = intOrString ? undefined : s['anyOf'];
  if (Array.isArray(anyOf) && anyOf.length > 0 && !anyOf.some((b) => validates(value, asSchema(b) ?? {}, patterns))) {
    out.push(invalid(path, value, `${path} in body must validate at least one schema (anyOf)`));
  }
  const oneOf = s['oneOf'];
  if (Array.isArray(oneOf) && oneOf.length > 0 && oneOf.filter((b) => validates(value, asSchema(b) ?? {}, patterns)).length !== 1) {
    out.push(invalid(path, value, `${path} in body must validate one and only one schema (oneOf)`));
  }
  const allOf = s['allOf'];
  if (Array.isArray(allOf)) for (const b of allOf) walk(value, asSchema(b) ?? {}, path, patterns, out);

  if (typeof value === 'number') checkNumber(value, s, path, intOrString, out);
  else if (typeof value === 'string') checkString(value, s, path, patterns, out);
  else if (Array.isArray(value)) checkArray(value, s, path, patterns, out);
  else if (isRecord(value)) checkObject(value, s, path, patterns, out);
}

function checkNumber(value: number, s: Schema, path: string, intOrString: boolean, out: FieldError[]): void {
  const { maximum, minimum } = s;
  if (typeof maximum === 'number') {
    if (s['exclusiveMaximum'] === true ? value >= maximum : value > maximum) {
      out.push(invalid(path, value, `${path} in body should be less than ${s['exclusiveMaximum'] === true ? '' : 'or equal to '}${numberText(maximum)}`));
    }
  }
  if (typeof minimum === 'number') {
    if (s['exclusiveMinimum'] === true ? value <= minimum : value < minimum) {
      out.push(invalid(path, value, `${path} in body should be greater than ${s['exclusiveMinimum'] === true ? '' : 'or equal to '}${numberText(minimum)}`));
    }
  }
  const format = intOrString ? 'int32' : s['type'] === 'integer' && typeof s['format'] === 'string' ? s['format'] : undefined;
  const range = format === undefined ? undefined : INT_RANGES[format];
  if (range !== undefined && Number.isInteger(value)) {
    if (value > range[1]) out.push(invalid(path, value, `${path} in body should be less than or equal to ${range[1]} (${format})`));
    else if (value < range[0]) out.push(invalid(path, value, `${path} in body should be greater than or equal to ${range[0]} (${format})`));
  }
  const multipleOf = s['multipleOf'];
  if (typeof multipleOf === 'number' && multipleOf > 0) {
    const q = value / multipleOf;
    if (Math.abs(q - Math.round(q)) > 1e-9 * Math.max(1, Math.abs(q))) out.push(invalid(path, value, `${path} in body should be a multiple of ${numberText(multipleOf)}`));
  }
}

function checkString(value: string, s: Schema, path: string, patterns: Patterns, out: FieldError[]): void {
  const length = [...value].length;
  if (typeof s['maxLength'] === 'number' && length > s['maxLength']) out.push(tooLong(path, value, s['maxLength']));
  if (typeof s['minLength'] === 'number' && length < s['minLength']) out.push(invalid(path, value, `${path} in body should be at least ${numberText(s['minLength'])} chars long`));
  const pattern = s['pattern'];
  if (typeof pattern === 'string') {
    const re = patterns.get(pattern);
    if (re !== undefined && !re.test(value)) out.push(invalid(path, value, `${path} in body should match '${pattern}'`));
  }
  const format = typeof s['format'] === 'string' ? s['format'] : undefined;
  const check = format === undefined ? undefined : FORMATS[format];
  if (check !== undefined && !(typeof check === 'function' ? check(value) : check.test(value))) {
    out.push(typeInvalid(path, value, `${path} in body must be of type ${format}: ${JSON.stringify(value)}`));
  }
}

function checkArray(value: unknown[], s: Schema, path: string, patterns: Patterns, out: FieldError[]): void {
  if (typeof s['maxItems'] === 'number' && value.length > s['maxItems']) out.push(tooMany(path, value.length, s['maxItems']));
  if (typeof s['minItems'] === 'number' && value.length < s['minItems']) out.push(invalid(path, value, `${path} in body should have at least ${numberText(s['minItems'])} items`));
  if (s['uniqueItems'] === true && value.some((x, i) => value.findIndex((y) => deepEqual(x, y)) !== i)) out.push(invalid(path, value, `${path} in body shouldn't contain duplicates`));
  const items = asSchema(s['items']);
  if (items !== undefined) value.forEach((item, i) => walk(item, items, `${path}[${i}]`, patterns, out));
}

function checkObject(value: Record<string, unknown>, s: Schema, path: string, patterns: Patterns, out: FieldError[]): void {
  const properties = asSchema(s['properties']) ?? {};
  const additional = asSchema(s['additionalProperties']);
  let count = 0;
  for (const key of Object.keys(value)) if (value[key] !== undefined) count++;
  if (typeof s['maxProperties'] === 'number' && count > s['maxProperties']) out.push(tooMany(path, count, s['maxProperties']));
  if (typeof s['minProperties'] === 'number' && count < s['minProperties']) out.push(invalid(path, value, `${path} in body should have at least ${numberText(s['minProperties'])} properties`));
  const requiredNames = Array.isArray(s['required']) ? s['required'] : [];
  for (const name of requiredNames) if (typeof name === 'string' && value[name] === undefined) out.push(required(childPath(path, name)));
  if (additional !== undefined) {
    for (const key of Object.keys(value)) if (!Object.prototype.hasOwnProperty.call(properties, key) && value[key] !== undefined) walk(value[key], additional, childPath(path, key), patterns, out);
  }
  for (const [key, propertySchema] of Object.entries(properties)) {
    const child = asSchema(propertySchema);
    if (child !== undefined && value[key] !== undefined) walk(value[key], child, childPath(path, key), patterns, out);
  }
}

/** Whether `value` meets `s` (the branches of anyOf, oneOf and not). */
function validates(value: unknown, s: Schema, patterns: Patterns): boolean {
  const out: FieldError[] = [];
  walk(value, s, '', patterns, out);
  return out.length === 0;
}

/** Every `pattern` of a schema, compiled as JavaScript regular expressions (`u`); throws on one that does not compile. */
function compilePatterns(node: unknown, into: Patterns): void {
  if (Array.isArray(node)) {
    for (const n of node) compilePatterns(n, into);
    return;
  }
  const s = asSchema(node);
  if (s === undefined) return;
  if (typeof s['pattern'] === 'string' && !into.has(s['pattern'])) {
    try {
      into.set(s['pattern'], new RegExp(s['pattern'], 'u'));
    } catch (err) {
      throw new Error(`pattern ${JSON.stringify(s['pattern'])}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  const props = asSchema(s['properties']);
  if (props !== undefined) for (const v of Object.values(props)) compilePatterns(v, into);
  for (const k of ['items', 'additionalProperties', 'allOf', 'anyOf', 'oneOf', 'not']) compilePatterns(s[k], into);
}

/** Prepares a schema; one with a pattern that does not compile yields a validator that reports it. */
export function compileSchema(schema: Schema | undefined): SchemaValidator {
  if (schema === undefined) return { validate: () => [] };
  const patterns: Patterns = new Map();
  try {
    compilePatterns(schema, patterns);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { validate: () => [invalid('', '', `the schema of this resource cannot be compiled: ${message}`)] };
  }
  return {
    validate: (obj, rootPath = '') => {
      const out: FieldError[] = [];
      walk(obj, schema, rootPath, patterns, out);
      return out;
    },
  };
}
