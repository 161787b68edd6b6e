import {
  compileListQuery,
  type EntityQuerySchema,
  filterableFields,
  LIST_LIMIT_DEFAULT,
  LIST_LIMIT_MAX,
  LIST_OFFSET_MAX,
  type ListParams,
  UNLIMITED,
} from './index.js';

const col = (c: string) => (a: string) => `${a}."${c}"`;
const schema: EntityQuerySchema = {
  entity: 'identities',
  table: '"identities"',
  symbols: {
    id: { kind: 'scalar', type: 'string', sql: col('id') },
    name: { kind: 'scalar', type: 'string', sql: col('name') },
    createdAt: { kind: 'scalar', type: 'datetime', sql: col('created_at') },
    updatedAt: { kind: 'scalar', type: 'datetime', sql: col('updated_at') },
    cost: { kind: 'scalar', type: 'int', sql: col('cost') },
    isAdmin: { kind: 'scalar', type: 'bool', sql: col('is_admin') },
    secret: { kind: 'scalar', type: 'string', sql: col('secret'), sortable: false },
    tags: { kind: 'map', sql: col('tags') },
    roleAttributes: { kind: 'set', type: 'string', elements: (a) => `SELECT unnest(${a}."role_attributes") AS v` },
  },
};
const compile = (params: ListParams, opts = {}) => compileListQuery(params, schema, opts);
const paging = (params: ListParams) => {
  const q = compile(params);
  return { limit: q.limit, offset: q.offset, pagination: q.pagination };
};
const code = (params: ListParams) => {
  try {
    compile(params);
  } catch (err) {
    return (err as { code: string }).code;
  }
  return 'OK';
};

describe('compileListQuery: defaults', () => {
  it('matches everything, first 10 by id', () => {
    expect(compile({})).toEqual({
      where: 'TRUE',
      params: [],
      orderBy: '"e"."id" ASC',
      limit: 10,
      offset: 0,
      pagination: { limit: 10, offset: 0 },
    });
    expect(LIST_LIMIT_DEFAULT).toBe(10);
    expect(LIST_LIMIT_MAX).toBe(500);
    expect(LIST_OFFSET_MAX).toBe(100000);
  });

  it('combines filter, sort and paging with paramOffset and alias', () => {
    expect(compile({ filter: 'name = "x" and cost > 2', sort: 'name desc', limit: '5', offset: '20' }, { alias: 'i', paramOffset: 2 })).toEqual({
      where: '("i"."name" = $3::text AND "i"."cost" > $4::bigint)',
      params: ['x', 2],
      orderBy: '"i"."name" DESC, "i"."id" ASC',
      limit: 5,
      offset: 20,
      pagination: { limit: 5, offset: 20 },
    });
  });
});

describe('compileListQuery: limit and offset normalisation', () => {
  it.each([
    [undefined, 10],
    ['', 10],
    ['0', 10],
    ['-2', 10],
    ['-100', 10],
    ['1', 1],
    ['25', 25],
    [25, 25],
    ['500', 500],
    ['501', 500],
    ['+7', 7],
    ['9223372036854775807', 500],
  ])('limit %p → %p', (limit, expected) => {
    expect(paging({ limit })).toMatchObject({ limit: expected, pagination: { limit: expected } });
  });

  it('treats limit -1 as unlimited', () => {
    expect(paging({ limit: '-1' })).toEqual({ limit: null, offset: 0, pagination: { limit: UNLIMITED, offset: 0 } });
    expect(paging({ limit: -1 })).toMatchObject({ limit: null });
  });

  it.each([
    [undefined, 0],
    ['', 0],
    ['-1', 0],
    ['0', 0],
    ['30', 30],
    [30, 30],
    ['100000', 100000],
    ['100001', 100000],
  ])('offset %p → %p', (offset, expected) => {
    expect(paging({ offset })).toMatchObject({ offset: expected, pagination: { offset: expected } });
  });

  it.each(['abc', '1.5', '1e3', ' 5', '5 ', '0x10', '--1', '9223372036854775808', '-9223372036854775809'])(
    'rejects limit and offset %p with INVALID_PAGINATION',
    (value) => {
      expect(code({ limit: value })).toBe('INVALID_PAGINATION');
      expect(code({ offset: value })).toBe('INVALID_PAGINATION');
    },
  );

  it('rejects non-integer numbers with INVALID_PAGINATION', () => {
    expect(code({ limit: 1.5 })).toBe('INVALID_PAGINATION');
    expect(code({ offset: Number.NaN })).toBe('INVALID_PAGINATION');
  });

  it('lets the filter skip and limit win, each on its own', () => {
    expect(paging({ filter: 'limit 5', limit: '20', offset: '7' })).toMatchObject({ limit: 5, offset: 7 });
    expect(paging({ filter: 'skip 3', limit: '20', offset: '7' })).toMatchObject({ limit: 20, offset: 3 });
    expect(paging({ filter: 'name = "x" skip 3 limit 4', limit: '20', offset: '7' })).toMatchObject({ limit: 4, offset: 3 });
  });

  it('validates the limit and offset parameters even when the filter overrides them', () => {
    expect(code({ filter: 'skip 1 limit 2', limit: 'bogus' })).toBe('INVALID_PAGINATION');
    expect(code({ filter: 'skip 1 limit 2', offset: '1.5' })).toBe('INVALID_PAGINATION');
  });

  it('normalises the filter skip and limit the same way', () => {
    expect(paging({ filter: 'limit none' })).toEqual({ limit: null, offset: 0, pagination: { limit: UNLIMITED, offset: 0 } });
    expect(paging({ filter: 'limit -1' })).toMatchObject({ limit: null });
    expect(paging({ filter: 'limit 0' })).toMatchObject({ limit: 10 });
    expect(paging({ filter: 'limit -7' })).toMatchObject({ limit: 10 });
    expect(paging({ filter: 'limit 1000' })).toMatchObject({ limit: 500 });
    expect(paging({ filter: 'skip -4' })).toMatchObject({ offset: 0 });
    expect(paging({ filter: 'skip 200000' })).toMatchObject({ offset: 100000 });
  });

  it('reports unlimited as 9223372036854775807, which a JS number holds as 2^63', () => {
    // The controller reports math.MaxInt64. The nearest double is 2^63, and JSON.stringify prints it
    // as 9223372036854776000: the response renderer has to write the exact digits itself.
    expect(UNLIMITED).toBe(2 ** 63);
    expect(UNLIMITED).toBe(9223372036854775807);
    expect(JSON.stringify({ limit: UNLIMITED })).toBe('{"limit":9223372036854776000}');
  });
});

describe('compileListQuery: sort', () => {
  const orderBy = (params: ListParams) => compile(params).orderBy;

  it('reads the sort parameter as the wire sends it', () => {
    expect(orderBy({ sort: 'name desc, createdAt' })).toBe('"e"."name" DESC, "e"."created_at" ASC, "e"."id" ASC');
    expect(orderBy({ sort: 'name  asc' })).toBe('"e"."name" ASC, "e"."id" ASC');
    expect(orderBy({ sort: ' name desc, createdAt' })).toBe('"e"."name" DESC, "e"."created_at" ASC, "e"."id" ASC');
    expect(orderBy({ sort: 'name DESC,cost' })).toBe('"e"."name" DESC, "e"."cost" ASC, "e"."id" ASC');
    expect(orderBy({ sort: '' })).toBe('"e"."id" ASC');
  });

  it('does not append the id when already sorting by it', () => {
    expect(orderBy({ sort: 'id desc' })).toBe('"e"."id" DESC');
    expect(orderBy({ sort: 'name, id' })).toBe('"e"."name" ASC, "e"."id" ASC');
  });

  it('uses at most 5 sort fields, then the id', () => {
    expect(orderBy({ filter: 'sort by name, cost desc, createdAt, updatedAt, isAdmin, id desc' })).toBe(
      '"e"."name" ASC, "e"."cost" DESC, "e"."created_at" ASC, "e"."updated_at" ASC, "e"."is_admin" ASC, "e"."id" ASC',
    );
  });

  it('lets the filter sort by win over the sort parameter', () => {
    expect(orderBy({ filter: 'sort by cost desc', sort: 'name' })).toBe('"e"."cost" DESC, "e"."id" ASC');
    expect(orderBy({ filter: 'sort by cost', sort: 'bogus field' })).toBe('"e"."cost" ASC, "e"."id" ASC');
  });

  it.each([
    ['an unknown field', 'nope'],
    ['a field in the wrong case', 'Name'],
    ['a set field', 'roleAttributes'],
    ['a map field', 'tags'],
    ['a map key', 'tags.x'],
    ['an unsortable field', 'secret'],
    ['a bad direction', 'name sideways'],
    ['a missing separator', 'name cost'],
    ['a trailing comma', 'name,'],
    ['a statement separator', 'name; drop table identities'],
    ['a filter clause', 'name limit 5'],
    ['a sort by prefix', 'sort by name'],
  ])('rejects %s in the sort parameter with INVALID_SORT_IDENTIFIER', (_name, sort) => {
    expect(code({ sort })).toBe('INVALID_SORT_IDENTIFIER');
  });

  it('rejects a bad sort by in the filter with INVALID_FILTER', () => {
    expect(code({ filter: 'sort by nope' })).toBe('INVALID_FILTER');
    expect(code({ filter: 'sort by roleAttributes' })).toBe('INVALID_FILTER');
    expect(code({ filter: 'sort by secret desc' })).toBe('INVALID_FILTER');
  });

  it('falls back to the id column when the schema has no id symbol', () => {
    const bare: EntityQuerySchema = { entity: 'x', table: '"x"', idColumn: 'key', symbols: { name: schema.symbols.name! } };
    expect(compileListQuery({}, bare).orderBy).toBe('"e"."key" ASC');
  });
});

describe('compileListQuery: errors and helpers', () => {
  it('rejects filter errors with INVALID_FILTER before looking at paging', () => {
    expect(code({ filter: 'nope = 1', limit: 'bogus' })).toBe('INVALID_FILTER');
  });

  it('refuses an alias that is not a plain identifier', () => {
    expect(() => compile({}, { alias: 'e"; drop' })).toThrow(expect.objectContaining({ code: 'UNHANDLED' }));
    expect(() => compile({}, { paramOffset: -1 })).toThrow(expect.objectContaining({ code: 'UNHANDLED' }));
  });

  it('lists the public symbols as filterable fields', () => {
    expect(filterableFields(schema)).toEqual(['id', 'name', 'createdAt', 'updatedAt', 'cost', 'isAdmin', 'secret', 'tags', 'roleAttributes']);
  });
});
