import { Client } from 'pg';

/**
 * Database snapshots of the controller, taken without `pg_dump` (the embedded PostgreSQL ships only
 * initdb, pg_ctl and postgres).
 *
 * One transaction view across every context's schema, even when the contexts run as separate
 * processes: one of them exports a snapshot (`exportSnapshot`: a `REPEATABLE READ, READ ONLY`
 * transaction and `pg_export_snapshot()`) and keeps that transaction open while every context
 * dumps its own schema in a transaction that imports it (`dumpSchema` with `SET TRANSACTION
 * SNAPSHOT`). All of them then see exactly the same committed data.
 *
 * The snapshot file is gzip'd JSON lines. A line starting with `[` is a control line
 * `[kind, object]`; a line starting with `{` is one row of the table named by the last `table`
 * line, as `to_json` renders it (bytea as `"\\x…"`, jsonb as JSON, arrays as JSON arrays,
 * timestamps in ISO form with their full precision, numbers as PostgreSQL prints them):
 *
 * ```
 * ["snapshot",{"format":"ziti-controller-snapshot","version":1,"createdAt":"…","contexts":["identity-auth",…]}]
 * ["context",{"name":"identity-auth","schema":"identity_auth","migrations":["20261121000000_init",…]}]
 * ["table",{"name":"identity_types","columns":["id","name","created_at","updated_at"]}]
 * {"id":"User","name":"User","created_at":"2026-11-26T15:45:01.123+00:00","updated_at":"…"}
 * ["sequence",{"name":"some_seq","lastValue":"42","isCalled":true}]
 * ["end-context",{"name":"identity-auth","rows":123}]
 * …
 * ["end",{"contexts":5}]
 * ```
 *
 * Tables come in foreign-key order (referenced tables first), generated columns are left out
 * (PostgreSQL computes them again), and `_prisma_migrations` is recorded as the list of applied
 * migration names instead of rows. `restoreSnapshot` reads the format back.
 */
export const SNAPSHOT_FORMAT = 'ziti-controller-snapshot';
export const SNAPSHOT_VERSION = 1;

const SCHEMA_RE = /^[a-z_][a-z0-9_]*$/;
/** What `pg_export_snapshot()` returns: `0000000A-0000002F-1`. */
const SNAPSHOT_ID_RE = /^[0-9A-Fa-f]{1,16}(-[0-9A-Fa-f]{1,16}){1,2}$/;

export const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

export function isSnapshotId(id: string): boolean {
  return SNAPSHOT_ID_RE.test(id);
}

/** A control line of the snapshot file. */
export function controlLine(kind: string, value: Record<string, unknown>): string {
  return JSON.stringify([kind, value]);
}

export interface HeldSnapshot {
  /** The exported snapshot's id, for `SET TRANSACTION SNAPSHOT`. */
  id: string;
  /** Ends the exporting transaction (idempotent). Transactions that imported it keep their view. */
  release(): Promise<void>;
  /** Settles once the exporting transaction ended (released, timed out or its connection lost). */
  released: Promise<void>;
}

/**
 * Opens a `REPEATABLE READ, READ ONLY` transaction on a connection of its own, exports its
 * snapshot and keeps it open until `release()` or `holdMs` elapsed, whichever comes first.
 */
export async function exportSnapshot(databaseUrl: string, holdMs: number): Promise<HeldSnapshot> {
  const client = new Client({ connectionString: databaseUrl, application_name: 'ziti-snapshot-export' });
  let ended = false;
  let resolveReleased!: () => void;
  const released = new Promise<void>((r) => (resolveReleased = r));
  let timer: NodeJS.Timeout | undefined;
  const release = async () => {
    if (ended) return released;
    ended = true;
    clearTimeout(timer);
    await client.query('ROLLBACK').catch(() => undefined);
    await client.end().catch(() => undefined);
    resolveReleased();
  };
  client.on('error', () => void release());
  await client.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const { rows } = await client.query<{ id: string }>('SELECT pg_export_snapshot() AS id');
    timer = setTimeout(() => void release(), holdMs);
    timer.unref();
    return { id: rows[0]!.id, release, released };
  } catch (err) {
    await release();
    throw err;
  }
}

export interface DumpSchemaOptions {
  databaseUrl: string;
  /** The schema to dump (the context's own). */
  schema: string;
  /** The context's name, recorded in its `context` line. */
  context: string;
  /** An exported snapshot to import; without one the dump takes a snapshot of its own. */
  snapshotId?: string;
  /** Rows per FETCH and per yielded chunk at most. Default 500. */
  batchRows?: number;
  /** Text per yielded chunk at most (a chunk holds at least one line). Default 1 MiB. */
  batchBytes?: number;
}

interface TableInfo {
  oid: number;
  name: string;
}

/** Orders tables so that a table comes after every table it references (cycles: by name). */
export function foreignKeyOrder(tables: readonly string[], references: readonly { from: string; to: string }[]): string[] {
  const pending = new Map(tables.map((t) => [t, new Set<string>()]));
  for (const { from, to } of references) if (from !== to && pending.has(from) && pending.has(to)) pending.get(from)!.add(to);
  const order: string[] = [];
  while (pending.size > 0) {
    const ready = [...pending.keys()].filter((t) => [...pending.get(t)!].every((d) => !pending.has(d))).sort();
    const next = ready.length > 0 ? ready : [[...pending.keys()].sort()[0]!];
    for (const t of next) {
      order.push(t);
      pending.delete(t);
    }
  }
  return order;
}

/**
 * The lines of one context's part of a snapshot file (`context`, then each table and its rows,
 * the sequences, `end-context`), read in one `REPEATABLE READ, READ ONLY` transaction that
 * imports `snapshotId` when given. Yields chunks of lines, the first (the `context` line) as soon
 * as the snapshot is imported; stopping the iteration early ends the transaction.
 */
export async function* dumpSchema(opts: DumpSchemaOptions): AsyncGenerator<string[]> {
  if (!SCHEMA_RE.test(opts.schema)) throw new Error(`invalid schema name: ${opts.schema}`);
  if (opts.snapshotId !== undefined && opts.snapshotId !== '' && !isSnapshotId(opts.snapshotId)) {
    throw new Error(`invalid snapshot id: ${JSON.stringify(opts.snapshotId)}`);
  }
  const batchRows = opts.batchRows ?? 500;
  const batchBytes = opts.batchBytes ?? 1 << 20;
  const client = new Client({ connectionString: opts.databaseUrl, application_name: `ziti-snapshot-dump:${opts.schema}` });
  client.on('error', () => undefined);
  await client.connect();
  let open = false;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    open = true;
    // Must be the transaction's first statement; the id's syntax was checked above.
    if (opts.snapshotId) await client.query(`SET TRANSACTION SNAPSHOT '${opts.snapshotId}'`);
    const schema = opts.schema;
    const migrations = (
      await client.query<{ name: string }>(
        `SELECT migration_name AS name FROM ${quoteIdent(schema)}."_prisma_migrations"
         WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name`,
      ).catch((err: { code?: string }) => {
        if (err.code === '42P01') return { rows: [] as { name: string }[] };
        throw err;
      })
    ).rows.map((r) => r.name);
    const tables = (
      await client.query<TableInfo>(
        `SELECT c.oid::int AS oid, c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relname <> '_prisma_migrations'`,
        [schema],
      )
    ).rows;
    const references = (
      await client.query<{ from: string; to: string }>(
        `SELECT f.relname AS "from", t.relname AS "to" FROM pg_constraint k
         JOIN pg_class f ON f.oid = k.conrelid JOIN pg_class t ON t.oid = k.confrelid
         JOIN pg_namespace n ON n.oid = f.relnamespace
         WHERE k.contype = 'f' AND n.nspname = $1`,
        [schema],
      )
    ).rows;
    const byName = new Map(tables.map((t) => [t.name, t]));
    const ordered = foreignKeyOrder([...byName.keys()], references);

    let chunk: string[] = [];
    let chunkBytes = 0;
    let total = 0;
    const push = (line: string) => {
      chunk.push(line);
      chunkBytes += line.length;
    };
    const full = () => chunk.length >= batchRows || chunkBytes >= batchBytes;
    const take = () => {
      const out = chunk;
      chunk = [];
      chunkBytes = 0;
      return out;
    };

    push(controlLine('context', { name: opts.context, schema, migrations }));
    // At once: the caller learns that the snapshot is imported (the exporter may end now).
    yield take();
    for (const name of ordered) {
      const table = byName.get(name)!;
      const columns = (
        await client.query<{ name: string }>(
          `SELECT attname AS name FROM pg_attribute WHERE attrelid = $1 AND attnum > 0 AND NOT attisdropped AND attgenerated = '' ORDER BY attnum`,
          [table.oid],
        )
      ).rows.map((r) => r.name);
      push(controlLine('table', { name, columns }));
      if (columns.length === 0) continue;
      const select = `SELECT ${columns.map(quoteIdent).join(', ')} FROM ${quoteIdent(schema)}.${quoteIdent(name)}`;
      await client.query(`DECLARE ziti_snapshot_rows NO SCROLL CURSOR FOR SELECT to_json(r)::text AS j FROM (${select}) r`);
      for (;;) {
        const { rows } = await client.query<{ j: string }>(`FETCH ${batchRows} FROM ziti_snapshot_rows`);
        for (const r of rows) {
          push(r.j);
          total++;
          if (full()) yield take();
        }
        if (rows.length < batchRows) break;
      }
      await client.query('CLOSE ziti_snapshot_rows');
    }
    const sequences = (
      await client.query<{ name: string }>(
        `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relkind = 'S' ORDER BY c.relname`,
        [schema],
      )
    ).rows;
    for (const { name } of sequences) {
      const { rows } = await client.query<{ last_value: string; is_called: boolean }>(
        `SELECT last_value::text AS last_value, is_called FROM ${quoteIdent(schema)}.${quoteIdent(name)}`,
      );
      push(controlLine('sequence', { name, lastValue: rows[0]!.last_value, isCalled: rows[0]!.is_called }));
    }
    push(controlLine('end-context', { name: opts.context, rows: total }));
    yield take();
  } finally {
    if (open) await client.query('ROLLBACK').catch(() => undefined);
    await client.end().catch(() => undefined);
  }
}

/**
 * The number of rows of each entity type in one statement (one snapshot): `counts` maps an entity
 * type name to a table or a parenthesised subquery of the pool's schema.
 */
export async function countEntities(
  pool: { query<R>(text: string): Promise<{ rows: R[] }> },
  counts: Readonly<Record<string, string>>,
): Promise<Record<string, number>> {
  const entries = Object.entries(counts);
  if (entries.length === 0) return {};
  const fields = entries.map(([name, from]) => `'${name.replace(/'/g, "''")}', (SELECT count(*) FROM ${from} AS e)`);
  const { rows } = await pool.query<{ counts: Record<string, number | string> }>(`SELECT json_build_object(${fields.join(', ')}) AS counts`);
  return Object.fromEntries(Object.entries(rows[0]!.counts).map(([k, v]) => [k, Number(v)]));
}

export interface SchemaMaintenanceOptions {
  databaseUrl: string;
  /** The context's schema and name. */
  schema: string;
  context: string;
  /** A pool whose connections see the schema (`createSchemaPool`), for the counts. */
  pool: { query<R>(text: string): Promise<{ rows: R[] }> };
  /** Entity type name (OpenZiti's) → the table or subquery its management list counts. */
  counts: Readonly<Record<string, string>>;
}

/**
 * The SQL side of a context's MaintenanceService (`maintenanceService` of `@ziti/service-kit`):
 * its entity counts, an exported snapshot, and the dump of its schema.
 */
export function schemaMaintenance(opts: SchemaMaintenanceOptions) {
  return {
    countEntities: () => countEntities(opts.pool, opts.counts),
    holdSnapshot: (holdMs: number) => exportSnapshot(opts.databaseUrl, holdMs),
    dumpSchema: (snapshotId: string) => dumpSchema({ databaseUrl: opts.databaseUrl, schema: opts.schema, context: opts.context, snapshotId: snapshotId || undefined }),
  };
}
