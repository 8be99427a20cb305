/**
 * Schema validation of custom resources: the CRD's `openAPIV3Schema`
 * translated to a JSON Schema that ajv compiles once, and ajv's errors
 * translated back into the field errors the API server reports
 * (apiextensions-apiserver `validation.ValidateCustomResource`, whose texts
 * come from kube-openapi's validators):
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
 * OpenAPI v3.0 specifics mapped to JSON Schema: `nullable`,
 * `x-kubernetes-int-or-string` (type integer or string), boolean
 * `exclusiveMinimum`/`exclusiveMaximum`. Formats: the ones Kubernetes checks
 * that users meet (date-time, date, uuid, ipv4, ipv6, cidr, mac, hostname,
 * email, byte, duration, uri); other format names are accepted unchecked,
 * as upstream ignores unknown formats.
 */
import * as AjvModule from 'ajv';
import type { Ajv as AjvClass, ErrorObject, ValidateFunction } from 'ajv';
import { invalid, notSupported, required, tooLong, tooMany, typeInvalid, type FieldError } from '../field-errors.ts';
import { jsonTypeName } from '../raw-json.ts';
import { asSchema, type Schema } from './structural.ts';

// ajv ships CommonJS with `exports.default`; under NodeNext the default import is the module object.
const Ajv = (AjvModule as unknown as { Ajv: typeof AjvClass }).Ajv;

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

const SCHEMA_KEYWORDS = ['enum', 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern', 'minItems', 'maxItems', 'uniqueItems', 'multipleOf', 'minProperties', 'maxProperties', 'required'];

/** Translates one node of a CRD schema to the JSON Schema ajv understands. */
export function toJsonSchema(node: unknown): Record<string, unknown> {
  const s = asSchema(node);
  if (s === undefined) return {};
  const out: Record<string, unknown> = {};
  let types: string[] | undefined;
  if (s['x-kubernetes-int-or-string'] === true) types = ['integer', 'string'];
  else if (typeof s['type'] === 'string' && s['type'] !== '') types = [s['type']];
  if (types !== undefined) {
    if (s['nullable'] === true) types = [...types, 'null'];
    out['type'] = types.length === 1 ? types[0] : types;
  }
  for (const k of SCHEMA_KEYWORDS) if (s[k] !== undefined) out[k] = s[k];
  if (Array.isArray(out['enum']) && s['nullable'] === true && !(out['enum'] as unknown[]).includes(null)) out['enum'] = [...(out['enum'] as unknown[]), null];
  if (typeof s['format'] === 'string' && FORMATS[s['format']] !== undefined) out['format'] = s['format'];
  if (s['exclusiveMinimum'] === true && typeof s['minimum'] === 'number') {
    out['exclusiveMinimum'] = s['minimum'];
    delete out['minimum'];
  }
  if (s['exclusiveMaximum'] === true && typeof s['maximum'] === 'number') {
    out['exclusiveMaximum'] = s['maximum'];
    delete out['maximum'];
  }
  const props = asSchema(s['properties']);
  if (props !== undefined) out['properties'] = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, toJsonSchema(v)]));
  if (s['items'] !== undefined) out['items'] = toJsonSchema(s['items']);
  if (asSchema(s['additionalProperties']) !== undefined) out['additionalProperties'] = toJsonSchema(s['additionalProperties']);
  for (const k of ['allOf', 'anyOf', 'oneOf'] as const) {
    // The integer/string anyOf that accompanies int-or-string says what the type already says.
    if (k === 'anyOf' && s['x-kubernetes-int-or-string'] === true) continue;
    if (Array.isArray(s[k])) out[k] = (s[k] as unknown[]).map(toJsonSchema);
  }
  if (s['not'] !== undefined) out['not'] = toJsonSchema(s['not']);
  return out;
}

/** A compiled validator of one CRD version's schema. */
export interface SchemaValidator {
  /** Field errors of `obj`; `rootPath` prefixes every path (a default is checked at its own place in the CRD). */
  validate(obj: unknown, rootPath?: string): FieldError[];
}

function newAjv(): AjvClass {
  const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: true });
  for (const [name, check] of Object.entries(FORMATS)) {
    ajv.addFormat(name, typeof check === 'function' ? { type: 'string', validate: check } : check);
  }
  return ajv;
}

/** Compiles a schema; an uncompilable one (a bad pattern...) yields a validator that reports it. */
export function compileSchema(schema: Schema | undefined): SchemaValidator {
  if (schema === undefined) return { validate: () => [] };
  let fn: ValidateFunction;
  try {
    fn = newAjv().compile(toJsonSchema(schema));
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { validate: () => [invalid('', '', `the schema of this resource cannot be compiled: ${message}`)] };
  }
  return {
    validate: (obj, rootPath = '') => {
      if (fn(obj)) return [];
      return translateErrors(fn.errors ?? [], obj, rootPath);
    },
  };
}

/** Walks a JSON pointer through the data to spell the path as kube-openapi does and find the value. */
function locate(pointer: string, data: unknown, rootPath: string): { path: string; value: unknown } {
  let path = rootPath;
  let node: unknown = data;
  if (pointer === '') return { path, value: node };
  for (const raw of pointer.slice(1).split('/')) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      path = `${path}[${seg}]`;
      node = node[Number(seg)];
    } else {
      path = path === '' ? seg : `${path}.${seg}`;
      node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[seg] : undefined;
    }
  }
  return { path, value: node };
}

const COMBINATORS = ['/anyOf/', '/oneOf/', '/not/'];

function numberText(n: unknown): string {
  return typeof n === 'number' ? String(n) : JSON.stringify(n);
}

function translateOne(e: ErrorObject, data: unknown, rootPath: string): FieldError | undefined {
  const { path, value } = locate(e.instancePath, data, rootPath);
  const name = path;
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'type': {
      const expected = Array.isArray(p['type']) ? (p['type'] as string[]).join(',') : String(p['type']);
      const actual = jsonTypeName(value);
      return typeInvalid(path, actual, `${name} in body must be of type ${expected}: ${JSON.stringify(actual)}`);
    }
    case 'required':
      return required(path === '' ? String(p['missingProperty']) : `${path}.${String(p['missingProperty'])}`);
    case 'enum': {
      const allowed = ((p['allowedValues'] as unknown[] | undefined) ?? []).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
      return notSupported(path, value, allowed);
    }
    case 'minimum':
      return invalid(path, value, `${name} in body should be greater than or equal to ${numberText(p['limit'])}`);
    case 'exclusiveMinimum':
      return invalid(path, value, `${name} in body should be greater than ${numberText(p['limit'])}`);
    case 'maximum':
      return invalid(path, value, `${name} in body should be less than or equal to ${numberText(p['limit'])}`);
    case 'exclusiveMaximum':
      return invalid(path, value, `${name} in body should be less than ${numberText(p['limit'])}`);
    case 'maxLength':
      return tooLong(path, value, Number(p['limit']));
    case 'minLength':
      return invalid(path, value, `${name} in body should be at least ${numberText(p['limit'])} chars long`);
    case 'pattern':
      return invalid(path, value, `${name} in body should match '${String(p['pattern'])}'`);
    case 'format':
      return invalid(path, value, `${name} in body must be of type ${String(p['format'])}: ${JSON.stringify(value)}`);
    case 'minItems':
      return invalid(path, value, `${name} in body should have at least ${numberText(p['limit'])} items`);
    case 'maxItems':
      return tooMany(path, Array.isArray(value) ? value.length : -1, Number(p['limit']));
    case 'uniqueItems':
      return invalid(path, value, `${name} in body shouldn't contain duplicates`);
    case 'multipleOf':
      return invalid(path, value, `${name} in body should be a multiple of ${numberText(p['multipleOf'])}`);
    case 'minProperties':
      return invalid(path, value, `${name} in body should have at least ${numberText(p['limit'])} properties`);
    case 'maxProperties':
      return tooMany(path, typeof value === 'object' && value !== null ? Object.keys(value).length : -1, Number(p['limit']));
    case 'anyOf':
      return invalid(path, value, `${name} in body must validate at least one schema (anyOf)`);
    case 'oneOf':
      return invalid(path, value, `${name} in body must validate one and only one schema (oneOf)`);
    case 'not':
      return invalid(path, value, `${name} in body must not validate the schema (not)`);
    default:
      return invalid(path, value, `${name} in body ${e.message ?? 'is invalid'}`);
  }
}

/** ajv errors → field errors; errors inside anyOf/oneOf/not branches are summarised by the combinator's own error. */
export function translateErrors(errors: readonly ErrorObject[], data: unknown, rootPath = ''): FieldError[] {
  const out: FieldError[] = [];
  for (const e of errors) {
    if (COMBINATORS.some((c) => e.schemaPath.includes(c))) continue;
    const fe = translateOne(e, data, rootPath);
    if (fe !== undefined) out.push(fe);
  }
  return out;
}
