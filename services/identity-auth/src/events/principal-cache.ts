import { randomBytes } from 'node:crypto';
import { PRINCIPAL_GENERATION_TTL_SECONDS, principalCacheEntry, principalCacheKey, principalGenerationKey } from '@ziti/http-kit';
import type { Cache } from '@ziti/messaging';
import type { PrincipalCache } from '../domain/ports.js';

/**
 * Puts a new session's principal into the gateway's cache (at login), and drops gateway-cached principals (`principalCacheKey(token)`) from the shared cache, after the
 * change committed; `renew` starts a new principal generation of identities (bearer principals). A cache failure is logged, not thrown: the change is done, the outbox event
 * carries the same token hashes, and cache entries expire within 30 s anyway.
 */
export function sharedPrincipalCache(cache: Cache, log: (msg: string) => void): PrincipalCache {
  return {
    async drop(tokens) {
      if (tokens.length === 0) return;
      try {
        await cache.del(...tokens.map(principalCacheKey));
      } catch (err) {
        log(`identity-auth: dropping ${tokens.length} cached principal(s) failed: ${(err as Error).message}`);
      }
    },
    async renew(identityIds) {
      for (const id of identityIds) {
        try {
          await cache.set(principalGenerationKey(id), `${Date.now()}.${randomBytes(6).toString('base64url')}`, PRINCIPAL_GENERATION_TTL_SECONDS);
        } catch (err) {
          log(`identity-auth: starting a new principal generation of ${id} failed (its bearer principals stay cached up to 30 s): ${(err as Error).message}`);
        }
      }
    },
    async put(token, principal, ttlSeconds) {
      if (ttlSeconds < 1) return;
      try {
        await cache.set(principalCacheKey(token), principalCacheEntry(principal, ttlSeconds, Date.now()), ttlSeconds);
      } catch (err) {
        log(`identity-auth: caching a new session's principal failed: ${(err as Error).message}`);
      }
    },
  };
}
