/**
 * The JSON Patch (RFC 6902) that turns one JSON document into another, in
 * time and memory linear in the size of what differs.
 *
 * Why not a general minimal diff: a minimal diff of arrays (edit distance)
 * is quadratic, and an admission answer must not be — a pod may carry
 * thousands of node selector terms or tolerations, and one slow answer stalls
 * every admission behind it. The documents compared here are a request's
 * object and the copy a webhook changed, so the changes are local and the
 * cheap patch is also a small one:
 *
 * - a subtree that is the same object on both sides (injection shares what it
 *   does not write into) is skipped without looking inside;
 * - objects are compared key by key; arrays index by index over their common
 *   length, then the tail is added (ascending) or removed (descending, so
 *   every index is valid when its operation is applied);
 * - a value whose type changed is replaced whole.
 *
 * Each node of either document is visited at most once, and the walk keeps
 * its own stack, so neither time nor the call stack grows with the shape of
 * the input (depth, array lengths) beyond its size. Pure; never mutates its
 * arguments; the operations reference values of `to` (callers serialize them).
 */
import { isPlainObject } from './json.ts';

export type JsonPatchOperation =
  | { op: 'add'; path: string; value: unknown }
  | { op: 'replace'; path: string; value: unknown }
  | { op: 'remove'; path: string };

/** One reference token of a JSON Pointer (RFC 6901 §3): `~` → `~0`, `/` → `~1`. */
export function escapePointerToken(token: string): string {
  return token.includes('~') || token.includes('/') ? token.replace(/~/g, '~0').replace(/\//g, '~1') : token;
}

interface Pending {
  from: unknown;
  to: unknown;
  path: string;
}

/** A JSON value as it travels: `undefined` (an absent property) is not a value. */
function present(v: unknown): boolean {
  return v !== undefined;
}

function sameScalar(a: unknown, b: unknown): boolean {
  // JSON has no NaN; two NaNs are the same absent number, as deepEqual treats them.
  return a === b || (typeof a === 'number' && typeof b === 'number' && Number.isNaN(a) && Number.isNaN(b));
}

/**
 * The operations that, applied in order to `from`, give a document equal to
 * `to` (objects compare by their defined keys, arrays element-wise). [] when
 * they are equal.
 */
export function diffJson(from: unknown, to: unknown): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  const stack: Pending[] = [{ from, to, path: '' }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { from: a, to: b, path } = item;
    if (a === b) continue;
    if (isPlainObject(a) && isPlainObject(b)) {
      for (const key of Object.keys(a)) {
        if (present(a[key]) && !(Object.prototype.hasOwnProperty.call(b, key) && present(b[key]))) {
          ops.push({ op: 'remove', path: `${path}/${escapePointerToken(key)}` });
        }
      }
      for (const key of Object.keys(b)) {
        const next = b[key];
        if (!present(next)) continue;
        const keyPath = `${path}/${escapePointerToken(key)}`;
        const prev = Object.prototype.hasOwnProperty.call(a, key) ? a[key] : undefined;
        if (!present(prev)) ops.push({ op: 'add', path: keyPath, value: next });
        else if (prev !== next) stack.push({ from: prev, to: next, path: keyPath });
      }
      continue;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      const common = Math.min(a.length, b.length);
      for (let i = a.length - 1; i >= common; i--) ops.push({ op: 'remove', path: `${path}/${i}` });
      for (let i = common; i < b.length; i++) ops.push({ op: 'add', path: `${path}/${i}`, value: b[i] ?? null });
      for (let i = 0; i < common; i++) {
        const prev = a[i] ?? null;
        const next = b[i] ?? null;
        if (prev !== next) stack.push({ from: prev, to: next, path: `${path}/${i}` });
      }
      continue;
    }
    const bothContainers = (isPlainObject(a) || Array.isArray(a)) && (isPlainObject(b) || Array.isArray(b));
    if (bothContainers || !sameScalar(a, b)) {
      // The root of a document cannot be removed or added, only replaced.
      ops.push({ op: 'replace', path, value: b });
    }
  }
  return ops;
}
