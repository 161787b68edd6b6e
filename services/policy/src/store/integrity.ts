import type { IdentityRecord, PostureCheckRecord } from '../domain/model.js';
import type { IntegrityStore, LinkDrift, PairDriftRow } from '../domain/integrity-manager.js';
import type { PolicyKind } from '../domain/ports.js';
import type { Sql } from './db.js';
import { ENTITY_TABLES, KINDS, pairDrift } from './evaluation.js';
import { SqlIdentityProjection, SqlPostureCheckProjection } from './projections.js';

/**
 * Read side of the data integrity check: the links each policy's role lists select now, compared
 * with the stored links; the pair counts (`pairDrift`); the projection rows of an id range.
 */
export class SqlIntegrityStore implements IntegrityStore {
  constructor(private readonly sql: Sql) {}

  async linkDrift(kind: PolicyKind, limit: number): Promise<LinkDrift[]> {
    const k = KINDS[kind];
    const out: LinkDrift[] = [];
    for (const side of k.sides) {
      if (out.length >= limit) break;
      const t = ENTITY_TABLES[side.entity];
      const { rows } = await this.sql.query<{ pid: string; eid: string; missing: boolean }>(
        `WITH "exp" AS (
           SELECT p."id" AS policy_id, e."id" AS entity_id
             FROM "${k.table}" p JOIN (SELECT "id", "role_attributes" FROM "${t.table}" WHERE ${t.where}) e
               ON role_match(p."${side.rolesCol}", p."semantic", e."id", e."role_attributes"))
         SELECT coalesce(x.policy_id, l."policy_id") AS pid, coalesce(x.entity_id, l."${side.linkCol}") AS eid,
                (l."policy_id" IS NULL) AS missing
           FROM "exp" x FULL JOIN "${side.link}" l ON l."policy_id" = x.policy_id AND l."${side.linkCol}" = x.entity_id
          WHERE x.policy_id IS NULL OR l."policy_id" IS NULL
          ORDER BY 1, 2 LIMIT $1`,
        [limit - out.length + 1],
      );
      for (const r of rows) out.push({ kind, link: side.link, entity: side.entity, policyId: r.pid, entityId: r.eid, missing: r.missing });
    }
    return out;
  }

  async pairDrift(kind: PolicyKind): Promise<PairDriftRow[]> {
    const k = KINDS[kind];
    return (await pairDrift(this.sql, kind)).map((r) => ({ kind, table: k.pair.table, counters: k.pair.counters, ...r }));
  }

  async identitiesInRange(after: string, until: string): Promise<IdentityRecord[]> {
    const ids = await this.idsInRange('identities', after, until);
    return new SqlIdentityProjection(this.sql).findMany(ids);
  }

  async postureChecksInRange(after: string, until: string): Promise<PostureCheckRecord[]> {
    const ids = await this.idsInRange('posture_checks', after, until);
    return new SqlPostureCheckProjection(this.sql).findMany(ids);
  }

  identity(id: string): Promise<IdentityRecord | null> {
    return new SqlIdentityProjection(this.sql).find(id);
  }

  async postureCheck(id: string): Promise<PostureCheckRecord | null> {
    return (await new SqlPostureCheckProjection(this.sql).findMany([id]))[0] ?? null;
  }

  async allowResync(kind: 'identity' | 'posture-check', id: string, updatedAt: Date): Promise<void> {
    const table = kind === 'identity' ? 'identities' : 'posture_checks';
    await this.sql.query(`DELETE FROM "projection_tombstones" WHERE "kind" = $1 AND "id" = $2`, [kind, id]);
    await this.sql.query(`UPDATE "${table}" SET "updated_at" = LEAST("updated_at", $2) WHERE "id" = $1`, [id, updatedAt]);
  }

  async existingIds(kind: 'service' | 'router', ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const table = kind === 'service' ? 'services' : 'routers';
    const { rows } = await this.sql.query<{ id: string }>(`SELECT "id" FROM "${table}" WHERE "id" = ANY($1::text[])`, [ids]);
    return rows.map((r) => r.id);
  }

  async systemIdentityIds(after: string, limit: number, graceSeconds: number): Promise<string[]> {
    const { rows } = await this.sql.query<{ id: string }>(
      `SELECT "id" FROM "identities" WHERE "is_system" AND "id" COLLATE "C" > $1 AND "created_at" < now() - make_interval(secs => $3)
        ORDER BY "id" COLLATE "C" LIMIT $2`,
      [after, limit, graceSeconds],
    );
    return rows.map((r) => r.id);
  }

  async tunnelerRouters(ids: readonly string[]): Promise<{ id: string; name: string }[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.sql.query<{ id: string; name: string }>(
      `SELECT "id", "name" FROM "routers" WHERE "id" = ANY($1::text[]) AND "kind" = 'edge' AND "is_tunneler_enabled" ORDER BY "id"`,
      [ids],
    );
    return rows;
  }

  async policyIdentities(policyIds: readonly string[]): Promise<string[]> {
    if (policyIds.length === 0) return [];
    const { rows } = await this.sql.query<{ id: string }>(`SELECT DISTINCT "identity_id" AS id FROM "sp_identities" WHERE "policy_id" = ANY($1::text[])`, [policyIds]);
    return rows.map((r) => r.id);
  }

  private async idsInRange(table: string, after: string, until: string): Promise<string[]> {
    const { rows } = await this.sql.query<{ id: string }>(
      `SELECT "id" FROM "${table}" WHERE "id" COLLATE "C" > $1 AND ($2 = '' OR "id" COLLATE "C" <= $2) ORDER BY "id" COLLATE "C"`,
      [after, until],
    );
    return rows.map((r) => r.id);
  }
}
