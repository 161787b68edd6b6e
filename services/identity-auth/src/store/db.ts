import { PrismaPg } from '@prisma/adapter-pg';
import { createSchemaPool } from '@ziti/db-kit';
import { ApiError } from '@ziti/errors';
import type { Pool } from 'pg';
import { type Prisma, PrismaClient } from '../generated/prisma/client.js';
import { SCHEMA } from '../schema.js';


/** A Prisma client or an interactive-transaction client. */
export type Db = Prisma.TransactionClient;

export interface Database {
  prisma: PrismaClient;
  /** Raw pg pool on the same schema (search_path): compiled list queries, the outbox relay. */
  pool: Pool;
  close(): Promise<void>;
}

/** One pg pool for everything; Prisma runs on it through the pg adapter. */
export function openDatabase(databaseUrl: string): Database {
  const pool = createSchemaPool(databaseUrl, SCHEMA);
  pool.on('error', () => undefined); // idle-client errors surface on the next query instead
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

const UNIQUE_FIELDS: [RegExp, string][] = [
  [/username/, 'username'],
  [/external_?id/i, 'externalId'],
  [/fingerprint/, 'fingerprint'],
  [/token/, 'token'],
  [/name/, 'name'],
];

/**
 * Maps a database error to the API's: a unique violation becomes the field error
 * `<field> must be unique` (400 COULD_NOT_VALIDATE), as the controller's unique indexes do.
 */
export function mapDbError(err: unknown, value?: (field: string) => unknown): unknown {
  const e = err as { code?: string; meta?: unknown; message?: string; cause?: { code?: string } };
  const unique = e?.code === 'P2002' || e?.code === '23505' || e?.cause?.code === '23505';
  if (!unique) return err;
  const text = `${JSON.stringify(e.meta ?? {})} ${e.message ?? ''}`;
  for (const [re, field] of UNIQUE_FIELDS) {
    if (re.test(text)) return ApiError.field(field, `${field} must be unique`, value?.(field));
  }
  return ApiError.field('(root)', 'unique constraint violated');
}

/** Runs `fn`, rethrowing database errors mapped by `mapDbError`. */
export async function mapped<T>(fn: () => Promise<T>, value?: (field: string) => unknown): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw mapDbError(err, value);
  }
}

export const json = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
