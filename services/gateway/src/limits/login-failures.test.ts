import { type Cache, createMemoryCache, createNearCache } from '@ziti/messaging';
import { LoginFailureLimits, loginLimitSettings } from './login-failures.js';

/** A memory cache on a fake clock that counts the reads it serves. */
function countingCache(clock: { now: number }): Cache & { reads: number } {
  const inner = createMemoryCache({ now: () => clock.now });
  const cache = {
    reads: 0,
    ...inner,
    get: (key: string) => {
      cache.reads++;
      return inner.get(key);
    },
  };
  return cache;
}

describe('LoginFailureLimits', () => {
  it('refuses a username once it failed its limit within the window, and lets it in again after the window', async () => {
    const clock = { now: 1_000_000 };
    const limits = new LoginFailureLimits(createMemoryCache({ now: () => clock.now }), { perUsername: 3, perAddress: 0, windowSeconds: 60 }, undefined, () => clock.now);
    const alice = limits.counters('198.51.100.1', 'alice');
    for (let i = 0; i < 3; i++) {
      expect(await limits.throttled(alice)).toBe(false);
      await limits.recordFailure(alice);
      clock.now += 1000;
    }
    expect(await limits.throttled(alice)).toBe(true);
    expect(await limits.throttled(limits.counters('198.51.100.2', 'alice'))).toBe(true); // from anywhere
    expect(await limits.throttled(limits.counters('198.51.100.1', 'bob'))).toBe(false); // another user, same address
    clock.now = 1_000_000 + 60_000; // the window opened by the first failure has ended
    expect(await limits.throttled(alice)).toBe(false);
  });

  it('refuses an address once it failed its limit, whatever the username, and leaves other addresses alone', async () => {
    const clock = { now: 0 };
    const limits = new LoginFailureLimits(createMemoryCache({ now: () => clock.now }), { perUsername: 100, perAddress: 2 }, undefined, () => clock.now);
    await limits.recordFailure(limits.counters('203.0.113.9', 'u1'));
    await limits.recordFailure(limits.counters('203.0.113.9')); // a certificate login: no username
    expect(await limits.throttled(limits.counters('203.0.113.9', 'u3'))).toBe(true);
    expect(await limits.throttled(limits.counters('203.0.113.9'))).toBe(true);
    expect(await limits.throttled(limits.counters('203.0.113.10', 'u3'))).toBe(false);
  });

  it('counts IPv6 clients per /64 and IPv4-mapped peers as their IPv4 address', async () => {
    const limits = new LoginFailureLimits(createMemoryCache(), { perUsername: 0, perAddress: 1 });
    await limits.recordFailure(limits.counters('2001:db8:1:2::1'));
    expect(await limits.throttled(limits.counters('2001:db8:1:2:ffff::9'))).toBe(true);
    expect(await limits.throttled(limits.counters('2001:db8:1:3::1'))).toBe(false);
    await limits.recordFailure(limits.counters('::ffff:192.0.2.1'));
    expect(await limits.throttled(limits.counters('192.0.2.1'))).toBe(true);
  });

  it('reads each key once per check while under the limit, and not at all for a key it just saw reach the limit', async () => {
    const clock = { now: 0 };
    const cache = countingCache(clock);
    const limits = new LoginFailureLimits(cache, { perUsername: 2, perAddress: 5 }, undefined, () => clock.now);
    const counters = limits.counters('198.51.100.1', 'carol');
    expect(counters).toHaveLength(2);
    expect(await limits.throttled(counters)).toBe(false);
    expect(cache.reads).toBe(2);
    await limits.recordFailure(counters);
    await limits.recordFailure(counters); // carol reaches 2
    expect(await limits.throttled(counters)).toBe(true);
    expect(cache.reads).toBe(2);
    clock.now += 1001; // this process no longer remembers it: the shared count answers
    expect(await limits.throttled(counters)).toBe(true);
    expect(cache.reads).toBe(4);
  });

  it('refuses on this replica at once even while its near cache still holds an older count', async () => {
    const clock = { now: 0 };
    const shared = createMemoryCache({ now: () => clock.now });
    const near = createNearCache(shared, { now: () => clock.now });
    const limits = new LoginFailureLimits(near, { perUsername: 3, perAddress: 0 }, undefined, () => clock.now);
    const dave = limits.counters('198.51.100.1', 'dave');
    await limits.recordFailure(dave);
    expect(await limits.throttled(dave)).toBe(false); // the near cache now holds "1" for a second
    await limits.recordFailure(dave);
    await limits.recordFailure(dave);
    expect(await near.get(dave[0]!.key)).toBe('1');
    expect(await limits.throttled(dave)).toBe(true);
  });

  it('shares counts between replicas through the cache', async () => {
    const shared = createMemoryCache();
    const a = new LoginFailureLimits(shared, { perUsername: 2, perAddress: 0 });
    const b = new LoginFailureLimits(shared, { perUsername: 2, perAddress: 0 });
    await a.recordFailure(a.counters('198.51.100.1', 'erin'));
    await b.recordFailure(b.counters('198.51.100.2', 'erin'));
    expect(await a.throttled(a.counters('198.51.100.3', 'erin'))).toBe(true);
  });

  it('checks nothing when both limits are off, and lets logins through when the cache fails', async () => {
    const off = new LoginFailureLimits(createMemoryCache(), { perUsername: 0, perAddress: 0 });
    expect(off.enabled).toBe(false);
    expect(off.counters('198.51.100.1', 'frank')).toEqual([]);
    const logs: string[] = [];
    const broken = { get: () => Promise.reject(new Error('down')), increment: () => Promise.reject(new Error('down')) } as unknown as Cache;
    const limits = new LoginFailureLimits(broken, {}, (m) => logs.push(m));
    const counters = limits.counters('198.51.100.1', 'frank');
    await expect(limits.recordFailure(counters)).resolves.toBeUndefined();
    expect(await limits.throttled(counters)).toBe(false);
    expect(logs).toHaveLength(1); // at most once every 10 s
  });
});

describe('loginLimitSettings', () => {
  it('applies the defaults: 10 per username, 30 per address, 60 s windows', () => {
    expect(loginLimitSettings()).toEqual({ perUsername: 10, perAddress: 30, windowSeconds: 60 });
    expect(loginLimitSettings({ perUsername: 0 })).toEqual({ perUsername: 0, perAddress: 30, windowSeconds: 60 });
  });

  it.each([
    [{ perUsername: -1 }, 'perUsername'],
    [{ perAddress: 1.5 }, 'perAddress'],
    [{ windowSeconds: 0 }, 'windowSeconds'],
    [{ windowSeconds: 3601 }, 'windowSeconds'],
  ])('refuses %j', (opts, key) => {
    expect(() => loginLimitSettings(opts)).toThrow(key);
  });
});
