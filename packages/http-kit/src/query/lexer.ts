import { type SourcePos, unexpectedSymbol } from './errors.js';

/** Keywords, matched case-insensitively (ZitiQl.g4). */
const KEYWORDS = {
  and: 'and',
  or: 'or',
  not: 'not',
  in: 'in',
  between: 'between',
  contains: 'contains',
  icontains: 'icontains',
  true: 'bool',
  false: 'bool',
  null: 'null',
  asc: 'asc',
  desc: 'desc',
  sort: 'sort',
  by: 'by',
  skip: 'skip',
  limit: 'limit',
  none: 'none',
  where: 'where',
  from: 'from',
  allof: 'allOf',
  anyof: 'anyOf',
  count: 'count',
  isempty: 'isEmpty',
} as const;

type KeywordKind = (typeof KEYWORDS)[keyof typeof KEYWORDS];

export type TokenKind =
  | KeywordKind
  | 'notIn'
  | 'notBetween'
  | 'notContains'
  | 'notIcontains'
  | 'ident'
  | 'string'
  | 'number'
  | 'datetime'
  | 'cmp'
  | 'lparen'
  | 'rparen'
  | 'lbracket'
  | 'rbracket'
  | 'comma'
  | 'eof';

export interface Token {
  kind: TokenKind;
  /** The source text of the token (`<EOF>` for the end). */
  text: string;
  pos: SourcePos;
  /** Whether whitespace precedes the token: the grammar requires it around keyword operators. */
  ws: boolean;
  /** string: the decoded value; ident: the name without quotes; cmp: the operator. */
  str?: string;
  /** number: the parsed value; bool: 1 or 0. */
  num?: number;
  /** number: whether it is an int64. */
  isInt?: boolean;
  /** bool */
  bool?: boolean;
  /** datetime */
  date?: Date;
}

const WS = new Set([' ', '\t', '\r', '\n']);
const WORD = /[A-Za-z][A-Za-z_]*(?:\.[A-Za-z][A-Za-z_-]*)*/y;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?(?:0|[1-9][0-9]*))?/y;
const INT = /^-?(?:0|[1-9][0-9]*)$/;
const NOT_IN = /[ \t\r\n]in(?![A-Za-z0-9_])/iy;
const NOT_MULTI = /[ \t\r\n]+(contains|icontains|between)(?![A-Za-z0-9_])/iy;
const DATETIME_INNER =
  /^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', f: '\f', n: '\n', r: '\r', t: '\t' };

/** Shows control characters of an offending symbol as `\uXXXX` so error messages stay printable. */
function printable(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Splits a ZitiQL string into tokens, or throws INVALID_FILTER at the first character no token matches. */
export function tokenize(input: string): Token[] {
  const newlines: number[] = [];
  for (let i = input.indexOf('\n'); i >= 0; i = input.indexOf('\n', i + 1)) newlines.push(i);
  const posAt = (offset: number): SourcePos => {
    let lo = 0;
    let hi = newlines.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (newlines[mid]! < offset) lo = mid + 1;
      else hi = mid;
    }
    return { line: lo + 1, column: lo === 0 ? offset : offset - newlines[lo - 1]! - 1 };
  };
  const fail = (offset: number, symbol: string): never => {
    throw unexpectedSymbol(printable(symbol), posAt(offset));
  };

  const tokens: Token[] = [];
  let i = 0;
  let ws = false;
  const push = (kind: TokenKind, start: number, end: number, extra: Partial<Token> = {}) => {
    tokens.push({ kind, text: input.slice(start, end), pos: posAt(start), ws, ...extra });
    ws = false;
    i = end;
  };

  while (i < input.length) {
    const c = input[i]!;
    if (WS.has(c)) {
      ws = true;
      i++;
      continue;
    }
    switch (c) {
      case '(': push('lparen', i, i + 1); continue;
      case ')': push('rparen', i, i + 1); continue;
      case '[': push('lbracket', i, i + 1); continue;
      case ']': push('rbracket', i, i + 1); continue;
      case ',': push('comma', i, i + 1); continue;
      case '=': push('cmp', i, i + 1, { str: '=' }); continue;
      case '<':
      case '>': {
        const op = input[i + 1] === '=' ? `${c}=` : c;
        push('cmp', i, i + op.length, { str: op });
        continue;
      }
      case '!':
        if (input[i + 1] !== '=') fail(i, c);
        push('cmp', i, i + 2, { str: '!=' });
        continue;
      case '"': {
        const end = scanString(input, i, fail);
        push('string', i, end.end, { str: end.value });
        continue;
      }
      case "'": {
        WORD.lastIndex = i + 1;
        const m = WORD.exec(input);
        if (!m || input[i + 1 + m[0].length] !== "'") fail(i, c);
        push('ident', i, i + m![0].length + 2, { str: m![0] });
        continue;
      }
    }
    if (c === '-' || (c >= '0' && c <= '9')) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(input);
      if (!m) fail(i, c);
      const text = m![0];
      const value = numberValue(text);
      if (!Number.isFinite(value.num)) fail(i, text);
      push('number', i, i + text.length, value);
      continue;
    }
    WORD.lastIndex = i;
    const m = WORD.exec(input);
    if (!m) fail(i, String.fromCodePoint(input.codePointAt(i)!));
    const word = m![0];
    const end = i + word.length;
    if (word === 'datetime' && input[end] === '(') {
      const dt = scanDatetime(input, i, end + 1, fail);
      push('datetime', i, dt.end, { date: dt.date });
      continue;
    }
    const lower = word.toLowerCase();
    const kind = Object.prototype.hasOwnProperty.call(KEYWORDS, lower) ? KEYWORDS[lower as keyof typeof KEYWORDS] : undefined;
    if (kind === undefined) {
      push('ident', i, end, { str: word });
    } else if (kind === 'not') {
      NOT_IN.lastIndex = end;
      const notIn = NOT_IN.exec(input);
      NOT_MULTI.lastIndex = end;
      const notMulti = notIn ? null : NOT_MULTI.exec(input);
      if (notIn) push('notIn', i, end + notIn[0].length);
      else if (notMulti) {
        const op = notMulti[1]!.toLowerCase();
        const negated = op === 'contains' ? 'notContains' : op === 'icontains' ? 'notIcontains' : 'notBetween';
        push(negated, i, end + notMulti[0].length);
      } else push('not', i, end);
    } else if (kind === 'bool') {
      push('bool', i, end, { bool: lower === 'true' });
    } else {
      push(kind, i, end);
    }
  }
  tokens.push({ kind: 'eof', text: '<EOF>', pos: posAt(input.length), ws });
  return tokens;
}

function numberValue(text: string): Partial<Token> {
  if (INT.test(text)) {
    const big = BigInt(text);
    if (big >= INT64_MIN && big <= INT64_MAX) return { num: Number(text), isInt: true };
  }
  return { num: Number(text), isInt: false };
}

function scanString(input: string, start: number, fail: (offset: number, symbol: string) => never) {
  let value = '';
  let i = start + 1;
  for (;;) {
    if (i >= input.length) fail(start, input.slice(start, start + 32));
    const c = input[i]!;
    if (c === '"') return { value, end: i + 1 };
    if (c < ' ') fail(i, c);
    if (c === '\\') {
      const e = ESCAPES[input[i + 1] ?? ''];
      if (e === undefined) fail(i, input.slice(i, i + 2));
      value += e;
      i += 2;
      continue;
    }
    // Copy the run of ordinary characters at once.
    let j = i + 1;
    while (j < input.length && input[j] !== '"' && input[j] !== '\\' && input[j]! >= ' ') j++;
    value += input.slice(i, j);
    i = j;
  }
}

/** `datetime(` WS* RFC3339 WS* `)`; the RFC3339 text as the grammar allows it (lower-case t and z too). */
function scanDatetime(input: string, start: number, from: number, fail: (offset: number, symbol: string) => never) {
  let i = from;
  while (WS.has(input[i] ?? '')) i++;
  const innerStart = i;
  while (i < input.length && !WS.has(input[i]!) && input[i] !== ')') i++;
  const inner = input.slice(innerStart, i);
  while (WS.has(input[i] ?? '')) i++;
  if (input[i] !== ')') fail(start, input.slice(start, Math.min(i + 1, start + 64)));
  const date = parseRfc3339(inner);
  if (!date) fail(start, input.slice(start, i + 1));
  return { date: date!, end: i + 1 };
}

/** RFC3339 with range checks (Feb 30 and second 60 are rejected, as Go's time.Parse does). */
export function parseRfc3339(s: string): Date | undefined {
  const m = DATETIME_INNER.exec(s);
  if (!m) return undefined;
  const [y, mo, d, h, mi, sec] = [1, 2, 3, 4, 5, 6].map((k) => Number(m[k]));
  if (mo! < 1 || mo! > 12 || d! < 1 || h! > 23 || mi! > 59 || sec! > 59) return undefined;
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  const date = new Date(0);
  date.setUTCFullYear(y!, mo! - 1, d!);
  if (date.getUTCMonth() !== mo! - 1) return undefined;
  date.setUTCHours(h!, mi!, sec!, ms);
  if (!m[8]) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return undefined;
    const sign = m[9] === '+' ? 1 : -1;
    date.setTime(date.getTime() - sign * (oh * 60 + om) * 60_000);
  }
  return date;
}
