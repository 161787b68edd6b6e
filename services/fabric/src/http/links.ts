import { listEnvelope } from '@ziti/errors';
import type { Handler } from '@ziti/http-kit';
import { type Link, type LinkStore, linkCost } from '../store/links.js';

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
const routerRef = (id: string, name: string) => ({ _links: { self: { href: `./routers/${id}` }, terminators: { href: `./routers/${id}/terminators` } }, entity: 'routers', id, name });

/** A link as the fabric API's `linkDetail` (latencies in ns, cost as OpenZiti computes it). */
export function linkDetail(l: Link, routerName: (id: string) => string) {
  return {
    id: l.id,
    cost: linkCost(l),
    destLatency: Math.round(l.dstLatency),
    destRouter: routerRef(l.dstRouterId, routerName(l.dstRouterId)),
    down: l.down,
    iteration: l.iteration,
    protocol: l.protocol,
    sourceLatency: Math.round(l.srcLatency),
    sourceRouter: routerRef(l.srcRouterId, routerName(l.srcRouterId)),
    state: l.state,
    staticCost: l.staticCost,
  };
}

/** Fabric `/links`: the links routers reported, paged and filtered like every list. */
export function linkHandlers(store: LinkStore, routerNames: (ids: string[]) => Promise<Map<string, string>>): Record<string, Handler> {
  return {
    async listLinks(ctx) {
      const page = await store.list({ limit: one(ctx.query.limit), offset: one(ctx.query.offset), filter: one(ctx.query.filter), sort: one(ctx.query.sort) });
      const names = await routerNames([...new Set(page.items.flatMap((l) => [l.srcRouterId, l.dstRouterId]))]);
      return { body: listEnvelope(page.items.map((l) => linkDetail(l, (id) => names.get(id) ?? id)), page.pagination, page.filterableFields) };
    },
  };
}
