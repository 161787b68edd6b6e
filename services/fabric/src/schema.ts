import { join } from 'node:path';
import { migrate } from '@ziti/db-kit';

export const SERVICE_NAME = 'fabric' as const;
/** The Postgres schema this service owns. */
export const SCHEMA = 'fabric';
/** The Prisma migrations folder (the same path from `src/` under jest and from `dist/`). */
export const MIGRATIONS_DIR = join(__dirname, '..', 'prisma', 'migrations');

/** Applies this service's pending migrations into its schema; returns the names applied. */
export function runMigrations(databaseUrl: string, log?: (line: string) => void): Promise<string[]> {
  return migrate({ databaseUrl, schema: SCHEMA, migrationsDir: MIGRATIONS_DIR, log });
}
