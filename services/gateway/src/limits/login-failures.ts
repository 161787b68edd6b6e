import { createHash } from 'node:crypto';
import type { Cache } from '@ziti/messaging';
import { addressLimitKey } from '../http/client-address.js';

/**
 * Failed-login limits, shared by every gateway replica through the cache: failures are counted
 * per username (password logins) and per client address (every method) in fixed windows
 * (`Cache.increment`: the first failure of a key opens its window, the count ends with it). While
 * a key's count is at its limit, logins carrying it are refused before they reach identity-auth.
 *
 * The hot path of a login under the limits is one cache read per key (both in parallel); a
 * success writes nothing. Counting follows the answer, so attempts already under way when a key
 * reaches its limit still complete.
 */

/** Settings of the failed-login limits. A limit of 0 turns that limit off. */
export interface LoginLimitOptions {
  /** Failed password logins per username per window; default 10. */
  perUsername?: number;
  /** Failed logins (any method) per client address (IPv6: per /64) per window; default 30. */
  perAddress?: number;
  /** Window length in seconds; default 60. */
  windowSeconds?: number;
}

export const LOGIN_LIMIT_DEFAULTS = { perUsername: 10, perAddress: 30, windowSeconds: 60 } as const;

/** One counted key of a login attempt and the count at which it is refused. */
export interface LimitCounter {
  key: string;
  limit: number;
}

/** Cache key prefix of the counters. */
export const LOGIN_FAILURE_KEY_PREFIX = 'ziti:gateway:login-failures:';
/**
 * How long this process refuses a key by itself after it counted the key's limit. A read may be
 * served from the near cache's copy for up to a second; this keeps a burst on this replica from
 * passing on such a stale count.
 */
const KNOWN_THROTTLED_MS = 1000;
/** Keys remembered as throttled before expired ones are swept. */
const KNOWN_THROTTLED_MAX = 10_000;

/** Validates the settings, naming the offending one; answers them with the defaults applied. */
export function loginLimitSettings(opts: LoginLimitOptions = {}): Required<LoginLimitOptions> {
  const s = {
    perUsername: opts.perUsername ?? LOGIN_LIMIT_DEFAULTS.perUsername,
    perAddress: opts.perAddress ?? LOGIN_LIMIT_DEFAULTS.perAddress,
    windowSeconds: opts.windowSeconds ?? LOGIN_LIMIT_DEFAULTS.windowSeconds,
  };
  for (const key of ['perUsername', 'perAddress'] as const) {
    if (!Number.isInteger(s[key]) || s[key] < 0) throw new Error(`loginFailureLimits.${key} must be an integer ≥ 0 (0: off), got ${s[key]}`);
  }
  if (!Number.isInteger(s.windowSeconds) || s.windowSeconds < 1 || s.windowSeconds > 3600) {
    throw new Error(`loginFailureLimits.windowSeconds must be an integer in 1..3600, got ${s.windowSeconds}`);
  }
  return s;
}

export class LoginFailureLimits {
  private readonly settings: Required<LoginLimitOptions>;
  private readonly throttledUntil = new Map<string, number>();
  private lastLogged = 0;

  constructor(
    private readonly cache: Cache,
    opts: LoginLimitOptions = {},
    private readonly log: (m: string) => void = () => undefined,
    private readonly now: () => number = Date.now,
  ) {
    this.settings = loginLimitSettings(opts);
  }

  /** True when at least one limit is on. */
  get enabled(): boolean {
    return this.settings.perUsername > 0 || this.settings.perAddress > 0;
  }

  /** The counters a login from `address` (for `username`, a password login) is checked against. */
  counters(address: string, username?: string): LimitCounter[] {
    const out: LimitCounter[] = [];
    const { perUsername, perAddress } = this.settings;
    if (perAddress > 0 && address) out.push({ key: `${LOGIN_FAILURE_KEY_PREFIX}addr:${addressLimitKey(address)}`, limit: perAddress });
    if (perUsername > 0 && username !== undefined) {
      // Hashed: a username may be up to the body limit long, and keys should not carry it in clear.
      out.push({ key: `${LOGIN_FAILURE_KEY_PREFIX}user:${createHash('sha256').update(username).digest('base64url')}`, limit: perUsername });
    }
    return out;
  }

  /**
   * True when one of the counters is at its limit. One cache read per counter (none for a key this
   * process saw reach its limit within the last second). A cache that fails lets the login through.
   */
  async throttled(counters: readonly LimitCounter[]): Promise<boolean> {
    if (counters.length === 0) return false;
    const t = this.now();
    for (const c of counters) if ((this.throttledUntil.get(c.key) ?? 0) > t) return true;
    try {
      const counts = await Promise.all(counters.map((c) => this.cache.get(c.key)));
      return counters.some((c, i) => Number(counts[i] ?? 0) >= c.limit);
    } catch (err) {
      this.report(`login failure counters could not be read (logins are let through): ${(err as Error).message}`);
      return false;
    }
  }

  /** Counts one failed login against each counter (in parallel). Never throws. */
  async recordFailure(counters: readonly LimitCounter[]): Promise<void> {
    const ttl = this.settings.windowSeconds;
    await Promise.all(
      counters.map(async (c) => {
        try {
          const count = await this.cache.increment(c.key, ttl);
          if (count >= c.limit) this.remember(c.key);
        } catch (err) {
          this.report(`a failed login could not be counted: ${(err as Error).message}`);
        }
      }),
    );
  }

  private remember(key: string): void {
    const t = this.now();
    if (this.throttledUntil.size >= KNOWN_THROTTLED_MAX) {
      for (const [k, until] of this.throttledUntil) if (until <= t) this.throttledUntil.delete(k);
      if (this.throttledUntil.size >= KNOWN_THROTTLED_MAX) this.throttledUntil.delete(this.throttledUntil.keys().next().value as string);
    }
    this.throttledUntil.set(key, t + Math.min(KNOWN_THROTTLED_MS, this.settings.windowSeconds * 1000));
  }

  /** Logs cache trouble at most once every 10 s. */
  private report(message: string): void {
    const t = this.now();
    if (t - this.lastLogged < 10_000) return;
    this.lastLogged = t;
    this.log(message);
  }
}
