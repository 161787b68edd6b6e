import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { createTestDatabase, testInfra, type TestDatabase } from '@ziti/test-kit';
import { createSchemaPool, migrate } from './index.js';

describe('migrate', () => {
  let db: TestDatabase;
  let dir: string;
  beforeAll(async () => {
    db = await createTestDatabase((await testInfra()).databaseUrl);
    dir = mkdtempSync(join(tmpdir(), 'migrations-'));
    mkdirSync(join(dir, '20260101000000_init'));
    writeFileSync(join(dir, '20260101000000_init', 'migration.sql'), 'CREATE TABLE "things" ("id" TEXT PRIMARY KEY);');
  });
  afterAll(() => db.drop());

  it('applies pending migrations into the schema and records them like prisma migrate deploy', async () => {
    expect(await migrate({ databaseUrl: db.url, schema: 'demo_ctx', migrationsDir: dir })).toEqual(['20260101000000_init']);
    const c = new Client({ connectionString: db.url });
    await c.connect();
    const t = await c.query("SELECT table_schema FROM information_schema.tables WHERE table_name = 'things'");
    expect(t.rows).toEqual([{ table_schema: 'demo_ctx' }]);
    const m = await c.query('SELECT migration_name, finished_at IS NOT NULL AS done, length(checksum) AS len FROM demo_ctx._prisma_migrations');
    expect(m.rows).toEqual([{ migration_name: '20260101000000_init', done: true, len: 64 }]);
    await c.end();
  });

  it('applies nothing the second time, also when replicas race', async () => {
    const runs = await Promise.all([1, 2, 3].map(() => migrate({ databaseUrl: db.url, schema: 'demo_ctx', migrationsDir: dir })));
    expect(runs.flat()).toEqual([]);
  });

  it('rolls a failing migration back and reports it', async () => {
    mkdirSync(join(dir, '20260102000000_bad'));
    writeFileSync(join(dir, '20260102000000_bad', 'migration.sql'), 'CREATE TABLE "half" ("id" TEXT); SELECT nope;');
    await expect(migrate({ databaseUrl: db.url, schema: 'demo_ctx', migrationsDir: dir })).rejects.toThrow(/20260102000000_bad/);
    const pool = createSchemaPool(db.url, 'demo_ctx');
    const r = await pool.query("SELECT to_regclass('half') AS t");
    await pool.end();
    expect(r.rows[0].t).toBeNull();
  });
});
