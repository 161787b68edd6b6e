import { FabricServiceClient, type RelayRouteRequest, type RelayRouteResponse, type RelayToRouterRequest, type RelayToRouterResponse } from '@ziti/proto';
import { type LazyClient, type Unary, grpcClient, lazyGrpcClient } from '@ziti/service-kit';
import type { LocalRelay } from '../grpc/fabric.js';
import { CT } from './ids.js';
import type { RouterChannel } from './port.js';

const u = <Req, Res>(fn: unknown) => fn as Unary<Req, Res>;
/** How long the replica holding a router is remembered (presence rows are read at most this often per router). */
const HOLDER_TTL_MS = 2000;

/**
 * Messages to any router, whichever replica holds its channel: directly when this replica holds
 * it, else through the holder (`FabricService.RelayRoute` / `RelayToRouter`, fabric to fabric over
 * the internal mTLS plane), found by the router's presence row and the holder's relay address.
 */
export class RouterRelay implements LocalRelay {
  private readonly clients = new Map<string, LazyClient<FabricServiceClient>>();
  private readonly holders = new Map<string, { address: string | undefined; at: number }>();

  constructor(
    private readonly d: {
      channelOf(routerId: string): RouterChannel | undefined;
      /** The relay address of the replica holding the router's channel, if any (presence). */
      holderOf(routerId: string): Promise<string | undefined>;
      problem(m: string, err?: unknown): void;
    },
  ) {}

  async route(routerId: string, body: Uint8Array, timeoutMs: number): Promise<Map<number, Buffer> | undefined> {
    const ch = this.d.channelOf(routerId);
    if (!ch) return undefined;
    try {
      return (await ch.request(CT.Route, body, undefined, timeoutMs)).headers;
    } catch {
      return undefined;
    }
  }

  send(routerId: string, contentType: number, body: Uint8Array): boolean {
    return this.d.channelOf(routerId)?.send(contentType, body) ?? false;
  }

  /** A Route to the router wherever it is held: the RouteResult's headers, or undefined (not held, no answer). */
  async routeAnywhere(routerId: string, body: Uint8Array, timeoutMs: number): Promise<Map<number, Buffer> | undefined> {
    if (this.d.channelOf(routerId)) return this.route(routerId, body, timeoutMs);
    const client = await this.clientFor(routerId);
    if (!client) return undefined;
    try {
      const r = await client.call((c) => u<RelayRouteRequest, RelayRouteResponse>(c.relayRoute), { routerId, route: Buffer.from(body), timeoutMs });
      if (!r.answered) return undefined;
      return new Map(Object.entries(r.headers).map(([k, v]) => [Number(k), Buffer.from(v)]));
    } catch (err) {
      this.holders.delete(routerId);
      this.d.problem(`fabric: route to router ${routerId} not relayed`, err);
      return undefined;
    }
  }

  /** An Unroute or a Fault to the router wherever it is held (best effort). */
  sendAnywhere(routerId: string, contentType: number, body: Uint8Array): void {
    if (this.send(routerId, contentType, body)) return;
    void this.clientFor(routerId).then(async (client) => {
      if (!client) return;
      await client.call((c) => u<RelayToRouterRequest, RelayToRouterResponse>(c.relayToRouter), { routerId, contentType, body: Buffer.from(body) });
    }).catch((err) => {
      this.holders.delete(routerId);
      this.d.problem(`fabric: message ${contentType} to router ${routerId} not relayed`, err);
    });
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }

  private async clientFor(routerId: string): Promise<LazyClient<FabricServiceClient> | undefined> {
    const now = Date.now();
    let h = this.holders.get(routerId);
    if (!h || now - h.at > HOLDER_TTL_MS) {
      h = { address: await this.d.holderOf(routerId), at: now };
      this.holders.set(routerId, h);
    }
    if (!h.address) return undefined;
    let c = this.clients.get(h.address);
    if (!c) {
      const address = h.address;
      c = lazyGrpcClient('fabric', address, (a) => grpcClient(FabricServiceClient, a, 'fabric'), 30_000);
      this.clients.set(address, c);
    }
    return c;
  }
}
