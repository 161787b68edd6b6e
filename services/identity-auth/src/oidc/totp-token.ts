import { randomUUID } from 'node:crypto';
import { ApiError } from '@ziti/errors';
import type { MfaManager } from '../domain/mfa/mfa-manager.js';
import type { PrincipalCache, UnitOfWork } from '../domain/ports.js';
import { TOKEN_TYPE, type TotpClaims } from './claims.js';
import type { VerifiedToken } from './key-ring.js';

/** The audience of a TOTP token whose request carried no access token of the session (OpenZiti copies the access token's). */
const DEFAULT_AUDIENCE = ['openziti'];

export interface IssuedTotpToken {
  token: string;
  issuedAt: Date;
}

/**
 * `POST /current-api-session/totp-token` (OIDC.md "TOTP token"): for a current TOTP code, a signed
 * `{iss, sub, aud, iat, jti, z_asid, z_t:"t"}` without expiry, and the session's `mfaCompletedAt`
 * set to its `iat`, from which the MFA posture check's timeout counts.
 */
export class TotpTokens {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly mfa: MfaManager,
    private readonly keys: {
      sign(claims: Record<string, unknown>): Promise<string>;
      verify(token: string, opts?: { ignoreExpiry?: boolean }): Promise<VerifiedToken>;
    },
    private readonly cache: PrincipalCache,
  ) {}

  /**
   * `issuer`: OpenZiti's root issuer, `https://<host>` (read once the session is known to be an OIDC
   * one). `bearerTokens`: the request's, whose first (the access token) gives the audience and has
   * its cached principal dropped with the session's.
   */
  async issue(caller: { identityId: string; apiSessionId: string }, code: string, issuer: () => string, bearerTokens: readonly string[]): Promise<IssuedTotpToken> {
    const session = await this.uow.repos.apiSessions.findById(caller.apiSessionId);
    if (!session) throw ApiError.of('UNAUTHORIZED');
    if (session.kind !== 'oidc') throw ApiError.of('INVALID_BACKING_TOKEN_TYPE');
    const iss = issuer();
    await this.mfa.checkTotp(caller.identityId, caller.apiSessionId, code);

    const issuedAt = new Date();
    const claims: TotpClaims = {
      iss,
      sub: caller.identityId,
      aud: await this.audience(bearerTokens[0], session.id),
      iat: Math.floor(issuedAt.getTime() / 1000),
      jti: randomUUID(),
      z_asid: session.id,
      z_t: TOKEN_TYPE.totp,
    };
    const token = await this.keys.sign({ ...claims });
    const sessionToken = await this.uow.run(async (tx) => {
      const t = await tx.apiSessions.setMfaCompletedAt(session.id, issuedAt);
      if (t) await tx.emit({ type: 'api-session.updated', apiSessionId: session.id, identityId: session.identityId, tokens: [t] });
      return t;
    });
    // The gateway caches bearer principals by the access token: drop this request's, so its next
    // request carries the new mfaCompletedAt (other access tokens of the session within 30 s).
    await this.cache.drop([...(sessionToken ? [sessionToken] : []), ...bearerTokens.slice(0, 1)]);
    return { token, issuedAt };
  }

  private async audience(accessToken: string | undefined, apiSessionId: string): Promise<string[]> {
    if (!accessToken) return DEFAULT_AUDIENCE;
    const v = await this.keys.verify(accessToken);
    if (!v.ok || v.claims.z_asid !== apiSessionId) return DEFAULT_AUDIENCE;
    const aud = v.claims.aud;
    const list = (Array.isArray(aud) ? aud : [aud]).filter((a): a is string => typeof a === 'string' && a.length > 0);
    return list.length > 0 ? list : DEFAULT_AUDIENCE;
  }
}
