import { probePostgres } from '@ziti/db-kit';
import { configureLogging, lineLogger, logger } from '@ziti/log';
import { type Cache, type EventBus, createNatsBus, createRedisCache } from '@ziti/messaging';
import { metricsHost, metricsPort, startMetricsServer } from '@ziti/metrics';
import type { ContextConfig } from './context-config.js';
import { type ContextName, holdInternalCredentials, watchInternalTlsDir } from './internal-tls.js';
import { guardProcess, lifecycleConfig, onShutdown, requireEnv, servePending, waitForDependency } from './process.js';

export interface ContextProcess<C extends ContextConfig> {
  /** The context's name (`identity-auth`, …): the `context` of its log lines, metrics label, NATS connection name, internal identity. */
  name: ContextName;
  /** Its metrics port when neither `<CONTEXT>_METRICS_PORT` nor `ZITI_METRICS_PORT` is set. */
  metricsPort: number;
  loadConfig(env: NodeJS.ProcessEnv): C;
  start(config: C, deps: { bus: EventBus; cache: Cache }): Promise<{ httpUrl: string; grpcAddress: string; stop(): Promise<unknown> }>;
}

/**
 * The standalone process of a context (`npm start -w @ziti/<context>`): its internal identity is
 * read from `ZITI_INTERNAL_TLS_DIR` (the start fails without a valid one); its HTTP port answers
 * not-ready while it waits for NATS, Redis and PostgreSQL (`ZITI_DEPENDENCY_WAIT_SECONDS`, one log
 * line per dependency), then the context starts with metrics on a port of their own; SIGTERM
 * drains (`ZITI_SHUTDOWN_GRACE_SECONDS`) and closes what was opened, newest first. A start that
 * fails exits 1 with one line naming why.
 */
export function runContextProcess<C extends ContextConfig>(ctx: ContextProcess<C>): void {
  const contextLog = logger(ctx.name);
  const log = lineLogger(contextLog);
  const main = async () => {
    // First: an unknown ZITI_LOG_LEVEL or ZITI_LOG_FORMAT fails the start.
    configureLogging();
    guardProcess();
    const config = ctx.loadConfig(process.env);
    const lifecycle = lifecycleConfig(process.env);
    const opened: (() => Promise<unknown>)[] = [];
    // Its internal identity (mutual TLS with the other contexts), re-read when cert-manager renews it.
    const tls = watchInternalTlsDir(requireEnv(process.env, 'ZITI_INTERNAL_TLS_DIR'), ctx.name, log);
    holdInternalCredentials(tls.credentials);
    opened.push(async () => tls.stop());
    onShutdown(
      async () => {
        for (const close of opened.splice(0).reverse()) await close();
      },
      log,
      { graceMs: lifecycle.shutdownGraceMs },
    );
    const pending = await servePending(ctx.name, config.http.host, config.http.port);
    opened.push(() => pending.close());
    const wait = { timeoutMs: lifecycle.dependencyWaitMs, log };
    const bus = await waitForDependency('NATS', () => createNatsBus({ url: config.natsUrl, name: ctx.name }), wait);
    opened.push(() => bus.close());
    const cache = await waitForDependency('Redis', () => createRedisCache(config.redisUrl), wait);
    opened.push(() => cache.close());
    await waitForDependency('PostgreSQL', () => probePostgres(config.databaseUrl), wait);
    await pending.close();
    const service = await ctx.start(config, { bus, cache });
    opened.push(() => service.stop());
    // Prometheus metrics on a port of their own (`<CONTEXT>_METRICS_PORT`, else `ZITI_METRICS_PORT`; 0 = off).
    const metrics = await startMetricsServer(metricsHost(process.env), metricsPort(process.env, ctx.name, ctx.metricsPort));
    opened.push(() => metrics.stop());
    log(`HTTP ${service.httpUrl}, gRPC ${service.grpcAddress}${metrics.port ? `, metrics on ${metricsHost(process.env)}:${metrics.port}` : ''}`);
  };
  main().catch((err: unknown) => {
    contextLog.fatal(`not started: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
