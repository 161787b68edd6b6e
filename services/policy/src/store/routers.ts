import type { ListRequest, Page, Router, RouterKind } from '../domain/model.js';
import type { NewRouter, RouterRepository, ListScope } from '../domain/ports.js';
import { mapped, obj, type Sql } from './db.js';
import { inIdOrder, listIds } from './list.js';
import { scopeCondition } from './scopes.js';
import { EDGE_ROUTER_QUERY, ROUTER_QUERY, TRANSIT_ROUTER_QUERY } from './query-schemas.js';

const ROUTER_SELECT = `SELECT r.*, coalesce((SELECT array_agg(c."config_id" ORDER BY c."position") FROM "router_configs" c
  WHERE c."router_id" = r."id"), '{}') AS configs FROM "routers" r`;

export const toRouter = (r: any): Router => ({
  id: r.id,
  name: r.name,
  kind: r.kind as RouterKind,
  fingerprint: r.fingerprint ?? null,
  cost: r.cost,
  noTraversal: r.no_traversal,
  disabled: r.disabled,
  ctrlChanListeners: obj(r.ctrl_chan_listeners) as Record<string, string[]>,
  roleAttributes: r.role_attributes ?? [],
  isTunnelerEnabled: r.is_tunneler_enabled,
  appData: obj(r.app_data),
  configs: r.configs ?? [],
  tags: obj(r.tags),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** Which routers a collection shows: /edge-routers the edge ones, /transit-routers the others, /routers all. */
export type RouterView = 'edge' | 'transit' | 'all';
const QUERIES = { edge: EDGE_ROUTER_QUERY, transit: TRANSIT_ROUTER_QUERY, all: ROUTER_QUERY };

export class SqlRouterRepository implements RouterRepository {
  constructor(private readonly sql: Sql) {}

  async findMany(ids: readonly string[]): Promise<Router[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.sql.query(`${ROUTER_SELECT} WHERE r."id" = ANY($1::text[])`, [ids]);
    return rows.map(toRouter);
  }

  async find(id: string): Promise<Router | null> {
    return (await this.findMany([id]))[0] ?? null;
  }

  async list(view: RouterView, req: ListRequest, scope?: ListScope): Promise<Page<Router>> {
    const page = await listIds(this.sql, QUERIES[view], req, scopeCondition(scope));
    return { ...page, items: inIdOrder(page.ids, await this.findMany(page.ids)) };
  }

  async save(r: NewRouter, isNew: boolean): Promise<void> {
    const params = [
      r.id, r.name, r.kind, r.fingerprint, r.cost, r.noTraversal, r.disabled, JSON.stringify(r.ctrlChanListeners), r.roleAttributes,
      r.isTunnelerEnabled, JSON.stringify(r.appData), JSON.stringify(r.tags),
    ];
    await mapped(async () => {
      if (isNew) {
        await this.sql.query(
          `INSERT INTO "routers" ("id", "name", "kind", "fingerprint", "cost", "no_traversal", "disabled", "ctrl_chan_listeners",
             "role_attributes", "is_tunneler_enabled", "app_data", "tags") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
          params,
        );
      } else {
        await this.sql.query(
          `UPDATE "routers" SET "name" = $2, "kind" = $3, "fingerprint" = $4, "cost" = $5, "no_traversal" = $6, "disabled" = $7,
             "ctrl_chan_listeners" = $8, "role_attributes" = $9, "is_tunneler_enabled" = $10, "app_data" = $11, "tags" = $12,
             "updated_at" = now() WHERE "id" = $1`,
          params,
        );
      }
    }, r.name);
    await this.sql.query(`DELETE FROM "router_configs" WHERE "router_id" = $1`, [r.id]);
    if (r.configs.length > 0) {
      await this.sql.query(
        `INSERT INTO "router_configs" ("router_id", "config_id", "position") SELECT $1, c.id, c.pos FROM unnest($2::text[]) WITH ORDINALITY AS c(id, pos)`,
        [r.id, r.configs],
      );
    }
  }

  async delete(id: string): Promise<void> {
    await this.sql.query(`DELETE FROM "routers" WHERE "id" = $1`, [id]);
  }
}
