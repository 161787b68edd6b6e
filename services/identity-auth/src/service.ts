import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ApiError } from '@ziti/errors';
import { createServiceApp } from '@ziti/http-kit';
import { IdentityAuthServiceService } from '@ziti/proto';
import { startOutboxRelay } from '@ziti/messaging';
import { type ContextDeps, healthService, integrityService, listenHttp, startGrpcServer } from '@ziti/service-kit';
import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import { identityAuthOutcomes } from './http/metrics.js';
import { type PkiAddress, grpcPkiContext } from './clients/pki-client.js';
import { type PolicyAddress, grpcPolicyContext } from './clients/policy-client.js';
import { type FabricAddress, grpcFabricContext } from './clients/fabric-client.js';
import { RouterSessions } from './domain/router-sessions.js';
import { SqlLegacySessionStore } from './store/legacy-session-repo.js';
import { JwksFetcher } from './clients/jwks-fetcher.js';
import { OutboundGuard } from './clients/outbound-url.js';
import { ActivityRecorder, ApiSessionManager, DEFAULT_MAX_API_SESSIONS_PER_IDENTITY } from './domain/api-session-manager.js';
import { AuthPolicyManager } from './domain/auth-policy-manager.js';
import { Authenticator } from './domain/authenticator.js';
import { AuthenticatorManager } from './domain/authenticator-manager.js';
import { SessionEnder } from './domain/credential-reset.js';
import { ensureDefaultAdmin, validateDefaultAdminSpec } from './domain/bootstrap.js';
import { CertificateLifecycle } from './domain/cert-lifecycle.js';
import { CertLogin } from './domain/cert-login.js';
import { JwtVerifier } from './domain/ext-jwt/jwt-verifier.js';
import { SignerManager } from './domain/ext-jwt/signer-manager.js';
import { ControllerSettingsManager, GLOBAL_SETTING_ID } from './domain/controller-settings.js';
import { IdentityManager } from './domain/identity-manager.js';
import { MfaGuard } from './domain/mfa/mfa-guard.js';
import { MfaManager } from './domain/mfa/mfa-manager.js';
import { SecretBox } from './domain/mfa/secret-box.js';
import { DEFAULT_TOTP_ISSUER } from './domain/mfa/totp.js';
import { RoleAttributeQueries } from './domain/role-attributes.js';
import { SecondaryFactorChecker } from './domain/session-state.js';
import { sessionTimeoutMs } from './domain/session-time.js';
import { sharedPrincipalCache } from './events/principal-cache.js';
import { subscribePkiEvents } from './events/subscribers.js';
import { identityAuthServer } from './grpc/identity-auth.js';
import { maintenance } from './grpc/maintenance.js';
import { identityAuthIntegrity } from './grpc/integrity.js';
import { IdentityIntegrity } from './domain/integrity-manager.js';
import { SqlIntegrityRepository } from './store/integrity-repo.js';
import { apiSessionHandlers } from './http/api-sessions.js';
import { authPolicyHandlers } from './http/auth-policies.js';
import { authenticateHandlers } from './http/authenticate.js';
import { authenticatorHandlers } from './http/authenticators.js';
import { certLifecycleHandlers } from './http/cert-lifecycle.js';
import { controllerSettingHandlers } from './http/controller-settings.js';
import { currentHandlers } from './http/current.js';
import { identityHandlers } from './http/identities.js';
import { identityTypeHandlers } from './http/identity-types.js';
import { enrollTokenHandlers } from './http/enroll-token.js';
import { TokenEnrollment } from './domain/ext-jwt/token-enrollment.js';
import { mfaHandlers } from './http/mfa.js';
import { signerHandlers } from './http/signers.js';
import { AuthRequests } from './oidc/auth-requests.js';
import { RefreshRotation } from './oidc/refresh-rotation.js';
import { oidcHttp } from './oidc/http.js';
import { KeyRing, sqlKeyStore } from './oidc/key-ring.js';
import { OidcProvider } from './oidc/provider.js';
import { Revocations } from './oidc/revocations.js';
import { TotpTokens } from './oidc/totp-token.js';
import { revocationHandlers } from './http/revocations.js';
import { totpTokenHandlers } from './http/totp-token.js';
import { SCHEMA, SERVICE_NAME } from './schema.js';
import { openDatabase } from './store/db.js';
import { cacheMfaGuardStore } from './store/mfa-guard-cache.js';
import { PrismaUnitOfWork } from './store/unit-of-work.js';
import { lineLogger, logger, problemLogger } from '@ziti/log';

/** What the identity-auth context needs from its host (the standalone main or the all-in-one launcher). */
export interface IdentityAuthDeps extends ContextDeps {
  /** Where a generated default-admin password is written (`admin-password`, mode 0600). */
  dataDir: string;
  /**
   * The default admin, created once when none exists (ZITI_USER / ZITI_PWD). An existing admin is
   * left alone: changing ZITI_PWD later does not rewrite its password.
   */
  admin: { username: string; password?: string; name?: string };
  /** API session idle timeout; default 30, values below 1 fall back to 30. */
  sessionTimeoutMinutes?: number;
  /**
   * The most API sessions one identity holds (`ZITI_MAX_API_SESSIONS_PER_IDENTITY`); a login
   * beyond it ends that identity's least recently active sessions. Default 100
   * (`DEFAULT_MAX_API_SESSIONS_PER_IDENTITY`); 0 = no bound.
   */
  maxApiSessionsPerIdentity?: number;
  /**
   * The policy context's gRPC address, for the synchronous identity projection (`SyncIdentity`)
   * and role-attribute usage. A function when the address is only known after this service
   * started (the all-in-one start). Unset: no synchronous sync (the identity events converge it)
   * and policy usage counts of 0.
   */
  policyGrpc?: PolicyAddress;
  /**
   * pki-enrollment's gRPC address (enrollments of identities, certificate login, extend). A
   * function when only known after this service started. Unset: identity create with `enrollment`,
   * `method=cert`, re-enroll and extend answer 503; enrollment blocks are `{}`.
   */
  pkiEnrollmentGrpc?: PkiAddress;
  /**
   * The fabric context's gRPC address (the router control plane), for `hasEdgeRouterConnection` of
   * identity views. A function when only known after this service started. Unset, unreachable or
   * not serving `GetIdentityConnections`: every identity shows false.
   */
  fabricGrpc?: FabricAddress;
  /** Encrypts TOTP secrets and recovery codes at rest (ZITI_MFA_SECRET); default: the internal secret. */
  secretsKey?: string;
  /** Age at which the OIDC signing key is replaced (OIDC.md "Keys and rotation"); default 30 days, 0 = never. */
  oidcKeyRotationDays?: number;
  /** The TOTP issuer of provisioning URLs (`edge.totp.hostname`); default `openziti.io`. */
  totpIssuer?: string;
  /**
   * Requests the controller makes itself (JWKS of external JWT signers, checked when a signer is
   * written and on every fetch) may go to loopback and private networks (10/8, 172.16/12,
   * 192.168/16, 100.64/10, 127/8, fc00::/7, ::1). Default false. Link-local, cloud metadata,
   * unspecified, multicast, broadcast and reserved addresses are refused either way.
   */
  outboundAllowPrivate?: boolean;
  /**
   * This controller's id (ZITI_INSTANCE_ID, default the host name): the id `GET /controllers`
   * lists, the one controller a controller-specific setting may name. The gateway reads the same
   * setting; the all-in-one controller passes one value to both.
   */
  instanceId?: string;
  /**
   * Tell the gateway each login's outcome on its response (`AUTH_OUTCOME_HEADER` of
   * `@ziti/http-kit`), for the `authentication` records of its OpenZiti-format event stream.
   * Default false.
   */
  authenticationEvents?: boolean;
}

export interface RunningService {
  name: string;
  httpUrl: string;
  grpcAddress: string;
  stop(): Promise<void>;
}

/** How often idle API sessions are deleted (the controller's session enforcer) and run-out lockouts cleared. */
const SWEEP_INTERVAL_MS = 60_000;

async function storeAdminPassword(dataDir: string, password: string, username: string, log: (m: string) => void): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, 'admin-password');
  await writeFile(file, `${password}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  // The password itself is never logged: log lines are shipped and kept where secrets must not be.
  log(`identity-auth: created the default admin "${username}" with a generated password, stored in ${file} (mode 0600)`);
}

function schemaHint(err: unknown): unknown {
  const e = err as { code?: string; message?: string };
  if (e?.code === 'P2021' || /does not exist/.test(e?.message ?? '')) {
    return new Error(`identity-auth: the schema "${SCHEMA}" is not migrated (run the migrations first): ${e.message}`);
  }
  return err;
}

const DEFAULT_KEY_ROTATION_DAYS = 30;

/** Replaces the OIDC signing key when it is `days` old (0: never) and drops keys retired a token lifetime ago. */
async function rotateKeys(keys: KeyRing, days: number): Promise<void> {
  if (days > 0) await keys.rotateIfOlderThan(days * 86_400_000);
  await keys.prune();
}

/** Composition root of identity-auth: stores, managers, HTTP and gRPC. */
export async function startService(deps: IdentityAuthDeps): Promise<RunningService> {
  const serviceLog = logger(SERVICE_NAME);
  const log = deps.log ?? lineLogger(serviceLog);
  // The relay's failures keep their error (and stack) unless the caller takes text lines.
  const relayLog = deps.log ? (m: string, err?: unknown) => log(err ? `${m}: ${String(err)}` : m) : problemLogger(serviceLog);
  const instanceId = deps.instanceId || hostname();
  validateDefaultAdminSpec(deps.admin);
  const db = openDatabase(deps.databaseUrl);
  const relay = startOutboxRelay({ pool: db.pool, bus: deps.bus, log: relayLog });
  const cleanup: (() => Promise<void>)[] = [() => db.close(), () => relay.stop()]; // run in reverse
  const stopAll = async () => {
    for (const step of cleanup.splice(0).reverse()) await step().catch((err: unknown) => log(`identity-auth: stop: ${String(err)}`));
  };

  try {
    const cache = sharedPrincipalCache(deps.cache, log);
    const uow = new PrismaUnitOfWork(db.prisma, db.pool, relay, db.sessionWrites, {
      maxPerIdentity: deps.maxApiSessionsPerIdentity ?? DEFAULT_MAX_API_SESSIONS_PER_IDENTITY,
      evicted: (ended) => cache.drop(ended.map((s) => s.token)),
    });
    await ensureDefaultAdmin(uow, deps.admin, (pw) => storeAdminPassword(deps.dataDir, pw, deps.admin.username, log)).catch((err) => {
      throw schemaHint(err);
    });

    const activity = new ActivityRecorder(uow, 1000, log);
    cleanup.push(() => activity.flush());
    const policy = grpcPolicyContext(deps.policyGrpc, log);
    cleanup.push(async () => policy.close());
    const outbound = new OutboundGuard({ allowPrivate: deps.outboundAllowPrivate === true });
    const verifier = new JwtVerifier(new JwksFetcher({ guard: outbound, log }));
    const factors = new SecondaryFactorChecker(uow.repos, verifier);
    const box = new SecretBox(deps.secretsKey || deps.internalSecret);
    const keys = new KeyRing(sqlKeyStore(db.pool), box);
    await keys.ensureSigningKey();
    const revocations = new Revocations(uow, deps.cache, log);
    const sessions = new ApiSessionManager(uow, cache, activity, factors, sessionTimeoutMs(deps.sessionTimeoutMinutes), { keys, revocations });
    const pki = grpcPkiContext(deps.pkiEnrollmentGrpc, log);
    cleanup.push(async () => pki.close());
    const fabric = grpcFabricContext(deps.fabricGrpc, log);
    cleanup.push(async () => fabric.close());
    const identities = new IdentityManager(uow, cache, policy, pki, revocations, fabric);
    const sessionEnder = new SessionEnder(cache, revocations);
    const authenticators = new AuthenticatorManager(uow, sessionEnder);
    const authenticator = new Authenticator(uow, identities, verifier, factors, new CertLogin(uow, pki, identities));
    const mfaGuard = new MfaGuard(cacheMfaGuardStore(deps.cache, log));
    const mfa = new MfaManager(uow, box, cache, mfaGuard);
    const settings = new ControllerSettingsManager(uow, () => [instanceId]);
    const oidc = new OidcProvider({
      requests: new AuthRequests(deps.cache),
      rotation: new RefreshRotation(deps.cache),
      authenticator,
      factors,
      mfa,
      sessions,
      uow,
      keys,
      revocations,
      pki,
      // This controller's effective setting; the global one while it has none of its own.
      settings: async () => {
        const own = await settings.effective(instanceId).catch((err: unknown) => {
          if (err instanceof ApiError && err.code === 'NOT_FOUND') return settings.effective(GLOBAL_SETTING_ID);
          throw err;
        });
        return own.effective;
      },
    });
    const ready = async () => {
      await db.pool.query('SELECT 1');
      return true;
    };

    const app = createServiceApp({
      owner: SERVICE_NAME,
      internalSecret: deps.internalSecret,
      ready,
      outcomes: identityAuthOutcomes,
      handlers: {
        ...authenticateHandlers(authenticator, sessions, mfa, deps.internalSecret, deps.authenticationEvents),
        ...currentHandlers(sessions, identities),
        ...identityHandlers(identities, new RoleAttributeQueries(uow.repos, policy)),
        ...identityTypeHandlers(uow.repos.identityTypes),
        ...apiSessionHandlers(sessions),
        ...authPolicyHandlers(new AuthPolicyManager(uow, cache)),
        ...authenticatorHandlers(authenticators),
        ...certLifecycleHandlers(new CertificateLifecycle(uow, pki, sessionEnder), deps.internalSecret),
        ...signerHandlers(new SignerManager(uow, (field, url) => outbound.checkUrl(field, url))),
        ...mfaHandlers(mfa, deps.totpIssuer || DEFAULT_TOTP_ISSUER),
        ...enrollTokenHandlers(new TokenEnrollment(uow.repos, verifier, identities, pki)),
        ...controllerSettingHandlers(settings),
        ...revocationHandlers(revocations),
        ...totpTokenHandlers(new TotpTokens(uow, mfa, keys, cache)),
      },
      raw: oidcHttp(oidc, deps.internalSecret, serviceLog),
    });
    const http = await listenHttp(app, deps.http.host, deps.http.port, SERVICE_NAME);
    cleanup.push(() => http.close());
    const grpc = await startGrpcServer(deps.grpc.host, deps.grpc.port, [
      { definition: IdentityAuthServiceService, implementation: identityAuthServer(sessions, identities, authenticators, {
          sessions: new RouterSessions(new SqlLegacySessionStore(db.pool), sessions.timeoutMs),
          keys,
          revocations,
        }) as unknown as UntypedServiceImplementation },
      integrityService(identityAuthIntegrity(new IdentityIntegrity(new SqlIntegrityRepository(db.prisma, db.pool)), db.pool, () => relay.flush())),
      healthService(SERVICE_NAME, ready),
      maintenance(deps.databaseUrl, db.pool, log),
    ], 'identity-auth');
    cleanup.push(() => grpc.stop());
    const pkiEvents = await subscribePkiEvents(deps.bus, authenticators);
    cleanup.push(() => pkiEvents.stop());

    const sweeper = setInterval(() => {
      sessions.sweepIdle().catch((err: unknown) => log(`identity-auth: idle API session sweep failed: ${String(err)}`));
      identities.enableExpired().catch((err: unknown) => log(`identity-auth: clearing expired lockouts failed: ${String(err)}`));
      rotateKeys(keys, deps.oidcKeyRotationDays ?? DEFAULT_KEY_ROTATION_DAYS).catch((err: unknown) => log(`identity-auth: OIDC key rotation failed: ${String(err)}`));
      revocations.prune().catch((err: unknown) => log(`identity-auth: pruning expired revocations failed: ${String(err)}`));
    }, SWEEP_INTERVAL_MS);
    sweeper.unref();
    cleanup.push(async () => clearInterval(sweeper));

    log(`${SERVICE_NAME}: http ${http.url}, grpc ${grpc.address}`);
    return { name: SERVICE_NAME, httpUrl: http.url, grpcAddress: grpc.address, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
