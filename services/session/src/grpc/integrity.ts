import { type IntegrityHandlers, type IntegritySql, checkOutbox, findingsFor, listReferenceIds, repairReferenceRows } from '@ziti/service-kit';
import { REFERENCE_COLUMNS } from '../store/integrity.js';

const pageSize = (limit: number) => Math.min(Math.max(Number(limit) || 500, 1), 1000);

/**
 * `ziti.v1.IntegrityService` of the session context: sessions and service-update times of API
 * sessions, identities and services their owners no longer have (a fix deletes them), and its
 * outbox (which no relay drains: a row there is published by the fix).
 */
export function sessionIntegrity(sql: IntegritySql, flushOutbox: () => Promise<void>): Partial<IntegrityHandlers> {
  return {
    async checkIntegrity(req) {
      const findings = findingsFor(req.limit);
      await checkOutbox(sql, 'session', req.fix, flushOutbox, findings);
      return findings.toMessage();
    },
    async listReferences(req) {
      return { ids: await listReferenceIds(sql, REFERENCE_COLUMNS, req.kind, req.after, pageSize(req.limit)) };
    },
    async repairReferences(req) {
      const findings = findingsFor(req.limit);
      await repairReferenceRows(sql, 'session', REFERENCE_COLUMNS, req.kind, req.ids, req.fix, findings);
      return findings.toMessage();
    },
  };
}
