/**
 * Field selectors (`?fieldSelector=`), as k8s.io/apimachinery fields.ParseSelector
 * reads them: comma-separated terms `field=value`, `field==value` or
 * `field!=value`; a backslash escapes `\`, `,` and `=` inside a value; the
 * first operator in a term splits it (fields have no escaping). Terms are
 * sorted as strings before parsing, empty terms are skipped, and a term with
 * both sides empty (`=`) selects everything. A missing field reads as "".
 * Which fields a resource supports is the API server's business, not this module's.
 */

export interface FieldRequirement {
  field: string;
  op: '=' | '!=';
  value: string;
}

export type FieldSelectorResult = { ok: true; requirements: FieldRequirement[] } | { ok: false; error: string };

/** Splits on commas that are not escaped; escapes stay in the terms. */
function splitTerms(selector: string): string[] {
  if (selector.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let escaped = false;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (escaped) escaped = false;
    else if (c === '\\') escaped = true;
    else if (c === ',') {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms;
}

// "==" is tried before "=" so that a "==" term does not leave "=" at the start of its value.
const TERM_OPERATORS = ['!=', '==', '='] as const;

function splitTerm(term: string): { lhs: string; op: (typeof TERM_OPERATORS)[number]; rhs: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of TERM_OPERATORS) {
      if (term.startsWith(op, i)) return { lhs: term.slice(0, i), op, rhs: term.slice(i + op.length) };
    }
  }
  return undefined;
}

type Unescaped = { ok: true; value: string } | { ok: false; error: string };

/** fields.UnescapeValue: only `\\`, `\,` and `\=` are escapes; bare `,` or `=` are errors. */
export function unescapeFieldValue(s: string): Unescaped {
  let out = '';
  let escaped = false;
  for (const c of s) {
    if (escaped) {
      if (c !== '\\' && c !== ',' && c !== '=') {
        return { ok: false, error: `invalid field selector: invalid escape sequence: \\${c}` };
      }
      out += c;
      escaped = false;
      continue;
    }
    if (c === '\\') escaped = true;
    // Upstream formats the offending rune with %v, which prints its code point number.
    else if (c === ',' || c === '=') return { ok: false, error: `invalid field selector: unescaped character in value: ${c.codePointAt(0)}` };
    else out += c;
  }
  if (escaped) return { ok: false, error: 'invalid field selector: invalid escape sequence: \\' };
  return { ok: true, value: out };
}

/** fields.EscapeValue: the inverse of unescapeFieldValue. */
export function escapeFieldValue(s: string): string {
  return s.replace(/[\\,=]/g, (c) => `\\${c}`);
}

export function parseFieldSelector(selector: string): FieldSelectorResult {
  if (typeof selector !== 'string') return { ok: false, error: 'field selector must be a string' };
  const parts = splitTerms(selector).sort();
  const requirements: FieldRequirement[] = [];
  for (const part of parts) {
    if (part === '') continue;
    const term = splitTerm(part);
    if (term === undefined) return { ok: false, error: `invalid selector: '${selector}'; can't understand '${part}'` };
    const value = unescapeFieldValue(term.rhs);
    if (!value.ok) return value;
    if (term.lhs === '' && value.value === '') continue;
    requirements.push({ field: term.lhs, op: term.op === '!=' ? '!=' : '=', value: value.value });
  }
  return { ok: true, requirements };
}

/** True when every requirement holds for `fields` (a field that is absent reads as ""). */
export function fieldSelectorMatches(reqs: readonly FieldRequirement[], fields: Record<string, string>): boolean {
  return reqs.every((r) => {
    const have = Object.prototype.hasOwnProperty.call(fields, r.field) ? (fields[r.field] ?? '') : '';
    return r.op === '=' ? have === r.value : have !== r.value;
  });
}
