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

function defaultNode(value: unknown, schema: Schema | undefined, apply: boolean): boolean {
  if (schema === undefined) return false;
  let changed = false;
  if (Array.isArray(value)) {
    const items = itemsSchema(schema);
    if (items !== undefined) for (const el of value) changed = defaultNode(el, items, apply) || changed;
    return changed;
  }
  if (!isRecord(value)) return false;
  const props = properties(schema);
  for (const [key, ps] of Object.entries(props)) {
    if (!('default' in ps)) continue;
    const current = value[key];
    if (current === undefined || (current === null && !isNullable(ps))) {
      if (!apply) return true;
      value[key] = structuredClone(ps['default']);
      changed = true;
    }
  }
  const additional = additionalPropertiesSchema(schema);
  for (const key of Object.keys(value)) {
    const childSchema = props[key] ?? (additional !== undefined && additional !== true ? additional : undefined);
    if (childSchema !== undefined) changed = defaultNode(value[key], childSchema, apply) || changed;
    if (changed && !apply) return true;
  }
  return changed;
}

/** Applies the schema's defaults to `obj` in place; true when something was set. */
export function defaultResource(obj: unknown, schema: Schema | undefined): boolean {
  return defaultNode(obj, schema, true);
}

/** Whether defaulting would change `obj` (nothing is written). */
export function needsDefaults(obj: unknown, schema: Schema | undefined): boolean {
  return defaultNode(obj, schema, false);
}

/** Whether a schema declares any default at all (objects read back need no walk otherwise). */
export function hasDefaults(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.some(hasDefaults);
  if (typeof schema !== 'object' || schema === null) return false;
  const rec = schema as Record<string, unknown>;
  if ('default' in rec) return true;
  return ['properties', 'items', 'additionalProperties'].some((k) => {
    const v = rec[k];
    if (k === 'properties' && typeof v === 'object' && v !== null) return Object.values(v).some(hasDefaults);
    return hasDefaults(v);
  });
}
