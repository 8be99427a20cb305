/**
 * Parser for the subset of Go's text/template that the Helm chart uses
 * (helm-template.ts renders with it). Produces a small AST; execution lives in
 * go-template-exec.ts, the function table in go-template-funcs.ts.
 *
 * Reproduced from Go's text/template/parse (facts of the language, not code):
 * - delimiters `{{ }}`; `{{- ` trims all white space (space, tab, CR, LF)
 *   before the action and ` -}}` all after it; the dash must be separated
 *   from the action's body by white space (`{{-3}}` is the number -3);
 * - comments `{{/* *\/}}` must hug the delimiters (trim markers allowed);
 * - actions may span lines; pipelines `a | b c` pass the left value as the
 *   LAST argument of the right command; `$x := p` declares, `$x = p` assigns;
 * - `.A.B`, `$x.A`, `(pipe).A` chain fields only when written without a
 *   space before each `.Name`;
 * - integer literals are Go `int` (kept as bigint so they stay a different
 *   kind from the float64 numbers of values files), others float64;
 * - functions are checked when the template is parsed: an unknown one is an
 *   error naming it, as `function "x" not defined`.
 * Unsupported actions (`block`, char constants, complex numbers) are errors,
 * never guesses. Start at `parseTemplate`.
 */

export type Operand =
  | { t: 'dot' }
  | { t: 'field'; names: string[] }
  | { t: 'var'; name: string; names: string[] }
  | { t: 'ident'; name: string }
  | { t: 'string'; value: string }
  | { t: 'int'; value: bigint }
  | { t: 'float'; value: number }
  | { t: 'bool'; value: boolean }
  | { t: 'nil' }
  | { t: 'pipe'; pipe: Pipeline; names: string[] };

export interface Command {
  args: Operand[];
}

export interface Pipeline {
  /** Variables declared (`:=`) or assigned (`=`) by this pipeline. */
  decl: string[];
  assign: boolean;
  cmds: Command[];
  line: number;
}

export type TemplateNode =
  | { type: 'text'; text: string }
  | { type: 'action'; pipe: Pipeline; line: number }
  | { type: 'if' | 'with'; branches: { pipe: Pipeline; body: TemplateNode[] }[]; otherwise: TemplateNode[] | undefined; line: number }
  | { type: 'range'; pipe: Pipeline; body: TemplateNode[]; otherwise: TemplateNode[] | undefined; line: number }
  | { type: 'template'; name: string; pipe: Pipeline | undefined; line: number }
  | { type: 'break' | 'continue'; line: number };

export interface ParsedTemplate {
  /** The template's own body (what rendering the file produces). */
  body: TemplateNode[];
  /** `define`d templates, by name. */
  defines: Map<string, TemplateNode[]>;
}

export class TemplateSyntaxError extends Error {}

const SPACE = new Set([' ', '\t', '\r', '\n']);

type Token =
  | { k: 'space' }
  | { k: 'pipe' | 'lparen' | 'rparen' | 'comma' | 'declare' | 'assign' }
  | { k: 'field'; name: string }
  | { k: 'dot' }
  | { k: 'var'; name: string }
  | { k: 'ident'; name: string }
  | { k: 'string'; value: string }
  | { k: 'number'; text: string };

interface RawAction {
  tokens: Token[];
  line: number;
  comment: boolean;
}

type Piece = { text: string } | RawAction;

const ESCAPES: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', '"': '"', "'": "'" };

/** Reads a Go interpreted string literal starting at `src[i] === '"'`; returns the value and the index after it. */
function readQuoted(src: string, i: number, fail: (m: string) => never): [string, number] {
  let out = '';
  let j = i + 1;
  for (;;) {
    const c = src[j];
    if (c === undefined || c === '\n') fail('unterminated quoted string');
    if (c === '"') return [out, j + 1];
    if (c !== '\\') {
      out += c;
      j++;
      continue;
    }
    const e = src[j + 1] ?? '';
    if (e in ESCAPES) {
      out += ESCAPES[e];
      j += 2;
    } else if (e === 'x' || e === 'u' || e === 'U') {
      const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const hex = src.slice(j + 2, j + 2 + n);
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(hex)) fail(`invalid escape \\${e}${hex}`);
      out += e === 'x' ? String.fromCharCode(parseInt(hex, 16)) : String.fromCodePoint(parseInt(hex, 16));
      j += 2 + n;
    } else if (/[0-7]/.test(e)) {
      const oct = src.slice(j + 1, j + 4);
      if (!/^[0-7]{3}$/.test(oct)) fail(`invalid escape \\${oct}`);
      out += String.fromCharCode(parseInt(oct, 8));
      j += 4;
    } else {
      fail(`unknown escape sequence \\${e}`);
    }
  }
}

const IDENT = /[A-Za-z0-9_]/;

/**
 * Tokenizes one action's body starting at `i` (just after `{{` and a trim
 * marker), up to the closing delimiter. Returns the tokens, where the
 * closing `}}` starts, and whether it carries a trim marker.
 */
function lexAction(src: string, start: number, fail: (m: string) => never): { tokens: Token[]; end: number; trimRight: boolean } {
  const tokens: Token[] = [];
  let i = start;
  for (;;) {
    const c = src[i];
    if (c === undefined) fail('unclosed action');
    if (SPACE.has(c)) {
      let j = i;
      while (j < src.length && SPACE.has(src[j] ?? '')) j++;
      if (src.startsWith('-}}', j)) return { tokens, end: j + 1, trimRight: true };
      if (tokens[tokens.length - 1]?.k !== 'space') tokens.push({ k: 'space' });
      i = j;
      continue;
    }
    if (src.startsWith('}}', i)) return { tokens, end: i, trimRight: false };
    if (c === '|') {
      tokens.push({ k: 'pipe' });
      i++;
    } else if (c === '(') {
      tokens.push({ k: 'lparen' });
      i++;
    } else if (c === ')') {
      tokens.push({ k: 'rparen' });
      i++;
    } else if (c === ',') {
      tokens.push({ k: 'comma' });
      i++;
    } else if (src.startsWith(':=', i)) {
      tokens.push({ k: 'declare' });
      i += 2;
    } else if (c === '=') {
      tokens.push({ k: 'assign' });
      i++;
    } else if (c === '"') {
      const [value, next] = readQuoted(src, i, fail);
      tokens.push({ k: 'string', value });
      i = next;
    } else if (c === '`') {
      const close = src.indexOf('`', i + 1);
      if (close < 0) fail('unterminated raw quoted string');
      tokens.push({ k: 'string', value: src.slice(i + 1, close).replace(/\r/g, '') });
      i = close + 1;
    } else if (c === "'") {
      fail('character constants are not supported by this renderer');
    } else if (c === '$') {
      let j = i + 1;
      while (j < src.length && IDENT.test(src[j] ?? '')) j++;
      tokens.push({ k: 'var', name: src.slice(i, j) });
      i = j;
    } else if (c === '.' && !/[0-9]/.test(src[i + 1] ?? '')) {
      let j = i + 1;
      while (j < src.length && IDENT.test(src[j] ?? '')) j++;
      if (j === i + 1) tokens.push({ k: 'dot' });
      else tokens.push({ k: 'field', name: src.slice(i + 1, j) });
      i = j;
    } else if (/[0-9+\-.]/.test(c)) {
      const m = /^[+-]?(0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(\d[\d_]*)?\.?\d*([eE][+-]?\d+)?)/.exec(src.slice(i));
      const text = m?.[0] ?? '';
      if (text === '' || text === '+' || text === '-' || text === '.') fail(`bad character ${JSON.stringify(c)}`);
      if (/[A-Za-z_]/.test(src[i + text.length] ?? '') && !/^[+-]?0[xXbBoO]/.test(text)) fail(`bad number syntax: ${JSON.stringify(src.slice(i, i + text.length + 1))}`);
      tokens.push({ k: 'number', text });
      i += text.length;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i;
      while (j < src.length && IDENT.test(src[j] ?? '')) j++;
      tokens.push({ k: 'ident', name: src.slice(i, j) });
      i = j;
    } else {
      fail(`unexpected ${JSON.stringify(c)} in action`);
    }
  }
}

function lineAt(src: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index && i < src.length; i++) if (src[i] === '\n') line++;
  return line;
}

/** Splits the source into text and actions, applying trim markers. */
function scan(src: string, name: string): Piece[] {
  const pieces: Piece[] = [];
  let i = 0;
  let trimNext = false;
  for (;;) {
    const open = src.indexOf('{{', i);
    let text = src.slice(i, open < 0 ? src.length : open);
    if (trimNext) text = text.replace(/^[ \t\r\n]+/, '');
    trimNext = false;
    if (open < 0) {
      if (text !== '') pieces.push({ text });
      return pieces;
    }
    const line = lineAt(src, open);
    const fail = (m: string): never => {
      throw new TemplateSyntaxError(`template: ${name}:${line}: ${m}`);
    };
    let j = open + 2;
    if (src[j] === '-' && SPACE.has(src[j + 1] ?? '')) {
      text = text.replace(/[ \t\r\n]+$/, '');
      j += 1;
    }
    if (text !== '') pieces.push({ text });
    // Comments hug the delimiters: `{{/*`, `{{- /*`, `*/}}`, `*/ -}}`.
    const afterSpace = j + (/^[ \t\r\n]+/.exec(src.slice(j))?.[0].length ?? 0);
    if (src.startsWith('/*', j === open + 2 ? j : afterSpace)) {
      const from = j === open + 2 ? j : afterSpace;
      const close = src.indexOf('*/', from + 2);
      if (close < 0) fail('unclosed comment');
      let k = close + 2;
      if (src.startsWith('}}', k)) {
        i = k + 2;
      } else {
        const ws = /^[ \t\r\n]+/.exec(src.slice(k))?.[0].length ?? 0;
        if (ws > 0 && src.startsWith('-}}', k + ws)) {
          trimNext = true;
          i = k + ws + 3;
        } else {
          fail('comment ends before closing delimiter');
        }
      }
      pieces.push({ tokens: [], line, comment: true });
      continue;
    }
    const { tokens, end, trimRight } = lexAction(src, j, fail);
    pieces.push({ tokens: tokens.filter((t, idx) => !(t.k === 'space' && (idx === 0 || idx === tokens.length - 1))), line, comment: false });
    trimNext = trimRight;
    i = end + 2;
  }
}

const KEYWORDS = new Set(['if', 'else', 'end', 'range', 'with', 'define', 'template', 'block', 'break', 'continue']);

function parseNumber(text: string): Operand {
  const clean = text.replace(/_/g, '');
  if (/^[+-]?(0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|\d+)$/.test(clean)) {
    const neg = clean.startsWith('-');
    const body = clean.replace(/^[+-]/, '');
    // A leading 0 is octal in Go (`0755`).
    const value = /^0\d/.test(body) ? BigInt(`0o${body.slice(1)}`) : BigInt(body);
    return { t: 'int', value: neg ? -value : value };
  }
  const value = Number(clean);
  if (Number.isNaN(value)) throw new TemplateSyntaxError(`bad number syntax: ${JSON.stringify(text)}`);
  return { t: 'float', value };
}

/** Parses the tokens of one action as a pipeline. */
class PipelineParser {
  #i = 0;
  constructor(readonly tokens: Token[], readonly line: number, readonly fail: (m: string) => never, readonly isFunction: (name: string) => boolean) {}

  peek(offset = 0): Token | undefined {
    return this.tokens[this.#i + offset];
  }
  next(): Token | undefined {
    return this.tokens[this.#i++];
  }
  skipSpace(): void {
    while (this.peek()?.k === 'space') this.#i++;
  }
  done(): boolean {
    this.skipSpace();
    return this.#i >= this.tokens.length;
  }

  pipeline(allowDecl: 'none' | 'one' | 'two', stop: 'end' | 'rparen' = 'end'): Pipeline {
    this.skipSpace();
    const pipe: Pipeline = { decl: [], assign: false, cmds: [], line: this.line };
    if (allowDecl !== 'none' && this.peek()?.k === 'var') {
      // `$x :=`, `$x =`, or (range) `$i, $v :=`.
      const save = this.#i;
      const names: string[] = [];
      for (;;) {
        const v = this.next();
        if (v?.k !== 'var') break;
        names.push(v.name);
        this.skipSpace();
        const t = this.peek();
        if (t?.k === 'comma' && allowDecl === 'two' && names.length === 1) {
          this.next();
          this.skipSpace();
          continue;
        }
        if (t?.k === 'declare' || t?.k === 'assign') {
          this.next();
          pipe.decl = names;
          pipe.assign = t.k === 'assign';
          break;
        }
        break;
      }
      if (pipe.decl.length === 0) this.#i = save;
    }
    for (;;) {
      this.skipSpace();
      const cmd: Command = { args: [] };
      for (;;) {
        this.skipSpace();
        const t = this.peek();
        if (t === undefined || t.k === 'pipe' || t.k === 'rparen') break;
        cmd.args.push(this.operand());
      }
      if (cmd.args.length === 0) this.fail('missing value for command');
      pipe.cmds.push(cmd);
      const t = this.peek();
      if (t?.k === 'pipe') {
        this.next();
        continue;
      }
      if (t?.k === 'rparen' && stop !== 'rparen') this.fail('unexpected right paren');
      break;
    }
    return pipe;
  }

  /** Field names chained right after a term (no space before each). */
  chain(): string[] {
    const names: string[] = [];
    for (let t = this.peek(); t?.k === 'field'; t = this.peek()) {
      names.push(t.name);
      this.next();
    }
    return names;
  }

  operand(): Operand {
    const t = this.next();
    if (t === undefined) return this.fail('unexpected end of action');
    switch (t.k) {
      case 'dot': {
        if (this.peek()?.k === 'field') this.fail('unexpected . after term "."');
        return { t: 'dot' };
      }
      case 'field':
        return { t: 'field', names: [t.name, ...this.chain()] };
      case 'var':
        return { t: 'var', name: t.name, names: this.chain() };
      case 'string':
        return { t: 'string', value: t.value };
      case 'number':
        return parseNumber(t.text);
      case 'lparen': {
        const pipe = this.pipeline('none', 'rparen');
        if (this.next()?.k !== 'rparen') this.fail('unclosed left paren');
        return { t: 'pipe', pipe, names: this.chain() };
      }
      case 'ident': {
        if (t.name === 'true' || t.name === 'false') return { t: 'bool', value: t.name === 'true' };
        if (t.name === 'nil') return { t: 'nil' };
        if (KEYWORDS.has(t.name)) this.fail(`unexpected keyword ${t.name} in command`);
        if (!this.isFunction(t.name)) this.fail(`function "${t.name}" not defined`);
        if (this.peek()?.k === 'field') this.fail(`unexpected field after function ${t.name}`);
        return { t: 'ident', name: t.name };
      }
      default:
        return this.fail(`unexpected ${t.k} in operand`);
    }
  }
}

type Frame = { kind: 'if' | 'with'; node: Extract<TemplateNode, { type: 'if' | 'with' }>; target: TemplateNode[] } | { kind: 'range'; node: Extract<TemplateNode, { type: 'range' }>; target: TemplateNode[] } | { kind: 'define'; name: string; target: TemplateNode[] };

/**
 * Parses a template source. `isFunction` says which identifiers are
 * functions (the executor's table). Throws TemplateSyntaxError.
 */
export function parseTemplate(src: string, name: string, isFunction: (fn: string) => boolean): ParsedTemplate {
  const body: TemplateNode[] = [];
  const defines = new Map<string, TemplateNode[]>();
  const stack: Frame[] = [];
  let out = body;
  let rangeDepth = 0;

  for (const piece of scan(src, name)) {
    if ('text' in piece) {
      out.push({ type: 'text', text: piece.text });
      continue;
    }
    if (piece.comment) continue;
    const fail = (m: string): never => {
      throw new TemplateSyntaxError(`template: ${name}:${piece.line}: ${m}`);
    };
    const p = new PipelineParser(piece.tokens, piece.line, fail, isFunction);
    p.skipSpace();
    const first = p.peek();
    if (first === undefined) fail('missing value for command');
    const keyword = first?.k === 'ident' && KEYWORDS.has(first.name) ? first.name : undefined;
    if (keyword === undefined) {
      out.push({ type: 'action', pipe: p.pipeline('one'), line: piece.line });
      continue;
    }
    p.next();
    switch (keyword) {
      case 'if':
      case 'with': {
        const node = { type: keyword, branches: [{ pipe: p.pipeline('one'), body: [] as TemplateNode[] }], otherwise: undefined, line: piece.line } as Extract<TemplateNode, { type: 'if' | 'with' }>;
        out.push(node);
        stack.push({ kind: keyword, node, target: out });
        out = node.branches[0]!.body;
        break;
      }
      case 'range': {
        const node: Extract<TemplateNode, { type: 'range' }> = { type: 'range', pipe: p.pipeline('two'), body: [], otherwise: undefined, line: piece.line };
        out.push(node);
        stack.push({ kind: 'range', node, target: out });
        out = node.body;
        rangeDepth++;
        break;
      }
      case 'else': {
        const frame = stack[stack.length - 1];
        if (frame === undefined || frame.kind === 'define') return fail('unexpected {{else}}');
        if (frame.node.otherwise !== undefined) fail('expected end; found {{else}}');
        p.skipSpace();
        const chained = p.peek();
        if (chained?.k === 'ident' && (chained.name === 'if' || chained.name === 'with') && frame.kind !== 'range') {
          if (chained.name !== frame.kind) fail(`{{else ${chained.name}}} inside {{${frame.kind}}}`);
          p.next();
          const branch = { pipe: p.pipeline('one'), body: [] as TemplateNode[] };
          frame.node.branches.push(branch);
          out = branch.body;
          continue;
        }
        if (!p.done()) fail('unexpected tokens after else');
        frame.node.otherwise = [];
        out = frame.node.otherwise;
        if (frame.kind === 'range') rangeDepth--;
        break;
      }
      case 'end': {
        if (!p.done()) fail('unexpected tokens after end');
        const frame = stack.pop();
        if (frame === undefined) return fail('unexpected {{end}}');
        if (frame.kind === 'range' && frame.node.otherwise === undefined) rangeDepth--;
        if (frame.kind === 'define') defines.set(frame.name, out);
        out = frame.target;
        break;
      }
      case 'define': {
        if (stack.length > 0) fail('define must be at top level');
        p.skipSpace();
        const n = p.next();
        if (n?.k !== 'string') return fail('define needs a quoted template name');
        if (!p.done()) fail('unexpected tokens after define name');
        const target = out;
        stack.push({ kind: 'define', name: n.value, target });
        out = [];
        break;
      }
      case 'template': {
        p.skipSpace();
        const n = p.next();
        if (n?.k !== 'string') return fail('template needs a quoted template name');
        const pipe = p.done() ? undefined : p.pipeline('none');
        out.push({ type: 'template', name: n.value, pipe, line: piece.line });
        break;
      }
      case 'break':
      case 'continue': {
        if (rangeDepth === 0) fail(`{{${keyword}}} outside {{range}}`);
        if (!p.done()) fail(`unexpected tokens after ${keyword}`);
        out.push({ type: keyword, line: piece.line });
        break;
      }
      default:
        fail(`{{${keyword}}} is not supported by this renderer`);
    }
    if (keyword !== 'else' && keyword !== 'end' && keyword !== 'define' && keyword !== 'template' && keyword !== 'break' && keyword !== 'continue' && !p.done()) {
      fail('unexpected tokens after pipeline');
    }
  }
  if (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    throw new TemplateSyntaxError(`template: ${name}: unexpected EOF: unclosed {{${frame.kind}}}`);
  }
  return { body, defines };
}
