import type { DomainEvent, PrincipalCache, Revocation, RevocationWriter, Transaction } from './ports.js';

/** What ending an identity's sessions left to do once its transaction committed. */
export interface EndedSessions {
  tokens: string[];
  revocations: Revocation[];
}

/**
 * Ends an identity's API sessions when one of its credentials changes (a password changed or
 * reset, an authenticator re-enrolled): whoever held the old credential loses what it opened. In
 * the transaction of the change: the sessions (all, or all but the caller's own) are deleted with
 * an `api-session.deleted` each, and every OIDC one gets an API_SESSION revocation, so its access
 * and refresh tokens are refused on every gateway at once. After the commit, {@link after} drops
 * the cached principals and sets the revocation markers.
 */
export class SessionEnder {
  constructor(
    private readonly cache: PrincipalCache,
    private readonly revocations?: RevocationWriter,
  ) {}

  /** Ends the identity's sessions inside `tx`, all but `keepSessionId` when given. */
  async endIn(tx: Transaction, identityId: string, keepSessionId?: string): Promise<EndedSessions> {
    const sessions = await tx.apiSessions.deleteByIdentity(identityId, keepSessionId);
    await tx.emit(...sessions.map((s): DomainEvent => ({ type: 'api-session.deleted', apiSessionId: s.id, identityId, tokens: [s.token] })));
    const revocations: Revocation[] = [];
    if (this.revocations) {
      for (const s of sessions) if (s.kind === 'oidc') revocations.push(await this.revocations.revokeIn(tx, 'API_SESSION', s.id));
    }
    return { tokens: sessions.map((s) => s.token), revocations };
  }

  /** After the commit: the ended sessions' principals leave the cache and their revocations reach every gateway. */
  async after(ended: EndedSessions | undefined): Promise<void> {
    if (!ended) return;
    if (ended.tokens.length > 0) await this.cache.drop(ended.tokens);
    if (ended.revocations.length > 0) await this.revocations?.mark(ended.revocations);
  }
}
