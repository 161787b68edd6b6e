import { ApiError } from '@ziti/errors';
import { type AuthOutcome, isPrivilegedIdentity, shortId, uuidToken } from '@ziti/http-kit';
import type { AuthPolicy, LoginIdentity } from './auth-model.js';
import { type JwtVerifier, extJwtChallenge, identityClaim } from './ext-jwt/jwt-verifier.js';
import type { IdentityManager } from './identity-manager.js';
import type { ApiSession, ApiSessionView, JsonMap, SecondaryFactors } from './model.js';
import { isDisabled } from './model.js';
import { DUMMY_CREDENTIAL, verifyPassword } from './password.js';
import type { UnitOfWork } from './ports.js';
import type { CertLogin } from './cert-login.js';
import { type SecondaryFactorChecker, type SessionAuthState, secondaryChallenge } from './session-state.js';

export const AUTH_METHODS = ['password', 'cert', 'ext-jwt'] as const;

/** `POST /authenticate` input, once the body passed schema validation. */
export interface AuthenticateInput {
  method: string | undefined;
  username?: string;
  password?: string;
  configTypes?: string[];
  envInfo?: JsonMap;
  sdkInfo?: JsonMap;
  /** The caller's address (first `x-forwarded-for` hop, as the gateway forwards it). */
  ipAddress: string;
  /** `Authorization: Bearer` tokens of the request (ext-jwt primary, or the secondary factor). */
  bearerTokens: string[];
  /** The client certificate chain of the TLS handshake, leaf first, DER (`method=cert`). */
  clientCertChain?: Buffer[];
}

export interface AuthenticateResult {
  session: ApiSessionView;
  state: SessionAuthState;
  /** Who logged in and the secondary factors of their policy (the new session's principal). */
  identity: LoginIdentity;
  secondary: SecondaryFactors;
  /** The secondary ext-jwt challenge when the policy requires a signer whose token was not sent. */
  challenge?: string;
}

/** What a certificate login tells the new session (§2.2, the extend flags of §6.7). */
export interface CertSessionFlags {
  improperClientCertChain: boolean;
  isCertExtendable: boolean;
  isCertExtendRequested: boolean;
  isCertKeyRollRequested: boolean;
  /**
   * The authenticator's new `lastAuthResolvedToRoot` when it changes with this login (a
   * network-issued certificate whose chain now does, or no longer does, resolve to the root);
   * written with the session.
   */
  resolvedToRoot?: boolean;
}

/** Who logged in, and what the new session needs to know about them. */
export interface LoginPrincipal {
  identity: LoginIdentity;
  authenticatorId: string;
  policy: AuthPolicy;
  mfaVerified: boolean;
  cert?: CertSessionFlags;
}

export const invalidAuth = () => ApiError.of('INVALID_AUTH');

/** Told every login's outcome once it is decided; must not throw or wait. */
export type AuthOutcomeListener = (outcome: AuthOutcome) => void;

/** The outcome's ids as a login learns them. */
type AuthBundle = Omit<AuthOutcome, 'method' | 'success' | 'remoteAddress'>;

/** `invalidAuth()`, noting the reason for the event. */
function refuse(bundle: AuthBundle, reason: string): ApiError {
  bundle.reason = reason;
  return invalidAuth();
}

/**
 * `POST /authenticate` (§2.2): `password` (updb, with lockout), `cert` (the TLS client
 * certificate, see CertLogin) and `ext-jwt` (external JWT as `Authorization: Bearer`).
 */
export class Authenticator {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly identities: IdentityManager,
    private readonly verifier: JwtVerifier,
    private readonly factors: SecondaryFactorChecker,
    private readonly certs: CertLogin,
  ) {}

  /** `onOutcome` is told the attempt's outcome (the `authentication` event) once it is decided. */
  async authenticate(input: AuthenticateInput, onOutcome?: AuthOutcomeListener): Promise<AuthenticateResult> {
    const method = input.method;
    if (method === undefined || method === '') throw ApiError.field('method', 'method in query is required');
    if (!(AUTH_METHODS as readonly string[]).includes(method)) {
      throw ApiError.field('method', `method in query should be one of [${AUTH_METHODS.join(' ')}]`, method);
    }
    const bundle: AuthBundle = {};
    const tell = (success: boolean, extra: AuthBundle) =>
      onOutcome?.({ method, success, remoteAddress: input.ipAddress, ...bundle, ...extra });
    try {
      const result = await this.login(method, input, bundle);
      tell(true, { apiSessionId: result.session.id, improperClientCertChain: result.session.improperClientCertChain });
      return result;
    } catch (err) {
      tell(false, { reason: bundle.reason ?? (err instanceof ApiError ? err.code : 'internal error') });
      throw err;
    }
  }

  /**
   * The primary factor alone (OIDC logins): who the credentials of `method` name, and the
   * secondary factors of their auth policy. No session is created; the same checks and lockout as
   * `POST /authenticate`.
   */
  async verifyPrimary(
    method: (typeof AUTH_METHODS)[number],
    input: Pick<AuthenticateInput, 'username' | 'password' | 'bearerTokens' | 'clientCertChain'>,
  ): Promise<{ who: LoginPrincipal; secondary: SecondaryFactors }> {
    const who = await this.primary(method, input, {});
    return { who, secondary: { requireTotp: who.policy.secondaryRequireTotp, requiredExtJwtSigner: who.policy.secondaryRequiredExtJwtSigner } };
  }

  private async primary(
    method: string,
    input: Pick<AuthenticateInput, 'username' | 'password' | 'bearerTokens' | 'clientCertChain'>,
    bundle: AuthBundle,
  ): Promise<LoginPrincipal> {
    if (method === 'password') {
      if (!input.username || !input.password) bundle.reason = 'username and password fields are required';
      if (!input.username) throw ApiError.field('username', 'username in body is required');
      if (!input.password) throw ApiError.field('password', 'password in body is required');
      return this.verifyUpdb(input.username, input.password, bundle);
    }
    if (method === 'ext-jwt') return this.verifyExtJwt(input.bearerTokens, bundle);
    return this.certs.verify(input.clientCertChain ?? []);
  }

  private async login(method: string, input: AuthenticateInput, bundle: AuthBundle): Promise<AuthenticateResult> {
    const who = await this.primary(method, input, bundle);
    // An ext-jwt login names its signer, not an authenticator (as OpenZiti's event).
    Object.assign(bundle, { identityId: who.identity.id, authPolicyId: who.policy.id, ...(method === 'ext-jwt' ? {} : { authenticatorId: who.authenticatorId }) });
    const secondary: SecondaryFactors = {
      requireTotp: who.policy.secondaryRequireTotp,
      requiredExtJwtSigner: who.policy.secondaryRequiredExtJwtSigner,
    };
    const session = await this.createSession(who, input);
    const state = await this.factors.state(session, who.identity, secondary, input.bearerTokens);
    const challenge = secondaryChallenge(state);
    return { session, state, identity: who.identity, secondary, ...(challenge ? { challenge } : {}) };
  }

  private async verifyUpdb(username: string, password: string, bundle: AuthBundle): Promise<LoginPrincipal> {
    const login = await this.uow.repos.authenticators.findUpdbLogin(username);
    if (!login) {
      // Same Argon2 work as a real check: the timing must not reveal unknown usernames.
      await verifyPassword(password, DUMMY_CREDENTIAL);
      throw refuse(bundle, 'could not authenticate, authenticator lookup returned nil');
    }
    const { policy, identity } = login;
    Object.assign(bundle, { authenticatorId: login.authenticatorId, identityId: identity.id, authPolicyId: policy.id });
    const ok = await verifyPassword(password, login);
    const disabled = isDisabled(identity);
    if (!ok) {
      if (!disabled && policy.primaryUpdbMaxAttempts > 0) await this.countFailure(login.authenticatorId, identity.id, policy);
      throw refuse(bundle, 'could not authenticate, password does not match');
    }
    if (disabled) throw refuse(bundle, 'identity is disabled');
    if (!policy.primaryUpdbAllowed) throw refuse(bundle, `auth policy does not allow updb authentication, authPolicyId: ${policy.id}`);
    if (identity.disabled) await this.identities.enableExpired(); // a lockout that ran out: clear it everywhere
    if (login.failedAttempts > 0) await this.uow.repos.authenticators.setFailedAttempts(login.authenticatorId, 0);
    return { identity, authenticatorId: login.authenticatorId, policy, mfaVerified: login.mfaVerified };
  }

  /** Failed attempts are counted; at `maxAttempts` the identity is locked for `lockoutDurationMinutes` (0 = until enabled). */
  private async countFailure(authenticatorId: string, identityId: string, policy: AuthPolicy): Promise<void> {
    const count = await this.uow.repos.authenticators.countFailure(authenticatorId);
    if (count < policy.primaryUpdbMaxAttempts) return;
    await this.identities.lockout(identityId, policy.primaryUpdbLockoutDurationMinutes);
    await this.uow.repos.authenticators.setFailedAttempts(authenticatorId, 0);
  }

  /**
   * The first bearer token that verifies against an enabled signer names the identity (by id, or by
   * `externalId` when the signer says so); the identity's auth policy must allow ext-jwt and that signer.
   */
  private async verifyExtJwt(tokens: string[], bundle: AuthBundle): Promise<LoginPrincipal> {
    const repos = this.uow.repos;
    const signers = await repos.signers.enabled();
    if (signers.length === 0) {
      bundle.reason = 'no enabled external jwt signers';
      throw ApiError.of('UNAUTHORIZED');
    }
    const r = await this.verifier.verifyAny(tokens, signers);
    if (!r.ok) {
      bundle.reason = `no token verified: ${r.error}`;
      throw ApiError.of('UNAUTHORIZED', { headers: { 'WWW-Authenticate': extJwtChallenge('primary', r.error, signers) } });
    }
    bundle.externalJwtSignerId = r.signer.id;
    const claim = identityClaim(r.claims, r.signer.claimsProperty);
    if (!claim) {
      bundle.reason = 'the token names no identity';
      throw ApiError.of('UNAUTHORIZED', { headers: { 'WWW-Authenticate': extJwtChallenge('primary', 'invalid', signers) } });
    }
    const identity = r.signer.useExternalId ? await repos.identities.findByExternalId(claim) : await repos.identities.findById(claim);
    if (!identity) throw refuse(bundle, 'identity not found');
    bundle.identityId = identity.id;
    if (!r.signer.trustedForAdmins && isPrivilegedIdentity(identity)) throw refuse(bundle, 'a signer a non-admin created or changed may not log in a privileged identity');
    if (isDisabled(identity)) throw refuse(bundle, 'identity is disabled');
    const policy = await repos.authPolicies.findById(identity.authPolicyId);
    if (!policy) throw refuse(bundle, 'auth policy look up returned nil');
    bundle.authPolicyId = policy.id;
    if (!policy.primaryExtJwtAllowed) throw refuse(bundle, `auth policy does not allow ext-jwt authentication, authPolicyId: ${policy.id}`);
    if (policy.primaryExtJwtAllowedSigners.length > 0 && !policy.primaryExtJwtAllowedSigners.includes(r.signer.id)) {
      throw refuse(bundle, 'auth policy does not allow this external jwt signer');
    }
    const mfa = await repos.mfas.findByIdentity(identity.id);
    return { identity, authenticatorId: r.signer.id, policy, mfaVerified: mfa?.isVerified === true };
  }

  private async createSession(who: LoginPrincipal, input: AuthenticateInput): Promise<ApiSessionView> {
    const now = new Date();
    const session: ApiSession = {
      id: shortId(),
      token: uuidToken(),
      identityId: who.identity.id,
      authenticatorId: who.authenticatorId,
      ipAddress: input.ipAddress,
      configTypes: [...new Set(input.configTypes ?? [])],
      isMfaRequired: who.mfaVerified || who.policy.secondaryRequireTotp,
      isMfaComplete: false,
      mfaCompletedAt: null,
      isCertExtendable: who.cert?.isCertExtendable ?? false,
      isCertExtendRequested: who.cert?.isCertExtendRequested ?? false,
      isCertKeyRollRequested: who.cert?.isCertKeyRollRequested ?? false,
      improperClientCertChain: who.cert?.improperClientCertChain ?? false,
      lastActivityAt: now,
      tags: {},
      createdAt: now,
      updatedAt: now,
    };
    const info = { sdkInfo: changed(who.identity.sdkInfo, input.sdkInfo), envInfo: changed(who.identity.envInfo, input.envInfo) };
    await this.uow.createSession(session, info, who.cert?.resolvedToRoot);
    return { ...session, identityName: who.identity.name };
  }
}

/** The reported info when it differs from the stored one (logins repeat the same info: no write then). */
function changed(stored: JsonMap, reported: JsonMap | undefined): JsonMap | undefined {
  return reported !== undefined && JSON.stringify(stored) !== JSON.stringify(reported) ? reported : undefined;
}
