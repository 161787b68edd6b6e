import { createMemoryCache } from './memory-cache.js';

describe('memory cache', () => {
  it('gets what was set and null for unknown keys', async () => {
    const c = createMemoryCache();
    await c.set('a', '1', 60);
    expect(await c.get('a')).toBe('1');
    expect(await c.get('b')).toBeNull();
  });

  it('reads many keys at once, in order, null for absent and expired ones', async () => {
    let now = 0;
    const c = createMemoryCache({ now: () => now });
    await c.set('a', '1', 60);
    await c.set('b', '2', 0.5);
    await c.set('c', '3', 60);
    now += 500;
    expect(await c.mget(['c', 'missing', 'b', 'a'])).toEqual(['3', null, null, '1']);
    expect(await c.mget([])).toEqual([]);
  });

  it('honours the TTL', async () => {
    let now = 1_000_000;
    const c = createMemoryCache({ now: () => now });
    await c.set('a', '1', 2);
    await c.set('b', '2', 0.5);
    now += 499;
    expect(await c.get('b')).toBe('2');
    now += 1;
    expect(await c.get('b')).toBeNull();
    expect(await c.get('a')).toBe('1');
    now += 1500;
    expect(await c.get('a')).toBeNull();
  });

  it('overwrites a value and restarts its TTL', async () => {
    let now = 0;
    const c = createMemoryCache({ now: () => now });
    await c.set('a', '1', 1);
    now += 900;
    await c.set('a', '2', 1);
    now += 900;
    expect(await c.get('a')).toBe('2');
  });

  it('deletes one or many keys, ignoring absent ones', async () => {
    const c = createMemoryCache();
    await c.set('a', '1', 60);
    await c.set('b', '2', 60);
    await c.set('c', '3', 60);
    await c.del('a', 'c', 'zzz');
    await c.del();
    expect([await c.get('a'), await c.get('b'), await c.get('c')]).toEqual([null, '2', null]);
  });

  it('evicts the oldest-written entries beyond maxEntries', async () => {
    const c = createMemoryCache({ maxEntries: 3 });
    for (const k of ['a', 'b', 'c']) await c.set(k, k, 60);
    await c.set('a', 'A', 60); // rewritten: now the newest
    await c.set('d', 'd', 60);
    expect([await c.get('a'), await c.get('b'), await c.get('c'), await c.get('d')]).toEqual(['A', null, 'c', 'd']);
  });

  it('drops expired entries that are never read again, at most a second apart, when it is written', async () => {
    let now = 1_000_000;
    const c = createMemoryCache({ now: () => now });
    await c.set('kept', 'k', 60);
    for (const k of ['a', 'b', 'c']) await c.set(k, k, 1);
    expect(c.size()).toBe(4);
    now += 1500;
    await c.set('d', 'd', 60); // the first write after the sweep interval sweeps
    expect(c.size()).toBe(2);
    await c.set('e', 'e', 1);
    now += 1200;
    await c.set('f', 'f', 60);
    expect(c.size()).toBe(3); // kept, d, f: e expired and went in this write's sweep
    expect([await c.get('kept'), await c.get('d'), await c.get('e'), await c.get('f')]).toEqual(['k', 'd', null, 'f']);
  });

  it('rejects a TTL that is not a positive number', async () => {
    const c = createMemoryCache();
    await expect(c.set('a', '1', 0)).rejects.toThrow(RangeError);
    await expect(c.set('a', '1', Number.NaN)).rejects.toThrow(RangeError);
  });

  it('sets a key only when it holds nothing, and again once it expired', async () => {
    let now = 0;
    const c = createMemoryCache({ now: () => now });
    expect(await c.setIfAbsent('code', 'a', 1)).toBe(true);
    expect(await c.setIfAbsent('code', 'b', 1)).toBe(false);
    expect(await c.get('code')).toBe('a');
    now += 1000;
    expect(await c.setIfAbsent('code', 'c', 1)).toBe(true);
    expect(await c.get('code')).toBe('c');
  });

  it('counts in a fixed window that starts with the first increment', async () => {
    let now = 0;
    const c = createMemoryCache({ now: () => now });
    expect(await c.increment('n', 10)).toBe(1);
    now += 6000;
    expect(await c.increment('n', 10)).toBe(2);
    now += 3999;
    expect(await c.increment('n', 10)).toBe(3); // later increments do not extend the window
    now += 1;
    expect(await c.get('n')).toBeNull();
    expect(await c.increment('n', 10)).toBe(1);
  });
});
