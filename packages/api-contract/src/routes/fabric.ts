import { Type } from '@sinclair/typebox';
import * as F from '../models/fabric.js';
import { type Access, type RouteDef, route } from '../route.js';

const FABRIC = ['fabric'] as const;
const listQuery = Type.Object({
  limit: Type.Optional(Type.Integer()),
  offset: Type.Optional(Type.Integer()),
  filter: Type.Optional(Type.String()),
});

const list = (operationId: string, path: string, tag: string, access: Access, schema: F.FabricEnvelope, owner: 'policy' | 'fabric' = 'policy'): RouteDef =>
  route({
    operationId,
    method: 'GET',
    path,
    apis: FABRIC,
    owner,
    access,
    tags: [tag],
    summary: `List ${path.slice(1)}`,
    query: listQuery,
    success: { status: 200, schema },
  });

/**
 * The fabric API (`/fabric/v1`, openziti/ziti `controller/specs/swagger.yml`) as far as the admin
 * console reads it: routers and terminators (admin only, `permissions.IsAdmin()` in the
 * controller), links and circuits (`DefaultManagementAccess`: admins, and `admin_readonly` for
 * reads). Links and circuits are the fabric context's: the links routers report, the live circuits.
 */
export const FABRIC_ROUTES: readonly RouteDef[] = [
  list('listRouters', '/routers', 'Router', 'admin', F.FabricListRoutersEnvelope),
  list('listTerminators', '/terminators', 'Terminator', 'admin', F.FabricListTerminatorsEnvelope),
  list('listLinks', '/links', 'Link', 'management', F.FabricListLinksEnvelope, 'fabric'),
  list('listCircuits', '/circuits', 'Circuit', 'management', F.FabricListCircuitsEnvelope, 'fabric'),
];
