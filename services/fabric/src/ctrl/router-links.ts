import { ctrlPb, encodeBool } from '@ziti/channel';
import type { Peers } from '../grpc/peers.js';
import type { PresenceStore } from '../store/presence.js';
import { CT, H } from './ids.js';
import type { LinkTable } from './links.js';
import type { Message, RouterChannel } from './port.js';

const result = (ch: RouterChannel, to: Message, success: boolean, text: string) =>
  ch.reply(to, CT.Result, Buffer.from(text), new Map([[H.ResultSuccess, encodeBool(success)]]));

const hex = (fp: string) => fp.toLowerCase().replace(/[^0-9a-f]/g, '');

/**
 * `VerifyRouter` (1036): the router accepting a link asks whether the dialer's certificate is the
 * enrolled router's; answered by fingerprint (OpenZiti `network.VerifyRouter`).
 */
export async function verifyRouter(peers: Pick<Peers, 'getRouterEnrollment'>, req: ctrlPb.VerifyRouter): Promise<{ ok: boolean; message: string }> {
  if (!req.routerId || req.routerId.length > 256) return { ok: false, message: 'invalid router id' };
  let enrolled = '';
  try {
    enrolled = hex((await peers.getRouterEnrollment(req.routerId)).fingerprint ?? '');
  } catch {
    return { ok: false, message: `invalid router ${req.routerId}` };
  }
  if (!enrolled) return { ok: false, message: `invalid router ${req.routerId}, not yet enrolled` };
  if (req.fingerprints.slice(0, 16).some((fp) => hex(fp) === enrolled)) return { ok: true, message: 'router verified' };
  return { ok: false, message: `could not verify fingerprint for router ${req.routerId}` };
}

export interface RouterLinkDeps {
  links: LinkTable;
  peers: Pick<Peers, 'getRouterEnrollment'>;
  /** Whether a router is connected to the control plane (any replica). */
  connected(routerId: string): boolean;
  log(m: string): void;
  problem(m: string, err?: unknown): void;
}

/** A router's link messages: its links (1035), link verification (1036), link state (1053, accepted). */
export function handleRouterLinks(ch: RouterChannel, routerId: string, d: RouterLinkDeps): void {
  ch.handle(CT.RouterLinks, (m) => {
    let msg: ctrlPb.RouterLinks;
    try {
      msg = ctrlPb.RouterLinks.decode(m.body);
    } catch {
      return d.log(`fabric: router ${routerId}: malformed RouterLinks dropped`);
    }
    d.links.reported(routerId, msg, d.connected);
  });
  ch.handle(CT.VerifyRouter, async (m) => {
    let req: ctrlPb.VerifyRouter;
    try {
      req = ctrlPb.VerifyRouter.decode(m.body);
    } catch {
      return void result(ch, m, false, 'malformed verify router request');
    }
    const verdict = await verifyRouter(d.peers, req);
    if (!verdict.ok) d.log(`fabric: router ${routerId}: link from ${req.routerId.slice(0, 256)} not verified: ${verdict.message}`);
    result(ch, m, verdict.ok, verdict.message);
  });
  ch.handle(CT.LinkState, () => undefined);
}

/**
 * Peer state (OpenZiti `RouterMessaging`): a router learns from PeerStateChanges (1050) which
 * routers it may link to and where they listen. A router that connects gets every connected
 * peer; every other router this replica holds is told of it (Healthy) and of its going
 * (Unhealthy), from the `router.connected|disconnected` events of every replica.
 */
export class PeerStates {
  constructor(
    private readonly d: {
      presence: PresenceStore;
      /** The routers this replica holds. */
      held(): Iterable<[string, RouterChannel]>;
      problem(m: string, err?: unknown): void;
    },
  ) {}

  /** A router of this replica connected: it gets the whole peer list. */
  async sendAll(routerId: string, ch: RouterChannel): Promise<void> {
    const peers = await this.d.presence.connectedPeers(routerId);
    if (peers.length === 0) return;
    const changes = peers.map((p) => ({ id: p.routerId, version: p.version, state: ctrlPb.PeerState.Healthy, listeners: p.linkListeners }));
    ch.send(CT.PeerStateChanges, ctrlPb.PeerStateChanges.encode({ changes }).finish());
  }

  /** A router connected (any replica): the others this replica holds are told. */
  connected(routerId: string, version: string, listeners: ctrlPb.Listener[]): void {
    this.tell(routerId, { id: routerId, version, state: ctrlPb.PeerState.Healthy, listeners });
  }

  /** A router disconnected (unless a newer connection holds it already), or was deleted. */
  disconnected(routerId: string, removed = false): void {
    this.tell(routerId, { id: routerId, version: '', state: removed ? ctrlPb.PeerState.Removed : ctrlPb.PeerState.Unhealthy, listeners: [] });
  }

  private tell(routerId: string, change: ctrlPb.PeerStateChange): void {
    const body = ctrlPb.PeerStateChanges.encode({ changes: [change] }).finish();
    for (const [id, ch] of this.d.held()) if (id !== routerId) ch.send(CT.PeerStateChanges, body);
  }
}
