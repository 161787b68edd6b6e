import type {
  ZitiQlBoolExpr,
  ZitiQlLhs,
  ZitiQlOperator,
  ZitiQlQuery,
  ZitiQlSetExpr,
  ZitiQlSortField,
  ZitiQlValue,
} from './ast.js';
import { invalidFilter, unexpectedSymbol } from './errors.js';
import { type Token, type TokenKind, tokenize } from './lexer.js';

/** Longest filter accepted, in UTF-16 code units; longer input is INVALID_FILTER. */
export const MAX_FILTER_LENGTH = 16 * 1024;
/** Deepest nesting of parentheses, `not`, set functions and sub-queries accepted. */
export const MAX_FILTER_DEPTH = 100;

const OPERATORS: Partial<Record<TokenKind, ZitiQlOperator>> = {
  in: 'in',
  notIn: 'not in',
  between: 'between',
  notBetween: 'not between',
  contains: 'contains',
  notContains: 'not contains',
  icontains: 'icontains',
  notIcontains: 'not icontains',
};

/**
 * Parses a ZitiQL statement (grammar of ZitiQl.g4). Empty or whitespace-only input gives `{}` (match all).
 *
 * Precedence follows the controller's ANTLR grammar: AND binds tighter than OR, and a prefix `not`
 * applies to everything that follows it within the enclosing parentheses, so `not a and b` means
 * `not (a and b)`. Throws `ApiError` INVALID_FILTER on any syntax error, with the controller's
 * `Unexpected symbol: …` cause message.
 */
export function parseZitiQl(input: string): ZitiQlQuery {
  if (input.length > MAX_FILTER_LENGTH) {
    throw invalidFilter(`filter is too long: ${input.length} characters, at most ${MAX_FILTER_LENGTH} are allowed`);
  }
  const p = new Parser(tokenize(input));
  if (p.peek().kind === 'eof') return {};
  const query = p.query();
  p.expect('eof');
  return query;
}

/** Parses a `sort` query parameter (`name desc, createdAt`): a list of sort fields and nothing else. */
export function parseSortFields(input: string): ZitiQlSortField[] {
  if (input.length > MAX_FILTER_LENGTH) throw invalidFilter(`sort is too long: ${input.length} characters`);
  const p = new Parser(tokenize(input));
  if (p.peek().kind === 'eof') return [];
  const fields = p.sortFields();
  p.expect('eof');
  return fields;
}

class Parser {
  private idx = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  peek(): Token {
    return this.tokens[this.idx]!;
  }

  private next(): Token {
    const t = this.tokens[this.idx]!;
    if (t.kind !== 'eof') this.idx++;
    return t;
  }

  private fail(t: Token = this.peek()): never {
    throw unexpectedSymbol(t.text, t.pos);
  }

  expect(kind: TokenKind, ws?: 'ws' | 'nows'): Token {
    const t = this.peek();
    if (t.kind !== kind) this.fail(t);
    if (ws === 'ws' && !t.ws) this.fail(t);
    if (ws === 'nows' && t.ws) this.fail(t);
    return this.next();
  }

  private requireWs(t: Token = this.peek()): void {
    if (!t.ws) this.fail(t);
  }

  private enter(): void {
    if (++this.depth > MAX_FILTER_DEPTH) {
      throw invalidFilter(`filter is nested too deeply: at most ${MAX_FILTER_DEPTH} levels are allowed`);
    }
  }

  /** query: boolExpr [sortBy] [skip] [limit] | sortBy [skip] [limit] | skip [limit] | limit */
  query(): ZitiQlQuery {
    const q: ZitiQlQuery = {};
    let any = false;
    const clause = (kind: TokenKind) => {
      const t = this.peek();
      if (t.kind !== kind) return false;
      if (any) this.requireWs(t);
      any = true;
      this.next();
      this.requireWs();
      return true;
    };
    const k = this.peek().kind;
    if (k !== 'sort' && k !== 'skip' && k !== 'limit') {
      q.filter = this.orExpr();
      any = true;
    }
    if (clause('sort')) {
      this.expect('by');
      this.requireWs();
      q.sort = this.sortFields();
    }
    if (clause('skip')) q.skip = this.integer(this.expect('number'));
    if (clause('limit')) {
      q.limit = this.peek().kind === 'none' ? (this.next(), 'none') : this.integer(this.expect('number'));
    }
    return q;
  }

  /** sortField (WS* ',' WS* sortField)*, sortField: IDENTIFIER (WS+ (ASC|DESC))? */
  sortFields(): ZitiQlSortField[] {
    const fields: ZitiQlSortField[] = [];
    do {
      const field = this.expect('ident').str!;
      const dir = this.peek();
      let direction: 'asc' | 'desc' = 'asc';
      if (dir.kind === 'asc' || dir.kind === 'desc') {
        this.requireWs(dir);
        direction = this.next().kind as 'asc' | 'desc';
      }
      fields.push({ field, direction });
    } while (this.peek().kind === 'comma' && this.next());
    return fields;
  }

  private integer(t: Token): number {
    if (!t.isInt) throw invalidFilter(`invalid value ${t.text}: skip and limit take an integer`);
    return t.num!;
  }

  private orExpr(): ZitiQlBoolExpr {
    return this.chain('or', () => this.andExpr());
  }

  private andExpr(): ZitiQlBoolExpr {
    return this.chain('and', () => this.unary());
  }

  private chain(kind: 'and' | 'or', operand: () => ZitiQlBoolExpr): ZitiQlBoolExpr {
    const operands = [operand()];
    while (this.peek().kind === kind) {
      this.requireWs();
      this.next();
      this.requireWs();
      operands.push(operand());
    }
    return operands.length === 1 ? operands[0]! : { kind, operands };
  }

  /** NOT WS+ boolExpr | primary. The operand of `not` is a whole or-expression (see parseZitiQl). */
  private unary(): ZitiQlBoolExpr {
    this.enter();
    try {
      if (this.peek().kind === 'not') {
        this.next();
        this.requireWs();
        return { kind: 'not', operand: this.orExpr() };
      }
      return this.primary();
    } finally {
      this.depth--;
    }
  }

  private primary(): ZitiQlBoolExpr {
    const t = this.peek();
    switch (t.kind) {
      case 'lparen': {
        this.next();
        const inner = this.orExpr();
        this.expect('rparen');
        return inner;
      }
      case 'bool':
        this.next();
        return { kind: 'const', value: t.bool! };
      case 'isEmpty': {
        this.next();
        this.expect('lparen', 'nows');
        const set = this.setExpr();
        this.expect('rparen');
        return { kind: 'isEmpty', set };
      }
      case 'ident':
      case 'anyOf':
      case 'allOf':
      case 'count':
        return this.operation();
      default:
        return this.fail(t);
    }
  }

  private operation(): ZitiQlBoolExpr {
    const lhs = this.lhs();
    const t = this.peek();
    if (t.kind === 'cmp') {
      this.next();
      const op = t.str as ZitiQlOperator;
      const allowed: ZitiQlValue['type'][] =
        op === '=' || op === '!=' ? ['string', 'number', 'datetime', 'bool', 'null'] : ['string', 'number', 'datetime'];
      return { kind: 'compare', lhs, op, values: [this.value(allowed)] };
    }
    const op = OPERATORS[t.kind];
    if (op === undefined) {
      if (lhs.kind === 'symbol') return { kind: 'boolSymbol', name: lhs.name };
      return this.fail(t);
    }
    // IN and BETWEEN need whitespace before them; CONTAINS may follow `)` directly. All need it after.
    if (!op.includes('contains')) this.requireWs(t);
    this.next();
    this.requireWs();
    switch (op) {
      case 'in':
      case 'not in':
        return { kind: 'compare', lhs, op, values: this.array() };
      case 'between':
      case 'not between': {
        const lower = this.value(['number', 'datetime']);
        this.requireWs();
        this.expect('and');
        this.requireWs();
        return { kind: 'compare', lhs, op, values: [lower, this.value([lower.type])] };
      }
      case 'icontains':
      case 'not icontains':
        return { kind: 'compare', lhs, op, values: [this.value(['string'])] };
      default:
        return { kind: 'compare', lhs, op, values: [this.value(['string', 'number'])] };
    }
  }

  /** IDENTIFIER | ALLOF(IDENTIFIER) | ANYOF(IDENTIFIER) | COUNT(setExpr) */
  private lhs(): ZitiQlLhs {
    const t = this.next();
    if (t.kind === 'ident') return { kind: 'symbol', name: t.str! };
    this.enter();
    try {
      this.expect('lparen', 'nows');
      let lhs: ZitiQlLhs;
      if (t.kind === 'count') lhs = { kind: 'count', set: this.setExpr() };
      else lhs = { kind: t.kind as 'anyOf' | 'allOf', name: this.expect('ident').str! };
      this.expect('rparen');
      return lhs;
    } finally {
      this.depth--;
    }
  }

  /** IDENTIFIER | FROM WS+ IDENTIFIER WS+ WHERE WS+ query */
  private setExpr(): ZitiQlSetExpr {
    if (this.peek().kind !== 'from') return { kind: 'symbol', name: this.expect('ident').str! };
    this.enter();
    try {
      this.next();
      const name = this.expect('ident', 'ws').str!;
      this.expect('where', 'ws');
      this.requireWs();
      return { kind: 'subquery', name, query: this.query() };
    } finally {
      this.depth--;
    }
  }

  /** '[' v (',' v)* ']' with every element of one type: strings, numbers or datetimes. */
  private array(): ZitiQlValue[] {
    this.expect('lbracket');
    const first = this.value(['string', 'number', 'datetime']);
    const values = [first];
    while (this.peek().kind === 'comma') {
      this.next();
      values.push(this.value([first.type]));
    }
    this.expect('rbracket');
    return values;
  }

  private value(allowed: ZitiQlValue['type'][]): ZitiQlValue {
    const t = this.peek();
    const v = literal(t);
    if (!v || !allowed.includes(v.type)) return this.fail(t);
    this.next();
    return v;
  }
}

function literal(t: Token): ZitiQlValue | undefined {
  switch (t.kind) {
    case 'string':
      return { type: 'string', value: t.str! };
    case 'number':
      return { type: 'number', value: t.num!, isInt: t.isInt!, text: t.text };
    case 'bool':
      return { type: 'bool', value: t.bool! };
    case 'datetime':
      return { type: 'datetime', value: t.date! };
    case 'null':
      return { type: 'null' };
    default:
      return undefined;
  }
}
