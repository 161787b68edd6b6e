import Redis from 'ioredis';
import { connect as natsConnect } from 'nats';
import { Client } from 'pg';
import { startOwnNats, startOwnPostgres, startOwnRedis } from './own-servers.js';

async function pgAnswers(url: string): Promise<boolean> {
  const c = new Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  c.on('error', () => undefined);
  try {
    await c.connect();
    await c.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => undefined);
  }
}

describe('own servers', () => {
  it('runs a PostgreSQL of its own that stops, starts, is killed and keeps its data', async () => {
    const pg = await startOwnPostgres();
    try {
      const c = new Client({ connectionString: pg.url });
      await c.connect();
      await c.query('CREATE TABLE kept (v int); INSERT INTO kept VALUES (7)');
      await c.end();
      await pg.stop();
      expect(await pgAnswers(pg.url)).toBe(false);
      await pg.start();
      await pg.kill();
      expect(await pgAnswers(pg.url)).toBe(false);
      await pg.start();
      const d = new Client({ connectionString: pg.url });
      await d.connect();
      expect((await d.query('SELECT v FROM kept')).rows).toEqual([{ v: 7 }]);
      await d.end();
    } finally {
      await pg.close();
    }
  });

  it('runs a NATS with JetStream of its own that stops and starts on the same port', async () => {
    const nats = await startOwnNats();
    try {
      const nc = await natsConnect({ servers: nats.url });
      const jsm = await nc.jetstreamManager();
      await jsm.streams.add({ name: 'KEPT', subjects: ['kept.>'] });
      await nc.close();
      await nats.kill();
      await nats.start();
      const again = await natsConnect({ servers: nats.url });
      expect((await (await again.jetstreamManager()).streams.info('KEPT')).config.name).toBe('KEPT');
      await again.close();
    } finally {
      await nats.close();
    }
  });

  it('runs a Redis of its own that comes back empty', async () => {
    const redis = await startOwnRedis();
    try {
      const r = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
      await r.connect();
      await r.set('k', 'v');
      r.disconnect();
      await redis.stop();
      await redis.start();
      const again = new Redis(redis.url, { lazyConnect: true });
      await again.connect();
      expect(await again.get('k')).toBeNull();
      again.disconnect();
    } finally {
      await redis.close();
    }
  });
});
