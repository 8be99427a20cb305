/**
 * Parsing of Kubernetes JSONPath templates (see jsonpath.ts for the dialect):
 * text and `{...}` actions become a tree of steps; errors are data.
 */

export type Step =
  | { kind: 'root' }
  | { kind: 'current' }
  | { kind: 'field'; names: string[] }
  | { kind: 'recursive' }
  | { kind: 'wildcard' }
  | { kind: 'index'; index: number }
  | { kind: 'slice'; start: number | undefined; end: number | undefined; step: number | undefined }
  | { kind: 'union'; branches: Step[][] }
  | { kind: 'filter'; left: Operand; op: FilterOp | undefined; right: Operand | undefined };

export type Operand = { kind: 'path'; steps: Step[] } | { kind: 'literal'; value: unknown };
export type FilterOp = '==' | '!=' | '<' | '<=' | '>' | '>=';

/** One piece of a template: literal text, an action (a path), or a range block. */
export type JsonPathNode =
  | { kind: 'text'; text: string }
  | { kind: 'path'; steps: Step[] }
  | { kind: 'literal'; value: string }
  | { kind: 'range'; steps: Step[]; body: JsonPathNode[] };

export interface JsonPath {
  readonly template: string;
  readonly nodes: JsonPathNode[];
}

export type ParseResult = { ok: true; path: JsonPath } | { ok: false; error: string };

class Cursor {
  pos = 0;
  constructor(readonly text: string) {}
  peek(n = 0): string {
    return this.text[this.pos + n] ?? '';
  }
  eof(): boolean {
    return this.pos >= this.text.length;
  }
  startsWith(s: string): boolean {
    return this.text.startsWith(s, this.pos);
  }
  skipSpaces(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.pos++;
  }
}

class ParseError extends Error {}

/** Splits a template into text and `{...}` actions, honouring quotes inside actions. */
function splitTemplate(template: string): { text?: string; action?: string }[] {
  const parts: { text?: string; action?: string }[] = [];
  let i = 0;
  let text = '';
  while (i < template.length) {
    const ch = template[i] as string;
    if (ch !== '{') {
      text += ch;
      i++;
      continue;
    }
    if (text !== '') parts.push({ text });
    text = '';
    let j = i + 1;
    let quote = '';
    let depth = 0;
    for (; j < template.length; j++) {
      const c = template[j] as string;
      if (quote !== '') {
        if (c === '\\') j++;
        else if (c === quote) quote = '';
        continue;
      }
      if (c === '"' || c === "'") quote = c;
      else if (c === '[' || c === '(') depth++;
      else if (c === ']' || c === ')') depth--;
      else if (c === '}' && depth <= 0) break;
    }
    if (j >= template.length) throw new ParseError(`unclosed action`);
    parts.push({ action: template.slice(i + 1, j) });
    i = j + 1;
  }
  if (text !== '') parts.push({ text });
  return parts;
}

function readQuoted(c: Cursor): string {
  const quote = c.peek();
  c.pos++;
  let out = '';
  while (!c.eof() && c.peek() !== quote) {
    if (c.peek() === '\\') {
      c.pos++;
      const e = c.peek();
      out += e === 'n' ? '\n' : e === 't' ? '\t' : e;
      c.pos++;
      continue;
    }
    out += c.peek();
    c.pos++;
  }
  if (c.eof()) throw new ParseError('unclosed quote');
  c.pos++;
  return out;
}

function readIdentifier(c: Cursor): string {
  let out = '';
  while (!c.eof() && /[^.\[\]\s(),=!<>]/.test(c.peek())) out += c.text[c.pos++];
  return out;
}

function parseInteger(s: string): number | undefined {
  const t = s.trim();
  if (t === '') return undefined;
  if (!/^-?\d+$/.test(t)) throw new ParseError(`invalid array index ${t}`);
  return Number(t);
}

function parseBracket(c: Cursor): Step {
  c.pos++; // [
  c.skipSpaces();
  if (c.peek() === '?') {
    c.pos++;
    c.skipSpaces();
    if (c.peek() !== '(') throw new ParseError('unclosed filter: missing (');
    c.pos++;
    const step = parseFilter(c);
    c.skipSpaces();
    if (c.peek() !== ')') throw new ParseError('unclosed filter: missing )');
    c.pos++;
    c.skipSpaces();
    if (c.peek() !== ']') throw new ParseError('unclosed array expect ]');
    c.pos++;
    return step;
  }
  if (c.peek() === '*') {
    c.pos++;
    c.skipSpaces();
    if (c.peek() !== ']') throw new ParseError('unclosed array expect ]');
    c.pos++;
    return { kind: 'wildcard' };
  }
  if (c.peek() === "'" || c.peek() === '"') {
    const names: string[] = [];
    for (;;) {
      c.skipSpaces();
      if (c.peek() !== "'" && c.peek() !== '"') throw new ParseError('invalid quoted field name');
      names.push(readQuoted(c));
      c.skipSpaces();
      if (c.peek() === ',') {
        c.pos++;
        continue;
      }
      if (c.peek() === ']') {
        c.pos++;
        return { kind: 'field', names };
      }
      throw new ParseError('unclosed array expect ]');
    }
  }
  const close = c.text.indexOf(']', c.pos);
  if (close < 0) throw new ParseError('unclosed array expect ]');
  const body = c.text.slice(c.pos, close);
  c.pos = close + 1;
  if (body.includes(',')) {
    const branches = body.split(',').map((b) => {
      const t = b.trim();
      const inner = new Cursor(t.startsWith('.') || t.startsWith('[') ? t : /^-?\d|^:/.test(t) ? `[${t}]` : `.${t}`);
      return parseSteps(inner, false);
    });
    return { kind: 'union', branches };
  }
  if (body.includes(':')) {
    const [a = '', b = '', s = ''] = body.split(':');
    const step = parseInteger(s);
    if (step === 0) throw new ParseError('step cannot be zero');
    return { kind: 'slice', start: parseInteger(a), end: parseInteger(b), step };
  }
  const index = parseInteger(body);
  if (index === undefined) throw new ParseError('invalid array index');
  return { kind: 'index', index };
}

function parseOperand(c: Cursor): Operand {
  c.skipSpaces();
  const ch = c.peek();
  if (ch === '"' || ch === "'") return { kind: 'literal', value: readQuoted(c) };
  if (ch === '@' || ch === '$' || ch === '.') return { kind: 'path', steps: parseSteps(c, true) };
  const m = /^(-?\d+(?:\.\d+)?|true|false|null)/.exec(c.text.slice(c.pos));
  if (m !== null) {
    c.pos += (m[0] as string).length;
    return { kind: 'literal', value: JSON.parse(m[0] as string) as unknown };
  }
  throw new ParseError(`unrecognized filter operand at ${c.text.slice(c.pos)}`);
}

function parseFilter(c: Cursor): Step {
  const left = parseOperand(c);
  c.skipSpaces();
  const m = /^(==|!=|<=|>=|<|>)/.exec(c.text.slice(c.pos));
  if (m === null) return { kind: 'filter', left, op: undefined, right: undefined };
  c.pos += (m[0] as string).length;
  const right = parseOperand(c);
  return { kind: 'filter', left, op: m[0] as FilterOp, right };
}

/** Parses path steps until the end or (when `stopAtOperator`) a filter operator or `)`. */
function parseSteps(c: Cursor, stopAtOperator: boolean): Step[] {
  const steps: Step[] = [];
  while (!c.eof()) {
    const ch = c.peek();
    if (stopAtOperator && (ch === ' ' || ch === ')' || ch === '=' || ch === '!' || ch === '<' || ch === '>')) break;
    if (ch === '$') {
      c.pos++;
      steps.push({ kind: 'root' });
    } else if (ch === '@') {
      c.pos++;
      steps.push({ kind: 'current' });
    } else if (ch === '[') {
      steps.push(parseBracket(c));
    } else if (ch === '.') {
      if (c.peek(1) === '.') {
        c.pos += 2;
        steps.push({ kind: 'recursive' });
        if (c.peek() === '[' || c.peek() === '*') continue;
        const name = readIdentifier(c);
        if (name !== '') steps.push({ kind: 'field', names: [name] });
        continue;
      }
      c.pos++;
      if (c.peek() === '*') {
        c.pos++;
        steps.push({ kind: 'wildcard' });
        continue;
      }
      if (c.eof() || c.peek() === '[' || c.peek() === ' ') continue; // `{.}` is the current object
      const name = readIdentifier(c);
      if (name === '') throw new ParseError(`invalid field name at ${c.text.slice(c.pos)}`);
      steps.push({ kind: 'field', names: [name] });
    } else if (ch === ' ' || ch === '\t') {
      c.pos++;
    } else {
      // A bare identifier (`{metadata.name}` is accepted by kubectl as `.metadata.name`).
      const name = readIdentifier(c);
      if (name === '') throw new ParseError(`unrecognized character in action: ${JSON.stringify(ch)}`);
      steps.push({ kind: 'field', names: [name] });
    }
  }
  return steps;
}

/** Parses a template (`{.a.b}` or text with several actions and range blocks). */
export function parseJsonPath(template: string): ParseResult {
  try {
    const root: JsonPathNode[] = [];
    const stack: { body: JsonPathNode[] }[] = [{ body: root }];
    for (const part of splitTemplate(template)) {
      const target = (stack[stack.length - 1] as { body: JsonPathNode[] }).body;
      if (part.text !== undefined) {
        target.push({ kind: 'text', text: part.text });
        continue;
      }
      const action = (part.action ?? '').trim();
      if (action === 'end') {
        if (stack.length === 1) throw new ParseError('not in range, nothing to end');
        stack.pop();
        continue;
      }
      if (action.startsWith('range ') || action === 'range') {
        const c = new Cursor(action.slice(5).trim());
        const node: JsonPathNode = { kind: 'range', steps: parseSteps(c, false), body: [] };
        target.push(node);
        stack.push(node);
        continue;
      }
      if (action.startsWith('"') || action.startsWith("'")) {
        const c = new Cursor(action);
        target.push({ kind: 'literal', value: readQuoted(c) });
        continue;
      }
      const c = new Cursor(action);
      target.push({ kind: 'path', steps: parseSteps(c, false) });
    }
    if (stack.length > 1) throw new ParseError('unclosed range');
    return { ok: true, path: { template, nodes: root } };
  } catch (err) {
    if (err instanceof ParseError) return { ok: false, error: err.message };
    throw err;
  }
}

