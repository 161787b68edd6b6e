import type { IncomingMessage } from 'node:http';
import { ApiError, toApiError } from '@ziti/errors';
import {
  type CachedPrincipal,
  MAX_PRINCIPAL_CACHE_TTL_SECONDS,
  type RequestPrincipal,
  isCurrentGeneration,
  isRevokedByMarkers,
  principalCacheEntry,
  principalCacheKey,
  principalCacheTtl,
  principalGenerationKey,
  revocationMarkerKey,
} from '@ziti/http-kit';
import type { Cache } from '@ziti/messaging';
import { cacheRequests } from '@ziti/metrics';
import { formatGoTime } from './go-time.js';
import type { ResolvedSession, SessionResolver } from './session-resolver.js';

const PRINCIPAL_HIT = { context: 'gateway', cache: 'principal', result: 'hit' } as const;
const PRINCIPAL_MISS = { context: 'gateway', cache: 'principal', result: 'miss' } as const;
/** 401 challenge when no token was sent (one header value holding both challenges). */
export const MISSING_TOKEN_CHALLENGE =
  'zt-session realm="zt-session" error="missing" error_description="no matching token was provided",' +
  'Bearer realm="openziti-oidc" error="missing" error_description="no matching token was provided"';

/** 401 challenge for an unknown or expired `zt-session` token. */
export const INVALID_TOKEN_CHALLENGE = 'zt-session realm="zt-session" error="invalid" error_description="token is invalid"';

/** 401 challenge for an OIDC access token that is malformed, unknown, revoked or otherwise not valid. */
export const INVALID_BEARER_CHALLENGE = 'Bearer realm="openziti-oidc" error="invalid" error_description="token is invalid"';

/** Cache entries never outlive this, whatever identity-auth suggests. */
export const MAX_CACHE_TTL_SECONDS = MAX_PRINCIPAL_CACHE_TTL_SECONDS;

/** What the gateway keeps under `principalCacheKey(token)` (the format is shared with identity-auth). */
export type { CachedPrincipal };

/**
 * The legacy session token of a request: the `zt-session` header (any case, first value,
 * trimmed). A bare `Authorization: Bearer` is not one: without `zt-session` the first bearer
 * token is an OIDC access token ({@link Authenticator.resolveAccessToken}).
 */
export function sessionToken(req: IncomingMessage): string | undefined {
  const header = req.headers['zt-session'];
  // Node joins repeated headers with ', '; a token (UUID) never holds a comma.
  for (const value of (typeof header === 'string' ? header : '').split(',')) {
    const token = value.trim();
    if (token.length > 0) return token;
  }
  return undefined;
}

/** At most this many `Authorization: Bearer` tokens are looked at (`MaxBearerTokensProcessed`). */
export const MAX_BEARER_TOKENS = 3;

/**
 * The `Authorization: Bearer` tokens of a request (every `authorization` header line, in order,
 * at most {@link MAX_BEARER_TOKENS}). With a `zt-session` they are secondary ext-jwt factors.
 */
export function bearerTokens(req: IncomingMessage): string[] {
  const lines = req.headersDistinct?.authorization ?? (typeof req.headers.authorization === 'string' ? [req.headers.authorization] : []);
  const out: string[] = [];
  for (const line of lines) {
    const m = /^\s*bearer\s+(\S+)\s*$/i.exec(line);
    if (m && out.length < MAX_BEARER_TOKENS) out.push(m[1]!);
  }
  return out;
}

export function missingTokenError(): ApiError {
  return ApiError.of('UNAUTHORIZED', { headers: { 'WWW-Authenticate': MISSING_TOKEN_CHALLENGE } });
}

/** 401 `UNAUTHORIZED` for an OIDC access token that is not valid. */
export function invalidBearerError(): ApiError {
  return ApiError.of('UNAUTHORIZED', { headers: { 'WWW-Authenticate': INVALID_BEARER_CHALLENGE } });
}

/** A 401 from identity-auth keeps its challenge; one without gets the `invalid` challenge of its kind of token. */
function withChallenge(err: ApiError, challenge = INVALID_TOKEN_CHALLENGE): ApiError {
  if (err.status !== 401 || Object.keys(err.headers).some((h) => h.toLowerCase() === 'www-authenticate')) return err;
  return ApiError.fromCode(err.code, {
    message: err.message,
    cause: err.cause,
    status: err.status,
    headers: { ...err.headers, 'WWW-Authenticate': challenge },
  });
}

/** A resolved request: its principal, and the challenge of a partial session (if any). */
export interface Resolved {
  principal: RequestPrincipal;
  challenge?: string;
  /** True when the request was authenticated by an OIDC access token (no `zt-session`). */
  oidc?: boolean;
}

/** The claims of an access token the gateway reads (unverified) to find its revocation markers and bound its cache entry. */
export interface AccessTokenClaims {
  jti: string;
  /** The API session id (`z_asid`). */
  apiSessionId: string;
  /** The identity id (`sub`). */
  sub: string;
  /** Issued at, epoch seconds. */
  iat: number;
  /** Expiry, epoch seconds. */
  exp: number;
}

/** Three dot-separated parts: a compact JWS (legacy session tokens are UUIDs). */
const looksLikeJwt = (token: string) => token.split('.').length === 3;

const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/**
 * The claims of a compact JWS's payload, read WITHOUT verifying its signature (identity-auth
 * verifies it on every cache miss; a cache entry is only ever found under the hash of the exact
 * token it verified). Undefined when the token is not three base64url parts with a JSON object
 * payload holding `jti`, `z_asid`, `sub` (non-empty strings) and `iat`, `exp` (numbers): an
 * access token of this controller always has them.
 */
export function accessTokenClaims(token: string): AccessTokenClaims | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || !/^[A-Za-z0-9_-]+$/.test(parts[1]!)) return undefined;
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return undefined;
  const c = payload as Record<string, unknown>;
  if (!nonEmpty(c.jti) || !nonEmpty(c.z_asid) || !nonEmpty(c.sub)) return undefined;
  if (typeof c.iat !== 'number' || !Number.isFinite(c.iat) || typeof c.exp !== 'number' || !Number.isFinite(c.exp)) return undefined;
  return { jti: c.jti, apiSessionId: c.z_asid, sub: c.sub, iat: c.iat, exp: c.exp };
}

export interface AuthenticatorOptions {
  cache: Cache;
  resolver: SessionResolver;
  log?: (m: string) => void;
  now?: () => number;
}

/**
 * Resolves session tokens to principals: from the shared cache, or on a miss from identity-auth
 * (one call per token and bearer tokens at a time), caching the answer for identity-auth's TTL
 * hint, bounded by {@link MAX_CACHE_TTL_SECONDS} and by the session's own expiry.
 *
 * Only fully authenticated principals resolved WITHOUT bearer tokens are cached: a partial
 * session (MFA or a secondary ext-jwt outstanding) is asked about every time, and a principal
 * that is complete only thanks to this request's bearer token (secondary ext-jwt) must not be
 * served to a later request that lacks it. A cached principal is complete on its own, so it is
 * served whatever bearer tokens come along.
 *
 * OIDC access tokens ({@link resolveAccessToken}) are cached the same way (key: the token's hash)
 * and never past the token's `exp`, but every request also reads the token's revocation markers
 * straight from the shared cache (one MGET, never the near copy), so a revocation reaches every
 * replica at once.
 */
export class Authenticator {
  private readonly inFlight = new Map<string, Promise<Resolved>>();
  /** Resolutions of access tokens under way (apart from `inFlight`: a zt-session key never names an access token's). */
  private readonly inFlightOidc = new Map<string, Promise<Resolved>>();
  private readonly now: () => number;
  private readonly log: (m: string) => void;

  constructor(private readonly opts: AuthenticatorOptions) {
    this.now = opts.now ?? Date.now;
    this.log = opts.log ?? (() => undefined);
  }

  async authenticate(token: string, bearer: readonly string[] = []): Promise<RequestPrincipal> {
    return (await this.resolveRequest(token, bearer)).principal;
  }

  /**
   * The principal of a request, and for a session that is still partial the `WWW-Authenticate`
   * challenge identity-auth gave for it (e.g. a missing secondary ext-jwt token).
   */
  async resolveRequest(token: string, bearer: readonly string[] = []): Promise<Resolved> {
    // An access token sent as `zt-session` must not be served the principal cached for it as a
    // bearer token (that skips its revocation markers): a JWT is never a legacy session token.
    const cached = looksLikeJwt(token) ? undefined : await this.fromCache(token);
    if (cached) return { principal: cached };
    const key = bearer.length === 0 ? token : `${token}\n${bearer.join('\n')}`;
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.resolve(token, bearer).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  /**
   * The principal of a request authenticated by an OIDC access token (its first bearer token, no
   * `zt-session`). The token's claims are decoded without verification (malformed: 401 with
   * {@link INVALID_BEARER_CHALLENGE}); its revocation markers (`jti`, `z_asid`, `sub`) are read
   * with one `mget` while the cached principal is looked up. A marker that revokes it: 401, and
   * the cached principal is dropped. Otherwise a fresh cached principal is served, or identity-auth
   * resolves the token (it verifies it and checks the revocation table) and the answer is cached
   * for its hint, at most {@link MAX_CACHE_TTL_SECONDS} and never past the token's `exp`.
   *
   * The same `mget` reads the identity's principal generation (`principalGenerationKey(sub)`),
   * which identity-auth renews after every change its principal shows (admin flag, permissions…):
   * a cached principal is served only when it was resolved under the current generation, so such
   * a change reaches the very next request on every replica. A resolution records the generation
   * read before it asked, and requests that read another generation do not share it.
   *
   * A cache error while reading the markers is logged and the request goes to identity-auth as on
   * a cache miss (as the legacy path treats cache errors): the revocation table there refuses a
   * revoked token whether or not its marker could be read.
   */
  async resolveAccessToken(token: string): Promise<Resolved> {
    const claims = accessTokenClaims(token);
    if (!claims) throw invalidBearerError();
    const keys = [
      revocationMarkerKey('JTI', claims.jti),
      revocationMarkerKey('API_SESSION', claims.apiSessionId),
      revocationMarkerKey('IDENTITY', claims.sub),
      principalGenerationKey(claims.sub),
    ];
    const [markers, cached] = await Promise.all([
      this.opts.cache.mget(keys).then(
        (values) => values,
        (err: unknown) => {
          this.log(`revocation marker read failed: ${(err as Error).message}`);
          return undefined;
        },
      ),
      this.entryFromCache(token),
    ]);
    if (markers && isRevokedByMarkers({ jti: markers[0] ?? null, apiSession: markers[1] ?? null, identity: markers[2] ?? null }, claims.iat)) {
      if (cached) {
        await this.opts.cache.del(principalCacheKey(token)).catch((err: unknown) => this.log(`principal cache delete failed: ${(err as Error).message}`));
      }
      throw invalidBearerError();
    }
    // Without the markers a cached principal cannot be trusted not to be revoked: identity-auth decides.
    const generation = markers?.[3] ?? null;
    if (markers && cached && isCurrentGeneration(cached, generation) && claims.exp * 1000 > this.now()) return { principal: cached.principal, oidc: true };
    const key = `${token}\n${generation ?? ''}`;
    let pending = this.inFlightOidc.get(key);
    if (!pending) {
      // Without the markers the entry records no generation: it is served again only while there is none.
      pending = this.resolveOidc(token, claims, generation).finally(() => this.inFlightOidc.delete(key));
      this.inFlightOidc.set(key, pending);
    }
    return pending;
  }

  private async resolveOidc(token: string, claims: AccessTokenClaims, generation: string | null): Promise<Resolved> {
    let answer: ResolvedSession;
    try {
      answer = await this.opts.resolver.resolveAccessToken(token);
    } catch (err) {
      throw withChallenge(toApiError(err), INVALID_BEARER_CHALLENGE);
    }
    const { principal } = answer;
    const now = this.now();
    const tokenLeft = Math.floor((claims.exp * 1000 - now) / 1000);
    const ttl = Math.min(principalCacheTtl(answer.cacheTtlSeconds, principal, now), tokenLeft);
    if (ttl >= 1 && principal.isFullyAuthenticated) {
      try {
        await this.opts.cache.set(principalCacheKey(token), principalCacheEntry(principal, ttl, now, generation), ttl);
      } catch (err) {
        this.log(`principal cache write failed: ${(err as Error).message}`);
      }
    }
    return { principal, oidc: true, ...(answer.wwwAuthenticate ? { challenge: answer.wwwAuthenticate } : {}) };
  }

  private async fromCache(token: string): Promise<RequestPrincipal | undefined> {
    return (await this.entryFromCache(token))?.principal;
  }

  /** The fresh, fully authenticated cache entry of a token, if any. */
  private async entryFromCache(token: string): Promise<CachedPrincipal | undefined> {
    let raw: string | null;
    try {
      raw = await this.opts.cache.get(principalCacheKey(token));
    } catch (err) {
      this.log(`principal cache read failed: ${(err as Error).message}`);
      return undefined;
    }
    if (!raw) {
      cacheRequests.inc(PRINCIPAL_MISS);
      return undefined;
    }
    try {
      const entry = JSON.parse(raw) as CachedPrincipal;
      if (!entry.principal || !entry.principal.isFullyAuthenticated || !(Date.parse(entry.expiresAt) > this.now())) {
        cacheRequests.inc(PRINCIPAL_MISS);
        return undefined;
      }
      cacheRequests.inc(PRINCIPAL_HIT);
      return entry;
    } catch {
      cacheRequests.inc(PRINCIPAL_MISS);
      return undefined;
    }
  }

  private async resolve(token: string, bearer: readonly string[]): Promise<Resolved> {
    let answer: ResolvedSession;
    try {
      answer = await this.opts.resolver.resolve(token, bearer);
    } catch (err) {
      throw withChallenge(toApiError(err));
    }
    const { principal } = answer;
    const now = this.now();
    const ttl = principalCacheTtl(answer.cacheTtlSeconds, principal, now);
    if (ttl >= 1 && principal.isFullyAuthenticated && bearer.length === 0) {
      try {
        await this.opts.cache.set(principalCacheKey(token), principalCacheEntry(principal, ttl, now), ttl);
      } catch (err) {
        this.log(`principal cache write failed: ${(err as Error).message}`);
      }
    }
    return { principal, ...(answer.wwwAuthenticate ? { challenge: answer.wwwAuthenticate } : {}) };
  }
}

/**
 * `expiration-seconds` and `expires-at` for a request made with a legacy session: seconds left
 * and the expiry instant in Go's `time.String()` format.
 */
export function sessionHeaders(principal: RequestPrincipal, now = Date.now()): Record<string, string> {
  const at = Date.parse(principal.expiresAt);
  if (!Number.isFinite(at)) return {};
  return {
    'expiration-seconds': String(Math.max(0, Math.floor((at - now) / 1000))),
    'expires-at': formatGoTime(new Date(at)),
  };
}
