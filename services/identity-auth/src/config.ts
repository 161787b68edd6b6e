import { type ContextConfig, boolEnv, contextConfig, eventNamespacesEnabled, intEnv, optionalSecret } from '@ziti/service-kit';
import { DEFAULT_MAX_API_SESSIONS_PER_IDENTITY } from './domain/api-session-manager.js';

/** Configuration of the standalone process (`main.ts`), read from the environment. */
export interface Config extends ContextConfig {
  /** Where the generated default-admin password is written (`<dataDir>/admin-password`). */
  dataDir: string;
  /** The default admin created at first start (ZITI_USER, default `admin`; ZITI_PWD, generated when unset). */
  admin: { username: string; password?: string };
  /** API session idle timeout (ZITI_SESSION_TIMEOUT_MINUTES, default 30). */
  sessionTimeoutMinutes?: number;
  /** API sessions one identity may hold (ZITI_MAX_API_SESSIONS_PER_IDENTITY, default 100, 0 = no bound). */
  maxApiSessionsPerIdentity: number;
  /** The policy context's gRPC address (POLICY_GRPC, e.g. `policy:18203`); unset = no synchronous projection. */
  policyGrpc?: string;
  /** pki-enrollment's gRPC address (PKI_ENROLLMENT_GRPC, e.g. `pki-enrollment:18202`); unset = no enrollments, no cert login. */
  pkiEnrollmentGrpc?: string;
  /** The fabric context's gRPC address (FABRIC_GRPC, `host:port`); unset = `hasEdgeRouterConnection` false. */
  fabricGrpc?: string;
  /** Encrypts TOTP secrets at rest (ZITI_MFA_SECRET; default the internal secret). */
  secretsKey?: string;
  /** Age at which the OIDC signing key is replaced (ZITI_OIDC_KEY_ROTATION_DAYS, default 30; 0 = never). */
  oidcKeyRotationDays?: number;
  /** The TOTP issuer (ZITI_TOTP_ISSUER, default `openziti.io`). */
  totpIssuer?: string;
  /**
   * Requests the controller makes itself (JWKS of external JWT signers) may go to loopback and
   * private networks (ZITI_OUTBOUND_ALLOW_PRIVATE=true; default false). Link-local, metadata and
   * reserved addresses stay refused.
   */
  outboundAllowPrivate: boolean;
  /** This controller's id (ZITI_INSTANCE_ID, default the host name), as the gateway's `GET /controllers` lists it. */
  instanceId?: string;
  /** Logins publish `authentication.*` for the gateway's event stream (`ZITI_EVENTS` names `authentication` or `apiSession`; default yes). */
  authenticationEvents: boolean;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const timeout = env.ZITI_SESSION_TIMEOUT_MINUTES ? intEnv(env, 'ZITI_SESSION_TIMEOUT_MINUTES', 30, 0, 525600) : undefined;
  return {
    ...contextConfig(env, 'IDENTITY_AUTH', { http: 18101, grpc: 18201 }),
    dataDir: env.ZITI_DATA_DIR || 'data',
    admin: { username: env.ZITI_USER || 'admin', password: env.ZITI_PWD || undefined },
    ...(timeout !== undefined ? { sessionTimeoutMinutes: timeout } : {}),
    maxApiSessionsPerIdentity: intEnv(env, 'ZITI_MAX_API_SESSIONS_PER_IDENTITY', DEFAULT_MAX_API_SESSIONS_PER_IDENTITY, 0, 1_000_000),
    ...(env.POLICY_GRPC ? { policyGrpc: env.POLICY_GRPC } : {}),
    ...(env.PKI_ENROLLMENT_GRPC ? { pkiEnrollmentGrpc: env.PKI_ENROLLMENT_GRPC } : {}),
    ...(env.FABRIC_GRPC ? { fabricGrpc: env.FABRIC_GRPC } : {}),
    ...(env.ZITI_MFA_SECRET ? { secretsKey: optionalSecret(env, 'ZITI_MFA_SECRET') } : {}),
    ...(env.ZITI_OIDC_KEY_ROTATION_DAYS ? { oidcKeyRotationDays: intEnv(env, 'ZITI_OIDC_KEY_ROTATION_DAYS', 30, 0, 3650) } : {}),
    ...(env.ZITI_TOTP_ISSUER ? { totpIssuer: env.ZITI_TOTP_ISSUER } : {}),
    outboundAllowPrivate: boolEnv(env, 'ZITI_OUTBOUND_ALLOW_PRIVATE', false),
    authenticationEvents: eventNamespacesEnabled(env, ['authentication', 'apiSession']),
    ...(env.ZITI_INSTANCE_ID?.trim() ? { instanceId: env.ZITI_INSTANCE_ID.trim() } : {}),
  };
}
