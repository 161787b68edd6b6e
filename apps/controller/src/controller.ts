import { mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import * as gateway from '@ziti/gateway';
import * as identityAuth from '@ziti/identity-auth';
import { type Cache, type EventBus, createInProcessBus, createMemoryCache, createNatsBus, createNearCache, createRedisCache } from '@ziti/messaging';
import { startMetricsServer } from '@ziti/metrics';
import * as pkiEnrollment from '@ziti/pki-enrollment';
import { probePostgres } from '@ziti/db-kit';
import { type LogDestination, type LogFormat, type LogLevel, configureLogging, lineLogger, logger } from '@ziti/log';
import * as policy from '@ziti/policy';
import * as posture from '@ziti/posture';
import * as session from '@ziti/session';
import * as fabric from '@ziti/fabric';
import { holdProcessIdentities, waitForDependency } from '@ziti/service-kit';
import { lockDataDir } from './data-dir-lock.js';
import { startEmbeddedPostgres } from './embedded-postgres.js';
import { readOrCreateSecret } from './files.js';
import type { ContextName, ServicePorts } from './service-ports.js';

export { DataDirInUseError } from './data-dir-lock.js';
export { servicePortsFromEnv, type ContextName, type ServicePorts } from './service-ports.js';

export interface ControllerOptions {
  /**
   * PKI, generated secrets, the admin password file and (embedded) the PostgreSQL cluster. With
   * the embedded PostgreSQL it is held by one controller at a time (`<dataDir>/controller.lock`):
   * a start while another controller runs on it fails with `DataDirInUseError`.
   */
  dataDir: string;
  /** External PostgreSQL; without it an embedded one runs in `<dataDir>/postgres`. */
  databaseUrl?: string;
  /** NATS JetStream; without it the in-process event bus. */
  natsUrl?: string;
  /** Redis; without it the in-memory cache. */
  redisUrl?: string;
  /**
   * Isolation on shared NATS / Redis servers (e.g. one controller per test file): the JetStream
   * stream and subject prefix of the events (defaults `ZITI_EVENTS`, `ziti.events`; subjects of two
   * streams must not overlap) and a prefix for every cache key.
   */
  natsStream?: string;
  natsSubjectPrefix?: string;
  cacheKeyPrefix?: string;
  /** Where database snapshots are written (`ZITI_SNAPSHOT_DIR`). Default `<dataDir>/snapshots`. */
  snapshotDir?: string;
  /** A directory holding a ZAC build (the admin console), served at `/zac/` (`ZITI_ZAC_DIR`). Default none: `/zac/` is 404. */
  zacDir?: string;
  /**
   * How long the start waits for an outside PostgreSQL, NATS and Redis that are not reachable yet
   * (`ZITI_DEPENDENCY_WAIT_SECONDS`), logging one line per dependency meanwhile. Default 0: one
   * attempt, a dependency that is down fails the start.
   */
  dependencyWaitMs?: number;
  /** How long the gateway lets in-flight requests run once `stop()` began (`ZITI_SHUTDOWN_GRACE_SECONDS`). */
  shutdownGraceMs?: number;
  /** Gateway listen host. Default 0.0.0.0. */
  listenHost?: string;
  /** Gateway port. Default 1280; 0 = ephemeral. */
  port?: number;
  /**
   * The router control listener (TLS, what OpenZiti routers dial): its port (default 6262,
   * OpenZiti's; 0 = a free one) on `listenHost`, and the `host:port` routers are told to dial
   * (enrollment JWTs' `ctrls`, the listener certificate's name). Default: the host of
   * `advertisedAddress` (else this machine's name) and the bound port.
   */
  routerCtrlPort?: number;
  routerCtrlAdvertisedAddress?: string;
  /**
   * Port of the Prometheus metrics listener (`GET /metrics`, every context's metrics in one
   * registry, told apart by the `context` label), on `listenHost`; 0 = a free port. Left out:
   * metrics are recorded but not served.
   */
  metricsPort?: number;
  /**
   * `metricsPort` is only a preference: when it is taken (another controller on the host), a free
   * port is used instead and the start says so. Default false (a taken port fails the start).
   */
  metricsPortPreferred?: boolean;
  /** The address the metrics listener binds (default 127.0.0.1: metrics carry no authentication). */
  metricsHost?: string;
  /** `host[:port]` clients use (API base URLs, server certificate); default from the listener. */
  advertisedAddress?: string;
  /** Extra names and addresses for the gateway's server certificate. */
  extraSans?: string[];
  /** Default admin. Default username `admin`; without a password one is generated into `<dataDir>/admin-password`. */
  adminUsername?: string;
  adminPassword?: string;
  /** Secret signing principals between gateway and services. Default `ZITI_INTERNAL_SECRET`, else `<dataDir>/internal-secret`. */
  internalSecret?: string;
  /**
   * The secret the edge API's server key (TLS, enrollment and session JWTs) is derived from;
   * default `ZITI_SERVER_KEY_SECRET`, else generated once into `<dataDir>/server-key-secret`.
   */
  serverKeySecret?: string;
  /** Loopback ports of the contexts: `ephemeral` (default: free ports) or the ports given (0 or left out = a free one). */
  servicePorts?: 'ephemeral' | ServicePorts;
  /** Settings the standalone services read from their environment (see each `loadConfig`). */
  sessionTimeoutMinutes?: number;
  /** API sessions one identity may hold (`ZITI_MAX_API_SESSIONS_PER_IDENTITY`; identity-auth's default 100; 0 = no bound). */
  maxApiSessionsPerIdentity?: number;
  /** Certificates one API session may hold (`ZITI_MAX_API_SESSION_CERTIFICATES`; pki-enrollment's default 10; 0 = no bound). */
  maxApiSessionCertificates?: number;
  /** Age at which the OIDC signing key is replaced (ZITI_OIDC_KEY_ROTATION_DAYS, default 30; 0 = never). */
  oidcKeyRotationDays?: number;
  mfaSecret?: string;
  totpIssuer?: string;
  pkiKey?: string;
  /** Lets the controller's own outbound requests (JWKS) reach loopback and private addresses (`ZITI_OUTBOUND_ALLOW_PRIVATE`). */
  outboundAllowPrivate?: boolean;
  /** The gateway's client-address and login guards (`loadGuardConfig` of `@ziti/gateway`); unset parts keep their defaults. */
  guards?: Partial<gateway.GatewayGuardConfig>;
  /**
   * This controller's id (`GET /controllers`, the controller a controller-specific setting names):
   * given to the gateway and identity-auth alike. Default `ZITI_INSTANCE_ID`, else the host name.
   */
  instanceId?: string;
  /**
   * The OpenZiti-format event stream (namespaces, JSON-lines file, entity count interval). Default
   * from the environment (`ZITI_EVENTS`, `ZITI_EVENTS_FILE`, `ZITI_EVENTS_ENTITY_COUNT_INTERVAL`,
   * `loadEventStreamConfig` of `@ziti/gateway`); null: none. Records go to NATS (with `natsUrl`)
   * and to the file; with neither nothing could read them, so the stream does not run.
   */
  events?: gateway.EventStreamConfig | null;
  /**
   * Where the text lines of the controller and its contexts go (embedded PostgreSQL, migrations,
   * the start, traced requests, background failures) instead of the structured log. Default: the
   * structured log, each context's lines under its name and the controller's own as `controller`.
   */
  log?: (m: string) => void;
  /**
   * The structured log of the process (`configureLogging` of `@ziti/log`, process-wide): where its
   * JSON lines go (default stdout), its level (default `ZITI_LOG_LEVEL`, else `info`) and format
   * (default `ZITI_LOG_FORMAT`, else `json`). Left out, the process's logging is left as it is.
   */
  logging?: { destination?: LogDestination; level?: LogLevel; format?: LogFormat };
}

export interface RunningController {
  /** The gateway's base URL (HTTPS). */
  url: string;
  port: number;
  /** The controller's root CA (trust anchor of the gateway's server certificate). */
  caCertPem: string;
  services: Record<string, { httpUrl: string; grpcAddress: string }>;
  adminUsername: string;
  /** The metrics listener's port, when metrics are served. */
  metricsPort?: number;
  /** The router control listener's port and the endpoint routers dial (`tls:host:port`). */
  routerCtrlPort: number;
  routerCtrlEndpoint: string;
  /** Gateway first, then the contexts, the bus and cache, and the embedded PostgreSQL last. */
  stop(): Promise<void>;
}

/** Name of the database the embedded PostgreSQL holds every schema in. */
export const EMBEDDED_DATABASE = 'ziti';
const SERVICE_HOST = '127.0.0.1';

/**
 * The all-in-one composition root: every context and the gateway in this one process, each
 * context on its own loopback HTTP and gRPC port, sharing one database (one schema each), one
 * event bus and one cache.
 */
export async function startController(opts: ControllerOptions): Promise<RunningController> {
  if (opts.logging) configureLogging(opts.logging);
  const log = opts.log ?? lineLogger(logger('controller'));
  const dataDir = resolve(opts.dataDir);
  mkdirSync(dataDir, { recursive: true });
  // Before anything in the directory is read or written: a second start leaves the first alone.
  const lock = opts.databaseUrl ? undefined : lockDataDir(dataDir);
  const adminUsername = opts.adminUsername || 'admin';
  const instanceId = opts.instanceId || process.env.ZITI_INSTANCE_ID?.trim() || hostname();
  const eventConfig = opts.events === undefined ? gateway.loadEventStreamConfig(process.env) : opts.events;
  const events = eventConfig && (opts.natsUrl || eventConfig.file) ? eventConfig : undefined;
  const emits = (...names: gateway.EventNamespace[]) => names.some((n) => events?.namespaces.includes(n) === true);

  // Everything started so far, stopped in reverse order (on stop() and on a failed start).
  const started: { name: string; stop: () => Promise<unknown> }[] = [];
  if (lock) started.push({ name: 'data directory lock', stop: async () => lock.release() });
  const stopAll = async () => {
    for (const s of started.splice(0).reverse()) {
      await s.stop().catch((err) => log(`stopping ${s.name} failed: ${(err as Error).message ?? err}`));
    }
  };
  try {
    const internalSecret =
      opts.internalSecret || process.env.ZITI_INTERNAL_SECRET || readOrCreateSecret(join(dataDir, 'internal-secret'));
    const serverKeySecret =
      opts.serverKeySecret || process.env.ZITI_SERVER_KEY_SECRET || readOrCreateSecret(join(dataDir, 'server-key-secret'));
    // The contexts prove who they are to each other with certificates of an internal CA this
    // process makes in memory (nothing is stored; Kubernetes gets them from cert-manager instead).
    holdProcessIdentities();
    const wait = { timeoutMs: opts.dependencyWaitMs ?? 0, log };
    let databaseUrl = opts.databaseUrl;
    if (databaseUrl) {
      const outside = databaseUrl;
      await waitForDependency('PostgreSQL', () => probePostgres(outside), wait);
    } else {
      const pg = await startEmbeddedPostgres({ dataDir, database: EMBEDDED_DATABASE, previousController: lock?.previous, log });
      started.push({ name: 'embedded PostgreSQL', stop: pg.stop });
      databaseUrl = pg.databaseUrl;
    }
    const natsUrl = opts.natsUrl;
    const bus: EventBus = natsUrl
      ? await waitForDependency(
          'NATS',
          () => createNatsBus({ url: natsUrl, stream: opts.natsStream, subjectPrefix: opts.natsSubjectPrefix, name: 'ziti-controller' }),
          wait,
        )
      : createInProcessBus();
    started.push({ name: 'event bus', stop: () => bus.close() });
    const redisUrl = opts.redisUrl;
    const cache: Cache = redisUrl
      ? await waitForDependency('Redis', () => createRedisCache(redisUrl, { keyPrefix: opts.cacheKeyPrefix }), wait)
      : createMemoryCache();
    started.push({ name: 'cache', stop: () => cache.close() });
    // The principals (identity-auth writes and drops them, the gateway reads them) get a short-lived
    // copy in memory in front of Redis; one object for both, so a drop clears the copy at once.
    const principalCache: Cache = opts.redisUrl ? createNearCache(cache) : cache;

    for (const ctx of [identityAuth, pkiEnrollment, policy, session, posture, fabric]) await ctx.runMigrations(databaseUrl, log);

    const given = opts.servicePorts === 'ephemeral' ? {} : (opts.servicePorts ?? {});
    // The endpoint routers dial; its port is known once fabric listens (pki-enrollment, which puts it
    // into router enrollment JWTs, starts before and reads it when it makes one).
    const routerCtrl: { advertised?: string; port?: number } = { advertised: opts.routerCtrlAdvertisedAddress };
    const edgeHost = (opts.advertisedAddress ?? '').replace(/:\d+$/, '').replace(/^\[|\]$/g, '') || hostname();
    const routerCtrlEndpoint = (): string | undefined => {
      if (routerCtrl.advertised) return `tls:${routerCtrl.advertised}`;
      if (routerCtrl.port === undefined) return undefined;
      return `tls:${edgeHost.includes(':') ? `[${edgeHost}]` : edgeHost}:${routerCtrl.port}`;
    };
    // Without a `log` of the caller's, each context logs under its own name.
    const common = { databaseUrl, bus, cache, internalSecret, log: opts.log };
    const ports = (name: ContextName) => ({
      http: { host: SERVICE_HOST, port: given[name]?.http ?? 0 },
      grpc: { host: SERVICE_HOST, port: given[name]?.grpc ?? 0 },
    });
    // identity-auth starts first but calls policy (SyncIdentity) and pki-enrollment: their addresses are looked up when first used.
    const late: { running?: { name: string; grpcAddress: string }[] } = {};
    const running = [
      await identityAuth.startService({
        ...common,
        cache: principalCache,
        ...ports(identityAuth.SERVICE_NAME),
        policyGrpc: () => late.running?.find((s) => s.name === 'policy')?.grpcAddress,
        pkiEnrollmentGrpc: () => late.running?.find((s) => s.name === 'pki-enrollment')?.grpcAddress,
        fabricGrpc: () => late.running?.find((s) => s.name === 'fabric')?.grpcAddress,
        dataDir,
        admin: { username: adminUsername, password: opts.adminPassword || undefined },
        sessionTimeoutMinutes: opts.sessionTimeoutMinutes,
        maxApiSessionsPerIdentity: opts.maxApiSessionsPerIdentity,
        secretsKey: opts.mfaSecret,
        oidcKeyRotationDays: opts.oidcKeyRotationDays,
        totpIssuer: opts.totpIssuer,
        outboundAllowPrivate: opts.outboundAllowPrivate,
        instanceId,
        authenticationEvents: emits('authentication', 'apiSession'),
      }),
    ];
    started.push(running[0]);
    late.running = running;
    // gRPC addresses between contexts, resolved when first used (a context may start before the one it calls).
    const grpcOf = (name: string) => () => running.find((s) => s.name === name)?.grpcAddress;
    // Each context with its own settings, in start order (only pki-enrollment holds the server key secret).
    const starts: (() => Promise<{ name: string; httpUrl: string; grpcAddress: string; stop(): Promise<void> }>)[] = [
      () => pkiEnrollment.startService({ ...common, ...ports(pkiEnrollment.SERVICE_NAME), identityAuthGrpc: grpcOf('identity-auth'), pkiKey: opts.pkiKey, serverKeySecret, maxApiSessionCertificates: opts.maxApiSessionCertificates, ctrlAdvertisedAddress: () => routerCtrlEndpoint()?.replace(/^tls:/, '') }),
      () => policy.startService({ ...common, ...ports(policy.SERVICE_NAME), pkiEnrollmentGrpc: grpcOf('pki-enrollment'), postureGrpc: grpcOf('posture'), identityAuthGrpc: grpcOf('identity-auth'), fabricGrpc: grpcOf('fabric') }),
      () => session.startService({ ...common, ...ports(session.SERVICE_NAME), policyGrpc: grpcOf('policy'), postureGrpc: grpcOf('posture'), pkiEnrollmentGrpc: grpcOf('pki-enrollment'), sessionEvents: emits('session') }),
      () => posture.startService({ ...common, ...ports(posture.SERVICE_NAME), policyGrpc: grpcOf('policy'), identityAuthGrpc: grpcOf('identity-auth') }),
      async () => {
        const f = await fabric.startService({
          ...common,
          ...ports(fabric.SERVICE_NAME),
          policyGrpc: grpcOf('policy'),
          identityAuthGrpc: grpcOf('identity-auth'),
          pkiEnrollmentGrpc: grpcOf('pki-enrollment'),
          sessionGrpc: grpcOf('session'),
          ctrl: { host: opts.listenHost || '0.0.0.0', port: opts.routerCtrlPort ?? 6262, advertisedAddress: routerCtrl.advertised ?? `${edgeHost.includes(':') ? `[${edgeHost}]` : edgeHost}:${opts.routerCtrlPort ?? 6262}` },
          replica: instanceId,
          routerMetricsEvents: { metrics: emits('metrics'), usage: emits('usage') },
        });
        routerCtrl.port = f.ctrlPort;
        return f;
      },
    ];
    for (const start of starts) {
      const service = await start();
      started.push(service);
      running.push(service);
    }
    const services = Object.fromEntries(running.map((s) => [s.name, { httpUrl: s.httpUrl, grpcAddress: s.grpcAddress }]));

    const gw = await gateway.startGateway({
      bus,
      cache: principalCache,
      sharedCache: cache,
      internalSecret,
      serverKeySecret,
      listen: { host: opts.listenHost || '0.0.0.0', port: opts.port ?? 1280 },
      advertisedAddress: opts.advertisedAddress,
      extraSans: opts.extraSans,
      dataDir,
      upstreams: Object.fromEntries(running.map((s) => [s.name, s.httpUrl])),
      identityAuthGrpc: running[0].grpcAddress,
      // TLS credentials and the enrollment JWT signer come from the controller PKI in pki-enrollment.
      pkiEnrollmentGrpc: services['pki-enrollment']?.grpcAddress,
      contextGrpc: Object.fromEntries(running.map((s) => [s.name, s.grpcAddress])),
      snapshotDir: opts.snapshotDir,
      consoleDir: opts.zacDir,
      shutdownGraceMs: opts.shutdownGraceMs,
      instanceId,
      events,
      ...opts.guards,
      log: opts.log,
    });
    started.push({ name: 'gateway', stop: () => gw.stop() });

    let metricsPort: number | undefined;
    if (opts.metricsPort !== undefined) {
      const host = opts.metricsHost || '127.0.0.1';
      const metrics = await startMetricsServer(host, opts.metricsPort, { listenAnyPort: true }).catch((err: NodeJS.ErrnoException) => {
        if (!opts.metricsPortPreferred || err.code !== 'EADDRINUSE') throw err;
        log(`metrics port ${opts.metricsPort} is in use (another controller?); serving metrics on a free port instead`);
        return startMetricsServer(host, 0, { listenAnyPort: true });
      });
      metricsPort = metrics.port;
      started.push({ name: 'metrics', stop: () => metrics.stop() });
    }

    return { url: gw.url, port: gw.port, caCertPem: gw.caCertPem, services, adminUsername, metricsPort, routerCtrlPort: routerCtrl.port ?? 0, routerCtrlEndpoint: routerCtrlEndpoint() ?? '', stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
