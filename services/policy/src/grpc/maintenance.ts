import { schemaMaintenance } from '@ziti/db-kit';
import { type GrpcServiceBinding, maintenanceService } from '@ziti/service-kit';
import type { Pool } from 'pg';
import { SCHEMA, SERVICE_NAME } from '../schema.js';

/**
 * What policy counts for `GET /summary`, under OpenZiti's store names: each the table (or subquery)
 * its management list counts for an admin, so the numbers equal those lists' `totalCount`.
 */
export const ENTITY_COUNTS: Readonly<Record<string, string>> = {
  configTypes: '"config_types"',
  configs: '"configs"',
  services: '"services"',
  // `/routers` lists every router (edge, transit, fabric); OpenZiti's `routers.edge` is `/edge-routers`.
  routers: '"routers"',
  'routers.edge': `(SELECT 1 FROM "routers" WHERE "kind" = 'edge')`,
  terminators: '"terminators"',
  servicePolicies: '"service_policies"',
  edgeRouterPolicies: '"edge_router_policies"',
  serviceEdgeRouterPolicies: '"service_edge_router_policies"',
};

/** The MaintenanceService of policy: entity counts, and snapshots of its schema. */
export function maintenance(databaseUrl: string, pool: Pool, log?: (m: string) => void): GrpcServiceBinding {
  return maintenanceService(schemaMaintenance({ databaseUrl, schema: SCHEMA, context: SERVICE_NAME, pool, counts: ENTITY_COUNTS }), log);
}
