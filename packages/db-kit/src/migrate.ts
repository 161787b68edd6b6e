import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';

export interface MigrateOptions {
  databaseUrl: string;
  /** The Postgres schema the service owns, e.g. `identity_auth`. */
  schema: string;
  /** A Prisma migrations folder: `<dir>/<timestamp>_<name>/migration.sql`. */
  migrationsDir: string;
  log?: (line: string) => void;
}

const SCHEMA_RE = /^[a-z_][a-z0-9_]*$/;

/**
 * Applies a service's Prisma migrations into its own schema, recording them in
 * `<schema>._prisma_migrations` exactly as `prisma migrate deploy` does (so the Prisma CLI,
 * where its engine is available, sees the same history). Safe to run from several replicas at
 * once: a transaction-scoped advisory lock serialises them. Each migration runs in a transaction.
 */
export async function migrate(opts: MigrateOptions): Promise<string[]> {
  if (!SCHEMA_RE.test(opts.schema)) throw new Error(`invalid schema name: ${opts.schema}`);
  const dirs = existsSync(opts.migrationsDir)
    ? readdirSync(opts.migrationsDir, { withFileTypes: true })
        .filter((d) => d.isDirectory() && existsSync(join(opts.migrationsDir, d.name, 'migration.sql')))
        .map((d) => d.name)
        .sort()
    : [];
  const client = new Client({ connectionString: opts.databaseUrl });
  await client.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [`ziti-migrate:${opts.schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${opts.schema}"`);
    await client.query(`SET search_path TO "${opts.schema}"`);
    await client.query(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" VARCHAR(36) PRIMARY KEY NOT NULL,
      "checksum" VARCHAR(64) NOT NULL,
      "finished_at" TIMESTAMPTZ,
      "migration_name" VARCHAR(255) NOT NULL,
      "logs" TEXT,
      "rolled_back_at" TIMESTAMPTZ,
      "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
      "applied_steps_count" INTEGER NOT NULL DEFAULT 0)`);
    const done = new Set(
      (await client.query<{ migration_name: string }>(
        'SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
      )).rows.map((r) => r.migration_name),
    );
    for (const name of dirs) {
      if (done.has(name)) continue;
      const sql = readFileSync(join(opts.migrationsDir, name, 'migration.sql'), 'utf8');
      const checksum = createHash('sha256').update(sql).digest('hex');
      const id = randomUUID();
      await client.query('BEGIN');
      try {
        await client.query(
          'INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at) VALUES ($1, $2, $3, now())',
          [id, checksum, name],
        );
        await client.query(sql);
        await client.query(
          'UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1',
          [id],
        );
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${opts.schema}/${name} failed: ${(err as Error).message}`);
      }
      applied.push(name);
      opts.log?.(`applied ${opts.schema}/${name}`);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [`ziti-migrate:${opts.schema}`]).catch(() => undefined);
    await client.end();
  }
  return applied;
}
