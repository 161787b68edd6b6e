import { createReadStream, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { Client } from 'pg';
import { migrate } from './migrate.js';
import { SNAPSHOT_FORMAT, SNAPSHOT_VERSION, quoteIdent } from './snapshot.js';

/** A context this build knows: where its schema's migrations are. */
export interface RestoreContext {
  name: string;
  schema: string;
  migrationsDir: string;
}

export interface RestoreOptions {
  databaseUrl: string;
  /** A snapshot file (gzip'd JSON lines, see `snapshot.ts`). */
  file: string;
  /** Every context of this build. */
  contexts: readonly RestoreContext[];
  /** Drop the contexts' schemas first when they already hold data (else that is refused). */
  replace?: boolean;
  /** Rows per INSERT at most. Default 500. */
  batchRows?: number;
  log?: (line: string) => void;
}

export interface RestoredContext {
  name: string;
  schema: string;
  tables: number;
  rows: number;
}

/** A snapshot that cannot be restored here, or a database that may not be overwritten; nothing was changed. */
export class RestoreRefused extends Error {}

interface SnapshotContext {
  name: string;
  schema: string;
  migrations: string[];
}

type Line = { kind: 'row'; text: string } | { kind: string; value: Record<string, unknown> };

async function* readLines(file: string): AsyncGenerator<Line> {
  const input = createReadStream(file).pipe(createGunzip());
  const lines = createInterface({ input, crlfDelay: Infinity });
  let n = 0;
  for await (const text of lines) {
    n++;
    if (text === '') continue;
    if (text.startsWith('{')) {
      yield { kind: 'row', text };
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new RestoreRefused(`${file}: line ${n} is not JSON`);
    }
    if (!Array.isArray(parsed) || typeof parsed[0] !== 'string' || typeof parsed[1] !== 'object' || parsed[1] === null) {
      throw new RestoreRefused(`${file}: line ${n} is neither a row nor a control line`);
    }
    yield { kind: parsed[0], value: parsed[1] as Record<string, unknown> };
  }
}

/** The header and the contexts of a snapshot file, read through to its `end` line (a cut file is refused). */
export async function readSnapshotContexts(file: string): Promise<{ createdAt: string; contexts: SnapshotContext[] }> {
  let header: Record<string, unknown> | undefined;
  let ended = false;
  const contexts: SnapshotContext[] = [];
  try {
    for await (const line of readLines(file)) {
      if (!header) {
        if (line.kind !== 'snapshot' || !('value' in line) || line.value.format !== SNAPSHOT_FORMAT) {
          throw new RestoreRefused(`${file} is not a controller snapshot (no "${SNAPSHOT_FORMAT}" header)`);
        }
        if (line.value.version !== SNAPSHOT_VERSION) throw new RestoreRefused(`${file}: snapshot format version ${String(line.value.version)} is not supported`);
        header = line.value;
      } else if (line.kind === 'context' && 'value' in line) {
        const { name, schema, migrations } = line.value;
        if (typeof name !== 'string' || typeof schema !== 'string' || !Array.isArray(migrations)) throw new RestoreRefused(`${file}: a malformed context line`);
        contexts.push({ name, schema, migrations: migrations.map(String) });
      } else if (line.kind === 'end') {
        ended = true;
      }
    }
  } catch (err) {
    if (err instanceof RestoreRefused) throw err;
    throw new RestoreRefused(`${file} cannot be read: ${(err as Error).message}`);
  }
  if (!header) throw new RestoreRefused(`${file} is empty`);
  if (!ended) throw new RestoreRefused(`${file} is incomplete (no end line): the snapshot was cut off`);
  return { createdAt: String(header.createdAt), contexts };
}

/** The migration names a migrations folder holds, as `migrate` applies them. */
export function migrationNames(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, 'migration.sql')))
    .map((d) => d.name)
    .sort();
}

async function schemaState(client: Client, schema: string): Promise<{ exists: boolean; dataIn?: string; migrations: string[] }> {
  const exists = (await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).rowCount === 1;
  if (!exists) return { exists, migrations: [] };
  const tables = (
    await client.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY c.relname`,
      [schema],
    )
  ).rows.map((r) => r.name);
  let dataIn: string | undefined;
  let migrations: string[] = [];
  for (const t of tables) {
    if (t === '_prisma_migrations') {
      migrations = (await client.query<{ n: string }>(`SELECT migration_name AS n FROM ${quoteIdent(schema)}."_prisma_migrations" ORDER BY 1`)).rows.map((r) => r.n);
      continue;
    }
    const any = await client.query(`SELECT 1 FROM ${quoteIdent(schema)}.${quoteIdent(t)} LIMIT 1`);
    if (any.rowCount) dataIn ??= t;
  }
  return { exists, dataIn, migrations };
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Restores a snapshot into the database of `databaseUrl`:
 * 1. reads the file through (a cut file is refused) and checks that every context it holds is
 *    one of this build's with exactly the migrations the snapshot recorded;
 * 2. refuses a schema that already holds rows (or other migrations) unless `replace`, which drops it;
 * 3. creates each schema by running the context's migrations;
 * 4. in ONE transaction: empties the schemas' tables (rows the migrations seed), loads the rows
 *    in the file's order (foreign-key order) with `json_populate_recordset`, and sets every
 *    sequence to its recorded state. A failure leaves no row behind.
 */
export async function restoreSnapshot(opts: RestoreOptions): Promise<RestoredContext[]> {
  const log = opts.log ?? (() => undefined);
  const batchRows = opts.batchRows ?? 500;
  const { createdAt, contexts } = await readSnapshotContexts(opts.file);
  log(`snapshot of ${createdAt}: ${contexts.map((c) => c.name).join(', ')}`);
  const known = new Map(opts.contexts.map((c) => [c.name, c]));
  for (const c of contexts) {
    const here = known.get(c.name);
    if (!here) throw new RestoreRefused(`the snapshot holds context ${c.name}, which this controller does not have`);
    if (here.schema !== c.schema) throw new RestoreRefused(`context ${c.name}: the snapshot's schema is ${c.schema}, this controller's is ${here.schema}`);
    const names = migrationNames(here.migrationsDir);
    if (!sameList(names, c.migrations)) {
      const missing = c.migrations.filter((m) => !names.includes(m));
      const extra = names.filter((m) => !c.migrations.includes(m));
      throw new RestoreRefused(
        `context ${c.name}: the snapshot was taken with other migrations than this controller has` +
          `${missing.length ? `; only in the snapshot: ${missing.join(', ')}` : ''}${extra.length ? `; only in this controller: ${extra.join(', ')}` : ''}` +
          '. Restore it with the controller version that took it.',
      );
    }
  }
  for (const c of opts.contexts) if (!contexts.some((s) => s.name === c.name)) log(`the snapshot holds nothing of ${c.name}: its schema is created empty`);

  const client = new Client({ connectionString: opts.databaseUrl, application_name: 'ziti-snapshot-restore' });
  client.on('error', () => undefined);
  await client.connect();
  try {
    for (const c of opts.contexts) {
      const state = await schemaState(client, c.schema);
      if (!state.exists) continue;
      const expected = contexts.find((s) => s.name === c.name)?.migrations ?? migrationNames(c.migrationsDir);
      const foreign = state.migrations.filter((m) => !expected.includes(m));
      if (state.dataIn || foreign.length > 0) {
        if (!opts.replace) {
          throw new RestoreRefused(
            state.dataIn
              ? `schema ${c.schema} already holds data (table ${state.dataIn}); restore into an empty database, or replace it (--replace)`
              : `schema ${c.schema} has migrations the snapshot does not (${foreign.join(', ')}); replace it (--replace)`,
          );
        }
      }
      if (opts.replace) {
        await client.query(`DROP SCHEMA ${quoteIdent(c.schema)} CASCADE`);
        log(`dropped schema ${c.schema}`);
      }
    }
    for (const c of opts.contexts) await migrate({ databaseUrl: opts.databaseUrl, schema: c.schema, migrationsDir: c.migrationsDir, log });

    const restored: RestoredContext[] = [];
    await client.query('BEGIN');
    try {
      let current: RestoredContext | undefined;
      let table: { target: string; columns: string } | undefined;
      let batch: string[] = [];
      const flush = async () => {
        if (batch.length === 0 || !table) return;
        const rows = `[${batch.join(',')}]`;
        batch = [];
        await client.query(
          `INSERT INTO ${table.target} (${table.columns}) OVERRIDING SYSTEM VALUE
           SELECT ${table.columns} FROM json_populate_recordset(NULL::${table.target}, $1::json)`,
          [rows],
        );
      };
      for await (const line of readLines(opts.file)) {
        if (line.kind === 'row') {
          if (!current || !table) throw new RestoreRefused('a row outside of a table');
          batch.push((line as { text: string }).text);
          current.rows++;
          if (batch.length >= batchRows) await flush();
          continue;
        }
        await flush();
        const v = (line as { value: Record<string, unknown> }).value;
        if (line.kind === 'context') {
          const schema = String(v.schema);
          const tables = (
            await client.query<{ name: string }>(
              `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
               WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relname <> '_prisma_migrations'`,
              [schema],
            )
          ).rows.map((r) => `${quoteIdent(schema)}.${quoteIdent(r.name)}`);
          if (tables.length > 0) await client.query(`TRUNCATE ${tables.join(', ')}`);
          current = { name: String(v.name), schema, tables: 0, rows: 0 };
          table = undefined;
        } else if (line.kind === 'table') {
          if (!current) throw new RestoreRefused('a table outside of a context');
          const columns = (v.columns as unknown[]).map((c) => quoteIdent(String(c))).join(', ');
          table = { target: `${quoteIdent(current.schema)}.${quoteIdent(String(v.name))}`, columns };
          current.tables++;
        } else if (line.kind === 'sequence') {
          if (!current) throw new RestoreRefused('a sequence outside of a context');
          const seq = `${quoteIdent(current.schema)}.${quoteIdent(String(v.name))}`;
          await client.query('SELECT setval($1::regclass, $2::bigint, $3::boolean)', [seq, String(v.lastValue), v.isCalled === true]);
        } else if (line.kind === 'end-context') {
          if (!current) throw new RestoreRefused('an end-context line outside of a context');
          if (Number(v.rows) !== current.rows) throw new RestoreRefused(`context ${current.name}: ${current.rows} rows read, the snapshot says ${String(v.rows)}`);
          restored.push(current);
          log(`restored ${current.name}: ${current.rows} rows in ${current.tables} tables`);
          current = undefined;
          table = undefined;
        }
      }
      await flush();
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
    return restored;
  } finally {
    await client.end().catch(() => undefined);
  }
}
