import { randomUUID } from 'node:crypto';
import { dependencies, describeFailure, unavailableDependency } from '@ziti/errors';
import { acceptRequestId, currentRequestId } from '@ziti/log';
import { outboxBacklog, outboxPublished, outboxPublishLag } from '@ziti/metrics';
import { assertPublishable, assertSource, assertType, defaultLog, type Logger } from './subjects.js';
import type { ChangeEvent, EventBus } from './types.js';

/** Structural subset of pg.Pool so this package needs no pg dependency. */
export interface SqlPool {
  /** A text with params, or a named prepared statement (`{ name, text, values }`, node-postgres's query config). */
  query(text: string | { name: string; text: string; values: unknown[] }, params?: unknown[]): Promise<{ rows: any[]; rowCount: number | null }>;
  connect(): Promise<{ query: SqlPool['query']; release(err?: unknown): void }>;
}

/** Anything that runs a query: a pool, a checked-out client inside a transaction. */
export type SqlQueryable = Pick<SqlPool, 'query'>;

/** The row shape services insert into the outbox, in the same transaction as their change. */
export interface OutboxRow {
  /** uuid, the event id */
  id: string;
  type: string;
  source: string;
  data: unknown;
  occurredAt: Date;
  /** The request that caused the change, if any. */
  requestId?: string | null;
}

/**
 * DDL of the outbox table, for every service's first migration (its own schema, picked by the
 * connection's search_path):
 * ```sql
 * CREATE TABLE "outbox_events" ("id" UUID PRIMARY KEY, "type" TEXT NOT NULL, "source" TEXT NOT NULL, "data" JSONB NOT NULL,
 *   "occurred_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(), "published_at" TIMESTAMPTZ(3), "request_id" TEXT);
 * CREATE INDEX "outbox_events_unpublished_idx" ON "outbox_events" ("occurred_at") WHERE "published_at" IS NULL;
 * ```
 * Services on Prisma also declare the table in schema.prisma so a later diff does not drop it:
 * `model OutboxEvent { id String @id @db.Uuid  type String  source String  data Json
 *   occurredAt DateTime @default(now()) @map("occurred_at") @db.Timestamptz(3)
 *   publishedAt DateTime? @map("published_at") @db.Timestamptz(3)  requestId String? @map("request_id")
 *   @@map("outbox_events") }`
 * (the partial index stays in the SQL migration).
 */
export const OUTBOX_TABLE_SQL = `CREATE TABLE IF NOT EXISTS "outbox_events" ("id" UUID PRIMARY KEY, "type" TEXT NOT NULL, "source" TEXT NOT NULL, "data" JSONB NOT NULL,
  "occurred_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(), "published_at" TIMESTAMPTZ(3), "request_id" TEXT);
ALTER TABLE "outbox_events" ADD COLUMN IF NOT EXISTS "request_id" TEXT;
CREATE INDEX IF NOT EXISTS "outbox_events_unpublished_idx" ON "outbox_events" ("occurred_at") WHERE "published_at" IS NULL;
`;

let lastOccurredMs = 0;

/**
 * A new event: id = random UUID, occurredAt = now (ISO 8601, ms, UTC). Source and type are
 * checked here, so a bad name fails at the writer, not in the relay.
 *
 * `occurredAt` is strictly increasing within a process (bumped by 1 ms when two events fall in
 * the same millisecond), so the relay, which publishes in `occurred_at` order, keeps the order
 * in which one process created its events. Made while a request is served, the event carries that
 * request's id.
 * Example: `newChangeEvent('identity-auth', 'identity.deleted', { identityId: 'a1b2c3d4e' })`.
 */
export function newChangeEvent<T>(source: string, type: string, data: T): ChangeEvent<T> {
  assertSource(source, false);
  assertType(type, false);
  lastOccurredMs = Math.max(Date.now(), lastOccurredMs + 1);
  const event: ChangeEvent<T> = { id: randomUUID(), type, source, occurredAt: new Date(lastOccurredMs).toISOString(), data };
  const requestId = currentRequestId();
  if (requestId !== undefined) event.requestId = requestId;
  return event;
}

/**
 * The parameterised INSERT of events into the outbox, for any SQL runner (e.g. Prisma's
 * `tx.$executeRawUnsafe(text, ...values)` inside the service's transaction).
 */
export function outboxInsert(events: ChangeEvent<unknown>[], table = 'outbox_events'): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const tuples = events.map((e) => {
    const n = values.length;
    values.push(e.id, e.type, e.source, JSON.stringify(e.data ?? null), e.occurredAt, e.requestId ?? null);
    return `($${n + 1}::uuid, $${n + 2}, $${n + 3}, $${n + 4}::jsonb, $${n + 5}::timestamptz, $${n + 6})`;
  });
  const text = `INSERT INTO ${quoteTable(table)} ("id", "type", "source", "data", "occurred_at", "request_id") VALUES ${tuples.join(', ')}`;
  return { text, values };
}

/** Inserts events into the outbox through `db`: pass the client of the service's open transaction. */
export async function writeOutboxEvents(db: SqlQueryable, events: ChangeEvent<unknown>[], table?: string): Promise<void> {
  if (events.length === 0) return;
  const { text, values } = outboxInsert(events, table);
  await db.query(text, values);
}

/**
 * Runs `body` in one transaction whose events go into the outbox and, once it has committed, onto
 * the bus through `relay.publishOnCommit`. `transaction` opens the transaction and commits it when
 * its callback resolves (e.g. `(cb) => prisma.$transaction(cb, opts)`); `execute` runs a statement
 * inside it (e.g. `(tx, text, values) => tx.$executeRawUnsafe(text, ...values)`). `body` gets the
 * transaction and `emit`, which inserts events into the outbox; they are handed to the relay
 * after `body` and before the commit, so the relay's flushes leave them alone.
 */
export async function runWithOutbox<Tx, T>(
  relay: Pick<OutboxRelay, 'publishOnCommit'>,
  transaction: (callback: (tx: Tx) => Promise<T>) => Promise<T>,
  execute: (tx: Tx, text: string, values: unknown[]) => Promise<unknown>,
  body: (tx: Tx, emit: (events: ChangeEvent<unknown>[]) => Promise<void>) => Promise<T>,
): Promise<T> {
  const emitted: ChangeEvent<unknown>[] = [];
  let settle!: { resolve(): void; reject(err: unknown): void };
  const committed = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  committed.catch(() => undefined);
  try {
    const result = await transaction(async (tx) => {
      const value = await body(tx, async (events) => {
        if (events.length === 0) return;
        const { text, values } = outboxInsert(events);
        await execute(tx, text, values);
        emitted.push(...events);
      });
      // Still uncommitted: the relay holds these rows back from its flushes from now on.
      if (emitted.length > 0) void relay.publishOnCommit(emitted, committed);
      return value;
    });
    settle.resolve();
    return result;
  } catch (err) {
    settle.reject(err);
    throw err;
  }
}

/** What `runPrismaWithOutbox` uses of a Prisma transaction client. */
export interface PrismaOutboxTx {
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
}

/** What `runPrismaWithOutbox` uses of a Prisma client: interactive transactions. */
export interface PrismaOutboxClient<Tx extends PrismaOutboxTx> {
  $transaction<T>(fn: (tx: Tx) => Promise<T>, options: { timeout: number; maxWait: number }): Promise<T>;
}

/**
 * `runWithOutbox` on a Prisma client: an interactive transaction (15 s timeout, 10 s to get a
 * connection) whose `body` also gets `lock(name)`, a transaction-scoped advisory lock on
 * `<lockScope>:<name>` (serialises writers of one replica set that must not interleave).
 */
export function runPrismaWithOutbox<Tx extends PrismaOutboxTx, T>(
  relay: Pick<OutboxRelay, 'publishOnCommit'>,
  prisma: PrismaOutboxClient<Tx>,
  lockScope: string,
  body: (tx: Tx, emit: (events: ChangeEvent<unknown>[]) => Promise<void>, lock: (name: string) => Promise<void>) => Promise<T>,
): Promise<T> {
  return runWithOutbox(
    relay,
    (callback: (tx: Tx) => Promise<T>) => prisma.$transaction(callback, { timeout: 15_000, maxWait: 10_000 }),
    (tx, text, values) => tx.$executeRawUnsafe(text, ...values),
    (tx, emit) =>
      body(tx, emit, async (name) => {
        await tx.$executeRawUnsafe('SELECT pg_advisory_xact_lock(hashtext($1))', `${lockScope}:${name}`);
      }),
  );
}

export interface OutboxRelay {
  /** Flush now (call after a commit that wrote events). Bursts of calls coalesce. */
  notify(): void;
  /**
   * Publishes `events` as soon as `commit` resolves (after the events of earlier commits), instead
   * of leaving them for a flush to find; but while older events of the outbox are unpublished (a
   * failed publish, the bus away, rows found by a flush) they are left to the flushes, which
   * publish the backlog in `occurred_at` order.
   * `commit` is the write that inserted exactly these events into the outbox; it must settle only
   * once its transaction has committed (or failed). Call this before the write can commit (in the
   * same turn as starting it, or from inside its transaction): from then on, flushes of this relay
   * skip these rows. Once `commit` resolves the events are published in order, without holding a
   * transaction open, and marked published by a later statement shared with others (every
   * `markDelayMs`). If `commit` rejects they are forgotten; if a publish fails, the rest of them
   * are left to the next flush. Returns `commit` (the publish is not awaited).
   */
  publishOnCommit<T>(events: ChangeEvent<unknown>[], commit: Promise<T>): Promise<T>;
  /**
   * Flushes and resolves once a flush that started after this call has ended, and once every
   * publish of `publishOnCommit` started before it has ended and been marked (errors are logged,
   * not thrown). For tests and for callers that want their events on the bus first.
   */
  flush(): Promise<void>;
  /** Stops polling; resolves once an in-flight flush, publish or mark has ended. */
  stop(): Promise<void>;
}

export interface OutboxRelayOptions {
  pool: SqlPool;
  bus: EventBus;
  /** Default 'outbox_events', unqualified: the pool's search_path selects the service schema. */
  table?: string;
  /** Default 500. */
  pollIntervalMs?: number;
  /** Rows claimed per transaction. Default 100. */
  batchSize?: number;
  /** How long events published by `publishOnCommit` wait to be marked, so that one statement marks many. Default 100 ms. */
  markDelayMs?: number;
  /** Published rows older than this are deleted (checked every few minutes). Default 1 h. */
  retainPublishedMs?: number;
  log?: (msg: string, err?: unknown) => void;
}

const CLEANUP_EVERY_MS = 5 * 60_000;

/**
 * Publishes committed outbox rows on the bus. Each flush claims up to `batchSize` unpublished
 * rows, oldest first, with `FOR UPDATE SKIP LOCKED` in a transaction (so relays of several
 * replicas share the table without publishing a row twice), publishes them in order, sets
 * `published_at`, commits, and repeats while batches are full. A crash between publish and
 * commit re-publishes the same event id, which the bus drops as a duplicate.
 *
 * Failures never stop the relay: a failed publish marks the rows before it, logs, and the rest
 * is retried on the next tick. A row that is not a valid event (bad source or type) is logged
 * and marked published so it cannot block the others. Ordering holds within one relay; with
 * several relays running, events of different batches may interleave, so consumers must not
 * depend on a global order (only on idempotency by event id).
 *
 * A writer that knows its events can hand them over with `publishOnCommit`: they are published
 * right after its commit (no claim transaction, no round trip before the publish) and marked in
 * batches; this relay's flushes skip them meanwhile. Should the process stop between the commit
 * and the mark, a later flush (of any replica) publishes them again, and the bus drops the
 * duplicate by event id, as after a crash between publish and commit above.
 *
 * Commit order holds across failures: publishes after commit run one at a time in the order the
 * commits resolved, never while a flush runs, and only while the outbox has no backlog (none at
 * start is assumed until a flush finds the table empty). Otherwise the events are released to the
 * flushes, which run until a claim finds nothing. A bus that reports its connection
 * (`onConnectionChange`) is not published to while it is away: the events are held in the
 * outbox (counted for the `nats` outage line of `dependencies`) and flushed the moment it is back.
 * Database outages are reported to `dependencies` too, not logged per failed tick.
 */
export function startOutboxRelay(opts: OutboxRelayOptions): OutboxRelay {
  const { pool, bus } = opts;
  const table = quoteTable(opts.table ?? 'outbox_events');
  const pollIntervalMs = opts.pollIntervalMs ?? 500;
  const batchSize = opts.batchSize ?? 100;
  const retainMs = opts.retainPublishedMs ?? 3600_000;
  const log: Logger = opts.log ?? defaultLog;

  let stopped = false;
  let inFlight: Promise<void> | null = null;
  let rerun = false;
  let notifyQueued = false;
  let timer: NodeJS.Timeout | undefined;
  let started = 0;
  let lastCleanup = 0;
  const waiters: { run: number; resolve: () => void }[] = [];

  const markDelayMs = opts.markDelayMs ?? 100;
  // Ids handed over by publishOnCommit and not yet marked: flushes leave these rows alone.
  const held = new Set<string>();
  // Published by publishOnCommit, waiting for the shared mark statement.
  let toMark: string[] = [];
  let markTimer: NodeJS.Timeout | undefined;
  let marking: Promise<void> | null = null;
  const publishing = new Set<Promise<void>>();
  // Publishes after commit, one at a time, in the order the commits resolved.
  let queue: Promise<void> = Promise.resolve();
  // Unpublished rows may be in the table (until a flush finds it empty): new events go behind them.
  let backlog = true;
  // The bus said it lost its server: nothing is published until it says it is back.
  let busDown = false;
  const unwatch = bus.onConnectionChange?.((connected) => {
    busDown = !connected;
    if (connected) trigger();
  });

  /**
   * Logs a failure, or tells `dependencies` of the outage it shows (a retried background step is
   * not counted as a failed operation: the events it carries are what is held back).
   */
  function report(message: string, err: unknown): void {
    const dependency = unavailableDependency(err);
    if (dependency) dependencies.lost(dependency, describeFailure(err));
    else log(message, err);
  }

  const claimSql =
    `SELECT "id", "type", "source", "data", "occurred_at", "request_id" FROM ${table} WHERE "published_at" IS NULL ` +
    `AND NOT ("id" = ANY($2::uuid[])) ORDER BY "occurred_at", "id" LIMIT $1 FOR UPDATE SKIP LOCKED`;
  const markSql = `UPDATE ${table} SET "published_at" = now() WHERE "id" = ANY($1::uuid[])`;
  // Prepared once per connection (the relay runs them at the rate of the writes); named per table.
  const claimName = `outbox_claim_${statementSuffix(table)}`;
  const markName = `outbox_mark_${statementSuffix(table)}`;
  const cleanupSql = `DELETE FROM ${table} WHERE "published_at" < now() - make_interval(secs => $1)`;

  // The context whose outbox this is (the source of its events), known from the first event seen.
  let context: string | undefined;
  function published(event: ChangeEvent): void {
    context = event.source;
    outboxPublished.inc({ context });
    const at = Date.parse(event.occurredAt);
    if (Number.isFinite(at)) outboxPublishLag.observe({ context }, Math.max(0, Date.now() - at) / 1000);
  }

  async function flushBatch(): Promise<number> {
    const client = await pool.connect();
    let open = false;
    let broken: unknown;
    try {
      await client.query('BEGIN');
      open = true;
      const { rows } = await client.query({ name: claimName, text: claimSql, values: [batchSize, [...held]] });
      if (rows.length > 0) context = rows[0].source;
      // What this flush found unpublished (at most a batch): 0 when the relay keeps up.
      if (context !== undefined) outboxBacklog.set({ context }, rows.length);
      const done: string[] = [];
      let failure: unknown;
      for (const row of rows) {
        // Handed over after this claim's list was built, and committed before the claim ran.
        if (held.has(row.id)) continue;
        const event = rowToEvent(row);
        if (!publishable(event)) {
          done.push(row.id);
          continue;
        }
        try {
          await bus.publish(event);
          published(event);
          done.push(row.id);
        } catch (err) {
          failure = err;
          break;
        }
      }
      if (done.length > 0) await client.query({ name: markName, text: markSql, values: [done] });
      await client.query('COMMIT');
      open = false;
      if (failure) throw failure;
      return rows.length;
    } catch (err) {
      if (open) await client.query('ROLLBACK').catch((e: unknown) => (broken = e));
      throw err;
    } finally {
      client.release(broken);
    }
  }

  async function runOnce(): Promise<void> {
    if (busDown) return;
    // A publish after commit under way (one started before the bus went away, say) ends first.
    await queue;
    try {
      // Until a claim finds nothing: events released meanwhile are newer than those claimed.
      while (!stopped && !busDown) {
        if ((await flushBatch()) === 0) {
          backlog = false;
          break;
        }
        backlog = true;
      }
    } catch (err) {
      backlog = true;
      report('outbox relay: flush failed, retrying on the next tick', err);
    }
    if (stopped || Date.now() - lastCleanup < CLEANUP_EVERY_MS) return;
    lastCleanup = Date.now();
    try {
      await pool.query(cleanupSql, [retainMs / 1000]);
    } catch (err) {
      report('outbox relay: deleting old published rows failed', err);
    }
  }

  /** False (and logged) for an event the bus would refuse: it is marked published so it blocks nothing. */
  function publishable(event: ChangeEvent): boolean {
    try {
      assertPublishable(event);
      return true;
    } catch (err) {
      log(`outbox: dropping invalid event ${event.id} (${event.source}/${event.type})`, err);
      return false;
    }
  }

  /**
   * Publishes handed-over events in order; those not published are released to the flushes. Only
   * when nothing older can be waiting: otherwise all of them are released.
   */
  async function publishHeld(events: ChangeEvent<unknown>[]): Promise<void> {
    let i = 0;
    if (busDown) dependencies.failed('nats', 'event bus disconnected', events.length);
    try {
      for (; i < events.length && !stopped && !backlog && !busDown && !inFlight; i++) {
        const event = events[i] as ChangeEvent;
        if (publishable(event)) {
          await bus.publish(event);
          published(event);
        }
      }
    } catch (err) {
      backlog = true;
      report('outbox relay: publishing after commit failed, leaving the rest to the next flush', err);
    }
    for (let j = 0; j < events.length; j++) {
      if (j < i) toMark.push(events[j]!.id);
      else held.delete(events[j]!.id);
    }
    if (i < events.length) trigger();
    scheduleMark();
  }

  function scheduleMark(): void {
    if (stopped || toMark.length === 0 || markTimer !== undefined || marking) return;
    markTimer = setTimeout(() => void markNow(), markDelayMs);
    markTimer.unref();
  }

  /** One statement marks every event published after commit since the last one. */
  function markNow(): Promise<void> {
    clearTimeout(markTimer);
    markTimer = undefined;
    if (marking) return marking;
    if (toMark.length === 0) return Promise.resolve();
    const ids = toMark;
    toMark = [];
    marking = pool
      .query({ name: markName, text: markSql, values: [ids] })
      .then(
        () => {
          for (const id of ids) held.delete(id);
        },
        (err: unknown) => {
          report('outbox relay: marking published events failed, retrying', err);
          toMark = ids.concat(toMark);
        },
      )
      .finally(() => {
        marking = null;
        scheduleMark();
      });
    return marking;
  }

  /** Waits for the publishes after commit under way, then marks what they published. */
  async function settleMarks(): Promise<void> {
    await Promise.all([...publishing]);
    await marking;
    await markNow();
  }

  function trigger(): void {
    if (stopped) return;
    if (inFlight) {
      rerun = true;
      return;
    }
    clearTimeout(timer);
    const run = ++started;
    inFlight = runOnce().finally(() => {
      inFlight = null;
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (waiters[i].run <= run) waiters.splice(i, 1)[0].resolve();
      }
      if (stopped) return;
      if (rerun) {
        rerun = false;
        trigger();
      } else {
        timer = setTimeout(trigger, pollIntervalMs);
        timer.unref();
      }
    });
  }

  trigger();

  return {
    notify() {
      if (stopped || notifyQueued) return;
      notifyQueued = true;
      setImmediate(() => {
        notifyQueued = false;
        trigger();
      });
    },
    publishOnCommit(events, commit) {
      if (stopped || events.length === 0) return commit;
      for (const e of events) held.add(e.id);
      const forget = () => {
        for (const e of events) held.delete(e.id);
      };
      const published = commit.then(() => {
        const turn = queue.then(() => publishHeld(events));
        queue = turn;
        return turn;
      }, forget);
      publishing.add(published);
      void published.finally(() => publishing.delete(published));
      return commit;
    },
    async flush() {
      if (stopped) return;
      await settleMarks();
      const done = new Promise<void>((resolve) => waiters.push({ run: started + 1, resolve }));
      trigger();
      await done;
    },
    async stop() {
      stopped = true;
      unwatch?.();
      clearTimeout(timer);
      await inFlight;
      await settleMarks();
      for (const w of waiters.splice(0)) w.resolve();
    },
  };
}

/** A statement-name-safe form of a (quoted) table name. */
function statementSuffix(table: string): string {
  return table.replace(/[^A-Za-z0-9_]/g, '_');
}

function rowToEvent(row: { id: string; type: string; source: string; data: unknown; occurred_at: unknown; request_id?: string | null }): ChangeEvent {
  const at = row.occurred_at instanceof Date ? row.occurred_at : new Date(String(row.occurred_at));
  const event: ChangeEvent = {
    id: row.id,
    type: row.type,
    source: row.source,
    occurredAt: at.toISOString(),
    data: row.data as Record<string, unknown>,
  };
  const requestId = acceptRequestId(row.request_id);
  if (requestId !== undefined) event.requestId = requestId;
  return event;
}

/** `name` or `schema.name`, each part a plain SQL identifier, double-quoted. */
function quoteTable(table: string): string {
  const parts = table.split('.');
  if (parts.length > 2 || parts.some((p) => !/^[A-Za-z_][A-Za-z0-9_$]*$/.test(p))) {
    throw new Error(`invalid outbox table name ${JSON.stringify(table)}`);
  }
  return parts.map((p) => `"${p}"`).join('.');
}
