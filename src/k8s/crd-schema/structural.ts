/**
 * Reading a CRD's `openAPIV3Schema` (JSONSchemaProps, apiextensions.k8s.io/v1)
 * as the structural skeleton the API server works with: the `properties`,
 * `items` and `additionalProperties` that pruning and defaulting walk, plus
 * the `x-kubernetes-*` flags that change what a node means.
 *
 * Schemas come from stored CRDs and may be malformed in any way the CRD
 * validation did not catch: every accessor answers `undefined` rather than
 * throwing. Value validations (`allOf`, `anyOf`, `oneOf`, `not`) are not part
 * of the skeleton (upstream requires their properties to be mirrored in it).
 */
import { OBJECT_META_FIELDS as OBJECT_META_FIELD_NAMES } from '../meta-validation.ts';
import { asRecord } from '../raw-json.ts';

export type Schema = Record<string, unknown>;

export function asSchema(value: unknown): Schema | undefined {
  return asRecord(value);
}

/** The schema of a property of an object node, when declared. */
export function propertySchema(schema: Schema | undefined, key: string): Schema | undefined {
  const props = asRecord(schema?.['properties']);
  if (props === undefined || !Object.prototype.hasOwnProperty.call(props, key)) return undefined;
  return asSchema(props[key]);
}

export function properties(schema: Schema | undefined): Record<string, Schema> {
  const props = asRecord(schema?.['properties']) ?? {};
  const out: Record<string, Schema> = {};
  for (const [k, v] of Object.entries(props)) {
    const s = asSchema(v);
    if (s !== undefined) out[k] = s;
  }
  return out;
}

export function hasProperties(schema: Schema | undefined): boolean {
  return asRecord(schema?.['properties']) !== undefined;
}

/** The schema of map values (`additionalProperties: {...}`); `true` counts as "anything, unpruned". */
export function additionalPropertiesSchema(schema: Schema | undefined): Schema | true | undefined {
  const ap = schema?.['additionalProperties'];
  if (ap === true) return true;
  return asSchema(ap);
}

export function itemsSchema(schema: Schema | undefined): Schema | undefined {
  return asSchema(schema?.['items']);
}

export function preservesUnknownFields(schema: Schema | undefined): boolean {
  return schema?.['x-kubernetes-preserve-unknown-fields'] === true;
}

export function isEmbeddedResource(schema: Schema | undefined): boolean {
  return schema?.['x-kubernetes-embedded-resource'] === true;
}

export function isIntOrString(schema: Schema | undefined): boolean {
  return schema?.['x-kubernetes-int-or-string'] === true;
}

export function isNullable(schema: Schema | undefined): boolean {
  return schema?.['nullable'] === true;
}

/** The fields of ObjectMeta: everything else under a resource's `metadata` is dropped on decode. */
export const OBJECT_META_FIELDS: ReadonlySet<string> = new Set(OBJECT_META_FIELD_NAMES);

/** A `.a.b[0]`-style path (kube-openapi's: dots between fields, brackets for indexes). */
export function childPath(parent: string, key: string): string {
  return parent === '' ? key : `${parent}.${key}`;
}

export function indexPath(parent: string, i: number): string {
  return `${parent}[${i}]`;
}
