/**
 * Values and functions of the Go-template renderer (helm-template.ts):
 * how Go prints, compares and tests values, and the functions the chart uses
 * from Go's builtins, sprig and Helm.
 *
 * Value model (what a Helm chart sees): `undefined`/`null` is Go's nil;
 * numbers read from values files are float64 (JS number), integer literals
 * of the template and results of `len`/`int` are Go `int` (bigint), so
 * comparing the two is the same error as in Go (`incompatible types for
 * comparison`) and `%d` of a float prints `%!d(float64=3)`; plain objects are
 * `map[string]interface {}`, arrays `[]interface {}`; objects tagged with
 * `goStruct()` are structs (`.Release`, `.Chart`): an unknown field is an
 * error there, while a missing map key is nil.
 *
 * Printing follows fmt's `%v`: float64 in the shortest form with an exponent
 * from 1e+06 up (the reason large numbers in Helm values print as `1e+06`),
 * maps as `map[k:v]` in key order, nil as `<no value>` (which Helm removes
 * from its output). `toYaml` emits YAML 1.1-safe text with sorted keys and
 * the final newline trimmed (sigs.k8s.io/yaml's content, not its exact
 * line layout); `toJson` is encoding/json (sorted keys, `<>&` escaped).
 * Anything not listed in FUNCS fails when the template is parsed.
 */
import { stringify } from 'yaml';
import { setProperty } from '../k8s/json.ts';

export class TemplateExecError extends Error {}

const STRUCT = Symbol('go struct');

/** Marks an object as a Go struct (unknown fields are errors, not nil). */
export function goStruct<T extends object>(fields: T): T {
  Object.defineProperty(fields, STRUCT, { value: true, enumerable: false });
  return fields;
}

export function isGoStruct(v: unknown): boolean {
  return typeof v === 'object' && v !== null && (v as Record<symbol, unknown>)[STRUCT] === true;
}

export function isNil(v: unknown): v is null | undefined {
  return v === undefined || v === null;
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !isGoStruct(v);
}

/** Go's basic kind of a value, as text/template's comparisons see it. */
export type GoKind = 'invalid' | 'bool' | 'int' | 'float' | 'string' | 'other';

export function goKind(v: unknown): GoKind {
  if (isNil(v)) return 'invalid';
  switch (typeof v) {
    case 'boolean':
      return 'bool';
    case 'bigint':
      return 'int';
    case 'number':
      return 'float';
    case 'string':
      return 'string';
    default:
      return 'other';
  }
}

/** The Go type name used in error messages and `%!verb(type=value)`. */
export function goTypeName(v: unknown): string {
  if (isNil(v)) return '<nil>';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'float64';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'function') return 'func';
  if (Array.isArray(v)) return '[]interface {}';
  if (isGoStruct(v)) return 'struct';
  return 'map[string]interface {}';
}

/** text/template's truth: false, 0, nil and empty strings, slices and maps are false. */
export function isTrue(v: unknown): boolean {
  if (isNil(v)) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'bigint') return v !== 0n;
  if (typeof v === 'string') return v.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  if (isGoStruct(v) || typeof v === 'function') return true;
  return Object.keys(v as object).length > 0;
}

/** strconv.FormatFloat(f, 'g', -1, 64), as fmt's %v prints a float64. */
export function formatGoFloat(f: number): string {
  if (Number.isNaN(f)) return 'NaN';
  if (f === Infinity) return '+Inf';
  if (f === -Infinity) return '-Inf';
  if (f === 0) return Object.is(f, -0) ? '-0' : '0';
  const [mantissa, expText] = f.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) {
    const sign = exp < 0 ? '-' : '+';
    return `${mantissa}e${sign}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  return String(f);
}

function sortedKeys(m: object): string[] {
  // Go orders string keys by bytes; for these keys UTF-16 order is the same outside surrogates.
  return Object.keys(m).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** fmt's `%v` (top = the value printed by an action: nil shows as `<no value>`). */
export function formatValue(v: unknown, top = true): string {
  if (isNil(v)) return top ? '<no value>' : '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return formatGoFloat(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Array.isArray(v)) return `[${v.map((e) => formatValue(e, false)).join(' ')}]`;
  if (typeof v === 'function') return '<func>';
  if (isGoStruct(v)) return `{${Object.keys(v).map((k) => formatValue((v as Record<string, unknown>)[k], false)).join(' ')}}`;
  const m = v as Record<string, unknown>;
  return `map[${sortedKeys(m).map((k) => `${k}:${formatValue(m[k], false)}`).join(' ')}]`;
}

/** strconv.Quote: Go's double-quoted string syntax. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\x07') out += '\\a';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\v') out += '\\v';
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (ch === ' ' || /[\p{L}\p{M}\p{N}\p{P}\p{S}]/u.test(ch)) out += ch;
    else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}

/** sprig's strval: strings as they are, anything else as `%v` (nil is `<nil>`). */
export function strval(v: unknown): string {
  return typeof v === 'string' ? v : formatValue(v, false);
}

function badVerb(verb: string, v: unknown): string {
  return isNil(v) ? `%!${verb}(<nil>)` : `%!${verb}(${goTypeName(v)}=${formatValue(v, false)})`;
}

function formatVerb(verb: string, v: unknown): string {
  switch (verb) {
    case 'v':
      return formatValue(v, false);
    case 's':
      if (typeof v === 'string') return v;
      if (Array.isArray(v)) return `[${v.map((e) => formatVerb('s', e)).join(' ')}]`;
      if (isMap(v)) return `map[${sortedKeys(v).map((k) => `${k}:${formatVerb('s', v[k])}`).join(' ')}]`;
      return badVerb('s', v);
    case 'd':
      return typeof v === 'bigint' ? v.toString() : badVerb('d', v);
    case 'q':
      if (typeof v === 'string') return goQuote(v);
      throw new TemplateExecError(`printf: %q of ${goTypeName(v)} is not supported by this renderer`);
    case 't':
      return typeof v === 'boolean' ? String(v) : badVerb('t', v);
    default:
      throw new TemplateExecError(`printf: verb %${verb} is not supported by this renderer`);
  }
}

/** fmt.Sprintf for the verbs %s %v %d %q %t %% (no flags or widths: those fail loudly). */
export function goSprintf(format: string, args: unknown[]): string {
  let out = '';
  let n = 0;
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    if (c !== '%') {
      out += c;
      continue;
    }
    const verb = format[++i];
    if (verb === undefined) {
      out += '%!(NOVERB)';
      break;
    }
    if (verb === '%') {
      out += '%';
      continue;
    }
    if (!/[a-zA-Z]/.test(verb)) throw new TemplateExecError(`printf: flags and widths (%${verb}…) are not supported by this renderer`);
    if (n >= args.length) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    out += formatVerb(verb, args[n++]);
  }
  if (n < args.length) out += `%!(EXTRA ${args.slice(n).map((a) => (isNil(a) ? '<nil>' : `${goTypeName(a)}=${formatValue(a, false)}`)).join(', ')})`;
  return out;
}

/** fmt.Sprint: operands printed with %v, a space between two operands when neither is a string. */
function goSprint(args: unknown[]): string {
  let out = '';
  args.forEach((a, i) => {
    if (i > 0 && typeof a !== 'string' && typeof args[i - 1] !== 'string') out += ' ';
    out += formatValue(a, false);
  });
  return out;
}

// ---- comparisons (text/template's eq, lt and friends) ----

export function goEq(a: unknown, ...others: unknown[]): boolean {
  if (others.length === 0) throw new TemplateExecError('missing argument for comparison');
  const k1 = goKind(a);
  for (const b of others) {
    const k2 = goKind(b);
    if (k1 !== k2) {
      if (k1 !== 'invalid' && k2 !== 'invalid') throw new TemplateExecError('incompatible types for comparison');
      continue;
    }
    if (k1 === 'invalid') return true;
    if (k1 === 'other') throw new TemplateExecError(`non-comparable type ${formatValue(b, false)}: ${goTypeName(b)}`);
    if (a === b) return true;
  }
  return false;
}

function goLt(a: unknown, b: unknown): boolean {
  const k1 = goKind(a);
  const k2 = goKind(b);
  if (k1 === 'invalid' || k1 === 'other' || k1 === 'bool' || k2 === 'invalid' || k2 === 'other' || k2 === 'bool') throw new TemplateExecError('invalid type for comparison');
  if (k1 !== k2) throw new TemplateExecError('incompatible types for comparison');
  return (a as string | number | bigint) < (b as string | number | bigint);
}

// ---- argument checks ----

function wrongType(expected: string, v: unknown): TemplateExecError {
  return new TemplateExecError(`wrong type for value; expected ${expected}; got ${goTypeName(v)}`);
}

export function asInt(v: unknown): number {
  if (typeof v !== 'bigint') throw wrongType('int', v);
  return Number(v);
}

export function asString(v: unknown): string {
  if (typeof v !== 'string') throw wrongType('string', v);
  return v;
}

/** sprig's empty: nil, false, 0, and empty strings, slices and maps. Structs are never empty. */
export function isEmpty(v: unknown): boolean {
  return isGoStruct(v) ? false : !isTrue(v);
}

/** cast.ToInt as sprig's `int` uses it: a number truncated, a string parsed (0 when it does not parse). */
function toGoInt(v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? BigInt(Math.trunc(v)) : 0n;
  if (typeof v === 'boolean') return v ? 1n : 0n;
  if (typeof v === 'string') {
    const s = v.replace(/\.0*$/, '');
    const m = /^([+-]?)(0[xX][0-9a-fA-F]+|0[oO]?[0-7]+|0[bB][01]+|[1-9]\d*|0)$/.exec(s);
    if (m === null) return 0n;
    const body = m[2]!;
    const value = /^0[0-7]/.test(body) ? BigInt(`0o${body.slice(1)}`) : BigInt(body);
    return m[1] === '-' ? -value : value;
  }
  return 0n;
}

// ---- YAML and JSON ----

/** A JSON-compatible copy: bigints as numbers, structs as maps. */
function plain(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(plain);
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, unknown> = {};
    for (const k of sortedKeys(v)) setProperty(out, k, plain((v as Record<string, unknown>)[k]));
    return out;
  }
  return v === undefined ? null : v;
}

/**
 * `<<` is YAML 1.1's merge key: Go's encoder quotes it, or a reader would
 * merge instead of reading a key. The yaml library always writes it plain in
 * 1.1, so it goes through a stand-in no real value contains (a NUL inside),
 * which comes out double-quoted and is then swapped for the quoted `'<<'`.
 */
const MERGE_STAND_IN = '\u0000<<\u0000';

function withMergeStandIns(v: unknown): unknown {
  if (v === '<<') return MERGE_STAND_IN;
  if (Array.isArray(v)) return v.map(withMergeStandIns);
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k === '<<' ? MERGE_STAND_IN : k, withMergeStandIns(x)]));
  return v;
}

export function toYaml(v: unknown): string {
  const text = stringify(withMergeStandIns(plain(v)), { version: '1.1', sortMapEntries: true, lineWidth: 0, indentSeq: false });
  return text.replaceAll('"\\0<<\\0"', "'<<'").replace(/\n$/, '');
}

export function toJson(v: unknown): string {
  return JSON.stringify(plain(v))
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

function indentLines(spaces: number, s: string): string {
  const pad = ' '.repeat(Math.max(0, spaces));
  return pad + s.replace(/\n/g, `\n${pad}`);
}

// ---- the function table ----

export interface FuncContext {
  /** Renders a `define`d template with `data` as dot (Helm's `include`). */
  include(name: string, data: unknown): string;
}

export interface FuncDef {
  /** Minimum and maximum argument counts (Infinity: variadic). */
  arity: [number, number];
  /** Arguments are thunks, evaluated on demand (Go's short-circuit `and`/`or`). */
  lazy?: boolean;
  fn(args: unknown[], ctx: FuncContext): unknown;
}

const f = (min: number, max: number, fn: FuncDef['fn']): FuncDef => ({ arity: [min, max], fn });

export const FUNCS: Readonly<Record<string, FuncDef>> = Object.freeze({
  // Go's builtins.
  and: { arity: [1, Infinity], lazy: true, fn: (args) => {
    let v: unknown;
    for (const a of args) {
      v = (a as () => unknown)();
      if (!isTrue(v)) return v;
    }
    return v;
  } },
  or: { arity: [1, Infinity], lazy: true, fn: (args) => {
    let v: unknown;
    for (const a of args) {
      v = (a as () => unknown)();
      if (isTrue(v)) return v;
    }
    return v;
  } },
  not: f(1, 1, ([v]) => !isTrue(v)),
  eq: f(1, Infinity, ([a, ...rest]) => goEq(a, ...rest)),
  ne: f(2, 2, ([a, b]) => !goEq(a, b)),
  lt: f(2, 2, ([a, b]) => goLt(a, b)),
  le: f(2, 2, ([a, b]) => goLt(a, b) || goEq(a, b)),
  gt: f(2, 2, ([a, b]) => !(goLt(a, b) || goEq(a, b))),
  ge: f(2, 2, ([a, b]) => !goLt(a, b)),
  len: f(1, 1, ([v]) => {
    if (isNil(v)) throw new TemplateExecError('len of nil pointer');
    if (typeof v === 'string') return BigInt(Buffer.byteLength(v, 'utf8'));
    if (Array.isArray(v)) return BigInt(v.length);
    if (isMap(v)) return BigInt(Object.keys(v).length);
    throw new TemplateExecError(`len of type ${goTypeName(v)}`);
  }),
  index: f(1, Infinity, ([item, ...keys]) => {
    let cur = item;
    for (const key of keys) {
      if (isNil(cur)) throw new TemplateExecError('index of untyped nil');
      if (Array.isArray(cur)) {
        if (typeof key !== 'bigint') throw new TemplateExecError(`cannot index slice/array with type ${goTypeName(key)}`);
        if (key < 0n || key >= BigInt(cur.length)) throw new TemplateExecError(`error calling index: index out of range: ${key}`);
        cur = cur[Number(key)];
      } else if (isMap(cur)) {
        if (typeof key !== 'string') throw new TemplateExecError(`value has type ${goTypeName(key)}; should be string`);
        cur = Object.prototype.hasOwnProperty.call(cur, key) ? cur[key] : undefined;
      } else {
        throw new TemplateExecError(`can't index item of type ${goTypeName(cur)}`);
      }
    }
    return cur;
  }),
  print: f(0, Infinity, (args) => goSprint(args)),
  println: f(0, Infinity, (args) => `${args.map((a) => formatValue(a, false)).join(' ')}\n`),
  printf: f(1, Infinity, ([format, ...args]) => goSprintf(asString(format), args)),

  // Helm.
  include: f(2, 2, ([name, data], ctx) => ctx.include(asString(name), data)),
  required: f(2, 2, ([message, v]) => {
    if (isNil(v) || v === '') throw new TemplateExecError(asString(message));
    return v;
  }),
  fail: f(1, 1, ([message]) => {
    throw new TemplateExecError(asString(message));
  }),
  toYaml: f(1, 1, ([v]) => toYaml(v)),
  toJson: f(1, 1, ([v]) => toJson(v)),

  // sprig.
  default: f(1, 2, ([d, ...given]) => (given.length === 0 || isEmpty(given[0]) ? d : given[0])),
  empty: f(1, 1, ([v]) => isEmpty(v)),
  ternary: f(3, 3, ([yes, no, cond]) => {
    if (typeof cond !== 'boolean') throw wrongType('bool', cond);
    return cond ? yes : no;
  }),
  quote: f(0, Infinity, (args) => args.filter((a) => !isNil(a)).map((a) => goQuote(strval(a))).join(' ')),
  squote: f(0, Infinity, (args) => args.filter((a) => !isNil(a)).map((a) => `'${strval(a)}'`).join(' ')),
  toString: f(1, 1, ([v]) => strval(v)),
  int: f(1, 1, ([v]) => toGoInt(v)),
  indent: f(2, 2, ([n, s]) => indentLines(asInt(n), asString(s))),
  nindent: f(2, 2, ([n, s]) => `\n${indentLines(asInt(n), asString(s))}`),
  trunc: f(2, 2, ([n, s]) => {
    const c = asInt(n);
    const str = asString(s);
    if (c < 0 && str.length + c > 0) return str.slice(str.length + c);
    if (c >= 0 && str.length > c) return str.slice(0, c);
    return str;
  }),
  trim: f(1, 1, ([s]) => asString(s).trim()),
  trimSuffix: f(2, 2, ([suffix, s]) => {
    const str = asString(s);
    const suf = asString(suffix);
    return suf !== '' && str.endsWith(suf) ? str.slice(0, str.length - suf.length) : str;
  }),
  trimPrefix: f(2, 2, ([prefix, s]) => {
    const str = asString(s);
    const pre = asString(prefix);
    return str.startsWith(pre) ? str.slice(pre.length) : str;
  }),
  hasPrefix: f(2, 2, ([prefix, s]) => asString(s).startsWith(asString(prefix))),
  contains: f(2, 2, ([sub, s]) => asString(s).includes(asString(sub))),
  replace: f(3, 3, ([from, to, s]) => asString(s).split(asString(from)).join(asString(to))),
  lower: f(1, 1, ([s]) => asString(s).toLowerCase()),
  upper: f(1, 1, ([s]) => asString(s).toUpperCase()),
  b64enc: f(1, 1, ([s]) => Buffer.from(asString(s), 'utf8').toString('base64')),
  join: f(2, 2, ([sep, v]) => {
    const items = isNil(v) ? [] : Array.isArray(v) ? v.filter((e) => !isNil(e)).map(strval) : [strval(v)];
    return items.join(asString(sep));
  }),
  list: f(0, Infinity, (args) => [...args]),
  concat: f(0, Infinity, (args) => {
    const out: unknown[] = [];
    for (const a of args) {
      if (isNil(a)) continue;
      if (!Array.isArray(a)) throw new TemplateExecError(`cannot concat type ${goTypeName(a)} as list`);
      out.push(...a);
    }
    return out;
  }),
  // sprig's uniq: first occurrences, in order (elements compared as Go's == would: scalars only).
  uniq: f(1, 1, ([l]) => {
    if (!Array.isArray(l)) throw new TemplateExecError(`cannot find uniq on type ${goTypeName(l)}`);
    const out: unknown[] = [];
    for (const e of l) if (!out.some((o) => o === e)) out.push(e);
    return out;
  }),
  dict: f(0, Infinity, (args) => {
    const out: Record<string, unknown> = {};
    for (let i = 0; i < args.length; i += 2) setProperty(out, strval(args[i]), i + 1 < args.length ? args[i + 1] : '');
    return out;
  }),
  hasKey: f(2, 2, ([m, key]) => {
    if (!isMap(m)) throw wrongType('map[string]interface {}', m);
    return Object.prototype.hasOwnProperty.call(m, asString(key));
  }),
  kindIs: f(2, 2, ([kind, v]) => {
    const actual = isNil(v) ? 'invalid' : Array.isArray(v) ? 'slice' : isMap(v) ? 'map' : isGoStruct(v) ? 'struct' : goTypeName(v);
    return asString(kind) === actual;
  }),
});

export function isFunction(name: string): boolean {
  return Object.prototype.hasOwnProperty.call(FUNCS, name);
}
