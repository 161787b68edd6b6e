import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { connect, type NatsConnection } from 'nats';
import { createTestDatabase, inTransaction as transaction, testInfra, type TestDatabase } from '@ziti/test-kit';
import { createNatsBus } from './nats-bus.js';
import {
  newChangeEvent,
  OUTBOX_TABLE_SQL,
  type PrismaOutboxTx,
  runPrismaWithOutbox,
  runWithOutbox,
  startOutboxRelay,
  writeOutboxEvents,
  type OutboxRelay,
} from './outbox.js';
import type { ChangeEvent, EventBus } from './types.js';

const run = randomBytes(4).toString('hex');
const stream = `TEST_OUTBOX_${run}`;
const prefix = `test.outbox.${run}`;

let db: TestDatabase;
let pools: Pool[] = [];
let natsBus: EventBus;
let nc: NatsConnection;
let relays: OutboxRelay[] = [];
const logs: string[] = [];

/** Counts publish calls per event id, in front of the real bus. */
function countingBus(inner: EventBus, failFirst = 0) {
  const calls = new Map<string, number>();
  const order: string[] = [];
  let failures = failFirst;
  const bus: EventBus = {
    publish: async (e) => {
      if (failures > 0) {
        failures--;
        throw new Error('bus unavailable');
      }
      await inner.publish(e);
      calls.set(e.id, (calls.get(e.id) ?? 0) + 1);
      order.push(e.id);
    },
    subscribeDurable: (...a) => inner.subscribeDurable(...a),
    subscribeBroadcast: (...a) => inner.subscribeBroadcast(...a),
    publishRecord: (...a) => inner.publishRecord(...a),
    close: () => inner.close(),
  };
  return { bus, calls, order };
}

function pool(): Pool {
  const p = new Pool({ connectionString: db.url, max: 3, options: '-c search_path=svc' });
  // pool.end() resolves before its sockets close; the final DROP DATABASE … WITH (FORCE) may
  // then terminate them, which an idle client reports as an error event.
  p.on('error', () => undefined);
  pools.push(p);
  return p;
}

function relay(p: Pool, bus: EventBus, extra: { batchSize?: number; pollIntervalMs?: number; markDelayMs?: number } = {}): OutboxRelay {
  const r = startOutboxRelay({ pool: p, bus, pollIntervalMs: 50, log: (m) => logs.push(m), ...extra });
  relays.push(r);
  return r;
}

async function waitFor(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function inTransaction(p: Pool, fn: (q: Pick<Pool, 'query'>) => Promise<void>, commit = true): Promise<void> {
  const c = await p.connect();
  try {
    await c.query('BEGIN');
    await fn(c);
    await c.query(commit ? 'COMMIT' : 'ROLLBACK');
  } finally {
    c.release();
  }
}

async function unpublished(p: Pool): Promise<number> {
  const { rows } = await p.query('SELECT count(*)::int AS n FROM outbox_events WHERE published_at IS NULL');
  return rows[0].n;
}

beforeAll(async () => {
  const infra = await testInfra();
  db = await createTestDatabase(infra.databaseUrl, 'msg_outbox');
  const p = pool();
  await p.query('CREATE SCHEMA svc');
  await p.query(OUTBOX_TABLE_SQL);
  await p.query(OUTBOX_TABLE_SQL); // idempotent, as a re-run migration would be
  natsBus = await createNatsBus({ url: infra.natsUrl, stream, subjectPrefix: prefix, log: (m) => logs.push(m) });
  nc = await connect({ servers: infra.natsUrl });
});

afterEach(async () => {
  await Promise.all(relays.map((r) => r.stop()));
  relays = [];
  await pools[0].query('TRUNCATE outbox_events');
});

afterAll(async () => {
  await natsBus?.close();
  if (nc) {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.delete(stream).catch(() => undefined);
    await nc.close();
  }
  await Promise.all(pools.map((p) => p.end()));
  await db?.drop();
});

describe('outbox relay', () => {
  it('publishes rows of committed transactions exactly once, with two relays running', async () => {
    const events = Array.from({ length: 40 }, (_, i) => newChangeEvent('identity-auth', 'identity.updated', { i }));
    const delivered: ChangeEvent[] = [];
    await natsBus.subscribeDurable('outbox-test', 'identity-auth', ['identity.updated'], (e) => void delivered.push(e));
    const counting = countingBus(natsBus);
    const writer = pool();
    await inTransaction(writer, (q) => writeOutboxEvents(q, events.slice(0, 25)));
    await inTransaction(writer, (q) => writeOutboxEvents(q, events.slice(25)));
    const [r1, r2] = [relay(pool(), counting.bus, { batchSize: 4 }), relay(pool(), counting.bus, { batchSize: 4 })];
    r1.notify();
    r2.notify();
    await waitFor(async () => (await unpublished(writer)) === 0 && delivered.length >= 40, 'all published and delivered');
    expect([...counting.calls.keys()].sort()).toEqual(events.map((e) => e.id).sort());
    expect([...counting.calls.values()].every((n) => n === 1)).toBe(true);
    expect(delivered.map((e) => e.id).sort()).toEqual(events.map((e) => e.id).sort());
    expect(delivered.find((e) => e.id === events[7].id)).toEqual(events[7]);
  });

  it('publishes nothing from a transaction that is still open or rolled back', async () => {
    const counting = countingBus(natsBus);
    const r = relay(pool(), counting.bus);
    const writer = pool();
    const c = await writer.connect();
    try {
      await c.query('BEGIN');
      await writeOutboxEvents(c, [newChangeEvent('identity-auth', 'identity.created', { n: 1 })]);
      await r.flush();
      expect(counting.calls.size).toBe(0);
      await c.query('ROLLBACK');
    } finally {
      c.release();
    }
    await r.flush();
    expect(counting.calls.size).toBe(0);
    const { rows } = await writer.query('SELECT count(*)::int AS n FROM outbox_events');
    expect(rows[0].n).toBe(0);
  });

  it('keeps going after publish failures, in order, without losing or repeating rows', async () => {
    const counting = countingBus(natsBus, 3);
    const writer = pool();
    const events = Array.from({ length: 5 }, (_, i) => newChangeEvent('policy', 'service.updated', { i }));
    for (const e of events) await inTransaction(writer, (q) => writeOutboxEvents(q, [e]));
    relay(pool(), counting.bus, { pollIntervalMs: 10 });
    await waitFor(async () => (await unpublished(writer)) === 0, 'rows published after failures');
    expect(counting.order).toEqual(events.map((e) => e.id));
    expect(logs.some((l) => l.includes('flush failed'))).toBe(true);
  });

  it('marks an unpublishable row instead of letting it block the others', async () => {
    const counting = countingBus(natsBus);
    const writer = pool();
    const bad = { ...newChangeEvent('policy', 'x', {}), source: 'not.a.token' };
    const good = newChangeEvent('policy', 'service.created', {});
    await inTransaction(writer, (q) => writeOutboxEvents(q, [bad, good]));
    await relay(pool(), counting.bus).flush();
    expect([...counting.calls.keys()]).toEqual([good.id]);
    expect(await unpublished(writer)).toBe(0);
    expect(logs.some((l) => l.includes('dropping invalid event'))).toBe(true);
  });

  it('deletes published rows older than the retention', async () => {
    const writer = pool();
    const [old, recent, pending] = [newChangeEvent('s', 't', {}), newChangeEvent('s', 't', {}), newChangeEvent('s', 't', {})];
    await writeOutboxEvents(writer, [old, recent]);
    await writer.query(`UPDATE outbox_events SET published_at = now() - interval '2 hours' WHERE id = $1`, [old.id]);
    await writer.query(`UPDATE outbox_events SET published_at = now() - interval '10 minutes' WHERE id = $1`, [recent.id]);
    const counting = countingBus(natsBus, Number.MAX_SAFE_INTEGER); // nothing gets published
    await writeOutboxEvents(writer, [pending]);
    await relay(pool(), counting.bus).flush();
    const { rows } = await writer.query('SELECT id FROM outbox_events ORDER BY id');
    expect(rows.map((r) => r.id).sort()).toEqual([recent.id, pending.id].sort());
  });

  describe('publishOnCommit', () => {
    /** Counts the relay's mark statements on its pool. */
    function countingMarks(p: Pool): { marks: () => number } {
      let marks = 0;
      const query = p.query.bind(p) as (...args: unknown[]) => Promise<unknown>;
      (p as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args: unknown[]) => {
        const q = args[0] as { name?: string };
        if (typeof q === 'object' && q?.name?.startsWith('outbox_mark')) marks++;
        return query(...args);
      };
      return { marks: () => marks };
    }

    it('publishes handed-over events right after their commit, in order, and marks them with one statement', async () => {
      const counting = countingBus(natsBus);
      const relayPool = pool();
      const marks = countingMarks(relayPool);
      const r = relay(relayPool, counting.bus, { pollIntervalMs: 60_000, markDelayMs: 60_000 });
      // Until a flush found the outbox empty, handed-over events go behind whatever it may hold.
      await r.flush();
      const writer = pool();
      const first = Array.from({ length: 3 }, (_, i) => newChangeEvent('identity-auth', 'identity.updated', { i }));
      const second = [newChangeEvent('identity-auth', 'identity.updated', { i: 3 })];
      await r.publishOnCommit(first, inTransaction(writer, (q) => writeOutboxEvents(q, first)));
      // Each handover is published in its own order; two handovers' publishes may interleave, so
      // the second transaction starts once the first's events are out.
      await waitFor(() => counting.calls.size === 3, 'the first transaction published without a flush or a poll');
      await r.publishOnCommit(second, inTransaction(writer, (q) => writeOutboxEvents(q, second)));
      await waitFor(() => counting.calls.size === 4, 'publishes without a flush or a poll');
      expect(counting.order.slice(0, 3)).toEqual(first.map((e) => e.id));
      expect(await unpublished(writer)).toBe(4); // the mark waits for markDelayMs (or a flush)
      await r.flush();
      expect(await unpublished(writer)).toBe(0);
      expect(marks.marks()).toBe(1);
      expect([...counting.calls.values()].every((n) => n === 1)).toBe(true);
    });

    it('holds handed-over rows back from flushes until the writer has published them', async () => {
      const counting = countingBus(natsBus);
      const r = relay(pool(), counting.bus, { pollIntervalMs: 60_000, markDelayMs: 10 });
      const writer = pool();
      const held = [newChangeEvent('policy', 'service.updated', { n: 1 }), newChangeEvent('policy', 'service.updated', { n: 2 })];
      const other = newChangeEvent('policy', 'service.created', {});
      let commit!: () => void;
      const committed = new Promise<void>((resolve) => (commit = resolve));
      void r.publishOnCommit(held, committed);
      // The rows are committed, but the writer has not heard so yet; a flush runs meanwhile.
      await writeOutboxEvents(writer, held);
      await writeOutboxEvents(writer, [other]);
      r.notify();
      await waitFor(() => counting.calls.has(other.id), 'the flush to publish the other row');
      expect(held.some((e) => counting.calls.has(e.id))).toBe(false);
      expect(await unpublished(writer)).toBe(2);
      commit();
      await r.flush();
      expect(await unpublished(writer)).toBe(0);
      expect(held.map((e) => counting.calls.get(e.id))).toEqual([1, 1]);
    });

    it('publishes nothing of a write that failed, and holds nothing back', async () => {
      const counting = countingBus(natsBus);
      const r = relay(pool(), counting.bus, { pollIntervalMs: 60_000, markDelayMs: 10 });
      const writer = pool();
      const event = newChangeEvent('identity-auth', 'identity.created', { n: 1 });
      const failed = inTransaction(writer, (q) => writeOutboxEvents(q, [event]), false).then(() => {
        throw new Error('rolled back');
      });
      await expect(r.publishOnCommit([event], failed)).rejects.toThrow('rolled back');
      await r.flush();
      expect(counting.calls.size).toBe(0);
      // The same event written again by an ordinary commit is the flushes' to publish.
      await writeOutboxEvents(writer, [event]);
      await r.flush();
      expect(counting.calls.get(event.id)).toBe(1);
      expect(await unpublished(writer)).toBe(0);
    });

    it('publishes nothing after commit ahead of older events still unpublished: the backlog goes first, in commit order', async () => {
      // Two failures: the publish after commit, then the flush that publish failure starts.
      const counting = countingBus(natsBus, 2);
      logs.length = 0;
      const r = relay(pool(), counting.bus, { pollIntervalMs: 60_000, markDelayMs: 10 });
      await r.flush(); // the start's flush found the outbox empty
      const writer = pool();
      const inWriter = <T>(callback: (c: Pick<Pool, 'query'>) => Promise<T>) => transaction(writer, callback);
      const execute = (c: Pick<Pool, 'query'>, text: string, values: unknown[]) => c.query(text, values);
      const write = (n: number) => {
        const event = newChangeEvent('identity-auth', 'identity.updated', { identityId: 'same', n });
        return runWithOutbox(r, inWriter, execute, async (_c, emit) => emit([event])).then(() => event);
      };
      // The first event stays in the outbox (no flush is due for a minute); the next commits must wait behind it.
      const first = await write(1);
      await waitFor(() => logs.some((l) => l.includes('flush failed')), 'the failed publish and flush');
      const second = await write(2);
      const third = await write(3);
      await waitFor(() => counting.order.length === 3, 'all three on the bus');
      expect(counting.order).toEqual([first.id, second.id, third.id]);
      await r.flush();
      expect(await unpublished(writer)).toBe(0);
    });

    it('runWithOutbox publishes the events of a committed transaction, and none of one that threw', async () => {
      const counting = countingBus(natsBus);
      const r = relay(pool(), counting.bus, { pollIntervalMs: 60_000, markDelayMs: 10 });
      const writer = pool();
      const inWriter = <T>(callback: (c: Pick<Pool, 'query'>) => Promise<T>) => transaction(writer, callback);
      const execute = (c: Pick<Pool, 'query'>, text: string, values: unknown[]) => c.query(text, values);
      const kept = [newChangeEvent('pki-enrollment', 'ca.verified', { n: 1 }), newChangeEvent('pki-enrollment', 'ca.deleted', { n: 2 })];
      const value = await runWithOutbox(r, inWriter, execute, async (_c, emit) => {
        await emit([kept[0]!]);
        await emit([kept[1]!]);
        return 'done';
      });
      expect(value).toBe('done');
      const dropped = newChangeEvent('pki-enrollment', 'ca.deleted', { n: 3 });
      await expect(
        runWithOutbox(r, inWriter, execute, async (_c, emit) => {
          await emit([dropped]);
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
      await waitFor(() => counting.calls.size === 2, 'the committed events on the bus, without a flush');
      expect(counting.order).toEqual(kept.map((e) => e.id));
      await r.flush();
      expect(counting.calls.has(dropped.id)).toBe(false);
      expect(await unpublished(writer)).toBe(0);
      const { rows } = await writer.query('SELECT count(*)::int AS n FROM outbox_events');
      expect(rows[0].n).toBe(2);
    });

    it('runPrismaWithOutbox serialises transactions that lock the same name in its scope, and publishes each on commit', async () => {
      const counting = countingBus(natsBus);
      const r = relay(pool(), counting.bus, { pollIntervalMs: 60_000, markDelayMs: 10 });
      const writer = pool();
      // A client with Prisma's shape over pg: interactive transactions and $executeRawUnsafe.
      const prisma = {
        $transaction: <T>(fn: (tx: PrismaOutboxTx) => Promise<T>): Promise<T> =>
          transaction(writer, (c) => fn({ $executeRawUnsafe: async (q, ...values) => (await c.query(q, values)).rowCount ?? 0 })),
      };
      const steps: string[] = [];
      let releaseFirst!: () => void;
      const firstHolds = new Promise<void>((resolve) => (releaseFirst = resolve));
      const events = [newChangeEvent('identity-auth', 'auth-policy.updated', { n: 1 }), newChangeEvent('identity-auth', 'auth-policy.updated', { n: 2 })];
      const first = runPrismaWithOutbox(r, prisma, 'svc', async (_tx, emit, lock) => {
        await lock('policy');
        steps.push('first locked');
        await firstHolds;
        await emit([events[0]!]);
        steps.push('first done');
      });
      await waitFor(() => steps.length === 1, 'the first transaction holding the lock');
      const second = runPrismaWithOutbox(r, prisma, 'svc', async (_tx, emit, lock) => {
        await lock('policy');
        steps.push('second locked');
        await emit([events[1]!]);
      });
      // The same name in another scope is another lock: it does not wait.
      await runPrismaWithOutbox(r, prisma, 'other', async (_tx, _emit, lock) => {
        await lock('policy');
        steps.push('other scope locked');
      });
      try {
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(steps).toEqual(['first locked', 'other scope locked']);
      } finally {
        releaseFirst(); // also when the check failed: the test must end, not wait for a lock
      }
      await Promise.all([first, second]);
      expect(steps).toEqual(['first locked', 'other scope locked', 'first done', 'second locked']);
      await waitFor(() => counting.calls.size === 2, 'both transactions\' events on the bus, without a flush');
      expect(counting.order).toEqual(events.map((e) => e.id));
    });

    it('leaves the events it could not publish to the next flush, in order', async () => {
      const counting = countingBus(natsBus, 1);
      const r = relay(pool(), counting.bus, { pollIntervalMs: 60_000, markDelayMs: 10 });
      await r.flush(); // the outbox is known empty: the handover is published right after commit
      const writer = pool();
      const events = [newChangeEvent('policy', 'service.updated', { n: 1 }), newChangeEvent('policy', 'service.updated', { n: 2 })];
      await r.publishOnCommit(events, inTransaction(writer, (q) => writeOutboxEvents(q, events)));
      await waitFor(async () => (await unpublished(writer)) === 0, 'a flush to publish them');
      expect(counting.order).toEqual(events.map((e) => e.id));
      expect(logs.some((l) => l.includes('publishing after commit failed'))).toBe(true);
    });
  });

  it('stop() waits for the flush in flight and ends polling', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let entered = false;
    let published = 0;
    const slow = countingBus(natsBus);
    slow.bus.publish = async () => {
      entered = true;
      await gate;
      published++;
    };
    const writer = pool();
    await writeOutboxEvents(writer, [newChangeEvent('s', 't', {})]);
    const r = relay(pool(), slow.bus);
    await waitFor(() => entered, 'the relay to start publishing');
    let stopped = false;
    const stopping = r.stop().then(() => (stopped = true));
    await new Promise((res) => setImmediate(res));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(published).toBe(1);
    expect(await unpublished(writer)).toBe(0);
  });
});

describe('newChangeEvent', () => {
  it('builds an event with a uuid and a millisecond ISO timestamp', () => {
    const e = newChangeEvent('identity-auth', 'api-session.deleted', { apiSessionId: 'x' });
    expect(e.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(e.occurredAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(e).toMatchObject({ source: 'identity-auth', type: 'api-session.deleted', data: { apiSessionId: 'x' } });
    expect(() => newChangeEvent('identity.auth', 'x', {})).toThrow(/source/);
  });
});
