import { type Server, createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus metrics of a process: one registry per process (the all-in-one controller's contexts
 * share it and are told apart by the `context` label), the metrics every kit records, and the
 * listener that serves them on a port of its own (never the public one).
 *
 * Hot paths record with a counter `inc` or a histogram `observe` on label values from a bounded
 * set (context, operation id, gRPC method, status, method, outcome): never an entity id or a path.
 */

export const registry = new Registry();

let defaultsCollected = false;

/** Process metrics (event-loop lag, heap, GC, CPU, handles) under their standard names, once per process. */
export function collectProcessMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  collectDefaultMetrics({ register: registry });
}

/** Request latency buckets (seconds): 1 ms to 10 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const httpRequestDuration = new Histogram({
  name: 'ziti_http_request_duration_seconds',
  help: 'Edge API requests by contract operation id and status: latency from arrival to the end of the answer',
  labelNames: ['context', 'operation', 'status'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const authentications = new Counter({
  name: 'ziti_authentications_total',
  help: 'Logins (POST /authenticate) by method (password, cert, ext-jwt) and outcome (success, failure)',
  labelNames: ['context', 'method', 'outcome'] as const,
  registers: [registry],
});

export const mfaVerifications = new Counter({
  name: 'ziti_mfa_verifications_total',
  help: 'MFA code checks (TOTP or recovery code) by method and outcome',
  labelNames: ['context', 'method', 'outcome'] as const,
  registers: [registry],
});

export const enrollments = new Counter({
  name: 'ziti_enrollments_total',
  help: 'Enrollments by method (ott, ottca, ca, updb, erott, token, extend) and outcome (success, failure)',
  labelNames: ['context', 'method', 'outcome'] as const,
  registers: [registry],
});

export const sessionCreates = new Counter({
  name: 'ziti_session_creates_total',
  help: 'Session creates (POST /sessions) by type (Dial, Bind) and outcome (success or the error code)',
  labelNames: ['context', 'type', 'outcome'] as const,
  registers: [registry],
});

export const grpcServerDuration = new Histogram({
  name: 'ziti_grpc_server_handling_seconds',
  help: 'gRPC calls served, by full method and status code: latency of the handler',
  labelNames: ['context', 'method', 'code'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const grpcClientDuration = new Histogram({
  name: 'ziti_grpc_client_handling_seconds',
  help: 'gRPC calls made, by full method and status code: latency until the answer',
  labelNames: ['context', 'method', 'code'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const outboxBacklog = new Gauge({
  name: 'ziti_outbox_backlog',
  help: 'Unpublished outbox events seen by the last relay flush',
  labelNames: ['context'] as const,
  registers: [registry],
});

export const outboxPublished = new Counter({
  name: 'ziti_outbox_published_total',
  help: 'Outbox events published to the bus',
  labelNames: ['context'] as const,
  registers: [registry],
});

export const outboxPublishLag = new Histogram({
  name: 'ziti_outbox_publish_lag_seconds',
  help: 'Time from an event being stored (its occurredAt) to its publication on the bus',
  labelNames: ['context'] as const,
  buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
  registers: [registry],
});

export const eventsConsumed = new Counter({
  name: 'ziti_events_consumed_total',
  help: 'Events handled by a subscriber, by consumer (durable group, or broadcast) and outcome (ok, error)',
  labelNames: ['consumer', 'outcome'] as const,
  registers: [registry],
});

export const eventConsumeLag = new Histogram({
  name: 'ziti_event_consume_lag_seconds',
  help: 'Time from an event being stored (its occurredAt) to a subscriber handling it',
  labelNames: ['consumer'] as const,
  buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
  registers: [registry],
});

export const natsConsumerPending = new Gauge({
  name: 'ziti_nats_consumer_pending',
  help: 'Messages of a durable NATS consumer not yet delivered, as of its last delivery',
  labelNames: ['consumer'] as const,
  registers: [registry],
});

export const dbQueryDuration = new Histogram({
  name: 'ziti_db_query_duration_seconds',
  help: 'Queries run through a pg pool (pool.query), by pool: latency including the wait for a connection',
  labelNames: ['context', 'pool', 'outcome'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const cacheRequests = new Counter({
  name: 'ziti_cache_requests_total',
  help: 'Cache reads by cache (principal, near, shared) and result (hit, miss)',
  labelNames: ['context', 'cache', 'result'] as const,
  registers: [registry],
});

export const rateLimitRefusals = new Counter({
  name: 'ziti_rate_limit_refusals_total',
  help: 'Requests refused with 429 by a limiter (auth-rate: the adaptive auth limiter; login-failures: failed-login limits)',
  labelNames: ['context', 'limiter'] as const,
  registers: [registry],
});

/** A pg pool's counts, as node-postgres keeps them. */
export interface PoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

const pools = new Map<PoolCounts, { context: string; pool: string }>();

/** Connections of every registered pg pool, read when scraped. */
new Gauge({
  name: 'ziti_db_pool_connections',
  help: 'Connections of a pg pool by state: total (open), idle, waiting (callers waiting for one)',
  labelNames: ['context', 'pool', 'state'] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const [p, labels] of pools) {
      this.set({ ...labels, state: 'total' }, p.totalCount);
      this.set({ ...labels, state: 'idle' }, p.idleCount);
      this.set({ ...labels, state: 'waiting' }, p.waitingCount);
    }
  },
});

/** Reports a pool's connections until the returned function is called (at its `end`). */
export function trackPool(pool: PoolCounts, labels: { context: string; pool: string }): () => void {
  pools.set(pool, labels);
  return () => void pools.delete(pool);
}

/**
 * What one router last reported on its control channel (OpenZiti's `MetricsMessage`), kept by the
 * fabric replica that holds the router's channel until the router disconnects (its links' entries
 * until the link goes). Router and link ids are the only id labels of this process: their number
 * is that of the live network, and a router's or link's series go with it.
 */
export interface RouterMetricsSample {
  routerId: string;
  /** By link id (links the router is an end of): the measured latency (mean, seconds) and byte rates (1-minute rate, bytes/s). */
  links: ReadonlyMap<string, { latencySeconds?: number; txBytesPerSecond?: number; rxBytesPerSecond?: number }>;
  /** Xgress byte rates (1-minute rate, bytes/s) by `<ingress|egress|fabric>.<tx|rx>`. */
  bytesPerSecond: ReadonlyMap<string, number>;
  /** `edge.connections`: SDK connections to the router's edge listeners. */
  edgeConnections?: number;
  /** Circuits with usage in the router's latest reported usage interval. */
  circuitsWithUsage?: number;
  /** Usage bytes reported since the router connected, by usage type (`ingress.rx`, …, `fabric.tx`). */
  usageBytes: ReadonlyMap<string, number>;
}

const routerSources = new Set<() => Iterable<RouterMetricsSample>>();

/** Reports the samples `read` answers at each scrape until the returned function is called. */
export function trackRouterMetrics(read: () => Iterable<RouterMetricsSample>): () => void {
  routerSources.add(read);
  return () => void routerSources.delete(read);
}

function* routerSamples(): Iterable<RouterMetricsSample> {
  for (const read of routerSources) yield* read();
}

const finite = (v: number | undefined): v is number => typeof v === 'number' && Number.isFinite(v);

new Gauge({
  name: 'ziti_router_link_latency_seconds',
  help: "A link's latency as one of its routers measures it (mean of the router's link.<id>.latency histogram)",
  labelNames: ['router_id', 'link_id'] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const s of routerSamples()) for (const [linkId, l] of s.links) if (finite(l.latencySeconds)) this.set({ router_id: s.routerId, link_id: linkId }, l.latencySeconds);
  },
});

new Gauge({
  name: 'ziti_router_link_bytes_per_second',
  help: "Bytes a router sends (tx) and receives (rx) on a link: 1-minute rate of its link.<id>.<tx|rx>.bytesrate meter",
  labelNames: ['router_id', 'link_id', 'direction'] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const s of routerSamples()) {
      for (const [linkId, l] of s.links) {
        if (finite(l.txBytesPerSecond)) this.set({ router_id: s.routerId, link_id: linkId, direction: 'tx' }, l.txBytesPerSecond);
        if (finite(l.rxBytesPerSecond)) this.set({ router_id: s.routerId, link_id: linkId, direction: 'rx' }, l.rxBytesPerSecond);
      }
    }
  },
});

new Gauge({
  name: 'ziti_router_bytes_per_second',
  help: 'Bytes a router moves by kind (ingress, egress: its SDK and hosted connections; fabric: all its links) and direction: 1-minute rate of its <kind>.<tx|rx>.bytesrate meter',
  labelNames: ['router_id', 'kind', 'direction'] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const s of routerSamples()) {
      for (const [key, v] of s.bytesPerSecond) {
        const [kind, direction] = key.split('.');
        if (finite(v)) this.set({ router_id: s.routerId, kind, direction }, v);
      }
    }
  },
});

new Gauge({
  name: 'ziti_router_edge_connections',
  help: "SDK connections to a router's edge listeners (its edge.connections gauge)",
  labelNames: ['router_id'] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const s of routerSamples()) if (finite(s.edgeConnections)) this.set({ router_id: s.routerId }, s.edgeConnections);
  },
});

new Gauge({
  name: 'ziti_router_active_circuits',
  help: "Circuits that carried data through a router in its latest reported usage interval",
  labelNames: ['router_id'] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const s of routerSamples()) if (finite(s.circuitsWithUsage)) this.set({ router_id: s.routerId }, s.circuitsWithUsage);
  },
});

new Counter({
  name: 'ziti_router_usage_bytes_total',
  help: 'Bytes of circuit data a router reported in its usage intervals since it connected, by type (ingress.rx, ingress.tx, egress.rx, egress.tx, fabric.rx, fabric.tx)',
  labelNames: ['router_id', 'type'] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const s of routerSamples()) for (const [type, v] of s.usageBytes) if (finite(v) && v > 0) this.inc({ router_id: s.routerId, type }, v);
  },
});

export const routerMetricsMessages = new Counter({
  name: 'ziti_router_metrics_messages_total',
  help: 'Metrics messages (content type 1007) received from routers, by outcome (accepted; malformed, oversized: dropped)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** The context label of a Postgres schema name (`identity_auth` → `identity-auth`). */
export function contextOfSchema(schema: string): string {
  return schema.replace(/_/g, '-');
}

/**
 * Records a request's operation, status and latency when its answer ends (or its connection
 * closes). `operation()` is read then: the contract operation id once the route matched, else
 * `unmatched`.
 */
export function observeHttpRequest(res: { once(event: 'close', cb: () => void): unknown; statusCode: number }, context: string, operation: () => string | undefined): void {
  const startedAt = performance.now();
  res.once('close', () => {
    httpRequestDuration.observe({ context, operation: operation() ?? 'unmatched', status: String(res.statusCode) }, secondsSince(startedAt));
  });
}

/** Seconds since `startedAt` (a `performance.now()` reading). */
export function secondsSince(startedAt: number): number {
  return (performance.now() - startedAt) / 1000;
}

/** The text exposition of every metric of this process. */
export function metricsText(): Promise<string> {
  return registry.metrics();
}

export interface MetricsListener {
  /** The port it listens on (0 when metrics are off). */
  port: number;
  stop(): Promise<void>;
}

/**
 * Serves `GET /metrics` (the Prometheus text format) on its own port; every other path is 404.
 * Port 0 means metrics are not served (the listener is not started); records are still kept.
 * Also starts the process metrics.
 */
export function startMetricsServer(host: string, port: number, opts: { listenAnyPort?: boolean } = {}): Promise<MetricsListener> {
  collectProcessMetrics();
  if (port === 0 && !opts.listenAnyPort) return Promise.resolve({ port: 0, stop: async () => undefined });
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if ((req.method === 'GET' || req.method === 'HEAD') && path === '/metrics') {
      registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': registry.contentType });
          res.end(req.method === 'HEAD' ? undefined : text);
        },
        () => {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end('metrics unavailable\n');
        },
      );
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found\n');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      resolve({
        port: typeof address === 'object' && address ? address.port : port,
        stop: () =>
          new Promise<void>((res) => {
            server.closeAllConnections();
            server.close(() => res());
          }),
      });
    });
  });
}

/**
 * The address the metrics listener binds (`ZITI_METRICS_HOST`, default 127.0.0.1): metrics carry
 * no authentication, so they stay on the host unless a deployment opens them (Kubernetes pods set
 * 0.0.0.0 behind a NetworkPolicy that admits only the monitoring namespace).
 */
export function metricsHost(env: NodeJS.ProcessEnv): string {
  return env.ZITI_METRICS_HOST?.trim() || '127.0.0.1';
}

/**
 * The metrics port from the environment: `<CONTEXT>_METRICS_PORT` (e.g. `SESSION_METRICS_PORT`),
 * else `ZITI_METRICS_PORT`, else `fallback` (9100). `0` turns the listener off.
 */
export function metricsPort(env: NodeJS.ProcessEnv, context?: string, fallback = 9100): number {
  const own = context ? env[`${context.toUpperCase().replace(/-/g, '_')}_METRICS_PORT`] : undefined;
  const raw = own ?? env.ZITI_METRICS_PORT;
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`${context ? `${context.toUpperCase().replace(/-/g, '_')}_METRICS_PORT or ` : ''}ZITI_METRICS_PORT must be a port number (0 = off), got "${raw}"`);
  return n;
}
