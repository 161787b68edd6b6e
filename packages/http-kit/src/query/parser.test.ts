import type { ZitiQlBoolExpr, ZitiQlValue } from './ast.js';
import { parseZitiQl } from './parser.js';

const filterOf = (s: string) => parseZitiQl(s).filter;
const sym = (name: string): ZitiQlBoolExpr => ({ kind: 'boolSymbol', name });
const str = (value: string): ZitiQlValue => ({ type: 'string', value });
const int = (value: number): ZitiQlValue => ({ type: 'number', value, isInt: true, text: String(value) });
const cmp = (name: string, op: string, ...values: ZitiQlValue[]): ZitiQlBoolExpr =>
  ({ kind: 'compare', lhs: { kind: 'symbol', name }, op, values }) as ZitiQlBoolExpr;

describe('parseZitiQl: the forms seen on the wire', () => {
  it('parses id="x" and name="x" without spaces', () => {
    expect(filterOf('id="x"')).toEqual(cmp('id', '=', str('x')));
    expect(filterOf('name="x"')).toEqual(cmp('name', '=', str('x')));
  });

  it('parses id = "x" or name="x"', () => {
    expect(filterOf('id = "x" or name="x"')).toEqual({
      kind: 'or',
      operands: [cmp('id', '=', str('x')), cmp('name', '=', str('x'))],
    });
  });

  it('accepts a leading space ( name icontains "x") and trailing whitespace', () => {
    expect(filterOf(' name icontains "x"')).toEqual(cmp('name', 'icontains', str('x')));
    expect(filterOf('\t\r\n name icontains "x" \n')).toEqual(cmp('name', 'icontains', str('x')));
  });

  it('parses the association-list sub-query form', () => {
    expect(filterOf('not isEmpty(from servicePolicies where anyOf(services) = "abc")')).toEqual({
      kind: 'not',
      operand: {
        kind: 'isEmpty',
        set: {
          kind: 'subquery',
          name: 'servicePolicies',
          query: { filter: { kind: 'compare', lhs: { kind: 'anyOf', name: 'services' }, op: '=', values: [str('abc')] } },
        },
      },
    });
  });

  it('parses createdAt > datetime(2024-01-02T03:04:05Z)', () => {
    expect(filterOf('createdAt > datetime(2024-01-02T03:04:05Z)')).toEqual(
      cmp('createdAt', '>', { type: 'datetime', value: new Date('2024-01-02T03:04:05Z') }),
    );
  });

  it('parses a dashed tag key: tags.service-id = "x"', () => {
    expect(filterOf('tags.service-id = "x"')).toEqual(cmp('tags.service-id', '=', str('x')));
  });

  it('treats an empty or whitespace-only filter as match-all', () => {
    expect(parseZitiQl('')).toEqual({});
    expect(parseZitiQl('  \t\n ')).toEqual({});
  });
});

describe('parseZitiQl: operators', () => {
  it.each([
    ['a = "v"', '='],
    ['a != "v"', '!='],
    ['a < "v"', '<'],
    ['a <= "v"', '<='],
    ['a > "v"', '>'],
    ['a >= "v"', '>='],
    ['a contains "v"', 'contains'],
    ['a not contains "v"', 'not contains'],
    ['a not   contains "v"', 'not contains'],
    ['a icontains "v"', 'icontains'],
    ['a not icontains "v"', 'not icontains'],
    ['a not \t icontains "v"', 'not icontains'],
  ])('%s → %s', (input, op) => {
    expect(filterOf(input)).toEqual(cmp('a', op, str('v')));
  });

  it.each([
    ['a in ["x", "y"]', 'in'],
    ['a not in ["x","y"]', 'not in'],
    ['a NOT IN [ "x" , "y" ]', 'not in'],
  ])('%s → %s', (input, op) => {
    expect(filterOf(input)).toEqual(cmp('a', op, str('x'), str('y')));
  });

  it.each([
    ['a between 1 and 5', 'between'],
    ['a not between 1 and 5', 'not between'],
    ['a not    between 1 and 5', 'not between'],
  ])('%s → %s', (input, op) => {
    expect(filterOf(input)).toEqual(cmp('a', op, int(1), int(5)));
  });

  it('parses between datetimes', () => {
    expect(filterOf('a between datetime(2024-01-01T00:00:00Z) and datetime(2025-01-01T00:00:00Z)')).toEqual(
      cmp('a', 'between', { type: 'datetime', value: new Date('2024-01-01T00:00:00Z') }, {
        type: 'datetime',
        value: new Date('2025-01-01T00:00:00Z'),
      }),
    );
  });

  it('compares with true, false and null, and contains with a number', () => {
    expect(filterOf('a = true')).toEqual(cmp('a', '=', { type: 'bool', value: true }));
    expect(filterOf('a != FALSE')).toEqual(cmp('a', '!=', { type: 'bool', value: false }));
    expect(filterOf('a = null')).toEqual(cmp('a', '=', { type: 'null' }));
    expect(filterOf('a != NuLL')).toEqual(cmp('a', '!=', { type: 'null' }));
    expect(filterOf('a contains 5')).toEqual(cmp('a', 'contains', int(5)));
  });

  it('requires `not in` to have exactly one whitespace character', () => {
    expect(() => parseZitiQl('a not  in ["x"]')).toThrow(expect.objectContaining({ code: 'INVALID_FILTER' }));
    expect(filterOf('a not\tin ["x"]')).toEqual(cmp('a', 'not in', str('x')));
  });

  it('parses set functions and count', () => {
    expect(filterOf('anyOf(roleAttributes) = "a"')).toEqual({
      kind: 'compare', lhs: { kind: 'anyOf', name: 'roleAttributes' }, op: '=', values: [str('a')],
    });
    expect(filterOf('ALLOF( roleAttributes ) contains "a"')).toEqual({
      kind: 'compare', lhs: { kind: 'allOf', name: 'roleAttributes' }, op: 'contains', values: [str('a')],
    });
    expect(filterOf('count(roleAttributes) >= 2')).toEqual({
      kind: 'compare', lhs: { kind: 'count', set: { kind: 'symbol', name: 'roleAttributes' } }, op: '>=', values: [int(2)],
    });
    expect(filterOf('IsEmpty(roleAttributes)')).toEqual({ kind: 'isEmpty', set: { kind: 'symbol', name: 'roleAttributes' } });
  });

  it('parses count over a sub-query with its own sort, skip and limit', () => {
    expect(filterOf('count(from services where name = "x" sort by name skip 1 limit 2) > 0')).toEqual({
      kind: 'compare',
      lhs: {
        kind: 'count',
        set: {
          kind: 'subquery',
          name: 'services',
          query: { filter: cmp('name', '=', str('x')), sort: [{ field: 'name', direction: 'asc' }], skip: 1, limit: 2 },
        },
      },
      op: '>',
      values: [int(0)],
    });
  });
});

describe('parseZitiQl: boolean structure', () => {
  it('binds AND tighter than OR', () => {
    expect(filterOf('a or b and c')).toEqual({ kind: 'or', operands: [sym('a'), { kind: 'and', operands: [sym('b'), sym('c')] }] });
    expect(filterOf('a and b or c')).toEqual({ kind: 'or', operands: [{ kind: 'and', operands: [sym('a'), sym('b')] }, sym('c')] });
  });

  it('keeps chains flat', () => {
    expect(filterOf('a and b and c')).toEqual({ kind: 'and', operands: [sym('a'), sym('b'), sym('c')] });
    expect(filterOf('a OR b Or c')).toEqual({ kind: 'or', operands: [sym('a'), sym('b'), sym('c')] });
  });

  it('groups with parentheses', () => {
    expect(filterOf('(a or b) and c')).toEqual({ kind: 'and', operands: [{ kind: 'or', operands: [sym('a'), sym('b')] }, sym('c')] });
    expect(filterOf('((a))')).toEqual(sym('a'));
    expect(filterOf('( a = 1 )')).toEqual(cmp('a', '=', int(1)));
  });

  it('applies a prefix not to the rest of its group, as the controller grammar does', () => {
    expect(filterOf('not a')).toEqual({ kind: 'not', operand: sym('a') });
    expect(filterOf('not a and b')).toEqual({ kind: 'not', operand: { kind: 'and', operands: [sym('a'), sym('b')] } });
    expect(filterOf('(not a) and b')).toEqual({ kind: 'and', operands: [{ kind: 'not', operand: sym('a') }, sym('b')] });
    expect(filterOf('a and not b or c')).toEqual({
      kind: 'and',
      operands: [sym('a'), { kind: 'not', operand: { kind: 'or', operands: [sym('b'), sym('c')] } }],
    });
    expect(filterOf('NOT not a')).toEqual({ kind: 'not', operand: { kind: 'not', operand: sym('a') } });
  });

  it('accepts boolean constants and bare symbols', () => {
    expect(filterOf('true')).toEqual({ kind: 'const', value: true });
    expect(filterOf('FALSE or isAdmin')).toEqual({ kind: 'or', operands: [{ kind: 'const', value: false }, sym('isAdmin')] });
  });

  it('accepts single-quoted identifiers', () => {
    expect(filterOf("'name' = \"x\"")).toEqual(cmp('name', '=', str('x')));
    expect(filterOf("'tags.service-id' = \"x\"")).toEqual(cmp('tags.service-id', '=', str('x')));
  });

  it('matches keywords case-insensitively but keeps identifiers as written', () => {
    expect(filterOf('Name CONTAINS "x" AnD isAdmin')).toEqual({
      kind: 'and',
      operands: [cmp('Name', 'contains', str('x')), sym('isAdmin')],
    });
  });
});

describe('parseZitiQl: literals', () => {
  it('decodes the string escapes \\" \\\\ \\f \\n \\r \\t and keeps unicode', () => {
    expect(filterOf('a = "q\\"b\\\\f\\fn\\nr\\rt\\t"')).toEqual(cmp('a', '=', str('q"b\\f\fn\nr\rt\t')));
    expect(filterOf('a = "héllo 世界 🚀 \u007f"')).toEqual(cmp('a', '=', str('héllo 世界 🚀 \u007f')));
    expect(filterOf('a = ""')).toEqual(cmp('a', '=', str('')));
  });

  it('reads ints, floats and exponents (int64 → int, otherwise float)', () => {
    const num = (s: string) => (filterOf(`a = ${s}`) as { values: ZitiQlValue[] }).values[0];
    expect(num('0')).toEqual({ type: 'number', value: 0, isInt: true, text: '0' });
    expect(num('-42')).toEqual({ type: 'number', value: -42, isInt: true, text: '-42' });
    expect(num('1.5')).toEqual({ type: 'number', value: 1.5, isInt: false, text: '1.5' });
    expect(num('-2.5e-3')).toEqual({ type: 'number', value: -0.0025, isInt: false, text: '-2.5e-3' });
    expect(num('1E3')).toEqual({ type: 'number', value: 1000, isInt: false, text: '1E3' });
    expect(num('9223372036854775807')).toMatchObject({ isInt: true, text: '9223372036854775807' });
    expect(num('9223372036854775808')).toMatchObject({ isInt: false, text: '9223372036854775808' });
  });

  it('reads datetimes with inner spaces, lower-case t and z, offsets and fractions', () => {
    const dt = (s: string) => ((filterOf(`a = ${s}`) as { values: ZitiQlValue[] }).values[0] as { value: Date }).value;
    expect(dt('datetime( 2024-01-02T03:04:05Z )')).toEqual(new Date('2024-01-02T03:04:05Z'));
    expect(dt('datetime(2024-01-02t03:04:05z)')).toEqual(new Date('2024-01-02T03:04:05Z'));
    expect(dt('datetime(2024-01-02T03:04:05.123456Z)')).toEqual(new Date('2024-01-02T03:04:05.123Z'));
    expect(dt('datetime(2024-01-02T03:04:05+02:00)')).toEqual(new Date('2024-01-02T01:04:05Z'));
    expect(dt('datetime(2024-01-02T03:04:05-05:30)')).toEqual(new Date('2024-01-02T08:34:05Z'));
    expect(dt('datetime(2024-02-29T00:00:00Z)')).toEqual(new Date('2024-02-29T00:00:00Z'));
  });

  it('reads homogeneous arrays of strings, numbers and datetimes', () => {
    expect(filterOf('a in [1,2, 3]')).toEqual(cmp('a', 'in', int(1), int(2), int(3)));
    expect(filterOf('a in [datetime(2024-01-01T00:00:00Z), datetime(2024-01-02T00:00:00Z)]')).toEqual(
      cmp('a', 'in', { type: 'datetime', value: new Date('2024-01-01T00:00:00Z') }, {
        type: 'datetime',
        value: new Date('2024-01-02T00:00:00Z'),
      }),
    );
    expect(filterOf('a in ["only"]')).toEqual(cmp('a', 'in', str('only')));
  });
});

describe('parseZitiQl: sort, skip and limit', () => {
  it('parses each clause alone and in combination, in the fixed order', () => {
    expect(parseZitiQl('sort by name')).toEqual({ sort: [{ field: 'name', direction: 'asc' }] });
    expect(parseZitiQl('skip 5')).toEqual({ skip: 5 });
    expect(parseZitiQl('limit 7')).toEqual({ limit: 7 });
    expect(parseZitiQl('limit none')).toEqual({ limit: 'none' });
    expect(parseZitiQl('skip 2 limit 3')).toEqual({ skip: 2, limit: 3 });
    expect(parseZitiQl('sort by name desc, createdAt ASC ,id skip 0 limit -1')).toEqual({
      sort: [
        { field: 'name', direction: 'desc' },
        { field: 'createdAt', direction: 'asc' },
        { field: 'id', direction: 'asc' },
      ],
      skip: 0,
      limit: -1,
    });
    expect(parseZitiQl('name = "x" SORT BY name DESC SKIP 10 LIMIT NONE')).toEqual({
      filter: cmp('name', '=', str('x')),
      sort: [{ field: 'name', direction: 'desc' }],
      skip: 10,
      limit: 'none',
    });
    expect(parseZitiQl('true limit 1')).toEqual({ filter: { kind: 'const', value: true }, limit: 1 });
  });

  it.each(['limit 5 skip 3', 'skip 1 sort by name', 'limit 1 sort by name', 'sort by name sort by id', 'limit 1.5', 'skip 1e2', 'sort name', 'sort by', 'limit'])(
    'rejects %s',
    (input) => {
      expect(() => parseZitiQl(input)).toThrow(expect.objectContaining({ code: 'INVALID_FILTER' }));
    },
  );
});
