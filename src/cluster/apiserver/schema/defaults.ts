/**
 * Defaulting of custom resources from the `default` values of their
 * structural schema (apiextensions-apiserver pkg/apiserver/schema/defaulting).
 *
 * - a property with a `default` that is absent (or null while not
 *   `nullable`) gets a copy of the default;
 * - defaulting is top-down: a defaulted object is then walked too, so
 *   defaults nested inside it apply; a nested default applies only when its
 *   parent object exists (defaults never create parents);
 * - map values (`additionalProperties`) and list items are walked.
 * Applied on create, update and patch, and to objects as they are read back,
 * so a default added to a CRD later shows up on existing objects.
 * `defaultResource` answers whether anything changed (reads keep the stored
 * object when nothing did).
 */
import { additionalPropertiesSchema, isNullable, itemsSchema, properties, type Schema } from './structural.ts';

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function defaultNode(value: unknown, schema: Schema | undefined): boolean {
  if (schema === undefined) return false;
  let changed = false;
  if (Array.isArray(value)) {
    const items = itemsSchema(schema);
    if (items !== undefined) for (const el of value) changed = defaultNode(el, items) || changed;
    return changed;
  }
  if (!isRecord(value)) return false;
  const props = properties(schema);
  for (const [key, ps] of Object.entries(props)) {
    if (!('default' in ps)) continue;
    const current = value[key];
    if (current === undefined || (current === null && !isNullable(ps))) {
      value[key] = structuredClone(ps['default']);
      changed = true;
    }
  }
  const additional = additionalPropertiesSchema(schema);
  for (const key of Object.keys(value)) {
    const childSchema = props[key] ?? (additional !== undefined && additional !== true ? additional : undefined);
    if (childSchema !== undefined) changed = defaultNode(value[key], childSchema) || changed;
  }
  return changed;
}

/** Applies the schema's defaults to `obj` in place; true when something was set. */
export function defaultResource(obj: unknown, schema: Schema | undefined): boolean {
  return defaultNode(obj, schema);
}
