/**
 * `x-kubernetes-list-type` uniqueness (apiextensions-apiserver
 * pkg/apiserver/schema/listtype): a `set` may not repeat a value, a `map` may
 * not repeat the tuple of its `x-kubernetes-list-map-keys`. Each repeat is a
 * `Duplicate value` error at the repeating element (`spec.ports[1]`), the
 * value being the element (set) or its key fields (map). `atomic` lists and
 * lists without a type are not checked.
 */
import { duplicate, type FieldError } from '../field-errors.ts';
import { additionalPropertiesSchema, childPath, indexPath, itemsSchema, properties, type Schema } from './structural.ts';

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function walk(value: unknown, schema: Schema | undefined, path: string, errs: FieldError[]): void {
  if (schema === undefined) return;
  if (Array.isArray(value)) {
    const listType = schema['x-kubernetes-list-type'];
    if (listType === 'set') {
      const seen = new Set<string>();
      value.forEach((el, i) => {
        const key = JSON.stringify(el);
        if (seen.has(key)) errs.push(duplicate(indexPath(path, i), el));
        seen.add(key);
      });
    } else if (listType === 'map') {
      const keys = (Array.isArray(schema['x-kubernetes-list-map-keys']) ? schema['x-kubernetes-list-map-keys'] : []).filter((k): k is string => typeof k === 'string');
      const seen = new Set<string>();
      value.forEach((el, i) => {
        if (!isRecord(el)) return;
        const tuple: Record<string, unknown> = {};
        for (const k of keys) if (el[k] !== undefined) tuple[k] = el[k];
        const id = JSON.stringify(keys.map((k) => el[k] ?? null));
        if (seen.has(id)) errs.push(duplicate(indexPath(path, i), tuple));
        seen.add(id);
      });
    }
    const items = itemsSchema(schema);
    value.forEach((el, i) => walk(el, items, indexPath(path, i), errs));
    return;
  }
  if (!isRecord(value)) return;
  const props = properties(schema);
  const additional = additionalPropertiesSchema(schema);
  for (const key of Object.keys(value)) {
    const child = props[key] ?? (additional !== undefined && additional !== true ? additional : undefined);
    walk(value[key], child, childPath(path, key), errs);
  }
}

export function validateListTypes(obj: unknown, schema: Schema | undefined): FieldError[] {
  const errs: FieldError[] = [];
  walk(obj, schema, '', errs);
  return errs;
}
