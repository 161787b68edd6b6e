import { createHash } from 'node:crypto';

/**
 * The shared cache contract for resolved principals. The gateway caches a resolved API session
 * under `principalCacheKey(token)`; identity-auth deletes the same key (after commit) when the
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
