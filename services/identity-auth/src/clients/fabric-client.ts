import { Metadata, status } from '@grpc/grpc-js';
import { FabricServiceClient, type GetIdentityConnectionsResponse } from '@ziti/proto';
import { grpcClient } from '@ziti/service-kit';
import type { FabricContext } from '../domain/identity-extras.js';

/** The fabric context's gRPC address, or a function giving it once known (all-in-one start). */
export type FabricAddress = string | (() => string | undefined) | undefined;

/** An identity view waits at most this long for the router connections. */
const DEADLINE_MS = 1500;
/** `GetIdentityConnections` takes at most this many ids per call. */
const MAX_IDS_PER_CALL = 1000;

/**
 * `FabricContext` over `ziti.v1.FabricService` (`hasEdgeRouterConnection`). Without an address,
 * or when fabric is unreachable, does not serve the call, or fails, the answer is "none connected":
 * an identity view never fails for it. Failures other than UNAVAILABLE and UNIMPLEMENTED are logged.
 */
export function grpcFabricContext(address: FabricAddress, log: (m: string) => void): FabricContext & { close(): void } {
  let client: FabricServiceClient | undefined;
  let clientAddress: string | undefined;
  const current = (): FabricServiceClient | undefined => {
    const addr = typeof address === 'function' ? address() : address;
    if (!addr) return undefined;
    if (!client || clientAddress !== addr) {
      client?.close();
      client = grpcClient(FabricServiceClient, addr, 'identity-auth');
      clientAddress = addr;
    }
    return client;
  };
  const ask = (c: FabricServiceClient, identityIds: string[]) =>
    new Promise<string[]>((resolve) => {
      c.getIdentityConnections({ identityIds }, new Metadata(), { deadline: Date.now() + DEADLINE_MS }, (err, res?: GetIdentityConnectionsResponse) => {
        if (err && err.code !== status.UNIMPLEMENTED && err.code !== status.UNAVAILABLE) {
          log(`identity-auth: GetIdentityConnections failed, identities show no edge router connection: ${err.code} ${err.details}`);
        }
        resolve(err ? [] : (res?.connectedIdentityIds ?? []));
      });
    });

  return {
    async connectedIdentities(identityIds: readonly string[]): Promise<Set<string>> {
      const ids = [...new Set(identityIds)];
      const c = ids.length > 0 ? current() : undefined;
      if (!c) return new Set();
      const chunks: string[][] = [];
      for (let i = 0; i < ids.length; i += MAX_IDS_PER_CALL) chunks.push(ids.slice(i, i + MAX_IDS_PER_CALL));
      const answers = await Promise.all(chunks.map((chunk) => ask(c, chunk)));
      const asked = new Set(ids);
      return new Set(answers.flat().filter((id) => asked.has(id)));
    },
    close() {
      client?.close();
      client = undefined;
    },
  };
}
