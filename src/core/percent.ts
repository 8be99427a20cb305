/**
 * Percent resolution (spec §5.3), bit-exact with Kubernetes'
 * `intstr.GetScaledValueFromIntOrPercent`: an int is used as is; a string must
 * be `<base-10 integer>%` (so "0.2%", "50.2%", "abc" are errors); the result is
 * ceil(p * total / 100) when rounding up, floor when rounding down.
 * WorkloadSpread always rounds up (#877: 34/33/33% of 10 is 4/4/4).
 */
import type { IntOrString } from '../k8s/types.ts';
import { MAX_INT32 } from '../api/keys.ts';

export type Scaled = { ok: true; value: number; isPercent: boolean } | { ok: false; error: string };

/** Parses an IntOrString into its integer and whether it is a percentage. */
export function parseIntOrPercent(value: IntOrString): Scaled {
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) return { ok: false, error: `invalid value for IntOrString: ${value} is not an integer` };
    // An IntOrString holds an int32 (Go would not even decode more); a stored value beyond it is invalid.
    if (value > MAX_INT32 || value < -MAX_INT32 - 1) return { ok: false, error: `invalid value for IntOrString: ${value} does not fit an int32` };
    return { ok: true, value, isPercent: false };
  }
  if (!value.endsWith('%')) {
    return { ok: false, error: 'invalid value for IntOrString: invalid type: string is not a percentage' };
  }
  const digits = value.slice(0, -1);
  // strconv.Atoi: optional sign, then decimal digits, nothing else.
  if (!/^[+-]?\d+$/.test(digits)) {
    return { ok: false, error: `invalid value for IntOrString: invalid value "${value}": strconv.Atoi: parsing "${digits}": invalid syntax` };
  }
  const n = Number(digits);
  if (!Number.isSafeInteger(n)) {
    return { ok: false, error: `invalid value for IntOrString: invalid value "${value}": strconv.Atoi: parsing "${digits}": value out of range` };
  }
  return { ok: true, value: n, isPercent: true };
}

/** `GetScaledValueFromIntOrPercent(value, total, roundUp)`. */
export function scaledValue(value: IntOrString, total: number, roundUp = true): Scaled {
  const parsed = parseIntOrPercent(value);
  if (!parsed.ok || !parsed.isPercent) return parsed;
  // p*total is an integer, so p*total/100 is either exact or at least 0.01 away
  // from an integer: Math.ceil/floor on the double is exact.
  const raw = (parsed.value * total) / 100;
  const scaled = roundUp ? Math.ceil(raw) : Math.floor(raw);
  return { ok: true, value: scaled === 0 ? 0 : scaled, isPercent: true };
}

/**
 * The limit of a subset for a workload of `total` replicas: -1 when maxReplicas
 * is unset (unlimited), else the rounded-up value. Undefined when the value
 * cannot be resolved or is negative (the defensive path of spec §4.4.1;
 * validation rejects such values).
 */
export function resolveMaxReplicas(maxReplicas: IntOrString | undefined, total: number): number | undefined {
  if (maxReplicas === undefined) return -1;
  const scaled = scaledValue(maxReplicas, total, true);
  if (!scaled.ok || scaled.value < 0) return undefined;
  return scaled.value;
}

/** The adoption/grouping quota of a subset: its limit, or int32 max when unlimited (spec §4.3.1). */
export function subsetQuota(maxReplicas: IntOrString | undefined, total: number): number {
  const scaled = scaledValue(maxReplicas ?? MAX_INT32, total, true);
  return scaled.ok ? scaled.value : 0;
}
