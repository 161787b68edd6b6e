import { type TSchema, Type } from '@sinclair/typebox';
import { BaseEntity, EntityRef, Meta, Tags, envelope, nullable } from './common.js';

/**
 * Models of the session context (sessions, their edge routers, route paths, service updates),
 * transcribed from the OpenZiti swagger definitions of the same name (`$id` = definition name).
 * Shared shapes and conventions are in common.ts.
 */

export const DIAL_BIND = ['Dial', 'Bind', 'Invalid'] as const;
export const DialBind = Type.String({ $id: 'dialBind', enum: [...DIAL_BIND] });

export const SessionCreate = Type.Object(
  {
    serviceId: Type.Optional(Type.String()),
    tags: Type.Optional(Tags),
    type: Type.Optional(DialBind),
  },
  { $id: 'sessionCreate' },
);

const stringMap = () => Type.Object({}, { additionalProperties: Type.String() });

export const CommonEdgeRouterProperties = Type.Object(
  {
    appData: Type.Optional(Tags),
    cost: nullable(Type.Integer({ minimum: 0, maximum: 65535 })),
    disabled: Type.Boolean(),
    hostname: Type.String(),
    isOnline: Type.Boolean(),
    name: Type.String(),
    noTraversal: nullable(Type.Boolean()),
    supportedProtocols: stringMap(),
    syncStatus: Type.String(),
  },
  { $id: 'commonEdgeRouterProperties' },
);

export const SessionEdgeRouter = Type.Intersect([CommonEdgeRouterProperties, Type.Object({ urls: stringMap() })], {
  $id: 'sessionEdgeRouter',
});

export const SessionDetail = Type.Intersect(
  [
    BaseEntity,
    Type.Object({
      apiSession: EntityRef,
      apiSessionId: Type.String(),
      edgeRouters: Type.Array(SessionEdgeRouter),
      identityId: Type.String(),
      service: EntityRef,
      serviceId: Type.String(),
      token: Type.String(),
      type: DialBind,
    }),
  ],
  { $id: 'sessionDetail' },
);

export const SessionList = Type.Array(SessionDetail, { $id: 'sessionList' });

export const SessionManagementDetail = Type.Intersect(
  [SessionDetail, Type.Object({ servicePolicies: Type.Optional(Type.Array(EntityRef)) })],
  { $id: 'sessionManagementDetail' },
);

export const SessionManagementList = Type.Array(SessionManagementDetail, { $id: 'sessionManagementList' });

export const SessionRoutePathDetail = Type.Object(
  { routePath: Type.Optional(Type.Array(Type.String())) },
  { $id: 'sessionRoutePathDetail' },
);

export const CurrentApiSessionServiceUpdateList = Type.Object(
  { lastChangeAt: Type.String({ format: 'date-time' }) },
  { $id: 'currentApiSessionServiceUpdateList' },
);

export const SessionCreateEnvelope = Type.Object(
  { data: Type.Optional(SessionDetail), meta: Type.Optional(Meta) },
  { $id: 'sessionCreateEnvelope' },
);
export const ListSessionsEnvelope = envelope('listSessionsEnvelope', SessionList);
export const DetailSessionEnvelope = envelope('detailSessionEnvelope', SessionDetail);
export const ListSessionsManagementEnvelope = envelope('listSessionsManagementEnvelope', SessionManagementList);
export const DetailSessionManagementEnvelope = envelope('detailSessionManagementEnvelope', SessionManagementDetail);
export const DetailSessionRoutePathEnvelope = envelope('detailSessionRoutePathEnvelope', SessionRoutePathDetail);
export const ListCurrentApiSessionServiceUpdatesEnvelope = envelope(
  'listCurrentApiSessionServiceUpdatesEnvelope',
  CurrentApiSessionServiceUpdateList,
);

/** Models of the session context (`$id` = the OpenZiti definition name). Shared shapes are in common.ts. */
export const SESSION_MODELS: Record<string, TSchema> = Object.fromEntries(
  [
    DialBind,
    SessionCreate,
    CommonEdgeRouterProperties,
    SessionEdgeRouter,
    SessionDetail,
    SessionList,
    SessionManagementDetail,
    SessionManagementList,
    SessionRoutePathDetail,
    CurrentApiSessionServiceUpdateList,
    SessionCreateEnvelope,
    ListSessionsEnvelope,
    DetailSessionEnvelope,
    ListSessionsManagementEnvelope,
    DetailSessionManagementEnvelope,
    DetailSessionRoutePathEnvelope,
    ListCurrentApiSessionServiceUpdatesEnvelope,
  ].map((m) => [m.$id as string, m]),
);
