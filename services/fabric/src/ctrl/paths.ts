import { ctrlPb } from '@ziti/channel';

/** The Route attempt of a reroute (OpenZiti's `SmartRerouteAttempt`): the egress already exists. */
export const SMART_REROUTE_ATTEMPT = 99969996;

/** OpenZiti's `minRouterCost` default: a router adds at least this much to a path through it. */
export const MIN_ROUTER_COST = 10;

/** A usable link as path selection sees it (links are traversed in both directions). */
export interface PathLink {
  id: string;
  src: string;
  dst: string;
  cost: number;
}

export interface PathRouter {
  cost: number;
  noTraversal: boolean;
}

export interface Path {
  /** Routers from the ingress to the egress router. */
  routers: string[];
  /** The link between each router and the next (one fewer than routers). */
  links: string[];
  cost: number;
}

/**
 * The cheapest path from `from` to `to` over usable links between connected routers (OpenZiti's
 * `shortestPath`): a hop into router r costs the cheapest link's cost plus max(r's cost,
 * {@link MIN_ROUTER_COST}); a `noTraversal` router is only a path's end. Undefined: no path.
 */
export function shortestPath(from: string, to: string, links: Iterable<PathLink>, router: (id: string) => PathRouter | undefined): Path | undefined {
  if (!router(from) || !router(to)) return undefined;
  if (from === to) return { routers: [from], links: [], cost: 0 };
  // The cheapest link between each pair of connected routers, both ways.
  const neighbours = new Map<string, Map<string, PathLink>>();
  const add = (a: string, b: string, l: PathLink) => {
    const m = neighbours.get(a) ?? new Map<string, PathLink>();
    const cur = m.get(b);
    if (!cur || l.cost < cur.cost) m.set(b, l);
    neighbours.set(a, m);
  };
  for (const l of links) {
    if (l.src === l.dst || !router(l.src) || !router(l.dst)) continue;
    add(l.src, l.dst, l);
    add(l.dst, l.src, l);
  }
  const dist = new Map<string, number>([[from, 0]]);
  const prev = new Map<string, { router: string; link: string }>();
  const done = new Set<string>();
  for (;;) {
    let u: string | undefined;
    let best = Infinity;
    for (const [r, d] of dist) if (!done.has(r) && d < best) [u, best] = [r, d];
    if (u === undefined || u === to) break;
    done.add(u);
    for (const [r, l] of neighbours.get(u) ?? []) {
      if (done.has(r)) continue;
      const info = router(r)!;
      if (info.noTraversal && r !== to) continue;
      const alt = best + l.cost + Math.max(info.cost, MIN_ROUTER_COST);
      if (alt < (dist.get(r) ?? Infinity)) {
        dist.set(r, alt);
        prev.set(r, { router: u, link: l.id });
      }
    }
  }
  if (!prev.has(to)) return undefined;
  const routers = [to];
  const hops: string[] = [];
  for (let p = prev.get(to); p; p = prev.get(p.router)) {
    routers.unshift(p.router);
    hops.unshift(p.link);
  }
  return { routers, links: hops, cost: dist.get(to)! };
}

export interface RouteTarget {
  binding: string;
  /** The terminator's address on its router. */
  destination: string;
  peerData: Record<number, Buffer>;
}

/**
 * The Route message of each router of a path (OpenZiti's `CreateRouteMessages`): one router gets
 * the egress and `ingress→egress`; on a longer path the first forwards ingress to the first link,
 * transit routers forward link to link, and the last gets the egress from the last link.
 */
export function routeMessages(
  path: Pick<Path, 'routers' | 'links'>,
  ids: { circuitId: string; ingressId: string; egressId: string; attempt: number; timeoutNs: number; tags: Record<string, string> },
  target: RouteTarget,
): { routerId: string; route: ctrlPb.Route }[] {
  const { Start, End, Link } = ctrlPb.DestType;
  const fwd = (srcAddress: string, dstAddress: string, dstType: ctrlPb.DestType) => ({ srcAddress, dstAddress, dstType });
  const base = (routerId: string, forwards: ctrlPb.Route_Forward[], egress?: ctrlPb.Route_Egress) => ({
    routerId,
    route: { circuitId: ids.circuitId, attempt: ids.attempt, egress, forwards, context: undefined, timeout: ids.timeoutNs, tags: ids.tags },
  });
  const egress: ctrlPb.Route_Egress = { binding: target.binding, address: ids.egressId, destination: target.destination, peerData: target.peerData };
  const n = path.routers.length;
  if (n === 1) return [base(path.routers[0]!, [fwd(ids.ingressId, ids.egressId, End), fwd(ids.egressId, ids.ingressId, Start)], egress)];
  const out = [base(path.routers[0]!, [fwd(ids.ingressId, path.links[0]!, Link), fwd(path.links[0]!, ids.ingressId, Start)])];
  for (let i = 1; i < n - 1; i++) out.push(base(path.routers[i]!, [fwd(path.links[i - 1]!, path.links[i]!, Link), fwd(path.links[i]!, path.links[i - 1]!, Link)]));
  const last = path.links[n - 2]!;
  out.push(base(path.routers[n - 1]!, [fwd(ids.egressId, last, Link), fwd(last, ids.egressId, End)], ids.attempt === SMART_REROUTE_ATTEMPT ? undefined : egress));
  return out;
}
