import { Type } from '@sinclair/typebox';
import { Empty } from '../models/common.js';
import {
  DetailSessionEnvelope,
  DetailSessionManagementEnvelope,
  DetailSessionRoutePathEnvelope,
  ListCurrentApiSessionServiceUpdatesEnvelope,
  ListSessionsEnvelope,
  ListSessionsManagementEnvelope,
  SessionCreate,
  SessionCreateEnvelope,
} from '../models/session.js';
import { type RouteDef, route } from '../route.js';

const CLIENT = ['client'] as const;
const MANAGEMENT = ['management'] as const;
const owner = 'session' as const;
const listQuery = Type.Object({
  limit: Type.Optional(Type.Integer()),
  offset: Type.Optional(Type.Integer()),
  filter: Type.Optional(Type.String()),
});

/**
 * Operations served by the session context. As in the controller, every session operation needs
 * only a fully authenticated caller (`IsAuthenticated`), on both APIs: non-admins see and delete
 * their own sessions; the list shows an admin every session.
 */
export const SESSION_ROUTES: readonly RouteDef[] = [
  route({
    operationId: 'listSessions', method: 'GET', path: '/sessions', apis: CLIENT, owner, access: 'authenticated',
    tags: ['Session'], summary: 'List sessions', query: listQuery,
    success: { status: 200, schema: ListSessionsEnvelope },
  }),
  route({
    operationId: 'createSession', method: 'POST', path: '/sessions', apis: CLIENT, owner, access: 'authenticated',
    tags: ['Session'], summary: 'Create a session resource', body: SessionCreate,
    success: { status: 201, schema: SessionCreateEnvelope },
  }),
  route({
    operationId: 'detailSession', method: 'GET', path: '/sessions/{id}', apis: CLIENT, owner, access: 'authenticated',
    tags: ['Session'], summary: 'Retrieves a single session',
    success: { status: 200, schema: DetailSessionEnvelope },
  }),
  route({
    operationId: 'deleteSession', method: 'DELETE', path: '/sessions/{id}', apis: ['client', 'management'], owner,
    access: 'authenticated', tags: ['Session'], summary: 'Delete a session',
    success: { status: 200, schema: Empty },
  }),
  route({
    operationId: 'listSessions', method: 'GET', path: '/sessions', apis: MANAGEMENT, owner, access: 'authenticated',
    tags: ['Session'], summary: 'List sessions', query: listQuery,
    success: { status: 200, schema: ListSessionsManagementEnvelope },
  }),
  route({
    operationId: 'detailSession', method: 'GET', path: '/sessions/{id}', apis: MANAGEMENT, owner, access: 'authenticated',
    tags: ['Session'], summary: 'Retrieves a single session',
    success: { status: 200, schema: DetailSessionManagementEnvelope },
  }),
  route({
    operationId: 'detailSessionRoutePath', method: 'GET', path: '/sessions/{id}/route-path', apis: MANAGEMENT, owner,
    access: 'authenticated', tags: ['Session'], summary: "Retrieves a single session's router path",
    success: { status: 200, schema: DetailSessionRoutePathEnvelope },
  }),
  route({
    operationId: 'listServiceUpdates', method: 'GET', path: '/current-api-session/service-updates', apis: CLIENT, owner,
    access: 'authenticated', tags: ['Current API Session', 'Services'],
    summary: 'Returns data indicating whether a client should updates it service list',
    success: { status: 200, schema: ListCurrentApiSessionServiceUpdatesEnvelope },
  }),
];
