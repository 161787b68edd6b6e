import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import { createServiceApp } from '@ziti/http-kit';
import { startOutboxRelay } from '@ziti/messaging';
import { PkiEnrollmentServiceService } from '@ziti/proto';
import { type ContextDeps, type RunningContext, integrityService, startContext } from '@ziti/service-kit';
import { enrollmentOutcomes } from './http/metrics.js';
import { KeyVault } from './crypto/secrets.js';
import { EDGE_SERVER_KEY_PURPOSE, deriveEcKey } from '@ziti/x509';
import { CaManager } from './domain/cas.js';
import { EnrollFlows } from './domain/enroll.js';
import { EnrollmentManager, enrollmentLifetimeMs } from './domain/enrollments.js';
import { EdgeAddress, Jwts } from './domain/jwts.js';
import { ControllerPki } from './domain/pki.js';
import type { IdentityDirectory } from './domain/ports.js';
import { RouterEnrollments } from './domain/routers.js';
import { DEFAULT_MAX_API_SESSION_CERTIFICATES, SessionCertManager } from './domain/session-certs.js';
import { subscribeIdentityEvents } from './events/subscribers.js';
import { identityAuthDirectory } from './grpc/identity-auth-client.js';
import { pkiEnrollmentServer } from './grpc/pki-enrollment.js';
import { maintenance } from './grpc/maintenance.js';
import { pkiIntegrity } from './grpc/integrity.js';
import { caHandlers } from './http/cas.js';
import { enrollHandlers } from './http/enroll.js';
import { enrollmentHandlers } from './http/enrollments.js';
import { sessionCertHandlers } from './http/session-certs.js';
import { trustHandlers } from './http/trust.js';
import { SCHEMA, SERVICE_NAME } from './schema.js';
import { openDatabase } from './store/db.js';
import { PrismaUnitOfWork } from './store/unit-of-work.js';

/** What the composition root needs from its host (standalone `main.ts` or the all-in-one controller). */
export interface ServiceDeps extends ContextDeps {
  /** identity-auth's gRPC `host:port` (authenticators, identities), or a function giving it when first needed. */
  identityAuthGrpc?: string | (() => string | undefined);
  /** A directory to use instead of identity-auth's gRPC (tests). */
  identityDirectory?: IdentityDirectory;
  /**
   * The secret the edge API's server key is derived from (`ZITI_SERVER_KEY_SECRET`); the gateway
   * holds the same one. That key signs enrollment, network and session JWTs.
   */
  serverKeySecret: string;
  /** `host:port` of the edge API; default: the address the gateway reports in IssueServerCertificate. */
  advertisedAddress?: string;
  /** Key-encryption secret of the PKI's private keys (`ZITI_PKI_KEY`); default: the internal secret. */
  pkiKey?: string;
  trustDomain?: string;
  /** The `ctrls` claim of enrollment JWTs as given (`ZITI_CTRL_ENDPOINTS`, e.g. `tls:ctrl.example:6262`); wins over `ctrlAdvertisedAddress`. */
  ctrlAddresses?: string[];
  /**
   * `host:port` where routers reach the control plane (`ZITI_ROUTER_CTRL_ADVERTISED_ADDRESS`):
   * enrollment JWTs name `tls:<it>` in `ctrls`. A function when it is known only later (the
   * all-in-one controller: once fabric listens). Default: the edge API's host, port 6262.
   */
  ctrlAdvertisedAddress?: string | (() => string | undefined);
  identityEnrollmentMinutes?: number;
  routerEnrollmentMinutes?: number;
  /**
   * The most certificates one API session holds (`ZITI_MAX_API_SESSION_CERTIFICATES`); default 10
   * (`DEFAULT_MAX_API_SESSION_CERTIFICATES`), 0 = no bound.
   */
  maxApiSessionCertificates?: number;
}

export type RunningService = RunningContext;

function schemaHint(err: unknown): unknown {
  const e = err as { code?: string; message?: string };
  if (e?.code === 'P2021' || /does not exist/.test(e?.message ?? '')) {
    return new Error(`${SERVICE_NAME}: the schema "${SCHEMA}" is not migrated (run the migrations first): ${e.message}`);
  }
  return err;
}

/**
 * Starts the pki-enrollment context: the controller PKI (created on first start), its HTTP slice
 * of the Edge API, its gRPC service, the outbox relay and its durable event consumers.
 */
export function startService(deps: ServiceDeps): Promise<RunningService> {
  return startContext(SERVICE_NAME, deps, async ({ log, problemLog, onStop }) => {
    const db = openDatabase(deps.databaseUrl, log);
    onStop(() => db.close());
    const relay = startOutboxRelay({ pool: db.pool, bus: deps.bus, log: problemLog });
    onStop(() => relay.stop());
    const uow = new PrismaUnitOfWork(db.prisma, db.pool, relay);
    let identities = deps.identityDirectory;
    if (!identities) {
      const client = identityAuthDirectory(deps.identityAuthGrpc ?? '127.0.0.1:18201', log);
      onStop(() => client.close());
      identities = client;
    }

    const pki = await ControllerPki.open(uow, new KeyVault(deps.pkiKey || deps.internalSecret), { serverKey: deriveEcKey(deps.serverKeySecret, EDGE_SERVER_KEY_PURPOSE), trustDomain: deps.trustDomain, log }).catch((err) => {
      throw schemaHint(err);
    });
    const address = new EdgeAddress(uow.repos, deps.advertisedAddress);
    const jwts = new Jwts(pki, address, { ctrlAddresses: deps.ctrlAddresses, ctrlAdvertisedAddress: deps.ctrlAdvertisedAddress });
    const enrollments = new EnrollmentManager(uow, jwts, identities, enrollmentLifetimeMs(deps.identityEnrollmentMinutes));
    const routers = new RouterEnrollments(uow, jwts, enrollmentLifetimeMs(deps.routerEnrollmentMinutes));
    const flows = new EnrollFlows(uow, pki, identities);
    const cas = new CaManager(uow, jwts, identities, log);
    const sessionCerts = new SessionCertManager(uow, pki, deps.maxApiSessionCertificates ?? DEFAULT_MAX_API_SESSION_CERTIFICATES);

    const subscription = await subscribeIdentityEvents(deps.bus, { sessionCerts, enrollments });
    onStop(() => subscription.stop());

    const ready = async () => (await db.pool.query('SELECT 1')).rowCount === 1;
    return {
      app: createServiceApp({
        owner: SERVICE_NAME,
        internalSecret: deps.internalSecret,
        ready,
        outcomes: enrollmentOutcomes,
        handlers: {
          ...trustHandlers(pki, jwts),
          ...enrollHandlers(flows, deps.internalSecret),
          ...enrollmentHandlers(enrollments),
          ...caHandlers(cas),
          ...sessionCertHandlers(sessionCerts),
        },
      }),
      grpc: [
        {
          definition: PkiEnrollmentServiceService,
          implementation: pkiEnrollmentServer({ pki, jwts, address, enrollments, routers, cas: uow.repos.cas, sessionCerts }) as unknown as UntypedServiceImplementation,
        },
        integrityService(pkiIntegrity(db.pool, () => relay.flush())),
        maintenance(deps.databaseUrl, db.pool, log),
      ],
      ready,
    };
  });
}
