import { Empty } from '../models/common.js';
import { DataIntegrityCheckResultEnvelope } from '../models/integrity.js';
import { type RouteDef, route } from '../route.js';

const DATABASE = ['Database'] as const;

/**
 * The data integrity check (reference §6.14), served by the gateway, which asks every context.
 * Admin only; one run at a time across every gateway replica (429 `RATE_LIMITED` otherwise).
 */
export const INTEGRITY_ROUTES: readonly RouteDef[] = [
  route({
    operationId: 'checkDataIntegrity',
    method: 'POST',
    path: '/database/check-data-integrity',
    apis: ['management'],
    owner: 'gateway',
    access: 'admin',
    tags: DATABASE,
    summary: 'Starts a data integrity scan on the datastore',
    success: { status: 202, schema: Empty },
  }),
  route({
    operationId: 'fixDataIntegrity',
    method: 'POST',
    path: '/database/fix-data-integrity',
    apis: ['management'],
    owner: 'gateway',
    access: 'admin',
    tags: DATABASE,
    summary: 'Runs a data integrity scan on the datastore, attempts to fix any issues it can and returns any found issues',
    success: { status: 202, schema: Empty },
  }),
  route({
    operationId: 'dataIntegrityResults',
    method: 'GET',
    path: '/database/data-integrity-results',
    apis: ['management'],
    owner: 'gateway',
    access: 'admin',
    tags: DATABASE,
    summary: 'Returns any results found from in-progress integrity checks',
    success: { status: 200, schema: DataIntegrityCheckResultEnvelope },
  }),
];
