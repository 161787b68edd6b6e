import { ctrlPb } from '@ziti/channel';
import { INITIAL_LATENCY_NS, type Link, type LinkStore, linkCost, linkUsable } from '../store/links.js';
import type { PathLink } from './paths.js';

/** OpenZiti's link event types (`controller/event/links.go`). */
export type LinkEventType = 'routerLinkNew' | 'routerLinkKnown' | 'routerLinkDisconnectedDest' | 'fault' | 'duplicate';

export interface LinkTableDeps {
  store: LinkStore;
  replica: string;
  /** Publishes a link event (`link.<type>`) with the link. */
  publish(type: LinkEventType, link: Link): void;
  problem(m: string, err?: unknown): void;
}

/** The most links one RouterLinks message is read for. */
const MAX_REPORTED = 10_000;
const MAX_ID = 256;

const sane = (s: string) => s.length > 0 && s.length <= MAX_ID;

/**
 * The links of the network (OpenZiti's link manager): reported by their dialing routers
 * (`RouterLinks`), removed by link faults, by a full refresh that no longer names them, or when
 * their source router disconnects. Every replica holds the whole table (paths may cross routers
 * of other replicas); each change is written to `fabric.links` and published, and the others
 * apply it (`applyRemote`) and read the table again every so often.
 */
export class LinkTable {
  private readonly links = new Map<string, Link>();
  private readonly gone: ((l: Link) => void)[] = [];

  constructor(private readonly d: LinkTableDeps) {}

  /** Reads every link again (start, and the periodic convergence of missed events). */
  async load(): Promise<void> {
    const all = await this.d.store.all();
    const seen = new Set(all.map((l) => l.id));
    for (const [id, l] of this.links) if (!seen.has(id)) this.drop(l);
    for (const l of all) this.links.set(l.id, l);
  }

  /** Called with each link that goes (its circuits are rerouted). */
  onGone(fn: (l: Link) => void): void {
    this.gone.push(fn);
  }

  get(id: string): Link | undefined {
    return this.links.get(id);
  }

  all(): Link[] {
    return [...this.links.values()];
  }

  /** The links paths may cross, with OpenZiti's cost. */
  usable(): PathLink[] {
    const out: PathLink[] = [];
    for (const l of this.links.values()) if (linkUsable(l)) out.push({ id: l.id, src: l.srcRouterId, dst: l.dstRouterId, cost: linkCost(l) });
    return out;
  }

  /**
   * A router's `RouterLinks`: each link is new (a newer iteration replaces an older one) or known;
   * with `fullRefresh`, the router's links it no longer names are removed.
   */
  reported(srcRouterId: string, msg: ctrlPb.RouterLinks, dstConnected: (routerId: string) => boolean): void {
    const reports = msg.links.slice(0, MAX_REPORTED).filter((r) => sane(r.id) && sane(r.destRouterId) && r.destRouterId !== srcRouterId);
    if (msg.fullRefresh) {
      const named = new Set(reports.map((r) => r.id));
      for (const l of [...this.links.values()]) if (l.srcRouterId === srcRouterId && !named.has(l.id)) this.remove(l, 'fault');
    }
    for (const r of reports) {
      const known = this.links.get(r.id);
      if (known && known.srcRouterId === srcRouterId && known.iteration >= r.iteration) {
        this.d.publish('routerLinkKnown', known);
        continue;
      }
      if (known) this.drop(known);
      const link: Link = {
        id: r.id,
        srcRouterId,
        dstRouterId: r.destRouterId,
        protocol: r.linkProtocol.slice(0, 64),
        dialAddress: r.dialAddress.slice(0, 512),
        iteration: r.iteration,
        state: 'Connected',
        staticCost: 1,
        srcLatency: INITIAL_LATENCY_NS,
        dstLatency: INITIAL_LATENCY_NS,
        down: false,
        replica: this.d.replica,
        createdAt: new Date(),
      };
      this.links.set(link.id, link);
      if (!dstConnected(link.dstRouterId)) this.d.publish('routerLinkDisconnectedDest', link);
      this.d.publish('routerLinkNew', link);
      this.d.store.put(link).catch((err) => this.d.problem(`fabric: link ${link.id} not stored`, err));
    }
  }

  /**
   * A link fault (or duplicate) reported by one of its routers: the link goes, unless the fault
   * is of an older iteration. Returns the link when it was usable (its other router is told).
   */
  faulted(linkId: string, iteration: number, duplicate: boolean): Link | undefined {
    const l = this.links.get(linkId);
    if (!l) return undefined;
    if (iteration !== 0 && l.iteration !== 0 && iteration < l.iteration) return undefined;
    const wasUsable = linkUsable(l);
    this.remove(l, duplicate ? 'duplicate' : 'fault');
    return wasUsable ? l : undefined;
  }

  /** A router's channel closed: the links it reported go (it reports them again when it returns). */
  routerGone(routerId: string): void {
    for (const l of [...this.links.values()]) if (l.srcRouterId === routerId) this.remove(l, 'fault');
  }

  /** A router measured a link's latency (ns): the cost follows (OpenZiti `link.<id>.latency`). */
  latency(linkId: string, routerId: string, ns: number): void {
    const l = this.links.get(linkId);
    if (!l || !Number.isFinite(ns) || ns < 0) return;
    const end = l.srcRouterId === routerId ? 'src' : l.dstRouterId === routerId ? 'dst' : undefined;
    if (!end) return;
    if (end === 'src') l.srcLatency = ns;
    else l.dstLatency = ns;
    this.d.store.latency(l.id, end, ns).catch((err) => this.d.problem(`fabric: latency of link ${l.id} not stored`, err));
  }

  /** Another replica's change (its event): applied here without writing or publishing again. */
  applyRemote(type: string, link: Link): void {
    if (link.replica === this.d.replica) return;
    if (type === 'fault' || type === 'duplicate') {
      const l = this.links.get(link.id);
      if (l) this.drop(l);
    } else if (type === 'routerLinkNew') {
      this.links.set(link.id, link);
    }
  }

  private remove(l: Link, why: 'fault' | 'duplicate'): void {
    this.drop(l);
    this.d.publish(why, { ...l, state: why === 'duplicate' ? 'Duplicate' : 'Failed' });
    this.d.store.remove([l.id]).catch((err) => this.d.problem(`fabric: link ${l.id} not removed`, err));
  }

  private drop(l: Link): void {
    if (this.links.get(l.id) !== l) return;
    this.links.delete(l.id);
    for (const fn of this.gone) {
      try {
        fn(l);
      } catch (err) {
        this.d.problem(`fabric: link ${l.id}: circuits not rerouted`, err);
      }
    }
  }
}

/** A link as its events carry it (and as another replica reads it back). */
export function linkEventData(l: Link): Record<string, unknown> {
  return {
    linkId: l.id,
    srcRouterId: l.srcRouterId,
    dstRouterId: l.dstRouterId,
    protocol: l.protocol,
    dialAddress: l.dialAddress,
    iteration: l.iteration,
    cost: linkCost(l),
    state: l.state,
    staticCost: l.staticCost,
    srcLatency: l.srcLatency,
    dstLatency: l.dstLatency,
    down: l.down,
    replica: l.replica,
    createdAt: l.createdAt.toISOString(),
  };
}

/** The link of an event (`linkEventData`), or undefined when it is not one. */
export function linkOfEvent(d: Record<string, unknown>): Link | undefined {
  const s = (v: unknown) => (typeof v === 'string' ? v : '');
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  if (!s(d.linkId) || !s(d.srcRouterId) || !s(d.dstRouterId)) return undefined;
  return {
    id: s(d.linkId),
    srcRouterId: s(d.srcRouterId),
    dstRouterId: s(d.dstRouterId),
    protocol: s(d.protocol),
    dialAddress: s(d.dialAddress),
    iteration: n(d.iteration),
    state: (s(d.state) || 'Connected') as Link['state'],
    staticCost: n(d.staticCost) || 1,
    srcLatency: n(d.srcLatency),
    dstLatency: n(d.dstLatency),
    down: d.down === true,
    replica: s(d.replica),
    createdAt: new Date(s(d.createdAt) || Date.now()),
  };
}
