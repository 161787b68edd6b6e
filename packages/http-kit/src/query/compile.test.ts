import { compileFilter, type EntityQuerySchema, type SchemaRegistry } from './index.js';

const col = (c: string) => (a: string) => `${a}."${c}"`;
const services: EntityQuerySchema = {
  entity: 'services',
  table: '"services"',
  symbols: { id: { kind: 'scalar', type: 'string', sql: col('id') }, name: { kind: 'scalar', type: 'string', sql: col('name') } },
};
const servicePolicies: EntityQuerySchema = {
  entity: 'service-policies',
  table: '"service_policies"',
  symbols: {
    id: { kind: 'scalar', type: 'string', sql: col('id') },
    name: { kind: 'scalar', type: 'string', sql: col('name') },
    services: {
      kind: 'set',
      type: 'string',
      entity: 'services',
      elements: (a) => `SELECT l."service_id" AS v FROM "sps" l WHERE l."policy_id" = ${a}."id"`,
    },
  },
};
const identities: EntityQuerySchema = {
  entity: 'identities',
  table: '"identities"',
  symbols: {
    id: { kind: 'scalar', type: 'string', sql: col('id') },
    name: { kind: 'scalar', type: 'string', sql: col('name') },
    createdAt: { kind: 'scalar', type: 'datetime', sql: col('created_at') },
    isAdmin: { kind: 'scalar', type: 'bool', sql: col('is_admin') },
    cost: { kind: 'scalar', type: 'int', sql: col('cost') },
    score: { kind: 'scalar', type: 'float', sql: col('score') },
    tags: { kind: 'map', sql: col('tags') },
    roleAttributes: { kind: 'set', type: 'string', elements: (a) => `SELECT unnest(${a}."role_attributes") AS v` },
    servicePolicies: {
      kind: 'set',
      type: 'string',
      entity: 'service-policies',
      elements: (a) => `SELECT l."policy_id" AS v FROM "isp" l WHERE l."identity_id" = ${a}."id"`,
    },
  },
};
const registry: SchemaRegistry = { services, 'service-policies': servicePolicies, identities };
const sql = (filter: string, opts = {}) => compileFilter(filter, identities, { registry, ...opts });
const RA = 'SELECT unnest("e"."role_attributes") AS v';

describe('compileFilter: scalar comparisons', () => {
  it('compiles the wire forms to parameterised SQL', () => {
    expect(sql('id="x"')).toEqual({ where: '"e"."id" = $1::text', params: ['x'] });
    expect(sql('id = "x" or name="y"')).toEqual({ where: '("e"."id" = $1::text OR "e"."name" = $2::text)', params: ['x', 'y'] });
    expect(sql(' name icontains "X"')).toEqual({ where: 'strpos(lower("e"."name"), lower($1::text)) > 0', params: ['X'] });
    expect(sql('createdAt > datetime(2024-01-02T03:04:05Z)')).toEqual({
      where: '"e"."created_at" > $1::timestamptz',
      params: [new Date('2024-01-02T03:04:05Z')],
    });
  });

  it('gives TRUE and no params for an empty filter', () => {
    expect(sql('')).toEqual({ where: 'TRUE', params: [] });
    expect(sql('   ')).toEqual({ where: 'TRUE', params: [] });
    expect(sql('limit 5')).toEqual({ where: 'TRUE', params: [] });
  });

  it.each([
    ['name = "a"', '"e"."name" = $1::text'],
    ['name != "a"', '"e"."name" IS DISTINCT FROM $1::text'],
    ['name < "a"', '"e"."name" < $1::text'],
    ['name <= "a"', '"e"."name" <= $1::text'],
    ['name > "a"', '"e"."name" > $1::text'],
    ['name >= "a"', '"e"."name" >= $1::text'],
    ['name contains "a"', 'strpos("e"."name", $1::text) > 0'],
    ['name not contains "a"', '(strpos("e"."name", $1::text) > 0) IS NOT TRUE'],
    ['name icontains "a"', 'strpos(lower("e"."name"), lower($1::text)) > 0'],
    ['name not icontains "a"', '(strpos(lower("e"."name"), lower($1::text)) > 0) IS NOT TRUE'],
    ['name in ["a"]', '"e"."name" IN ($1::text)'],
    ['name not in ["a"]', '("e"."name" IN ($1::text)) IS NOT TRUE'],
  ])('%s', (filter, where) => {
    expect(sql(filter)).toEqual({ where, params: ['a'] });
  });

  it('compiles null checks without parameters', () => {
    expect(sql('name = null')).toEqual({ where: '"e"."name" IS NULL', params: [] });
    expect(sql('createdAt != null')).toEqual({ where: '"e"."created_at" IS NOT NULL', params: [] });
  });

  it('compiles between as lower-inclusive, upper-exclusive', () => {
    expect(sql('cost between 1 and 10')).toEqual({ where: '("e"."cost" >= $1::bigint AND "e"."cost" < $2::bigint)', params: [1, 10] });
    expect(sql('cost not between 1 and 10')).toEqual({
      where: '("e"."cost" >= $1::bigint AND "e"."cost" < $2::bigint) IS NOT TRUE',
      params: [1, 10],
    });
    const d1 = new Date('2024-01-01T00:00:00Z');
    const d2 = new Date('2024-02-01T00:00:00Z');
    expect(sql('createdAt between datetime(2024-01-01T00:00:00Z) and datetime(2024-02-01T00:00:00Z)')).toEqual({
      where: '("e"."created_at" >= $1::timestamptz AND "e"."created_at" < $2::timestamptz)',
      params: [d1, d2],
    });
  });

  it('converts int to float and numbers to strings', () => {
    expect(sql('cost = 3')).toEqual({ where: '"e"."cost" = $1::bigint', params: [3] });
    expect(sql('cost < 2.5')).toEqual({ where: '"e"."cost" < $1::double precision', params: [2.5] });
    expect(sql('score >= 2')).toEqual({ where: '"e"."score" >= $1::double precision', params: [2] });
    expect(sql('score in [1, 2.5]')).toEqual({ where: '"e"."score" IN ($1::double precision, $2::double precision)', params: [1, 2.5] });
    expect(sql('name = 5')).toEqual({ where: '"e"."name" = $1::text', params: ['5'] });
    expect(sql('name contains 1.50')).toEqual({ where: 'strpos("e"."name", $1::text) > 0', params: ['1.50'] });
    expect(sql('name in [1, 2]')).toEqual({ where: '"e"."name" IN ($1::text, $2::text)', params: ['1', '2'] });
  });

  it('binds int64 literals beyond 2^53 as exact decimal text', () => {
    expect(sql('cost = 9223372036854775807')).toEqual({ where: '"e"."cost" = $1::bigint', params: ['9223372036854775807'] });
    expect(sql('cost = -9007199254740993')).toEqual({ where: '"e"."cost" = $1::bigint', params: ['-9007199254740993'] });
  });

  it('compiles bools: = and != with a value, bare symbol, constants', () => {
    expect(sql('isAdmin = true')).toEqual({ where: '"e"."is_admin" = $1::boolean', params: [true] });
    expect(sql('isAdmin != false')).toEqual({ where: '"e"."is_admin" IS DISTINCT FROM $1::boolean', params: [false] });
    expect(sql('isAdmin')).toEqual({ where: '"e"."is_admin" = $1::boolean', params: [true] });
    expect(sql('true')).toEqual({ where: 'TRUE', params: [] });
    expect(sql('false or isAdmin')).toEqual({ where: '(FALSE OR "e"."is_admin" = $1::boolean)', params: [true] });
  });
});

describe('compileFilter: boolean structure', () => {
  it('nests and/or with parentheses and numbers params in source order', () => {
    expect(sql('name = "a" or cost = 1 and isAdmin = true')).toEqual({
      where: '("e"."name" = $1::text OR ("e"."cost" = $2::bigint AND "e"."is_admin" = $3::boolean))',
      params: ['a', 1, true],
    });
    expect(sql('(name = "a" or cost = 1) and isAdmin = true')).toEqual({
      where: '(("e"."name" = $1::text OR "e"."cost" = $2::bigint) AND "e"."is_admin" = $3::boolean)',
      params: ['a', 1, true],
    });
  });

  it('negates nullable expressions with IS NOT TRUE and non-nullable ones with NOT', () => {
    expect(sql('not name = "a"')).toEqual({ where: '("e"."name" = $1::text) IS NOT TRUE', params: ['a'] });
    expect(sql('not name != "a"')).toEqual({ where: 'NOT ("e"."name" IS DISTINCT FROM $1::text)', params: ['a'] });
    expect(sql('not (name = "a" or cost = 1)')).toEqual({
      where: '("e"."name" = $1::text OR "e"."cost" = $2::bigint) IS NOT TRUE',
      params: ['a', 1],
    });
    expect(sql('not true')).toEqual({ where: 'NOT TRUE', params: [] });
  });

  it('applies paramOffset and alias', () => {
    expect(sql('name = "a" and cost = 2', { paramOffset: 3, alias: 'i' })).toEqual({
      where: '("i"."name" = $4::text AND "i"."cost" = $5::bigint)',
      params: ['a', 2],
    });
  });
});

describe('compileFilter: sets', () => {
  it('compiles anyOf as EXISTS and not anyOf as none', () => {
    expect(sql('anyOf(roleAttributes) = "a"')).toEqual({
      where: `EXISTS (SELECT 1 FROM (${RA}) AS "e_s1" WHERE "e_s1"."v" = $1::text)`,
      params: ['a'],
    });
    expect(sql('not anyOf(roleAttributes) = "a"')).toEqual({
      where: `NOT EXISTS (SELECT 1 FROM (${RA}) AS "e_s1" WHERE "e_s1"."v" = $1::text)`,
      params: ['a'],
    });
    expect(sql('anyOf(roleAttributes) in ["a", "b"]')).toEqual({
      where: `EXISTS (SELECT 1 FROM (${RA}) AS "e_s1" WHERE "e_s1"."v" IN ($1::text, $2::text))`,
      params: ['a', 'b'],
    });
  });

  it('compiles allOf as no element failing the comparison (vacuously true when empty)', () => {
    expect(sql('allOf(roleAttributes) contains "a"')).toEqual({
      where: `NOT EXISTS (SELECT 1 FROM (${RA}) AS "e_s1" WHERE (strpos("e_s1"."v", $1::text) > 0) IS NOT TRUE)`,
      params: ['a'],
    });
    expect(sql('not allOf(roleAttributes) = "a"')).toEqual({
      where: `EXISTS (SELECT 1 FROM (${RA}) AS "e_s1" WHERE ("e_s1"."v" = $1::text) IS NOT TRUE)`,
      params: ['a'],
    });
  });

  it('compiles count and isEmpty', () => {
    expect(sql('count(roleAttributes) >= 2')).toEqual({
      where: `(SELECT count(*) FROM (${RA}) AS "e_s1") >= $1::bigint`,
      params: [2],
    });
    expect(sql('isEmpty(roleAttributes)')).toEqual({ where: `NOT EXISTS (${RA})`, params: [] });
    expect(sql('not isEmpty(roleAttributes)')).toEqual({ where: `EXISTS (${RA})`, params: [] });
    expect(sql('not isEmpty(roleAttributes) and count(roleAttributes) = 3')).toEqual({
      where: `NOT (NOT EXISTS (${RA}) AND (SELECT count(*) FROM (${RA}) AS "e_s1") = $1::bigint)`,
      params: [3],
    });
  });

  it('compiles the association-list sub-query with fresh aliases', () => {
    expect(sql('not isEmpty(from servicePolicies where anyOf(services) = "abc")')).toEqual({
      where:
        'EXISTS (SELECT "e_s1"."v" AS v FROM (SELECT l."policy_id" AS v FROM "isp" l WHERE l."identity_id" = "e"."id") AS "e_s1"' +
        ' JOIN "service_policies" AS "e2" ON "e2"."id" = "e_s1"."v"' +
        ' WHERE EXISTS (SELECT 1 FROM (SELECT l."service_id" AS v FROM "sps" l WHERE l."policy_id" = "e2"."id") AS "e_s3" WHERE "e_s3"."v" = $1::text))',
      params: ['abc'],
    });
  });

  it('nests sub-queries and honours their skip and limit', () => {
    const r = sql('count(from servicePolicies where isEmpty(from services where name = "s") skip 1 limit 2) = 1');
    expect(r.params).toEqual(['s', 2, 1, 1]);
    expect(r.where).toContain('JOIN "service_policies" AS "e3"');
    expect(r.where).toContain('JOIN "services" AS "e5" ON "e5"."id" = "e_s4"."v" WHERE "e5"."name" = $1::text');
    expect(r.where).toContain(' LIMIT $2::bigint OFFSET $3::bigint) AS "e_s1") = $4::bigint');
  });
});

describe('compileFilter: maps', () => {
  const key = (a = '$1') => `("e"."tags" #> ${a}::text[])`;
  const text = (a = '$1') => `("e"."tags" #>> ${a}::text[])`;

  it('compares string values as text', () => {
    expect(sql('tags.service-id = "x"')).toEqual({ where: `${text()} = $2::text`, params: [['service-id'], 'x'] });
    expect(sql('tags.a.b icontains "x"')).toEqual({ where: `strpos(lower(${text()}), lower($2::text)) > 0`, params: [['a', 'b'], 'x'] });
  });

  it('compares numbers only with JSON numbers and bools only with JSON booleans', () => {
    expect(sql('tags.n > 5')).toEqual({
      where: `(CASE WHEN jsonb_typeof(${key()}) = 'number' THEN ${text()}::numeric END) > $2::numeric`,
      params: [['n'], '5'],
    });
    expect(sql('tags.n between -1.5 and 1e300')).toEqual({
      where: `((CASE WHEN jsonb_typeof(${key()}) = 'number' THEN ${text()}::numeric END) >= $2::numeric AND (CASE WHEN jsonb_typeof(${key()}) = 'number' THEN ${text()}::numeric END) < $3::numeric)`,
      params: [['n'], -1.5, 1e300],
    });
    expect(sql('tags.flag = true')).toEqual({
      where: `(CASE WHEN jsonb_typeof(${key()}) = 'boolean' THEN ${text()}::boolean END) = $2::boolean`,
      params: [['flag'], true],
    });
    expect(sql('tags.flag')).toEqual(sql('tags.flag = true'));
  });

  it('treats = null as key absent or JSON null', () => {
    expect(sql('tags.x = null')).toEqual({ where: `COALESCE(jsonb_typeof(${key()}), 'null') = 'null'`, params: [['x']] });
    expect(sql('tags.x != null')).toEqual({ where: `COALESCE(jsonb_typeof(${key()}), 'null') <> 'null'`, params: [['x']] });
  });
});
