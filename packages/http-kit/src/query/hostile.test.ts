import { ApiError } from '@ziti/errors';
import { compileFilter, compileListQuery, type EntityQuerySchema } from './index.js';
import { MAX_FILTER_DEPTH, MAX_FILTER_LENGTH } from './parser.js';

const col = (c: string) => (a: string) => `${a}."${c}"`;
const schema: EntityQuerySchema = {
  entity: 'identities',
  table: '"identities"',
  symbols: {
    id: { kind: 'scalar', type: 'string', sql: col('id') },
    name: { kind: 'scalar', type: 'string', sql: col('name') },
    cost: { kind: 'scalar', type: 'int', sql: col('cost') },
    isAdmin: { kind: 'scalar', type: 'bool', sql: col('is_admin') },
    createdAt: { kind: 'scalar', type: 'datetime', sql: col('created_at') },
    tags: { kind: 'map', sql: col('tags') },
    roleAttributes: { kind: 'set', type: 'string', elements: (a) => `SELECT unnest(${a}."role_attributes") AS v` },
  },
};

/** The cause message of the INVALID_FILTER that compiling `filter` raises. */
function rejection(filter: string): string {
  try {
    compileFilter(filter, schema);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('INVALID_FILTER');
    return (err as ApiError).cause!.message!;
  }
  throw new Error(`expected ${JSON.stringify(filter).slice(0, 80)} to be rejected`);
}

/** The SQL text may only contain what the compiler and the schema wrote. */
const SAFE_SQL = /^[\s\w"$.,:()<>=!*'[\]-]*$/;

describe('hostile input: values are only ever parameters', () => {
  it.each([
    `x'; DROP TABLE identities; --`,
    `" OR 1=1 --`,
    `$$ pg_sleep(10) $$`,
    `\\"); DELETE FROM identities; --`,
    `%_%`,
    `ʼ OR ʼ1ʼ=ʼ1`,
    `😀 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \u200b\u202e`,
  ])('binds %s as a parameter', (raw) => {
    const literal = raw.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
    for (const filter of [`name = "${literal}"`, `name icontains "${literal}"`, `anyOf(roleAttributes) in ["${literal}"]`]) {
      const { where, params } = compileFilter(filter, schema);
      expect(params).toContain(raw);
      expect(where).not.toContain(raw);
      expect(where).toMatch(SAFE_SQL);
      expect(where).not.toMatch(/DROP|DELETE|--|;/);
    }
  });

  it('binds map keys as parameters too', () => {
    const { where, params } = compileFilter('tags.drop-table--x = "1"', schema);
    expect(params).toEqual([['drop-table--x'], '1']);
    expect(where).not.toMatch(/drop|--/);
  });

  it('binds a lone surrogate and other odd code points without failing', () => {
    const { params } = compileFilter('name = "\ud800 \uffff \u007f"', schema);
    expect(params).toEqual(['\ud800 \uffff \u007f']);
  });
});

describe('hostile input: identifiers never reach the SQL', () => {
  it.each([
    ['a statement separator', 'name; DROP TABLE identities'],
    ['a quoted identifier with a quote', `'name"; drop' = "x"`],
    ['a SQL comment', 'name = "x" -- comment'],
    ['a block comment', 'name /* x */ = "x"'],
    ['a non-ASCII identifier', 'nаme = "x"'],
    ['an underscore start', '__proto__ = "x"'],
  ])('rejects %s', (_name, filter) => {
    rejection(filter);
  });

  it.each(['constructor', 'toString', 'hasOwnProperty', 'valueOf', 'pg_sleep', 'identities.name', 'e.name'])(
    'reports %s as an unknown symbol',
    (name) => {
      expect(rejection(`${name} = "x"`)).toBe(`unknown symbol '${name}'`);
    },
  );

  it('rejects unknown sort fields and prototype names in sort by', () => {
    expect(rejection('sort by constructor')).toBe("unknown symbol 'constructor'");
    expect(() => compileListQuery({ sort: 'toString' }, schema)).toThrow(expect.objectContaining({ code: 'INVALID_SORT_IDENTIFIER' }));
  });
});

describe('hostile input: type and symbol errors', () => {
  it.each([
    ['roleAttributes = "a"', "symbol 'roleAttributes' is a set symbol but is used in non-set function context"],
    ['roleAttributes', "symbol 'roleAttributes' is a set symbol but is used in non-set function context"],
    ['anyOf(name) = "a"', "symbol 'name' is not a set symbol but is used in set function anyOf"],
    ['allOf(cost) = 1', "symbol 'cost' is not a set symbol but is used in set function allOf"],
    ['count(name) = 1', "symbol 'name' is not a set symbol but is used in set function count"],
    ['isEmpty(name)', "symbol 'name' is not a set symbol but is used in set function isEmpty"],
    ['isEmpty(from roleAttributes where name = "x")', "symbol 'roleAttributes' does not support sub-queries"],
    ['name = true', "symbol 'name' has type string and can not be compared with a bool value"],
    ['name = datetime(2024-01-01T00:00:00Z)', "symbol 'name' has type string and can not be compared with a datetime value"],
    ['cost = "1"', "symbol 'cost' has type int and can not be compared with a string value"],
    ['isAdmin = 1', "symbol 'isAdmin' has type bool and can not be compared with a number value"],
    ['createdAt > 5', "symbol 'createdAt' has type datetime and can not be compared with a number value"],
    ['cost contains 1', "operator contains is not supported for symbol 'cost' of type int"],
    ['createdAt icontains "x"', "operator icontains is not supported for symbol 'createdAt' of type datetime"],
    ['name', "symbol 'name' of type string is used as a boolean expression"],
    ['tags = "x"', "symbol 'tags' is a map symbol and is used without a key, e.g. tags.key"],
    ['tags.x > datetime(2024-01-01T00:00:00Z)', "symbol 'tags.x' is a map value and can not be compared with a datetime"],
    ['count(roleAttributes) = null', 'count(roleAttributes) can not be compared with null'],
    ['count(roleAttributes) = "2"', "symbol 'count(roleAttributes)' has type int and can not be compared with a string value"],
    ['name.first = "x"', "unknown symbol 'name.first'"],
  ])('%s', (filter, message) => {
    expect(rejection(filter)).toBe(message);
  });
});

describe('hostile input: size and depth', () => {
  it(`rejects filters longer than ${MAX_FILTER_LENGTH} characters`, () => {
    const filler = 'x'.repeat(MAX_FILTER_LENGTH);
    expect(rejection(`name = "${filler}"`)).toMatch(/^filter is too long/);
    expect(rejection('('.repeat(1_000_000))).toMatch(/^filter is too long/);
  });

  it('accepts a long string value just under the limit', () => {
    const value = 'y'.repeat(MAX_FILTER_LENGTH - 20);
    expect(compileFilter(`name = "${value}"`, schema).params).toEqual([value]);
  });

  it('compiles a long flat chain without recursion', () => {
    const filter = Array.from({ length: 1000 }, (_, i) => `cost = ${i}`).join(' or ');
    expect(filter.length).toBeLessThan(MAX_FILTER_LENGTH);
    const { where, params } = compileFilter(filter, schema);
    expect(params).toHaveLength(1000);
    expect(where).toContain('$1000::bigint');
  });

  it(`accepts nesting up to ${MAX_FILTER_DEPTH} levels and rejects deeper nesting`, () => {
    const nested = (n: number) => `${'('.repeat(n)}cost = 1${')'.repeat(n)}`;
    expect(compileFilter(nested(MAX_FILTER_DEPTH - 1), schema).params).toEqual([1]);
    expect(rejection(nested(MAX_FILTER_DEPTH))).toMatch(/^filter is nested too deeply/);
    expect(rejection(nested(5000))).toMatch(/^filter is nested too deeply/);
    expect(rejection(`${'not '.repeat(3000)}isAdmin`)).toMatch(/^filter is nested too deeply/);
    expect(rejection(`${'not isEmpty(from x where '.repeat(600)}`)).toMatch(/^filter is nested too deeply/);
  });

  it('rejects raw control characters anywhere', () => {
    for (const c of ['\u0000', '\u0001', '\u0007', '\u001b', '\u001f']) {
      expect(rejection(`name = "a${c}b"`)).toContain('Unexpected symbol');
      expect(rejection(`name${c} = "a"`)).toContain('Unexpected symbol');
    }
  });
});

describe('hostile input: random token soup never escapes as anything but INVALID_FILTER', () => {
  const pieces = [
    'name', 'cost', 'isAdmin', 'tags.x', 'roleAttributes', 'anyOf(', 'allOf(', 'count(', 'isEmpty(', 'from', 'where',
    '(', ')', '[', ']', ',', '=', '!=', '<', '>=', ' and ', ' or ', 'not ', ' in ', ' not in ', ' between ', ' contains ',
    ' icontains ', '"s"', '"\\"', '1', '-2.5e3', 'true', 'null', 'datetime(2024-01-02T03:04:05Z)', ' sort by ', ' skip ',
    ' limit ', 'none', ' desc', ' ', '\u0000', '"', "'", '😀', '\\',
  ];
  let seed = 12345;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };

  it('compiles or rejects 3000 random filters', () => {
    let compiled = 0;
    for (let i = 0; i < 3000; i++) {
      const filter = Array.from({ length: 1 + rand(12) }, () => pieces[rand(pieces.length)]).join('');
      try {
        const { where, params } = compileFilter(filter, schema);
        compiled++;
        expect(where).toMatch(SAFE_SQL);
        expect(Array.isArray(params)).toBe(true);
      } catch (err) {
        if (!(err instanceof ApiError) || err.code !== 'INVALID_FILTER') throw err;
      }
    }
    expect(compiled).toBeGreaterThan(0);
  });
});
