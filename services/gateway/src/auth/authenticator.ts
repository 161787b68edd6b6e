import type { IncomingMessage } from 'node:http';
import { ApiError, toApiError } from '@ziti/errors';
import { type CachedPrincipal, MAX_PRINCIPAL_CACHE_TTL_SECONDS, type RequestPrincipal, principalCacheEntry, principalCacheKey, principalCacheTtl } from '@ziti/http-kit';
import type { Cache } from '@ziti/messaging';
import { cacheRequests } from '@ziti/metrics';
import { formatGoTime } from './go-time.js';
import type { SessionResolver } from './session-resolver.js';


const PRINCIPAL_HIT = { context: 'gateway', cache: 'principal', result: 'hit' } as const;
const PRINCIPAL_MISS = { context: 'gateway', cache: 'principal', result: 'miss' } as const;
/** 401 challenge when no token was sent (one header value holding both challenges). */
export const MISSING_TOKEN_CHALLENGE =
  'zt-session realm="zt-session" error="missing" error_description="no matching token was provided",' +
  'Bearer realm="openziti-oidc" error="missing" error_description="no matching token was provided"';

/** 401 challenge for an unknown or expired `zt-session` token. */
export const INVALID_TOKEN_CHALLENGE = 'zt-session realm="zt-session" error="invalid" error_description="token is invalid"';

/** Cache entries never outlive this, whatever identity-auth suggests. */
export const MAX_CACHE_TTL_SECONDS = MAX_PRINCIPAL_CACHE_TTL_SECONDS;

/** What the gateway keeps under `principalCacheKey(token)` (the format is shared with identity-auth). */
export type { CachedPrincipal };

/**
 * The legacy session token of a request: the `zt-session` header (any case, first value,
 * trimmed). A bare `Authorization: Bearer` is not a session here (OIDC is not served).
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

/** A 401 from identity-auth keeps its challenge; one without gets the `invalid` challenge. */
function withChallenge(err: ApiError): ApiError {
  if (err.status !== 401 || Object.keys(err.headers).some((h) => h.toLowerCase() === 'www-authenticate')) return err;
  return ApiError.fromCode(err.code, {
    message: err.message,
    cause: err.cause,
    status: err.status,
    headers: { ...err.headers, 'WWW-Authenticate': INVALID_TOKEN_CHALLENGE },
  });
}

/** A resolved request: its principal, and the challenge of a partial session (if any). */
export interface Resolved {
  principal: RequestPrincipal;
  challenge?: string;
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
 */
export class Authenticator {
  private readonly inFlight = new Map<string, Promise<Resolved>>();
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
    const cached = await this.fromCache(token);
    if (cached) return { principal: cached };
    const key = bearer.length === 0 ? token : `${token}\n${bearer.join('\n')}`;
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.resolve(token, bearer).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  private async fromCache(token: string): Promise<RequestPrincipal | undefined> {
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
      return entry.principal;
    } catch {
      cacheRequests.inc(PRINCIPAL_MISS);
      return undefined;
    }
  }

  private async resolve(token: string, bearer: readonly string[]): Promise<Resolved> {
    let answer: Awaited<ReturnType<SessionResolver['resolve']>>;
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
