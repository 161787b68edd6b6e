import { principalCacheKeyFromHash } from '@ziti/http-kit';
import type { Cache, ChangeEvent, EventBus, Subscription } from '@ziti/messaging';

/**
 * identity-auth events after which cached principals must go: ended sessions, changed or
 * disabled identities, a session whose second factor completed (`api-session.updated`), and an
 * auth policy whose secondary factors changed (`auth-policy.updated`). Each names the sessions in
 * `data.tokenHashes`.
 */
export const INVALIDATING_EVENTS = [
  'api-session.deleted',
  'api-session.updated',
  'identity.deleted',
  'identity.updated',
  'identity.disabled',
  'auth-policy.updated',
];

/** The cache keys an event names: `data.tokenHashes` (SHA-256 hex of the session tokens). */
export function invalidatedKeys(event: ChangeEvent): string[] {
  const hashes = (event.data as { tokenHashes?: unknown }).tokenHashes;
  if (!Array.isArray(hashes)) return [];
  return hashes.filter((h): h is string => typeof h === 'string' && h.length > 0).map(principalCacheKeyFromHash);
}

/**
 * Every gateway replica drops the principals of ended or changed API sessions (broadcast:
 * each replica gets each event). identity-auth also deletes the keys itself after its commit;
 * this covers a replica that re-cached a principal in between.
 *
 * Example event: `{type: "api-session.deleted", source: "identity-auth",
 * data: {apiSessionId: "Xy3.kLm9-", identityId: "a1b2c3d4e", tokenHashes: ["9f86d0…"]}}`.
 */
export function subscribeCacheInvalidation(bus: EventBus, cache: Cache): Promise<Subscription> {
  return bus.subscribeBroadcast('identity-auth', INVALIDATING_EVENTS, async (event) => {
    const keys = invalidatedKeys(event);
    if (keys.length > 0) await cache.del(...keys);
  });
}
