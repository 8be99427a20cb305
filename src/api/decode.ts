/**
 * Decoding a WorkloadSpread where it enters the process (the informer cache's
 * transform, an admission request, a file the CLI reads), against the one
 * TypeBox schema (workloadspread.ts, as its generated JSON copy) — so everything past the boundary works
 * on a typed value and never re-checks shapes: `spec.subsets` is an array of
 * subsets with names, `targetRef` has its three strings, a subset status has
 * its name and counts, and so on.
 *
 * Objects from an API server already passed the CRD's structural schema (the
 * same schema), so decoding fails only for a hand-made or corrupted object;
 * the error names the first fields at fault. JSON `null` in a field the schema
 * knows counts as absent and is dropped from the decoded copy (the API server
 * prunes those too); nulls inside a subset `patch` are kept, because a
 * strategic merge patch uses null to delete a key.
 */
import { formatFieldError } from '../k8s/field-errors.ts';
import { isPlainObject } from '../k8s/json.ts';
import { validateResource } from '../k8s/crd-schema/resource-validation.ts';
import type { WorkloadSpread } from './workloadspread.ts';
// The schema of workloadspread.ts as plain JSON (json-schema-module.ts): decoding does not load TypeBox.
import { WORKLOADSPREAD_JSON_SCHEMA as WorkloadSpreadSchema } from './workloadspread-json-schema.ts';

export type Decoded<T> = { ok: true; value: T } | { ok: false; error: string };

type Schema = Record<string, unknown>;

/** How many field errors a decode error quotes before "and N more". */
const QUOTED_ERRORS = 3;

/**
 * Whether `value` holds a null anywhere at all: a walk that reads no schema and
 * builds nothing. An object the API server stored has none (it prunes them),
 * so this is all decoding costs for one; `hasKnownNull` answers the rest.
 */
function containsNull(value: unknown): boolean {
  if (value === null) return true;
  if (typeof value !== 'object') return false;
  if (Array.isArray(value)) {
    for (const item of value) if (containsNull(item)) return true;
    return false;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) if (containsNull(record[key])) return true;
  return false;
}

/** Whether `value` holds a null anywhere the schema describes (outside preserve-unknown fields). */
function hasKnownNull(value: unknown, schema: Schema): boolean {
  if (schema['x-kubernetes-preserve-unknown-fields'] === true) return false;
  if (Array.isArray(value)) {
    const items = schema['items'];
    return isPlainObject(items) && value.some((v) => v === null || hasKnownNull(v, items));
  }
  if (!isPlainObject(value)) return false;
  const properties = isPlainObject(schema['properties']) ? schema['properties'] : {};
  const additional = schema['additionalProperties'];
  for (const [key, child] of Object.entries(value)) {
    const childSchema = isPlainObject(properties[key]) ? properties[key] : isPlainObject(additional) ? additional : undefined;
    if (childSchema === undefined) continue;
    if (child === null || hasKnownNull(child, childSchema)) return true;
  }
  return false;
}

/** A copy without the nulls of known fields (null list items are dropped too). */
function withoutKnownNulls(value: unknown, schema: Schema): unknown {
  if (schema['x-kubernetes-preserve-unknown-fields'] === true) return value;
  if (Array.isArray(value)) {
    const items = schema['items'];
    return isPlainObject(items) ? value.filter((v) => v !== null).map((v) => withoutKnownNulls(v, items)) : value;
  }
  if (!isPlainObject(value)) return value;
  const properties = isPlainObject(schema['properties']) ? schema['properties'] : {};
  const additional = schema['additionalProperties'];
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    const childSchema = isPlainObject(properties[key]) ? properties[key] : isPlainObject(additional) ? additional : undefined;
    if (childSchema === undefined) out[key] = child;
    else if (child !== null) out[key] = withoutKnownNulls(child, childSchema);
  }
  return out;
}

/** Decodes a WorkloadSpread (spec §1); the error names the object and its first field errors. */
export function decodeWorkloadSpread(raw: unknown): Decoded<WorkloadSpread> {
  if (!isPlainObject(raw)) return { ok: false, error: 'a WorkloadSpread must be a JSON object' };
  const metadata = raw['metadata'];
  if (!isPlainObject(metadata) || typeof metadata['name'] !== 'string') {
    return { ok: false, error: 'a WorkloadSpread must have metadata.name' };
  }
  const label = `WorkloadSpread ${typeof metadata['namespace'] === 'string' ? `${metadata['namespace']}/` : ''}${metadata['name']}`;
  const errors = validateResource(raw, WorkloadSpreadSchema);
  if (errors.length > 0) {
    const quoted = errors.slice(0, QUOTED_ERRORS).map(formatFieldError).join('; ');
    const more = errors.length > QUOTED_ERRORS ? ` (and ${errors.length - QUOTED_ERRORS} more)` : '';
    return { ok: false, error: `${label} cannot be read: ${quoted}${more}` };
  }
  const schema = WorkloadSpreadSchema;
  const value = containsNull(raw) && hasKnownNull(raw, schema) ? withoutKnownNulls(raw, schema) : raw;
  return { ok: true, value: value as unknown as WorkloadSpread };
}
