/**
 * Kubernetes name and label syntax checks, with the error strings of
 * k8s.io/apimachinery/pkg/api/validate/content (IsLabelKey, IsLabelValue,
 * IsDNS1123Subdomain, IsDNS1123Label). Each check returns the list of problems
 * (empty = valid) so callers can wrap them in field errors the way upstream does.
 * Lengths are counted in UTF-8 bytes, as Go's len() counts them.
 */

const LABEL_KEY_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_KEY_ERR = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_KEY_MAX = 63;
const LABEL_KEY_RE = new RegExp(`^${LABEL_KEY_FMT}$`);

const LABEL_VALUE_FMT = `(${LABEL_KEY_FMT})?`;
const LABEL_VALUE_ERR =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MAX = 63;
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`);

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_LABEL_ERR =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_LABEL_RE = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_ERR =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);

const encoder = new TextEncoder();

/** Go's len(): the UTF-8 byte length. */
export function byteLength(s: string): number {
  return encoder.encode(s).length;
}

export function maxLenError(length: number): string {
  return `must be no more than ${length} bytes`;
}

export function emptyError(): string {
  return 'must be non-empty';
}

/** The regex failure text, with examples, worded (and spaced) exactly as upstream's RegexError. */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let out = `${msg} (e.g. `;
  examples.forEach((ex, i) => {
    if (i > 0) out += ' or ';
    out += `'${ex}', `;
  });
  return `${out}regex used for validation is '${fmt}')`;
}

export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!DNS1123_LABEL_RE.test(value)) {
    if (DNS1123_SUBDOMAIN_RE.test(value)) errs.push('must not contain dots');
    else errs.push(regexError(DNS1123_LABEL_ERR, DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  }
  return errs;
}

export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 253) errs.push(maxLenError(253));
  if (!DNS1123_SUBDOMAIN_RE.test(value)) errs.push(regexError(DNS1123_SUBDOMAIN_ERR, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  return errs;
}

/** A label key (a.k.a. qualified name): `[prefix/]name`, prefix a DNS subdomain, name ≤ 63 bytes. */
export function isLabelKey(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0] ?? '';
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix.length === 0) errs.push(`prefix part ${emptyError()}`);
    else for (const m of isDNS1123Subdomain(prefix)) errs.push(`prefix part ${m}`);
  } else {
    return [
      `a valid label key ${regexError(LABEL_KEY_ERR, LABEL_KEY_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push(`name part ${emptyError()}`);
  else if (byteLength(name) > LABEL_KEY_MAX) errs.push(`name part ${maxLenError(LABEL_KEY_MAX)}`);
  if (!LABEL_KEY_RE.test(name)) errs.push(`name part ${regexError(LABEL_KEY_ERR, LABEL_KEY_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

/** Upstream's historical name for the same check. */
export const isQualifiedName = isLabelKey;

export function isLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX) errs.push(maxLenError(LABEL_VALUE_MAX));
  if (!LABEL_VALUE_RE.test(value)) errs.push(regexError(LABEL_VALUE_ERR, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}

/**
 * Go's strconv.ParseInt(s, 10, 64): optional sign, decimal digits only, within
 * int64. Returns a bigint so values beyond 2^53 compare exactly.
 */
export function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const v = BigInt(s);
  if (v > 9223372036854775807n || v < -9223372036854775808n) return undefined;
  return v;
}
