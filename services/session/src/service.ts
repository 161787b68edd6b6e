import { createSchemaPool } from '@ziti/db-kit';
import { createServiceApp } from '@ziti/http-kit';
import { startOutboxRelay } from '@ziti/messaging';
import { type ContextDeps, type RunningContext, integrityService, startContext } from '@ziti/service-kit';
import { ServiceUpdates } from './domain/service-updates.js';
import { SessionManager } from './domain/session-manager.js';
import { sessionOutcomes } from './http/metrics.js';
import { subscribeAll } from './events/subscribers.js';
import { type Address, grpcPolicyPort, grpcPosturePort, grpcSessionTokenSource } from './grpc/clients.js';
import { remoteSessionSigner } from './grpc/signer.js';
import { maintenance } from './grpc/maintenance.js';
import { sessionService } from './grpc/session.js';
import { sessionIntegrity } from './grpc/integrity.js';
import { sessionHandlers } from './http/sessions.js';
import { SCHEMA, SERVICE_NAME } from './schema.js';
import { ServiceUpdateRepository, SessionRepository } from './store/session-repo.js';
import { PublishingSessionStore } from './events/session-events.js';

export type { Address };

/** What the composition root needs from its host (standalone `main.ts` or the all-in-one controller). */
export interface ServiceDeps extends ContextDeps {
  /** gRPC addresses of the contexts POST /sessions asks (a function when known only later). */
  policyGrpc?: Address;
  postureGrpc?: Address;
  pkiEnrollmentGrpc?: Address;
  /** Database connections of this context (default 10). */
  poolSize?: number;
  /** Seconds between re-checks of sessions created under posture checks (MFA timeouts); 0 = never. Default 5, the period of the controller's posture timeout enforcement (`PostureCache`). */
  postureSweepSeconds?: number;
  /**
   * Events for the gateway's OpenZiti-format event stream: a create hands its session back to the
   * gateway on the answer (`SESSION_CREATED_HEADER` of `@ziti/http-kit`), a delete publishes
   * `session.deleted` straight on the bus, without the outbox (best-effort). Default false.
   */
  sessionEvents?: boolean;
}

export type RunningService = RunningContext;

/**
 * Starts the session context: sessions and service-update times (Postgres, raw SQL on one pool; the
 * Prisma schema documents the tables), its HTTP slice of the Edge API, its gRPC services
 * (`SessionService` for the router control plane, health) and
 * its event consumers, and its part of the data integrity check. It publishes no events (no outbox relay).
 */
export function startService(deps: ServiceDeps): Promise<RunningService> {
  return startContext(SERVICE_NAME, deps, async ({ log, problemLog, onStop }) => {
    // A connection the server drops while idle (restart, failover) must not crash the process.
    const pool = createSchemaPool(deps.databaseUrl, SCHEMA, { max: deps.poolSize ?? 10 }, (err) => log(`${SERVICE_NAME}: idle database connection lost: ${err.message}`));
    onStop(() => pool.end());
    const ready = async () => (await pool.query('SELECT 1')).rowCount === 1;
    const policy = grpcPolicyPort(deps.policyGrpc);
    const posture = grpcPosturePort(deps.postureGrpc);
    const keys = grpcSessionTokenSource(deps.pkiEnrollmentGrpc);
    onStop(() => {
      policy.close();
      posture.close();
      keys.close();
    });
    const repository = new SessionRepository(pool);
    const store = deps.sessionEvents ? new PublishingSessionStore(repository, deps.bus, log) : repository;
    const sessions = new SessionManager(store, policy, posture, remoteSessionSigner(keys), log);
    const updates = new ServiceUpdates(new ServiceUpdateRepository(pool));
    const subscriptions = await subscribeAll(deps.bus, sessions, updates, log);
    onStop(() => Promise.all(subscriptions.map((s) => s.stop())));

    const sweepSeconds = deps.postureSweepSeconds ?? 5;
    if (sweepSeconds > 0) {
      let running = false;
      const timer = setInterval(() => {
        if (running) return;
        running = true;
        sessions
          .sweepPosture()
          .catch((err: unknown) => log(`${SERVICE_NAME}: posture re-check failed: ${(err as Error).message}`))
          .finally(() => (running = false));
      }, sweepSeconds * 1000);
      timer.unref();
      onStop(() => clearInterval(timer));
    }

    // No relay runs here (the context writes no events); the integrity fix drains a stray row with a one-off flush.
    const flushOutbox = async () => {
      const relay = startOutboxRelay({ pool, bus: deps.bus, pollIntervalMs: 3_600_000, log: problemLog });
      try {
        await relay.flush();
      } finally {
        await relay.stop();
      }
    };
    return {
      app: createServiceApp({ owner: SERVICE_NAME, internalSecret: deps.internalSecret, handlers: sessionHandlers(sessions, updates, deps.sessionEvents), outcomes: sessionOutcomes, ready }),
      grpc: [sessionService(repository), integrityService(sessionIntegrity(pool, flushOutbox)), maintenance(deps.databaseUrl, pool, log)],
      ready,
    };
  });
}
