import { configureLogging, lineLogger, logger } from '@ziti/log';
import { metricsHost, metricsPort, startMetricsServer } from '@ziti/metrics';
import { createNatsBus, createNearCache, createRedisCache } from '@ziti/messaging';
import { guardProcess, holdInternalCredentials, lifecycleConfig, onShutdown, requireEnv, waitForDependency, watchInternalTlsDir } from '@ziti/service-kit';
import { loadConfig } from './config.js';
import { SERVICE_NAME, startGateway } from './service.js';

/** Standalone gateway: configuration from the environment, NATS and Redis from their URLs. */
const gatewayLog = logger(SERVICE_NAME);

async function main(): Promise<void> {
  // First: an unknown ZITI_LOG_LEVEL or ZITI_LOG_FORMAT fails the start.
  configureLogging();
  guardProcess();
  const config = loadConfig(process.env);
  if (!config.natsUrl) throw new Error('NATS_URL is required');
  if (!config.redisUrl) throw new Error('REDIS_URL is required');
  const log = lineLogger(gatewayLog);
  const lifecycle = lifecycleConfig(process.env);
  // Everything opened so far, closed in reverse order on SIGTERM (also while still waiting for a dependency).
  const opened: (() => Promise<unknown>)[] = [];
  onShutdown(
    async () => {
      for (const close of opened.splice(0).reverse()) await close();
    },
    log,
    { graceMs: lifecycle.shutdownGraceMs },
  );
  // The gateway's internal identity: the contexts answer only it (mutual TLS), re-read when renewed.
  const internalTls = watchInternalTlsDir(requireEnv(process.env, 'ZITI_INTERNAL_TLS_DIR'), 'gateway', log);
  holdInternalCredentials(internalTls.credentials);
  opened.push(async () => internalTls.stop());
  const wait = { timeoutMs: lifecycle.dependencyWaitMs, log };
  const natsUrl = config.natsUrl;
  const bus = await waitForDependency('NATS', () => createNatsBus({ url: natsUrl, name: SERVICE_NAME }), wait);
  opened.push(() => bus.close());
  // Principals read here are served from memory for up to a second; drops made by identity-auth reach
  // that copy through the invalidation events (at the latest after that second).
  const redisUrl = config.redisUrl;
  const redis = await waitForDependency('Redis', () => createRedisCache(redisUrl), wait);
  const cache = createNearCache(redis);
  opened.push(() => cache.close());
  const gateway = await startGateway({
    bus,
    cache,
    sharedCache: redis,
    internalSecret: config.internalSecret,
    serverKeySecret: config.serverKeySecret,
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
    events: config.events,
    // pki-enrollment (the TLS credentials) is waited for as long as the other dependencies.
    pkiWaitMs: lifecycle.dependencyWaitMs,
    shutdownGraceMs: lifecycle.shutdownGraceMs,
    log,
  });
  // Prometheus metrics on a port of their own (`ZITI_METRICS_PORT`, default 9100; 0 = off), never on the API listener.
  const metrics = await startMetricsServer(metricsHost(process.env), metricsPort(process.env, 'gateway', 9100));
  log(`ready at ${gateway.url}${metrics.port ? `, metrics on port ${metrics.port}` : ''}`);

  opened.push(() => gateway.stop());
  opened.push(() => metrics.stop());
}

main().catch((err: unknown) => {
  gatewayLog.fatal(`not started: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
