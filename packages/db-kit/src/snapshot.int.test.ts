import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { Client } from 'pg';
import { createTestDatabase, testInfra, type TestDatabase } from '@ziti/test-kit';
import {
  type RestoreContext,
  RestoreRefused,
  createSnapshotFile,
  dumpSchema,
  exportSnapshot,
  foreignKeyOrder,
  migrate,
  restoreSnapshot,
} from './index.js';

const ALPHA_SQL = `
CREATE TABLE "parents" (
  "id" TEXT PRIMARY KEY,
  "blob" BYTEA,
  "doc" JSONB NOT NULL DEFAULT '{}',
  "tags" TEXT[] NOT NULL DEFAULT '{}',
  "at" TIMESTAMPTZ(3),
  "local_at" TIMESTAMP(6),
  "amount" NUMERIC(30, 10),
  "ratio" DOUBLE PRECISION,
  "flag" BOOLEAN,
  "big" BIGINT,
  "name_upper" TEXT GENERATED ALWAYS AS (upper("id")) STORED
);
CREATE TABLE "children" (
  "n" INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  "parent_id" TEXT NOT NULL REFERENCES "parents"("id"),
  "serial_no" SERIAL,
  "note" TEXT
);
CREATE TABLE "ledger" ("id" TEXT PRIMARY KEY);
INSERT INTO "ledger" ("id") VALUES ('seeded-by-migration');`;

const BETA_SQL = `CREATE TABLE "ledger" ("id" TEXT PRIMARY KEY);`;

function migrationsDir(root: string, name: string, sql: string): string {
  const dir = join(root, name);
  mkdirSync(join(dir, '20260101000000_init'), { recursive: true });
  writeFileSync(join(dir, '20260101000000_init', 'migration.sql'), sql);
  return dir;
}

async function connect(url: string): Promise<Client> {
  const c = new Client({ connectionString: url });
  await c.connect();
  return c;
}

async function tableJson(c: Client, table: string): Promise<unknown[]> {
  return (await c.query(`SELECT to_jsonb(t) AS j FROM ${table} t ORDER BY 1`)).rows.map((r: { j: unknown }) => r.j);
}

async function collect(gen: AsyncIterable<string[]>): Promise<string[]> {
  const out: string[] = [];
  for await (const chunk of gen) out.push(...chunk);
  return out;
}

describe('database snapshots (db-kit)', () => {
  let source: TestDatabase;
  let target: TestDatabase;
  let root: string;
  let contexts: RestoreContext[];

  beforeAll(async () => {
    const infra = await testInfra();
    source = await createTestDatabase(infra.databaseUrl);
    target = await createTestDatabase(infra.databaseUrl);
    root = mkdtempSync(join(tmpdir(), 'snapshot-'));
    contexts = [
      { name: 'alpha', schema: 'alpha_ctx', migrationsDir: migrationsDir(root, 'alpha', ALPHA_SQL) },
      { name: 'beta', schema: 'beta_ctx', migrationsDir: migrationsDir(root, 'beta', BETA_SQL) },
    ];
    for (const c of contexts) await migrate({ databaseUrl: source.url, schema: c.schema, migrationsDir: c.migrationsDir });
    const c = await connect(source.url);
    await c.query(`INSERT INTO alpha_ctx.parents (id, blob, doc, tags, at, local_at, amount, ratio, flag, big) VALUES
      ('p1', '\\x00ff10'::bytea, '{"a":[1,{"b":"x\\u00e9"}],"n":null,"s":"quote\\" and \\\\ back"}', ARRAY['x','y z','{}','"q"'],
       '2026-11-26T15:45:01.123Z', '2026-11-26 15:45:01.123456', 12345678901234567890.0123456789, 0.1, true, 9007199254740993),
      ('p2', NULL, '[]', '{}', NULL, NULL, NULL, 'Infinity', false, -1),
      ('p3', ''::bytea, '"just a string"', ARRAY[NULL, 'n']::text[], 'infinity', '-infinity', 'NaN', -0.000001, NULL, NULL)`);
    await c.query(`INSERT INTO alpha_ctx.children (parent_id, note) SELECT 'p' || (1 + g % 3), 'line' || E'\\n' || g FROM generate_series(1, 1200) g`);
    await c.query(`DELETE FROM alpha_ctx.children WHERE n > 1195`);
    await c.query(`INSERT INTO beta_ctx.ledger (id) VALUES ('b1')`);
    await c.end();
  });

  afterAll(async () => {
    await source.drop();
    await target.drop();
    rmSync(root, { recursive: true, force: true });
  });

  it('orders tables after the tables they reference', () => {
    expect(foreignKeyOrder(['c', 'b', 'a'], [{ from: 'c', to: 'b' }, { from: 'b', to: 'a' }, { from: 'a', to: 'a' }])).toEqual(['a', 'b', 'c']);
    expect(foreignKeyOrder(['x', 'y'], [{ from: 'x', to: 'y' }, { from: 'y', to: 'x' }])).toEqual(['x', 'y']);
  });

  it('dumps a schema: migrations, tables in foreign-key order without generated columns, rows, sequences', async () => {
    const lines = await collect(dumpSchema({ databaseUrl: source.url, schema: 'alpha_ctx', context: 'alpha', batchRows: 100 }));
    expect(JSON.parse(lines[0]!)).toEqual(['context', { name: 'alpha', schema: 'alpha_ctx', migrations: ['20260101000000_init'] }]);
    const tables = lines.filter((l) => l.startsWith('["table"')).map((l) => JSON.parse(l)[1]);
    expect(tables.map((t) => t.name)).toEqual(['ledger', 'parents', 'children']);
    expect(tables[1].columns).not.toContain('name_upper');
    expect(lines.filter((l) => l.startsWith('{'))).toHaveLength(1 + 3 + 1195);
    expect(lines.filter((l) => l.startsWith('["sequence"')).map((l) => JSON.parse(l)[1].name).sort()).toEqual(['children_n_seq', 'children_serial_no_seq']);
    expect(JSON.parse(lines.at(-1)!)).toEqual(['end-context', { name: 'alpha', rows: 1199 }]);
  });

  it('sees every schema in the one transaction view of the exported snapshot', async () => {
    const held = await exportSnapshot(source.url, 30_000);
    try {
      const alpha = await collect(dumpSchema({ databaseUrl: source.url, schema: 'alpha_ctx', context: 'alpha', snapshotId: held.id }));
      // A write to both schemas commits between the two dumps: neither dump may see it.
      const c = await connect(source.url);
      await c.query('BEGIN');
      await c.query(`INSERT INTO alpha_ctx.ledger (id) VALUES ('between')`);
      await c.query(`INSERT INTO beta_ctx.ledger (id) VALUES ('between')`);
      await c.query('COMMIT');
      await c.end();
      const beta = await collect(dumpSchema({ databaseUrl: source.url, schema: 'beta_ctx', context: 'beta', snapshotId: held.id }));
      const own = await collect(dumpSchema({ databaseUrl: source.url, schema: 'beta_ctx', context: 'beta' }));
      expect(alpha.some((l) => l.includes('"between"'))).toBe(false);
      expect(beta.some((l) => l.includes('"between"'))).toBe(false);
      // Without the exported snapshot, the same dump sees the later write.
      expect(own.some((l) => l.includes('"between"'))).toBe(true);
    } finally {
      await held.release();
      const c = await connect(source.url);
      await c.query(`DELETE FROM alpha_ctx.ledger WHERE id = 'between'`);
      await c.query(`DELETE FROM beta_ctx.ledger WHERE id = 'between'`);
      await c.end();
    }
  });

  it('keeps the exporting transaction only until released or timed out', async () => {
    const held = await exportSnapshot(source.url, 30_000);
    await held.release();
    await expect(collect(dumpSchema({ databaseUrl: source.url, schema: 'beta_ctx', context: 'beta', snapshotId: held.id }))).rejects.toThrow(/snapshot/i);
    const brief = await exportSnapshot(source.url, 50);
    await brief.released;
    await expect(collect(dumpSchema({ databaseUrl: source.url, schema: 'beta_ctx', context: 'beta', snapshotId: brief.id }))).rejects.toThrow(/snapshot/i);
    await expect(collect(dumpSchema({ databaseUrl: source.url, schema: 'beta_ctx', context: 'beta', snapshotId: "1'; DROP TABLE x; --" }))).rejects.toThrow(/invalid snapshot id/);
  });

  async function takeSnapshot(dir: string): Promise<string> {
    const held = await exportSnapshot(source.url, 30_000);
    const file = createSnapshotFile(dir, ['alpha', 'beta'], new Date('2026-11-26T15:45:01Z'));
    try {
      for (const c of contexts) {
        for await (const chunk of dumpSchema({ databaseUrl: source.url, schema: c.schema, context: c.name, snapshotId: held.id })) await file.write(chunk);
      }
      return await file.finish();
    } finally {
      await held.release();
    }
  }

  it('writes the file under a temporary name and renames it complete, with a timestamped name', async () => {
    const dir = join(root, 'files');
    const path = await takeSnapshot(dir);
    expect(path).toBe(join(dir, 'ziti-db-20261126-154501.jsonl.gz'));
    const second = await takeSnapshot(dir);
    expect(second).toBe(join(dir, 'ziti-db-20261126-154501-1.jsonl.gz'));
    expect(readdirSync(dir).sort()).toEqual(['ziti-db-20261126-154501-1.jsonl.gz', 'ziti-db-20261126-154501.jsonl.gz']);
    const lines = gunzipSync(readFileSync(path)).toString('utf8').trimEnd().split('\n');
    expect(JSON.parse(lines[0]!)).toEqual(['snapshot', { format: 'ziti-controller-snapshot', version: 1, createdAt: '2026-11-26T15:45:01.000Z', contexts: ['alpha', 'beta'] }]);
    expect(JSON.parse(lines.at(-1)!)).toEqual(['end', { contexts: 2 }]);
  });

  it('restores every value faithfully into a fresh database, with its sequences', async () => {
    const path = await takeSnapshot(join(root, 'restore'));
    const restored = await restoreSnapshot({ databaseUrl: target.url, file: path, contexts, batchRows: 300 });
    expect(restored).toEqual([
      { name: 'alpha', schema: 'alpha_ctx', tables: 3, rows: 1199 },
      { name: 'beta', schema: 'beta_ctx', tables: 1, rows: 1 },
    ]);
    const a = await connect(source.url);
    const b = await connect(target.url);
    try {
      for (const t of ['alpha_ctx.parents', 'alpha_ctx.children', 'alpha_ctx.ledger', 'beta_ctx.ledger']) {
        expect(await tableJson(b, t)).toEqual(await tableJson(a, t));
      }
      // Exact text of values JavaScript numbers cannot hold.
      const exact = `SELECT amount::text, big::text, ratio::text, name_upper, encode(blob, 'hex') AS blob FROM alpha_ctx.parents ORDER BY id`;
      expect((await b.query(exact)).rows).toEqual((await a.query(exact)).rows);
      expect((await b.query(exact)).rows[0]).toMatchObject({ amount: '12345678901234567890.0123456789', big: '9007199254740993', blob: '00ff10' });
      // Identity and serial sequences continue where the source's were.
      const next = `SELECT nextval('alpha_ctx.children_n_seq')::int AS n, nextval('alpha_ctx.children_serial_no_seq')::int AS s`;
      expect((await b.query(next)).rows).toEqual((await a.query(next)).rows);
      const migrations = `SELECT migration_name FROM alpha_ctx._prisma_migrations`;
      expect((await b.query(migrations)).rows).toEqual([{ migration_name: '20260101000000_init' }]);
    } finally {
      await a.end();
      await b.end();
    }
  });

  it('refuses a database that holds data unless told to replace it', async () => {
    const path = await takeSnapshot(join(root, 'again'));
    await expect(restoreSnapshot({ databaseUrl: target.url, file: path, contexts })).rejects.toThrow(/alpha_ctx already holds data.*--replace/);
    const b = await connect(target.url);
    await b.query(`INSERT INTO beta_ctx.ledger (id) VALUES ('only-in-target')`);
    await restoreSnapshot({ databaseUrl: target.url, file: path, contexts, replace: true });
    expect((await b.query('SELECT id FROM beta_ctx.ledger ORDER BY id')).rows).toEqual([{ id: 'b1' }]);
    await b.end();
  });

  it('refuses other migrations than the snapshot recorded, a cut file and a foreign file, changing nothing', async () => {
    const fresh = await createTestDatabase((await testInfra()).databaseUrl);
    try {
      const path = await takeSnapshot(join(root, 'refusals'));
      const newer = mkdtempSync(join(root, 'newer-'));
      mkdirSync(join(newer, '20260101000000_init'));
      writeFileSync(join(newer, '20260101000000_init', 'migration.sql'), ALPHA_SQL);
      mkdirSync(join(newer, '20260201000000_more'));
      writeFileSync(join(newer, '20260201000000_more', 'migration.sql'), 'SELECT 1;');
      const changed = [{ ...contexts[0]!, migrationsDir: newer }, contexts[1]!];
      await expect(restoreSnapshot({ databaseUrl: fresh.url, file: path, contexts: changed })).rejects.toThrow(
        /context alpha: the snapshot was taken with other migrations.*only in this controller: 20260201000000_more/,
      );
      const lines = gunzipSync(readFileSync(path)).toString('utf8').trimEnd().split('\n');
      const cut = join(root, 'cut.jsonl.gz');
      writeFileSync(cut, gzipSync(lines.slice(0, -1).join('\n')));
      await expect(restoreSnapshot({ databaseUrl: fresh.url, file: cut, contexts })).rejects.toThrow(RestoreRefused);
      await expect(restoreSnapshot({ databaseUrl: fresh.url, file: cut, contexts })).rejects.toThrow(/incomplete/);
      const foreign = join(root, 'foreign.gz');
      writeFileSync(foreign, gzipSync('hello\n'));
      await expect(restoreSnapshot({ databaseUrl: fresh.url, file: foreign, contexts })).rejects.toThrow(RestoreRefused);
      const c = await connect(fresh.url);
      expect((await c.query(`SELECT nspname FROM pg_namespace WHERE nspname IN ('alpha_ctx', 'beta_ctx')`)).rows).toEqual([]);
      await c.end();
    } finally {
      await fresh.drop();
    }
  });
});
