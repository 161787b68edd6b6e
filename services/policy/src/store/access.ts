import { prepared } from '@ziti/db-kit';
import type { PolicyType, Router } from '../domain/model.js';
import type { AccessReader, ServiceConfigOverride, ServiceConfigRepository } from '../domain/ports.js';
import type { Sql } from './db.js';
import { toRouter } from './routers.js';

/**
 * The indexed reads behind an identity's view (client service list, session create, policy
 * advice): everything here is a lookup in the denormalised pair and link tables.
 */

/**
 * Session create's access lookup (its hot path), for a batch of (identity, service) pairs: row `n`
 * answers pair `n` (no row: no such service). Prepared: planning costs ten times its execution.
 * The pairs come as one jsonb array, not as arrays to `unnest`: the planner estimates the row count
 * of `unnest` from the actual arrays, so every execution's custom plan looked cheaper than the
 * generic one and PostgreSQL planned the statement again each time; `jsonb_to_recordset` has a
 * fixed estimate, so the generic plan is kept after the first few executions.
 * That estimate (100 rows) also made the generic plan hash whole tables: every execution scanned
 * all services and, per pair, all service policies. A batch holds a few pairs, so each row is
 * looked up by its key instead: `OFFSET 0` keeps the planner from flattening those subqueries
 * back into hash joins (a third less time per batch on the benchmark's data set).
 */
const SERVICE_ACCESS = `SELECT q."n", s."name", x."dial", x."bind",
         CASE WHEN x."identity_id" IS NULL THEN '[]'::json ELSE coalesce((
           SELECT json_agg(json_build_object('policyId', p."id", 'type', p."type", 'postureCheckIds',
             coalesce((SELECT array_agg(pc."posture_check_id" ORDER BY pc."posture_check_id") FROM "sp_posture_checks" pc WHERE pc."policy_id" = p."id"), '{}')) ORDER BY p."id")
           FROM (SELECT spi."policy_id" FROM "sp_identities" spi JOIN "sp_services" sps ON sps."policy_id" = spi."policy_id" AND sps."service_id" = s."id"
                 WHERE spi."identity_id" = q."identity_id" OFFSET 0) m
           JOIN LATERAL (SELECT "id", "type" FROM "service_policies" WHERE "id" = m."policy_id" OFFSET 0) p ON true), '[]') END AS policies,
         CASE WHEN x."identity_id" IS NULL THEN '[]'::json ELSE coalesce((
           SELECT json_agg(json_build_object('id', r."id", 'name', r."name", 'cost', r."cost", 'noTraversal', r."no_traversal", 'disabled', r."disabled") ORDER BY r."id")
           FROM "identity_edge_routers" ier JOIN "service_edge_routers" ser ON ser."router_id" = ier."router_id" AND ser."service_id" = s."id"
           JOIN "routers" r ON r."id" = ier."router_id" WHERE ier."identity_id" = q."identity_id"), '[]') END AS routers
       FROM jsonb_to_recordset($1::jsonb) AS q("n" int, "identity_id" text, "service_id" text)
       JOIN LATERAL (SELECT "id", "name" FROM "services" WHERE "id" = q."service_id" OFFSET 0) s ON true
       LEFT JOIN "identity_services" x ON x."service_id" = s."id" AND x."identity_id" = q."identity_id"`;

const POSTURE_CHECK_SERVICES = `SELECT s."id", s."name", array_agg(DISTINCT pc."posture_check_id" ORDER BY pc."posture_check_id") AS checks
       FROM "sp_identities" spi
       JOIN "sp_posture_checks" pc ON pc."policy_id" = spi."policy_id" AND pc."posture_check_id" = ANY($2::text[])
       JOIN "sp_services" sps ON sps."policy_id" = spi."policy_id" JOIN "services" s ON s."id" = sps."service_id"
       WHERE spi."identity_id" = $1 GROUP BY s."id", s."name" ORDER BY s."id"`;

export class SqlAccessReader implements AccessReader {
  constructor(private readonly sql: Sql) {}

  async permissions(identityId: string, serviceIds: readonly string[]): Promise<Map<string, { dial: boolean; bind: boolean }>> {
    const out = new Map<string, { dial: boolean; bind: boolean }>();
    if (serviceIds.length === 0) return out;
    const { rows } = await this.sql.query(
      `SELECT "service_id", "dial", "bind" FROM "identity_services" WHERE "identity_id" = $1 AND "service_id" = ANY($2::text[])`,
      [identityId, serviceIds],
    );
    for (const r of rows) out.set(r.service_id, { dial: r.dial > 0, bind: r.bind > 0 });
    return out;
  }

  async configData(
    identityId: string | null,
    serviceIds: readonly string[],
    types: 'all' | readonly string[],
  ): Promise<Map<string, Record<string, Record<string, unknown>>>> {
    const out = new Map<string, Record<string, Record<string, unknown>>>();
    if (serviceIds.length === 0 || (types !== 'all' && types.length === 0)) return out;
    const all = types === 'all';
    const { rows } = await this.sql.query(
      `SELECT x.service_id, t."name" AS type_name, c."data", x.pri FROM (
         SELECT sc."service_id", sc."config_id", sc."config_type_id", 0 AS pri FROM "service_configs" sc WHERE sc."service_id" = ANY($1::text[])
         UNION ALL
         SELECT o."service_id", o."config_id", o."config_type_id", 1 AS pri FROM "identity_service_configs" o
           WHERE o."identity_id" = $2 AND o."service_id" = ANY($1::text[])
       ) x JOIN "configs" c ON c."id" = x."config_id" JOIN "config_types" t ON t."id" = x."config_type_id"
       WHERE $3 OR x."config_type_id" = ANY($4::text[]) ORDER BY x.pri`,
      [serviceIds, identityId, all, all ? [] : types],
    );
    for (const r of rows) {
      const m = out.get(r.service_id) ?? {};
      m[r.type_name] = r.data ?? {};
      out.set(r.service_id, m);
    }
    return out;
  }

  async policiesFor(identityId: string, serviceIds: readonly string[]) {
    if (serviceIds.length === 0) return [];
    const { rows } = await this.sql.query(
      `SELECT sps."service_id", p."id", p."type",
              coalesce((SELECT array_agg(pc."posture_check_id" ORDER BY pc."posture_check_id") FROM "sp_posture_checks" pc WHERE pc."policy_id" = p."id"), '{}') AS checks
       FROM "sp_identities" spi JOIN "sp_services" sps ON sps."policy_id" = spi."policy_id"
       JOIN "service_policies" p ON p."id" = spi."policy_id"
       WHERE spi."identity_id" = $1 AND sps."service_id" = ANY($2::text[]) ORDER BY p."id"`,
      [identityId, serviceIds],
    );
    return rows.map((r) => ({ serviceId: r.service_id as string, policyId: r.id as string, type: r.type as PolicyType, postureCheckIds: r.checks as string[] }));
  }

  async sharedEdgeRouters(identityId: string, serviceId: string): Promise<Router[]> {
    const { rows } = await this.sql.query(
      `SELECT r.*, '{}'::text[] AS configs FROM "identity_edge_routers" ier
       JOIN "service_edge_routers" ser ON ser."router_id" = ier."router_id" AND ser."service_id" = $2
       JOIN "routers" r ON r."id" = ier."router_id" WHERE ier."identity_id" = $1 ORDER BY r."id"`,
      [identityId, serviceId],
    );
    return rows.map(toRouter);
  }

  /** Everything session create needs, for many (identity, service) pairs in one statement (the session context's hot path). */
  async serviceAccess(pairs: readonly { identityId: string; serviceId: string }[]) {
    if (pairs.length === 0) return [];
    const input = JSON.stringify(pairs.map((p, i) => ({ n: i + 1, identity_id: p.identityId, service_id: p.serviceId })));
    const { rows } = await this.sql.query(prepared(SERVICE_ACCESS, [input]));
    const byN = new Map(rows.map((r) => [Number(r.n), r]));
    return pairs.map(({ serviceId }, i) => {
      const r = byN.get(i + 1);
      if (!r) return null;
      return {
        serviceName: r.name as string,
        dial: (r.dial ?? 0) > 0,
        bind: (r.bind ?? 0) > 0,
        policies: (r.policies as { policyId: string; type: PolicyType; postureCheckIds: string[] }[]).map((p) => ({ ...p, serviceId })),
        edgeRouters: r.routers as { id: string; name: string; cost: number; noTraversal: boolean; disabled: boolean }[],
      };
    });
  }

  async postureCheckServices(identityId: string, checkIds: readonly string[]) {
    if (checkIds.length === 0) return [];
    const { rows } = await this.sql.query(prepared(POSTURE_CHECK_SERVICES, [identityId, checkIds]));
    return rows.map((r) => ({ id: r.id as string, name: r.name as string, postureCheckIds: r.checks as string[] }));
  }

  async counts(identityId: string, serviceId: string): Promise<{ identityRouters: number; serviceRouters: number }> {
    const { rows } = await this.sql.query(
      `SELECT (SELECT count(*) FROM "identity_edge_routers" WHERE "identity_id" = $1)::int AS i,
              (SELECT count(*) FROM "service_edge_routers" WHERE "service_id" = $2)::int AS s`,
      [identityId, serviceId],
    );
    return { identityRouters: rows[0].i, serviceRouters: rows[0].s };
  }
}

export class SqlServiceConfigRepository implements ServiceConfigRepository {
  constructor(private readonly sql: Sql) {}

  async list(identityId: string): Promise<ServiceConfigOverride[]> {
    const { rows } = await this.sql.query(
      `SELECT o."service_id", s."name" AS service_name, o."config_id", c."name" AS config_name FROM "identity_service_configs" o
       JOIN "services" s ON s."id" = o."service_id" JOIN "configs" c ON c."id" = o."config_id"
       WHERE o."identity_id" = $1 ORDER BY o."service_id", o."config_id"`,
      [identityId],
    );
    return rows.map((r) => ({ serviceId: r.service_id, serviceName: r.service_name, configId: r.config_id, configName: r.config_name }));
  }

  async assign(identityId: string, items: readonly { serviceId: string; configId: string; configTypeId: string }[]): Promise<void> {
    if (items.length === 0) return;
    await this.sql.query(
      `INSERT INTO "identity_service_configs" ("identity_id", "service_id", "config_type_id", "config_id")
       SELECT $1, x.s, x.t, x.c FROM unnest($2::text[], $3::text[], $4::text[]) AS x(s, t, c)
       ON CONFLICT ("identity_id", "service_id", "config_type_id") DO UPDATE SET "config_id" = EXCLUDED."config_id"`,
      [identityId, items.map((i) => i.serviceId), items.map((i) => i.configTypeId), items.map((i) => i.configId)],
    );
  }

  async remove(identityId: string, items: readonly { serviceId: string; configId: string }[] | 'all'): Promise<void> {
    if (items === 'all') {
      await this.sql.query(`DELETE FROM "identity_service_configs" WHERE "identity_id" = $1`, [identityId]);
      return;
    }
    if (items.length === 0) return;
    await this.sql.query(
      `DELETE FROM "identity_service_configs" o USING unnest($2::text[], $3::text[]) AS x(s, c)
       WHERE o."identity_id" = $1 AND o."service_id" = x.s AND o."config_id" = x.c`,
      [identityId, items.map((i) => i.serviceId), items.map((i) => i.configId)],
    );
  }
}
