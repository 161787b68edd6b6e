import { Client } from 'pg';

/**
 * Row counts of every table in every schema of the controller's (fresh, per-file) database, read
 * in one statement, to show that a refused request wrote nothing.
 */

export type RowCounts = Map<string, number>;

/**
 * Tables whose row count may change while a refused request is answered, with the reason. The
 * suite settles after each successful write (outbox published, consumers idle), so effects of
 * earlier successes do not land in a later request's window; what remains are changes that a
 * refused request itself makes on purpose.
 */
export const ROW_COUNT_EXCEPTIONS: ReadonlyMap<string, string> = new Map([
  // (none: a refused request must leave every table's row count as it was; see the report for the
  // tables considered and why none qualifies)
]);

export class RowCounter {
  private sql = '';
  private tables: string[] = [];

  private constructor(private readonly client: Client) {}

  static async connect(databaseUrl: string): Promise<RowCounter> {
    const client = new Client({ connectionString: databaseUrl });
    // The harness drops the database at the end; a connection it terminates must not throw.
    client.on('error', () => undefined);
    await client.connect();
    const c = new RowCounter(client);
    await c.refreshTables();
    return c;
  }

  /** Re-reads the table list (information_schema); tables are created by the migrations at start. */
  async refreshTables(): Promise<void> {
    const { rows } = await this.client.query<{ s: string; t: string }>(
      `SELECT table_schema AS s, table_name AS t FROM information_schema.tables
        WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2`,
    );
    this.tables = rows.map((r) => `${r.s}.${r.t}`);
    this.sql = rows.map((r) => `SELECT '${r.s}.${r.t}' AS t, count(*)::bigint AS n FROM "${r.s}"."${r.t}"`).join(' UNION ALL ');
  }

  get tableNames(): readonly string[] {
    return this.tables;
  }

  async counts(): Promise<RowCounts> {
    const { rows } = await this.client.query<{ t: string; n: string }>(this.sql);
    return new Map(rows.map((r) => [r.t, Number(r.n)]));
  }

  /** Events not yet published by any context's outbox relay. */
  async unpublishedEvents(): Promise<number> {
    const outboxes = this.tables.filter((t) => t.endsWith('.outbox_events'));
    if (!outboxes.length) return 0;
    const sql = outboxes.map((t) => `SELECT count(*)::int AS n FROM ${t.split('.').map((x) => `"${x}"`).join('.')} WHERE published_at IS NULL`).join(' UNION ALL ');
    const { rows } = await this.client.query<{ n: number }>(sql);
    return rows.reduce((a, r) => a + r.n, 0);
  }

  /**
   * Waits until the effects of the last successful write are in: every outbox event published,
   * then the row counts unchanged over two reads `quietMs` apart (consumers done). At most `maxMs`.
   */
  async settle(quietMs = 25, maxMs = 5000): Promise<RowCounts> {
    const until = Date.now() + maxMs;
    while ((await this.unpublishedEvents()) > 0 && Date.now() < until) await sleep(10);
    let prev = await this.counts();
    while (Date.now() < until) {
      await sleep(quietMs);
      const next = await this.counts();
      if (diff(prev, next).length === 0) return next;
      prev = next;
    }
    return prev;
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}

/** Tables whose count differs, as `schema.table before→after`. */
export function diff(before: RowCounts, after: RowCounts, except: ReadonlyMap<string, string> = new Map()): string[] {
  const out: string[] = [];
  for (const [t, n] of after) {
    const b = before.get(t) ?? 0;
    if (b !== n && !except.has(t)) out.push(`${t} ${b}→${n}`);
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
