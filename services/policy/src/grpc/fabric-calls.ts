import type { ServiceError } from '@grpc/grpc-js';
import { formatTimestamp, toGrpcError } from '@ziti/errors';
import type { EdgeRouterRef, PolicyServiceServer, RouterInfo, TerminatorInfo } from '@ziti/proto';
import { OFFLINE_ROUTER, type Terminator } from '../domain/model.js';
import type { PairAccess, RouterStates } from '../domain/ports.js';
import type { TerminatorManager } from '../domain/terminator-manager.js';

const unary =
  <Req, Res>(fn: (req: Req) => Promise<Res>) =>
  (call: { request: Req }, callback: (err: Partial<ServiceError> | null, res?: Res) => void) => {
    fn(call.request).then(
      (res) => callback(null, res),
      (err: unknown) => callback(toGrpcError(err)),
    );
  };

const ts = (d: Date) => (d instanceof Date ? d.toISOString() : formatTimestamp(d));

export function terminatorInfo(t: Terminator): TerminatorInfo {
  return {
    id: t.id,
    serviceId: t.serviceId,
    routerId: t.routerId,
    binding: t.binding,
    address: t.address,
    instanceId: t.identity,
    hostId: t.hostId,
    cost: t.cost,
    precedence: t.precedence,
    peerData: { ...t.peerData },
    isSystem: t.isSystem,
    createdAt: ts(t.createdAt),
  };
}

type FabricCalls = Pick<PolicyServiceServer, 'getRouter' | 'upsertEdgeTerminator' | 'updateTerminator' | 'removeTerminators' | 'listServiceTerminators'>;

/** The `PolicyService` calls of the router control plane (fabric): routers as they connect, and the terminators of SDK binds. */
export function fabricCalls(terminators: TerminatorManager): FabricCalls {
  return {
    getRouter: unary(async (r): Promise<RouterInfo> => {
      const router = await terminators.router(r.routerId);
      return {
        id: router.id,
        name: router.name,
        kind: router.kind,
        disabled: router.disabled,
        cost: router.cost,
        noTraversal: router.noTraversal,
        isTunnelerEnabled: router.isTunnelerEnabled,
      };
    }),
    upsertEdgeTerminator: unary(async (r) =>
      terminatorInfo(
        await terminators.upsertEdge({
          id: r.id,
          serviceId: r.serviceId,
          routerId: r.routerId,
          hostId: r.hostId,
          instanceId: r.instanceId,
          instanceSecret: r.instanceSecret,
          cost: r.cost,
          precedence: r.precedence,
          peerData: r.peerData,
        }),
      ),
    ),
    updateTerminator: unary(async (r) =>
      terminatorInfo(
        await terminators.update(r.id, r.routerId, {
          ...(r.updateCost ? { cost: r.cost } : {}),
          ...(r.updatePrecedence ? { precedence: r.precedence } : {}),
        }),
      ),
    ),
    removeTerminators: unary(async (r) => ({ removedIds: await terminators.remove(r.routerId, r.terminatorIds, r.allEdge) })),
    listServiceTerminators: unary(async (r) => ({ terminators: (await terminators.ofService(r.serviceId)).map(terminatorInfo) })),
  };
}

/** `ServiceAccess.edgeRouters` with each router's live state (one GetRouterStates call); offline when fabric does not report it. */
/** The edge routers as policy stores them, without asking fabric for their live state (offline as far as this answer says). */
export function storedEdgeRouterRefs(routers: PairAccess['edgeRouters']): EdgeRouterRef[] {
  return routers.map((er) => ({ id: er.id, name: er.name, hostname: '', isOnline: false, urls: {}, supportedProtocols: {}, syncStatus: '', cost: er.cost, noTraversal: er.noTraversal, disabled: er.disabled }));
}

export async function liveEdgeRouterRefs(states: RouterStates, routers: PairAccess['edgeRouters']): Promise<EdgeRouterRef[]> {
  const live = await states.get(routers.map((r) => r.id));
  return routers.map((er) => {
    const s = live.get(er.id) ?? OFFLINE_ROUTER;
    return {
      id: er.id,
      name: er.name,
      hostname: s.hostname,
      isOnline: s.isOnline,
      urls: { ...s.supportedProtocols },
      supportedProtocols: { ...s.supportedProtocols },
      syncStatus: s.syncStatus,
      cost: er.cost,
      noTraversal: er.noTraversal,
      disabled: er.disabled,
    };
  });
}
