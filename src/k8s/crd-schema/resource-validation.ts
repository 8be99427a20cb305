/**
 * What the API server reports for a whole custom resource against its schema,
 * for code that holds the object but not the server (the webhook, the
 * controller's decoding, the CLI's `validate`): the nulls of non-nullable
 * fields are pruned first, as the server does on decode (prune.ts), then the
 * object is validated (validator.ts) — the same two steps, in the same order,
 * as the embedded API server's custom-resource strategy.
 *
 * With `unknownFields: 'error'` the fields pruning would drop are errors too,
 * as the server's strict field validation (kubectl's default since 1.27)
 * reports them — `unknown field "spec.subsets[0].maxReplica"` — listed before
 * the validation errors. `skipRequired` names required fields (as printed)
 * whose absence the caller's own, semantic rules report instead.
 *
 * The object is never changed: it is copied only when something would be
 * pruned (a null) or unknown fields are asked for.
 */
import { required as requiredError, unknownField, type FieldError } from '../field-errors.ts';
import { pruneResource } from './prune.ts';
import type { Schema } from './structural.ts';
import { compileSchema, type SchemaValidator } from './validator.ts';

export interface ResourceValidationOptions {
  /** `error`: fields the schema does not declare are errors (strict); default `prune` (dropped silently, as the server does). */
  unknownFields?: 'prune' | 'error';
  /** Required fields (paths as printed, `spec.subsets`) whose absence is not reported here. */
  skipRequired?: ReadonlySet<string>;
}

/** Validators by schema object: the project's schemas are module constants, prepared once. */
const validators = new WeakMap<object, SchemaValidator>();

function validatorOf(schema: Schema): SchemaValidator {
  let v = validators.get(schema);
  if (v === undefined) {
    v = compileSchema(schema);
    validators.set(schema, v);
  }
  return v;
}

function containsNull(value: unknown): boolean {
  if (value === null) return true;
  if (typeof value !== 'object') return false;
  return Array.isArray(value) ? value.some(containsNull) : Object.values(value as Record<string, unknown>).some(containsNull);
}

const REQUIRED = requiredError('x').type;

/** The field errors of `obj` (a resource: an object with apiVersion, kind, metadata, ...) against its root `schema`. */
export function validateResource(obj: Record<string, unknown>, schema: object, options: ResourceValidationOptions = {}): FieldError[] {
  const s = schema as Schema;
  const strict = options.unknownFields === 'error';
  let subject = obj;
  let unknown: string[] = [];
  if (strict || containsNull(obj)) {
    subject = structuredClone(obj);
    unknown = pruneResource(subject, s);
  }
  const errors = validatorOf(s).validate(subject);
  const skip = options.skipRequired;
  const kept = skip === undefined ? errors : errors.filter((e) => !(e.type === REQUIRED && skip.has(e.field)));
  return strict ? [...unknown.map((path) => unknownField(path)), ...kept] : kept;
}
