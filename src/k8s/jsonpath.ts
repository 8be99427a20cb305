/**
 * The JSONPath dialect of Kubernetes (k8s.io/client-go/util/jsonpath), as
 * `kubectl -o jsonpath`, CRD `additionalPrinterColumns` and `status` commands
 * use it: a template of literal text and `{...}` actions.
 *
 * Supported inside an action: `$` (root), `@` (current), `.field`,
 * `['field']`, `..field` (recursive descent), `[*]` / `.*`, `[n]` (negative
 * counts from the end), `[start:end:step]`, unions `[a,b]` / `['a','b']`,
 * filters `[?(@.x == "y")]` (`==`, `!=`, `<`, `<=`, `>`, `>=`, or a bare path
 * for existence), quoted literals, and `range` ... `end` blocks.
 * Not supported: regular-expression filters (`=~`), which Kubernetes lacks too.
 *
 * Semantics kept from upstream: a missing key is an error ("x is not found")
 * unless `allowMissingKeys`; an index past the end is an error ("array index
 * out of bounds") unless `allowMissingKeys`; printing writes strings bare,
 * integral numbers without a fraction, and maps/lists as JSON, results of one
 * action separated by a space.
 *
 * Start with `parseJsonPath` (errors as data), then `findResults` (values per
 * action) or `printJsonPath` (the text kubectl prints). Pure: no I/O.
 */

type Step =
  | { kind: 'root' }
  | { kind: 'current' }
  | { kind: 'field'; names: string[] }
  | { kind: 'recursive' }
  | { kind: 'wildcard' }
  | { kind: 'index'; index: number }
  | { kind: 'slice'; start: number | undefined; end: number | undefined; step: number | undefined }
  | { kind: 'union'; branches: Step[][] }
  | { kind: 'filter'; left: Operand; op: FilterOp | undefined; right: Operand | undefined };

type Operand = { kind: 'path'; steps: Step[] } | { kind: 'literal'; value: unknown };
type FilterOp = '==' | '!=' | '<' | '<=' | '>' | '>=';

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
export type FindResult = { ok: true; results: unknown[][] } | { ok: false; error: string };
export type PrintResult = { ok: true; text: string } | { ok: false; error: string };

export interface EvalOptions {
  /** Missing keys and out-of-range indexes give no result instead of an error (printer columns use this). */
  allowMissingKeys?: boolean;
}

// ---- parsing ----

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

// ---- evaluation ----

class EvalError extends Error {}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function compare(a: unknown, op: FilterOp, b: unknown): boolean {
  if (op === '==') return JSON.stringify(a) === JSON.stringify(b);
  if (op === '!=') return JSON.stringify(a) !== JSON.stringify(b);
  if (typeof a === 'number' && typeof b === 'number') {
    return op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : a >= b;
  }
  if (typeof a === 'string' && typeof b === 'string') {
    return op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : a >= b;
  }
  return false;
}

function recursiveValues(value: unknown, out: unknown[]): void {
  out.push(value);
  if (Array.isArray(value)) for (const v of value) recursiveValues(v, out);
  else if (isRecord(value)) for (const k of Object.keys(value)) recursiveValues(value[k], out);
}

function evalSteps(steps: Step[], root: unknown, current: unknown[], opts: EvalOptions): unknown[] {
  let values = current;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i] as Step;
    const next: unknown[] = [];
    switch (step.kind) {
      case 'root':
        next.push(root);
        break;
      case 'current':
        next.push(...values);
        break;
      case 'recursive': {
        for (const v of values) recursiveValues(v, next);
        const following = steps[i + 1];
        // `..name` selects the named field at any depth: missing keys are not errors there.
        if (following?.kind === 'field') {
          i++;
          for (const v of next.splice(0)) for (const name of following.names) if (isRecord(v) && name in v) next.push(v[name]);
        }
        break;
      }
      case 'field':
        for (const v of values) {
          for (const name of step.names) {
            if (isRecord(v) && Object.prototype.hasOwnProperty.call(v, name)) next.push(v[name]);
            else if (!opts.allowMissingKeys) throw new EvalError(`${name} is not found`);
          }
        }
        break;
      case 'wildcard':
        for (const v of values) {
          if (Array.isArray(v)) next.push(...v);
          else if (isRecord(v)) for (const k of Object.keys(v).sort()) next.push(v[k]);
        }
        break;
      case 'index':
        for (const v of values) {
          if (!Array.isArray(v)) {
            if (!opts.allowMissingKeys) throw new EvalError(`not an array: ${JSON.stringify(v)}`);
            continue;
          }
          const idx = step.index < 0 ? v.length + step.index : step.index;
          if (idx < 0 || idx >= v.length) {
            if (!opts.allowMissingKeys) throw new EvalError(`array index out of bounds: index ${step.index}, length ${v.length}`);
            continue;
          }
          next.push(v[idx]);
        }
        break;
      case 'slice':
        for (const v of values) {
          if (!Array.isArray(v)) continue;
          const len = v.length;
          const norm = (n: number) => (n < 0 ? Math.max(0, len + n) : Math.min(n, len));
          const start = step.start === undefined ? 0 : norm(step.start);
          const end = step.end === undefined ? len : norm(step.end);
          const by = step.step ?? 1;
          if (by > 0) for (let j = start; j < end; j += by) next.push(v[j]);
          else for (let j = end - 1; j >= start; j += by) next.push(v[j]);
        }
        break;
      case 'union':
        for (const branch of step.branches) next.push(...evalSteps(branch, root, values, opts));
        break;
      case 'filter':
        for (const v of values) {
          const items = Array.isArray(v) ? v : [v];
          for (const item of items) if (filterMatches(step, root, item)) next.push(item);
        }
        break;
    }
    values = next;
  }
  return values;
}

function operandValues(operand: Operand, root: unknown, item: unknown): unknown[] {
  if (operand.kind === 'literal') return [operand.value];
  return evalSteps(operand.steps, root, [item], { allowMissingKeys: true });
}

function filterMatches(step: Extract<Step, { kind: 'filter' }>, root: unknown, item: unknown): boolean {
  const left = operandValues(step.left, root, item);
  if (step.op === undefined || step.right === undefined) return left.length > 0 && left.some((v) => v !== null && v !== undefined);
  const right = operandValues(step.right, root, item);
  const op = step.op;
  return left.some((l) => right.some((r) => compare(l, op, r)));
}

/** The values each top-level action of the template selects (text nodes are skipped). */
export function findResults(path: JsonPath, data: unknown, opts: EvalOptions = {}): FindResult {
  try {
    const results: unknown[][] = [];
    for (const node of path.nodes) {
      if (node.kind === 'path') results.push(evalSteps(node.steps, data, [data], opts));
      else if (node.kind === 'literal') results.push([node.value]);
      else if (node.kind === 'range') results.push(evalSteps(node.steps, data, [data], opts));
    }
    return { ok: true, results };
  } catch (err) {
    if (err instanceof EvalError) return { ok: false, error: err.message };
    throw err;
  }
}

/** How the jsonpath printer writes one value (`fmt.Print` of the unstructured value, JSON for maps and lists). */
export function formatJsonPathValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

function printNodes(nodes: JsonPathNode[], root: unknown, current: unknown, opts: EvalOptions): string {
  let out = '';
  for (const node of nodes) {
    if (node.kind === 'text') out += node.text;
    else if (node.kind === 'literal') out += node.value;
    else if (node.kind === 'path') out += evalSteps(node.steps, root, [current], opts).map(formatJsonPathValue).join(' ');
    else {
      for (const item of evalSteps(node.steps, root, [current], opts)) {
        const items = Array.isArray(item) ? item : [item];
        for (const el of items) out += printNodes(node.body, root, el, opts);
      }
    }
  }
  return out;
}

/** The text kubectl prints for a template against `data`. */
export function printJsonPath(path: JsonPath, data: unknown, opts: EvalOptions = {}): PrintResult {
  try {
    return { ok: true, text: printNodes(path.nodes, data, data, opts) };
  } catch (err) {
    if (err instanceof EvalError) return { ok: false, error: err.message };
    throw err;
  }
}

/**
 * `RelaxedJSONPathExpression` of kubectl: `.a.b`, `a.b`, `{.a.b}` and `{a.b}`
 * all mean `{.a.b}`. Answers the template form or an error.
 */
export function relaxedJsonPath(expr: string): { ok: true; template: string } | { ok: false; error: string } {
  const trimmed = expr.trim();
  if (trimmed === '') return { ok: true, template: '' };
  const m = /^\{?(.*?)\}?$/.exec(trimmed);
  let body = m?.[1] ?? trimmed;
  if (body.startsWith('{') || body.endsWith('}')) return { ok: false, error: `unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'` };
  if (!body.startsWith('.') && !body.startsWith('$') && !body.startsWith('[')) body = `.${body}`;
  return { ok: true, template: `{${body}}` };
}
