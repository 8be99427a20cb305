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

/** Below this depth `deepClone` copies in JavaScript; deeper subtrees (never seen on the wire) go to structuredClone. */
const COPY_DEPTH = 64;

/**
 * A deep copy of a JSON-like value; shares nothing with the input. Plain
 * objects and arrays are copied here, which for the small values admission
 * copies (a subset's terms and tolerations, a pod) is several times cheaper
 * than `structuredClone`'s serialize-and-read round trip; anything else (a
 * Date, a Map, a subtree deeper than any Kubernetes object) is left to
 * `structuredClone`, with its semantics.
 */
export function deepClone<T>(v: T): T {
  return copyValue(v, 0) as T;
}

function copyValue(v: unknown, depth: number): unknown {
  if (typeof v !== 'object' || v === null) return typeof v === 'function' || typeof v === 'symbol' ? structuredClone(v) : v;
  if (depth >= COPY_DEPTH) return structuredClone(v);
  if (Array.isArray(v)) {
    const out: unknown[] = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) out[i] = copyValue(v[i], depth + 1);
    return out;
  }
  if (!isPlainObject(v)) return structuredClone(v);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(v)) setProperty(out, key, copyValue(v[key], depth + 1));
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
