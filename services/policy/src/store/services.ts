import type { ListRequest, Page, Service } from '../domain/model.js';
import type { NewService, RenderedService, ServiceRepository, ListScope } from '../domain/ports.js';
import { mapped, obj, type Sql } from './db.js';
import { listRows } from './list.js';
import { scopeCondition } from './scopes.js';
import { SERVICE_QUERY } from './query-schemas.js';

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
