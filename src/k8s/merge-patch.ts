/**
 * JSON Merge Patch (RFC 7396), the `application/merge-patch+json` PATCH body:
 * an object patch merges key by key (null deletes), anything else replaces the
 * target wholesale (arrays included). Inputs are never mutated; the result
 * shares no structure with either input.
 */
import { deepClone, deepEqual, isPlainObject, setProperty } from './json.ts';

export function jsonMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return deepClone(patch);
  const result: Record<string, unknown> = isPlainObject(target) ? deepClone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null) delete result[key];
    else setProperty(result, key, jsonMergePatch(Object.prototype.hasOwnProperty.call(result, key) ? result[key] : undefined, value));
  }
  return result;
}

/**
 * The merge patch that turns `original` into `modified` (the inverse of
 * jsonMergePatch for objects): changed keys carry their new value, removed
 * keys carry null, arrays and non-objects are sent whole. Returns `{}` when
 * nothing changed. A null inside `modified`'s objects cannot be expressed in a
 * merge patch (it would mean "delete"), as the RFC notes.
 */
export function createMergePatch(original: unknown, modified: unknown): unknown {
  if (!isPlainObject(original) || !isPlainObject(modified)) return deepClone(modified);
  const patch: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(modified)) {
    if (value === undefined) continue;
    const before = Object.prototype.hasOwnProperty.call(original, key) ? original[key] : undefined;
    if (before === undefined) {
      setProperty(patch, key, deepClone(value));
    } else if (isPlainObject(before) && isPlainObject(value)) {
      const sub = createMergePatch(before, value);
      if (isPlainObject(sub) && Object.keys(sub).length > 0) setProperty(patch, key, sub);
    } else if (!deepEqual(before, value)) {
      setProperty(patch, key, deepClone(value));
    }
  }
  for (const key of Object.keys(original)) {
    if (original[key] !== undefined && (!Object.prototype.hasOwnProperty.call(modified, key) || modified[key] === undefined)) setProperty(patch, key, null);
  }
  return patch;
}
