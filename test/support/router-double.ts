import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import tls from 'node:tls';
import {
  CTRL_ALPN,
  Channel,
  ContentType,
  CtrlContentType,
  CtrlMsgHeader,
  type DialedHello,
  EdgeContentType,
  EdgeHeader,
  type Message,
  ctrlPb,
  dialHello,
  edgeCtrlPb,
  encodeBool,
  encodeByte,
  encodeStringSlice,
  encodeU32BytesMap,
  encodeUint32,
  encodeUint64,
  getBool,
  getString,
  getStringMap,
  getU32BytesMap,
  getUint32,
  metricsPb,
  newMessage,
} from '@ziti/channel';
import type { RouterIdentity } from './router-enroll.js';

/**
 * A router double: what an OpenZiti v2.0.3 edge router does on its control channel, in
 * TypeScript on @ziti/channel. It dials the ctrl endpoint over TLS (ALPN `ziti-ctrl`, its enrolled
 * client certificate), sends the 2.x hello, answers heartbeats and ServerHello, subscribes to the
 * router data model, records what the controller pushes, answers Route, and sends what routers
 * send on behalf of SDKs. `router-hostile.ts` has the misbehaving variants.
 */

export interface EdgeListener {
  /** `host:port` advertised to SDKs (ClientHello `listeners[].advertise`). */
  advertise: string;
  protocol?: string;
}

export interface RouterDoubleOptions {
  identity: Pick<RouterIdentity, 'routerId' | 'keyPem' | 'certPem' | 'caPem'>;
  host: string;
  port: number;
  /** TLS server name to verify (default: host unless it is an IP). */
  servername?: string;
  /** Hello header 4. */
  version?: string;
  /** ClientHello hostname. Default `localhost`. */
  hostname?: string;
  edgeListeners?: EdgeListener[];
  /** Link listeners for hello header 1000 (omitted when empty). */
  linkListeners?: ctrlPb.Listener[];
  /** Extra hello headers (override the defaults). */
  helloHeaders?: Iterable<readonly [number, Buffer]>;
  /** Answer ServerHello with ClientHello. Default true. */
  answerServerHello?: boolean;
  /** After ClientHello, subscribe to the data model (20505). Default true. */
  subscribe?: boolean;
  /** RDM index sent in ClientHello (header 1025) and in the subscription. Default 0. */
  rdmIndex?: number;
  /** Timeline of the subscription after ClientHello (a reconnecting router's, from its last DataState). Default none. */
  rdmTimelineId?: string;
  heartbeatIntervalMs?: number;
  unresponsiveMs?: number;
}

/** How the double answers a Route: success (with extra peer-data headers), a failure code, or no answer. */
export type RouteAnswer = { success: true; peerData?: Map<number, Buffer> } | { success: false; errorCode: number; error: string } | 'ignore';

export type CircuitOutcome =
  | { ok: true; circuitId: string; address: string; peerData: Map<number, Buffer>; tags: Map<string, string>; message: Message }
  | { ok: false; errorMessage: string; errorCode: number | undefined; circuitId: string | undefined; message: Message };

export interface CreateCircuitInput {
  sessionToken: string;
  apiSessionToken?: string;
  fingerprints?: string[];
  terminatorInstanceId?: string;
  peerData?: Map<number, Buffer>;
  timeoutMs?: number;
}

export interface RouterDataModelState {
  subscriptionId: string;
  dataStates: edgeCtrlPb.DataState[];
  changeSets: edgeCtrlPb.DataState_ChangeSet[];
  currentIndexes: bigint[];
}

const RDM_TYPES: ReadonlySet<number> = new Set([EdgeContentType.DataState, EdgeContentType.DataStateChangeSet, EdgeContentType.CurrentIndexMessage]);

function splitHostPort(advertise: string): { hostname: string; port: number } {
  const i = advertise.lastIndexOf(':');
  return { hostname: advertise.slice(0, i), port: Number(advertise.slice(i + 1)) };
}

export class RouterDouble {
  /** Every message received, in order (heartbeats excluded). */
  readonly received: Message[] = [];
  /** When each received message arrived (`performance.now()`, before its handler ran). */
  readonly receivedAt = new WeakMap<Message, number>();
  readonly rdm: RouterDataModelState = { subscriptionId: randomUUID(), dataStates: [], changeSets: [], currentIndexes: [] };
  /** Legacy API sessions the controller pushed, by token (ApiSessionAdded/Updated, minus Removed). */
  readonly apiSessions = new Map<string, edgeCtrlPb.ApiSession>();
  /** ApiSessionAdded full-state messages with their headers 1013/1014. */
  readonly apiSessionSyncs: { added: edgeCtrlPb.ApiSessionAdded; strategy?: string; state?: string }[] = [];
  readonly routes: ctrlPb.Route[] = [];
  readonly unroutes: ctrlPb.Unroute[] = [];
  readonly peerStateChanges: ctrlPb.PeerStateChanges[] = [];
  /** Faults the controller sent (a link fault forwarded from the link's other router). */
  readonly faults: ctrlPb.Fault[] = [];
  routeAnswer: (route: ctrlPb.Route) => RouteAnswer = () => ({ success: true });
  private readonly consumed = new Set<Message>();
  private readonly waiters: (() => void)[] = [];

  private constructor(
    readonly channel: Channel,
    readonly hello: DialedHello,
    readonly socket: tls.TLSSocket,
    private readonly o: RouterDoubleOptions,
  ) {
    const record = (m: Message) => {
      this.receivedAt.set(m, performance.now());
      this.received.push(m);
      this.waiters.splice(0).forEach((w) => w());
    };
    const on = (type: number, f: (m: Message) => void | Promise<void>) =>
      channel.handle(type, async (m) => {
        record(m);
        await f(m);
      });
    on(EdgeContentType.ServerHello, (m) => (o.answerServerHello ?? true ? this.sendClientHello(m) : undefined));
    on(EdgeContentType.DataState, (m) => void this.rdm.dataStates.push(edgeCtrlPb.DataState.decode(m.body)));
    on(EdgeContentType.DataStateChangeSet, (m) => void this.rdm.changeSets.push(edgeCtrlPb.DataState_ChangeSet.decode(m.body)));
    on(EdgeContentType.CurrentIndexMessage, (m) => {
      const idx = m.headers.get(EdgeHeader.RouterDataModelIndex);
      if (idx?.length === 8) this.rdm.currentIndexes.push(idx.readBigUInt64LE(0));
    });
    on(EdgeContentType.ApiSessionAdded, (m) => {
      const added = edgeCtrlPb.ApiSessionAdded.decode(m.body);
      if (added.isFullState) {
        this.apiSessionSyncs.push({ added, strategy: getString(m.headers, EdgeHeader.SyncStrategyType), state: getString(m.headers, EdgeHeader.SyncStrategyState) });
      }
      added.apiSessions.forEach((s) => this.apiSessions.set(s.token, s));
    });
    on(EdgeContentType.ApiSessionUpdated, (m) => edgeCtrlPb.ApiSessionUpdated.decode(m.body).apiSessions.forEach((s) => this.apiSessions.set(s.token, s)));
    on(EdgeContentType.ApiSessionRemoved, (m) => {
      const removed = edgeCtrlPb.ApiSessionRemoved.decode(m.body);
      removed.tokens.forEach((t) => this.apiSessions.delete(t));
      for (const [t, s] of this.apiSessions) if (removed.ids.includes(s.id)) this.apiSessions.delete(t);
    });
    on(CtrlContentType.Route, (m) => this.answerRoute(m));
    on(CtrlContentType.Unroute, (m) => void this.unroutes.push(ctrlPb.Unroute.decode(m.body)));
    on(CtrlContentType.PeerStateChange, (m) => void this.peerStateChanges.push(ctrlPb.PeerStateChanges.decode(m.body)));
    on(CtrlContentType.Fault, (m) => void this.faults.push(ctrlPb.Fault.decode(m.body)));
    for (const t of [
      ContentType.Result,
      EdgeContentType.Error,
      EdgeContentType.SessionRemoved,
      EdgeContentType.CreateTerminatorV2Response,
      EdgeContentType.CreateCircuitV2Response,
      EdgeContentType.UpdateTerminatorResponse,
      EdgeContentType.RemoveTerminatorResponse,
      CtrlContentType.ValidateTerminatorsV2Request,
      CtrlContentType.UpdateCtrlAddresses,
      CtrlContentType.UpdateClusterLeader,
      CtrlContentType.Settings,
    ]) {
      on(t, () => undefined);
    }
  }

  /** Dials the controller, sends the hello and waits for its Result (rejects with HelloError if refused). */
  static async connect(o: RouterDoubleOptions): Promise<RouterDouble> {
    const socket = tls.connect({
      host: o.host,
      port: o.port,
      servername: o.servername ?? (/^[\d.]+$|:/.test(o.host) ? undefined : o.host),
      ca: o.identity.caPem,
      cert: o.identity.certPem,
      key: o.identity.keyPem,
      ALPNProtocols: [CTRL_ALPN],
    });
    await once(socket, 'secureConnect');
    const listeners = o.linkListeners?.length ? Buffer.from(ctrlPb.Listeners.encode({ listeners: o.linkListeners }).finish()) : undefined;
    const hello = await dialHello(socket, { routerId: o.identity.routerId, version: o.version, listeners, headers: o.helloHeaders });
    const channel = new Channel(socket, {
      label: `router-double ${o.identity.routerId}`,
      initialBytes: hello.remainder,
      heartbeatIntervalMs: o.heartbeatIntervalMs ?? 10_000,
      unresponsiveMs: o.unresponsiveMs ?? 60_000,
    });
    return new RouterDouble(channel, hello, socket, o);
  }

  get routerId(): string {
    return this.o.identity.routerId;
  }

  /**
   * The first received message of `contentType` matching `predicate` that no earlier `waitFor`
   * returned, including messages that arrived before the call.
   */
  async waitFor(contentType: number, predicate: (m: Message) => boolean = () => true, timeoutMs = 10_000): Promise<Message> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.received.find((m) => m.contentType === contentType && !this.consumed.has(m) && predicate(m));
      if (hit) {
        this.consumed.add(hit);
        return hit;
      }
      const left = deadline - Date.now();
      if (left <= 0 || this.channel.closed) {
        throw new Error(`router double ${this.routerId}: no message of type ${contentType} within ${timeoutMs} ms${this.channel.closed ? ` (closed: ${this.channel.closeReason})` : ''}`);
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 250));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** Sends SubscribeToDataModelRequest 20505 (fire-and-forget, as routers do). */
  async subscribe(o: { currentIndex?: number; timelineId?: string; durationSeconds?: number; renew?: boolean } = {}): Promise<void> {
    const req = edgeCtrlPb.SubscribeToDataModelRequest.encode({
      currentIndex: o.currentIndex ?? 0,
      subscriptionDurationSeconds: o.durationSeconds ?? 300,
      renew: o.renew ?? false,
      timelineId: o.timelineId ?? '',
      subscriptionId: this.rdm.subscriptionId,
    }).finish();
    await this.channel.send(newMessage(EdgeContentType.SubscribeToDataModelRequest, Buffer.from(req)));
  }

  /** CreateTerminatorV2 20216; resolves with the 20217 naming its terminator id (matched by content type, as routers do). */
  async createTerminator(req: Partial<edgeCtrlPb.CreateTerminatorV2Request> & { sessionToken: string }, timeoutMs = 10_000): Promise<edgeCtrlPb.CreateTerminatorV2Response> {
    const full = edgeCtrlPb.CreateTerminatorV2Request.fromPartial({ address: randomUUID(), ...req });
    await this.channel.send(newMessage(EdgeContentType.CreateTerminatorV2Request, Buffer.from(edgeCtrlPb.CreateTerminatorV2Request.encode(full).finish())));
    const m = await this.waitFor(
      EdgeContentType.CreateTerminatorV2Response,
      (r) => edgeCtrlPb.CreateTerminatorV2Response.decode(r.body).terminatorId === full.address,
      timeoutMs,
    );
    return edgeCtrlPb.CreateTerminatorV2Response.decode(m.body);
  }

  /** RemoveTerminatorsRequest 1038; resolves with the Result. */
  async removeTerminators(terminatorIds: string[], timeoutMs = 10_000): Promise<{ success: boolean; message: string }> {
    const body = Buffer.from(ctrlPb.RemoveTerminatorsRequest.encode({ terminatorIds }).finish());
    return this.result(await this.channel.request(newMessage(CtrlContentType.RemoveTerminatorsRequest, body), { timeoutMs }));
  }

  /** RouterInterfacesUpdate 1052; resolves with the Result. */
  async updateInterfaces(interfaces: Partial<ctrlPb.Interface>[], timeoutMs = 10_000): Promise<{ success: boolean; message: string }> {
    const body = Buffer.from(ctrlPb.RouterInterfacesUpdate.encode(ctrlPb.RouterInterfacesUpdate.fromPartial({ interfaces })).finish());
    return this.result(await this.channel.request(newMessage(CtrlContentType.RouterInterfacesUpdate, body), { timeoutMs }));
  }

  /** CreateCircuitV2Request 20218 (header-only); resolves with the 20219 response or the 20002 error. */
  async createCircuit(c: CreateCircuitInput): Promise<CircuitOutcome> {
    const m = newMessage(EdgeContentType.CreateCircuitV2Request);
    m.headers.set(CtrlMsgHeader.CreateCircuitReqSessionToken, Buffer.from(c.sessionToken));
    if (c.apiSessionToken) m.headers.set(CtrlMsgHeader.CreateCircuitReqApiSessionToken, Buffer.from(c.apiSessionToken));
    if (c.fingerprints?.length) m.headers.set(CtrlMsgHeader.CreateCircuitReqFingerprints, encodeStringSlice(c.fingerprints));
    if (c.terminatorInstanceId) m.headers.set(CtrlMsgHeader.CreateCircuitReqTerminatorInstanceId, Buffer.from(c.terminatorInstanceId));
    if (c.peerData?.size) m.headers.set(CtrlMsgHeader.CreateCircuitPeerData, encodeU32BytesMap(c.peerData));
    const r = await this.channel.request(m, { timeoutMs: c.timeoutMs ?? 30_000 });
    if (r.contentType === EdgeContentType.CreateCircuitV2Response) {
      return {
        ok: true,
        circuitId: getString(r.headers, CtrlMsgHeader.CreateCircuitRespCircuitId) ?? '',
        address: getString(r.headers, CtrlMsgHeader.CreateCircuitRespAddress) ?? '',
        peerData: getU32BytesMap(r.headers, CtrlMsgHeader.CreateCircuitPeerData) ?? new Map(),
        tags: getStringMap(r.headers, CtrlMsgHeader.CreateCircuitRespTags) ?? new Map(),
        message: r,
      };
    }
    if (r.contentType !== EdgeContentType.Error) throw new Error(`unexpected reply to CreateCircuitV2: content type ${r.contentType}`);
    return { ok: false, errorMessage: r.body.toString('utf8'), errorCode: getUint32(r.headers, EdgeHeader.ErrorCode), circuitId: getString(r.headers, EdgeHeader.CircuitId), message: r };
  }

  /** Fault 1004 (e.g. subject IngressFault 0 / EgressFault 1 with the circuit id). */
  async sendFault(subject: ctrlPb.FaultSubject, id: string, iteration = 0): Promise<void> {
    await this.channel.send(newMessage(CtrlContentType.Fault, Buffer.from(ctrlPb.Fault.encode({ subject, id, iteration }).finish())));
  }

  /** RouterLinks 1035: the links this router dialed (`fullRefresh`: every one it has). */
  async reportLinks(links: Partial<ctrlPb.RouterLinks_RouterLink>[], fullRefresh = false): Promise<void> {
    const body = ctrlPb.RouterLinks.encode(ctrlPb.RouterLinks.fromPartial({ links, fullRefresh })).finish();
    await this.channel.send(newMessage(CtrlContentType.RouterLinks, Buffer.from(body)));
  }

  /** MetricsMessage 1007 (fire-and-forget, as a router reports every interval): a message (`sourceId` this router) or raw bytes. */
  async sendMetrics(msg: Partial<metricsPb.MetricsMessage> | Uint8Array): Promise<void> {
    const body = msg instanceof Uint8Array ? msg : metricsPb.MetricsMessage.encode(metricsPb.MetricsMessage.fromPartial({ sourceId: this.routerId, timestamp: new Date(), ...msg })).finish();
    await this.channel.send(newMessage(CtrlContentType.Metrics, Buffer.from(body)));
  }

  /** VerifyRouter 1036 (a link dialed to this router): resolves with the Result. */
  async verifyRouter(routerId: string, fingerprints: string[], timeoutMs = 10_000): Promise<{ success: boolean; message: string }> {
    const body = Buffer.from(ctrlPb.VerifyRouter.encode({ routerId, fingerprints }).finish());
    return this.result(await this.channel.request(newMessage(CtrlContentType.VerifyRouter, body), { timeoutMs }));
  }

  /** ApiSessionHeartbeat 20203 for legacy tokens in use. */
  async apiSessionHeartbeat(tokens: string[]): Promise<void> {
    await this.channel.send(newMessage(EdgeContentType.ApiSessionHeartbeat, Buffer.from(edgeCtrlPb.ApiSessionHeartbeat.encode({ tokens }).finish())));
  }

  /** Sends any message (for cases the methods above do not cover). */
  send(m: Message): Promise<void> {
    return this.channel.send(m);
  }

  /** Closes the control channel (the controller sees the socket end). */
  async close(): Promise<void> {
    if (!this.channel.closed) this.channel.close('router double closed');
    if (this.socket.destroyed) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([once(this.socket, 'close'), new Promise((r) => (timer = setTimeout(r, 2_000)))]);
    clearTimeout(timer);
  }

  private result(m: Message): { success: boolean; message: string } {
    if (m.contentType !== ContentType.Result) throw new Error(`expected a Result, got content type ${m.contentType}`);
    return { success: getBool(m.headers, 2) === true, message: m.body.toString('utf8') };
  }

  private async sendClientHello(serverHello: Message): Promise<void> {
    const listeners = (this.o.edgeListeners ?? [{ advertise: '127.0.0.1:3022' }]).map((l) => {
      const protocol = l.protocol ?? 'tls';
      const { hostname, port } = splitHostPort(l.advertise);
      return {
        address: { value: `${protocol}:0.0.0.0:${port}`, protocol, hostname: '0.0.0.0', port },
        advertise: { value: `${protocol}:${l.advertise}`, protocol, hostname, port },
      };
    });
    const body = edgeCtrlPb.ClientHello.encode({
      version: this.o.version?.split('|')[0] ?? 'v2.0.3',
      hostname: this.o.hostname ?? 'localhost',
      protocols: listeners.map((l) => l.advertise.value),
      data: {},
      protocolPorts: listeners.map((l) => `${l.advertise.protocol}:${l.advertise.port}`),
      listeners,
    }).finish();
    const reply = newMessage(EdgeContentType.ClientHello, Buffer.from(body));
    reply.headers.set(EdgeHeader.RouterDataModel, encodeBool(true));
    reply.headers.set(EdgeHeader.RouterDataModelIndex, encodeUint64(BigInt(this.o.rdmIndex ?? 0)));
    await this.channel.reply(serverHello, reply);
    if (this.o.subscribe ?? true) await this.subscribe({ currentIndex: this.o.rdmIndex ?? 0, timelineId: this.o.rdmTimelineId });
  }

  private async answerRoute(m: Message): Promise<void> {
    const route = ctrlPb.Route.decode(m.body);
    this.routes.push(route);
    const answer = this.routeAnswer(route);
    if (answer === 'ignore') return;
    const r = newMessage(CtrlContentType.RouteResult, route.circuitId);
    r.headers.set(CtrlMsgHeader.RouteResultAttempt, encodeUint32(route.attempt));
    if (answer.success) {
      r.headers.set(CtrlMsgHeader.RouteResultSuccess, encodeBool(true));
      for (const [k, v] of answer.peerData ?? []) r.headers.set(k, v);
    } else {
      r.headers.set(CtrlMsgHeader.RouteResultError, Buffer.from(answer.error));
      r.headers.set(CtrlMsgHeader.RouteResultErrorCode, encodeByte(answer.errorCode));
    }
    await this.channel.reply(m, r);
  }

  /** Whether an RDM message belongs to this double's subscription (routers drop others). */
  static isForSubscription(m: Message, subscriptionId: string): boolean {
    return !RDM_TYPES.has(m.contentType) || getString(m.headers, EdgeHeader.RouterDataModelSubscriptionId) === subscriptionId;
  }
}
