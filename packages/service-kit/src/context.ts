import type { HttpApp } from '@ziti/http-kit';
import { lineLogger, logger, problemLogger } from '@ziti/log';
import type { Cache, EventBus } from '@ziti/messaging';
import { type GrpcServiceBinding, healthService, startGrpcServer } from './grpc.js';
import { listenHttp } from './http.js';
import type { ContextName } from './internal-tls.js';

/** What every context's composition root takes from its host (standalone `main.ts` or the all-in-one controller). */
export interface ContextDeps {
  databaseUrl: string;
  bus: EventBus;
  cache: Cache;
  /** Secret shared with the gateway, verifying the principal it signs. */
  internalSecret: string;
  /** Port 0 = ephemeral. */
  http: { host: string; port: number };
  grpc: { host: string; port: number };
  /** Text lines instead of the context's structured log (tests). */
  log?: (m: string) => void;
}

/** A started context. */
export interface RunningContext {
  name: ContextName;
  httpUrl: string;
  grpcAddress: string;
  stop(): Promise<void>;
}

/** What a context's start is given to build with. */
export interface ContextScope {
  log: (m: string) => void;
  /** For the outbox relay and other background work: keeps an error's stack unless the host takes text lines. */
  problemLog: (m: string, err?: unknown) => void;
  /** Runs when the context stops (or its start fails), in reverse order of registration. */
  onStop(close: () => unknown): void;
}

/** What a context serves, once built. */
export interface ContextServing {
  /** Its slice of the Edge API (`createServiceApp`), answered to the gateway only. */
  app: HttpApp;
  /** Its gRPC services besides `HealthService`, which `startContext` adds from `ready`. */
  grpc: GrpcServiceBinding[];
  /** Whether it can serve (its database answers). */
  ready: () => Promise<boolean>;
}

/**
 * The one start of every context: `build` opens what the context needs (registering each close
 * with `onStop`) and returns what it serves; then its HTTP port (mutual TLS, the gateway only) and
 * its gRPC server (mutual TLS, each RPC for its callers) listen with the context's internal
 * identity, and one line says where. A start that fails closes what it opened, newest first.
 */
export async function startContext(name: ContextName, deps: ContextDeps, build: (scope: ContextScope) => Promise<ContextServing>): Promise<RunningContext> {
  const contextLog = logger(name);
  const log = deps.log ?? lineLogger(contextLog);
  const problemLog = deps.log ? (m: string, err?: unknown) => log(err ? `${m}: ${String(err)}` : m) : problemLogger(contextLog);
  const closers: (() => unknown)[] = [];
  const stop = async () => {
    for (const close of closers.splice(0).reverse()) {
      try {
        await close();
      } catch (err) {
        log(`${name}: stop: ${err}`);
      }
    }
  };
  try {
    const serving = await build({ log, problemLog, onStop: (close) => closers.push(close) });
    const http = await listenHttp(serving.app, deps.http.host, deps.http.port, name);
    closers.push(() => http.close());
    const grpc = await startGrpcServer(deps.grpc.host, deps.grpc.port, [...serving.grpc, healthService(name, serving.ready)], name);
    closers.push(() => grpc.stop());
    log(`${name}: http ${http.url}, grpc ${grpc.address}`);
    return { name, httpUrl: http.url, grpcAddress: grpc.address, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
