/**
 * String formats of the Kubernetes API, with upstream's messages
 * (k8s.io/apimachinery/pkg/util/validation and .../api/validate/content, as of
 * Kubernetes 1.34). Each check returns a list of human-readable problems;
 * an empty list means valid. The wording, examples and regexes quoted in the
 * messages are upstream's, because users paste these messages into searches.
 *
 * Lengths are counted in UTF-8 bytes, as Go's `len(string)` does. Upstream is
 * mid-way through moving these checks into the `content` package, whose length
 * message says "bytes" where the older package says "characters"; each check
 * below uses the wording of the function the API server calls today (label
 * keys and values: "bytes"; DNS names, config keys, port names: "characters").
 */

/**
 * Go's `len(s)` for a string: its UTF-8 byte length, counted without encoding
 * (the API server checks every label and annotation of every write). A lone
 * surrogate counts as the 3 bytes of U+FFFD, as the encoder writes it.
 */
export function byteLength(s: string): number {
  let bytes = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c <= 0xdbff && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 2; // a surrogate pair: two code units, four bytes
      i++;
    } else bytes += 2;
  }
  return bytes;
}

export function maxLenError(length: number, unit: 'characters' | 'bytes' = 'characters'): string {
  return `must be no more than ${length} ${unit}`;
}

export function emptyError(): string {
  return 'must be non-empty';
}

export function inclusiveRangeError(lo: number, hi: number): string {
  return `must be between ${lo} and ${hi}, inclusive`;
}

/** Upstream's `RegexError`: the message, optional examples, and the regex itself. */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let out = `${msg} (e.g. `;
  examples.forEach((example, i) => {
    if (i > 0) out += ' or ';
    out += `'${example}', `;
  });
  return `${out}regex used for validation is '${fmt}')`;
}

function anchored(fmt: string): RegExp {
  return new RegExp(`^(?:${fmt})$`);
}

// ---- label keys ("qualified names") and values ----

const LABEL_KEY_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_KEY_ERR = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_KEY_MAX = 63;
const labelKeyRegexp = anchored(LABEL_KEY_FMT);

/** A label key / annotation key / "qualified name": optional DNS-subdomain prefix, `/`, a name of ≤ 63 characters. */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0] as string;
  } else if (parts.length === 2) {
    const prefix = parts[0] as string;
    name = parts[1] as string;
    if (prefix.length === 0) errs.push(`prefix part ${emptyError()}`);
    else errs.push(...dns1123SubdomainProblems(prefix, 'bytes').map((m) => `prefix part ${m}`));
  } else {
    return [
      `a valid label key ${regexError(LABEL_KEY_ERR, LABEL_KEY_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push(`name part ${emptyError()}`);
  else if (byteLength(name) > LABEL_KEY_MAX) errs.push(`name part ${maxLenError(LABEL_KEY_MAX, 'bytes')}`);
  if (!labelKeyRegexp.test(name)) errs.push(`name part ${regexError(LABEL_KEY_ERR, LABEL_KEY_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

const LABEL_VALUE_FMT = `(${LABEL_KEY_FMT})?`;
const LABEL_VALUE_ERR =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const labelValueRegexp = anchored(LABEL_VALUE_FMT);

export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63, 'bytes'));
  if (!labelValueRegexp.test(value)) errs.push(regexError(LABEL_VALUE_ERR, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}

// ---- DNS names ----

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_LABEL_ERR =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const dns1123LabelRegexp = anchored(DNS1123_LABEL_FMT);

const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_ERR =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const dns1123SubdomainRegexp = anchored(DNS1123_SUBDOMAIN_FMT);

/** Container names, volume names, namespaces... (≤ 63). A valid subdomain that only fails for its dots gets the short message. */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!dns1123LabelRegexp.test(value)) {
    if (dns1123SubdomainRegexp.test(value)) errs.push('must not contain dots');
    else errs.push(regexError(DNS1123_LABEL_ERR, DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  }
  return errs;
}

/** Most object names (≤ 253). */
export function isDNS1123Subdomain(value: string): string[] {
  return dns1123SubdomainProblems(value, 'characters');
}

function dns1123SubdomainProblems(value: string, unit: 'characters' | 'bytes'): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 253) errs.push(maxLenError(253, unit));
  if (!dns1123SubdomainRegexp.test(value)) errs.push(regexError(DNS1123_SUBDOMAIN_ERR, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  return errs;
}

const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const DNS1035_LABEL_ERR =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const dns1035LabelRegexp = anchored(DNS1035_LABEL_FMT);

/** Service names (≤ 63, must start with a letter). */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!dns1035LabelRegexp.test(value)) errs.push(regexError(DNS1035_LABEL_ERR, DNS1035_LABEL_FMT, 'my-name', 'abc-123'));
  return errs;
}

// ---- other formats used by pod specs ----

const C_IDENTIFIER_FMT = '[A-Za-z_][A-Za-z0-9_]*';
const C_IDENTIFIER_ERR = "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_'";

export function isCIdentifier(value: string): string[] {
  if (anchored(C_IDENTIFIER_FMT).test(value)) return [];
  return [regexError(C_IDENTIFIER_ERR, C_IDENTIFIER_FMT, 'my_name', 'MY_NAME', 'MyName')];
}

function chdirPrefixErrors(value: string): string[] {
  if (value === '.') return ["must not be '.'"];
  if (value === '..') return ["must not be '..'"];
  if (value.startsWith('..')) return ["must not start with '..'"];
  return [];
}

const ENV_VAR_NAME_FMT = '[-._a-zA-Z][-._a-zA-Z0-9]*';
const ENV_VAR_NAME_ERR = "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit";

/**
 * The classic environment variable name rule (`IsEnvVarName`). Kubernetes 1.32+
 * can relax it (RelaxedEnvironmentVariableValidation); we keep the strict rule,
 * which every supported cluster accepts.
 */
export function isEnvVarName(value: string): string[] {
  const errs: string[] = [];
  if (!anchored(ENV_VAR_NAME_FMT).test(value)) errs.push(regexError(ENV_VAR_NAME_ERR, ENV_VAR_NAME_FMT, 'my.env-name', 'MY_ENV.NAME', 'MyEnvName1'));
  errs.push(...chdirPrefixErrors(value));
  return errs;
}

const CONFIG_MAP_KEY_FMT = '[-._a-zA-Z0-9]+';
const CONFIG_MAP_KEY_ERR = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";

export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 253) errs.push(maxLenError(253));
  if (!anchored(CONFIG_MAP_KEY_FMT).test(value)) errs.push(regexError(CONFIG_MAP_KEY_ERR, CONFIG_MAP_KEY_FMT, 'key.name', 'KEY_NAME', 'key-name'));
  errs.push(...chdirPrefixErrors(value));
  return errs;
}

/** IANA service names as used for container port names: ≤ 15, [-a-z0-9], at least one letter, no `--`, no edge hyphen. */
export function isValidPortName(port: string): string[] {
  const errs: string[] = [];
  if (byteLength(port) > 15) errs.push(maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(port)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(port)) errs.push('must contain at least one letter (a-z)');
  if (port.includes('--')) errs.push('must not contain consecutive hyphens');
  if (port.length > 0 && (port.startsWith('-') || port.endsWith('-'))) errs.push('must not begin or end with a hyphen');
  return errs;
}

export function isValidPortNum(port: number): string[] {
  return port >= 1 && port <= 65535 ? [] : [inclusiveRangeError(1, 65535)];
}

/** Upstream's newer names for the label checks (content.IsLabelKey / IsLabelValue). */
export const isLabelKey = isQualifiedName;
export const isLabelValue = isValidLabelValue;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Go's strconv.ParseInt(s, 10, 64): optional sign, decimal digits, within int64; a bigint so large values compare exactly. */
export function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const v = BigInt(s);
  return v >= INT64_MIN && v <= INT64_MAX ? v : undefined;
}
