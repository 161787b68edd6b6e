import { createMemoryCache } from './memory-cache.js';
import { createNearCache } from './near-cache.js';
import type { Cache } from './types.js';

/** A shared cache that counts its reads. */
function counted(now: () => number): Cache & { reads: number } {
  const inner = createMemoryCache({ now });
  const c = {
    reads: 0,
    get: async (k: string) => {
      c.reads += 1;
      return inner.get(k);
    },
    mget: async (k: readonly string[]) => {
      c.reads += 1;
      return inner.mget(k);
    },
    set: (k: string, v: string, t: number) => inner.set(k, v, t),
    setIfAbsent: (k: string, v: string, t: number) => inner.setIfAbsent(k, v, t),
    increment: (k: string, t: number) => inner.increment(k, t),
    del: (...k: string[]) => inner.del(...k),
    close: () => inner.close(),
  };
  return c;
}

describe('createNearCache', () => {
  let clock = 1_000_000;
  const now = () => clock;

  it('serves a value it read from memory for its short TTL, then reads the shared cache again', async () => {
    const shared = counted(now);
    await shared.set('k', 'v', 30);
    const near = createNearCache(shared, { ttlSeconds: 1, now });
    expect(await near.get('k')).toBe('v');
    expect(await near.get('k')).toBe('v');
    expect(shared.reads).toBe(1);
    clock += 1001;
    expect(await near.get('k')).toBe('v');
    expect(shared.reads).toBe(2);
  });

  it('does not remember misses, and never serves past the value\'s own TTL', async () => {
    const shared = counted(now);
    const near = createNearCache(shared, { ttlSeconds: 5, now });
    expect(await near.get('absent')).toBeNull();
    await shared.set('absent', 'now-there', 30);
    expect(await near.get('absent')).toBe('now-there');
    await near.set('short', 'x', 0.5);
    clock += 600;
    expect(await near.get('short')).toBeNull();
  });

  it('drops both copies at once on del through it; a del made elsewhere shows after the short TTL', async () => {
    const shared = counted(now);
    const near = createNearCache(shared, { ttlSeconds: 1, now });
    await near.set('a', '1', 30);
    await near.del('a');
    expect(await near.get('a')).toBeNull();
    expect(await shared.get('a')).toBeNull();
    await near.set('b', '2', 30);
    await shared.del('b'); // another replica
    expect(await near.get('b')).toBe('2');
    clock += 1001;
    expect(await near.get('b')).toBeNull();
  });

  it('claims keys and counts in the shared cache, never in its copy', async () => {
    const shared = counted(now);
    const near = createNearCache(shared, { ttlSeconds: 1, now });
    expect(await near.setIfAbsent('once', 'a', 30)).toBe(true);
    expect(await shared.setIfAbsent('once', 'b', 30)).toBe(false);
    expect(await near.increment('n', 30)).toBe(1);
    expect(await shared.increment('n', 30)).toBe(2);
    expect(await near.increment('n', 30)).toBe(3);
  });

  it('reads many keys from the shared cache every time, never from its copy, and does not fill the copy', async () => {
    const shared = counted(now);
    const near = createNearCache(shared, { ttlSeconds: 5, now });
    await near.set('marker', 'v1', 30);
    expect(await near.get('marker')).toBe('v1');
    const readsBefore = shared.reads;
    // another replica changes and deletes values: a near read still sees the old copy, mget never does
    await shared.set('marker', 'v2', 30);
    await shared.set('other', 'x', 30);
    expect(await near.get('marker')).toBe('v1');
    expect(await near.mget(['marker', 'other', 'absent'])).toEqual(['v2', 'x', null]);
    await shared.del('marker');
    expect(await near.mget(['marker'])).toEqual([null]);
    expect(shared.reads).toBe(readsBefore + 2);
    // what mget read is not served from memory afterwards
    await shared.set('fresh', 'f1', 30);
    expect(await near.mget(['fresh'])).toEqual(['f1']);
    await shared.set('fresh', 'f2', 30);
    expect(await near.get('fresh')).toBe('f2');
  });
});
