import type { ctrlPb } from '@ziti/channel';
import type { EventBus, Subscription } from '@ziti/messaging';
import type { Circuit, Circuits } from './ctrl/circuits.js';
import { type LinkTable, linkOfEvent } from './ctrl/links.js';
import type { RouterRegistry } from './ctrl/registry.js';
import type { PeerStates } from './ctrl/router-links.js';
import type { ConnectedRouters } from './ctrl/topology.js';
import type { RdmLeader } from './rdm/leader.js';
import { REVOCATION_CHANGE } from './rdm/model.js';
import type { RdmPublisher } from './rdm/publisher.js';
import type { PresenceStore } from './store/presence.js';

export interface EventTargets {
  leader: RdmLeader;
  rdm: RdmPublisher;
  registry: RouterRegistry;
  circuits: Circuits;
  routers: ConnectedRouters;
  peerStates: PeerStates;
  links: LinkTable;
  presence: PresenceStore;
}

/**
 * What a fabric replica follows on the bus, each as a broadcast (every replica serves its own
 * routers): policy's data-model changes and router deletions, identity-auth's revocations, and
 * the other replicas' (and its own) change-set signals, router and link events, disconnect
 * requests and circuit faults.
 */
export async function subscribeEvents(bus: EventBus, t: EventTargets): Promise<Subscription[]> {
  const { leader, rdm, registry, circuits, routers, peerStates, links, presence } = t;
  // Each subscription is its own consumer on the bus: made at once, not one after another.
  const subs: Promise<Subscription>[] = [];
  subs.push(bus.subscribeBroadcast('policy', ['router-data-model.changed'], async (e) => {
    const list = (e.data as { changes?: unknown }).changes;
    const named = Array.isArray(list) ? list.filter((c): c is { kind: string; id: string } => typeof c?.kind === 'string' && typeof c?.id === 'string') : [];
    void (named.length > 0 ? leader.changed(named) : leader.refresh());
  }));
  // A new revocation (OIDC logout, refresh rotation, identity disabled, POST /revocations) reaches routers as a change.
  subs.push(bus.subscribeBroadcast('identity-auth', ['revocation.created'], async (e) => {
    const id = (e.data as { revocationId?: unknown }).revocationId;
    if (typeof id === 'string' && id.length > 0) void leader.changed([{ kind: REVOCATION_CHANGE, id }]);
  }));
  // The leader stored a change set: every replica applies it and sends it to its routers.
  subs.push(bus.subscribeBroadcast('fabric', ['rdm.change-set'], async () => void rdm.catchUp()));
  // Every replica's routers and links: peers learn of each other, paths see every router and link.
  subs.push(bus.subscribeBroadcast('fabric', ['router.connected', 'router.disconnected', 'router.disconnect-requested', 'link.routerLinkNew', 'link.fault', 'link.duplicate', 'circuit.faulted'], async (e) => {
    const d = e.data as Record<string, unknown>;
    if (e.type === 'router.disconnect-requested') {
      if (typeof d.routerId === 'string') registry.disconnect(d.routerId, typeof d.reason === 'string' ? d.reason : 'disconnected by the controller');
      return;
    }
    if (e.type === 'circuit.faulted') {
      // A router held elsewhere faulted circuits: the replica owning them ends them.
      for (const id of Array.isArray(d.circuitIds) ? d.circuitIds.slice(0, 10_000) : []) if (typeof id === 'string') circuits.remove(id);
      return;
    }
    const routerId = typeof d.routerId === 'string' ? d.routerId : '';
    const connectionId = typeof d.connectionId === 'string' ? d.connectionId : '';
    if (e.type === 'router.connected' && routerId) {
      routers.connected(routerId, connectionId, { cost: Number(d.cost) || 0, noTraversal: d.noTraversal === true });
      const version = (d.versionInfo as { version?: unknown } | undefined)?.version;
      peerStates.connected(routerId, typeof version === 'string' ? version : '', Array.isArray(d.linkListeners) ? (d.linkListeners as ctrlPb.Listener[]) : []);
    } else if (e.type === 'router.disconnected' && routerId) {
      routers.disconnected(routerId, connectionId);
      if (!registry.channelOf(routerId) && !(await presence.heldElsewhere(routerId, connectionId))) peerStates.disconnected(routerId);
    } else if (e.type.startsWith('link.')) {
      const l = linkOfEvent(d);
      if (l) links.applyRemote(e.type.slice('link.'.length), l);
    }
  }));
  subs.push(bus.subscribeBroadcast('policy', ['router.deleted'], async (e) => {
    const id = (e.data as { routerId?: unknown }).routerId;
    if (typeof id === 'string' && id) {
      peerStates.disconnected(id, true);
      circuits.routerDeleted(id);
    }
  }));
  return Promise.all(subs);
}

/** A circuit as fabric's circuit events carry it. */
export function circuitEvent(c: Circuit) {
  return {
    circuitId: c.id,
    clientId: c.clientId,
    serviceId: c.serviceId,
    terminatorId: c.terminatorId,
    instanceId: c.instanceId,
    creationTimespanNs: c.creationTimespanNs,
    path: { nodes: c.path, links: c.links, ingressId: c.ingressId, egressId: c.egressId },
    tags: c.tags,
  };
}
