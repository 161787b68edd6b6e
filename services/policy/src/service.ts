import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import { createServiceApp } from '@ziti/http-kit';
import { startOutboxRelay } from '@ziti/messaging';
import { PolicyServiceService } from '@ziti/proto';
import { type ContextDeps, type RunningContext, integrityService, startContext } from '@ziti/service-kit';
import { AccessManager } from './domain/access-manager.js';
import { ConfigManager } from './domain/config-manager.js';
import { PolicyManager } from './domain/policy-manager.js';
import { ProjectionManager } from './domain/projection-manager.js';
import { RouterManager } from './domain/router-manager.js';
import { ServiceManager } from './domain/service-manager.js';
import { UsageManager } from './domain/usage-manager.js';
import { startProjectionConsumers } from './events/consumers.js';
import { type AddressSource, identityAuthIdentityViews, identityAuthRouterIdentities, pkiRouterEnrollments, postureEvaluator } from './grpc/clients.js';
import { policyServer } from './grpc/policy.js';
import { fabricRouterStates } from './grpc/fabric-client.js';
import { TerminatorManager } from './domain/terminator-manager.js';
import { maintenance } from './grpc/maintenance.js';
import { policyIntegrity } from './grpc/integrity.js';
import { IntegrityManager } from './domain/integrity-manager.js';
import { SqlIntegrityStore } from './store/integrity.js';
import { configHandlers } from './http/configs.js';
import { identityHandlers } from './http/identities.js';
import { PolicyRenderer, policyHandlers } from './http/policies.js';
import { routerHandlers } from './http/routers.js';
import { serviceHandlers } from './http/services.js';
import { SCHEMA, SERVICE_NAME } from './schema.js';
import { openDatabase } from './store/db.js';
import { SqlRouterDataModel } from './store/router-data-model.js';
import { SqlUnitOfWork } from './store/unit-of-work.js';

/** What the composition root needs from its host (standalone `main.ts` or the all-in-one controller). */
export interface ServiceDeps extends ContextDeps {
  /** pki-enrollment's gRPC address (or a function giving it): router enrollment fields. Optional. */
  pkiEnrollmentGrpc?: AddressSource;
  /** posture's gRPC address (or a function giving it): postureQueries. Optional. */
  postureGrpc?: AddressSource;
  /** identity-auth's gRPC address (or a function giving it): identities of tunneler-enabled edge routers. Optional. */
  identityAuthGrpc?: AddressSource;
  /** fabric's gRPC address (or a function giving it): routers' live state and disconnects. Optional: without it routers render offline. */
  fabricGrpc?: AddressSource;
  /** Pool size (default 10). */
  databasePoolSize?: number;
}

export type RunningService = RunningContext;

function schemaHint(err: unknown): unknown {
  const e = err as { message?: string };
  if (/does not exist/.test(e?.message ?? '')) return new Error(`${SERVICE_NAME}: the schema "${SCHEMA}" is not migrated (run the migrations first): ${e.message}`);
  return err;
}

/** Starts the policy context: its HTTP slice of the Edge API, its gRPC server, its event consumers and its outbox relay. */
export function startService(deps: ServiceDeps): Promise<RunningService> {
  return startContext(SERVICE_NAME, deps, async ({ log, problemLog, onStop }) => {
    const db = openDatabase(deps.databaseUrl, log, deps.databasePoolSize);
    onStop(() => db.close());
    const ready = async () => (await db.pool.query('SELECT 1')).rowCount === 1;
    const relay = startOutboxRelay({ pool: db.pool, bus: deps.bus, log: problemLog });
    onStop(() => relay.stop());
    const uow = new SqlUnitOfWork(db, () => relay.notify());
    const pki = pkiRouterEnrollments(deps.pkiEnrollmentGrpc, log);
    const posture = postureEvaluator(deps.postureGrpc, log);
    const routerIdentities = identityAuthRouterIdentities(deps.identityAuthGrpc, log);
    const identityViews = identityAuthIdentityViews(deps.identityAuthGrpc, log);
    const routerStates = fabricRouterStates(deps.fabricGrpc, log);
    onStop(() => {
      routerStates.close();
      pki.close();
      posture.close();
      routerIdentities.close();
      identityViews.close();
    });

    const configs = new ConfigManager(uow);
    await configs.ensureBuiltins().catch((err) => {
      throw schemaHint(err);
    });
    const services = new ServiceManager(uow);
    const routers = new RouterManager(uow, pki, routerIdentities, routerStates);
    const terminators = new TerminatorManager(uow);
    const policies = new PolicyManager(uow);
    const access = new AccessManager(uow, posture, pki);
    const projections = new ProjectionManager(uow);
    const usage = new UsageManager(uow);
    const render = new PolicyRenderer(policies, uow, identityViews);
    const integrity = new IntegrityManager(uow, new SqlIntegrityStore(db.pool), projections, routerIdentities);

    const subscriptions = await startProjectionConsumers(deps.bus, projections, log);
    onStop(() => Promise.all(subscriptions.map((s) => s.stop())));

    return {
      app: createServiceApp({
        owner: SERVICE_NAME,
        internalSecret: deps.internalSecret,
        ready,
        handlers: {
          ...configHandlers(configs, services, access),
          ...serviceHandlers(services, access, configs, routers, policies, render),
          ...routerHandlers(routers, services, access, policies, render, usage),
          ...policyHandlers(policies, render, services, routers, access),
          ...identityHandlers(access, policies, routers, render),
        },
      }),
      grpc: [
        { definition: PolicyServiceService, implementation: policyServer(projections, usage, access, terminators, routerStates, new SqlRouterDataModel(db)) as unknown as UntypedServiceImplementation },
        integrityService(policyIntegrity(integrity, db.pool, () => relay.flush())),
        maintenance(deps.databaseUrl, db.pool, log),
      ],
      ready,
    };
  });
}
