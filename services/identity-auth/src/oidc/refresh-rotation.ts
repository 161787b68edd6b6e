import type { Cache } from '@ziti/messaging';

/** A refresh token's use, as every replica sees it: being rotated now, or rotated away. */
export type RefreshUse = 'claimed' | 'in-use' | 'rotated';

const IN_USE = 'in-use';
const ROTATED = 'rotated';
const useKey = (jti: string) => `ziti:oidc:refresh-use:${jti}`;

/**
 * The single use of refresh tokens (RFC 9700 §4.14.2), in the shared cache so that every replica
 * agrees: a refresh claims the token's `jti` with `setIfAbsent` (one of any number of parallel
 * refreshes wins), marks it rotated once the new tokens exist, or releases it when the refresh
 * failed. A rotated token presented again is a replay: its whole family (the API session) ends.
 * The mark lives as long as the token could verify; the token's JTI revocation refuses it too.
 */
export class RefreshRotation {
  constructor(
    private readonly cache: Cache,
    private readonly now: () => number = Date.now,
  ) {}

  /** Claims the token for one rotation: `claimed` for the one caller that may rotate it. */
  async claim(jti: string, exp: number): Promise<RefreshUse> {
    if (await this.cache.setIfAbsent(useKey(jti), IN_USE, this.ttl(exp))) return 'claimed';
    return (await this.use(jti)) ?? 'in-use';
  }

  /** The token was rotated away (its successor issued). */
  async rotated(jti: string, exp: number): Promise<void> {
    await this.cache.set(useKey(jti), ROTATED, this.ttl(exp));
  }

  /** The claimed rotation failed: the token may be used again. */
  async release(jti: string): Promise<void> {
    await this.cache.del(useKey(jti));
  }

  /** How the token was used so far (read fresh from the shared cache); null when never. */
  async use(jti: string): Promise<Exclude<RefreshUse, 'claimed'> | null> {
    const [value] = await this.cache.mget([useKey(jti)]);
    return value === ROTATED ? 'rotated' : value === IN_USE ? 'in-use' : null;
  }

  /** Seconds until the token expires (at least one). */
  private ttl(exp: number): number {
    return Math.max(1, Math.ceil(exp - this.now() / 1000));
  }
}
