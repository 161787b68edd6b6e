import { principalCacheKey, tokenHash } from '@ziti/http-kit';
import { createInProcessBus, createMemoryCache } from '@ziti/messaging';
import { INVALIDATING_EVENTS, subscribeCacheInvalidation } from './cache-invalidation.js';

describe('principal cache invalidation', () => {
  it.each(INVALIDATING_EVENTS)('drops the cached principals named by %s', async (type) => {
    const bus = createInProcessBus();
    const cache = createMemoryCache();
    const sub = await subscribeCacheInvalidation(bus, cache);
    await cache.set(principalCacheKey('tok-a'), '{}', 60);
    await cache.set(principalCacheKey('tok-b'), '{}', 60);
    await cache.set(principalCacheKey('tok-c'), '{}', 60);

    await bus.publish({
      id: `e-${type}`, type, source: 'identity-auth', occurredAt: new Date().toISOString(),
      data: { tokenHashes: [tokenHash('tok-a'), tokenHash('tok-b')] },
    });
    await bus.idle();

    expect(await cache.get(principalCacheKey('tok-a'))).toBeNull();
    expect(await cache.get(principalCacheKey('tok-b'))).toBeNull();
    expect(await cache.get(principalCacheKey('tok-c'))).toBe('{}');
    await sub.stop();
    await bus.close();
  });

  it('ignores other sources and events without token hashes', async () => {
    const bus = createInProcessBus();
    const cache = createMemoryCache();
    const sub = await subscribeCacheInvalidation(bus, cache);
    await cache.set(principalCacheKey('tok'), '{}', 60);
    const base = { occurredAt: new Date().toISOString() };
    await bus.publish({ ...base, id: '1', type: 'api-session.deleted', source: 'policy', data: { tokenHashes: [tokenHash('tok')] } });
    await bus.publish({ ...base, id: '2', type: 'identity.updated', source: 'identity-auth', data: { identityId: 'x' } });
    await bus.idle();
    expect(await cache.get(principalCacheKey('tok'))).toBe('{}');
    await sub.stop();
    await bus.close();
  });
});
