import { type PreparedQuery, createSchemaPool, pgErrorCode, PG_FOREIGN_KEY_VIOLATION, PG_UNIQUE_VIOLATION } from '@ziti/db-kit';
import { ApiError } from '@ziti/errors';
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import { SCHEMA } from '../schema.js';

/** Something that runs SQL: the pool (reads) or the client of an open transaction (writes). */
export interface Sql {
  /** A text with params, or a named prepared statement (`prepared(text, values)` of db-kit, for the hot paths). */
  query<R extends QueryResultRow = any>(text: string | PreparedQuery, params?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
}

export interface Database {
  pool: Pool;
  /** Runs `fn` in one transaction (READ COMMITTED); rolls back when it throws. */
  tx<T>(fn: (sql: Sql) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** One pg pool on the service's schema (search_path); every statement of the context runs through it. */
export function openDatabase(databaseUrl: string, log: (m: string) => void, max = 10): Database {
  const pool = createSchemaPool(databaseUrl, SCHEMA, { max }, (err) => log(`policy: idle database connection lost: ${err.message}`));
  return {
    pool,
    async tx<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
      const client: PoolClient = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn(client);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

/**
 * Maps a database error to the API's: a unique violation on a `name` becomes the field error
 * `name must be unique` (400 COULD_NOT_VALIDATE), as the controller's unique indexes do.
 */
export function mapDbError(err: unknown, name?: string): unknown {
  const code = pgErrorCode(err);
  if (code === PG_UNIQUE_VIOLATION) {
    const constraint = String((err as { constraint?: string }).constraint ?? '');
    if (/name/.test(constraint)) return ApiError.field('name', 'name must be unique', name);
    return ApiError.field('(root)', 'unique constraint violated');
  }
  if (code === PG_FOREIGN_KEY_VIOLATION) {
    return ApiError.of('CAN_NOT_DELETE_REFERENCED_ENTITY', { cause: { message: String((err as Error).message) } });
  }
  return err;
}

/** Runs `fn`, rethrowing database errors mapped by `mapDbError`. */
export async function mapped<T>(fn: () => Promise<T>, name?: string): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw mapDbError(err, name);
  }
}

/** Serialises every write that changes policy evaluation (policies, entities' attributes, projections). */
export async function lockEvaluation(sql: Sql): Promise<void> {
  await sql.query(`SELECT pg_advisory_xact_lock(hashtext('policy:evaluation'))`);
}

export const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
