import { ApiError } from '@ziti/errors';
import { parseZitiQl } from './parser.js';

/** The cause message of the INVALID_FILTER the input raises. */
function errorOf(input: string): string {
  try {
    parseZitiQl(input);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    expect(e.code).toBe('INVALID_FILTER');
    expect(e.status).toBe(400);
    expect(e.cause?.code).toBe('UNHANDLED');
    return e.cause!.message!;
  }
  throw new Error(`expected ${JSON.stringify(input)} to be rejected`);
}

const at = (symbol: string, line: number, column: number) =>
  `Unexpected symbol: "${symbol}" at line: ${line} column: ${column}. line: ${line}, column: ${column}, symbol: ${symbol}`;

describe('parseZitiQl: syntax errors carry the controller message and position', () => {
  it('reports the end of input as <EOF>', () => {
    expect(errorOf('name = ')).toBe(at('<EOF>', 1, 7));
    expect(errorOf('(name = "x"')).toBe(at('<EOF>', 1, 11));
  });

  it('reports the offending token with a 0-based column', () => {
    expect(errorOf('name == "x"')).toBe(at('=', 1, 6));
    expect(errorOf('name = "x" foo')).toBe(at('foo', 1, 11));
    expect(errorOf('name = "x")')).toBe(at(')', 1, 10));
    expect(errorOf(')')).toBe(at(')', 1, 0));
  });

  it('counts lines on LF', () => {
    expect(errorOf('name = "x"\nand foo bar')).toBe(at('bar', 2, 8));
    expect(errorOf('a = 1 and\n\n  b = ')).toBe(at('<EOF>', 3, 6));
  });

  it('reports characters no token starts with', () => {
    expect(errorOf('$')).toBe(at('$', 1, 0));
    expect(errorOf('name = "x"; drop table identities')).toBe(at(';', 1, 10));
    expect(errorOf('name ! "x"')).toBe(at('!', 1, 5));
    expect(errorOf('näme = "x"')).toBe(at('ä', 1, 1));
  });

  it('shows control characters escaped', () => {
    expect(errorOf('name = "a\u0000b"')).toBe(at('\\u0000', 1, 9));
    expect(errorOf('name = "a\nb"')).toBe(at('\\u000a', 1, 9));
  });

  it('rejects invalid escapes and unterminated strings', () => {
    expect(errorOf('name = "a\\xb"')).toBe(at('\\x', 1, 9));
    expect(errorOf('name = "a\\u0041"')).toBe(at('\\u', 1, 9));
    expect(errorOf('name = "abc')).toBe(at('"abc', 1, 7));
  });
});

describe('parseZitiQl: rejected forms', () => {
  it.each([
    ['missing whitespace before and', 'a = 1and b = 2'],
    ['missing whitespace after or', 'a = 1 or(b = 2)'],
    ['missing whitespace before in', 'a in["x"]'],
    ['missing whitespace after contains', 'a contains"x"'],
    ['not directly followed by a parenthesis', 'not(a = 1)'],
    ['space between a set function and its parenthesis', 'anyOf (x) = "a"'],
    ['empty array', 'a in []'],
    ['mixed array', 'a in ["x", 1]'],
    ['bool array', 'a in [true]'],
    ['trailing comma in array', 'a in ["x",]'],
    ['bool with <', 'a < true'],
    ['null with >=', 'a >= null'],
    ['number with icontains', 'a icontains 5'],
    ['between mixed kinds', 'a between 1 and datetime(2024-01-01T00:00:00Z)'],
    ['between strings', 'a between "a" and "b"'],
    ['leading zero', 'a = 01'],
    ['dangling decimal point', 'a = 1.'],
    ['exponent overflow', 'a = 1e999'],
    ['digits in an identifier', 'name1 = "x"'],
    ['dash before the first dot', 'service-id = "x"'],
    ['double-quoted identifier', '"name" = "x"'],
    ['unterminated quoted identifier', "'name = \"x\""],
    ['upper-case DATETIME', 'a = DATETIME(2024-01-02T03:04:05Z)'],
    ['datetime without zone', 'a = datetime(2024-01-02T03:04:05)'],
    ['datetime with month 13', 'a = datetime(2024-13-02T03:04:05Z)'],
    ['datetime on Feb 30', 'a = datetime(2023-02-29T03:04:05Z)'],
    ['datetime with hour 24', 'a = datetime(2024-01-02T24:00:00Z)'],
    ['date only', 'a = datetime(2024-01-02)'],
    ['empty parentheses', '()'],
    ['operator without lhs', '= "x"'],
    ['set function used as a boolean', 'anyOf(x)'],
    ['isEmpty without a set', 'isEmpty()'],
    ['sub-query without where', 'isEmpty(from x)'],
    ['sub-query with empty query', 'isEmpty(from x where )'],
    ['keyword as a symbol', 'limit = 5'],
    ['two expressions', 'a = 1 b = 2'],
    ['dangling and', 'a = 1 and'],
  ])('rejects %s: %s', (_name, input) => {
    expect(() => parseZitiQl(input)).toThrow(expect.objectContaining({ code: 'INVALID_FILTER' }));
  });
});
