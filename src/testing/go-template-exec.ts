/**
 * Executes a parsed Go template (go-template-parse.ts) against data, with
 * text/template's rules:
 * - a command's first word decides: a function is called with the other words
 *   and the piped value as its last argument; a field chain is evaluated
 *   (a struct method may take arguments, a map key may not); constants and
 *   variables take no arguments;
 * - a field of a nil value is an error (`nil pointer evaluating interface
 *   {}.x`); a missing map key is nil; an unknown struct field is an error;
 * - an action prints its value with `%v` unless its pipeline declares a
 *   variable; variables live until the `{{end}}` of the block that declared
 *   them (`if`/`with` chains share one scope), `=` assigns the nearest one;
 * - `range` walks slices in order and maps in key order (one variable: the
 *   element; two: key/index and element), an int from 0 up, nil or empty
 *   runs `{{else}}`; `break`/`continue` apply to the innermost range;
 * - `template`/`include` run a `define` with a fresh variable scope whose `$`
 *   is the data passed; nesting is capped (Helm stops runaway recursion).
 * Start at `executeTemplate`.
 */
import { FUNCS, TemplateExecError, formatValue, goTypeName, isGoStruct, isNil, isTrue, type FuncContext } from './go-template-funcs.ts';
import type { Command, Operand, Pipeline, TemplateNode } from './go-template-parse.ts';

const MAX_DEPTH = 1000;

class BreakSignal {}
class ContinueSignal {}

interface Variable {
  name: string;
  value: unknown;
}

class LocatedError extends Error {}

export interface ExecuteOptions {
  /** Name shown in errors (`chart/templates/x.yaml`). */
  name: string;
  /** Every `define`d template visible to `template` and `include`. */
  defines: ReadonlyMap<string, TemplateNode[]>;
}

/** Renders `nodes` with `data` as dot and `$`; throws an Error naming the template and line. */
export function executeTemplate(nodes: TemplateNode[], data: unknown, options: ExecuteOptions): string {
  return new Execution(options, 0).run(nodes, data);
}

class Execution {
  readonly #vars: Variable[] = [];
  #out = '';
  #line = 0;
  #name: string;

  constructor(
    readonly options: ExecuteOptions,
    readonly depth: number,
  ) {
    this.#name = options.name;
  }

  run(nodes: TemplateNode[], data: unknown, name = this.options.name): string {
    this.#name = name;
    this.#vars.push({ name: '$', value: data });
    try {
      this.#walk(nodes, data);
    } catch (err) {
      if (err instanceof BreakSignal || err instanceof ContinueSignal) throw new Error(`template: ${this.#name}: break or continue outside range`);
      if (err instanceof LocatedError) throw err;
      // JavaScript's stack gives out before Helm's 1000 nested includes would: the same failure, named as Helm names it.
      if (err instanceof RangeError) throw new LocatedError(`template: ${this.#name}:${this.#line}: rendering template has a nested reference name: ${this.#name}: unable to execute template`);
      const message = err instanceof Error ? err.message : String(err);
      throw new LocatedError(`template: ${this.#name}:${this.#line}: executing "${this.#name}": ${message}`);
    }
    return this.#out;
  }

  #walk(nodes: TemplateNode[], dot: unknown): void {
    for (const node of nodes) this.#node(node, dot);
  }

  #node(node: TemplateNode, dot: unknown): void {
    switch (node.type) {
      case 'text':
        this.#out += node.text;
        return;
      case 'action': {
        this.#line = node.line;
        const value = this.#pipeline(node.pipe, dot);
        if (node.pipe.decl.length === 0) this.#out += formatValue(value, true);
        return;
      }
      case 'if':
      case 'with': {
        this.#line = node.line;
        const mark = this.#vars.length;
        try {
          for (const branch of node.branches) {
            const value = this.#pipeline(branch.pipe, dot);
            if (isTrue(value)) {
              this.#walk(branch.body, node.type === 'with' ? value : dot);
              return;
            }
          }
          if (node.otherwise !== undefined) this.#walk(node.otherwise, dot);
        } finally {
          this.#vars.length = mark;
        }
        return;
      }
      case 'range':
        this.#range(node, dot);
        return;
      case 'template': {
        this.#line = node.line;
        const data = node.pipe === undefined ? undefined : this.#pipeline(node.pipe, dot);
        this.#out += this.#include(node.name, data);
        return;
      }
      case 'break':
        throw new BreakSignal();
      case 'continue':
        throw new ContinueSignal();
    }
  }

  #range(node: Extract<TemplateNode, { type: 'range' }>, dot: unknown): void {
    this.#line = node.line;
    const mark = this.#vars.length;
    const value = this.#pipeline({ ...node.pipe, decl: [] }, dot);
    let entries: [unknown, unknown][];
    if (isNil(value)) entries = [];
    else if (Array.isArray(value)) entries = value.map((e, i) => [BigInt(i), e]);
    else if (typeof value === 'bigint') entries = Array.from({ length: Number(value > 0n ? value : 0n) }, (_, i) => [BigInt(i), BigInt(i)]);
    else if (typeof value === 'object' && !isGoStruct(value)) {
      const m = value as Record<string, unknown>;
      entries = Object.keys(m)
        .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
        .map((k) => [k, m[k]]);
    } else throw new TemplateExecError(`range can't iterate over ${formatValue(value, false)}`);
    const [first, second] = node.pipe.decl;
    try {
      if (entries.length === 0) {
        if (node.otherwise !== undefined) this.#walk(node.otherwise, dot);
        return;
      }
      for (const [key, element] of entries) {
        this.#vars.length = mark;
        if (second !== undefined) {
          this.#vars.push({ name: first!, value: key }, { name: second, value: element });
        } else if (first !== undefined) {
          this.#vars.push({ name: first, value: element });
        }
        try {
          this.#walk(node.body, element);
        } catch (err) {
          if (err instanceof BreakSignal) break;
          if (err instanceof ContinueSignal) continue;
          throw err;
        }
      }
    } finally {
      this.#vars.length = mark;
    }
  }

  #include(name: string, data: unknown): string {
    const body = this.options.defines.get(name);
    if (body === undefined) throw new TemplateExecError(`no template "${name}" associated with template "${this.options.name}"`);
    if (this.depth >= MAX_DEPTH) throw new TemplateExecError(`rendering template has a nested reference name: ${name}: unable to execute template`);
    return new Execution(this.options, this.depth + 1).run(body, data, name);
  }

  // ---- pipelines ----

  #pipeline(pipe: Pipeline, dot: unknown): unknown {
    this.#line = pipe.line;
    let value: unknown;
    pipe.cmds.forEach((cmd, i) => {
      value = this.#command(cmd, dot, i > 0, value);
    });
    for (const name of pipe.decl) {
      if (pipe.assign) {
        const v = this.#findVar(name);
        v.value = value;
      } else {
        this.#vars.push({ name, value });
      }
    }
    return value;
  }

  #findVar(name: string): Variable {
    for (let i = this.#vars.length - 1; i >= 0; i--) if (this.#vars[i]!.name === name) return this.#vars[i]!;
    throw new TemplateExecError(`undefined variable: ${name}`);
  }

  #command(cmd: Command, dot: unknown, hasFinal: boolean, final: unknown): unknown {
    const [first, ...rest] = cmd.args;
    if (first === undefined) throw new TemplateExecError('empty command');
    switch (first.t) {
      case 'ident':
        return this.#call(first.name, rest, dot, hasFinal, final);
      case 'field':
        return this.#chain(dot, first.names, rest, dot, hasFinal, final);
      case 'var':
        return this.#chain(this.#findVar(first.name).value, first.names, rest, dot, hasFinal, final, first.names.length === 0 ? first.name : undefined);
      case 'pipe':
        return this.#chain(this.#pipeline(first.pipe, dot), first.names, rest, dot, hasFinal, final, first.names.length === 0 ? 'parenthesized pipeline' : undefined);
      case 'nil':
        throw new TemplateExecError('nil is not a command');
      default:
        if (rest.length > 0 || hasFinal) throw new TemplateExecError(`can't give argument to non-function ${this.#describe(first)}`);
        return this.#arg(first, dot);
    }
  }

  #describe(op: Operand): string {
    switch (op.t) {
      case 'string':
        return JSON.stringify(op.value);
      case 'int':
        return op.value.toString();
      case 'float':
        return String(op.value);
      case 'bool':
        return String(op.value);
      case 'dot':
        return '.';
      default:
        return op.t;
    }
  }

  /** Walks `names` from `receiver`; the last name may be a method taking `args` (and the piped value). */
  #chain(receiver: unknown, names: string[], args: Operand[], dot: unknown, hasFinal: boolean, final: unknown, bare?: string): unknown {
    if (names.length === 0) {
      if (args.length > 0 || hasFinal) throw new TemplateExecError(`can't give argument to non-function ${bare ?? 'value'}`);
      return receiver;
    }
    let cur = receiver;
    names.forEach((name, i) => {
      const last = i === names.length - 1;
      cur = this.#field(cur, name, last ? args : [], dot, last && hasFinal, final);
    });
    return cur;
  }

  #field(receiver: unknown, name: string, args: Operand[], dot: unknown, hasFinal: boolean, final: unknown): unknown {
    if (isNil(receiver)) throw new TemplateExecError(`nil pointer evaluating interface {}.${name}`);
    if (isGoStruct(receiver)) {
      const fields = receiver as Record<string, unknown>;
      if (!Object.prototype.hasOwnProperty.call(fields, name)) throw new TemplateExecError(`can't evaluate field ${name} in type ${goTypeName(receiver)}`);
      const v = fields[name];
      if (typeof v === 'function') {
        const values = args.map((a) => this.#arg(a, dot));
        if (hasFinal) values.push(final);
        return (v as (...a: unknown[]) => unknown)(...values);
      }
      if (args.length > 0 || hasFinal) throw new TemplateExecError(`${name} has arguments but cannot be invoked as function`);
      return v;
    }
    if (typeof receiver === 'object' && !Array.isArray(receiver)) {
      if (args.length > 0 || hasFinal) throw new TemplateExecError(`${name} is not a method but has arguments`);
      const m = receiver as Record<string, unknown>;
      return Object.prototype.hasOwnProperty.call(m, name) ? m[name] : undefined;
    }
    throw new TemplateExecError(`can't evaluate field ${name} in type ${goTypeName(receiver)}`);
  }

  #arg(op: Operand, dot: unknown): unknown {
    switch (op.t) {
      case 'dot':
        return dot;
      case 'field':
        return this.#chain(dot, op.names, [], dot, false, undefined);
      case 'var':
        return this.#chain(this.#findVar(op.name).value, op.names, [], dot, false, undefined);
      case 'pipe':
        return this.#chain(this.#pipeline(op.pipe, dot), op.names, [], dot, false, undefined);
      case 'ident':
        return this.#call(op.name, [], dot, false, undefined);
      case 'string':
      case 'int':
      case 'float':
      case 'bool':
        return op.value;
      case 'nil':
        return undefined;
    }
  }

  #call(name: string, args: Operand[], dot: unknown, hasFinal: boolean, final: unknown): unknown {
    const def = FUNCS[name];
    if (def === undefined) throw new TemplateExecError(`function "${name}" not defined`);
    const count = args.length + (hasFinal ? 1 : 0);
    const [min, max] = def.arity;
    if (count < min || count > max) {
      throw new TemplateExecError(max === Infinity ? `wrong number of args for ${name}: want at least ${min} got ${count}` : `wrong number of args for ${name}: want ${min === max ? min : `${min}-${max}`} got ${count}`);
    }
    const ctx: FuncContext = { include: (n, data) => this.#include(n, data) };
    const values: unknown[] = def.lazy === true ? args.map((a) => () => this.#arg(a, dot)) : args.map((a) => this.#arg(a, dot));
    if (hasFinal) values.push(def.lazy === true ? () => final : final);
    try {
      return def.fn(values, ctx);
    } catch (err) {
      if (err instanceof LocatedError || !(err instanceof TemplateExecError) || name === 'include' || name === 'fail' || name === 'required') throw err;
      if (err.message.startsWith('wrong type for value')) throw err;
      throw new TemplateExecError(`error calling ${name}: ${err.message}`);
    }
  }
}
