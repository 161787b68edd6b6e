import { logger } from '@ziti/log';
/**
 * Which dependency an error says is down, in one place for every context and the gateway, so that
 * they all answer 503 `SERVICE_UNAVAILABLE` for it (never 500 `UNHANDLED`) and report the outage
 * once instead of a stack trace per request.
 *
 * - `postgres`: SQLSTATE class 08 (connection exception), 57P01/57P02/57P03 (admin or crash
 *   shutdown, cannot connect now), 53300 (too many connections); Prisma P1001, P1002, P1008,
 *   P1017, P2024, P2037 and the driver adapter's DatabaseNotReachable, ConnectionClosed,
 *   SocketTimeout, TooManyConnections; pg's own connection messages (terminated, pool acquire
 *   timeout, client not queryable); and a bare socket error (refused, reset, unreachable): of
 *   the servers a request reaches, only `pg` hands those through as they are.
 * - `redis`: ioredis giving up on a command (`MaxRetriesPerRequestError`, `Connection is closed.`,
 *   `Command timed out` after `commandTimeout`).
 * - `nats`: a NATS connection closed, refused, draining or disconnected, or the bus refusing a
 *   publish while disconnected (`code: 'BUS_UNAVAILABLE'`).
 * - `context`: a gRPC call that could not reach its server (UNAVAILABLE, no ziti error attached).
 */
export type Dependency = 'postgres' | 'redis' | 'nats' | 'context';

const PG_DOWN_CODES = new Set(['57P01', '57P02', '57P03', '53300']);
const PRISMA_DOWN_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2037']);
const ADAPTER_DOWN_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const NATS_DOWN_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_REFUSED', 'CONNECTION_DRAINING', 'CONNECTION_TIMEOUT', 'DISCONNECT', 'BUS_UNAVAILABLE']);
const PG_DOWN_MESSAGE =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable|Client was closed and is not queryable|terminating connection due to)/;
const REDIS_DOWN_MESSAGE = /^(Connection is closed\.|Stream isn't writeable and enableOfflineQueue options is false|Reached the max retries per request limit|Command timed out)/;
/** gRPC status UNAVAILABLE. */
const GRPC_UNAVAILABLE = 14;

interface ErrorShape {
  name?: unknown;
  code?: unknown;
  kind?: unknown;
  message?: unknown;
  metadata?: { get?: (key: string) => unknown[] };
  meta?: { driverAdapterError?: unknown };
  cause?: unknown;
}

/** The dependency `err` (or one of its causes) says is unavailable, or undefined for any other error. */
export function unavailableDependency(err: unknown): Dependency | undefined {
  let e = err as ErrorShape | undefined;
  for (let depth = 0; depth < 6 && e && typeof e === 'object'; depth++) {
    const found = classifyOne(e);
    if (found) return found;
    e = (e.meta?.driverAdapterError ?? e.cause) as ErrorShape | undefined;
  }
  return undefined;
}

function classifyOne(e: ErrorShape): Dependency | undefined {
  const code = typeof e.code === 'string' ? e.code : undefined;
  const message = typeof e.message === 'string' ? e.message : '';
  const name = typeof e.name === 'string' ? e.name : '';
  if (typeof e.code === 'number' && e.code === GRPC_UNAVAILABLE && typeof e.metadata?.get === 'function') {
    return e.metadata.get('ziti-error-code').length === 0 ? 'context' : undefined;
  }
  if (name === 'MaxRetriesPerRequestError' || REDIS_DOWN_MESSAGE.test(message)) return 'redis';
  if (code !== undefined) {
    if (/^08[0-9A-Z]{3}$/.test(code) || PG_DOWN_CODES.has(code) || PRISMA_DOWN_CODES.has(code)) return 'postgres';
    if (NATS_DOWN_CODES.has(code) && (name === 'NatsError' || code === 'BUS_UNAVAILABLE')) return 'nats';
    if (SOCKET_CODES.has(code)) return 'postgres';
  }
  if (typeof e.kind === 'string' && ADAPTER_DOWN_KINDS.has(e.kind)) return 'postgres';
  if (PG_DOWN_MESSAGE.test(message)) return 'postgres';
  return undefined;
}

/** A short, single-line description of why, for the outage's log line (never sent to a caller). */
export function describeFailure(err: unknown): string {
  const e = err as ErrorShape | undefined;
  const code = typeof e?.code === 'string' || typeof e?.code === 'number' ? `${e.code} ` : '';
  const message = typeof e?.message === 'string' ? e.message : String(err);
  return `${code}${message}`.replace(/\s+/g, ' ').slice(0, 200);
}

interface Outage {
  since: number;
  failed: number;
}

/**
 * The dependencies this process finds down: one log line when one is lost (the first failure)
 * and one when it is back, with how long it was gone and how many operations failed (or, for
 * the bus, were held back) meanwhile. Names are `postgres`, `redis`, `nats` or, in the gateway,
 * `context <name>`. Process-wide: the all-in-one controller reports each dependency once.
 */
export class DependencyMonitor {
  private readonly outages = new Map<string, Outage>();

  constructor(private log: (line: string) => void = monitorLog()) {}

  /** Where the lines go (the default is the `dependencies` log: a loss at warn, a return at info). */
  setLog(log: (line: string) => void): void {
    this.log = log;
  }

  isDown(name: string): boolean {
    return this.outages.has(name);
  }

  /** `count` operations failed because `name` is down; the first since it was up logs the loss. */
  failed(name: string, reason: string, count = 1): void {
    const outage = this.outages.get(name);
    if (outage) {
      outage.failed += count;
      return;
    }
    this.outages.set(name, { since: Date.now(), failed: count });
    this.log(`dependency ${name} lost: ${reason}`);
  }

  /** `name` is known down without a failed operation yet (a disconnect, a failed probe). */
  lost(name: string, reason: string): void {
    if (!this.outages.has(name)) this.failed(name, reason, 0);
  }

  /** `name` answered again: logs its return once, with the count of the outage. Cheap when it was up. */
  up(name: string): void {
    if (this.outages.size === 0) return;
    const outage = this.outages.get(name);
    if (!outage) return;
    this.outages.delete(name);
    const seconds = ((Date.now() - outage.since) / 1000).toFixed(1);
    this.log(`dependency ${name} back after ${seconds} s; ${outage.failed} failed or held back meanwhile`);
  }
}

/** The `dependencies` log: a loss at warn, a return at info. */
function monitorLog(): (line: string) => void {
  const log = logger('dependencies');
  return (line) => (line.includes(' lost: ') ? log.warn(line) : log.info(line));
}

/** The monitor of this process. */
export const dependencies = new DependencyMonitor();
