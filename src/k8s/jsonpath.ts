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

import { type FilterOp, type JsonPath, type JsonPathNode, type Operand, type Step } from './jsonpath-parse.ts';

export { parseJsonPath, type JsonPath, type JsonPathNode, type ParseResult } from './jsonpath-parse.ts';

export type FindResult = { ok: true; results: unknown[][] } | { ok: false; error: string };
export type PrintResult = { ok: true; text: string } | { ok: false; error: string };

export interface EvalOptions {
  /** Missing keys and out-of-range indexes give no result instead of an error (printer columns use this). */
  allowMissingKeys?: boolean;
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
