import { createHash } from 'node:crypto';
import type { RequestPrincipal } from './principal.js';

/**
 * The shared cache contract for resolved principals. The gateway caches a resolved API session
 * under `principalCacheKey(token)` (identity-auth also puts a new session's principal there at
 * login); identity-auth deletes the same key (after commit) when the
 * session or its identity changes, and the change events carry `tokenHashes` so every gateway
 * replica can drop it too. Tokens themselves never travel on the bus.
 */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function principalCacheKeyFromHash(hash: string): string {
  return `ziti:principal:${hash}`;
}

export function principalCacheKey(token: string): string {
  return principalCacheKeyFromHash(tokenHash(token));
}

/** Cached principals never outlive this, whatever identity-auth suggests. */
export const MAX_PRINCIPAL_CACHE_TTL_SECONDS = 30;

/** What is kept under `principalCacheKey(token)` (JSON). */
export interface CachedPrincipal {
  principal: RequestPrincipal;
  /** ISO instant after which the entry is stale even if the cache still has it. */
  expiresAt: string;
  /**
   * The identity's principal generation ({@link principalGenerationKey}) read before the principal
   * was resolved (absent: there was none). Bearer entries only: one whose generation is not the
   * current one is stale.
   */
  generation?: string;
}

/**
 * How long a principal may be cached: the hint, at most {@link MAX_PRINCIPAL_CACHE_TTL_SECONDS}
 * and never past the session's expiry; whole seconds (0: not at all).
 */
export function principalCacheTtl(hintSeconds: number, principal: Pick<RequestPrincipal, 'expiresAt'>, now: number): number {
  const sessionLeft = (Date.parse(principal.expiresAt) - now) / 1000;
  return Math.max(0, Math.floor(Math.min(hintSeconds, MAX_PRINCIPAL_CACHE_TTL_SECONDS, Number.isFinite(sessionLeft) ? sessionLeft : 0)));
}

/** The cache value of a principal kept for `ttlSeconds` from `now` (`generation`: see {@link CachedPrincipal}). */
export function principalCacheEntry(principal: RequestPrincipal, ttlSeconds: number, now: number, generation?: string | null): string {
  const entry: CachedPrincipal = { principal, expiresAt: new Date(now + ttlSeconds * 1000).toISOString(), ...(generation ? { generation } : {}) };
  return JSON.stringify(entry);
}

/**
 * The Redis key of an identity's principal generation: identity-auth writes a new value (unique
 * per change) after every committed change of the identity that its principal shows (admin flag,
 * permissions, name, type, trace), before it answers. The gateway reads it with the revocation
 * markers of a bearer token (same MGET) and serves a cached bearer principal only when the entry
 * was resolved under that same generation, so the change reaches the very next request on every
 * replica. It outlives every entry resolved before it ({@link PRINCIPAL_GENERATION_TTL_SECONDS}).
 */
export function principalGenerationKey(identityId: string): string {
  return `ziti:principal-gen:${identityId}`;
}

/**
 * How long a generation is kept: longer than an entry resolved just before the change can live
 * (its resolution, bounded by the gRPC deadline, plus {@link MAX_PRINCIPAL_CACHE_TTL_SECONDS}), so
 * no such entry can be taken for current once the key is gone.
 */
export const PRINCIPAL_GENERATION_TTL_SECONDS = 4 * MAX_PRINCIPAL_CACHE_TTL_SECONDS;

/** Whether a cached entry was resolved under the current generation (`null`: no key). */
export function isCurrentGeneration(entry: Pick<CachedPrincipal, 'generation'>, current: string | null): boolean {
  return (entry.generation ?? null) === current;
}

/** What an OIDC revocation names (identity-auth's `revocations.type`). */
export type RevocationType = 'JTI' | 'API_SESSION' | 'IDENTITY';

/**
 * The Redis key of a revocation marker, shared by identity-auth (which sets it after the
 * revocation's row is committed, for the revocation's remaining lifetime) and the gateway (which
 * reads the markers of a bearer token's `jti`, `z_asid` and `sub` on every request, in one MGET).
 * The value is the revocation's `issuedBefore` in epoch milliseconds (a decimal string).
 */
export function revocationMarkerKey(type: RevocationType, id: string): string {
  return `ziti:revoked:${type}:${id}`;
}

/** The marker values read for one token (null: no marker), as {@link revocationMarkerKey} holds them. */
export interface RevocationMarkers {
  jti: string | null;
  apiSession: string | null;
  identity: string | null;
}

/**
 * Whether the markers revoke a token issued at `issuedAtSeconds` (its `iat`): a JTI or
 * API_SESSION marker revokes it whatever it holds; an IDENTITY marker revokes tokens issued
 * before its `issuedBefore` (ms). An IDENTITY marker whose value is not a number, or a token
 * without a usable `iat`, counts as revoked (a marker is only ever written to refuse).
 */
export function isRevokedByMarkers(markers: RevocationMarkers, issuedAtSeconds: number): boolean {
  if (markers.jti !== null || markers.apiSession !== null) return true;
  if (markers.identity === null) return false;
  const issuedBefore = Number(markers.identity);
  if (markers.identity.trim() === '' || !Number.isFinite(issuedBefore) || !Number.isFinite(issuedAtSeconds)) return true;
  return issuedAtSeconds * 1000 < issuedBefore;
}
