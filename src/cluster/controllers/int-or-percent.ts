/**
 * `intstr.GetScaledValueFromIntOrPercent` for the control plane: an integer
 * is taken as is; a string must be `<base-10 integer>%` and scales `total`,
 * rounded up or down as the caller's upstream code asks (a PodDisruptionBudget
 * rounds up, a StatefulSet's maxUnavailable down). Anything else is an error,
 * returned as data with upstream's message. Pure.
 */
import type { IntOrString } from '../../k8s/types.ts';

export type ScaledValue = { ok: true; value: number; percent: boolean } | { ok: false; error: string };

export function scaledIntOrPercent(value: IntOrString | undefined | null, total: number, roundUp: boolean): ScaledValue {
  if (value === undefined || value === null) return { ok: false, error: 'nil value for IntOrString' };
  if (typeof value === 'number') {
    return Number.isInteger(value) ? { ok: true, value, percent: false } : { ok: false, error: `invalid value for IntOrString: ${value} is not an integer` };
  }
  if (typeof value !== 'string' || !value.endsWith('%')) return { ok: false, error: 'invalid value for IntOrString: invalid type: string is not a percentage' };
  const digits = value.slice(0, -1);
  // strconv.Atoi: an optional sign and decimal digits, nothing else.
  if (!/^[+-]?\d+$/.test(digits) || !Number.isSafeInteger(Number(digits))) {
    return { ok: false, error: `invalid value for IntOrString: invalid value "${value}": strconv.Atoi: parsing "${digits}": invalid syntax` };
  }
  // p·total is an integer, so p·total/100 is exact or at least 0.01 from the next integer.
  const raw = (Number(digits) * total) / 100;
  const scaled = roundUp ? Math.ceil(raw) : Math.floor(raw);
  return { ok: true, value: scaled === 0 ? 0 : scaled, percent: true };
}
