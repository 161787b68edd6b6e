import type { IdentityRecord, ListRequest, Page, PostureCheckRecord } from '../domain/model.js';
import type { IdentityProjection, PostureCheckProjection, ProjectedIdentity, ProjectedPostureCheck, UpsertResult, ListScope } from '../domain/ports.js';
import { obj, type Sql } from './db.js';
import { inIdOrder, listIds } from './list.js';
import { scopeCondition } from './scopes.js';
import { IDENTITY_QUERY, POSTURE_CHECK_QUERY } from './query-schemas.js';

const toIdentity = (r: any): IdentityRecord => ({
  id: r.id,
  name: r.name,
  roleAttributes: r.role_attributes ?? [],
  isAdmin: r.is_admin,
  isDefaultAdmin: r.is_default_admin,
  disabled: r.disabled,
  typeId: r.type_id,
  externalId: r.external_id ?? null,
  authPolicyId: r.auth_policy_id,
  isSystem: r.is_system,
  tags: obj(r.tags),
  defaultHostingPrecedence: r.default_hosting_precedence,
  defaultHostingCost: r.default_hosting_cost,
  serviceHostingPrecedences: obj(r.service_hosting_precedences) as Record<string, string>,
  serviceHostingCosts: obj(r.service_hosting_costs) as Record<string, number>,
  appData: obj(r.app_data),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toPostureCheck = (r: any): PostureCheckRecord => ({
  id: r.id,
  name: r.name,
  typeId: r.type_id,
  roleAttributes: r.role_attributes ?? [],
  version: Number(r.version),
  detail: r.detail ?? null,
  tags: obj(r.tags),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/**
 * Upserts a projected row unless a newer version (or a newer tombstone) is already stored.
 * Returns whether it was applied and the attributes before (null for a new row).
 */
async function upsertIfNewer(sql: Sql, kind: string, table: string, cols: string[], values: unknown[], updatedAt: Date): Promise<UpsertResult> {
  const tomb = await sql.query(`SELECT 1 FROM "projection_tombstones" WHERE "kind" = $1 AND "id" = $2 AND "updated_at" > $3`, [kind, values[0], updatedAt]);
  if (tomb.rowCount) return { applied: false, previousAttributes: null };
  const before = await sql.query(`SELECT "role_attributes", "updated_at" FROM "${table}" WHERE "id" = $1 FOR UPDATE`, [values[0]]);
  const prev = before.rows[0];
  if (prev && prev.updated_at > updatedAt) return { applied: false, previousAttributes: prev.role_attributes };
  const all = [...cols, 'updated_at'];
  const params = [...values, updatedAt];
  await sql.query(
    `INSERT INTO "${table}" (${all.map((c) => `"${c}"`).join(', ')}) VALUES (${all.map((_, i) => `$${i + 1}`).join(', ')})
     ON CONFLICT ("id") DO UPDATE SET ${all.slice(1).map((c) => `"${c}" = EXCLUDED."${c}"`).join(', ')}`,
    params,
  );
  await sql.query(`DELETE FROM "projection_tombstones" WHERE "kind" = $1 AND "id" = $2`, [kind, values[0]]);
  return { applied: true, previousAttributes: prev ? prev.role_attributes : null };
}

async function deleteWithTombstone(sql: Sql, kind: string, table: string, id: string, at: Date): Promise<boolean> {
  const before = await sql.query(`SELECT "updated_at" FROM "${table}" WHERE "id" = $1 FOR UPDATE`, [id]);
  const prev = before.rows[0];
  if (prev && prev.updated_at > at) return false;
  await sql.query(
    `INSERT INTO "projection_tombstones" ("kind", "id", "updated_at") VALUES ($1, $2, $3)
     ON CONFLICT ("kind", "id") DO UPDATE SET "updated_at" = GREATEST("projection_tombstones"."updated_at", EXCLUDED."updated_at")`,
    [kind, id, at],
  );
  const r = await sql.query(`DELETE FROM "${table}" WHERE "id" = $1`, [id]);
  return (r.rowCount ?? 0) > 0;
}

export class SqlIdentityProjection implements IdentityProjection {
  constructor(private readonly sql: Sql) {}

  async findMany(ids: readonly string[]): Promise<IdentityRecord[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.sql.query(`SELECT * FROM "identities" WHERE "id" = ANY($1::text[])`, [ids]);
    return rows.map(toIdentity);
  }

  async find(id: string): Promise<IdentityRecord | null> {
    return (await this.findMany([id]))[0] ?? null;
  }

  async list(req: ListRequest, scope?: ListScope): Promise<Page<IdentityRecord>> {
    const page = await listIds(this.sql, IDENTITY_QUERY, req, scopeCondition(scope));
    return { ...page, items: inIdOrder(page.ids, await this.findMany(page.ids)) };
  }

  upsert(i: ProjectedIdentity): Promise<UpsertResult> {
    return upsertIfNewer(
      this.sql,
      'identity',
      'identities',
      [
        'id', 'name', 'role_attributes', 'is_admin', 'is_default_admin', 'disabled', 'type_id', 'external_id', 'auth_policy_id', 'is_system', 'tags',
        'default_hosting_precedence', 'default_hosting_cost', 'service_hosting_precedences', 'service_hosting_costs', 'app_data', 'created_at',
      ],
      [
        i.id, i.name, i.roleAttributes, i.isAdmin, i.isDefaultAdmin, i.disabled, i.typeId, i.externalId, i.authPolicyId, i.isSystem, JSON.stringify(i.tags),
        i.defaultHostingPrecedence, i.defaultHostingCost, JSON.stringify(i.serviceHostingPrecedences), JSON.stringify(i.serviceHostingCosts), JSON.stringify(i.appData), i.createdAt,
      ],
      i.updatedAt,
    );
  }

  delete(id: string, at: Date): Promise<boolean> {
    return deleteWithTombstone(this.sql, 'identity', 'identities', id, at);
  }
}

export class SqlPostureCheckProjection implements PostureCheckProjection {
  constructor(private readonly sql: Sql) {}

  async findMany(ids: readonly string[]): Promise<PostureCheckRecord[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.sql.query(`SELECT * FROM "posture_checks" WHERE "id" = ANY($1::text[])`, [ids]);
    return rows.map(toPostureCheck);
  }

  async list(req: ListRequest, scope?: ListScope): Promise<Page<PostureCheckRecord>> {
    const page = await listIds(this.sql, POSTURE_CHECK_QUERY, req, scopeCondition(scope));
    return { ...page, items: inIdOrder(page.ids, await this.findMany(page.ids)) };
  }

  async any(): Promise<boolean> {
    return ((await this.sql.query(`SELECT 1 FROM "posture_checks" LIMIT 1`)).rowCount ?? 0) > 0;
  }

  upsert(c: ProjectedPostureCheck): Promise<UpsertResult> {
    return upsertIfNewer(
      this.sql,
      'posture-check',
      'posture_checks',
      ['id', 'name', 'type_id', 'role_attributes', 'version', 'detail', 'tags', 'created_at'],
      [c.id, c.name, c.typeId, c.roleAttributes, c.version, c.detail === null ? null : JSON.stringify(c.detail), JSON.stringify(c.tags), c.createdAt],
      c.updatedAt,
    );
  }

  delete(id: string, at: Date): Promise<boolean> {
    return deleteWithTombstone(this.sql, 'posture-check', 'posture_checks', id, at);
  }
}
