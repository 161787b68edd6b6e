import { ApiError } from '@ziti/errors';
import { type IntegrityHandlers, type IntegritySql, outboxIntegrityCheck, referenceIntegrity } from '@ziti/service-kit';
import { REFERENCE_COLUMNS, existingCas } from '../store/integrity.js';

/**
 * `ziti.v1.IntegrityService` of pki-enrollment: its outbox, which CAs exist, and enrollments,
 * router certificates and API session certificates of identities, API sessions and routers their
 * owners no longer have (a fix deletes them).
 */
export function pkiIntegrity(sql: IntegritySql, flushOutbox: () => Promise<void>): Partial<IntegrityHandlers> {
  return {
    ...outboxIntegrityCheck(sql, 'pki-enrollment', flushOutbox),
    ...referenceIntegrity(sql, 'pki-enrollment', REFERENCE_COLUMNS),
    async existingIds(req) {
      if (req.kind !== 'ca') throw ApiError.field('kind', `pki-enrollment owns no ${req.kind}`, req.kind);
      return { ids: req.ids.length === 0 ? [] : await existingCas(sql, req.ids) };
    },
  };
}
