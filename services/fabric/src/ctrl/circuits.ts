import { randomUUID } from 'node:crypto';
import { ctrlPb, encodeString, encodeStringMap, encodeU32BytesMap, getStringSlice, getString, getU32BytesMap, getUint32 } from '@ziti/channel';
import type { TerminatorInfo } from '@ziti/proto';
import type { Peers } from '../grpc/peers.js';
import { CT, EdgeErrorCode, H } from './ids.js';
import type { Message, RouterChannel } from './port.js';
import { type Path, type PathLink, type PathRouter, SMART_REROUTE_ATTEMPT, routeMessages, shortestPath } from './paths.js';
import { refusalCode, sendEdgeError } from './terminators.js';
import { SessionRefusal, type SessionValidator } from './tokens.js';

const { Route, Unroute, CircuitConfirmation } = ctrlPb;

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
  /** The links between the path's routers. */
  links: string[];
  ingressId: string;
  egressId: string;
  createdAt: Date;
  creationTimespanNs: number;
  /** Where the egress router delivers (kept for reroutes). */
  target: { binding: string; address: string; hostId: string };
  tags: Record<string, string>;
}

export interface CircuitEvents {
  created(c: Circuit): void;
  deleted(c: Circuit): void;
  /** A circuit took a new path (a link under it went). */
  updated(c: Circuit): void;
  failed(f: { circuitId: string; clientId: string; serviceId: string; instanceId: string; creationTimespanNs: number; failureCause: string; path?: string[] }): void;
}

/** What circuit creation needs of the rest of the context. */
export interface CircuitDeps {
  peers: Peers;
  sessions: SessionValidator;
  /** Routes and unroutes to any router, whichever replica holds it. */
  relay: {
    routeAnywhere(routerId: string, body: Uint8Array, timeoutMs: number): Promise<Map<number, Buffer> | undefined>;
    sendAnywhere(routerId: string, contentType: number, body: Uint8Array): void;
  };
  /** Faults of circuits another replica owns (they are passed on to it). */
  faultElsewhere(circuitIds: string[]): void;
  /** A router connected to the control plane (any replica), as paths weigh it. */
  routerOf(routerId: string): PathRouter | undefined;
  /** The links paths may cross. */
  usableLinks(): PathLink[];
  /** Whether the service requires end-to-end encryption (the data model's service). */
  encryptionRequired(serviceId: string): boolean;
  events: CircuitEvents;
  /** Where live circuits are listed from (fabric `/circuits`). */
  store: {
    add(c: Circuit): Promise<void>;
    remove(id: string): Promise<void>;
    /** Of these ids, the circuits that exist (any replica's). */
    existing(ids: readonly string[]): Promise<Set<string>>;
    byIds(ids: readonly string[]): Promise<Circuit[]>;
  };
  problem(m: string, err?: unknown): void;
}

const RANK: Record<string, number> = { required: 0, default: 1, failed: 2 };

/**
 * OpenZiti's terminator choice: of the terminators whose router a path reaches, the best
 * precedence, then the lowest cost (the terminator's plus its path's); ties at random.
 */
export function chooseTerminator(
  terminators: readonly TerminatorInfo[],
  instanceId: string,
  pathTo: (routerId: string) => Path | undefined,
): { terminator: TerminatorInfo; path: Path } | undefined {
  const paths = new Map<string, Path | undefined>();
  const usable: { terminator: TerminatorInfo; path: Path }[] = [];
  for (const t of terminators) {
    if (instanceId && t.instanceId !== instanceId) continue;
    if (!paths.has(t.routerId)) paths.set(t.routerId, pathTo(t.routerId));
    const path = paths.get(t.routerId);
    if (path) usable.push({ terminator: t, path });
  }
  if (usable.length === 0) return undefined;
  const rank = (t: TerminatorInfo) => RANK[t.precedence] ?? 1;
  const best = Math.min(...usable.map((u) => rank(u.terminator)));
  const atBest = usable.filter((u) => rank(u.terminator) === best);
  const cost = (u: { terminator: TerminatorInfo; path: Path }) => u.terminator.cost + u.path.cost;
  const cheapest = Math.min(...atBest.map(cost));
  const pick = atBest.filter((u) => cost(u) === cheapest);
  return pick[Math.floor(Math.random() * pick.length)];
}

type RouteOutcome = { ok: true; results: Map<number, Buffer>[] } | { ok: false; error: string; code: number | undefined; succeeded: string[] };

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

  /** An ingress (0) or egress (1) fault ends the circuits it names (those of other replicas through them). */
  faulted(f: ctrlPb.Fault): void {
    if (f.subject !== ctrlPb.FaultSubject.IngressFault && f.subject !== ctrlPb.FaultSubject.EgressFault) return;
    const elsewhere = f.id.split(' ').slice(0, 10_000).filter((id) => id && !this.remove(id));
    if (elsewhere.length > 0) this.d.faultElsewhere(elsewhere);
  }

  /** Circuits of a replica that is gone, now this replica's (from their rows). */
  async adopt(ids: readonly string[]): Promise<void> {
    for (const c of await this.d.store.byIds(ids)) if (!this.live.has(c.id)) this.live.set(c.id, c);
  }

  /**
   * A router was deleted: the circuits it begins or ends go, since no fault will come for them
   * (OpenZiti `routerDeleted`). A router that only disconnects keeps its circuits: routers go on
   * forwarding while the control plane is away.
   */
  routerDeleted(routerId: string): void {
    for (const c of [...this.live.values()]) if (c.path[0] === routerId || c.path[c.path.length - 1] === routerId) this.remove(c.id);
  }

  /** A link went: each circuit crossing it takes a new path between its ends, or ends (OpenZiti `rerouteLink`). */
  linkGone(linkId: string): void {
    for (const c of [...this.live.values()]) if (c.links.includes(linkId)) void this.reroute(c);
  }

  /** The handlers of one router's channel: create requests and confirmations (faults come through `faulted`). */
  attach(ch: RouterChannel, routerId: string): void {
    ch.handle(CT.CreateCircuitV2Request, (m) => this.create(ch, routerId, m));
    // The circuits a router holds that no replica knows are unrouted (OpenZiti's confirmation).
    ch.handle(CT.CircuitConfirmation, async (m) => {
      const ids = CircuitConfirmation.decode(m.body).circuitIds.slice(0, 100_000).filter((id) => !this.live.has(id));
      if (ids.length === 0) return;
      const known = await this.d.store.existing(ids).catch(() => undefined);
      if (!known) return;
      for (const id of ids) if (!known.has(id)) ch.send(CT.Unroute, Unroute.encode({ circuitId: id, now: true }).finish());
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
    this.unroute(circuitId, c.path);
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
    let terminators: TerminatorInfo[];
    try {
      terminators = await this.d.peers.listServiceTerminators(session.serviceId);
    } catch (err) {
      this.d.problem(`fabric: terminators of service ${session.serviceId} not read`, err);
      return fail('internal error', EdgeErrorCode.Internal);
    }
    if (terminators.length === 0) return fail(`service ${session.serviceId} has no terminators`, EdgeErrorCode.Internal);
    const links = this.d.usableLinks();
    const chosen = chooseTerminator(terminators, instanceId, (to) => shortestPath(routerId, to, links, (id) => this.d.routerOf(id)));
    if (!chosen) {
      const online = terminators.some((t) => this.d.routerOf(t.routerId) && (!instanceId || t.instanceId === instanceId));
      return fail(online ? `can't route from ${routerId} to the routers of service ${session.serviceId}'s terminators` : `service ${session.serviceId} has no online terminators`, EdgeErrorCode.Internal);
    }
    const { terminator, path } = chosen;

    const ingressId = randomUUID();
    const egressId = randomUUID();
    const tags = { serviceId: session.serviceId, clientId: session.identityId, hostId: terminator.hostId };
    const target = { binding: terminator.binding || 'edge', address: terminator.address, hostId: terminator.hostId };
    const outcome = await this.route(circuitId, path, { ingressId, egressId, attempt: 0, tags }, { ...target, peerData: Object.fromEntries(peerData) });
    if (!outcome.ok) {
      // Invalid terminator (1): the terminator is gone; policy forgets it.
      if (outcome.code === 1) await this.d.peers.removeTerminators({ routerId: terminator.routerId, terminatorIds: [terminator.id], allEdge: false }).catch(() => undefined);
      this.unroute(circuitId, path.routers);
      return fail(outcome.error, EdgeErrorCode.Internal);
    }
    const resultHeaders = outcome.results[outcome.results.length - 1]!;
    const out = new Map<number, Buffer>();
    for (const [k, v] of Object.entries(terminator.peerData)) out.set(Number(k), Buffer.from(v, 'base64'));
    // The terminator's peer data the route result carries (e.g. the host's public key, 1003): its
    // headers from 1000 on, but the route result's own (1100–1104) and the addresses (1110–1113).
    for (const [k, v] of resultHeaders) if (k >= 1000 && (k < 1100 || k > 1104) && !ADDRESS_KEYS.has(k)) out.set(k, v);
    const c: Circuit = {
      id: circuitId,
      serviceId: session.serviceId,
      clientId: session.apiSessionId,
      identityId: session.identityId,
      terminatorId: terminator.id,
      instanceId,
      path: path.routers,
      links: path.links,
      ingressId,
      egressId,
      createdAt: new Date(),
      creationTimespanNs: spent(),
      target,
      tags,
    };
    this.live.set(circuitId, c);
    this.listed.set(circuitId, this.d.store.add(c).catch((err) => this.d.problem(`fabric: circuit ${circuitId} not listed`, err)));
    ch.reply(m, CT.CreateCircuitV2Response, undefined, new Map([
      [H.CircuitIdResp, encodeString(circuitId)],
      [H.AddressResp, encodeString(ingressId)],
      [H.PeerData, encodeU32BytesMap(out)],
      [H.TagsResp, encodeStringMap(tags)],
    ]));
    this.d.events.created(c);
  }

  /**
   * Sends each router of the path its Route at once and awaits every RouteResult (10 s). The
   * egress router's result comes last in `results` (its headers carry the terminator's peer data).
   */
  private async route(
    circuitId: string,
    path: Pick<Path, 'routers' | 'links'>,
    ids: { ingressId: string; egressId: string; attempt: number; tags: Record<string, string> },
    target: { binding: string; address: string; peerData: Record<number, Buffer> },
  ): Promise<RouteOutcome> {
    const msgs = routeMessages(path, { circuitId, ...ids, timeoutNs: ROUTE_TIMEOUT_MS * 1_000_000 }, { binding: target.binding, destination: target.address, peerData: target.peerData });
    const answers = await Promise.all(msgs.map(async (m) => ({ routerId: m.routerId, headers: await this.d.relay.routeAnywhere(m.routerId, Route.encode(m.route).finish(), ROUTE_TIMEOUT_MS) })));
    const succeeded = answers.filter((a) => a.headers?.has(H.RouteSuccess)).map((a) => a.routerId);
    const failed = answers.find((a) => !a.headers?.has(H.RouteSuccess));
    if (!failed) return { ok: true, results: answers.map((a) => a.headers!) };
    if (!failed.headers) return { ok: false, error: 'timeout waiting for the route result', code: undefined, succeeded };
    const code = getUint32(failed.headers, H.RouteErrorCode) ?? failed.headers.get(H.RouteErrorCode)?.[0];
    return { ok: false, error: getString(failed.headers, H.RouteError) || 'route failed', code, succeeded };
  }

  private unroute(circuitId: string, routers: readonly string[]): void {
    const body = Unroute.encode({ circuitId, now: true }).finish();
    for (const r of routers) this.d.relay.sendAnywhere(r, CT.Unroute, body);
  }

  /** A new path between the circuit's ends, routed with OpenZiti's reroute attempt; or the circuit ends. */
  private async reroute(c: Circuit): Promise<void> {
    const from = c.path[0]!;
    const to = c.path[c.path.length - 1]!;
    const path = shortestPath(from, to, this.d.usableLinks(), (id) => this.d.routerOf(id));
    if (!path) return void this.remove(c.id);
    const outcome = await this.route(c.id, path, { ingressId: c.ingressId, egressId: c.egressId, attempt: SMART_REROUTE_ATTEMPT, tags: c.tags }, { ...c.target, peerData: {} });
    if (!this.live.has(c.id)) return;
    if (!outcome.ok) return void this.remove(c.id);
    const left = c.path.filter((r) => !path.routers.includes(r));
    c.path = path.routers;
    c.links = path.links;
    this.unroute(c.id, left);
    this.listed.set(c.id, (this.listed.get(c.id) ?? Promise.resolve()).then(() => this.d.store.add(c)).catch((err) => this.d.problem(`fabric: circuit ${c.id} not listed`, err)));
    this.d.events.updated(c);
  }
}
