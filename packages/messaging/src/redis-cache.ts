import { dependencies, describeFailure } from '@ziti/errors';
import Redis from 'ioredis';
import { assertTtl } from './memory-cache.js';
import type { Logger } from './subjects.js';
import type { Cache } from './types.js';

/** INCR, and the window's expiry on the first increment only (one script: atomic, one round trip). */
const INCREMENT_LUA = `local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

/** How long a Redis command may take before it fails (Redis answers in well under a millisecond). */
export const REDIS_COMMAND_TIMEOUT_MS = 2_000;

/** Options of {@link createRedisCache}. */
export interface RedisCacheOptions {
  /** Prepended to every key (e.g. `ziti:gateway:`), so several users can share one Redis. */
  keyPrefix?: string;
  /** Where connection trouble is reported (once per outage). Default the `dependencies` monitor of `@ziti/errors`. */
  log?: Logger;
}

/**
 * The Redis cache. Connects before resolving (rejects when Redis does not answer) and
 * reconnects by itself afterwards. `set` writes with a millisecond TTL (`SET key value PX`),
 * `setIfAbsent` with `NX` too, `mget` is one `MGET` (none for no keys), `increment` runs INCR and sets the window on the first increment,
 * `del` of no keys is a no-op, `close` quits gracefully.
 */
export async function createRedisCache(url: string, opts: RedisCacheOptions = {}): Promise<Cache> {
  let started = false;
  const redis = new Redis(url, {
    keyPrefix: opts.keyPrefix,
    lazyConnect: true,
    maxRetriesPerRequest: 3,
    // A Redis that takes a command and never answers (a stalled server, a black-holed network)
    // fails the command instead of holding its request: 503 `SERVICE_UNAVAILABLE` upstream.
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    // Commands issued in the same turn of the event loop (principal lookups of concurrent requests) share one write.
    enableAutoPipelining: true,
    // No retries before the first connection (fail fast); afterwards reconnect forever.
    retryStrategy: (times) => (started ? Math.min(times * 200, 2_000) : null),
  });
  // ioredis reconnects by itself; an outage is reported once each way by the process's
  // `dependencies` monitor, or to `log` when given (the first connection's failure is reported by
  // rejecting instead).
  const log = opts.log;
  let healthy = false;
  redis.on('ready', () => {
    if (started && !healthy && !log) dependencies.up('redis');
    healthy = true;
  });
  redis.on('error', (err) => {
    if (healthy) {
      if (log) log('Redis connection error (reconnecting)', err);
      else dependencies.lost('redis', describeFailure(err));
    }
    healthy = false;
  });
  try {
    await redis.connect();
  } catch (err) {
    // Once ended, disconnect() would leave a 2 s timer behind on the dead socket.
    if (redis.status !== 'end') redis.disconnect();
    throw err;
  }
  started = true;
  redis.defineCommand('zitiIncrement', { numberOfKeys: 1, lua: INCREMENT_LUA });
  const incr = redis as Redis & { zitiIncrement(key: string, ttlMs: number): Promise<number> };
  return {
    async get(key) {
      return redis.get(key);
    },
    async mget(keys) {
      return keys.length === 0 ? [] : redis.mget(...keys);
    },
    async set(key, value, ttlSeconds) {
      assertTtl(ttlSeconds);
      await redis.set(key, value, 'PX', Math.ceil(ttlSeconds * 1000));
    },
    async setIfAbsent(key, value, ttlSeconds) {
      assertTtl(ttlSeconds);
      return (await redis.set(key, value, 'PX', Math.ceil(ttlSeconds * 1000), 'NX')) === 'OK';
    },
    async increment(key, ttlSeconds) {
      assertTtl(ttlSeconds);
      return Number(await incr.zitiIncrement(key, Math.ceil(ttlSeconds * 1000)));
    },
    async del(...keys) {
      if (keys.length > 0) await redis.del(...keys);
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
