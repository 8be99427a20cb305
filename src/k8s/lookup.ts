/**
 * The one shape of "read one object" across the layers: found, not found (a
 * normal answer: nothing by that name), or failed (the reader cannot say).
 * Callers tell the three apart with `in` (`'found' in r`), because the
 * reference treats a missing object and a failed read differently (spec §2.1
 * step 8, §3.3, §3.4). Results of a computation use `{ ok: true, … } |
 * { ok: false, error }` instead; a lookup is not a computation.
 */

export type Lookup<T> = { found: T } | { notFound: true } | { error: string };

/** A lookup from "undefined means not found". */
export function lookupOf<T>(value: T | undefined): Lookup<T> {
  return value === undefined ? { notFound: true } : { found: value };
}
