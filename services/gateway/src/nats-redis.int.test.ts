import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { principalCacheKey, revocationMarkerKey, tokenHash } from '@ziti/http-kit';
import { type Cache, type EventBus, createNatsBus, createNearCache, createRedisCache } from '@ziti/messaging';
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

  it('refuses a bearer token at once when another process sets its revocation marker, though its principal is near-cached', async () => {
    // The gateway as main.ts runs it (a near cache in front of Redis), here with a near copy kept for 30 s.
    const near = createNearCache(await createRedisCache((await testInfra()).redisUrl), { ttlSeconds: 30 });
    const nearGw = await startGateway({
      bus: gatewayBus, cache: near, internalSecret: SECRET, listen: { host: '127.0.0.1', port: 0 }, dataDir,
      upstreams: { 'identity-auth': upstream.url }, identityAuthGrpc: identityAuth.address, log: () => undefined,
    });
    const sec = Math.floor(Date.now() / 1000);
    const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const jti = randomUUID();
    const token = `${part({ alg: 'ES256', typ: 'JWT' })}.${part({ sub: 'id-good', jti, z_asid: randomUUID(), iat: sec, exp: sec + 600, z_t: 'a' })}.good`;
    const marker = revocationMarkerKey('JTI', jti);
    const request = () => call(nearGw, { path: '/current-identity', headers: { authorization: `Bearer ${token}` } });
    try {
      expect((await request()).status).toBe(200);
      expect((await request()).status).toBe(200);
      expect(identityAuth.accessTokens.filter((t) => t === token)).toHaveLength(1);
      await cache.set(marker, String(Date.now()), 60); // identity-auth's revocation, from another Redis client
      const refused = await request();
      expect(refused.status).toBe(401);
      expect(refused.headers['www-authenticate']).toBe('Bearer realm="openziti-oidc" error="invalid" error_description="token is invalid"');
      expect(await cache.get(principalCacheKey(token))).toBeNull();
    } finally {
      await nearGw.stop();
      await near.close();
      await cache.del(marker, principalCacheKey(token));
    }
  });
});
