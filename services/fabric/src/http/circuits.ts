import { listEnvelope } from '@ziti/errors';
import type { Handler } from '@ziti/http-kit';
import type { Circuit } from '../ctrl/circuits.js';
import type { CircuitStore } from '../store/circuits.js';

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
const ref = (entity: string, id: string, name = id) => ({ _links: { self: { href: `./${entity}/${id}` } }, entity, id, name });
// Routers and services also link their terminators, as in OpenZiti's fabric API.
const withTerminators = (entity: string, id: string, name: string) => {
  const r = ref(entity, id, name);
  return { ...r, _links: { ...r._links, terminators: { href: `./${entity}/${id}/terminators` } } };
};

/** Names of the routers and services a circuit refers to (OpenZiti names a deleted service `<deleted>`). */
export interface CircuitNames {
  router(id: string): string;
  service(id: string): string | undefined;
}

/** A live circuit as the fabric API's `circuitDetail`: routers and the service by name, links and the terminator by id. */
export function circuitDetail(c: Circuit, names: CircuitNames) {
  const at = c.createdAt.toISOString();
  return {
    _links: { self: { href: `./circuits/${c.id}` } },
    id: c.id,
    createdAt: at,
    updatedAt: at,
    tags: {},
    clientId: c.clientId,
    path: { nodes: c.path.map((r) => withTerminators('routers', r, names.router(r))), links: c.links.map((l) => ref('links', l)) },
    service: withTerminators('services', c.serviceId, names.service(c.serviceId) ?? '<deleted>'),
    terminator: ref('terminators', c.terminatorId),
  };
}

/** Fabric `/circuits`: the live circuits of the control plane, paged and filtered like every list. */
export function circuitHandlers(
  store: CircuitStore,
  routerNames: (ids: string[]) => Promise<Map<string, string>>,
  serviceName: (id: string) => string | undefined,
): Record<string, Handler> {
  return {
    async listCircuits(ctx) {
      const page = await store.list({ limit: one(ctx.query.limit), offset: one(ctx.query.offset), filter: one(ctx.query.filter), sort: one(ctx.query.sort) });
      const routers = await routerNames([...new Set(page.items.flatMap((c) => c.path))]);
      const names: CircuitNames = { router: (id) => routers.get(id) ?? id, service: serviceName };
      return { body: listEnvelope(page.items.map((c) => circuitDetail(c, names)), page.pagination, page.filterableFields) };
    },
  };
}
