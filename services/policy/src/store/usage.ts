import { compileListQuery, filterableFields } from '@ziti/http-kit';
import type { ListRequest, Page } from '../domain/model.js';
import type { UsageReader, UsageSource } from '../domain/ports.js';
import type { Sql } from './db.js';
import { roleAttributeQuery } from './query-schemas.js';

/** Where a `#attr` of each entity type may be referenced: policy table and role column, by usage source. */
export const POLICY_SOURCES: Record<string, Record<string, { table: string; column: string }>> = {
  identity: {
    servicePolicies: { table: 'service_policies', column: 'identity_roles' },
    edgeRouterPolicies: { table: 'edge_router_policies', column: 'identity_roles' },
  },
  service: {
    servicePolicies: { table: 'service_policies', column: 'service_roles' },
    serviceEdgeRouterPolicies: { table: 'service_edge_router_policies', column: 'service_roles' },
  },
  'edge-router': {
    edgeRouterPolicies: { table: 'edge_router_policies', column: 'edge_router_roles' },
    serviceEdgeRouterPolicies: { table: 'service_edge_router_policies', column: 'edge_router_roles' },
  },
  'posture-check': {
    servicePolicies: { table: 'service_policies', column: 'posture_check_roles' },
  },
};

/** Role attribute lists and their usage (`/service-role-attributes`, `/…-role-attribute-usage`). */
export class SqlUsageReader implements UsageReader {
  constructor(private readonly sql: Sql) {}

  /** The distinct attributes of an entity table, filtered as `id` (§4.1 exception: only the filter pages). */
  async attributes(table: string, where: string, filter: string | undefined): Promise<Page<string>> {
    return this.page(roleAttributeQuery(table, where), { filter, limit: '-1' });
  }

  /**
   * The attribute universe of a usage list: attributes the entities carry and `#attr`s the
   * policies reference, filtered and paged as a normal list over the symbol `id`.
   */
  async usageAttributes(entityTable: string | null, where: string, entityType: string, req: ListRequest): Promise<Page<string>> {
    const parts = Object.values(POLICY_SOURCES[entityType] ?? {}).map(
      (s) => `SELECT substr(r, 2) AS "id" FROM "${s.table}", unnest("${s.column}") AS r WHERE left(r, 1) = '#' AND r <> '#all'`,
    );
    if (entityTable) parts.push(`SELECT unnest("role_attributes") AS "id" FROM "${entityTable}" WHERE ${where}`);
    const schema = { ...roleAttributeQuery('x'), table: `(SELECT DISTINCT "id" FROM (${parts.join(' UNION ')}) u)` };
    return this.page(schema, req);
  }

  private async page(schema: ReturnType<typeof roleAttributeQuery>, req: ListRequest): Promise<Page<string>> {
    const q = compileListQuery(req, schema, { alias: 'e' });
    const paging = `${q.limit !== null ? `LIMIT ${q.limit}` : ''} ${q.offset > 0 ? `OFFSET ${q.offset}` : ''}`;
    const from = `FROM ${schema.table} AS "e" WHERE ${q.where}`;
    const [rows, count] = await Promise.all([
      this.sql.query<{ id: string }>(`SELECT "e"."id" ${from} ORDER BY ${q.orderBy} ${paging}`, q.params),
      this.sql.query<{ n: string }>(`SELECT count(*) AS n ${from}`, q.params),
    ]);
    return {
      items: rows.rows.map((r) => r.id),
      totalCount: Number(count.rows[0]?.n ?? 0),
      limit: q.pagination.limit,
      offset: q.pagination.offset,
      filterableFields: filterableFields(schema),
    };
  }

  /** For each attribute, the ids of the entities carrying it (entity source). */
  async entityUsage(table: string, where: string, attrs: readonly string[]): Promise<Map<string, string[]>> {
    const { rows } = await this.sql.query(
      `SELECT a AS attr, array_agg(e."id" ORDER BY e."id") AS ids FROM "${table}" e, unnest(e."role_attributes") AS a
       WHERE (${where}) AND a = ANY($1::text[]) GROUP BY a`,
      [attrs],
    );
    return new Map(rows.map((r) => [r.attr as string, r.ids as string[]]));
  }

  /** For each attribute, the ids of the policies referencing `#attr` from each source of the entity type. */
  async policyUsage(entityType: string, attrs: readonly string[] | 'all'): Promise<UsageSource[]> {
    const out: UsageSource[] = [];
    for (const [source, s] of Object.entries(POLICY_SOURCES[entityType] ?? {})) {
      const { rows } = await this.sql.query(
        `SELECT substr(r, 2) AS attr, array_agg(p."id" ORDER BY p."id") AS ids FROM "${s.table}" p, unnest(p."${s.column}") AS r
         WHERE left(r, 1) = '#' AND r <> '#all' AND ($1 OR substr(r, 2) = ANY($2::text[])) GROUP BY 1`,
        [attrs === 'all', attrs === 'all' ? [] : attrs],
      );
      out.push({ source, byAttribute: new Map(rows.map((r) => [r.attr as string, r.ids as string[]])) });
    }
    return out;
  }
}
