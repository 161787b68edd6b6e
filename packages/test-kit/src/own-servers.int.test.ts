import { connect as natsConnect } from 'nats';
import Redis from 'ioredis';
import { Client } from 'pg';
import { type OwnServer, startOwnNats, startOwnPostgres, startOwnRedis } from './own-servers.js';

/** Each own server answers, stops, comes back with its data (Redis empty) and can be killed outright. */

async function pgValue(url: string, sql: string): Promise<unknown> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows[0]?.v;
  } finally {
    await c.end();
  }
}

describe('own servers', () => {
  const servers: OwnServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.close();
  });

  it('PostgreSQL keeps its data across stop/start and kill/start', async () => {
    const pg = await startOwnPostgres();
    servers.push(pg);
    await pgValue(pg.url, 'CREATE TABLE t AS SELECT 42 AS v');
    await pg.stop();
    await expect(pgValue(pg.url, 'SELECT 1 AS v')).rejects.toThrow();
    await pg.start();
    expect(await pgValue(pg.url, 'SELECT v FROM t')).toBe(42);
    await pg.kill();
    await expect(pgValue(pg.url, 'SELECT 1 AS v')).rejects.toThrow();
    await pg.start();
    expect(await pgValue(pg.url, 'SELECT v FROM t')).toBe(42);
  }, 90_000);

  it('NATS keeps its JetStream streams across stop/start', async () => {
    const nats = await startOwnNats();
    servers.push(nats);
    const addStream = async () => {
      const nc = await natsConnect({ servers: nats.url });
      try {
        const jsm = await nc.jetstreamManager();
        await jsm.streams.add({ name: 'OWN', subjects: ['own.>'] });
      } finally {
        await nc.close();
      }
    };
    await addStream();
    await nats.stop();
    await nats.start();
    const nc = await natsConnect({ servers: nats.url });
    try {
      expect((await (await nc.jetstreamManager()).streams.info('OWN')).config.name).toBe('OWN');
    } finally {
      await nc.close();
    }
    await nats.kill();
    await nats.start();
  }, 60_000);

  it('Redis comes back empty after kill/start', async () => {
    const redis = await startOwnRedis();
    servers.push(redis);
    const client = () => new Redis(redis.url, { maxRetriesPerRequest: 0, lazyConnect: true });
    const a = client();
    await a.connect();
    await a.set('k', 'v');
    expect(await a.get('k')).toBe('v');
    a.disconnect();
    await redis.kill();
    await redis.start();
    const b = client();
    await b.connect();
    expect(await b.get('k')).toBeNull();
    b.disconnect();
  }, 60_000);
});
