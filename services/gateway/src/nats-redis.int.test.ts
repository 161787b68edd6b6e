import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { principalCacheKey, tokenHash } from '@ziti/http-kit';
import { type Cache, type EventBus, createNatsBus, createRedisCache } from '@ziti/messaging';
import { testInfra } from '@ziti/test-kit';
import { type RunningGateway, startGateway } from './index.js';
import { SECRET, call, startFakeIdentityAuth, startFakeUpstream } from './testing/harness.js';

/** Waits for a condition the system converges to (events are asynchronous); fails after 10 s. */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached within 10 s');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('gateway on real NATS and Redis', () => {
  let dataDir: string;
  let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
  let identityAuth: Awaited<ReturnType<typeof startFakeIdentityAuth>>;
  let gatewayBus: EventBus;
  let publisherBus: EventBus;
  let cache: Cache;
  let gw: RunningGateway;

  beforeAll(async () => {
    const infra = await testInfra();
    dataDir = mkdtempSync(join(tmpdir(), 'gw-real-'));
    upstream = await startFakeUpstream();
    identityAuth = await startFakeIdentityAuth();
    gatewayBus = await createNatsBus({ url: infra.natsUrl, name: 'gateway-test' });
    publisherBus = await createNatsBus({ url: infra.natsUrl, name: 'identity-auth-test' });
    cache = await createRedisCache(infra.redisUrl);
    gw = await startGateway({
      bus: gatewayBus, cache, internalSecret: SECRET, listen: { host: '127.0.0.1', port: 0 }, dataDir,
      upstreams: { 'identity-auth': upstream.url }, identityAuthGrpc: identityAuth.address, log: () => undefined,
    });
  });

  afterAll(async () => {
    await gw?.stop();
    await gatewayBus?.close();
    await publisherBus?.close();
    await cache?.close();
    await upstream?.close();
    await identityAuth?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('caches the principal in Redis and drops it on identity-auth events published by another process', async () => {
    const token = `good-${randomUUID()}`;
    const session = () => call(gw, { path: '/current-api-session', headers: { 'zt-session': token } });
    const calls = () => identityAuth.calls.filter((t) => t === token).length;

    expect((await session()).status).toBe(200);
    expect((await session()).status).toBe(200);
    expect(calls()).toBe(1);
    expect(JSON.parse((await cache.get(principalCacheKey(token)))!).principal.identityId).toBe('id-good');

    await publisherBus.publish({
      id: randomUUID(), type: 'identity.disabled', source: 'identity-auth', occurredAt: new Date().toISOString(),
      data: { identityId: 'id-good', tokenHashes: [tokenHash(token)] },
    });
    await eventually(async () => (await cache.get(principalCacheKey(token))) === null);

    expect((await session()).status).toBe(200);
    expect(calls()).toBe(2);
    await cache.del(principalCacheKey(token));
  });
});
