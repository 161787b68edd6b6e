import type { ServiceError, handleUnaryCall } from '@grpc/grpc-js';
import { ApiError, toGrpcError } from '@ziti/errors';
import { FabricServiceService, type FabricServiceServer, type RouterState } from '@ziti/proto';
import type { GrpcServiceBinding } from '@ziti/service-kit';
import type { PresenceStore } from '../store/presence.js';

const MAX_IDS = 1000;
/** An identity counts as connected for this long after a router last reported it (OpenZiti's heartbeat is 60 s). */
const IDENTITY_CONNECTION_SECONDS = 150;

function unary<Req, Res>(fn: (req: Req) => Promise<Res>): handleUnaryCall<Req, Res> {
  return (call, callback) => {
    fn(call.request).then(
      (res) => callback(null, res),
      (err: unknown) => callback(toGrpcError(err) as ServiceError),
    );
  };
}

function boundedIds(ids: readonly string[], field: string): string[] {
  if (ids.length > MAX_IDS) throw ApiError.field(field, `at most ${MAX_IDS} ids`, ids.length);
  return ids.filter((id) => typeof id === 'string' && id.length > 0 && id.length <= 256);
}

export interface Disconnector {
  /** Closes the router's channel if this replica holds it; whether it did. */
  disconnect(routerId: string, reason: string): boolean;
  /** Asks the replica holding the router (another one) to close its channel; whether it was connected. */
  disconnectElsewhere(routerId: string, reason: string): Promise<boolean>;
}

/** What another replica may ask of the routers this replica holds. */
export interface LocalRelay {
  /** Sends the Route and answers the RouteResult's headers; undefined when the router is not held here or did not answer. */
  route(routerId: string, route: Uint8Array, timeoutMs: number): Promise<Map<number, Buffer> | undefined>;
  /** Sends one message; false when the router is not held here. */
  send(routerId: string, contentType: number, body: Uint8Array): boolean;
}

/** The content types another replica may relay to a router (Unroute, Fault). */
const RELAYED_TYPES = new Set([1006, 1004]);
const MAX_RELAY_TIMEOUT_MS = 30_000;

/** `ziti.v1.FabricService`: routers' live state, disconnects, identities' router connections. */
export function fabricService(presence: PresenceStore, routers: Disconnector, relay: LocalRelay): GrpcServiceBinding {
  const impl: FabricServiceServer = {
    getRouterStates: unary(async (req) => {
      const ids = boundedIds(req.routerIds, 'routerIds');
      const states = await presence.states(ids);
      return {
        states: states.map(
          (s): RouterState => ({
            routerId: s.routerId,
            connected: s.connected,
            isOnline: s.connected && s.isEdge,
            syncStatus: s.syncStatus,
            hostname: s.hostname,
            supportedProtocols: s.supportedProtocols,
            versionInfo: s.versionInfo,
            listenerAddresses: s.listenerAddresses,
            connectedAt: s.connectedAt ? s.connectedAt.toISOString() : '',
          }),
        ),
      };
    }),
    disconnectRouter: unary(async (req) => {
      const reason = (req.reason || 'disconnected by the controller').slice(0, 200);
      return { wasConnected: routers.disconnect(req.routerId, reason) || (await routers.disconnectElsewhere(req.routerId, reason)) };
    }),
    relayRoute: unary(async (req) => {
      const headers = await relay.route(req.routerId, req.route, Math.min(MAX_RELAY_TIMEOUT_MS, req.timeoutMs || 10_000));
      return { answered: headers !== undefined, headers: headers ? Object.fromEntries(headers) : {} };
    }),
    relayToRouter: unary(async (req) => {
      if (!RELAYED_TYPES.has(req.contentType)) throw ApiError.field('contentType', 'only Unroute (1006) and Fault (1004) are relayed', req.contentType);
      return { delivered: relay.send(req.routerId, req.contentType, req.body) };
    }),
    getIdentityConnections: unary(async (req) => ({
      connectedIdentityIds: await presence.connectedIdentities(boundedIds(req.identityIds, 'identityIds'), IDENTITY_CONNECTION_SECONDS),
    })),
  };
  return { definition: FabricServiceService, implementation: impl as unknown as GrpcServiceBinding['implementation'] };
}
