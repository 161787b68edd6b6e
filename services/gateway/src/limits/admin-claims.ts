import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { type CachedPrincipal, principalCacheKey } from '@ziti/http-kit';
import type { Cache } from '@ziti/messaging';
import { bearerTokens } from '../auth/authenticator.js';

/**
 * Which logins are an admin's, for the auth limiter's admin bypass.
 *
 * OpenZiti decides the bypass after the credentials were verified (the identity is known to be an
 * admin). The gateway limits before it forwards a login, when only the credential's claim is
 * known: a username, a client certificate, an external JWT's issuer and subject. So it learns which
 * claims belong to admins from the logins that succeeded (the new session's principal, which
 * identity-auth put in the shared cache) and grants the bypass to a request carrying such a claim.
 * identity-auth still verifies the credential, so a false claim gains no session, and it cannot
 * use the bypass up: only a successful admin login does that (see `AdaptiveRateLimiter`).
 */

/** How long what was learned about a claim is kept (an admin flag changed meanwhile waits this long). */
const CLAIM_TTL_MS = 60 * 60_000;
/** Claims remembered; beyond it the oldest learned is dropped. */
const MAX_CLAIMS = 10_000;

/** The claim of a login: `password:<username>`, `cert:<leaf sha256>`, `ext-jwt:<iss> <sub>`; undefined when it has none. */
export function loginClaim(method: string | undefined, req: IncomingMessage, username: string | undefined): string | undefined {
  if (method === 'password') return username === undefined ? undefined : `password:${username}`;
  if (method === 'cert') {
    const socket = req.socket as Partial<TLSSocket>;
    const fingerprint = typeof socket.getPeerCertificate === 'function' ? socket.getPeerCertificate().fingerprint256 : undefined;
    return fingerprint ? `cert:${fingerprint}` : undefined;
  }
  if (method === 'ext-jwt') {
    const token = bearerTokens(req)[0];
    const payload = token?.split('.')[1];
    if (!payload) return undefined;
    try {
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { iss?: unknown; sub?: unknown };
      return typeof claims.iss === 'string' && typeof claims.sub === 'string' ? `ext-jwt:${claims.iss} ${claims.sub}` : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Claims learned to be (or not to be) an admin's, in this process. */
export class AdminClaims {
  private readonly claims = new Map<string, { admin: boolean; until: number }>();

  constructor(
    private readonly cache: Cache,
    private readonly now: () => number = Date.now,
  ) {}

  /** True when `claim` was learned to be an admin's (and that is still fresh). */
  isAdmin(claim: string): boolean {
    const known = this.claims.get(claim);
    return known !== undefined && known.admin && known.until > this.now();
  }

  /**
   * After a successful login with `claim` that created the session `token`: unless the claim was
   * learned recently, reads the session's principal from the shared cache and remembers whether it
   * is an admin's. A session that is not cached (MFA outstanding) teaches nothing. Never throws.
   */
  async learn(claim: string, token: string): Promise<void> {
    const known = this.claims.get(claim);
    if (known && known.until > this.now()) return;
    let entry: CachedPrincipal;
    try {
      const raw = await this.cache.get(principalCacheKey(token));
      if (!raw) return;
      entry = JSON.parse(raw) as CachedPrincipal;
    } catch {
      return;
    }
    if (typeof entry?.principal?.isAdmin !== 'boolean') return;
    this.claims.delete(claim);
    this.claims.set(claim, { admin: entry.principal.isAdmin, until: this.now() + CLAIM_TTL_MS });
    if (this.claims.size > MAX_CLAIMS) this.claims.delete(this.claims.keys().next().value as string);
  }
}
