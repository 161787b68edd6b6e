import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import { createServiceApp } from '@ziti/http-kit';
import { type Cache, type EventBus, startOutboxRelay } from '@ziti/messaging';
import { PostureServiceService } from '@ziti/proto';
import { healthService, integrityService, listenHttp, startGrpcServer } from '@ziti/service-kit';
import { PostureCheckManager } from './domain/check-manager.js';
import { PostureManager } from './domain/posture-manager.js';
import { postureDataEvents } from './events/events.js';
import { subscribeLifecycle } from './events/subscribers.js';
import { grpcIdentityLookup } from './grpc/identity-client.js';
import { type Address, grpcPolicyPort } from './grpc/policy-client.js';
import { postureServer } from './grpc/posture.js';
import { maintenance } from './grpc/maintenance.js';
import { postureIntegrity } from './grpc/integrity.js';
import { identityPostureHandlers } from './http/identity-posture.js';
import { postureCheckHandlers } from './http/posture-checks.js';
import { postureResponseHandlers } from './http/posture-responses.js';
import { SERVICE_NAME } from './schema.js';
import { openDatabase } from './store/db.js';
import { CachePostureDataStore } from './store/posture-data-cache.js';
import { PostureCheckRepository } from './store/posture-check-repo.js';
import { lineLogger, logger, problemLogger } from '@ziti/log';

export type { Address };

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
  /** The policy context's gRPC address (SyncPostureCheck, GetRoleAttributeUsage). */
  policyGrpc?: Address;
  /** identity-auth's gRPC address (GetIdentity: 404 for the posture data of an unknown identity). */
  identityAuthGrpc?: Address;
  log?: (m: string) => void;
}

export interface RunningService {
  name: string;
  httpUrl: string;
  grpcAddress: string;
  stop(): Promise<void>;
}

/**
 * Starts the posture context: posture check types and checks (Postgres), posture responses and
 * data (shared cache), evaluation over gRPC, its outbox relay and its event consumers.
 */
export async function startService(deps: ServiceDeps): Promise<RunningService> {
  const serviceLog = logger(SERVICE_NAME);
  const log = deps.log ?? lineLogger(serviceLog);
  // The relay's failures keep their error (and stack) unless the caller takes text lines.
  const relayLog = deps.log ? (m: string, err?: unknown) => log(err ? `${m}: ${String(err)}` : m) : problemLogger(serviceLog);
  const db = openDatabase(deps.databaseUrl, log);
  const ready = async () => (await db.pool.query('SELECT 1')).rowCount === 1;
  const closers: (() => Promise<unknown>)[] = [() => db.close()];
  const stop = async () => {
    for (const close of closers.splice(0).reverse()) await close().catch((err) => log(`${SERVICE_NAME}: stop: ${err}`));
  };
  try {
    const relay = startOutboxRelay({ pool: db.pool, bus: deps.bus, log: relayLog });
    closers.push(() => relay.stop());
    const policy = grpcPolicyPort(deps.policyGrpc);
    closers.push(async () => policy.close());
    const identities = grpcIdentityLookup(deps.identityAuthGrpc, log);
    closers.push(async () => identities.close());

    const checkStore = new PostureCheckRepository(db.prisma, db.pool, () => relay.notify());
    const dataStore = new CachePostureDataStore(deps.cache);
    const checks = new PostureCheckManager(checkStore, policy, log);
    const posture = new PostureManager(checkStore, dataStore, policy, postureDataEvents(db.pool, () => relay.notify()), log);

    const subscription = await subscribeLifecycle(deps.bus, posture, log);
    closers.push(() => subscription.stop());

    const app = createServiceApp({
      owner: SERVICE_NAME,
      internalSecret: deps.internalSecret,
      ready,
      handlers: {
        ...postureCheckHandlers(checks),
        ...postureResponseHandlers(posture),
        ...identityPostureHandlers(posture, identities),
      },
    });
    const http = await listenHttp(app, deps.http.host, deps.http.port, SERVICE_NAME);
    closers.push(() => http.close());
    const grpc = await startGrpcServer(deps.grpc.host, deps.grpc.port, [
      { definition: PostureServiceService, implementation: postureServer(posture) as unknown as UntypedServiceImplementation },
      integrityService(postureIntegrity(db.pool, checkStore, () => relay.flush())),
      healthService(SERVICE_NAME, ready),
      maintenance(deps.databaseUrl, db.pool, log),
    ], 'posture');
    closers.push(() => grpc.stop());
    log(`${SERVICE_NAME}: http ${http.url}, grpc ${grpc.address}`);
    return { name: SERVICE_NAME, httpUrl: http.url, grpcAddress: grpc.address, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
