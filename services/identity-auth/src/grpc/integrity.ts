import { ApiError } from '@ziti/errors';
import { type IntegrityHandlers, type IntegritySql, REFERENCE_GRACE_SECONDS, checkOutbox, findingsFor } from '@ziti/service-kit';
import { syncIdentityRequest } from '../clients/policy-client.js';
import { projectionOf } from '../domain/identity-manager.js';
import type { IdentityIntegrity } from '../domain/integrity-manager.js';

const pageSize = (limit: number) => Math.min(Math.max(Number(limit) || 500, 1), 1000);

/** `ziti.v1.IntegrityService` of identity-auth. */
export function identityAuthIntegrity(integrity: IdentityIntegrity, sql: IntegritySql, flushOutbox: () => Promise<void>): Partial<IntegrityHandlers> {
  return {
    async checkIntegrity(req) {
      const findings = findingsFor(req.limit);
      await checkOutbox(sql, 'identity-auth', req.fix, flushOutbox, findings);
      return findings.toMessage();
    },
    async listProjectionSources(req) {
      if (req.kind !== 'identity') throw ApiError.field('kind', `identity-auth is the source of no ${req.kind} projection`, req.kind);
      const now = new Date();
      const page = await integrity.identityPage(req.after, pageSize(req.limit));
      return { identities: page.map((i) => syncIdentityRequest(projectionOf(i, now), false)), postureChecks: [] };
    },
    async existingIds(req) {
      if (req.kind !== 'identity' && req.kind !== 'api-session') throw ApiError.field('kind', `identity-auth owns no ${req.kind}`, req.kind);
      return { ids: await integrity.existingIds(req.kind, req.ids) };
    },
    async listReferences(req) {
      if (req.kind !== 'ca') return { ids: [] };
      return { ids: await integrity.caReferences(req.after, pageSize(req.limit), REFERENCE_GRACE_SECONDS) };
    },
    async repairReferences(req) {
      const findings = findingsFor(req.limit);
      if (req.kind === 'ca') await integrity.repairCaReferences(req.ids, req.fix, findings);
      return findings.toMessage();
    },
  };
}
