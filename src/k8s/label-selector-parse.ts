/**
 * The label selector string syntax of `?labelSelector=` and `kubectl -l`
 * (k8s.io/apimachinery labels.Parse), reproduced token for token:
 *
 *   selector    := requirement ("," requirement)*
 *   requirement := ["!"] KEY [ ("in"|"notin") "(" values ")" | ("="|"=="|"!="|">"|"<") VALUE ]
 *
 * Whitespace (space, tab, CR, LF) separates tokens; "in"/"notin" are keywords
 * only where an operator is expected, so `x in (in)` is valid. Keys and values
 * are validated like NewRequirement does, and errors carry upstream's texts
 * (requirement errors are prefixed "unable to parse requirement: ").
 */
import { goQuote, newRequirement, selectorFromRequirements, type Requirement, type SelectorResult } from './label-requirement.ts';
import { isLabelKey } from './validation.ts';

type Token = 'error' | 'eos' | ')' | ',' | '!' | '==' | '=' | '>' | 'id' | 'in' | '<' | '!=' | 'notin' | '(';

const LITERAL_TOKENS = new Map<string, Token>([
  [')', ')'],
  [',', ','],
  ['!', '!'],
  ['==', '=='],
  ['=', '='],
  ['>', '>'],
  ['in', 'in'],
  ['<', '<'],
  ['!=', '!='],
  ['notin', 'notin'],
  ['(', '('],
]);

interface Item {
  tok: Token;
  lit: string;
}

const isWhitespace = (ch: string): boolean => ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
const isSpecialSymbol = (ch: string): boolean => '=!(),><'.includes(ch) && ch.length === 1;
// Go's lexer reads a 0 byte at the end of input; a NUL inside the input reads the same way.
const isEnd = (ch: string): boolean => ch === '' || ch === '\0';

class Lexer {
  private pos = 0;
  constructor(private readonly s: string) {}

  private read(): string {
    if (this.pos < this.s.length) return this.s[this.pos++] ?? '';
    return '';
  }

  private unread(): void {
    this.pos--;
  }

  private scanIdentifierOrKeyword(): Item {
    let buffer = '';
    for (;;) {
      const ch = this.read();
      if (isEnd(ch)) break;
      if (isSpecialSymbol(ch) || isWhitespace(ch)) {
        this.unread();
        break;
      }
      buffer += ch;
    }
    return { tok: LITERAL_TOKENS.get(buffer) ?? 'id', lit: buffer };
  }

  /** Longest operator made of special symbols: "!=" beats "!", "==" beats "=". */
  private scanSpecialSymbol(): Item {
    let buffer = '';
    let last: Item | undefined;
    for (;;) {
      const ch = this.read();
      if (isEnd(ch)) break;
      if (!isSpecialSymbol(ch)) {
        this.unread();
        break;
      }
      buffer += ch;
      const tok = LITERAL_TOKENS.get(buffer);
      if (tok !== undefined) {
        last = { tok, lit: buffer };
      } else if (last !== undefined) {
        this.unread();
        break;
      }
    }
    return last ?? { tok: 'error', lit: `error expected: keyword found '${buffer}'` };
  }

  lex(): Item {
    let ch = this.read();
    while (isWhitespace(ch)) ch = this.read();
    if (isEnd(ch)) return { tok: 'eos', lit: '' };
    this.unread();
    return isSpecialSymbol(ch) ? this.scanSpecialSymbol() : this.scanIdentifierOrKeyword();
  }
}

/** Parser context: where values are expected, the keywords "in"/"notin" are plain identifiers. */
type Context = 'keyAndOperator' | 'values';

class ParseError {
  constructor(readonly message: string) {}
}

class Parser {
  private readonly items: Item[] = [];
  private position = 0;

  constructor(input: string) {
    const lexer = new Lexer(input);
    for (;;) {
      const item = lexer.lex();
      this.items.push(item);
      if (item.tok === 'eos') break;
    }
  }

  private at(i: number, ctx: Context): Item {
    const item = this.items[i] ?? { tok: 'eos' as const, lit: '' };
    if (ctx === 'values' && (item.tok === 'in' || item.tok === 'notin')) return { tok: 'id', lit: item.lit };
    return item;
  }

  private lookahead(ctx: Context): Item {
    return this.at(this.position, ctx);
  }

  private consume(ctx: Context): Item {
    return this.at(this.position++, ctx);
  }

  parse(): Requirement[] {
    const reqs: Requirement[] = [];
    for (;;) {
      const { tok, lit } = this.lookahead('values');
      if (tok === 'eos') return reqs;
      if (tok !== 'id' && tok !== '!') throw new ParseError(`found '${lit}', expected: !, identifier, or 'end of string'`);
      let req: Requirement;
      try {
        req = this.parseRequirement();
      } catch (e) {
        if (e instanceof ParseError) throw new ParseError(`unable to parse requirement: ${e.message}`);
        throw e;
      }
      reqs.push(req);
      const next = this.consume('values');
      if (next.tok === 'eos') return reqs;
      if (next.tok !== ',') throw new ParseError(`found '${next.lit}', expected: ',' or 'end of string'`);
      const after = this.lookahead('values');
      if (after.tok !== 'id' && after.tok !== '!') throw new ParseError(`found '${after.lit}', expected: identifier after ','`);
    }
  }

  private parseRequirement(): Requirement {
    const { key, operator } = this.parseKeyAndInferOperator();
    if (operator === 'exists' || operator === '!') return requirementOrThrow(key, operator, []);
    const op = this.parseOperator();
    const values = op === 'in' || op === 'notin' ? this.parseValues() : this.parseExactValue();
    // sets.String.List(): de-duplicated and sorted.
    return requirementOrThrow(key, op, [...values].sort());
  }

  private parseKeyAndInferOperator(): { key: string; operator: string | undefined } {
    let operator: string | undefined;
    let item = this.consume('values');
    if (item.tok === '!') {
      operator = '!';
      item = this.consume('values');
    }
    if (item.tok !== 'id') throw new ParseError(`found '${item.lit}', expected: identifier`);
    const keyErrs = isLabelKey(item.lit);
    // The parser validates the key against a nil field path, which prints as "<nil>".
    if (keyErrs.length > 0) throw new ParseError(`<nil>: Invalid value: ${goQuote(item.lit)}: ${keyErrs.join('; ')}`);
    const next = this.lookahead('values').tok;
    if ((next === 'eos' || next === ',') && operator !== '!') operator = 'exists';
    return { key: item.lit, operator };
  }

  private parseOperator(): string {
    const { tok, lit } = this.consume('keyAndOperator');
    switch (tok) {
      case 'in':
      case 'notin':
      case '=':
      case '==':
      case '!=':
        return tok;
      case '>':
        return 'gt';
      case '<':
        return 'lt';
      default:
        throw new ParseError(`found '${lit}', expected: in, notin, =, ==, !=, gt, lt`);
    }
  }

  private parseValues(): Set<string> {
    const open = this.consume('values');
    if (open.tok !== '(') throw new ParseError(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.lookahead('values');
    if (tok === 'id' || tok === ',') {
      const values = this.parseIdentifiersList();
      // Upstream reports the token seen before the list here, not the one that failed.
      if (this.consume('values').tok !== ')') throw new ParseError(`found '${lit}', expected: ')'`);
      return values;
    }
    if (tok === ')') {
      this.consume('values');
      return new Set(['']);
    }
    throw new ParseError(`found '${lit}', expected: ',', ')' or identifier`);
  }

  /** A comma-separated list where empty entries ("a,,b", "(,", ",)") stand for the empty value. */
  private parseIdentifiersList(): Set<string> {
    const values = new Set<string>();
    for (;;) {
      const { tok, lit } = this.consume('values');
      if (tok === 'id') {
        values.add(lit);
        const next = this.lookahead('values');
        if (next.tok === ',') continue;
        if (next.tok === ')') return values;
        throw new ParseError(`found '${next.lit}', expected: ',' or ')'`);
      }
      if (tok === ',') {
        if (values.size === 0) values.add('');
        const next = this.lookahead('values').tok;
        if (next === ')') {
          values.add('');
          return values;
        }
        if (next === ',') values.add('');
        continue;
      }
      throw new ParseError(`found '${lit}', expected: ',', or identifier`);
    }
  }

  private parseExactValue(): Set<string> {
    const ahead = this.lookahead('values').tok;
    if (ahead === 'eos' || ahead === ',') return new Set(['']);
    const { tok, lit } = this.consume('values');
    if (tok === 'id') return new Set([lit]);
    throw new ParseError(`found '${lit}', expected: identifier`);
  }
}

function requirementOrThrow(key: string, operator: string, values: string[]): Requirement {
  const r = newRequirement(key, operator, values);
  if (!r.ok) throw new ParseError(r.error);
  return r.requirement;
}

/** labels.Parse: the selector of a label selector string; "" selects everything. */
export function parseSelector(s: string): SelectorResult {
  if (typeof s !== 'string') return { ok: false, error: 'label selector must be a string' };
  try {
    return { ok: true, selector: selectorFromRequirements(new Parser(s).parse()) };
  } catch (e) {
    if (e instanceof ParseError) return { ok: false, error: e.message };
    throw e;
  }
}
