import { tokenHash } from '@ziti/http-kit';
import { type ChangeEvent, newChangeEvent } from '@ziti/messaging';
import type { DomainEvent } from '../domain/ports.js';

/** `source` of every event this context publishes (subject `ziti.events.identity-auth.<type>`). */
export const EVENT_SOURCE = 'identity-auth';

/**
 * The events of identity-auth, published through its transactional outbox after commit.
 * Tokens never travel: `tokenHashes` are `tokenHash(token)` (sha256 hex), the key material of
 * `principalCacheKeyFromHash`, so gateways can drop the cached principals of affected sessions.
 *
 * - `identity.created` `{ identityId }`
 * - `identity.updated` `{ identityId, tokenHashes }`, e.g.
 *   `{ "identityId": "a1b2c3d4e", "tokenHashes": ["9f86d08…"] }` (every session of the identity)
 * - `identity.deleted` `{ identityId, tokenHashes }` (its sessions were deleted with it; each also
 *   gets its own `api-session.deleted`)
 * - `api-session.created` `{ apiSessionId, identityId }`
 * - `api-session.deleted` `{ apiSessionId, identityId, tokenHashes }` (logout, management delete,
 *   idle expiry, identity delete)
 */
export function toChangeEvent(e: DomainEvent): ChangeEvent<Record<string, unknown>> {
  switch (e.type) {
    case 'identity.created':
      return newChangeEvent(EVENT_SOURCE, e.type, { identityId: e.identityId });
    case 'identity.updated':
    case 'identity.deleted':
      return newChangeEvent(EVENT_SOURCE, e.type, { identityId: e.identityId, tokenHashes: e.tokens.map(tokenHash) });
    case 'api-session.created':
      return newChangeEvent(EVENT_SOURCE, e.type, { apiSessionId: e.apiSessionId, identityId: e.identityId });
    case 'api-session.deleted':
      return newChangeEvent(EVENT_SOURCE, e.type, {
        apiSessionId: e.apiSessionId,
        identityId: e.identityId,
        tokenHashes: e.tokens.map(tokenHash),
      });
  }
}
