import { dependencies } from '@ziti/errors';
import { createTestDatabase, inTransaction, startOwnNats, testInfra, type OwnServer, type TestDatabase } from '@ziti/test-kit';
import { Pool } from 'pg';
import { createNatsBus } from './nats-bus.js';
import { newChangeEvent, OUTBOX_TABLE_SQL, runWithOutbox, startOutboxRelay, type OutboxRelay } from './outbox.js';
import type { ChangeEvent, EventBus } from './types.js';

// A NATS server of this file alone, stopped and started again while the relay runs.
jest.setTimeout(60_000);

let nats: OwnServer;
let db: TestDatabase;
let pool: Pool;
let bus: EventBus;
let relay: OutboxRelay;
const lines: string[] = [];

/** Resolves on the bus's next connection change to `connected`. */
function connection(connected: boolean): Promise<void> {
  return new Promise((resolve) => {
    const off = bus.onConnectionChange!((c) => {
      if (c !== connected) return;
      off();
      resolve();
    });
  });
}

async function write(n: number): Promise<ChangeEvent> {
  const event = newChangeEvent('policy', 'service-access.changed', { identityIds: ['same'], n });
  const inTx = <T>(callback: (c: Pick<Pool, 'query'>) => Promise<T>) => inTransaction(pool, callback);
  await runWithOutbox(relay, inTx, (c: Pick<Pool, 'query'>, text: string, values: unknown[]) => c.query(text, values), (_c, emit) => emit([event]));
  return event as ChangeEvent;
}

beforeAll(async () => {
  nats = await startOwnNats();
  db = await createTestDatabase((await testInfra()).databaseUrl, 'msg_outage');
  pool = new Pool({ connectionString: db.url, max: 3, options: '-c search_path=svc' });
  pool.on('error', () => undefined);
  await pool.query('CREATE SCHEMA svc');
  await pool.query(OUTBOX_TABLE_SQL);
  dependencies.setLog((l) => lines.push(l));
  bus = await createNatsBus({ url: nats.url, log: (m) => lines.push(m) });
  // A poll far beyond the test: whatever reaches the bus after the outage was flushed by the reconnect.
  relay = startOutboxRelay({ pool, bus, pollIntervalMs: 120_000, markDelayMs: 10, log: (m) => lines.push(m) });
});

afterAll(async () => {
  await relay?.stop();
  await bus?.close();
  await pool?.end();
  await db?.drop();
  await nats?.close();
});

describe('outbox relay across a NATS outage', () => {
  it('holds the events written while the bus is away, flushes them on reconnect, and keeps commit order', async () => {
    const seen: string[] = [];
    const arrived = new Map<string, () => void>();
    await bus.subscribeDurable('outage-test', 'policy', ['service-access.changed'], (e) => {
      seen.push(e.id);
      arrived.get(e.id)?.();
    });
    const onBus = (e: ChangeEvent) => new Promise<void>((resolve) => (seen.includes(e.id) ? resolve() : arrived.set(e.id, resolve)));
    const before = await write(0);
    await onBus(before);

    const lost = connection(false);
    await nats.stop();
    await lost;
    const duringOutage = [await write(1), await write(2)];

    const back = connection(true);
    await nats.start();
    await back;
    const after = await write(3);
    // Sooner than one publish timeout (5 s): the relay neither waited one out nor waited for a poll.
    const deadline = new Promise<never>((_r, reject) => setTimeout(() => reject(new Error('outage events were late')), 4_000).unref());
    await Promise.race([Promise.all([...duringOutage, after].map(onBus)), deadline]);

    expect(seen).toEqual([before.id, duringOutage[0]!.id, duringOutage[1]!.id, after.id]);
    const natsLines = lines.filter((l) => l.startsWith('dependency nats'));
    expect(natsLines).toHaveLength(2);
    expect(natsLines[0]).toMatch(/^dependency nats lost: disconnected from/);
    expect(natsLines[1]).toMatch(/^dependency nats back after \d+\.\d s; 2 failed or held back meanwhile$/);
    expect(lines.filter((l) => l.startsWith('outbox relay'))).toEqual([]);
  });
});
