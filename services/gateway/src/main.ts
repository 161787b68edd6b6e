import { createNatsBus, createNearCache, createRedisCache } from '@ziti/messaging';
import { guardProcess, onShutdown } from '@ziti/service-kit';
import { loadConfig } from './config.js';
import { SERVICE_NAME, startGateway } from './service.js';

/** Standalone gateway: configuration from the environment, NATS and Redis from their URLs. */
async function main(): Promise<void> {
  guardProcess();
  const config = loadConfig(process.env);
  if (!config.natsUrl) throw new Error('NATS_URL is required');
  if (!config.redisUrl) throw new Error('REDIS_URL is required');
  const log = (m: string) => console.log(`[${SERVICE_NAME}] ${m}`);

  const bus = await createNatsBus({ url: config.natsUrl, name: SERVICE_NAME });
  // Principals read here are served from memory for up to a second; drops made by identity-auth reach
  // that copy through the invalidation events (at the latest after that second).
  const redis = await createRedisCache(config.redisUrl);
  const cache = createNearCache(redis);
  const gateway = await startGateway({
    bus,
    cache,
    sharedCache: redis,
    internalSecret: config.internalSecret,
    listen: config.listen,
    advertisedAddress: config.advertisedAddress,
    extraSans: config.extraSans,
    dataDir: config.dataDir,
    upstreams: config.upstreams,
    identityAuthGrpc: config.identityAuthGrpc,
    pkiEnrollmentGrpc: config.pkiEnrollmentGrpc,
    contextGrpc: config.contextGrpc,
    snapshotDir: config.snapshotDir,
    instanceId: config.instanceId,
    revision: config.revision,
    trustedProxies: config.trustedProxies,
    trustedProxyHeader: config.trustedProxyHeader,
    authRateLimiter: config.authRateLimiter,
    loginFailureLimits: config.loginFailureLimits,
    consoleDir: config.consoleDir,
    log,
  });
  log(`ready at ${gateway.url}`);

  onShutdown(async () => {
    await gateway.stop();
    await bus.close();
    await cache.close();
  }, log);
}

main().catch((err: unknown) => {
  console.error(`[${SERVICE_NAME}] failed to start:`, err instanceof Error ? err.message : err);
  process.exit(1);
});
