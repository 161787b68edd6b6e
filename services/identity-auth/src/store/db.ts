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
  /** The pool that stores new API sessions: the same schema, with asynchronous commit (see `openDatabase`). */
  sessionWrites: Pool;
  close(): Promise<void>;
}

/**
 * One pg pool for everything (Prisma runs on it through the pg adapter), and a small one for the
 * login's session insert whose connections commit asynchronously (`synchronous_commit=off`): a
 * login does not wait for the WAL flush. PostgreSQL stays consistent either way; what a crash of
 * the database server or its host, or a failover, can lose is the sessions created in the last
 * moments before it (at most three `wal_writer_delay`s, 600 ms by default), whose clients then get
 * 401 and log in again. Everything else (credentials, lockout counters, management writes)
 * commits synchronously.
 */
export function openDatabase(databaseUrl: string): Database {
  const quiet = () => undefined; // idle-client errors surface on the next query instead
  const pool = createSchemaPool(databaseUrl, SCHEMA, {}, quiet);
  const sessionWrites = createSchemaPool(databaseUrl, SCHEMA, { max: SESSION_WRITE_CONNECTIONS, options: '-c synchronous_commit=off', application_name: 'session-writes' }, quiet);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { schema: SCHEMA }) });
  return {
    prisma,
    pool,
    sessionWrites,
    async close() {
      await prisma.$disconnect();
      await pool.end();
      await sessionWrites.end();
    },
  };
}

/** Connections of the session-insert pool: concurrent logins share statements (`batched`), so few are busy at once. */
const SESSION_WRITE_CONNECTIONS = 4;

const UNIQUE_FIELDS: [RegExp, string][] = [
  [/username/, 'username'],
  [/external_?id/i, 'externalId'],
  [/fingerprint/, 'fingerprint'],
  [/token/, 'token'],
  [/name/, 'name'],
];

interface DbErrorShape {
  code?: string;
  meta?: { driverAdapterError?: { cause?: { originalCode?: string; constraint?: { index?: string } } } } & Record<string, unknown>;
  message?: string;
  cause?: { code?: string; constraint?: string };
}

/** The SQLSTATE of a database error (through Prisma's driver adapter or raw pg), if any. */
export function sqlState(err: unknown): string | undefined {
  const e = err as DbErrorShape;
  if (e?.code === 'P2002') return '23505';
  if (e?.code === 'P2003') return '23503';
  return e?.meta?.driverAdapterError?.cause?.originalCode ?? (e?.code && /^[0-9A-Z]{5}$/.test(e.code) ? e.code : e?.cause?.code);
}

/** The name of the violated constraint or index, if the error says. */
export function violatedConstraint(err: unknown): string | undefined {
  const e = err as DbErrorShape & { constraint?: string };
  return e?.meta?.driverAdapterError?.cause?.constraint?.index ?? e?.constraint ?? e?.cause?.constraint;
}

/**
 * Maps a database error to the API's: a violation of a constraint named in `byConstraint` becomes
 * that error; any other unique violation becomes the field error `<field> must be unique`
 * (400 COULD_NOT_VALIDATE), as the controller's unique indexes do.
 */
export function mapDbError(err: unknown, value?: (field: string) => unknown, byConstraint: Record<string, () => ApiError> = {}): unknown {
  const state = sqlState(err);
  const constraint = violatedConstraint(err);
  if (constraint && byConstraint[constraint] && (state === '23505' || state === '23503')) return byConstraint[constraint]!();
  if (state !== '23505') return err;
  const e = err as DbErrorShape;
  // The index name decides when the error carries it: Prisma's message quotes the calling source
  // file's path, which may contain any of these words (a checkout under `…/enroll-token/` did).
  const text = constraint ?? `${JSON.stringify(e.meta ?? {})} ${e.message ?? ''}`;
  for (const [re, field] of UNIQUE_FIELDS) {
    if (re.test(text)) return ApiError.field(field, `${field} must be unique`, value?.(field));
  }
  return ApiError.field('(root)', 'unique constraint violated');
}

/** Runs `fn`, rethrowing database errors mapped by `mapDbError`. */
export async function mapped<T>(fn: () => Promise<T>, value?: (field: string) => unknown, byConstraint?: Record<string, () => ApiError>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw mapDbError(err, value, byConstraint);
  }
}

export const json = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
