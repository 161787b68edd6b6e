import { MAX_PRINCIPAL_CACHE_TTL_SECONDS, isStorableText } from '@ziti/http-kit';
import { ApiError } from '@ziti/errors';
import type { ApiSessionView, ApiSessionWithIdentity, IdentityTrace, ListRequest, Page } from './model.js';
import { isDisabled } from './model.js';
import type { RevocableToken } from '../oidc/ports.js';
import type { VerifiedToken } from '../oidc/key-ring.js';
import { TOKEN_TYPE } from '../oidc/claims.js';
import type { DeletedSession, PrincipalCache, RevocationWriter, Transaction, UnitOfWork } from './ports.js';
import { type SecondaryFactorChecker, type SessionAuthState, isFullyAuthenticated, secondaryChallenge, totpPending } from './session-state.js';
import { type Expiry, expiryOf, isExpired } from './session-time.js';

/** The caller as every service sees it (mirrors proto `ziti.v1.Principal`). */
export interface ResolvedPrincipal {
  identityId: string;
  identityName: string;
  apiSessionId: string;
  isAdmin: boolean;
  isDefaultAdmin: boolean;
  isFullyAuthenticated: boolean;
  permissions: string[];
  configTypes: string[];
  authenticatorId: string;
  expiresAt: string;
  expirationSeconds: number;
  identityTypeId: string;
  /** When the session completed its TOTP second factor (RFC 3339); empty until then. */
  mfaCompletedAt: string;
  /** The identity's trace while it runs (absent otherwise: untraced requests cost the gateway nothing). */
  trace: { traceId: string; until: string; channels: string[] } | undefined;
}

export interface Resolution {
  principal: ResolvedPrincipal;
  /**
   * How long a gateway may cache the principal: at most 30 s, never past the session's expiry, and
   * 0 when the answer depends on the request's bearer tokens (a required secondary ext-jwt signer).
   */
  cacheTtlSeconds: number;
  /** The secondary ext-jwt challenge while that factor is not satisfied on this request. */
  wwwAuthenticate?: string;
}

/** A session as its owner sees it, with what this request proves. */
export interface CurrentSession {
  view: ApiSessionView;
  state: SessionAuthState;
}

/** The identity facts a principal carries. */
export interface PrincipalIdentity {
  id: string;
  name: string;
  isAdmin: boolean;
  isDefaultAdmin: boolean;
  permissions: string[];
  typeId: string;
  trace?: IdentityTrace | null;
}

/** The principal of a session for its identity, as of `expiry`. */
export function principalOf(
  session: { id: string; configTypes: string[]; authenticatorId: string; mfaCompletedAt: Date | null },
  identity: PrincipalIdentity,
  fullyAuthenticated: boolean,
  expiry: Expiry,
): ResolvedPrincipal {
  return {
    identityId: identity.id,
    identityName: identity.name,
    apiSessionId: session.id,
    isAdmin: identity.isAdmin,
    isDefaultAdmin: identity.isDefaultAdmin,
    isFullyAuthenticated: fullyAuthenticated,
    permissions: identity.permissions,
    configTypes: session.configTypes,
    authenticatorId: session.authenticatorId,
    expiresAt: expiry.expiresAt.toISOString(),
    expirationSeconds: expiry.expirationSeconds,
    identityTypeId: identity.typeId,
    mfaCompletedAt: session.mfaCompletedAt ? session.mfaCompletedAt.toISOString() : '',
    trace:
      identity.trace && identity.trace.until.getTime() > Date.now()
        ? { traceId: identity.trace.traceId, until: identity.trace.until.toISOString(), channels: identity.trace.channels }
        : undefined,
  };
}

/**
 * The most API sessions one identity holds unless configured otherwise
 * (`ZITI_MAX_API_SESSIONS_PER_IDENTITY`). OpenZiti sets no bound. A device holds one session per
 * running SDK; 100 leaves room for a fleet sharing one identity and for scripts that log in often
 * and never log out (sessions live 30 minutes idle), while one identity's logins can no longer
 * fill the table. A login beyond it ends the identity's least recently active sessions instead of
 * being refused, so the owner of a lost token can always log in again.
 */
export const DEFAULT_MAX_API_SESSIONS_PER_IDENTITY = 100;

/** A session's `lastActivityAt` is written again only when older than this. */
export const TOUCH_AFTER_MS = 10_000;
export const MAX_CACHE_TTL_SECONDS = MAX_PRINCIPAL_CACHE_TTL_SECONDS;

/** 401 for an unknown, expired or disabled session token (§3.4). */
export function invalidSessionToken(): ApiError {
  return ApiError.of('UNAUTHORIZED', {
    headers: { 'WWW-Authenticate': 'zt-session realm="zt-session" error="invalid" error_description="token is invalid"' },
  });
}

/** 401 for a bearer access token that is not (or no longer) valid (OIDC.md "Bearer sessions"). */
export function invalidBearerToken(expired = false): ApiError {
  const challenge = expired
    ? 'Bearer realm="openziti-oidc" error="expired" error_description="token expired"'
    : 'Bearer realm="openziti-oidc" error="invalid" error_description="token is invalid"';
  return ApiError.of('UNAUTHORIZED', { headers: { 'WWW-Authenticate': challenge } });
}

/** What bearer resolution needs of the OIDC provider: its keys and its revocations. */
export interface OidcSessions {
  keys: { verify(token: string, opts?: { ignoreExpiry?: boolean }): Promise<VerifiedToken> };
  revocations: RevocationWriter & { isRevoked(token: RevocableToken): Promise<boolean> };
}

/** Collects sessions whose activity must slide, and writes them in one statement per tick. */
export class ActivityRecorder {
  private pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly uow: UnitOfWork,
    private readonly intervalMs = 1000,
    private readonly log: (msg: string) => void = () => undefined,
  ) {}

  record(apiSessionId: string): void {
    this.pending.add(apiSessionId);
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.intervalMs);
      this.timer.unref();
    }
  }

  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const ids = [...this.pending];
    this.pending.clear();
    if (ids.length === 0) return this.flushing;
    this.flushing = this.flushing
      .then(() => this.uow.repos.apiSessions.touch(ids, new Date()))
      .catch((err: unknown) => this.log(`identity-auth: recording API session activity failed: ${(err as Error).message}`));
    return this.flushing;
  }
}

/** API sessions: the caller's own, the management views, logout/delete, and token resolution. */
export class ApiSessionManager {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly cache: PrincipalCache,
    private readonly activity: ActivityRecorder,
    private readonly factors: SecondaryFactorChecker,
    readonly timeoutMs: number,
    private readonly oidc?: OidcSessions,
  ) {}

  expiry(session: { lastActivityAt: Date }, now = new Date()): Expiry {
    return expiryOf(session.lastActivityAt, this.timeoutMs, now);
  }

  /** The caller's session and what this request proves; a session deleted since the principal was signed is 401. */
  async current(apiSessionId: string, bearerTokens: readonly string[]): Promise<CurrentSession> {
    const [view, full] = await Promise.all([this.uow.repos.apiSessions.view(apiSessionId), this.uow.repos.apiSessions.findByIdWithIdentity(apiSessionId)]);
    if (!view || !full) throw invalidSessionToken();
    return { view, state: await this.factors.state(full, full.identity, full.secondary, bearerTokens) };
  }

  list(req: ListRequest): Promise<Page<ApiSessionView>> {
    return this.uow.repos.apiSessions.list(req);
  }

  async detail(id: string): Promise<ApiSessionView> {
    const view = await this.uow.repos.apiSessions.view(id);
    if (!view) throw ApiError.notFound();
    return view;
  }

  /**
   * Deletes a session; its token stops working at once (cache entry dropped after commit). An OIDC
   * session also gets an API_SESSION revocation in the same transaction, marked after commit, so
   * every gateway refuses its bearer tokens at once.
   */
  async delete(id: string): Promise<void> {
    const { session, revocation } = await this.uow.run(async (tx) => {
      const session = await tx.apiSessions.delete(id);
      if (!session) throw ApiError.notFound();
      await tx.emit({ type: 'api-session.deleted', apiSessionId: session.id, identityId: session.identityId, tokens: [session.token] });
      const revocation = session.kind === 'oidc' && this.oidc ? await this.oidc.revocations.revokeIn(tx, 'API_SESSION', session.id) : undefined;
      return { session, revocation };
    });
    await this.cache.drop([session.token]);
    if (revocation) await this.oidc!.revocations.mark([revocation]);
  }

  /** Logout: like delete, but a session already gone is not an error. */
  async logout(apiSessionId: string): Promise<void> {
    await this.delete(apiSessionId).catch((err: unknown) => {
      if (!(err instanceof ApiError && err.code === 'NOT_FOUND')) throw err;
    });
  }

  /**
   * Resolves a `zt-session` token for the gateway: unknown, idle past the timeout, or of a
   * disabled identity → 401 with the invalid-token challenge. Slides the expiry. The principal is
   * fully authenticated once TOTP (when required) is done and, when the auth policy requires a
   * signer, the request's bearer tokens hold a valid token of it.
   */
  async resolve(token: string, bearerTokens: readonly string[] = []): Promise<Resolution> {
    if (!token) throw invalidSessionToken();
    const session = await this.uow.repos.apiSessions.findByTokenWithIdentity(token);
    const now = new Date();
    if (!session || isExpired(session.lastActivityAt, this.timeoutMs, now) || isDisabled(session.identity, now)) {
      throw invalidSessionToken();
    }
    let lastActivityAt = session.lastActivityAt;
    if (now.getTime() - lastActivityAt.getTime() > TOUCH_AFTER_MS) {
      this.activity.record(session.id);
      lastActivityAt = now;
    }
    const state = await this.stateForPrincipal(session, bearerTokens);
    const expiry = expiryOf(lastActivityAt, this.timeoutMs, now);
    const perRequest = session.secondary.requiredExtJwtSigner !== null;
    const challenge = secondaryChallenge(state);
    return {
      principal: principalOf(session, session.identity, isFullyAuthenticated(state), expiry),
      cacheTtlSeconds: perRequest ? 0 : Math.max(1, Math.min(MAX_CACHE_TTL_SECONDS, expiry.expirationSeconds)),
      ...(challenge ? { wwwAuthenticate: challenge } : {}),
    };
  }

  /**
   * Resolves an OIDC access token (a bearer request without `zt-session`, OIDC.md "Bearer
   * sessions"): a known key's signature, `z_t` access, within `nbf`/`exp`, not revoked, its API
   * session an unexpired OIDC session of the token's subject, the identity not disabled. The
   * principal is the session's, fully authenticated, cacheable until the token expires (at most
   * 30 s). Anything else: 401 with the bearer challenge (`error="expired"` for an expired token).
   */
  async resolveBearer(accessToken: string): Promise<Resolution> {
    if (!this.oidc || !accessToken) throw invalidBearerToken();
    const verified = await this.oidc.keys.verify(accessToken);
    if (!verified.ok) throw invalidBearerToken(verified.error === 'expired');
    const c = verified.claims;
    const sub = c.sub;
    const asid = c.z_asid;
    if (c.z_t !== TOKEN_TYPE.access || typeof sub !== 'string' || typeof asid !== 'string' || typeof c.exp !== 'number') throw invalidBearerToken();
    if (!isStorableText(sub) || !isStorableText(asid) || (c.jti !== undefined && (typeof c.jti !== 'string' || !isStorableText(c.jti)))) {
      throw invalidBearerToken();
    }
    const token: RevocableToken = { jti: c.jti as string | undefined, z_asid: asid, sub, iat: typeof c.iat === 'number' ? c.iat : undefined };
    const [revoked, session] = await Promise.all([this.oidc.revocations.isRevoked(token), this.uow.repos.apiSessions.findByIdWithIdentity(asid)]);
    const now = new Date();
    if (
      revoked ||
      !session ||
      session.kind !== 'oidc' ||
      session.identityId !== sub ||
      !session.expiresAt ||
      session.expiresAt.getTime() <= now.getTime() ||
      isDisabled(session.identity, now)
    ) {
      throw invalidBearerToken();
    }
    if (now.getTime() - session.lastActivityAt.getTime() > TOUCH_AFTER_MS) this.activity.record(session.id);
    const secondsLeft = Math.max(0, Math.floor(c.exp - now.getTime() / 1000));
    const expiry: Expiry = { expiresAt: new Date(c.exp * 1000), expirationSeconds: secondsLeft };
    return { principal: principalOf(session, session.identity, true, expiry), cacheTtlSeconds: Math.min(MAX_CACHE_TTL_SECONDS, secondsLeft) };
  }

  /**
   * Puts a new session's principal where the gateway looks first, so the first request after a
   * login needs no resolution. Only a principal that resolution would cache: fully authenticated,
   * and not depending on a per-request bearer token (a required secondary ext-jwt signer).
   */
  async remember(session: ApiSessionView, identity: PrincipalIdentity, state: SessionAuthState, secondary: { requiredExtJwtSigner: string | null }): Promise<void> {
    if (!isFullyAuthenticated(state) || secondary.requiredExtJwtSigner !== null) return;
    const now = new Date();
    const expiry = expiryOf(session.lastActivityAt, this.timeoutMs, now);
    await this.cache.put(session.token, principalOf(session, identity, true, expiry), Math.min(MAX_CACHE_TTL_SECONDS, expiry.expirationSeconds));
  }

  /** The state a principal needs (no enrollment lookup: `isTotpEnrolled` only matters to views). */
  private async stateForPrincipal(session: ApiSessionWithIdentity, tokens: readonly string[]): Promise<SessionAuthState> {
    const state: SessionAuthState = { totpPending: totpPending(session, session.secondary), totpEnrolled: false };
    if (session.secondary.requiredExtJwtSigner) {
      state.extJwt = await this.factors.check(session.identity, session.secondary.requiredExtJwtSigner, tokens);
    }
    return state;
  }

  /**
   * Deletes legacy sessions idle past the timeout (the controller's session enforcer) and OIDC
   * sessions past their `expiresAt` (their tokens bound them; no idle timeout). Returns how many.
   */
  async sweepIdle(batch = 500): Promise<number> {
    const idle = await this.sweep(batch, (tx) => tx.apiSessions.deleteIdleBefore(new Date(Date.now() - this.timeoutMs), batch));
    return idle + (await this.sweep(batch, (tx) => tx.apiSessions.deleteExpiredOidc(new Date(), batch)));
  }

  private async sweep(batch: number, take: (tx: Transaction) => Promise<DeletedSession[]>): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await this.uow.run(async (tx) => {
        const sessions = await take(tx);
        await tx.emit(
          ...sessions.map((s) => ({ type: 'api-session.deleted' as const, apiSessionId: s.id, identityId: s.identityId, tokens: [s.token] })),
        );
        return sessions;
      });
      await this.cache.drop(deleted.map((s) => s.token));
      total += deleted.length;
      if (deleted.length < batch) return total;
    }
  }
}
