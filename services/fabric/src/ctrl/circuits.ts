import { randomUUID } from 'node:crypto';
import { ctrlPb, encodeString, encodeStringMap, encodeU32BytesMap, getStringSlice, getString, getU32BytesMap, getUint32 } from '@ziti/channel';
import type { TerminatorInfo } from '@ziti/proto';
import type { Peers } from '../grpc/peers.js';
import { CT, EdgeErrorCode, H } from './ids.js';
import type { Message, RouterChannel } from './port.js';
import { refusalCode, sendEdgeError } from './terminators.js';
import { SessionRefusal, type SessionValidator } from './tokens.js';

const { Fault, Route, Unroute, CircuitConfirmation } = ctrlPb;

/** How long the routers of a path have to answer a route (OpenZiti's default 10 s). */
const ROUTE_TIMEOUT_MS = 10_000;
/** Peer data keys that carry addresses the controller must not relay (1110–1113). */
const ADDRESS_KEYS = new Set([1110, 1111, 1112, 1113]);
const PUBLIC_KEY = 1003;

export interface Circuit {
  id: string;
  serviceId: string;
  clientId: string;
  identityId: string;
  terminatorId: string;
  instanceId: string;
  path: string[];
  ingressId: string;
  egressId: string;
  createdAt: Date;
  creationTimespanNs: number;
}

export interface CircuitEvents {
  created(c: Circuit): void;
  deleted(c: Circuit): void;
  failed(f: { circuitId: string; clientId: string; serviceId: string; instanceId: string; creationTimespanNs: number; failureCause: string; path?: string[] }): void;
}

/** What circuit creation needs of the rest of the context. */
export interface CircuitDeps {
  peers: Peers;
  sessions: SessionValidator;
  /** The channel of a connected router, if any. */
  channelOf(routerId: string): RouterChannel | undefined;
  /** Whether the service requires end-to-end encryption (the data model's service). */
  encryptionRequired(serviceId: string): boolean;
  events: CircuitEvents;
  /** Where live circuits are listed from (fabric `/circuits`). */
  store: { add(c: Circuit): Promise<void>; remove(id: string): Promise<void> };
  problem(m: string, err?: unknown): void;
}

const RANK: Record<string, number> = { required: 0, default: 1, failed: 2 };

/** OpenZiti's terminator choice: the best precedence, then the lowest cost; ties at random. */
export function chooseTerminator(terminators: readonly TerminatorInfo[], instanceId: string, connected: (routerId: string) => boolean): TerminatorInfo | undefined {
  const usable = terminators.filter((t) => connected(t.routerId) && (!instanceId || t.instanceId === instanceId));
  if (usable.length === 0) return undefined;
  const best = Math.min(...usable.map((t) => RANK[t.precedence] ?? 1));
  const atBest = usable.filter((t) => (RANK[t.precedence] ?? 1) === best);
  const cheapest = Math.min(...atBest.map((t) => t.cost));
  const pick = atBest.filter((t) => t.cost === cheapest);
  return pick[Math.floor(Math.random() * pick.length)];
}

/** The live circuits of this replica and their creation (reference §2.d; one router per path). */
export class Circuits {
  private readonly live = new Map<string, Circuit>();
  /** Each circuit's row write, so that its removal follows it. */
  private readonly listed = new Map<string, Promise<void>>();

  constructor(private readonly d: CircuitDeps) {}

  list(): Circuit[] {
    return [...this.live.values()];
  }

  get(id: string): Circuit | undefined {
    return this.live.get(id);
  }

  /** The handlers of one router's channel: create requests, faults, confirmations. */
  attach(ch: RouterChannel, routerId: string): void {
    ch.handle(CT.CreateCircuitV2Request, (m) => this.create(ch, routerId, m));
    ch.handle(CT.Fault, (m) => {
      const f = Fault.decode(m.body);
      // Ingress (0) and egress (1) faults end the circuit; link and forward faults concern links (several routers).
      if (f.subject === 0 || f.subject === 1) for (const id of f.id.split(' ')) this.remove(id);
    });
    ch.handle(CT.CircuitConfirmation, (m) => {
      const c = CircuitConfirmation.decode(m.body);
      for (const id of c.circuitIds.slice(0, 100_000)) if (!this.live.has(id)) ch.send(CT.Unroute, Unroute.encode({ circuitId: id, now: true }).finish());
    });
    ch.onClose(() => {
      for (const c of this.live.values()) if (c.path.includes(routerId)) this.remove(c.id);
    });
  }

  /** Unroutes a circuit from every router of its path and forgets it. */
  remove(circuitId: string): boolean {
    const c = this.live.get(circuitId);
    if (!c) return false;
    this.live.delete(circuitId);
    const added = this.listed.get(circuitId) ?? Promise.resolve();
    this.listed.delete(circuitId);
    void added.then(() => this.d.store.remove(circuitId)).catch((err) => this.d.problem(`fabric: circuit ${circuitId} not removed from the list`, err));
    for (const r of c.path) this.d.channelOf(r)?.send(CT.Unroute, Unroute.encode({ circuitId, now: true }).finish());
    this.d.events.deleted(c);
    return true;
  }

  private async create(ch: RouterChannel, routerId: string, m: Message): Promise<void> {
    const started = process.hrtime.bigint();
    const spent = () => Number(process.hrtime.bigint() - started);
    const sessionToken = getString(m.headers, H.SessionToken) ?? '';
    const apiSessionToken = getString(m.headers, H.ApiSessionToken) ?? '';
    const instanceId = (getString(m.headers, H.TerminatorInstanceId) ?? '').slice(0, 256);
    let peerData: Map<number, Buffer>;
    try {
      getStringSlice(m.headers, H.Fingerprints);
      peerData = getU32BytesMap(m.headers, H.PeerData) ?? new Map();
    } catch {
      return sendEdgeError(ch, m, 'malformed create circuit request', EdgeErrorCode.Internal);
    }
    if (!sessionToken) return sendEdgeError(ch, m, 'no session token provided in create circuit request', EdgeErrorCode.InvalidSession);
    let session;
    try {
      session = await this.d.sessions.validate({ apiSessionToken, sessionToken, routerId, type: 'Dial' });
    } catch (err) {
      if (!(err instanceof SessionRefusal)) this.d.problem(`fabric: router ${routerId}: circuit request not checked`, err);
      return sendEdgeError(ch, m, err instanceof SessionRefusal ? err.message : 'internal error', refusalCode(err));
    }
    const circuitId = randomUUID();
    const fail = (message: string, code: number) => {
      this.d.events.failed({ circuitId, clientId: session.apiSessionId, serviceId: session.serviceId, instanceId, creationTimespanNs: spent(), failureCause: message });
      sendEdgeError(ch, m, message, code, circuitId);
    };
    if (this.d.encryptionRequired(session.serviceId) && !peerData.has(PUBLIC_KEY)) return fail('encryption required on service, initiator did not send public header', EdgeErrorCode.EncryptionDataMissing);
    let terminator: TerminatorInfo | undefined;
    try {
      terminator = chooseTerminator(await this.d.peers.listServiceTerminators(session.serviceId), instanceId, (r) => this.d.channelOf(r) !== undefined);
    } catch (err) {
      this.d.problem(`fabric: terminators of service ${session.serviceId} not read`, err);
      return fail('internal error', EdgeErrorCode.Internal);
    }
    if (!terminator) return fail(`service ${session.serviceId} has no terminators`, EdgeErrorCode.Internal);
    if (terminator.routerId !== routerId) return fail(`no path from router ${routerId} to the terminator's router ${terminator.routerId}`, EdgeErrorCode.Internal);

    const ingressId = randomUUID();
    const egressId = randomUUID();
    const route = Route.encode({
      circuitId,
      attempt: 0,
      egress: { binding: terminator.binding || 'edge', address: egressId, destination: terminator.address, peerData: Object.fromEntries(peerData) },
      forwards: [
        { srcAddress: ingressId, dstAddress: egressId, dstType: 1 },
        { srcAddress: egressId, dstAddress: ingressId, dstType: 0 },
      ],
      context: undefined,
      timeout: ROUTE_TIMEOUT_MS * 1_000_000,
      tags: { serviceId: session.serviceId, clientId: session.identityId, hostId: terminator.hostId },
    }).finish();
    let result: Message;
    try {
      result = await ch.request(CT.Route, route, undefined, ROUTE_TIMEOUT_MS);
    } catch {
      ch.send(CT.Unroute, Unroute.encode({ circuitId, now: true }).finish());
      return fail('timeout waiting for the route result', EdgeErrorCode.Internal);
    }
    if (!result.headers.has(H.RouteSuccess)) {
      const code = getUint32(result.headers, H.RouteErrorCode) ?? result.headers.get(H.RouteErrorCode)?.[0];
      // Invalid terminator (1): the terminator is gone; policy forgets it.
      if (code === 1) await this.d.peers.removeTerminators({ routerId, terminatorIds: [terminator.id], allEdge: false }).catch(() => undefined);
      ch.send(CT.Unroute, Unroute.encode({ circuitId, now: true }).finish());
      return fail(getString(result.headers, H.RouteError) || 'route failed', EdgeErrorCode.Internal);
    }
    const out = new Map<number, Buffer>();
    for (const [k, v] of Object.entries(terminator.peerData)) out.set(Number(k), Buffer.from(v, 'base64'));
    // The terminator's peer data the route result carries (e.g. the host's public key, 1003): its
    // headers from 1000 on, but the route result's own (1100–1104) and the addresses (1110–1113).
    for (const [k, v] of result.headers) if (k >= 1000 && (k < 1100 || k > 1104) && !ADDRESS_KEYS.has(k)) out.set(k, v);
    const c: Circuit = {
      id: circuitId,
      serviceId: session.serviceId,
      clientId: session.apiSessionId,
      identityId: session.identityId,
      terminatorId: terminator.id,
      instanceId,
      path: [routerId],
      ingressId,
      egressId,
      createdAt: new Date(),
      creationTimespanNs: spent(),
    };
    this.live.set(circuitId, c);
    this.listed.set(circuitId, this.d.store.add(c).catch((err) => this.d.problem(`fabric: circuit ${circuitId} not listed`, err)));
    ch.reply(m, CT.CreateCircuitV2Response, undefined, new Map([
      [H.CircuitIdResp, encodeString(circuitId)],
      [H.AddressResp, encodeString(ingressId)],
      [H.PeerData, encodeU32BytesMap(out)],
      [H.TagsResp, encodeStringMap({ serviceId: session.serviceId, clientId: session.identityId, hostId: terminator.hostId })],
    ]));
    this.d.events.created(c);
  }
}
