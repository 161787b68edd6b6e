import type { ListRequest, Page, Service, Terminator } from '../domain/model.js';
import type { NewService, NewTerminator, RenderedService, ServiceRepository, TerminatorRepository, ListScope } from '../domain/ports.js';
import { mapped, obj, type Sql } from './db.js';
import { inIdOrder, listIds, listRows } from './list.js';
import { scopeCondition } from './scopes.js';
import { SERVICE_QUERY, TERMINATOR_QUERY } from './query-schemas.js';

const CONFIGS = `coalesce((SELECT array_agg(c."config_id" ORDER BY c."position") FROM "service_configs" c
  WHERE c."service_id" = s."id"), '{}') AS configs`;
const SERVICE_SELECT = `SELECT s.*, ${CONFIGS} FROM "services" s`;

const ts = (col: string) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const href = (sub: string) => `json_build_object('href', './services/' || s."id"${sub ? ` || '/${sub}'` : ''})`;

/**
 * The static part of `serviceDetail` rendered by PostgreSQL (the client service list renders up to
 * 500 per page on its hot path): everything but `permissions`, `config` and `postureQueries`,
 * which depend on the caller. The same shape as http/views.ts `serviceDetail`.
 */
const SERVICE_JSON = `json_build_object(
  '_links', json_build_object('self', ${href('')}, 'service-edge-router-policies', ${href('service-edge-router-policies')},
    'service-policies', ${href('service-policies')}, 'terminators', ${href('terminators')}, 'configs', ${href('configs')}),
  'createdAt', ${ts('s."created_at"')}, 'id', s."id", 'tags', s."tags", 'updatedAt', ${ts('s."updated_at"')},
  'configs', coalesce((SELECT json_agg(c."config_id" ORDER BY c."position") FROM "service_configs" c WHERE c."service_id" = s."id"), '[]'::json),
  'encryptionRequired', s."encryption_required", 'maxIdleTimeMillis', s."max_idle_time_millis", 'name', s."name",
  'roleAttributes', to_json(s."role_attributes"), 'terminatorStrategy', s."terminator_strategy")::text`;

export const toService = (r: any): Service => ({
  id: r.id,
  name: r.name,
  roleAttributes: r.role_attributes ?? [],
  encryptionRequired: r.encryption_required,
  maxIdleTimeMillis: Number(r.max_idle_time_millis),
  terminatorStrategy: r.terminator_strategy,
  configs: r.configs ?? [],
  tags: obj(r.tags),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export class SqlServiceRepository implements ServiceRepository {
  constructor(private readonly sql: Sql) {}

  async findMany(ids: readonly string[]): Promise<Service[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.sql.query(`${SERVICE_SELECT} WHERE s."id" = ANY($1::text[])`, [ids]);
    return rows.map(toService);
  }

  async listRendered(req: ListRequest, scope?: ListScope): Promise<Page<RenderedService>> {
    const page = await listRows<{ id: string; json: string }>(this.sql, SERVICE_QUERY, req, scopeCondition(scope), (ids) =>
      `SELECT s."id", ${SERVICE_JSON} AS json, p.ord FROM unnest(${ids}) WITH ORDINALITY AS p(id, ord) JOIN "services" s ON s."id" = p.id`,
    );
    return { ...page, items: page.rows.map((r) => ({ id: r.id, json: r.json })) };
  }

  async find(id: string): Promise<Service | null> {
    return (await this.findMany([id]))[0] ?? null;
  }

  async findForUpdate(id: string): Promise<Service | null> {
    const { rowCount } = await this.sql.query(`SELECT 1 FROM "services" WHERE "id" = $1 FOR UPDATE`, [id]);
    return rowCount ? this.find(id) : null;
  }

  async list(req: ListRequest, scope?: ListScope): Promise<Page<Service>> {
    const page = await listRows(this.sql, SERVICE_QUERY, req, scopeCondition(scope), (ids) =>
      `SELECT s.*, ${CONFIGS}, p.ord FROM unnest(${ids}) WITH ORDINALITY AS p(id, ord) JOIN "services" s ON s."id" = p.id`,
    );
    return { ...page, items: page.rows.map(toService) };
  }

  async create(s: NewService): Promise<void> {
    await mapped(
      () =>
        this.sql.query(
          `INSERT INTO "services" ("id", "name", "role_attributes", "encryption_required", "max_idle_time_millis", "terminator_strategy", "tags")
           VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [s.id, s.name, s.roleAttributes, s.encryptionRequired, s.maxIdleTimeMillis, s.terminatorStrategy, JSON.stringify(s.tags)],
        ),
      s.name,
    );
    await this.setConfigs(s.id, s.configs);
  }

  async update(s: NewService): Promise<void> {
    await mapped(
      () =>
        this.sql.query(
          `UPDATE "services" SET "name" = $2, "role_attributes" = $3, "max_idle_time_millis" = $4, "terminator_strategy" = $5,
             "tags" = $6, "updated_at" = now() WHERE "id" = $1`,
          [s.id, s.name, s.roleAttributes, s.maxIdleTimeMillis, s.terminatorStrategy, JSON.stringify(s.tags)],
        ),
      s.name,
    );
    await this.setConfigs(s.id, s.configs);
  }

  private async setConfigs(id: string, configs: readonly { id: string; typeId: string }[]): Promise<void> {
    await this.sql.query(`DELETE FROM "service_configs" WHERE "service_id" = $1`, [id]);
    if (configs.length === 0) return;
    await this.sql.query(
      `INSERT INTO "service_configs" ("service_id", "config_id", "config_type_id", "position")
       SELECT $1, c.id, c.type_id, c.pos FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS c(id, type_id, pos)`,
      [id, configs.map((c) => c.id), configs.map((c) => c.typeId)],
    );
  }

  async delete(id: string): Promise<void> {
    await this.sql.query(`DELETE FROM "services" WHERE "id" = $1`, [id]);
  }

  async identitiesWithAccess(id: string): Promise<string[]> {
    const { rows } = await this.sql.query(`SELECT "identity_id" AS id FROM "identity_services" WHERE "service_id" = $1`, [id]);
    return rows.map((r) => r.id);
  }
}

const TERMINATOR_SELECT = `SELECT t.*, s."name" AS service_name, r."name" AS router_name FROM "terminators" t
  JOIN "services" s ON s."id" = t."service_id" JOIN "routers" r ON r."id" = t."router_id"`;

const toTerminator = (r: any): Terminator => ({
  id: r.id,
  serviceId: r.service_id,
  serviceName: r.service_name,
  routerId: r.router_id,
  routerName: r.router_name,
  binding: r.binding,
  address: r.address,
  identity: r.identity,
  cost: r.cost,
  precedence: r.precedence,
  tags: obj(r.tags),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export class SqlTerminatorRepository implements TerminatorRepository {
  constructor(private readonly sql: Sql) {}

  async findMany(ids: readonly string[]): Promise<Terminator[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.sql.query(`${TERMINATOR_SELECT} WHERE t."id" = ANY($1::text[])`, [ids]);
    return rows.map(toTerminator);
  }

  async find(id: string): Promise<Terminator | null> {
    return (await this.findMany([id]))[0] ?? null;
  }

  async list(req: ListRequest, scope?: ListScope): Promise<Page<Terminator>> {
    const page = await listIds(this.sql, TERMINATOR_QUERY, req, scopeCondition(scope));
    return { ...page, items: inIdOrder(page.ids, await this.findMany(page.ids)) };
  }

  async save(t: NewTerminator, isNew: boolean): Promise<void> {
    const params = [t.id, t.serviceId, t.routerId, t.binding, t.address, t.identity, t.cost, t.precedence, JSON.stringify(t.tags)];
    if (isNew) {
      await this.sql.query(
        `INSERT INTO "terminators" ("id", "service_id", "router_id", "binding", "address", "identity", "cost", "precedence", "tags")
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        params,
      );
    } else {
      await this.sql.query(
        `UPDATE "terminators" SET "service_id" = $2, "router_id" = $3, "binding" = $4, "address" = $5, "identity" = $6, "cost" = $7,
           "precedence" = $8, "tags" = $9, "updated_at" = now() WHERE "id" = $1`,
        params,
      );
    }
  }

  async delete(id: string): Promise<void> {
    await this.sql.query(`DELETE FROM "terminators" WHERE "id" = $1`, [id]);
  }
}
