/**
 * Shared pieces of the strategic merge patch: the directive names, JSON value
 * kinds as Go's reflect sees them, upstream's error texts (with Go's %v
 * formatting of decoded JSON), and the cleanup applied to values that are
 * copied verbatim from a patch.
 */
import { isPlainObject, setProperty } from './json.ts';

export const DIRECTIVE = '$patch';
export const RETAIN_KEYS = '$retainKeys';
export const DELETE_PREFIX = '$deleteFromPrimitiveList';
export const ORDER_PREFIX = '$setElementOrder';

export type JsonMap = Record<string, unknown>;
export type Kind = 'map' | 'slice' | 'string' | 'number' | 'bool' | 'null';

export class PatchError {
  constructor(readonly message: string) {}
}

export const hasOwn = (o: JsonMap, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k) && o[k] !== undefined;

export function kindOf(v: unknown): Kind {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'slice';
  if (isPlainObject(v)) return 'map';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  return 'number';
}

/** Go's %v of a decoded JSON value, for error messages. */
export function goFormat(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goFormat).join(' ')}]`;
  if (isPlainObject(v)) return `map[${Object.keys(v).sort().map((k) => `${k}:${goFormat(v[k])}`).join(' ')}]`;
  return String(v);
}

/** reflect.TypeOf(...).String() of a decoded JSON value. */
export function goType(v: unknown): string {
  switch (kindOf(v)) {
    case 'map':
      return 'map[string]interface {}';
    case 'slice':
      return '[]interface {}';
    case 'string':
      return 'string';
    case 'bool':
      return 'bool';
    case 'number':
      return Number.isInteger(v) ? 'int64' : 'float64';
    default:
      return '<nil>';
  }
}

export const errBadArgType = (expected: string, actual: unknown): PatchError => new PatchError(`expected a ${expected}, but received a ${goType(actual)}`);
export const errNoMergeKey = (m: unknown, key: string): PatchError => new PatchError(`map: ${goFormat(m)} does not contain declared merge key: ${key}`);
export const errBadPatchType = (t: unknown, m: unknown): PatchError => new PatchError(`unknown patch type: ${goFormat(t)} in map: ${goFormat(m)}`);

/** The cleanup that makes a value copied from the patch look like what the typed decoder would have kept. */
export function sanitize(v: unknown): { keep: boolean; value: unknown } {
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (const e of v) {
      const s = sanitize(e);
      if (s.keep) out.push(s.value);
    }
    return { keep: true, value: out };
  }
  if (isPlainObject(v)) {
    if (hasOwn(v, DIRECTIVE)) return { keep: false, value: undefined };
    const out: JsonMap = {};
    for (const [k, e] of Object.entries(v)) {
      if (e === null || e === undefined || k === RETAIN_KEYS || k.startsWith(DELETE_PREFIX) || k.startsWith(ORDER_PREFIX)) continue;
      const s = sanitize(e);
      if (s.keep) setProperty(out, k, s.value);
    }
    return { keep: true, value: out };
  }
  return { keep: true, value: v };
}
