import { dependencies, unavailableDependency } from '@ziti/errors';
import Redis from 'ioredis';
import { type OwnServer, startOwnRedis } from '@ziti/test-kit';
import { REDIS_COMMAND_TIMEOUT_MS, createRedisCache } from './redis-cache.js';
import type { Cache } from './types.js';

// A Redis of this file alone, killed and started again (empty) under the cache.
jest.setTimeout(60_000);

let redis: OwnServer;
let cache: Cache;
const lines: string[] = [];

beforeAll(async () => {
  redis = await startOwnRedis();
  dependencies.setLog((l) => lines.push(l));
  cache = await createRedisCache(redis.url);
});

afterAll(async () => {
  await cache?.close();
  await redis?.close();
});

async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('Redis cache across an outage', () => {
  it('logs one line when Redis is lost and one when it is back, and answers again (empty) afterwards', async () => {
    await cache.set('k', 'v', 60);
    await redis.kill();
    await eventually(async () => lines.some((l) => l.startsWith('dependency redis lost')), 'the loss to be reported');
    await redis.start();
    await eventually(async () => (await cache.get('k')) === null, 'the cache to answer again');
    await cache.set('k', 'again', 60);
    expect(await cache.get('k')).toBe('again');
    const redisLines = lines.filter((l) => l.startsWith('dependency redis'));
    expect(redisLines).toHaveLength(2);
    expect(redisLines[0]).toMatch(/^dependency redis lost: /);
    expect(redisLines[1]).toMatch(/^dependency redis back after \d+\.\d s; \d+ failed or held back meanwhile$/);
  });

  it('fails a command a stalled Redis does not answer within the command timeout, as Redis being unavailable', async () => {
    const admin = new Redis(redis.url);
    try {
      // Every other client's commands wait while the pause lasts, as with a server that stalls.
      await admin.call('CLIENT', 'PAUSE', String(REDIS_COMMAND_TIMEOUT_MS * 3), 'ALL');
      const started = Date.now();
      const err = await cache.get('k').then(() => undefined, (e: unknown) => e);
      expect(unavailableDependency(err)).toBe('redis');
      expect(Date.now() - started).toBeLessThan(REDIS_COMMAND_TIMEOUT_MS * 2);
    } finally {
      await admin.call('CLIENT', 'UNPAUSE').catch(() => undefined);
      admin.disconnect();
    }
  });
});
