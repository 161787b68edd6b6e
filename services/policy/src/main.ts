import { metricsPort, startMetricsServer } from '@ziti/metrics';
import { createNatsBus, createRedisCache } from '@ziti/messaging';
import { guardProcess, onShutdown } from '@ziti/service-kit';
import { loadConfig } from './config.js';
import { startService } from './service.js';

async function main(): Promise<void> {
  guardProcess();
  const config = loadConfig(process.env);
  const bus = await createNatsBus({ url: config.natsUrl });
  const cache = await createRedisCache(config.redisUrl);
  const service = await startService({ ...config, bus, cache, log: console.log });
  // Prometheus metrics on a port of their own (`POLICY_METRICS_PORT`, else `ZITI_METRICS_PORT`; 0 = off).
  const metrics = await startMetricsServer(config.http.host, metricsPort(process.env, 'policy', 9103));
  onShutdown(async () => {
    await service.stop();
    await metrics.stop();
    await bus.close();
    await cache.close();
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
