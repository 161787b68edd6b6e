import type { Cache } from './types.js';

/** Options of {@link createMemoryCache}; all optional. */
export interface MemoryCacheOptions {
  /** Entries kept; beyond it the least recently written entry is evicted. Default 100 000. */
  maxEntries?: number;
  /** Clock in epoch milliseconds (tests). Default `Date.now`. */
  now?: () => number;
}

/** Throws unless `ttlSeconds` is a positive finite number (shared by both caches). */
export function assertTtl(ttlSeconds: number): void {
  if (typeof ttlSeconds !== 'number' || !Number.isFinite(ttlSeconds) || ttlSeconds <= 0) {
    throw new RangeError(`cache ttlSeconds must be a positive number, got ${ttlSeconds}`);
  }
}

/**
 * The in-memory cache of the embedded controller (one process), same contract as Redis:
 * string values, a TTL on every entry (`ttlSeconds` > 0, fractions allowed), `del` of absent
 * keys is a no-op. Bounded: past `maxEntries` the oldest-written entry is evicted first.
 */
export function createMemoryCache(opts: MemoryCacheOptions = {}): Cache {
  const maxEntries = opts.maxEntries ?? 100_000;
  const now = opts.now ?? Date.now;
  // Map iteration order is insertion order: re-inserting on set keeps the oldest write first.
  const entries = new Map<string, { value: string; expiresAt: number }>();
  return {
    async get(key) {
      const e = entries.get(key);
      if (!e) return null;
      if (e.expiresAt <= now()) {
        entries.delete(key);
        return null;
      }
      return e.value;
    },
    async set(key, value, ttlSeconds) {
      assertTtl(ttlSeconds);
      entries.delete(key);
      entries.set(key, { value: String(value), expiresAt: now() + Math.ceil(ttlSeconds * 1000) });
      while (entries.size > maxEntries) entries.delete(entries.keys().next().value as string);
    },
    async del(...keys) {
      for (const k of keys) entries.delete(k);
    },
    async close() {
      entries.clear();
    },
  };
}
