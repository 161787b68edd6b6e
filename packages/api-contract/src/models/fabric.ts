import { Type } from '@sinclair/typebox';
import { EntityRef, Links, Meta, Tags } from './common.js';

/**
 * The fabric API's list models (openziti/ziti `controller/specs/swagger.yml`, base `/fabric/v1`):
 * what the admin console reads. Their ids carry a `fabric` prefix: the fabric API has definitions
 * of the same name as the Edge management API's (`routerDetail`, `terminatorDetail`) with other
 * fields, and the fabric models are not part of the Edge swagger documents.
 */

const fabricBase = {
  _links: Links,
  createdAt: Type.String({ format: 'date-time' }),
  id: Type.String(),
  tags: Tags,
  updatedAt: Type.String({ format: 'date-time' }),
};

const fabricEnvelope = (id: string, item: ReturnType<typeof Type.Object>) =>
  Type.Object({ data: Type.Array(item), meta: Meta }, { $id: id });

const VersionInfo = Type.Object({
  arch: Type.Optional(Type.String()),
  buildDate: Type.Optional(Type.String()),
  os: Type.Optional(Type.String()),
  revision: Type.Optional(Type.String()),
  version: Type.Optional(Type.String()),
});

/** `routerDetail` of the fabric API: every router (edge, transit, fabric), `connected` while it is online. */
export const FabricRouterDetail = Type.Object(
  {
    ...fabricBase,
    configs: Type.Union([Type.Array(Type.String()), Type.Null()]),
    connected: Type.Boolean(),
    cost: Type.Integer({ minimum: 0, maximum: 65535 }),
    ctrlChanListeners: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
    disabled: Type.Boolean(),
    fingerprint: Type.Union([Type.String(), Type.Null()]),
    interfaces: Type.Union([Type.Array(Type.Object({})), Type.Null()]),
    listenerAddresses: Type.Union([Type.Array(Type.Object({ address: Type.String(), protocol: Type.String() })), Type.Null()]),
    name: Type.String(),
    noTraversal: Type.Boolean(),
    versionInfo: Type.Optional(VersionInfo),
  },
  { $id: 'fabricRouterDetail', additionalProperties: false },
);

/** `terminatorDetail` of the fabric API (`instanceId` and `hostId` where the Edge API has `identity`). */
export const FabricTerminatorDetail = Type.Object(
  {
    ...fabricBase,
    address: Type.String(),
    binding: Type.String(),
    cost: Type.Integer({ minimum: 0, maximum: 65535 }),
    dynamicCost: Type.Integer({ minimum: 0, maximum: 65535 }),
    hostId: Type.String(),
    instanceId: Type.String(),
    precedence: Type.Union([Type.Literal('default'), Type.Literal('required'), Type.Literal('failed')]),
    router: EntityRef,
    routerId: Type.String(),
    service: EntityRef,
    serviceId: Type.String(),
  },
  { $id: 'fabricTerminatorDetail', additionalProperties: false },
);

/** `linkDetail`: a router-to-router link, as its dialing router reported it. */
export const FabricLinkDetail = Type.Object(
  {
    connections: Type.Optional(Type.Array(Type.Object({ dest: Type.Optional(Type.String()), source: Type.Optional(Type.String()), type: Type.Optional(Type.String()) }))),
    cost: Type.Integer(),
    destLatency: Type.Integer(),
    destRouter: EntityRef,
    down: Type.Boolean(),
    id: Type.String(),
    iteration: Type.Integer(),
    protocol: Type.String(),
    sourceLatency: Type.Integer(),
    sourceRouter: EntityRef,
    state: Type.String(),
    staticCost: Type.Integer(),
  },
  { $id: 'fabricLinkDetail', additionalProperties: false },
);

/** `circuitDetail`: a live circuit through the fabric. */
export const FabricCircuitDetail = Type.Object(
  {
    ...fabricBase,
    clientId: Type.Optional(Type.String()),
    path: Type.Object({ links: Type.Optional(Type.Array(EntityRef)), nodes: Type.Optional(Type.Array(EntityRef)) }),
    service: EntityRef,
    terminator: EntityRef,
  },
  { $id: 'fabricCircuitDetail', additionalProperties: false },
);

export const FabricListRoutersEnvelope = fabricEnvelope('fabricListRoutersEnvelope', FabricRouterDetail);
export const FabricListTerminatorsEnvelope = fabricEnvelope('fabricListTerminatorsEnvelope', FabricTerminatorDetail);
export const FabricListLinksEnvelope = fabricEnvelope('fabricListLinksEnvelope', FabricLinkDetail);
export const FabricListCircuitsEnvelope = fabricEnvelope('fabricListCircuitsEnvelope', FabricCircuitDetail);

export type FabricEnvelope = typeof FabricListRoutersEnvelope | typeof FabricListTerminatorsEnvelope | typeof FabricListLinksEnvelope | typeof FabricListCircuitsEnvelope;
