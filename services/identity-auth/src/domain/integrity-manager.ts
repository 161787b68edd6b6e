import type { Identity } from './model.js';

/** A certificate authenticator issued by a third-party CA (pki-enrollment's). */
export interface CaReference {
  authenticatorId: string;
  identityId: string;
  caId: string;
}

/** What identity-auth's part of the data integrity check reads and repairs (store/integrity-repo.ts). */
export interface IntegrityRepository {
  /** Identities ordered by id (byte-wise) after `after`. */
  identityPage(after: string, limit: number): Promise<Identity[]>;
  existingIds(kind: 'identity' | 'api-session', ids: readonly string[]): Promise<string[]>;
  /** The CA ids authenticators older than the grace period refer to, ordered, after `after`. */
  caReferences(after: string, limit: number, graceSeconds: number): Promise<string[]>;
  authenticatorsOfCas(caIds: readonly string[], limit: number): Promise<CaReference[]>;
  /** Deletes in one statement; answers the ids deleted. */
  deleteAuthenticators(ids: readonly string[]): Promise<Set<string>>;
}

/** Where findings go (the service-kit's `Findings`). */
export interface FindingSink {
  add(description: string, fixed: boolean): void;
  readonly limit: number;
}

/**
 * identity-auth's part of the data integrity check: the identities policy projects (as
 * `SyncIdentity` sends them), which identities and API sessions exist, and certificate
 * authenticators of CAs pki-enrollment no longer has (a fix deletes them, as `DeleteCaAuthenticators` would have).
 */
export class IdentityIntegrity {
  constructor(private readonly repo: IntegrityRepository) {}

  identityPage(after: string, limit: number): Promise<Identity[]> {
    return this.repo.identityPage(after, limit);
  }

  existingIds(kind: 'identity' | 'api-session', ids: readonly string[]): Promise<string[]> {
    return ids.length === 0 ? Promise.resolve([]) : this.repo.existingIds(kind, ids);
  }

  caReferences(after: string, limit: number, graceSeconds: number): Promise<string[]> {
    return this.repo.caReferences(after, limit, graceSeconds);
  }

  async repairCaReferences(goneCaIds: readonly string[], fix: boolean, sink: FindingSink): Promise<void> {
    if (goneCaIds.length === 0) return;
    const refs = await this.repo.authenticatorsOfCas(goneCaIds, sink.limit + 1);
    const deleted = fix && refs.length > 0 ? await this.repo.deleteAuthenticators(refs.map((r) => r.authenticatorId)) : new Set<string>();
    for (const r of refs) {
      sink.add(
        `identity-auth: certificate authenticator ${r.authenticatorId} of identity ${r.identityId} refers to CA ${r.caId}, which pki-enrollment no longer has`,
        deleted.has(r.authenticatorId),
      );
    }
  }
}
