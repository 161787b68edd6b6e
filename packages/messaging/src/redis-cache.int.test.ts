import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { testInfra } from '@ziti/test-kit';
import { createRedisCache } from './redis-cache.js';
import type { Cache } from './types.js';

const keyPrefix = `test:messaging:${randomBytes(4).toString('hex')}:`;
let cache: Cache;
let raw: Redis;

beforeAll(async () => {
  const { redisUrl } = await testInfra();
  cache = await createRedisCache(redisUrl, { keyPrefix });
  raw = new Redis(redisUrl);
});

afterAll(async () => {
  const keys = await raw.keys(`${keyPrefix}*`);
  if (keys.length > 0) await raw.del(...keys);
  await raw.quit();
  await cache.close();
});

describe('Redis cache', () => {
  it('gets what was set, under the key prefix, and null for unknown keys', async () => {
    await cache.set('principal:abc', '{"id":"x"}', 60);
    expect(await cache.get('principal:abc')).toBe('{"id":"x"}');
    expect(await raw.get(`${keyPrefix}principal:abc`)).toBe('{"id":"x"}');
    expect(await cache.get('principal:none')).toBeNull();
  });

  it('sets the TTL on the key and lets it expire', async () => {
    await cache.set('long', 'v', 30);
    const ttl = await raw.pttl(`${keyPrefix}long`);
    expect(ttl).toBeGreaterThan(25_000);
    expect(ttl).toBeLessThanOrEqual(30_000);
    await cache.set('short', 'v', 0.05);
    const deadline = Date.now() + 5_000;
    while ((await cache.get('short')) !== null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(await cache.get('short')).toBeNull();
  });

  it('deletes one or many keys, and accepts an empty or unknown list', async () => {
    await cache.set('a', '1', 60);
    await cache.set('b', '2', 60);
    await cache.set('c', '3', 60);
    await cache.del('a', 'c', 'missing');
    await cache.del();
    expect([await cache.get('a'), await cache.get('b'), await cache.get('c')]).toEqual([null, '2', null]);
  });

  it('reads many keys in one MGET, in order, null for absent ones, under the key prefix', async () => {
    await cache.set('m:a', '1', 60);
    await raw.set(`${keyPrefix}m:c`, '3', 'PX', 60_000);
    expect(await cache.mget(['m:c', 'm:missing', 'm:a'])).toEqual(['3', null, '1']);
    expect(await cache.mget([])).toEqual([]);
  });

  it('sets a key only when it holds nothing, with the TTL', async () => {
    expect(await cache.setIfAbsent('once', 'a', 30)).toBe(true);
    expect(await cache.setIfAbsent('once', 'b', 30)).toBe(false);
    expect(await cache.get('once')).toBe('a');
    expect(await raw.pttl(`${keyPrefix}once`)).toBeGreaterThan(25_000);
  });

  it('counts atomically under concurrency, the window set by the first increment only', async () => {
    const counts = await Promise.all(Array.from({ length: 50 }, () => cache.increment('hits', 30)));
    expect([...counts].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    await raw.pexpire(`${keyPrefix}hits`, 10_000);
    expect(await cache.increment('hits', 30)).toBe(51);
    expect(await raw.pttl(`${keyPrefix}hits`)).toBeLessThanOrEqual(10_000);
  });

  it('rejects a TTL that is not a positive number', async () => {
    await expect(cache.set('a', '1', 0)).rejects.toThrow(RangeError);
  });

  it('fails to start when Redis does not answer', async () => {
    await expect(createRedisCache('redis://127.0.0.1:1', { log: () => undefined })).rejects.toThrow();
  });
});
