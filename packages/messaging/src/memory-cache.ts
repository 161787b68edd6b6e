import type { Cache } from './types.js';

/** Options of {@link createMemoryCache}; all optional. */
export interface MemoryCacheOptions {
  /** Entries kept; beyond it the least recently written entry is evicted. Default 100 000. */
  maxEntries?: number;
  /** Clock in epoch milliseconds (tests). Default `Date.now`. */
  now?: () => number;
}

/** The in-memory cache: the shared contract, and how many entries it holds (expired ones not yet swept included). */
export interface MemoryCache extends Cache {
  size(): number;
}

/** How often a write also drops every expired entry (ms). */
const SWEEP_INTERVAL_MS = 1000;

/** Throws unless `ttlSeconds` is a positive finite number (shared by both caches). */
export function assertTtl(ttlSeconds: number): void {
  if (typeof ttlSeconds !== 'number' || !Number.isFinite(ttlSeconds) || ttlSeconds <= 0) {
    throw new RangeError(`cache ttlSeconds must be a positive number, got ${ttlSeconds}`);
  }
}

/**
 * The in-memory cache of the embedded controller (one process), same contract as Redis:
 * string values, a TTL on every entry (`ttlSeconds` > 0, fractions allowed), `del` of absent
 * keys is a no-op. Expired entries go as Redis lets them go: when read, and in a sweep that a
 * write runs at most once a second, so entries nobody reads again (a login's cached principal)
 * do not stay until `maxEntries` pushes them out. Bounded: past `maxEntries` the oldest-written
 * entry is evicted first.
 */
export function createMemoryCache(opts: MemoryCacheOptions = {}): MemoryCache {
  const maxEntries = opts.maxEntries ?? 100_000;
  const now = opts.now ?? Date.now;
  // Map iteration order is insertion order: re-inserting on set keeps the oldest write first.
  const entries = new Map<string, { value: string; expiresAt: number }>();
  let nextSweep = 0;
  const sweep = (t: number) => {
    nextSweep = t + SWEEP_INTERVAL_MS;
    for (const [key, e] of entries) if (e.expiresAt <= t) entries.delete(key);
  };
  const live = (key: string) => {
    const e = entries.get(key);
    if (!e) return undefined;
    if (e.expiresAt <= now()) {
      entries.delete(key);
      return undefined;
    }
    return e;
  };
  const write = (key: string, value: string, expiresAt: number) => {
    const t = now();
    if (t >= nextSweep) sweep(t);
    entries.delete(key);
    entries.set(key, { value, expiresAt });
    while (entries.size > maxEntries) entries.delete(entries.keys().next().value as string);
  };
  const expiry = (ttlSeconds: number) => now() + Math.ceil(ttlSeconds * 1000);
  return {
    async get(key) {
      return live(key)?.value ?? null;
    },
    async mget(keys) {
      return keys.map((key) => live(key)?.value ?? null);
    },
    async set(key, value, ttlSeconds) {
      assertTtl(ttlSeconds);
      write(key, String(value), expiry(ttlSeconds));
    },
    async setIfAbsent(key, value, ttlSeconds) {
      assertTtl(ttlSeconds);
      if (live(key)) return false;
      write(key, String(value), expiry(ttlSeconds));
      return true;
    },
    async increment(key, ttlSeconds) {
      assertTtl(ttlSeconds);
      const e = live(key);
      const count = (e ? Number.parseInt(e.value, 10) || 0 : 0) + 1;
      write(key, String(count), e ? e.expiresAt : expiry(ttlSeconds));
      return count;
    },
    async del(...keys) {
      for (const k of keys) entries.delete(k);
    },
    async close() {
      entries.clear();
    },
    size: () => entries.size,
  };
}
