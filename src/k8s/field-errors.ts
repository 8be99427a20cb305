/**
 * Field-level validation errors, as k8s.io/apimachinery/pkg/util/validation/field
 * models them, and their text as Go prints it.
 *
 * A `FieldError` is plain data (JSON-safe apart from whatever the caller put in
 * `badValue`), so the webhook, the embedded API server and the CLI can all
 * report the same error the same way. `formatFieldError` reproduces
 * `(*field.Error).Error()` byte for byte for the value shapes we produce:
 * strings are quoted like Go's `%q`, numbers/booleans are printed bare, and
 * anything else goes through JSON (Go's encoding/json escapes `<`, `>`, `&`).
 *
 * Invariant: value-bearing kinds (Invalid, Duplicate, NotSupported, NotFound,
 * TypeInvalid, TooMany) carry `badValue`; when it is absent the value part is
 * omitted from the message, as upstream does for its "omit value" marker.
 * An `undefined` value is stored as `null` (Go's nil prints as `null`).
 *
 * Start with `root()` / `FieldPath` and the constructors; `formatFieldErrors`
 * and `invalidObjectMessage` give the aggregate text of `errors.NewInvalid`.
 */

export type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueDuplicate'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueTypeInvalid'
  | 'FieldValueNotFound'
  | 'InternalError'
  /** A field the schema does not know (strict decoding; printed as `unknown field "<path>"`). */
  | 'UnknownField';

export interface FieldError {
  type: FieldErrorType;
  /** The field path as Go prints it, e.g. `spec.subsets[1].maxReplicas`. */
  field: string;
  badValue?: unknown;
  detail: string;
}

// ---- paths ----

type Segment = { name: string } | { index: string };

/**
 * An immutable field path. Printing follows `(*field.Path).String()`: names are
 * joined with dots, indexes and map keys are bracketed, and a path whose root
 * has an empty name prints that root as `[]` (as `field.NewPath("")` does).
 */
export class FieldPath {
  private constructor(private readonly segments: readonly Segment[]) {}

  static root(name: string, ...more: string[]): FieldPath {
    return new FieldPath([{ name }, ...more.map((n) => ({ name: n }))]);
  }

  child(name: string, ...more: string[]): FieldPath {
    return new FieldPath([...this.segments, { name }, ...more.map((n) => ({ name: n }))]);
  }

  index(i: number): FieldPath {
    return new FieldPath([...this.segments, { index: String(i) }]);
  }

  key(k: string): FieldPath {
    return new FieldPath([...this.segments, { index: k }]);
  }

  toString(): string {
    let out = '';
    this.segments.forEach((segment, i) => {
      if ('name' in segment && segment.name.length > 0) {
        if (i > 0) out += '.';
        out += segment.name;
      } else {
        out += `[${'index' in segment ? segment.index : ''}]`;
      }
    });
    return out;
  }
}

/** `field.NewPath(name, more...)`. */
export function root(name: string, ...more: string[]): FieldPath {
  return FieldPath.root(name, ...more);
}

export type PathLike = FieldPath | string;

function pathString(path: PathLike): string {
  return typeof path === 'string' ? path : path.toString();
}

// ---- constructors (field.Required, field.Invalid, ...) ----

export function required(path: PathLike, detail = ''): FieldError {
  return { type: 'FieldValueRequired', field: pathString(path), badValue: '', detail };
}

export function invalid(path: PathLike, value: unknown, detail = ''): FieldError {
  return { type: 'FieldValueInvalid', field: pathString(path), badValue: value ?? null, detail };
}

export function duplicate(path: PathLike, value: unknown): FieldError {
  return { type: 'FieldValueDuplicate', field: pathString(path), badValue: value ?? null, detail: '' };
}

export function notSupported(path: PathLike, value: unknown, supported: readonly string[]): FieldError {
  const detail = supported.length > 0 ? `supported values: ${supported.map((v) => goQuote(v)).join(', ')}` : '';
  return { type: 'FieldValueNotSupported', field: pathString(path), badValue: value ?? null, detail };
}

export function forbidden(path: PathLike, detail = ''): FieldError {
  return { type: 'FieldValueForbidden', field: pathString(path), badValue: '', detail };
}

/** `field.TooLong`: the value itself is never printed; `max < 0` means "no stated limit". */
export function tooLong(path: PathLike, _value: unknown, max: number): FieldError {
  const detail = max >= 0 ? `may not be more than ${max} ${max === 1 ? 'byte' : 'bytes'}` : 'value is too long';
  return { type: 'FieldValueTooLong', field: pathString(path), badValue: '<value omitted>', detail };
}

/** `field.TooMany`: a negative `actual` omits the count from the message. */
export function tooMany(path: PathLike, actual: number, max: number): FieldError {
  const detail = max >= 0 ? `must have at most ${max} ${max === 1 ? 'item' : 'items'}` : 'has too many items';
  const error: FieldError = { type: 'FieldValueTooMany', field: pathString(path), detail };
  if (actual >= 0) error.badValue = actual;
  return error;
}

export function notFound(path: PathLike, value: unknown): FieldError {
  return { type: 'FieldValueNotFound', field: pathString(path), badValue: value ?? null, detail: '' };
}

export function typeInvalid(path: PathLike, value: unknown, detail: string): FieldError {
  return { type: 'FieldValueTypeInvalid', field: pathString(path), badValue: value ?? null, detail };
}

/** A field the schema does not know, as strict decoding reports it (`unknown field "spec.x"`). */
export function unknownField(path: PathLike): FieldError {
  const field = pathString(path);
  return { type: 'UnknownField', field, detail: `unknown field ${goQuote(field)}` };
}

export function internalError(path: PathLike, detail: string): FieldError {
  return { type: 'InternalError', field: pathString(path), badValue: detail, detail };
}

// ---- formatting ----

const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  InternalError: 'Internal error',
  FieldValueTypeInvalid: 'Invalid value',
  UnknownField: 'Unknown field',
};

const PRINTS_VALUE: ReadonlySet<FieldErrorType> = new Set<FieldErrorType>([
  'FieldValueInvalid',
  'FieldValueTypeInvalid',
  'FieldValueNotSupported',
  'FieldValueNotFound',
  'FieldValueDuplicate',
  'FieldValueTooMany',
]);

/** `(*field.Error).ErrorBody()`: the message without the field name (what a Status cause carries). */
export function fieldErrorBody(e: FieldError): string {
  let s = TYPE_TEXT[e.type] ?? `<unknown error ${goQuote(String(e.type))}>`;
  if (PRINTS_VALUE.has(e.type) && 'badValue' in e) s += `: ${formatGoValue(e.badValue)}`;
  if (e.detail.length > 0) s += `: ${e.detail}`;
  return s;
}

/** `(*field.Error).Error()`: `<field>: <body>`; an unknown field prints as strict decoding does (`unknown field "<field>"`). */
export function formatFieldError(e: FieldError): string {
  if (e.type === 'UnknownField') return e.detail;
  return `${e.field}: ${fieldErrorBody(e)}`;
}

/**
 * `ErrorList.ToAggregate().Error()`: duplicates (by text) are dropped; one
 * message prints alone, several print as `[a, b]`; an empty list prints `<nil>`
 * (what Go prints for a nil aggregate).
 */
export function formatFieldErrors(errors: readonly FieldError[]): string {
  const messages: string[] = [];
  for (const e of errors) {
    const text = formatFieldError(e);
    if (!messages.includes(text)) messages.push(text);
  }
  if (messages.length === 0) return '<nil>';
  if (messages.length === 1) return messages[0] as string;
  return `[${messages.join(', ')}]`;
}

/** The message of `errors.NewInvalid(GroupKind{group, kind}, name, errs)`. */
export function invalidObjectMessage(kind: string, group: string, name: string, errors: readonly FieldError[]): string {
  const qualifiedKind = group.length === 0 ? kind : `${kind}.${group}`;
  return `${qualifiedKind} ${goQuote(name)} is invalid: ${formatFieldErrors(errors)}`;
}

/** The `details.causes` entries of the Status that `errors.NewInvalid` builds (one per error, not de-duplicated). */
export function invalidStatusCauses(errors: readonly FieldError[]): { reason: FieldErrorType; message: string; field: string }[] {
  return errors.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field }));
}

// ---- Go value printing ----

/** How `field.Error` prints a bad value: `%v` for numbers and booleans, `%q` for strings, JSON otherwise. */
export function formatGoValue(value: unknown): string {
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return goFormatNumber(value);
  if (typeof value === 'bigint') return value.toString();
  return goJson(value);
}

/** Go's `strconv.Quote`: printable runes kept, the usual escapes, `\x` for ASCII controls, `\u`/`\U` otherwise. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    switch (ch) {
      case '"': out += '\\"'; continue;
      case '\\': out += '\\\\'; continue;
      case '\x07': out += '\\a'; continue;
      case '\b': out += '\\b'; continue;
      case '\f': out += '\\f'; continue;
      case '\n': out += '\\n'; continue;
      case '\r': out += '\\r'; continue;
      case '\t': out += '\\t'; continue;
      case '\v': out += '\\v'; continue;
    }
    if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (cp >= 0xd800 && cp <= 0xdfff) out += '\ufffd';
    else if (isGoPrintable(ch)) out += ch;
    else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

function isGoPrintable(ch: string): boolean {
  return PRINTABLE.test(ch);
}

/** Integers print as decimals (Go int32/int64); other numbers as Go's `%v` for float64 (`%g`, shortest). */
function goFormatNumber(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : '-Inf';
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return BigInt(n).toString();
  const [mantissa, expText] = n.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) {
    const sign = exp < 0 ? '-' : '+';
    return `${mantissa}e${sign}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  return String(n);
}

/** Go's `json.Marshal` for plain JSON data: HTML-sensitive characters escaped; undefined fields dropped. */
function goJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value ?? null);
  } catch {
    text = undefined;
  }
  if (text === undefined) return 'null';
  return text
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}
