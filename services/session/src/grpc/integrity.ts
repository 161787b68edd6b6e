import { type IntegrityHandlers, type IntegritySql, outboxIntegrityCheck, referenceIntegrity } from '@ziti/service-kit';
import { REFERENCE_COLUMNS } from '../store/integrity.js';

/**
 * `ziti.v1.IntegrityService` of the session context: sessions and service-update times of API
 * sessions, identities and services their owners no longer have (a fix deletes them), and its
 * outbox (which no relay drains: a row there is published by the fix).
 */
export function sessionIntegrity(sql: IntegritySql, flushOutbox: () => Promise<void>): Partial<IntegrityHandlers> {
  return { ...outboxIntegrityCheck(sql, 'session', flushOutbox), ...referenceIntegrity(sql, 'session', REFERENCE_COLUMNS) };
}
