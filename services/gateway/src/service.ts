import { readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Server, createServer } from 'node:https';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ALL_ROUTES, MODELS, type Owner } from '@ziti/api-contract';
import { RouteTable, answerClientError, createDrain, processShuttingDown, shortId } from '@ziti/http-kit';
import { lineLogger, logger } from '@ziti/log';
import type { Cache, EventBus } from '@ziti/messaging';
import { Authenticator } from './auth/authenticator.js';
import { grpcSessionResolver } from './auth/session-resolver.js';
import { subscribeCacheInvalidation } from './events/cache-invalidation.js';
import { type EventStreamConfig, type RunningEventStream, startEventStream } from './events/event-stream.js';
import { createGatewayApp } from './http/app.js';
import { informationalHandlers } from './http/informational.js';
import { type UpstreamHandler, createUpstreamProxy } from './http/proxy.js';
import { type ForwardedHeader, clientAddressResolver } from './http/client-address.js';
import type { AuthRateLimiterOptions } from './limits/adaptive-limiter.js';
import { createLoginGuard } from './limits/login-guard.js';
import type { LoginLimitOptions } from './limits/login-failures.js';
import { controllersHandler } from './http/controllers.js';
import { consoleHandler } from './http/console.js';
import { integrityHandlers } from './integrity/handlers.js';
import { type IntegrityPeer, grpcIntegrityPeer } from './integrity/peers.js';
import { IntegrityRunner } from './integrity/runner.js';
import { type RemotePki, type TlsCredentials, remotePki } from './pki/remote.js';
import { loadOrCreatePki, requiredSans } from './pki/store.js';
import { countEntities, createSnapshotter, defaultSnapshotDir, maintenanceClients, snapshotHandler, summaryHandler } from './maintenance/index.js';
import { type ContextReadiness, watchContextReadiness } from './health/readiness.js';

export const SERVICE_NAME = 'gateway';

/** The contexts the gateway proxies to. */
export type UpstreamOwner = Exclude<Owner, 'gateway'>;

/** What the gateway needs from its composition root. */
export interface GatewayDeps {
  bus: EventBus;
  cache: Cache;
  /** Secret shared with the services, used to sign the forwarded principal. */
  internalSecret: string;
  /** Public HTTPS listener; port 0 picks an ephemeral port. */
  listen: { host: string; port: number };
  /** `host[:port]` used in apiBaseUrls, `/protocols` and the certificate; default `<listen host>:<port>` (`localhost` for a wildcard host). */
  advertisedAddress?: string;
  /** Extra certificate names and addresses (`ZITI_CTRL_SANS`). */
  extraSans?: readonly string[];
  /**
   * Without `pkiEnrollmentGrpc`: a local controller PKI in `<dataDir>/pki` (gateway tests and
   * embeddings without pki-enrollment). With it, `dataDir` is unused.
   */
  dataDir: string;
  /**
   * pki-enrollment's gRPC `host:port`: the TLS credentials (and the enrollment JWT signer) come
   * from its controller PKI. Fetched at start (retried until available, at most
   * `pkiWaitMs`, default 120 s) and re-read every 10 minutes (renewals, new names).
   */
  pkiEnrollmentGrpc?: string;
  /** The secret the edge API's server key is derived from; required with `pkiEnrollmentGrpc`. */
  serverKeySecret?: string;
  pkiWaitMs?: number;
  /** Base HTTP URLs of the contexts, e.g. `http://127.0.0.1:18101`. A context without one is answered 503. */
  upstreams: Partial<Record<UpstreamOwner, string>>;
  /** identity-auth's gRPC `host:port`. */
  identityAuthGrpc: string;
  /**
   * Every context's gRPC `host:port`, for the operations the gateway answers by asking each
   * context (`/summary`, `/database/*`). A context missing here is left out of them.
   */
  contextGrpc?: Partial<Record<UpstreamOwner, string>>;
  /** Where database snapshots are written (`ZITI_SNAPSHOT_DIR`); default `<dataDir>/snapshots`. */
  snapshotDir?: string;
  /**
   * Takes a database snapshot; the data integrity fix (`/database/fix-data-integrity`) calls it
   * first and repairs nothing when it fails (the run ends with `error` set). Default: the
   * snapshotter of `POST /database/snapshot` (without its once-a-minute limit).
   */
  takeSnapshot?: () => Promise<unknown>;
  /**
   * The shared cache itself, where `cache` has a near copy in front of it (the all-in-one
   * controller): the data integrity lease and results are read there, so every replica sees a run
   * the moment it starts. Default `cache`.
   */
  sharedCache?: Cache;
  /**
   * Called after each step of a data integrity run has stored its results (progress
   * instrumentation; the tests hold a run here to read its partial results).
   */
  integrityStepHook?: (step: string) => Promise<void>;
  instanceId?: string;
  /** Reported in `/version` and the `server` header; default `v<package version>`. */
  version?: string;
  /** Source revision for `/version`; default `ZITI_REVISION` or `local`. */
  revision?: string;
  /**
   * Addresses and CIDRs of the proxies in front of the gateway (`ZITI_TRUSTED_PROXIES`). Only when
   * a request's TLS peer is one of them is its forwarded header walked for the client address;
   * otherwise the client is the peer. Default none. A bad entry fails the start.
   */
  trustedProxies?: readonly string[];
  /** The header trusted proxies report the client in: `x-forwarded-for` (default) or `forwarded` (RFC 7239). */
  trustedProxyHeader?: ForwardedHeader;
  /**
   * OpenZiti's adaptive auth rate limiter on `POST /authenticate` and `/enroll*`, for this process
   * (`ZITI_AUTH_RATE_LIMITER*`). Default on, window 5..250; `{ enabled: false }` turns it off.
   */
  authRateLimiter?: AuthRateLimiterOptions;
  /**
   * Failed-login limits, counted in `cache` (shared by the replicas; `ZITI_LOGIN_FAILURE*`).
   * Default 10 per username and 30 per client address per 60 s; a limit of 0 turns it off.
   */
  loginFailureLimits?: LoginLimitOptions;
  /**
   * A directory holding a build of the admin console (ZAC, `ZITI_ZAC_DIR`), served at `/zac/` on the
   * public listener. Without it `/zac/` is 404. A directory that cannot be read fails the start.
   */
  consoleDir?: string;
  /**
   * The OpenZiti-format event stream (`ZITI_EVENTS*`, `loadEventStreamConfig`): records on
   * `<bus prefix>.<namespace>` (NATS) and in `file`, made once per cluster. Default none.
   */
  events?: EventStreamConfig;
  /**
   * How often each context of `contextGrpc` is asked whether it can serve (its `HealthService`);
   * `/ziti-internal/readyz` answers 503 while one cannot. Default 1 s.
   */
  readinessPollMs?: number;
  /** How long in-flight requests may run once `stop()` began; default `ZITI_SHUTDOWN_GRACE_SECONDS` (`shutdownGraceMs` of `@ziti/http-kit`). */
  shutdownGraceMs?: number;
  log?: (m: string) => void;
}

export interface RunningGateway {
  name: string;
  /** `https://<advertised address>` */
  url: string;
  port: number;
  /** The root CA that signed the server certificate (what clients must trust). */
  caCertPem: string;
  /**
   * Graceful: new requests are answered 503 `SERVICE_UNAVAILABLE` (readiness included), in-flight
   * requests finish (at most the shutdown grace), then the listener closes, the subscriptions end
   * and the gRPC channels close.
   */
  stop(): Promise<void>;
}

/** How often TLS credentials from pki-enrollment are re-read. */
const TLS_REFRESH_MS = 10 * 60_000;

function packageVersion(): string {
  try {
    return `v${(JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version}`;
  } catch {
    return 'v0.0.0';
  }
}

const isWildcard = (host: string) => host === '0.0.0.0' || host === '::' || host === '';

/** Splits `host[:port]` / `[v6][:port]`. */
function splitAddress(address: string): { host: string; port?: number } {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(address) ?? /^([^:]+)(?::(\d+))?$/.exec(address);
  if (!m) return { host: address };
  return { host: m[1]!, port: m[2] ? Number(m[2]) : undefined };
}

const joinAddress = (host: string, port: number) => `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;

function listenOn(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as { port: number }).port);
    });
  });
}

/**
 * Starts the gateway: the HTTPS listener (TLS credentials from pki-enrollment, or a local PKI),
 * proxies, session resolution and cache invalidation.
 */
export async function startGateway(deps: GatewayDeps): Promise<RunningGateway> {
  const log = deps.log ?? lineLogger(logger(SERVICE_NAME));
  const version = deps.version ?? packageVersion();
  const configured = deps.advertisedAddress ? splitAddress(deps.advertisedAddress) : undefined;
  const advertisedHost = configured?.host ?? (isWildcard(deps.listen.host) ? 'localhost' : deps.listen.host);

  // Settings first: a bad one fails the start before anything is opened.
  const zac = deps.consoleDir ? consoleHandler(deps.consoleDir) : undefined;
  const clientAddress = clientAddressResolver({ trustedProxies: deps.trustedProxies, header: deps.trustedProxyHeader });
  const loginGuard = createLoginGuard({
    cache: deps.cache,
    authRateLimiter: deps.authRateLimiter,
    loginFailureLimits: deps.loginFailureLimits,
    log,
  });

  const sans = [advertisedHost, ...(deps.extraSans ?? [])];
  const resolver = grpcSessionResolver(deps.identityAuthGrpc);
  const authenticator = new Authenticator({ cache: deps.cache, resolver, log });
  const subscription = await subscribeCacheInvalidation(deps.bus, deps.cache);

  const proxies: Partial<Record<Owner, UpstreamHandler>> = {};
  const closers: (() => void)[] = [];
  const peers: Partial<Record<UpstreamOwner, IntegrityPeer>> = {};
  for (const [owner, address] of Object.entries(deps.contextGrpc ?? {})) {
    if (!address) continue;
    const peer = grpcIntegrityPeer(address, owner as UpstreamOwner);
    peers[owner as UpstreamOwner] = peer;
    closers.push(() => peer.close());
  }
  // The data integrity fix takes its snapshot with the same `snapshotter.take()` (no rate limit).
  const snapshotter = createSnapshotter({ contextGrpc: deps.contextGrpc ?? {}, snapshotDir: deps.snapshotDir ?? defaultSnapshotDir(deps.dataDir), log });
  closers.push(snapshotter.close);
  const takeSnapshot = deps.takeSnapshot ?? (() => snapshotter.take());
  const integrity = new IntegrityRunner({ cache: deps.sharedCache ?? deps.cache, peers, takeSnapshot, stepHook: deps.integrityStepHook, log });
  for (const [owner, target] of Object.entries(deps.upstreams)) {
    if (!target) continue;
    const proxy = createUpstreamProxy(owner as UpstreamOwner, target, deps.internalSecret, log);
    proxies[owner as UpstreamOwner] = proxy.handler;
    closers.push(proxy.close);
  }

  const drain = createDrain();
  let handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  // Client certificates are requested, never required nor verified here: services verify them.
  const server = createServer({ requestCert: true, rejectUnauthorized: false }, drain.listener((req, res) => handle(req, res)));
  server.on('clientError', (err: Error, socket) => answerClientError(err, socket, shortId()));
  let port: number;
  let tls: TlsCredentials;
  let remote: RemotePki | undefined;
  let advertisedAddress: string;
  try {
    port = await listenOn(server, deps.listen.host, deps.listen.port);
    advertisedAddress = joinAddress(advertisedHost, configured?.port ?? port);
    if (deps.pkiEnrollmentGrpc) {
      if (!deps.serverKeySecret) throw new Error('gateway: a server key secret is required with pki-enrollment (ZITI_SERVER_KEY_SECRET)');
      remote = remotePki(deps.pkiEnrollmentGrpc, { sans: requiredSans(sans), advertisedAddress, serverKeySecret: deps.serverKeySecret });
      tls = await remote.fetchWithRetry(deps.pkiWaitMs ?? 120_000, log);
    } else {
      const local = loadOrCreatePki({ dir: join(deps.dataDir, 'pki'), sans, log });
      tls = { keyPem: local.serverKeyPem, certPem: local.serverCertPem, caCertPem: local.caCertPem };
    }
    server.setSecureContext({ key: tls.keyPem, cert: tls.certPem });
  } catch (err) {
    server.close();
    remote?.close();
    await subscription.stop();
    resolver.close();
    closers.forEach((c) => c());
    throw err;
  }
  let refresh: NodeJS.Timeout | undefined;
  if (remote) {
    const source = remote;
    refresh = setInterval(() => {
      source.fetch().then(
        (next) => {
          if (next.certPem === tls.certPem && next.keyPem === tls.keyPem) return;
          server.setSecureContext({ key: next.keyPem, cert: next.certPem });
          tls = next;
          log('tls: switched to the server certificate pki-enrollment now serves');
        },
        (err: Error) => log(`tls: re-reading the credentials from pki-enrollment failed: ${err.message}`),
      );
    }, TLS_REFRESH_MS);
    refresh.unref();
  }

  const info = informationalHandlers({
    build: {
      version,
      revision: deps.revision ?? process.env.ZITI_REVISION ?? 'local',
      buildDate: statSync(__filename).mtime,
      runtimeVersion: process.version,
    },
    advertisedAddress,
    routes: ALL_ROUTES,
    models: MODELS,
  });
  const instanceId = deps.instanceId ?? hostname();
  const maintenance = maintenanceClients(deps.contextGrpc ?? {});
  closers.push(maintenance.close);
  let events: RunningEventStream | undefined;
  if (deps.events) {
    try {
      events = await startEventStream({
        ...deps.events,
        bus: deps.bus,
        sharedCache: deps.sharedCache ?? deps.cache,
        source: { controllerId: instanceId, version },
        countEntities: () => countEntities(maintenance.clients),
        log,
      });
    } catch (err) {
      server.close();
      if (refresh) clearInterval(refresh);
      remote?.close();
      await subscription.stop();
      resolver.close();
      closers.forEach((c) => c());
      throw err;
    }
    log(`event stream: ${deps.events.namespaces.join(', ')}${deps.events.file ? ` (also to ${deps.events.file})` : ''}`);
  }
  const contextGrpc = Object.fromEntries(Object.entries(deps.contextGrpc ?? {}).filter((e): e is [string, string] => !!e[1]));
  const readiness: ContextReadiness | undefined =
    Object.keys(contextGrpc).length > 0 ? watchContextReadiness(contextGrpc, deps.readinessPollMs) : undefined;
  if (readiness) {
    closers.push(readiness.stop);
    await readiness.poll();
  }
  handle = createGatewayApp({
    instanceId,
    version,
    internalSecret: deps.internalSecret,
    routes: new RouteTable(ALL_ROUTES),
    local: {
      ...info.handlers,
      ...integrityHandlers(integrity),
      listControllers: controllersHandler({ id: instanceId, advertisedAddress, certPem: () => tls.certPem, startedAt: new Date() }),
      listSummary: summaryHandler(maintenance.clients),
      createDatabaseSnapshot: snapshotHandler(snapshotter, deps.cache, instanceId),
    },
    proxies,
    authenticator,
    swaggerJson: info.specJson,
    // Not ready from the moment the process began to shut down (SIGTERM), before this listener drains.
    draining: () => drain.draining() || processShuttingDown(),
    contextsReady: readiness?.ready,
    console: zac,
    clientAddress,
    loginGuard,
    responseEvents: events,
    log,
  });
  if (zac) log(`admin console (ZAC) from ${deps.consoleDir} at https://${advertisedAddress}/zac/`);
  log(`listening on https://${joinAddress(deps.listen.host || '0.0.0.0', port)} (advertised as https://${advertisedAddress})`);

  let stopping: Promise<void> | undefined;
  return {
    name: SERVICE_NAME,
    url: `https://${advertisedAddress}`,
    port,
    caCertPem: tls.caCertPem,
    stop() {
      stopping ??= (async () => {
        // New requests are answered 503 SERVICE_UNAVAILABLE; those in flight finish (at most the shutdown grace).
        await drain.close(server, deps.shutdownGraceMs);
        await integrity.stop();
        if (refresh) clearInterval(refresh);
        remote?.close();
        await events?.stop();
        await subscription.stop().catch((err: Error) => log(`unsubscribe failed: ${err.message}`));
        resolver.close();
        closers.forEach((c) => c());
      })();
      return stopping;
    },
  };
}
