import { formatTimestamp } from '@ziti/errors';
import { tokenHash } from '@ziti/http-kit';
import { type ChangeEvent, newChangeEvent } from '@ziti/messaging';
import type { DomainEvent, IdentityProjection } from '../domain/ports.js';

/** `source` of every event this context publishes (subject `ziti.events.identity-auth.<type>`). */
export const EVENT_SOURCE = 'identity-auth';

function identityData(p: IdentityProjection, tokens: readonly string[], deleted: boolean): Record<string, unknown> {
  return {
    identityId: p.id,
    name: p.name,
    roleAttributes: p.roleAttributes,
    isAdmin: p.isAdmin,
    disabled: p.disabled,
    updatedAt: formatTimestamp(p.updatedAt),
    typeId: p.typeId,
    isDefaultAdmin: p.isDefaultAdmin,
    externalId: p.externalId,
    authPolicyId: p.authPolicyId,
    createdAt: formatTimestamp(p.createdAt),
    tags: p.tags,
    defaultHostingPrecedence: p.defaultHostingPrecedence,
    defaultHostingCost: p.defaultHostingCost,
    serviceHostingPrecedences: p.serviceHostingPrecedences,
    serviceHostingCosts: p.serviceHostingCosts,
    appData: p.appData,
    ...(deleted ? { deleted: true } : {}),
    tokenHashes: tokens.map(tokenHash),
  };
}

/**
 * The events of identity-auth, published through its transactional outbox after commit.
 * Tokens never travel: `tokenHashes` are `tokenHash(token)` (sha256 hex), the key material of
 * `principalCacheKeyFromHash`, so gateways can drop the cached principals of affected sessions.
 *
 * - `identity.created` / `identity.updated` / `identity.disabled` / `identity.deleted`: the identity's
 *   projection `{identityId, name, roleAttributes, isAdmin, disabled, updatedAt, deleted?, tokenHashes}`
 *   (plus `typeId`, `isDefaultAdmin`, `externalId`, `authPolicyId`, `createdAt`, `tags`, and for the
 *   router data model `defaultHostingPrecedence`, `defaultHostingCost`, `serviceHostingPrecedences`,
 *   `serviceHostingCosts` and `appData`), e.g. `{"identityId":"a1b2c3d4e","name":"laptop","roleAttributes":["eng"],"isAdmin":false,
 *   "disabled":true,"updatedAt":"2026-01-02T03:04:05.678Z","tokenHashes":["9f86d08…"]}`.
 *   `tokenHashes` name every session whose cached principal is now wrong (updated) or that ended
 *   (disabled, deleted: each of those sessions also gets its own `api-session.deleted`). The policy
 *   context keeps the projection (ignoring an `updatedAt` older than the one it has).
 * - `api-session.created` `{ id, apiSessionId, identityId }` (`id` and `apiSessionId` both the
 *   session's id): a legacy (`zt-session`) session became fully authenticated (a password,
 *   certificate or ext-jwt login without pending TOTP, or the TOTP completion of one that was
 *   pending), e.g. `{"id":"x1y2z3","apiSessionId":"x1y2z3","identityId":"a1b2c3d4e"}`. No token
 *   and no token hash: the router control plane (fabric) reads the token with
 *   `ListLegacyApiSessions` over the authenticated internal gRPC. OIDC sessions raise none.
 * - `api-session.updated` `{ apiSessionId, identityId, tokenHashes }` (second factor completed)
 * - `api-session.deleted` `{ apiSessionId, identityId, tokenHashes }` (logout, management delete,
 *   idle expiry, identity delete or disable)
 * - `auth-policy.created` / `auth-policy.updated` / `auth-policy.deleted` `{ authPolicyId, tokenHashes }`
 *   (sessions whose completeness may have changed with the policy's secondary factors)
 * - `controller-settings.updated` `{ settingId, change: created|updated|deleted, oidc }`: a
 *   controller setting (`global` or a controller's override, whose id is the controller's id)
 *   changed; `oidc` is its stored lists (`redirectUris`, `postLogoutUris`, those set), null once
 *   deleted. An OIDC provider recomputes its effective settings from it.
 * - `revocation.created` `{ revocationId, type }`: a revocation (JTI, API_SESSION, IDENTITY) was
 *   created or replaced; the router control plane reads it with `ListRevocations` for the routers'
 *   data model.
 *
 * A login's `api-session.created` is written by the statement that stores the session and
 * published on commit (`PrismaUnitOfWork.createSession`); the login's `authentication` outcome
 * travels to the gateway on the answer instead (the event stream).
 */
export function toChangeEvent(e: DomainEvent): ChangeEvent<Record<string, unknown>> {
  switch (e.type) {
    case 'identity.created':
      return newChangeEvent(EVENT_SOURCE, e.type, identityData(e.identity, [], false));
    case 'identity.updated':
    case 'identity.disabled':
      return newChangeEvent(EVENT_SOURCE, e.type, identityData(e.identity, e.tokens, false));
    case 'identity.deleted':
      return newChangeEvent(EVENT_SOURCE, e.type, identityData(e.identity, e.tokens, true));
    case 'api-session.created':
      return newChangeEvent(EVENT_SOURCE, e.type, { id: e.apiSessionId, apiSessionId: e.apiSessionId, identityId: e.identityId });
    case 'api-session.updated':
    case 'api-session.deleted':
      return newChangeEvent(EVENT_SOURCE, e.type, {
        apiSessionId: e.apiSessionId,
        identityId: e.identityId,
        tokenHashes: e.tokens.map(tokenHash),
      });
    case 'auth-policy.created':
    case 'auth-policy.updated':
    case 'auth-policy.deleted':
      return newChangeEvent(EVENT_SOURCE, e.type, { authPolicyId: e.authPolicyId, tokenHashes: e.tokens.map(tokenHash) });
    case 'controller-settings.updated':
      return newChangeEvent(EVENT_SOURCE, e.type, { settingId: e.settingId, change: e.change, oidc: e.oidc });
    case 'revocation.created':
      return newChangeEvent(EVENT_SOURCE, e.type, { revocationId: e.revocationId, type: e.revocationType });
  }
}
