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
  /** Raw pg pool on the same schema: compiled list queries, the outbox relay. */
  pool: Pool;
  close(): Promise<void>;
}

export function openDatabase(databaseUrl: string, log: (m: string) => void): Database {
  const pool = createSchemaPool(databaseUrl, SCHEMA, {}, (err) => log(`pki-enrollment: idle database connection lost: ${err.message}`));
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

export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string }; meta?: { driverAdapterError?: { cause?: { code?: string } } } };
  return e?.code === 'P2002' || e?.code === '23505' || e?.cause?.code === '23505' || e?.meta?.driverAdapterError?.cause?.code === '23505';
}

/** The constraint or column text of a unique violation, to tell which field it was. */
export function violationText(err: unknown): string {
  const e = err as { meta?: unknown; message?: string };
  return `${JSON.stringify(e?.meta ?? {})} ${e?.message ?? ''}`;
}

/** Runs `fn`; a unique violation becomes the ApiError `onUnique` gives for its text. */
export async function mapped<T>(fn: () => Promise<T>, onUnique: (text: string) => ApiError): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isUniqueViolation(err)) throw onUnique(violationText(err));
    throw err;
  }
}

export const json = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
