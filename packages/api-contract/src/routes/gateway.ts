import { Type } from '@sinclair/typebox';
import { Empty } from '../models/common.js';
import { type RouteDef, route } from '../route.js';
import {
  SpecDocument,
  DetailSpecEnvelope,
  ListEnumeratedCapabilitiesEnvelope,
  ListControllersEnvelope,
  ListSummaryCountsEnvelope,
  ListProtocolsEnvelope,
  ListSpecsEnvelope,
  ListVersionEnvelope,
} from '../models/informational.js';

const BOTH = ['client', 'management'] as const;
const INFORMATIONAL = ['Informational'] as const;

/**
 * Operations served by the gateway itself (owner `gateway`): the informational ones (anonymous) and
 * `/controllers` (authenticated; this deployment's controller with its API addresses), and the
 * admin operations it answers by asking every context (`/summary`, `/database/snapshot`).
 * `GET /` is reached through the base-path aliases (`/`, `/edge/client/v1`, …), which the gateway
 * resolves to `/version`.
 */
export const GATEWAY_ROUTES: readonly RouteDef[] = [
  route({
    operationId: 'listRoot',
    method: 'GET',
    path: '/',
    apis: BOTH,
    owner: 'gateway',
    access: 'anonymous',
    tags: INFORMATIONAL,
    summary: 'Returns version information',
    success: { status: 200, schema: ListVersionEnvelope },
  }),
  route({
    operationId: 'listVersion',
    method: 'GET',
    path: '/version',
    apis: BOTH,
    owner: 'gateway',
    access: 'anonymous',
    tags: INFORMATIONAL,
    summary: 'Returns version information',
    success: { status: 200, schema: ListVersionEnvelope },
  }),
  route({
    operationId: 'listEnumeratedCapabilities',
    method: 'GET',
    path: '/enumerated-capabilities',
    apis: BOTH,
    owner: 'gateway',
    access: 'anonymous',
    tags: INFORMATIONAL,
    summary: 'Returns all capabilities this version of the controller is aware of, enabled or not.',
    success: { status: 200, schema: ListEnumeratedCapabilitiesEnvelope },
  }),
  route({
    operationId: 'listProtocols',
    method: 'GET',
    path: '/protocols',
    apis: ['client'],
    owner: 'gateway',
    access: 'anonymous',
    tags: INFORMATIONAL,
    summary: 'Return a list of the listening Edge protocols',
    success: { status: 200, schema: ListProtocolsEnvelope },
  }),
  route({
    operationId: 'listSpecs',
    method: 'GET',
    path: '/specs',
    apis: BOTH,
    owner: 'gateway',
    access: 'anonymous',
    tags: INFORMATIONAL,
    summary: 'Returns a list of API specs',
    success: { status: 200, schema: ListSpecsEnvelope },
  }),
  route({
    operationId: 'detailSpec',
    method: 'GET',
    path: '/specs/{id}',
    apis: BOTH,
    owner: 'gateway',
    access: 'anonymous',
    tags: INFORMATIONAL,
    summary: 'Return a single spec resource',
    success: { status: 200, schema: DetailSpecEnvelope },
  }),
  route({
    operationId: 'detailSpecBody',
    method: 'GET',
    path: '/specs/{id}/spec',
    apis: BOTH,
    owner: 'gateway',
    access: 'anonymous',
    tags: INFORMATIONAL,
    summary: "Returns the spec's document itself (JSON, or YAML with `Accept: text/yaml`), not in an envelope",
    success: { status: 200, schema: SpecDocument },
  }),
  route({
    operationId: 'listControllers',
    method: 'GET',
    path: '/controllers',
    apis: BOTH,
    owner: 'gateway',
    access: 'authenticated',
    tags: ['Controllers'],
    summary: "Returns a list of this deployment's controllers and their API addresses",
    query: Type.Object({ limit: Type.Optional(Type.Integer()), offset: Type.Optional(Type.Integer()), filter: Type.Optional(Type.String()) }),
    success: { status: 200, schema: ListControllersEnvelope },
  }),
  // Answered by asking every context (MaintenanceService), management API only, admins only.
  route({
    operationId: 'listSummary',
    method: 'GET',
    path: '/summary',
    apis: ['management'],
    owner: 'gateway',
    access: 'admin',
    tags: INFORMATIONAL,
    summary: 'Returns a list of accessible resource counts',
    success: { status: 200, schema: ListSummaryCountsEnvelope },
  }),
  route({
    operationId: 'createDatabaseSnapshot',
    method: 'POST',
    path: '/database/snapshot',
    apis: ['management'],
    owner: 'gateway',
    access: 'admin',
    tags: ['Database'],
    summary: 'Create a new database snapshot. Requires admin access.',
    success: { status: 200, schema: Empty },
  }),
];
