import type { RdmIdentity, RdmSelection, RouterDataModel, RouterDataModelSource } from '../domain/router-data-model.js';
import type { Database } from './db.js';

/** Fields of the posture context's rendering that every kind shares; the rest are the kind's own. */
const COMMON_POSTURE_FIELDS = ['_links', 'createdAt', 'updatedAt', 'id', 'name', 'roleAttributes', 'tags', 'typeId', 'version'];

const CONFIG_TYPES = `SELECT "id", "name" FROM "config_types" WHERE $1::text[] IS NULL OR "id" = ANY($1) ORDER BY "id"`;
const CONFIGS = `SELECT "id", "config_type_id" AS "typeId", "name", "data"::text AS "dataJson" FROM "configs" WHERE $1::text[] IS NULL OR "id" = ANY($1) ORDER BY "id"`;
const SERVICES = `
  SELECT s."id", s."name", s."encryption_required" AS "encryptionRequired",
         coalesce(array_agg(sc."config_id" ORDER BY sc."position") FILTER (WHERE sc."config_id" IS NOT NULL), '{}') AS "configIds"
  FROM "services" s LEFT JOIN "service_configs" sc ON sc."service_id" = s."id"
  WHERE $1::text[] IS NULL OR s."id" = ANY($1)
  GROUP BY s."id" ORDER BY s."id"`;
const SERVICE_POLICIES = `
  SELECT p."id", p."name", p."type" AS "policyType",
         coalesce((SELECT array_agg(l."identity_id" ORDER BY l."identity_id") FROM "sp_identities" l WHERE l."policy_id" = p."id"), '{}') AS "identityIds",
         coalesce((SELECT array_agg(l."service_id" ORDER BY l."service_id") FROM "sp_services" l WHERE l."policy_id" = p."id"), '{}') AS "serviceIds",
         coalesce((SELECT array_agg(l."posture_check_id" ORDER BY l."posture_check_id") FROM "sp_posture_checks" l WHERE l."policy_id" = p."id"), '{}') AS "postureCheckIds"
  FROM "service_policies" p WHERE $1::text[] IS NULL OR p."id" = ANY($1) ORDER BY p."id"`;
const IDENTITIES = `
  SELECT i."id", i."name", i."disabled", i."default_hosting_precedence" AS "defaultHostingPrecedence",
         i."default_hosting_cost" AS "defaultHostingCost", i."service_hosting_precedences" AS "serviceHostingPrecedences",
         i."service_hosting_costs" AS "serviceHostingCosts", i."app_data"::text AS "appDataJson", c."configs"
  FROM "identities" i
  LEFT JOIN (
    SELECT x."identity_id", jsonb_object_agg(x."service_id", x."configs") AS "configs"
    FROM (SELECT "identity_id", "service_id", jsonb_object_agg("config_type_id", "config_id") AS "configs"
          FROM "identity_service_configs" GROUP BY 1, 2) x
    GROUP BY 1) c ON c."identity_id" = i."id"
  WHERE $1::text[] IS NULL OR i."id" = ANY($1)
  ORDER BY i."id"`;
const POSTURE_CHECKS = `
  SELECT "id", "name", "type_id" AS "typeId",
         CASE WHEN jsonb_typeof("detail") = 'object' THEN ("detail" - $1::text[])::text ELSE '{}' END AS "detailJson"
  FROM "posture_checks" WHERE $2::text[] IS NULL OR "id" = ANY($2) ORDER BY "id"`;

/**
 * The router data model in six set-based statements, run in one read-only REPEATABLE READ
 * transaction so every part is of the same instant (the fabric context diffs whole answers).
 */
export class SqlRouterDataModel implements RouterDataModelSource {
  constructor(private readonly db: Database) {}

  model(only?: RdmSelection): Promise<RouterDataModel> {
    // A partial read: each kind's ids (an empty list reads none of that kind); whole: NULL.
    const ids = (k: keyof RdmSelection) => [only ? only[k] : null];
    return this.db.tx(async (sql) => {
      await sql.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      const configTypes = (await sql.query(CONFIG_TYPES, ids('configTypes'))).rows;
      const configs = (await sql.query(CONFIGS, ids('configs'))).rows;
      const services = (await sql.query(SERVICES, ids('services'))).rows;
      const servicePolicies = (await sql.query(SERVICE_POLICIES, ids('servicePolicies'))).rows;
      const identities = (await sql.query(IDENTITIES, ids('identities'))).rows.map(
        (r): RdmIdentity => ({
          id: r.id,
          name: r.name,
          disabled: r.disabled,
          defaultHostingPrecedence: r.defaultHostingPrecedence,
          defaultHostingCost: r.defaultHostingCost,
          serviceHostingPrecedences: r.serviceHostingPrecedences,
          serviceHostingCosts: r.serviceHostingCosts,
          appDataJson: r.appDataJson,
          serviceConfigs: Object.fromEntries(Object.entries((r.configs ?? {}) as Record<string, Record<string, string>>).map(([service, c]) => [service, { configs: c }])),
        }),
      );
      const postureChecks = (await sql.query(POSTURE_CHECKS, [COMMON_POSTURE_FIELDS, ...ids('postureChecks')])).rows;
      return { configTypes, configs, services, servicePolicies, identities, postureChecks };
    });
  }
}
