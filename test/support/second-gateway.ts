import { type GatewayDeps, type RunningGateway, startGateway } from '@ziti/gateway';
import { createNatsBus, createNearCache, createRedisCache } from '@ziti/messaging';
import type { TestController } from './controller.js';
import { HttpClient } from './http.js';

/**
 * A second gateway replica beside a test controller, as a scaled-out deployment runs it: its own
 * NATS and Redis clients (same servers), the same internal secret, data directory (PKI) and
 * upstream services. `RunningController` does not expose its bus, cache or secret, so they are
 * rebuilt from the options the harness passed in.
 */

export interface SecondGateway {
  url: string;
  http: HttpClient;
  stop(): Promise<void>;
}

export interface SecondGatewayOptions {
  /** Its name in the NATS connection and the log. Default `gateway-b`. */
  name?: string;
  /** A short-lived copy of Redis reads in memory, as the all-in-one controller's gateway has. */
  nearCache?: boolean;
  /** Settings of this replica (trusted proxies, limits…). */
  extra?: Partial<GatewayDeps>;
}

export async function startSecondGateway(ctl: TestController, opts: SecondGatewayOptions = {}): Promise<SecondGateway> {
  const { options, running, infra } = ctl;
  const name = opts.name ?? 'gateway-b';
  const bus = await createNatsBus({
    url: options.natsUrl ?? infra.natsUrl,
    stream: options.natsStream,
    subjectPrefix: options.natsSubjectPrefix,
    name: `blackbox-${name}`,
  });
  const redis = await createRedisCache(options.redisUrl ?? infra.redisUrl, { keyPrefix: options.cacheKeyPrefix });
  const cache = opts.nearCache ? createNearCache(redis) : redis;
  const identityAuth = running.services['identity-auth'];
  if (!identityAuth) throw new Error(`no identity-auth among the running services: ${Object.keys(running.services).join(', ')}`);
  let gw: RunningGateway;
  try {
    gw = await startGateway({
      bus,
      cache,
      internalSecret: options.internalSecret!,
      listen: { host: '127.0.0.1', port: 0 },
      dataDir: options.dataDir,
      upstreams: Object.fromEntries(Object.entries(running.services).map(([name, s]) => [name, s.httpUrl])),
      identityAuthGrpc: identityAuth.grpcAddress,
      contextGrpc: Object.fromEntries(Object.entries(running.services).map(([name, s]) => [name, s.grpcAddress])),
      // The same server key as the first replica (derived from the same secret), certified by pki-enrollment.
      pkiEnrollmentGrpc: running.services['pki-enrollment']?.grpcAddress,
      serverKeySecret: options.serverKeySecret!,
      log: (m: string) => ctl.logs.push(`[${name}] ${m}`),
      ...opts.extra,
    });
  } catch (err) {
    await bus.close().catch(() => undefined);
    await cache.close().catch(() => undefined);
    throw err;
  }
  const http = new HttpClient(gw.url, gw.caCertPem);
  return {
    url: gw.url,
    http,
    async stop() {
      http.close();
      await gw.stop();
      await bus.close().catch(() => undefined);
      await cache.close().catch(() => undefined);
    },
  };
}
