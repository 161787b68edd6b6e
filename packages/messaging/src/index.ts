export type { ChangeEvent, EventHandler, Subscription, EventBus, Cache } from './types.js';
export { type NatsBusOptions, createNatsBus } from './nats-bus.js';
export { type InProcessBusOptions, type InProcessEventBus, createInProcessBus } from './in-process-bus.js';
export { type MemoryCache, type MemoryCacheOptions, createMemoryCache } from './memory-cache.js';
export { type NearCacheOptions, createNearCache } from './near-cache.js';
export { type RedisCacheOptions, createRedisCache } from './redis-cache.js';
export {
  type SqlPool,
  type SqlQueryable,
  type OutboxRow,
  type OutboxRelay,
  type OutboxRelayOptions,
  OUTBOX_TABLE_SQL,
  newChangeEvent,
  outboxInsert,
  writeOutboxEvents,
  startOutboxRelay,
  runWithOutbox,
  runPrismaWithOutbox,
  type PrismaOutboxClient,
  type PrismaOutboxTx,
} from './outbox.js';
export { type Logger, typeMatches } from './subjects.js';
