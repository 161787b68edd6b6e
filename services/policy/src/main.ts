import { metricsPort, startMetricsServer } from '@ziti/metrics';
import { probePostgres } from '@ziti/db-kit';
import { createNatsBus, createRedisCache } from '@ziti/messaging';
import { guardProcess, lifecycleConfig, onShutdown, servePending, waitForDependency } from '@ziti/service-kit';
import { loadConfig } from './config.js';
import { SERVICE_NAME } from './schema.js';
import { startService } from './service.js';

// A start waits for NATS, Redis and PostgreSQL (ZITI_DEPENDENCY_WAIT_SECONDS), its HTTP port answering
// not-ready meanwhile; SIGTERM drains (ZITI_SHUTDOWN_GRACE_SECONDS) and stops what was opened.
async function main(): Promise<void> {
  guardProcess();
  const config = loadConfig(process.env);
  const lifecycle = lifecycleConfig(process.env);
  const log = (m: string) => console.log(`${SERVICE_NAME}: ${m}`);
  const opened: (() => Promise<unknown>)[] = [];
  onShutdown(
    async () => {
      for (const close of opened.splice(0).reverse()) await close();
    },
    log,
    { graceMs: lifecycle.shutdownGraceMs },
  );
  const pending = await servePending(SERVICE_NAME, config.http.host, config.http.port);
  opened.push(() => pending.close());
  const wait = { timeoutMs: lifecycle.dependencyWaitMs, log };
  const bus = await waitForDependency('NATS', () => createNatsBus({ url: config.natsUrl }), wait);
  opened.push(() => bus.close());
  const cache = await waitForDependency('Redis', () => createRedisCache(config.redisUrl), wait);
  opened.push(() => cache.close());
  await waitForDependency('PostgreSQL', () => probePostgres(config.databaseUrl), wait);
  await pending.close();
  const service = await startService({ ...config, bus, cache, log: console.log });
  opened.push(() => service.stop());
  // Prometheus metrics on a port of their own (`POLICY_METRICS_PORT`, else `ZITI_METRICS_PORT`; 0 = off).
  const metrics = await startMetricsServer(config.http.host, metricsPort(process.env, 'policy', 9103));
  opened.push(() => metrics.stop());
}

main().catch((err: unknown) => {
  console.error(`${SERVICE_NAME}: not started:`, err instanceof Error ? err.message : err);
  process.exit(1);
});
