import { PrismaPg } from '@prisma/adapter-pg';
import { createSchemaPool } from '@ziti/db-kit';
import { createServiceApp } from '@ziti/http-kit';
import { type Cache, type EventBus, startOutboxRelay } from '@ziti/messaging';
import { healthService, listenHttp, startGrpcServer } from '@ziti/service-kit';
import { PrismaClient } from './generated/prisma/client.js';
import { SCHEMA, SERVICE_NAME } from './schema.js';

/** What the composition root needs from its host (standalone `main.ts` or the all-in-one controller). */
export interface ServiceDeps {
  databaseUrl: string;
  bus: EventBus;
  cache: Cache;
  /** Secret shared with the gateway, used to verify the signed principal. */
  internalSecret: string;
  /** Port 0 = ephemeral. */
  http: { host: string; port: number };
  grpc: { host: string; port: number };
  log?: (m: string) => void;
}

export interface RunningService {
  name: string;
  httpUrl: string;
  grpcAddress: string;
  stop(): Promise<void>;
}

/** Starts the session context: its HTTP slice of the Edge API, its gRPC server and its outbox relay. */
export async function startService(deps: ServiceDeps): Promise<RunningService> {
  const log = deps.log ?? console.error;
  // A connection the server drops while idle (restart, failover) must not crash the process.
  const pool = createSchemaPool(deps.databaseUrl, SCHEMA, {}, (err) => log(`${SERVICE_NAME}: idle database connection lost: ${err.message}`));
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { schema: SCHEMA }) });
  const ready = async () => (await pool.query('SELECT 1')).rowCount === 1;
  const closers: (() => Promise<unknown>)[] = [() => pool.end(), () => prisma.$disconnect()];
  const stop = async () => {
    for (const close of closers.splice(0).reverse()) await close().catch((err) => log(`${SERVICE_NAME}: stop: ${err}`));
  };
  try {
    const relay = startOutboxRelay({ pool, bus: deps.bus });
    closers.push(() => relay.stop());
    const app = createServiceApp({ owner: SERVICE_NAME, internalSecret: deps.internalSecret, handlers: {}, ready });
    const http = await listenHttp(app, deps.http.host, deps.http.port);
    closers.push(() => http.close());
    const grpc = await startGrpcServer(deps.grpc.host, deps.grpc.port, [healthService(SERVICE_NAME, ready)]);
    closers.push(() => grpc.stop());
    deps.log?.(`${SERVICE_NAME}: http ${http.url}, grpc ${grpc.address}`);
    return { name: SERVICE_NAME, httpUrl: http.url, grpcAddress: grpc.address, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
