import { ApiError } from '@ziti/errors';
import { type IntegrityHandlers, type IntegritySql, checkOutbox, findingsFor, listReferenceIds, repairReferenceRows } from '@ziti/service-kit';
import { REFERENCE_COLUMNS, existingCas } from '../store/integrity.js';

const pageSize = (limit: number) => Math.min(Math.max(Number(limit) || 500, 1), 1000);

/**
 * `ziti.v1.IntegrityService` of pki-enrollment: its outbox, which CAs exist, and enrollments,
 * router certificates and API session certificates of identities, API sessions and routers their
 * owners no longer have (a fix deletes them).
 */
export function pkiIntegrity(sql: IntegritySql, flushOutbox: () => Promise<void>): Partial<IntegrityHandlers> {
  return {
    async checkIntegrity(req) {
      const findings = findingsFor(req.limit);
      await checkOutbox(sql, 'pki-enrollment', req.fix, flushOutbox, findings);
      return findings.toMessage();
    },
    async existingIds(req) {
      if (req.kind !== 'ca') throw ApiError.field('kind', `pki-enrollment owns no ${req.kind}`, req.kind);
      return { ids: req.ids.length === 0 ? [] : await existingCas(sql, req.ids) };
    },
    async listReferences(req) {
      return { ids: await listReferenceIds(sql, REFERENCE_COLUMNS, req.kind, req.after, pageSize(req.limit)) };
    },
    async repairReferences(req) {
      const findings = findingsFor(req.limit);
      await repairReferenceRows(sql, 'pki-enrollment', REFERENCE_COLUMNS, req.kind, req.ids, req.fix, findings);
      return findings.toMessage();
    },
  };
}
