import { ADMIN_BYPASS_INTERVAL_MS, AdaptiveRateLimiter, type LimiterTicket, authRateLimiterSettings } from './adaptive-limiter.js';

/** Admits `n` requests; fails the test if one is refused. */
function admit(limiter: AdaptiveRateLimiter, n: number): LimiterTicket[] {
  return Array.from({ length: n }, () => {
    const t = limiter.acquire();
    if (!t) throw new Error(`refused at ${limiter.inFlight + 1} with window ${limiter.windowSize}`);
    return t;
  });
}

describe('AdaptiveRateLimiter', () => {
  it('starts at the maximum window and refuses the request beyond it', () => {
    const limiter = new AdaptiveRateLimiter({ minSize: 5, maxSize: 20 });
    expect(limiter.windowSize).toBe(20);
    const tickets = admit(limiter, 20);
    expect(tickets.map((t) => t.position)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(limiter.acquire()).toBeUndefined();
    limiter.release(tickets[0]!, 'failed');
    expect(limiter.acquire()).toEqual({ position: 20 });
  });

  it('defaults to OpenZiti’s window of 5..250', () => {
    const limiter = new AdaptiveRateLimiter();
    expect(limiter.windowSize).toBe(250);
    admit(limiter, 250);
    expect(limiter.acquire()).toBeUndefined();
  });

  it('shrinks on a backoff to the position minus 10, never below the minimum, and only downwards', () => {
    const limiter = new AdaptiveRateLimiter({ minSize: 5, maxSize: 100 });
    const tickets = admit(limiter, 40);
    limiter.release(tickets[29]!, 'backoff'); // position 30 → 20
    expect(limiter.windowSize).toBe(20);
    limiter.release(tickets[34]!, 'backoff'); // position 35 → 25, not larger than 20: unchanged
    expect(limiter.windowSize).toBe(20);
    limiter.release(tickets[7]!, 'backoff'); // position 8 → -2, clamped to 5
    expect(limiter.windowSize).toBe(5);
    // 37 are still outstanding: nothing more is admitted until fewer than 5 are.
    expect(limiter.inFlight).toBe(37);
    expect(limiter.acquire()).toBeUndefined();
  });

  it('grows by one for every 10th success, up to the maximum', () => {
    const limiter = new AdaptiveRateLimiter({ minSize: 5, maxSize: 22 });
    const [first] = admit(limiter, 21);
    limiter.release(first!, 'backoff'); // position 1 → clamped to 5
    expect(limiter.windowSize).toBe(5);
    for (let i = 0; i < 9; i++) limiter.release({ position: 1 }, 'success');
    expect(limiter.windowSize).toBe(5);
    limiter.release({ position: 1 }, 'success');
    expect(limiter.windowSize).toBe(6);
    for (let i = 0; i < 1000; i++) limiter.release({ position: 1 }, 'success');
    expect(limiter.windowSize).toBe(22);
  });

  it('leaves the window alone when the work failed', () => {
    const limiter = new AdaptiveRateLimiter({ minSize: 5, maxSize: 50 });
    const tickets = admit(limiter, 50);
    limiter.release(tickets[44]!, 'backoff');
    expect(limiter.windowSize).toBe(35);
    for (const t of tickets.slice(0, 30)) limiter.release(t, 'failed');
    expect(limiter.windowSize).toBe(35);
    expect(limiter.inFlight).toBe(19);
  });

  describe('admin bypass', () => {
    it('grants one claim at a time; a claim that was not an admin’s successful login does not use the interval up', () => {
      let now = 1_000_000;
      const limiter = new AdaptiveRateLimiter({}, () => now);
      expect(limiter.claimAdminBypass()).toBe(true);
      expect(limiter.claimAdminBypass()).toBe(false); // the first is still pending
      limiter.endAdminBypass(false); // wrong password: nothing used
      expect(limiter.claimAdminBypass()).toBe(true);
      limiter.endAdminBypass(true);
      now += ADMIN_BYPASS_INTERVAL_MS;
      expect(limiter.claimAdminBypass()).toBe(false); // exactly 10 s later: not yet (OpenZiti: more than 10 s)
      now += 1;
      expect(limiter.claimAdminBypass()).toBe(true);
    });

    it('does not take a place in the window', () => {
      const limiter = new AdaptiveRateLimiter({ minSize: 5, maxSize: 5 }, () => 0);
      admit(limiter, 5);
      expect(limiter.acquire()).toBeUndefined();
      expect(limiter.claimAdminBypass()).toBe(true);
      expect(limiter.inFlight).toBe(5);
    });
  });
});

describe('authRateLimiterSettings', () => {
  it('applies the defaults, keeping given values', () => {
    expect(authRateLimiterSettings()).toEqual({ enabled: true, minSize: 5, maxSize: 250 });
    expect(authRateLimiterSettings({ enabled: false, maxSize: undefined, minSize: 10 })).toEqual({ enabled: false, minSize: 10, maxSize: 250 });
  });

  it.each([
    [{ minSize: 4 }, 'minSize'],
    [{ maxSize: 1001 }, 'maxSize'],
    [{ maxSize: 7.5 }, 'maxSize'],
    [{ minSize: 100, maxSize: 50 }, 'must not exceed'],
  ])('refuses %j', (opts, message) => {
    expect(() => authRateLimiterSettings(opts)).toThrow(message);
  });
});
