import { createTestDatabase, type TestDatabase, testInfra } from '@ziti/test-kit';
import { Client } from 'pg';
import { compileListQuery, type EntityQuerySchema, type ListParams, type SchemaRegistry } from './index.js';

const col = (c: string) => (a: string) => `${a}."${c}"`;
const groups: EntityQuerySchema = {
  entity: 'groups',
  table: '"groups"',
  symbols: { id: { kind: 'scalar', type: 'string', sql: col('id') }, name: { kind: 'scalar', type: 'string', sql: col('name') } },
};
const items: EntityQuerySchema = {
  entity: 'items',
  table: '"items"',
  symbols: {
    id: { kind: 'scalar', type: 'string', sql: col('id') },
    name: { kind: 'scalar', type: 'string', sql: col('name') },
    createdAt: { kind: 'scalar', type: 'datetime', sql: col('created_at') },
    isAdmin: { kind: 'scalar', type: 'bool', sql: col('is_admin') },
    cost: { kind: 'scalar', type: 'int', sql: col('cost') },
    tags: { kind: 'map', sql: col('tags') },
    roleAttributes: { kind: 'set', type: 'string', elements: (a) => `SELECT unnest(${a}."role_attributes") AS v` },
    groups: {
      kind: 'set',
      type: 'string',
      entity: 'groups',
      elements: (a) => `SELECT l."group_id" AS v FROM "item_groups" l WHERE l."item_id" = ${a}."id"`,
    },
  },
};
const registry: SchemaRegistry = { groups, items };
const INJECTION = `o'brien"; DROP TABLE items; --`;

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase((await testInfra()).databaseUrl, 'zt_query');
  client = new Client({ connectionString: db.url });
  await client.connect();
  await client.query(`
    CREATE TABLE items (
      id text PRIMARY KEY, name text, created_at timestamptz NOT NULL, is_admin boolean,
      role_attributes text[] NOT NULL DEFAULT '{}', tags jsonb NOT NULL DEFAULT '{}', cost int
    );
    CREATE TABLE groups (id text PRIMARY KEY, name text NOT NULL);
    CREATE TABLE item_groups (item_id text NOT NULL REFERENCES items, group_id text NOT NULL REFERENCES groups);
  `);
  const rows: [string, string | null, string, boolean | null, string[], object, number | null][] = [
    ['a', 'alpha', '2024-01-01T00:00:00Z', true, ['web', 'db'], { env: 'prod', n: 5, flag: true }, 10],
    ['b', 'Beta', '2024-02-01T00:00:00Z', false, ['web'], { env: 'dev', n: '5' }, 20],
    ['c', 'gamma%_', '2024-03-01T00:00:00Z', null, [], {}, null],
    ['d', null, '2024-04-01T00:00:00Z', true, ['db'], { env: null, 'service-id': 'svc1' }, 40],
    ['e', INJECTION, '2024-05-01T00:00:00Z', false, ['web', 'db', 'ops'], { flag: false }, 50],
  ];
  for (const r of rows) {
    await client.query('INSERT INTO items VALUES ($1, $2, $3, $4, $5, $6, $7)', [...r.slice(0, 5), JSON.stringify(r[5]), r[6]]);
  }
  await client.query(`INSERT INTO groups VALUES ('g1', 'red'), ('g2', 'blue')`);
  await client.query(`INSERT INTO item_groups VALUES ('a', 'g1'), ('a', 'g2'), ('b', 'g2'), ('d', 'g1')`);
});

afterAll(async () => {
  await client?.end();
  await db?.drop();
});

/** Runs the compiled list query and returns the ids, in order. */
async function ids(params: ListParams): Promise<string[]> {
  const q = compileListQuery({ limit: '-1', ...params }, items, { registry });
  const paging = `${q.limit === null ? '' : ` LIMIT ${q.limit}`} OFFSET ${q.offset}`;
  const res = await client.query(`SELECT "e"."id" FROM "items" AS "e" WHERE ${q.where} ORDER BY ${q.orderBy}${paging}`, q.params);
  return res.rows.map((r: { id: string }) => r.id);
}

describe('compiled ZitiQL against PostgreSQL', () => {
  it.each([
    ['', ['a', 'b', 'c', 'd', 'e']],
    ['id = "x" or name="Beta"', ['b']],
    ['name != "alpha"', ['b', 'c', 'd', 'e']],
    ['name = null', ['d']],
    [' name icontains "BETA"', ['b']],
    ['name contains "%_"', ['c']],
    ['name not contains "a"', ['d', 'e']],
    ['createdAt between datetime(2024-02-01T00:00:00Z) and datetime(2024-04-01T00:00:00Z)', ['b', 'c']],
    ['createdAt >= datetime(2024-04-01T02:00:00+02:00)', ['d', 'e']],
    ['isAdmin', ['a', 'd']],
    ['not isAdmin', ['b', 'c', 'e']],
    ['isAdmin = false', ['b', 'e']],
    ['cost in [10, 40]', ['a', 'd']],
    ['cost not in [10, 40]', ['b', 'c', 'e']],
    ['cost > 15.5 and cost < 45', ['b', 'd']],
    ['cost not between 20 and 50', ['a', 'c', 'e']],
    ['anyOf(roleAttributes) = "db"', ['a', 'd', 'e']],
    ['not anyOf(roleAttributes) = "web"', ['c', 'd']],
    ['allOf(roleAttributes) = "web"', ['b', 'c']],
    ['count(roleAttributes) >= 2', ['a', 'e']],
    ['isEmpty(roleAttributes)', ['c']],
    ['tags.env = "prod"', ['a']],
    ['tags.n = 5', ['a']],
    ['tags.n = "5"', ['a', 'b']],
    ['tags.env = null', ['c', 'd', 'e']],
    ['tags.flag = false', ['e']],
    ['tags.flag', ['a']],
    ['tags.service-id = "svc1"', ['d']],
    ['not isEmpty(from groups where name = "red")', ['a', 'd']],
    ['count(from groups where name in ["red", "blue"]) = 2', ['a']],
    ['isEmpty(from groups where true) and cost != null', ['e']],
    ['anyOf(groups) = "g2"', ['a', 'b']],
    ['count(from groups where true skip 9223372036854775807 limit 9223372036854775807) = 0', ['a', 'b', 'c', 'd', 'e']],
    ['tags.n < 1e300 and tags.n > -9223372036854775808', ['a']],
    ['cost < 9223372036854775807 and cost > 1e-300', ['a', 'b', 'd', 'e']],
    ['createdAt > datetime(0000-01-01T00:00:00Z) and createdAt < datetime(9999-12-31T23:59:59.999999999Z)', ['a', 'b', 'c', 'd', 'e']],
  ])('%s', async (filter, expected) => {
    expect(await ids({ filter })).toEqual(expected);
  });

  it('keeps injection attempts inert', async () => {
    expect(await ids({ filter: `name = "o'brien\\"; DROP TABLE items; --"` })).toEqual(['e']);
    expect(await ids({ filter: 'name contains "; DROP TABLE items; --"' })).toEqual(['e']);
    const count = await client.query('SELECT count(*)::int AS n FROM items');
    expect(count.rows[0].n).toBe(5);
  });

  it('applies sort, skip and limit from the filter and from the parameters', async () => {
    expect(await ids({ filter: 'cost != null sort by cost desc limit 2' })).toEqual(['e', 'd']);
    expect(await ids({ filter: 'cost != null sort by cost desc skip 1 limit 2' })).toEqual(['d', 'b']);
    // isAdmin desc puts NULL first (c), then true (a, then d whose name is NULL), then false (b, e).
    expect(await ids({ sort: 'isAdmin desc, name', limit: '3', offset: '1' })).toEqual(['a', 'd', 'b']);
    expect(await ids({ filter: 'limit none', sort: ' createdAt desc' })).toEqual(['e', 'd', 'c', 'b', 'a']);
  });
});
