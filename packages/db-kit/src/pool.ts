import { dependencies, describeFailure, unavailableDependency } from '@ziti/errors';
import { logger } from '@ziti/log';
import { contextOfSchema, dbQueryDuration, secondsSince, trackPool } from '@ziti/metrics';
import { performance } from 'node:perf_hooks';
import { Pool, type PoolConfig } from 'pg';

/** How long a query waits for a pooled connection (or a new one to open) before it fails. */
export const POOL_CONNECTION_TIMEOUT_MS = 5_000;

/**
 * A pg pool whose connections see only the service's own schema (search_path), for raw SQL
 * such as compiled ZitiQL filters. Prisma clients get the same schema through `PrismaPg`.
 * `extra.options` (more `-c name=value` settings of the connections) is added to the search_path.
 * Waiting for a connection is bounded (`POOL_CONNECTION_TIMEOUT_MS` unless `extra` says
 * otherwise), so a request never hangs on a database that is gone. An idle connection that breaks
 * because the server went away is reported to the process's `dependencies` monitor (one line per
 * outage) instead of `onError`; every new connection tells it the database is back.
 */
export function createSchemaPool(
  databaseUrl: string,
  schema: string,
  extra: PoolConfig = {},
  onError: (err: Error) => void = (err) => logger(contextOfSchema(schema)).error({ err }, `idle database client of schema ${schema} failed`),
): Pool {
  const options = [`-c search_path="${schema}"`, extra.options].filter(Boolean).join(' ');
  const pool = new Pool({ connectionString: databaseUrl, max: 10, connectionTimeoutMillis: POOL_CONNECTION_TIMEOUT_MS, ...extra, options });
  // An idle client can fail (server restart, database dropped); without a listener that would crash the process.
  pool.on('error', (err) => {
    if (unavailableDependency(err)) dependencies.lost('postgres', describeFailure(err));
    else onError(err);
  });
  pool.on('connect', (client) => {
    dependencies.up('postgres');
    // A checked-out client has no listener of the pool's: a connection lost between its queries
    // (a transaction waiting on something else) would be an unhandled 'error' and end the process.
    // The client's next query fails instead, and its release drops it.
    client.on('error', (err) => {
      if (unavailableDependency(err)) dependencies.lost('postgres', describeFailure(err));
    });
  });
  instrumentPool(pool, contextOfSchema(schema), extra.application_name ?? 'main');
  return pool;
}

/**
 * Reports the pool's connections (`ziti_db_pool_connections`, read when scraped) until it ends,
 * and times its `pool.query` calls (`ziti_db_query_duration_seconds`, including the wait for a
 * connection). Queries on a checked-out client (transactions) are not timed one by one.
 */
export function instrumentPool(pool: Pool, context: string, name = 'main'): void {
  const labels = { context, pool: name };
  const untrack = trackPool(pool, labels);
  const end = pool.end.bind(pool) as (...a: unknown[]) => unknown;
  pool.end = ((...args: unknown[]) => {
    untrack();
    return end(...args);
  }) as Pool['end'];
  const query = pool.query.bind(pool) as (...a: unknown[]) => unknown;
  const ok = { ...labels, outcome: 'ok' };
  const failed = { ...labels, outcome: 'error' };
  pool.query = ((...args: unknown[]) => {
    // The callback form (no caller here uses it) is passed through untimed.
    if (args.some((a) => typeof a === 'function')) return query(...args);
    const startedAt = performance.now();
    return (query(...args) as Promise<unknown>).then(
      (r) => {
        dbQueryDuration.observe(ok, secondsSince(startedAt));
        return r;
      },
      (err: unknown) => {
        dbQueryDuration.observe(failed, secondsSince(startedAt));
        throw err;
      },
    );
  }) as Pool['query'];
}

/** Postgres error codes the services map to OpenZiti errors. */
export const PG_UNIQUE_VIOLATION = '23505';
export const PG_FOREIGN_KEY_VIOLATION = '23503';

export function pgErrorCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown; originalCode?: unknown } };
  if (typeof e?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return e.code;
  // Prisma driver-adapter errors carry the database code on `cause.originalCode`.
  if (typeof e?.cause?.originalCode === 'string') return e.cause.originalCode;
  if (typeof e?.cause?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.cause.code)) return e.cause.code;
  return undefined;
}

/**
 * One connection and `SELECT 1` against `databaseUrl`, closed again: resolves once PostgreSQL
 * accepts connections (a start waits on it with `waitForDependency`). The error names the server
 * only by what `pg` reports (never the password of the URL).
 */
export async function probePostgres(databaseUrl: string, timeoutMs = 5_000): Promise<void> {
  const pool = new Pool({ connectionString: databaseUrl, max: 1, connectionTimeoutMillis: timeoutMs });
  pool.on('error', () => undefined);
  try {
    await pool.query('SELECT 1');
  } finally {
    await pool.end().catch(() => undefined);
  }
}
