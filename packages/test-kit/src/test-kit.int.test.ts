import { Client } from 'pg';
import { createTestDatabase, testInfra } from './index.js';

describe('test-kit', () => {
  it('finds real servers and makes a fresh database that it can drop', async () => {
    const infra = await testInfra();
    expect(infra.databaseUrl).toMatch(/^postgres(ql)?:\/\//);
    expect(infra.natsUrl).toMatch(/^nats:\/\//);
    expect(infra.redisUrl).toMatch(/^redis:\/\//);
    const db = await createTestDatabase(infra.databaseUrl);
    const c = new Client({ connectionString: db.url });
    await c.connect();
    expect((await c.query('SELECT current_database() AS name')).rows[0].name).toBe(db.name);
    await c.end();
    await db.drop();
    const admin = new Client({ connectionString: infra.databaseUrl });
    await admin.connect();
    const left = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [db.name]);
    await admin.end();
    expect(left.rowCount).toBe(0);
  });
});
