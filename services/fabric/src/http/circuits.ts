import { listEnvelope } from '@ziti/errors';
import type { Handler } from '@ziti/http-kit';
import type { Circuit } from '../ctrl/circuits.js';
import type { CircuitStore } from '../store/circuits.js';

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
const ref = (entity: string, id: string) => ({ _links: { self: { href: `./${entity}/${id}` } }, entity, id, name: id });

/** A live circuit as the fabric API's `circuitDetail`. */
export function circuitDetail(c: Circuit) {
  const at = c.createdAt.toISOString();
  return {
    _links: { self: { href: `./circuits/${c.id}` } },
    id: c.id,
    createdAt: at,
    updatedAt: at,
    tags: {},
    clientId: c.clientId,
    path: { nodes: c.path.map((r) => ref('routers', r)), links: c.links.map((l) => ref('links', l)) },
    service: ref('services', c.serviceId),
    terminator: ref('terminators', c.terminatorId),
  };
}

/** Fabric `/circuits`: the live circuits of the control plane, paged and filtered like every list. */
export function circuitHandlers(store: CircuitStore): Record<string, Handler> {
  return {
    async listCircuits(ctx) {
      const page = await store.list({ limit: one(ctx.query.limit), offset: one(ctx.query.offset), filter: one(ctx.query.filter), sort: one(ctx.query.sort) });
      return { body: listEnvelope(page.items.map(circuitDetail), page.pagination, page.filterableFields) };
    },
  };
}
