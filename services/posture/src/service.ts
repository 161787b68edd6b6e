import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import { createServiceApp } from '@ziti/http-kit';
import { startOutboxRelay } from '@ziti/messaging';
import { PostureServiceService } from '@ziti/proto';
import { type ContextDeps, type RunningContext, integrityService, startContext } from '@ziti/service-kit';
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

export type { Address };

/** What the composition root needs from its host (standalone `main.ts` or the all-in-one controller). */
export interface ServiceDeps extends ContextDeps {
  /** The policy context's gRPC address (SyncPostureCheck, GetRoleAttributeUsage). */
  policyGrpc?: Address;
  /** identity-auth's gRPC address (GetIdentity: 404 for the posture data of an unknown identity). */
  identityAuthGrpc?: Address;
}

export type RunningService = RunningContext;

/**
 * Starts the posture context: posture check types and checks (Postgres), posture responses and
 * data (shared cache), evaluation over gRPC, its outbox relay and its event consumers.
 */
export function startService(deps: ServiceDeps): Promise<RunningService> {
  return startContext(SERVICE_NAME, deps, async ({ log, problemLog, onStop }) => {
    const db = openDatabase(deps.databaseUrl, log);
    onStop(() => db.close());
    const ready = async () => (await db.pool.query('SELECT 1')).rowCount === 1;
    const relay = startOutboxRelay({ pool: db.pool, bus: deps.bus, log: problemLog });
    onStop(() => relay.stop());
    const policy = grpcPolicyPort(deps.policyGrpc);
    onStop(() => policy.close());
    const identities = grpcIdentityLookup(deps.identityAuthGrpc, log);
    onStop(() => identities.close());

    const checkStore = new PostureCheckRepository(db.prisma, db.pool, () => relay.notify());
    const dataStore = new CachePostureDataStore(deps.cache);
    const checks = new PostureCheckManager(checkStore, policy, log);
    const posture = new PostureManager(checkStore, dataStore, policy, postureDataEvents(db.pool, () => relay.notify()), log);

    const subscription = await subscribeLifecycle(deps.bus, posture, log);
    onStop(() => subscription.stop());

    return {
      app: createServiceApp({
        owner: SERVICE_NAME,
        internalSecret: deps.internalSecret,
        ready,
        handlers: {
          ...postureCheckHandlers(checks),
          ...postureResponseHandlers(posture),
          ...identityPostureHandlers(posture, identities),
        },
      }),
      grpc: [
        { definition: PostureServiceService, implementation: postureServer(posture) as unknown as UntypedServiceImplementation },
        integrityService(postureIntegrity(db.pool, checkStore, () => relay.flush())),
        maintenance(deps.databaseUrl, db.pool, log),
      ],
      ready,
    };
  });
}
