import type { Config, ConfigTarget, ConfigType, ListRequest, Page } from '../domain/model.js';
import type { ConfigRepository, ConfigTypeRepository, NewConfig, NewConfigType, ListScope } from '../domain/ports.js';
import { mapped, obj, type Sql } from './db.js';
import { inIdOrder, listIds } from './list.js';
import { scopeCondition } from './scopes.js';
import { CONFIG_QUERY, CONFIG_TYPE_QUERY } from './query-schemas.js';

const toConfigType = (r: any): ConfigType => ({
  id: r.id,
  name: r.name,
  schema: obj(r.schema),
  target: (r.target ?? null) as ConfigTarget,
  tags: obj(r.tags),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toConfig = (r: any): Config => ({
  id: r.id,
  name: r.name,
  configTypeId: r.config_type_id,
  configTypeName: r.type_name,
  data: obj(r.data),
  tags: obj(r.tags),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export class SqlConfigTypeRepository implements ConfigTypeRepository {
  constructor(private readonly sql: Sql) {}

  async findMany(ids: readonly string[]): Promise<ConfigType[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.sql.query(`SELECT * FROM "config_types" WHERE "id" = ANY($1::text[])`, [ids]);
    return rows.map(toConfigType);
  }

  async find(id: string): Promise<ConfigType | null> {
    return (await this.findMany([id]))[0] ?? null;
  }

  async findByNames(names: readonly string[]): Promise<ConfigType[]> {
    const { rows } = await this.sql.query(`SELECT * FROM "config_types" WHERE "name" = ANY($1::text[])`, [names]);
    return rows.map(toConfigType);
  }

  async list(req: ListRequest, scope?: ListScope): Promise<Page<ConfigType>> {
    const page = await listIds(this.sql, CONFIG_TYPE_QUERY, req, scopeCondition(scope));
    return { ...page, items: inIdOrder(page.ids, await this.findMany(page.ids)) };
  }

  async create(t: NewConfigType): Promise<void> {
    await mapped(
      () =>
        this.sql.query(`INSERT INTO "config_types" ("id", "name", "schema", "target", "tags") VALUES ($1, $2, $3, $4, $5)`, [
          t.id, t.name, JSON.stringify(t.schema), t.target, JSON.stringify(t.tags),
        ]),
      t.name,
    );
  }

  /** Inserts the built-ins that are missing (by id or by name); existing rows are left alone. */
  async ensure(types: readonly NewConfigType[]): Promise<void> {
    for (const t of types) {
      await this.sql.query(
        `INSERT INTO "config_types" ("id", "name", "schema", "target", "tags") SELECT $1, $2, $3, $4, '{}'
         WHERE NOT EXISTS (SELECT 1 FROM "config_types" WHERE "name" = $2) ON CONFLICT ("id") DO NOTHING`,
        [t.id, t.name, JSON.stringify(t.schema), t.target],
      );
    }
  }

  async update(id: string, t: Omit<NewConfigType, 'id'>): Promise<void> {
    await mapped(
      () =>
        this.sql.query(`UPDATE "config_types" SET "name" = $2, "schema" = $3, "target" = $4, "tags" = $5, "updated_at" = now() WHERE "id" = $1`, [
          id, t.name, JSON.stringify(t.schema), t.target, JSON.stringify(t.tags),
        ]),
      t.name,
    );
  }

  async configIds(id: string): Promise<string[]> {
    const { rows } = await this.sql.query(`SELECT "id" FROM "configs" WHERE "config_type_id" = $1 ORDER BY "id"`, [id]);
    return rows.map((r) => r.id);
  }

  async delete(id: string): Promise<void> {
    await this.sql.query(`DELETE FROM "config_types" WHERE "id" = $1`, [id]);
  }
}

const CONFIG_SELECT = `SELECT c.*, t."name" AS type_name FROM "configs" c JOIN "config_types" t ON t."id" = c."config_type_id"`;

export class SqlConfigRepository implements ConfigRepository {
  constructor(private readonly sql: Sql) {}

  async findMany(ids: readonly string[]): Promise<Config[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.sql.query(`${CONFIG_SELECT} WHERE c."id" = ANY($1::text[])`, [ids]);
    return rows.map(toConfig);
  }

  async find(id: string): Promise<Config | null> {
    return (await this.findMany([id]))[0] ?? null;
  }

  async list(req: ListRequest, scope?: ListScope): Promise<Page<Config>> {
    const page = await listIds(this.sql, CONFIG_QUERY, req, scopeCondition(scope));
    return { ...page, items: inIdOrder(page.ids, await this.findMany(page.ids)) };
  }

  async create(c: NewConfig): Promise<void> {
    await mapped(
      () =>
        this.sql.query(`INSERT INTO "configs" ("id", "name", "config_type_id", "data", "tags") VALUES ($1, $2, $3, $4, $5)`, [
          c.id, c.name, c.configTypeId, JSON.stringify(c.data), JSON.stringify(c.tags),
        ]),
      c.name,
    );
  }

  async update(id: string, c: { name: string; data: Record<string, unknown>; tags: Record<string, unknown> }): Promise<void> {
    await mapped(
      () =>
        this.sql.query(`UPDATE "configs" SET "name" = $2, "data" = $3, "tags" = $4, "updated_at" = now() WHERE "id" = $1`, [
          id, c.name, JSON.stringify(c.data), JSON.stringify(c.tags),
        ]),
      c.name,
    );
  }

  async delete(id: string): Promise<void> {
    await this.sql.query(`DELETE FROM "configs" WHERE "id" = $1`, [id]);
  }

  /** Services that use the config, and identities whose overrides use it (for change events). */
  async users(id: string): Promise<{ serviceIds: string[]; overrideIdentityIds: string[] }> {
    const [s, i] = await Promise.all([
      this.sql.query(`SELECT "service_id" AS id FROM "service_configs" WHERE "config_id" = $1`, [id]),
      this.sql.query(`SELECT DISTINCT "identity_id" AS id FROM "identity_service_configs" WHERE "config_id" = $1`, [id]),
    ]);
    return { serviceIds: s.rows.map((r) => r.id), overrideIdentityIds: i.rows.map((r) => r.id) };
  }
}
