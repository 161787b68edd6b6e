import { PrismaPg } from '@prisma/adapter-pg';
import { PG_UNIQUE_VIOLATION, createSchemaPool, pgErrorCode } from '@ziti/db-kit';
import { ApiError } from '@ziti/errors';
import type { Pool } from 'pg';
import { PrismaClient } from '../generated/prisma/client.js';
import { SCHEMA } from '../schema.js';

export interface Database {
  prisma: PrismaClient;
  /** Raw pg pool on the same schema (search_path): compiled list queries, the outbox. */
  pool: Pool;
  close(): Promise<void>;
}

/** One pg pool for everything; Prisma runs on it through the pg adapter. */
export function openDatabase(databaseUrl: string, log: (m: string) => void): Database {
  const pool = createSchemaPool(databaseUrl, SCHEMA, {}, (err) => log(`posture: idle database connection lost: ${err.message}`));
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { schema: SCHEMA }) });
  return {
    prisma,
    pool,
    async close() {
      await prisma.$disconnect();
      await pool.end();
    },
  };
}

/** A unique violation on the name becomes the field error `name must be unique` (400). */
export function mapUnique(err: unknown, name: string): unknown {
  if ((err as { code?: string })?.code === 'P2025') return ApiError.notFound();
  const unique = (err as { code?: string })?.code === 'P2002' || pgErrorCode(err) === PG_UNIQUE_VIOLATION;
  return unique ? ApiError.field('name', 'name must be unique', name) : err;
}

export const jsonObject = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
