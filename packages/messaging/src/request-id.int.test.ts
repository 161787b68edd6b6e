import { randomBytes } from 'node:crypto';
import { configureLogging, currentRequestId, runWithRequest } from '@ziti/log';
import { createTestDatabase, testInfra, type TestDatabase } from '@ziti/test-kit';
import { connect } from 'nats';
import { Pool } from 'pg';
import { createInProcessBus } from './in-process-bus.js';
import { createNatsBus } from './nats-bus.js';
import { newChangeEvent, OUTBOX_TABLE_SQL, runWithOutbox, startOutboxRelay, writeOutboxEvents, type OutboxRelay } from './outbox.js';
import type { ChangeEvent, EventBus } from './types.js';

/** What a consumer saw: the event's request id and the one it ran under. */
interface Seen {
  type: string;
  carried?: string;
  current?: string;
}

const run = randomBytes(4).toString('hex');
let db: TestDatabase;
let pool: Pool;
let bus: EventBus;
let relay: OutboxRelay;
let lines: Record<string, unknown>[];
const seen: Seen[] = [];

async function waitFor(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  lines = [];
  configureLogging({ level: 'debug', format: 'json', destination: { write: (l: string) => lines.push(JSON.parse(l)) } });
  const infra = await testInfra();
  db = await createTestDatabase(infra.databaseUrl, 'msg_reqid');
  pool = new Pool({ connectionString: db.url, max: 3, options: '-c search_path=svc' });
  pool.on('error', () => undefined);
  await pool.query('CREATE SCHEMA svc');
  await pool.query(OUTBOX_TABLE_SQL);
  bus = await createNatsBus({ url: infra.natsUrl, stream: `TEST_REQID_${run}`, subjectPrefix: `test.reqid.${run}` });
  await bus.subscribeDurable('reqid-test', 'identity-auth', ['identity.*'], (e) => void seen.push({ type: e.type, carried: e.requestId, current: currentRequestId() }));
  relay = startOutboxRelay({ pool, bus, pollIntervalMs: 50 });
});

afterAll(async () => {
  await relay?.stop();
  await bus?.close();
  const nc = await connect({ servers: (await testInfra()).natsUrl });
  await (await nc.jetstreamManager()).streams.delete(`TEST_REQID_${run}`).catch(() => undefined);
  await nc.close();
  await pool?.end();
  await db?.drop();
});

describe('the request id of events', () => {
  it('is taken from the request being served, and left out of the event otherwise', () => {
    const inside = runWithRequest({ requestId: 'Rq1.abc-9' }, () => newChangeEvent('identity-auth', 'identity.updated', {}));
    const outside = newChangeEvent('identity-auth', 'identity.updated', {});
    expect(inside.requestId).toBe('Rq1.abc-9');
    expect('requestId' in outside).toBe(false);
    expect(JSON.parse(JSON.stringify(outside))).not.toHaveProperty('requestId');
  });

  it('survives the outbox when the relay publishes the row (flush), and the consumer runs and logs under it', async () => {
    await runWithRequest({ requestId: 'flushReq1' }, () => writeOutboxEvents(pool, [newChangeEvent('identity-auth', 'identity.created', {})]));
    const { rows } = await pool.query('SELECT request_id FROM outbox_events');
    expect(rows).toEqual([{ request_id: 'flushReq1' }]);
    relay.notify();
    await waitFor(() => seen.some((s) => s.type === 'identity.created'), 'the flushed event');
    expect(seen.find((s) => s.type === 'identity.created')).toEqual({ type: 'identity.created', carried: 'flushReq1', current: 'flushReq1' });
    await waitFor(() => lines.some((l) => l.msg === 'event handled' && l.eventType === 'identity.created'), 'the consumer line');
    expect(lines.find((l) => l.msg === 'event handled' && l.eventType === 'identity.created')).toMatchObject({ level: 'debug', context: 'messaging', requestId: 'flushReq1', consumer: 'reqid-test' });
  });

  it('goes with events published right after their commit', async () => {
    await runWithRequest({ requestId: 'commitReq2' }, () =>
      runWithOutbox(
        relay,
        async (callback: (tx: Pool) => Promise<void>) => callback(pool),
        (tx, text, values) => tx.query(text, values),
        (_tx, emit) => emit([newChangeEvent('identity-auth', 'identity.deleted', {})]),
      ),
    );
    await waitFor(() => seen.some((s) => s.type === 'identity.deleted'), 'the event published on commit');
    expect(seen.find((s) => s.type === 'identity.deleted')).toEqual({ type: 'identity.deleted', carried: 'commitReq2', current: 'commitReq2' });
  });

  it('reaches consumers of the in-process bus, and a consumer failure is logged under it', async () => {
    const local = createInProcessBus({ maxAttempts: 1 });
    const got: Seen[] = [];
    await local.subscribeDurable('local', 'identity-auth', ['identity.*'], (e: ChangeEvent) => {
      got.push({ type: e.type, carried: e.requestId, current: currentRequestId() });
      throw new Error('consumer failed');
    });
    await local.publish(runWithRequest({ requestId: 'localReq3' }, () => newChangeEvent('identity-auth', 'identity.updated', {})));
    await local.idle();
    await local.close();
    expect(got).toEqual([{ type: 'identity.updated', carried: 'localReq3', current: 'localReq3' }]);
    expect(lines.find((l) => l.level === 'error' && String(l.msg).includes('dropping identity-auth/identity.updated'))).toMatchObject({ context: 'messaging', requestId: 'localReq3' });
  });
});
