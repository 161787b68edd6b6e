import { randomUUID } from 'node:crypto';
import { ctrlPb, encodeBool, edgeCtrlPb } from '@ziti/channel';
import type { EventBus } from '@ziti/messaging';
import { newChangeEvent } from '@ziti/messaging';
import type { RouterInfo } from '@ziti/proto';
import type { PresenceStore, VersionInfo } from '../store/presence.js';
import type { Peers } from '../grpc/peers.js';
import type { RdmPublisher } from '../rdm/publisher.js';
import type { Circuits } from './circuits.js';
import { type EdgeSyncDeps, edgeSyncHandlers, syncEdgeRouter } from './edge-sync.js';
import { CT, H, SYNC } from './ids.js';
import type { LegacySessions } from './legacy-sessions.js';
import type { LinkTable } from './links.js';
import { type PeerStates, handleRouterLinks } from './router-links.js';
import type { RouterMetrics } from './router-metrics.js';
import type { RouterChannel } from './port.js';
import { handleTerminators } from './terminators.js';
import type { SessionValidator } from './tokens.js';

export const EVENT_SOURCE = 'fabric';

interface Held {
  router: RouterInfo;
  channel: RouterChannel;
  connectionId: string;
}

export interface RegistryDeps {
  presence: PresenceStore;
  peers: Peers;
  bus: EventBus;
  rdm: RdmPublisher;
  legacy: LegacySessions;
  sessions: SessionValidator;
  circuits: () => Circuits;
  links: LinkTable;
  routerMetrics: Pick<RouterMetrics, 'accept' | 'routerGone'>;
  peerStates: () => PeerStates;
  /** Whether a router is connected to the control plane (any replica). */
  connectedAnywhere(routerId: string): boolean;
  /** Messages to routers other replicas hold. */
  relay: { sendAnywhere(routerId: string, contentType: number, body: Uint8Array): void };
  controllerVersion: string;
  log(m: string): void;
  problem(m: string, err?: unknown): void;
}

/**
 * The routers whose control channel this replica holds: one channel per router (a new connection
 * replaces the old), their presence in `fabric.router_presence`, and what each kind of router is
 * served: every router answers interface updates; an edge router is synchronised (hello, legacy
 * API sessions, keys, the data model) and creates terminators and circuits.
 */
export class RouterRegistry {
  private readonly held = new Map<string, Held>();

  constructor(private readonly d: RegistryDeps) {}

  channelOf(routerId: string): RouterChannel | undefined {
    return this.held.get(routerId)?.channel;
  }

  /** The router whose channel this replica holds, if any. */
  routerOf(routerId: string): RouterInfo | undefined {
    return this.held.get(routerId)?.router;
  }

  connectedIds(): string[] {
    return [...this.held.keys()];
  }

  /** The routers this replica holds and their channels. */
  *channels(): Iterable<[string, RouterChannel]> {
    for (const [id, h] of this.held) yield [id, h.channel];
  }

  /** Every edge router channel whose sync finished. */
  edgeChannels(): RouterChannel[] {
    return [...this.held.values()].filter((h) => h.router.kind === 'edge').map((h) => h.channel);
  }

  disconnect(routerId: string, reason: string): boolean {
    const h = this.held.get(routerId);
    if (!h) return false;
    h.channel.close(reason);
    return true;
  }

  closeAll(reason: string): void {
    for (const h of this.held.values()) h.channel.close(reason);
  }

  async attach(router: RouterInfo, channel: RouterChannel, hello: { version?: VersionInfo; listenerAddresses: string[]; linkListeners: ctrlPb.Listener[] }): Promise<void> {
    const previous = this.held.get(router.id);
    if (previous) previous.channel.close('replaced by a new connection of the same router');
    const connectionId = randomUUID();
    const held: Held = { router, channel, connectionId };
    this.held.set(router.id, held);
    const isEdge = router.kind === 'edge';
    const versionInfo = hello.version ?? { version: 'unknown', revision: '', buildDate: '', os: '', arch: '' };
    const sync: EdgeSyncDeps = {
      controllerVersion: this.d.controllerVersion,
      rdm: this.d.rdm,
      legacySessions: () => this.d.legacy.all(),
      status: (fields) => this.d.presence.update(router.id, connectionId, fields),
      touch: async (tokens) => {
        const r = await this.d.peers.touchApiSessions(tokens);
        await this.d.presence.identitiesSeen(router.id, r.identityIds);
        return r;
      },
      problem: this.d.problem,
    };
    // Every handler before the first await: the router sends right after the hello, and a
    // message of a type without a handler is dropped.
    this.handle(router, channel, held, isEdge, sync);
    await this.d.presence.connected({
      routerId: router.id,
      connectionId,
      isEdge,
      versionInfo,
      listenerAddresses: hello.listenerAddresses,
      linkListeners: hello.linkListeners,
      remoteAddress: channel.remoteAddress,
      syncStatus: isEdge ? SYNC.QUEUED : SYNC.UNKNOWN,
    });
    this.d.log(`fabric: router ${router.id} (${router.name}) connected from ${channel.remoteAddress}, version ${versionInfo.version}`);
    if (this.held.get(router.id) !== held) return;
    // Its peers first (links), then everyone learns of it (every replica, from the event).
    await this.d.peerStates().sendAll(router.id, channel).catch((err) => this.d.problem(`fabric: peers not sent to router ${router.id}`, err));
    this.publish('router.connected', {
      routerId: router.id,
      routerName: router.name,
      at: new Date().toISOString(),
      versionInfo,
      remoteAddress: channel.remoteAddress,
      connectionId,
      linkListeners: hello.linkListeners,
      cost: Number(router.cost) || 0,
      noTraversal: router.noTraversal,
    });
    if (isEdge) await syncEdgeRouter(channel, router.id, sync);
  }

  private handle(router: RouterInfo, channel: RouterChannel, held: Held, isEdge: boolean, sync: EdgeSyncDeps): void {
    channel.onClose((reason) => {
      if (this.held.get(router.id) === held) this.held.delete(router.id);
      this.d.log(`fabric: router ${router.id} disconnected: ${reason}`);
      this.publish('router.disconnected', { routerId: router.id, routerName: router.name, at: new Date().toISOString(), reason, connectionId: held.connectionId });
      // The links it reported go with it (it reports them again when it returns).
      if (!this.held.has(router.id)) this.d.links.routerGone(router.id);
      if (!this.held.has(router.id)) this.d.routerMetrics.routerGone(router.id);
      void this.d.presence.disconnected(router.id, held.connectionId).catch((err) => this.d.problem(`fabric: presence of router ${router.id} not updated`, err));
      // A router re-creates its terminators after it reconnects (OpenZiti `HandleReconnect`): the old ones go.
      if (isEdge && !this.held.has(router.id)) {
        void this.d.peers.removeTerminators({ routerId: router.id, terminatorIds: [], allEdge: true }).catch((err) => this.d.problem(`fabric: terminators of router ${router.id} not removed`, err));
      }
    });
    channel.handle(CT.RouterInterfacesUpdate, (m) => void channel.reply(m, CT.Result, undefined, new Map([[H.ResultSuccess, encodeBool(true)]])));
    handleRouterLinks(channel, router.id, { links: this.d.links, peers: this.d.peers, connected: (id) => this.d.connectedAnywhere(id), log: this.d.log, problem: this.d.problem });
    // Faults: ingress and egress end circuits; a link fault (or duplicate) removes the link, whose
    // circuits are rerouted, and the link's other router is told.
    channel.handle(CT.Fault, (m) => {
      let f: ctrlPb.Fault;
      try {
        f = ctrlPb.Fault.decode(m.body);
      } catch {
        return this.d.log(`fabric: router ${router.id}: malformed fault dropped`);
      }
      if (f.subject === ctrlPb.FaultSubject.LinkFault || f.subject === ctrlPb.FaultSubject.LinkDuplicate) {
        const gone = this.d.links.faulted(f.id, f.iteration, f.subject === ctrlPb.FaultSubject.LinkDuplicate);
        const other = gone && (gone.srcRouterId === router.id ? gone.dstRouterId : gone.srcRouterId);
        if (other) this.d.relay.sendAnywhere(other, CT.Fault, ctrlPb.Fault.encode({ ...f, subject: ctrlPb.FaultSubject.LinkFault }).finish());
      } else this.d.circuits().faulted(f);
    });
    channel.handle(CT.Metrics, (m) => this.d.routerMetrics.accept(router.id, m.body));
    // Reports this controller does not act on yet (alerts): accepted and dropped.
    for (const t of [CT.Alerts, CT.HealthEvent, CT.ValidateSessions]) channel.handle(t, () => undefined);
    // Every router may be on a circuit's path (confirmations, unroutes when it goes); edge routers also create them.
    this.d.circuits().attach(channel, router.id);
    if (!isEdge) return;
    channel.handle(CT.ConnectEvents, async (m) => {
      const ev = edgeCtrlPb.ConnectEvents.decode(m.body);
      const ids = ev.events.filter((e) => e.isConnected).map((e) => e.identityId).filter((id) => id.length > 0 && id.length <= 256).slice(0, 100_000);
      await this.d.presence.identitiesSeen(router.id, ids).catch((err) => this.d.problem('fabric: identity connections not recorded', err));
    });
    handleTerminators(channel, router.id, this.d.peers, this.d.sessions, this.d.problem);
    edgeSyncHandlers(channel, router.id, sync);
  }

  private publish(type: string, data: Record<string, unknown>): void {
    void this.d.bus.publish(newChangeEvent(EVENT_SOURCE, type, data)).catch((err) => this.d.problem(`fabric: ${type} not published`, err));
  }
}
