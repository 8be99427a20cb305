/**
 * Reading untrusted JSON without crashing: the validators receive whatever a
 * client sent, so every field may be missing, null or of the wrong type.
 * These accessors answer "the value, if it has the expected JSON type", and
 * `undefined` otherwise; JSON `null` counts as absent, as it does for Go's
 * pointer and omitempty fields.
 */

export type JsonRecord = Record<string, unknown>;

export function asRecord(value: unknown): JsonRecord | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonRecord) : undefined;
}

export function asArray(value: unknown): unknown[] | undefined {
  return Array.isArray(value) ? value : undefined;
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function asNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** A string field; missing or non-string reads as `''` (Go's zero value). */
export function stringField(record: JsonRecord | undefined, key: string): string {
  return asString(record?.[key]) ?? '';
}

/** A list field; missing or non-list reads as `[]`. */
export function arrayField(record: JsonRecord | undefined, key: string): unknown[] {
  return asArray(record?.[key]) ?? [];
}

/** A map of strings (labels, annotations, nodeSelector); non-string values are skipped. */
export function stringMap(value: unknown): [string, string][] {
  const record = asRecord(value);
  if (record === undefined) return [];
  return Object.entries(record).filter((entry): entry is [string, string] => typeof entry[1] === 'string');
}

/** The JSON type name of a value, as OpenAPI validators name it. */
export function jsonTypeName(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'object') return 'object';
  return typeof value;
}
