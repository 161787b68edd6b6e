import { schemaMaintenance } from '@ziti/db-kit';
import { type GrpcServiceBinding, maintenanceService } from '@ziti/service-kit';
import type { Pool } from 'pg';
import { SCHEMA, SERVICE_NAME } from '../schema.js';

/**
 * What pki-enrollment counts for `GET /summary`, under OpenZiti's store names: each the table (or subquery)
 * its management list counts for an admin, so the numbers equal those lists' `totalCount`.
 */
export const ENTITY_COUNTS: Readonly<Record<string, string>> = {
  cas: '"cas"',
  enrollments: '"enrollments"',
  apiSessionCertificates: '"api_session_certificates"',
};

/** The MaintenanceService of pki-enrollment: entity counts, and snapshots of its schema. */
export function maintenance(databaseUrl: string, pool: Pool, log?: (m: string) => void): GrpcServiceBinding {
  return maintenanceService(schemaMaintenance({ databaseUrl, schema: SCHEMA, context: SERVICE_NAME, pool, counts: ENTITY_COUNTS }), log);
}
