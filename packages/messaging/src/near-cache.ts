import { createMemoryCache } from './memory-cache.js';
import type { Cache } from './types.js';

/** Options of {@link createNearCache}. */
export interface NearCacheOptions {
  /** How long a value read from the shared cache is served from memory. Default 1 s. */
  ttlSeconds?: number;
  /** Entries kept in memory. Default 10 000. */
  maxEntries?: number;
  /** Clock in epoch milliseconds (tests). */
  now?: () => number;
}

/**
 * A shared cache (Redis) with a short-lived copy in this process's memory in front of it: a value
 * read or written here is served from memory for up to `ttlSeconds` (never past its own TTL) without
 * a round trip. `mget`, `setIfAbsent` and `increment` always go to the shared cache (`mget` neither reads nor fills the memory copy: it is for what must be read fresh). `del` through this object drops both at once; a `del` made elsewhere (another
 * replica) reaches this copy when the replica's invalidation event does, and at the latest after
 * `ttlSeconds`. Misses are not remembered.
 */
export function createNearCache(inner: Cache, opts: NearCacheOptions = {}): Cache {
  const nearTtl = opts.ttlSeconds ?? 1;
  const near = createMemoryCache({ maxEntries: opts.maxEntries ?? 10_000, now: opts.now });
  return {
    async get(key) {
      const local = await near.get(key);
      if (local !== null) return local;
      const value = await inner.get(key);
      if (value !== null) await near.set(key, value, nearTtl);
      return value;
    },
    mget: (keys) => inner.mget(keys),
    async set(key, value, ttlSeconds) {
      await inner.set(key, value, ttlSeconds);
      await near.set(key, value, Math.min(nearTtl, ttlSeconds));
    },
    setIfAbsent: (key, value, ttlSeconds) => inner.setIfAbsent(key, value, ttlSeconds),
    increment: (key, ttlSeconds) => inner.increment(key, ttlSeconds),
    async del(...keys) {
      await near.del(...keys);
      await inner.del(...keys);
    },
    async close() {
      await near.close();
      await inner.close();
    },
  };
}
