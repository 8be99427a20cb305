/**
 * Pruning of custom resources (apiextensions-apiserver pkg/apiserver/schema/pruning):
 * fields the structural schema does not declare are dropped on every write,
 * so clients can rely on "what the schema says is all there is".
 *
 * Rules reproduced:
 * - an object node keeps the keys listed in `properties`; with
 *   `additionalProperties: <schema>` every key is kept and its value walked;
 *   with `x-kubernetes-preserve-unknown-fields: true` undeclared keys stay (and
 *   are not walked); otherwise undeclared keys go;
 * - arrays are walked with `items`;
 * - at the resource root and in `x-kubernetes-embedded-resource` nodes,
 *   `apiVersion` and `kind` are always kept and `metadata` keeps only
 *   ObjectMeta's fields (plus whatever the schema declares inside it);
 * - JSON `null` in a field that is not `nullable` is dropped (defaulting may
 *   then fill it in), as the API server does before defaulting.
 * Returns the paths it removed (`spec.foo`, `metadata.bar`), which is what
 * strict field validation reports as unknown fields.
 */
import {
  additionalPropertiesSchema,
  childPath,
  indexPath,
  isEmbeddedResource,
  isNullable,
  itemsSchema,
  OBJECT_META_FIELDS,
  preservesUnknownFields,
  propertySchema,
  type Schema,
} from './structural.ts';

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function pruneObjectMeta(meta: Record<string, unknown>, path: string, removed: string[]): void {
  for (const key of Object.keys(meta)) {
    if (!OBJECT_META_FIELDS.has(key)) {
      delete meta[key];
      removed.push(childPath(path, key));
    } else if (meta[key] === null) {
      delete meta[key];
    }
  }
}

function pruneNode(value: unknown, schema: Schema | undefined, path: string, resourceRoot: boolean, removed: string[]): void {
  if (schema === undefined) return;
  if (Array.isArray(value)) {
    const items = itemsSchema(schema);
    if (items === undefined) return;
    value.forEach((el, i) => pruneNode(el, items, indexPath(path, i), isEmbeddedResource(items), removed));
    return;
  }
  if (!isRecord(value)) return;
  const preserve = preservesUnknownFields(schema);
  const additional = additionalPropertiesSchema(schema);
  for (const key of Object.keys(value)) {
    const child = value[key];
    const keyPath = childPath(path, key);
    if (resourceRoot && (key === 'apiVersion' || key === 'kind')) continue;
    if (resourceRoot && key === 'metadata') {
      if (isRecord(child)) pruneObjectMeta(child, keyPath, removed);
      continue;
    }
    const declared = propertySchema(schema, key);
    const childSchema = declared ?? (additional !== undefined && additional !== true ? additional : undefined);
    if (declared === undefined && additional === undefined && !preserve) {
      delete value[key];
      removed.push(keyPath);
      continue;
    }
    if (child === null && childSchema !== undefined && !isNullable(childSchema)) {
      delete value[key];
      continue;
    }
    pruneNode(child, childSchema, keyPath, isEmbeddedResource(childSchema), removed);
  }
}

/** Prunes `obj` (a resource: root rules apply) in place; answers the removed paths. */
export function pruneResource(obj: Record<string, unknown>, schema: Schema | undefined): string[] {
  const removed: string[] = [];
  if (schema === undefined) return removed;
  pruneNode(obj, schema, '', true, removed);
  return removed;
}

/** Prunes any value against a schema node (defaults at CRD validation time). */
export function pruneValue(value: unknown, schema: Schema | undefined, embedded = false): string[] {
  const removed: string[] = [];
  pruneNode(value, schema, '', embedded || isEmbeddedResource(schema), removed);
  return removed;
}
