import { listEnvelope } from '@ziti/errors';
import type { Handler } from '@ziti/http-kit';
import type { Circuit } from '../ctrl/circuits.js';

const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 500;

function intQuery(v: string | string[] | undefined, fallback: number, max: number): number {
  const s = Array.isArray(v) ? v[0] : v;
  const n = s === undefined ? NaN : Number(s);
  return Number.isInteger(n) && n >= 0 ? Math.min(n, max) : fallback;
}

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
    path: { nodes: c.path.map((r) => ref('routers', r)), links: [] },
    service: ref('services', c.serviceId),
    terminator: ref('terminators', c.terminatorId),
  };
}

/** Fabric `/circuits`: the live circuits of the control plane, newest last. */
export function circuitHandlers(list: () => Circuit[]): Record<string, Handler> {
  return {
    async listCircuits(ctx) {
      const all = list().sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
      const limit = intQuery(ctx.query.limit, DEFAULT_LIMIT, MAX_LIMIT) || DEFAULT_LIMIT;
      const offset = intQuery(ctx.query.offset, 0, Number.MAX_SAFE_INTEGER);
      return { body: listEnvelope(all.slice(offset, offset + limit).map(circuitDetail), { limit, offset, totalCount: all.length }) };
    },
  };
}
