import { ApiError } from '@ziti/errors';
import { type IntegrityHandlers, type IntegritySql, REFERENCE_GRACE_SECONDS, findingsFor, integrityPageSize, outboxIntegrityCheck } from '@ziti/service-kit';
import { syncIdentityRequest } from '../clients/policy-client.js';
import { projectionOf } from '../domain/identity-projection.js';
import type { IdentityIntegrity } from '../domain/integrity-manager.js';

/** `ziti.v1.IntegrityService` of identity-auth. */
export function identityAuthIntegrity(integrity: IdentityIntegrity, sql: IntegritySql, flushOutbox: () => Promise<void>): Partial<IntegrityHandlers> {
  return {
    ...outboxIntegrityCheck(sql, 'identity-auth', flushOutbox),
    async listProjectionSources(req) {
      if (req.kind !== 'identity') throw ApiError.field('kind', `identity-auth is the source of no ${req.kind} projection`, req.kind);
      const now = new Date();
      const page = await integrity.identityPage(req.after, integrityPageSize(req.limit));
      return { identities: page.map((i) => syncIdentityRequest(projectionOf(i, now), false)), postureChecks: [] };
    },
    async existingIds(req) {
      if (req.kind !== 'identity' && req.kind !== 'api-session') throw ApiError.field('kind', `identity-auth owns no ${req.kind}`, req.kind);
      return { ids: await integrity.existingIds(req.kind, req.ids) };
    },
    async listReferences(req) {
      if (req.kind !== 'ca') return { ids: [] };
      return { ids: await integrity.caReferences(req.after, integrityPageSize(req.limit), REFERENCE_GRACE_SECONDS) };
    },
    async repairReferences(req) {
      const findings = findingsFor(req.limit);
      if (req.kind === 'ca') await integrity.repairCaReferences(req.ids, req.fix, findings);
      return findings.toMessage();
    },
  };
}
