/**
 * Structural validation of an object against its CRD schema — what the API
 * server's OpenAPI validator (kube-openapi, via apiextensions-apiserver) does
 * before any webhook sees the object. Errors have the server's shapes and
 * texts: a wrong JSON type is a TypeInvalid carrying the actual type name
 * (`spec.subsets: Invalid value: "object": spec.subsets in body must be of type
 * array: "object"`), a missing required field is a bare Required, an enum miss
 * is NotSupported, a minimum miss is Invalid.
 *
 * JSON `null` counts as absent, as the API server prunes nulls of non-nullable
 * fields. Unknown fields are pruned by default; with `unknownFields: 'error'`
 * they are errors, as the API server's strict field validation (kubectl's
 * default since 1.27) reports them: `unknown field "spec.subsets[0].maxReplica"`
 * — everywhere the schema lists properties, except under
 * `x-kubernetes-preserve-unknown-fields` (a subset's `patch`); the root
 * `metadata` is checked against ObjectMeta's fields (`metadataFields`).
 * Integers must fit their format (int32, int64; an int-or-string holds an
 * int32, as Go's intstr does), and arrays their `maxItems`. One
 * simplification: an int-or-string of another type gives a single TypeInvalid
 * ("integer,string") where kube-openapi lists each anyOf branch.
 */
import { invalid, notSupported, required, root, tooMany, typeInvalid, unknownField, type FieldError, type FieldPath } from '../k8s/field-errors.ts';
import { jsonTypeName } from '../k8s/raw-json.ts';

type Schema = Record<string, unknown>;

export interface StructuralOptions {
  /** Field paths (as printed) whose absence is reported by later, semantic rules instead. */
  skipRequired?: ReadonlySet<string>;
  /** `error`: fields the schema does not list are errors (strict); default `prune` (ignored, as the server prunes them). */
  unknownFields?: 'prune' | 'error';
  /** With strict checking, the fields the root `metadata` may have (ObjectMeta's). */
  metadataFields?: readonly string[];
}

const INT_RANGES: Record<string, [number, number]> = {
  int32: [-2147483648, 2147483647],
  int64: [-9223372036854775808, 9223372036854775807],
};

/** The range error of an integer outside its format's range, in kube-openapi's words; undefined when it fits. */
function rangeError(at: FieldPath, value: number, format: string): FieldError | undefined {
  const range = INT_RANGES[format];
  if (range === undefined) return undefined;
  if (value > range[1]) return invalid(at, value, `${at.toString()} in body should be less than or equal to ${range[1]} (${format})`);
  if (value < range[0]) return invalid(at, value, `${at.toString()} in body should be greater than or equal to ${range[0]} (${format})`);
  return undefined;
}

// RFC 3339 date-time, as strfmt accepts it (fractional seconds and any offset allowed).
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function isSchema(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function typeError(path: FieldPath, value: unknown, expected: string): FieldError {
  const actual = jsonTypeName(value);
  return typeInvalid(path, actual, `${path.toString()} in body must be of type ${expected}: "${actual}"`);
}

/** `path` is undefined only for the root object, whose properties print without a prefix. */
function walk(value: unknown, schema: Schema, path: FieldPath | undefined, options: StructuralOptions, out: FieldError[]): void {
  if (value === null || value === undefined) return;
  const at = path ?? root('');
  const childOf = (name: string): FieldPath => (path === undefined ? root(name) : path.child(name));
  if (schema['x-kubernetes-int-or-string'] === true) {
    if (typeof value === 'string') return;
    if (typeof value === 'number' && Number.isInteger(value)) {
      const range = rangeError(at, value, 'int32');
      if (range !== undefined) out.push(range);
      return;
    }
    out.push(typeError(at, value, 'integer,string'));
    return;
  }
  const type = schema['type'];
  switch (type) {
    case 'object': {
      if (jsonTypeName(value) !== 'object') {
        out.push(typeError(at, value, 'object'));
        return;
      }
      const record = value as Record<string, unknown>;
      const properties = isSchema(schema['properties']) ? schema['properties'] : {};
      const requiredNames = Array.isArray(schema['required']) ? (schema['required'] as string[]) : [];
      for (const name of requiredNames) {
        const child = childOf(name);
        if ((record[name] === undefined || record[name] === null) && !options.skipRequired?.has(child.toString())) out.push(required(child));
      }
      for (const [name, propertySchema] of Object.entries(properties)) {
        if (isSchema(propertySchema)) walk(record[name], propertySchema, childOf(name), options, out);
      }
      const additional = schema['additionalProperties'];
      if (isSchema(additional)) {
        for (const [key, item] of Object.entries(record)) if (!(key in properties)) walk(item, additional, childOf(key), options, out);
      } else if (options.unknownFields === 'error') {
        const isRootMetadata = path !== undefined && path.toString() === 'metadata';
        const known = isRootMetadata ? options.metadataFields : schema['x-kubernetes-preserve-unknown-fields'] === true ? undefined : Object.keys(properties);
        if (known !== undefined) for (const key of Object.keys(record)) if (!known.includes(key)) out.push(unknownField(childOf(key)));
      }
      return;
    }
    case 'array': {
      if (!Array.isArray(value)) {
        out.push(typeError(at, value, 'array'));
        return;
      }
      if (typeof schema['maxItems'] === 'number' && value.length > schema['maxItems']) {
        out.push(tooMany(at, value.length, schema['maxItems']));
        return;
      }
      const items = schema['items'];
      if (isSchema(items)) value.forEach((item, i) => walk(item, items, at.index(i), options, out));
      return;
    }
    case 'string': {
      if (typeof value !== 'string') {
        out.push(typeError(at, value, 'string'));
        return;
      }
      if (Array.isArray(schema['enum']) && !schema['enum'].includes(value)) {
        out.push(notSupported(at, value, (schema['enum'] as unknown[]).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)))));
      }
      if (schema['format'] === 'date-time' && !DATE_TIME.test(value)) {
        out.push(typeInvalid(at, value, `${at.toString()} in body must be of type date-time: "${value}"`));
      }
      return;
    }
    case 'integer':
    case 'number': {
      if (typeof value !== 'number' || (type === 'integer' && !Number.isInteger(value))) {
        out.push(typeError(at, value, type));
        return;
      }
      if (typeof schema['minimum'] === 'number' && value < schema['minimum']) {
        out.push(invalid(at, value, `${at.toString()} in body should be greater than or equal to ${schema['minimum']}`));
      }
      if (typeof schema['maximum'] === 'number' && value > schema['maximum']) {
        out.push(invalid(at, value, `${at.toString()} in body should be less than or equal to ${schema['maximum']}`));
      }
      if (type === 'integer' && typeof schema['format'] === 'string') {
        const range = rangeError(at, value, schema['format']);
        if (range !== undefined) out.push(range);
      }
      return;
    }
    case 'boolean':
      if (typeof value !== 'boolean') out.push(typeError(at, value, 'boolean'));
      return;
    default:
      return;
  }
}

/**
 * Validates a whole object against its root schema. Paths start at the root's
 * properties (`spec.…`, `metadata`), as the API server prints them; a root that
 * is not an object is reported on the empty path (`[]`).
 */
export function validateStructure(value: unknown, schema: object, options: StructuralOptions = {}): FieldError[] {
  const out: FieldError[] = [];
  walk(value, schema as Schema, undefined, options, out);
  return out;
}
