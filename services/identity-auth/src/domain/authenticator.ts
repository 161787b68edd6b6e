import { ApiError } from '@ziti/errors';
import { shortId, uuidToken } from '@ziti/http-kit';
import type { ApiSession, ApiSessionView, JsonMap } from './model.js';
import { isDisabled } from './model.js';
import { DUMMY_CREDENTIAL, verifyPassword } from './password.js';
import type { PrincipalCache, UnitOfWork } from './ports.js';

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
}

/**
 * `POST /authenticate` (§2.2). Only `password` (module updb) is implemented so far: `cert` and
 * `ext-jwt` answer 401 INVALID_AUTH until their flows land.
 */
export class Authenticator {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly cache: PrincipalCache,
  ) {}

  async authenticate(input: AuthenticateInput): Promise<ApiSessionView> {
    const method = input.method;
    if (method === undefined || method === '') throw ApiError.field('method', 'method in query is required');
    if (!(AUTH_METHODS as readonly string[]).includes(method)) {
      throw ApiError.field('method', `method in query should be one of [${AUTH_METHODS.join(' ')}]`, method);
    }
    if (method !== 'password') throw ApiError.of('INVALID_AUTH');
    if (!input.username) throw ApiError.field('username', 'username in body is required');
    if (!input.password) throw ApiError.field('password', 'password in body is required');
    const { identityId, authenticatorId } = await this.verifyUpdb(input.username, input.password);
    return this.createSession(identityId, authenticatorId, input);
  }

  private async verifyUpdb(username: string, password: string): Promise<{ identityId: string; authenticatorId: string }> {
    const repos = this.uow.repos;
    const authenticator = await repos.authenticators.findUpdbByUsername(username);
    if (!authenticator) {
      // Same Argon2 work as a real check: the timing must not reveal unknown usernames.
      await verifyPassword(password, DUMMY_CREDENTIAL);
      throw ApiError.of('INVALID_AUTH');
    }
    const [ok, identity] = await Promise.all([verifyPassword(password, authenticator), repos.identities.findById(authenticator.identityId)]);
    if (!identity) throw ApiError.of('INVALID_AUTH');
    const policy = await repos.authPolicies.findById(identity.authPolicyId);
    if (!ok) {
      if (policy && policy.primaryUpdbMaxAttempts > 0) {
        await this.countFailure(authenticator.id, identity.id, authenticator.failedAttempts + 1, policy);
      }
      throw ApiError.of('INVALID_AUTH');
    }
    if (isDisabled(identity) || !policy || !policy.primaryUpdbAllowed) throw ApiError.of('INVALID_AUTH');
    if (authenticator.failedAttempts > 0) await repos.authenticators.setFailedAttempts(authenticator.id, 0);
    return { identityId: identity.id, authenticatorId: authenticator.id };
  }

  /** Failed attempts are counted; at `maxAttempts` the identity is locked for `lockoutDurationMinutes` (0 = until enabled). */
  private async countFailure(
    authenticatorId: string,
    identityId: string,
    count: number,
    policy: { primaryUpdbMaxAttempts: number; primaryUpdbLockoutDurationMinutes: number },
  ): Promise<void> {
    const tokens = await this.uow.run(async (tx) => {
      if (count < policy.primaryUpdbMaxAttempts) {
        await tx.authenticators.setFailedAttempts(authenticatorId, count);
        return [];
      }
      await tx.authenticators.setFailedAttempts(authenticatorId, 0);
      const minutes = policy.primaryUpdbLockoutDurationMinutes;
      await tx.identities.disable(identityId, minutes > 0 ? new Date(Date.now() + minutes * 60_000) : null);
      const sessionTokens = await tx.apiSessions.tokensOfIdentity(identityId);
      await tx.emit({ type: 'identity.updated', identityId, tokens: sessionTokens });
      return sessionTokens;
    });
    // Its existing sessions stop resolving (disabled identity): cached principals must go too.
    await this.cache.drop(tokens);
  }

  private async createSession(identityId: string, authenticatorId: string, input: AuthenticateInput): Promise<ApiSessionView> {
    const now = new Date();
    return this.uow.run(async (tx) => {
      const identity = await tx.identities.findById(identityId);
      if (!identity) throw ApiError.of('INVALID_AUTH');
      const policy = await tx.authPolicies.findById(identity.authPolicyId);
      const mfaRequired = policy?.secondaryRequireTotp === true;
      const session: ApiSession = {
        id: shortId(),
        token: uuidToken(),
        identityId,
        authenticatorId,
        ipAddress: input.ipAddress,
        configTypes: [...new Set(input.configTypes ?? [])],
        isMfaRequired: mfaRequired,
        isMfaComplete: false,
        isCertExtendable: false,
        isCertExtendRequested: false,
        isCertKeyRollRequested: false,
        improperClientCertChain: false,
        lastActivityAt: now,
        tags: {},
        createdAt: now,
        updatedAt: now,
      };
      await tx.apiSessions.create(session);
      const info = {
        sdkInfo: changed(identity.sdkInfo, input.sdkInfo),
        envInfo: changed(identity.envInfo, input.envInfo),
      };
      if (info.sdkInfo || info.envInfo) await tx.identities.updateInfo(identityId, info);
      await tx.emit({ type: 'api-session.created', apiSessionId: session.id, identityId });
      return { ...session, identityName: identity.name };
    });
  }
}

/** The reported info when it differs from the stored one (logins repeat the same info: no write then). */
function changed(stored: JsonMap, reported: JsonMap | undefined): JsonMap | undefined {
  return reported !== undefined && JSON.stringify(stored) !== JSON.stringify(reported) ? reported : undefined;
}
