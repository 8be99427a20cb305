/**
 * resource.Quantity (k8s.io/apimachinery/pkg/api/resource): parsing with the
 * exact upstream grammar and rounding, plus canonical-ish formatting for display.
 *
 *   quantity := [+-] digits [. digits] suffix        (".5", "5.", "+1" and even "." are accepted)
 *   suffix   := "" | n u m k M G T P E | Ki Mi Gi Ti Pi Ei | (e|E) [+-] digits
 *
 * Internally a quantity is an exact count of nano-units (bigint): upstream
 * rounds any finer value up (away from zero) to 1n, and caps binary-suffixed
 * values at 2^63-1. `milliValue` / `ceilValue` round away from zero like
 * Quantity.MilliValue / Value. JS numbers are produced only at the edges.
 */

const NANO = 1_000_000_000n;
const MAX_INT64 = 9223372036854775807n;

const DECIMAL_SUFFIXES = new Map<string, number>([
  ['n', -9],
  ['u', -6],
  ['m', -3],
  ['', 0],
  ['k', 3],
  ['M', 6],
  ['G', 9],
  ['T', 12],
  ['P', 15],
  ['E', 18],
]);
const BINARY_SUFFIXES = new Map<string, number>([
  ['Ki', 10],
  ['Mi', 20],
  ['Gi', 30],
  ['Ti', 40],
  ['Pi', 50],
  ['Ei', 60],
]);
const SUFFIX_CHARS = 'eEinumkKMGTP';

/** Beyond these powers of ten the value is far outside any JS number; computing it exactly would be wasteful. */
const MAX_DECIMAL_EXPONENT = 400;

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

interface Scanned {
  negative: boolean;
  num: string;
  denom: string;
  suffix: string;
}

/** parseQuantityString: splits sign, integer part, fraction and suffix; undefined on a format error. */
function scan(str: string): Scanned | undefined {
  const end = str.length;
  let pos = 0;
  let negative = false;
  if (str[0] === '-') {
    negative = true;
    pos++;
  } else if (str[0] === '+') {
    pos++;
  }
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return { negative, num: '0', denom: '', suffix: '' };
  const numStart = pos;
  while (pos < end && isDigit(str[pos])) pos++;
  const num = str.slice(numStart, pos) || '0';
  let denom = '';
  if (str[pos] === '.') {
    pos++;
    const denomStart = pos;
    while (pos < end && isDigit(str[pos])) pos++;
    denom = str.slice(denomStart, pos);
  }
  const suffixStart = pos;
  while (pos < end && SUFFIX_CHARS.includes(str[pos] ?? '')) pos++;
  if (str[pos] === '-' || str[pos] === '+') pos++;
  while (pos < end && isDigit(str[pos])) pos++;
  if (pos < end) return undefined;
  return { negative, num, denom, suffix: str.slice(suffixStart) };
}

/** quantitySuffixer.interpret: the base (10 or 2) and exponent a suffix stands for. */
function interpretSuffix(suffix: string): { base: 10 | 2; exponent: number } | undefined {
  const dec = DECIMAL_SUFFIXES.get(suffix);
  if (dec !== undefined) return { base: 10, exponent: dec };
  const bin = BINARY_SUFFIXES.get(suffix);
  if (bin !== undefined) return { base: 2, exponent: bin };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E')) {
    const digits = suffix.slice(1);
    if (!/^[+-]?[0-9]+$/.test(digits)) return undefined;
    const v = BigInt(digits);
    if (v > MAX_INT64 || v < -MAX_INT64 - 1n) return undefined;
    // Upstream parses an int64 and keeps it as an int32.
    return { base: 10, exponent: Number(BigInt.asIntN(32, v)) };
  }
  return undefined;
}

const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;

function toString(q: unknown): string | undefined {
  if (typeof q === 'string') return q;
  if (typeof q === 'number' && Number.isFinite(q)) return String(q);
  return undefined;
}

/** The exact value in nano-units (value × 10^9), or undefined when `q` is not a valid quantity. */
export function parseQuantityNanos(q: string | number): bigint | undefined {
  const str = toString(q);
  if (str === undefined || str.length === 0) return undefined;
  const s = scan(str);
  if (s === undefined) return undefined;
  const unit = interpretSuffix(s.suffix);
  if (unit === undefined) return undefined;
  const digits = BigInt(s.num + s.denom);
  let magnitude: bigint;
  if (unit.base === 2) {
    magnitude = ceilDiv(digits * (1n << BigInt(unit.exponent)) * NANO, 10n ** BigInt(s.denom.length));
    if (magnitude > MAX_INT64 * NANO) magnitude = MAX_INT64 * NANO;
  } else {
    const shift = unit.exponent - s.denom.length + 9;
    if (digits === 0n) magnitude = 0n;
    else if (shift >= 0) magnitude = digits * 10n ** BigInt(Math.min(shift, MAX_DECIMAL_EXPONENT));
    else if (-shift > s.num.length + s.denom.length) magnitude = 1n;
    else magnitude = ceilDiv(digits, 10n ** BigInt(-shift));
  }
  return s.negative ? -magnitude : magnitude;
}

/** Divides nano-units by `unit`, rounding away from zero. */
function scaleAwayFromZero(nanos: bigint, unit: bigint): bigint {
  return nanos < 0n ? -ceilDiv(-nanos, unit) : ceilDiv(nanos, unit);
}

/** The value in base units as a JS number (fractional allowed: "100m" → 0.1); undefined when invalid. */
export function parseQuantity(q: string | number): number | undefined {
  const nanos = parseQuantityNanos(q);
  if (nanos === undefined) return undefined;
  if (nanos % NANO === 0n) return Number(nanos / NANO);
  return Number(nanos) / 1e9;
}

/** Quantity.MilliValue: the value in thousandths, rounded away from zero ("1n" → 1). */
export function milliValue(q: string | number): number | undefined {
  const nanos = parseQuantityNanos(q);
  return nanos === undefined ? undefined : Number(scaleAwayFromZero(nanos, 1_000_000n));
}

/** Quantity.Value: the value in base units, rounded away from zero ("100m" → 1). */
export function ceilValue(q: string | number): number | undefined {
  const nanos = parseQuantityNanos(q);
  return nanos === undefined ? undefined : Number(scaleAwayFromZero(nanos, NANO));
}

const DECIMAL_BY_EXPONENT = new Map<number, string>([...DECIMAL_SUFFIXES].map(([s, e]) => [e, s]));

/**
 * A cpu amount in millicores in Kubernetes' canonical decimal form: "250m",
 * "2", "1500m", "1k". Fractions of a millicore round up.
 */
export function formatQuantityMilli(milli: number): string {
  if (!Number.isFinite(milli)) return String(milli);
  let mantissa = BigInt(Math.ceil(Math.abs(milli)));
  const sign = milli < 0 && mantissa !== 0n ? '-' : '';
  if (mantissa === 0n) return '0';
  let exponent = -3;
  while (mantissa % 1000n === 0n && exponent < 18) {
    mantissa /= 1000n;
    exponent += 3;
  }
  return `${sign}${mantissa}${DECIMAL_BY_EXPONENT.get(exponent) ?? ''}`;
}

/**
 * A byte count in canonical binary form: "1Gi", "512Mi", "1536" (not a whole
 * number of Ki), "1000000"; below 1024, or fractional, it prints plainly.
 */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (!Number.isInteger(n) || Math.abs(n) < 1024) return String(Math.ceil(n));
  let mantissa = BigInt(Math.abs(n));
  let exponent = 0;
  while (mantissa % 1024n === 0n && exponent < 60) {
    mantissa /= 1024n;
    exponent += 10;
  }
  const suffix = [...BINARY_SUFFIXES].find(([, e]) => e === exponent)?.[0] ?? '';
  return `${n < 0 ? '-' : ''}${mantissa}${suffix}`;
}
