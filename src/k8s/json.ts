/**
 * JSON value helpers with the semantics of a Kubernetes object on the wire:
 * key order never matters, and a property whose value is `undefined` does not
 * exist (JSON.stringify drops it). Everything here is pure and never mutates
 * its arguments.
 */

/** True for `{...}` object literals and JSON.parse results (not arrays, null, Dates or class instances). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * Structural equality as two JSON documents would compare: objects by their
 * defined keys regardless of order, arrays element-wise (an `undefined` element
 * serializes as null, so it equals null), primitives by value.
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      if (!deepEqual(a[i] ?? null, b[i] ?? null)) return false;
    }
    return true;
  }
  if (isPlainObject(a)) {
    if (!isPlainObject(b)) return false;
    const aKeys = definedKeys(a);
    const bKeys = definedKeys(b);
    if (aKeys.length !== bKeys.length) return false;
    for (const k of aKeys) {
      if (!Object.prototype.hasOwnProperty.call(b, k) || b[k] === undefined) return false;
      if (!deepEqual(a[k], b[k])) return false;
    }
    return true;
  }
  // NaN cannot travel in JSON; treat two NaNs as the same (absent) value rather than surprise callers.
  return typeof a === 'number' && typeof b === 'number' && Number.isNaN(a) && Number.isNaN(b);
}

function definedKeys(o: Record<string, unknown>): string[] {
  return Object.keys(o).filter((k) => o[k] !== undefined);
}

/** A deep copy of a JSON-like value; shares nothing with the input. */
export function deepClone<T>(v: T): T {
  return structuredClone(v);
}

/**
 * Sets an own property, also for the key "__proto__" (which JSON.parse
 * produces as a plain key but a normal assignment would treat as the prototype).
 */
export function setProperty(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}
