/**
 * Reading untrusted YAML values with errors that name the field: every
 * reader takes the value, its path (`steps[3].scale.replicas`) and the
 * `Problems` list to add to, and returns the typed value or undefined.
 * Nothing throws; a scenario with ten mistakes reports ten lines.
 *
 * Paths use the notation of Kubernetes field errors: `.key` for mapping
 * keys, `[i]` for list items; keys that are not identifiers (label keys such
 * as `topology.kubernetes.io/zone`) are quoted: `labels["a.b/c"]`.
 */
import { isPlainObject } from '../k8s/json.ts';

export interface Problem {
  /** Where: `steps[3].scale.replicas`. */
  path: string;
  message: string;
}

export class Problems {
  readonly list: Problem[] = [];
  add(path: string, message: string): void {
    this.list.push({ path, message });
  }
  get empty(): boolean {
    return this.list.length === 0;
  }
}

/** `base.key`, or `base["odd key"]` when the key is not a plain identifier. */
export function child(base: string, key: string): string {
  const plain = /^[A-Za-z_][A-Za-z0-9_-]*$/.test(key);
  if (base === '') return plain ? key : `[${JSON.stringify(key)}]`;
  return plain ? `${base}.${key}` : `${base}[${JSON.stringify(key)}]`;
}

export function item(base: string, index: number): string {
  return `${base}[${index}]`;
}

export function describeType(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  // YAML 1.1 (kubectl's) reads y/n/yes/no/on/off as booleans: say so, it is the usual surprise.
  if (typeof value === 'boolean') return `the boolean ${String(value)} (quote it if you meant a string: YAML 1.1 reads y, n, yes, no, on, off as booleans)`;
  if (Array.isArray(value)) return 'a list';
  if (isPlainObject(value)) return 'a mapping';
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  return `${typeof value} ${String(value)}`;
}

/** Reports a missing value as `required`, anything else as `must be …, not …`. */
function wrongType(path: string, problems: Problems, what: string, value: unknown): undefined {
  problems.add(path, value === undefined ? `required (${what})` : `must be ${what}, not ${describeType(value)}`);
  return undefined;
}

export function readMapping(value: unknown, path: string, problems: Problems): Record<string, unknown> | undefined {
  if (isPlainObject(value)) return value;
  if (value === undefined) return wrongType(path, problems, 'a mapping', value);
  problems.add(path, `must be a mapping, not ${describeType(value)}`);
  return undefined;
}

export function readList(value: unknown, path: string, problems: Problems): unknown[] | undefined {
  if (Array.isArray(value)) return value;
  return wrongType(path, problems, 'a list', value);
}

export function readString(value: unknown, path: string, problems: Problems, options: { nonEmpty?: boolean } = {}): string | undefined {
  if (typeof value !== 'string') return wrongType(path, problems, 'a string', value);
  if (options.nonEmpty !== false && value === '') {
    problems.add(path, 'must not be empty');
    return undefined;
  }
  return value;
}

export function readNonNegativeInt(value: unknown, path: string, problems: Problems): number | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  return wrongType(path, problems, 'a non-negative integer', value);
}

export function readBoolean(value: unknown, path: string, problems: Problems): boolean | undefined {
  if (typeof value === 'boolean') return value;
  return wrongType(path, problems, 'true or false', value);
}

/** A mapping of strings to strings (labels, capacity): numbers are accepted and turned into strings, as kubectl does for quantities. */
export function readStringMap(value: unknown, path: string, problems: Problems, options: { numbers?: boolean } = {}): Record<string, string> | undefined {
  const map = readMapping(value, path, problems);
  if (map === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(map)) {
    if (typeof v === 'string') out[k] = v;
    else if (options.numbers === true && typeof v === 'number' && Number.isFinite(v)) out[k] = String(v);
    else problems.add(child(path, k), `must be a string, not ${describeType(v)}`);
  }
  return out;
}

/** Reports the keys of `map` that are not in `known` ("unknown field"), with the closest known one as a hint. */
export function rejectUnknownKeys(map: Record<string, unknown>, knownKeys: readonly string[], path: string, problems: Problems): void {
  const known = [...new Set(knownKeys)];
  for (const key of Object.keys(map)) {
    if (known.includes(key)) continue;
    const hint = closest(key, known);
    problems.add(child(path, key), `unknown field${hint === undefined ? '' : ` (did you mean ${hint}?)`}; expected one of: ${known.join(', ')}`);
  }
}

/** The known word within edit distance 2 of `word`, if any (typo hints). */
export function closest(word: string, known: readonly string[]): string | undefined {
  let best: { w: string; d: number } | undefined;
  for (const w of known) {
    const d = editDistance(word.toLowerCase(), w.toLowerCase());
    if (d <= 2 && (best === undefined || d < best.d)) best = { w, d };
  }
  return best?.w;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length] ?? 0;
}
