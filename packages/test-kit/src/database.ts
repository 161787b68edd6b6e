import { randomBytes } from 'node:crypto';
import { Client, type Pool } from 'pg';

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** Creates a fresh, uniquely named database on the test server, for one test file or run. */
export async function createTestDatabase(serverUrl: string, prefix = 'zt'): Promise<TestDatabase> {
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = new Client({ connectionString: serverUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** Runs `callback` in a transaction on one connection of `pool`: committed when it returns, rolled back when it throws. */
export async function inTransaction<T>(pool: Pool, callback: (c: Pick<Pool, 'query'>) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const value = await callback(c);
    await c.query('COMMIT');
    return value;
  } catch (err) {
    await c.query('ROLLBACK');
    throw err;
  } finally {
    c.release();
  }
}
