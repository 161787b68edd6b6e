import { Metadata } from '@grpc/grpc-js';
import { FabricServiceClient, type DisconnectRouterResponse, type GetRouterStatesResponse, type RouterState } from '@ziti/proto';
import { grpcClient } from '@ziti/service-kit';
import type { RouterLiveState } from '../domain/model.js';
import type { RouterStates } from '../domain/ports.js';
import { type AddressSource, Optional } from './clients.js';

/** FabricService answers at most this many ids per GetRouterStates. */
const MAX_IDS = 1000;

/** A router state as fabric reports it, in the shape the views render. */
export function liveState(s: RouterState): RouterLiveState {
  const v = s.versionInfo;
  return {
    connected: s.connected,
    isOnline: s.isOnline,
    syncStatus: s.syncStatus || (s.isOnline ? 'SYNC_DONE' : 'SYNC_UNKNOWN'),
    hostname: s.hostname,
    supportedProtocols: { ...s.supportedProtocols },
    versionInfo: s.connected && v ? { version: v.version, revision: v.revision, buildDate: v.buildDate, os: v.os, arch: v.arch } : null,
    listenerAddresses: s.connected ? [...s.listenerAddresses] : [],
  };
}

/**
 * Routers' live state and disconnects through the fabric context (`FabricService.GetRouterStates`,
 * `DisconnectRouter`). No address (fabric not started), an unreachable fabric, UNIMPLEMENTED (not
 * asked again for 30 s) or any other failure: no states (the routers render offline) and a skipped
 * disconnect, logged; the request that needed them goes on.
 */
export function fabricRouterStates(source: AddressSource, log: (m: string) => void): RouterStates & { close(): void } {
  const rpc = new Optional(source, (a) => grpcClient(FabricServiceClient, a, 'policy'), log);
  const fetch = (routerIds: string[]) =>
    rpc.call<GetRouterStatesResponse>('GetRouterStates', (c, deadline, cb) => c.getRouterStates({ routerIds }, new Metadata(), { deadline }, cb)).catch((err: unknown) => {
      log(`policy: GetRouterStates failed: ${String(err)}`);
      return null;
    });
  return {
    async get(ids) {
      const out = new Map<string, RouterLiveState>();
      const unique = [...new Set(ids)];
      if (unique.length === 0) return out;
      const chunks: string[][] = [];
      for (let i = 0; i < unique.length; i += MAX_IDS) chunks.push(unique.slice(i, i + MAX_IDS));
      for (const res of await Promise.all(chunks.map(fetch))) {
        for (const s of res?.states ?? []) if (s.routerId) out.set(s.routerId, liveState(s));
      }
      return out;
    },
    async disconnect(routerId, reason) {
      await rpc
        .call<DisconnectRouterResponse>('DisconnectRouter', (c, deadline, cb) => c.disconnectRouter({ routerId, reason }, new Metadata(), { deadline }, cb))
        .catch((err: unknown) => log(`policy: DisconnectRouter(${routerId}, ${reason}) failed: ${String(err)}`));
    },
    close: () => rpc.close(),
  };
}
