import type { EdgeRouterPolicy, ListRequest, Page, ServiceEdgeRouterPolicy, ServicePolicy } from '../domain/model.js';
import type { PolicyRepository, ListScope } from '../domain/ports.js';
import type { Semantic } from '../domain/roles.js';
import { mapped, obj, type Sql } from './db.js';
import type { PolicyKind } from './evaluation.js';
import { inIdOrder, listIds } from './list.js';
import { scopeCondition } from './scopes.js';
import { EDGE_ROUTER_POLICY_QUERY, SERVICE_EDGE_ROUTER_POLICY_QUERY, SERVICE_POLICY_QUERY } from './query-schemas.js';

const common = (r: any) => ({
  id: r.id,
  name: r.name,
  semantic: r.semantic as Semantic,
  tags: obj(r.tags),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const MAPPERS = {
  sp: (r: any): ServicePolicy => ({
    ...common(r),
    type: r.type,
    identityRoles: r.identity_roles ?? [],
    serviceRoles: r.service_roles ?? [],
    postureCheckRoles: r.posture_check_roles ?? [],
  }),
  erp: (r: any): EdgeRouterPolicy => ({
    ...common(r),
    identityRoles: r.identity_roles ?? [],
    edgeRouterRoles: r.edge_router_roles ?? [],
    isSystem: r.is_system,
  }),
  serp: (r: any): ServiceEdgeRouterPolicy => ({
    ...common(r),
    serviceRoles: r.service_roles ?? [],
    edgeRouterRoles: r.edge_router_roles ?? [],
  }),
};

export interface PolicyTypes {
  sp: ServicePolicy;
  erp: EdgeRouterPolicy;
  serp: ServiceEdgeRouterPolicy;
}

const TABLE = { sp: 'service_policies', erp: 'edge_router_policies', serp: 'service_edge_router_policies' } as const;
const QUERY = { sp: SERVICE_POLICY_QUERY, erp: EDGE_ROUTER_POLICY_QUERY, serp: SERVICE_EDGE_ROUTER_POLICY_QUERY } as const;
/** Columns written from the domain object (camelCase field → column). */
const COLUMNS: Record<PolicyKind, [string, string][]> = {
  sp: [['name', 'name'], ['type', 'type'], ['semantic', 'semantic'], ['identityRoles', 'identity_roles'], ['serviceRoles', 'service_roles'], ['postureCheckRoles', 'posture_check_roles']],
  erp: [['name', 'name'], ['semantic', 'semantic'], ['identityRoles', 'identity_roles'], ['edgeRouterRoles', 'edge_router_roles'], ['isSystem', 'is_system']],
  serp: [['name', 'name'], ['semantic', 'semantic'], ['serviceRoles', 'service_roles'], ['edgeRouterRoles', 'edge_router_roles']],
};

export class SqlPolicyRepository<K extends PolicyKind> implements PolicyRepository<PolicyTypes[K]> {
  constructor(
    private readonly sql: Sql,
    private readonly kind: K,
  ) {}

  async findMany(ids: readonly string[]): Promise<PolicyTypes[K][]> {
    if (ids.length === 0) return [];
    const { rows } = await this.sql.query(`SELECT * FROM "${TABLE[this.kind]}" WHERE "id" = ANY($1::text[])`, [ids]);
    return rows.map(MAPPERS[this.kind] as (r: any) => PolicyTypes[K]);
  }

  async find(id: string): Promise<PolicyTypes[K] | null> {
    return (await this.findMany([id]))[0] ?? null;
  }

  async list(req: ListRequest, scope?: ListScope): Promise<Page<PolicyTypes[K]>> {
    const page = await listIds(this.sql, QUERY[this.kind], req, scopeCondition(scope));
    return { ...page, items: inIdOrder(page.ids, await this.findMany(page.ids)) };
  }

  async save(p: PolicyTypes[K], isNew: boolean): Promise<void> {
    const cols = COLUMNS[this.kind];
    const values = cols.map(([f]) => (p as unknown as Record<string, unknown>)[f]);
    await mapped(async () => {
      if (isNew) {
        const names = ['id', ...cols.map(([, c]) => c), 'tags'];
        await this.sql.query(
          `INSERT INTO "${TABLE[this.kind]}" (${names.map((n) => `"${n}"`).join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')})`,
          [p.id, ...values, JSON.stringify(p.tags)],
        );
      } else {
        await this.sql.query(
          `UPDATE "${TABLE[this.kind]}" SET ${cols.map(([, c], i) => `"${c}" = $${i + 2}`).join(', ')}, "tags" = $${cols.length + 2},
             "updated_at" = now() WHERE "id" = $1`,
          [p.id, ...values, JSON.stringify(p.tags)],
        );
      }
    }, p.name);
  }

  async delete(id: string): Promise<void> {
    await this.sql.query(`DELETE FROM "${TABLE[this.kind]}" WHERE "id" = $1`, [id]);
  }

  /** Policies whose role lists name `@<id>` in one of the columns (for reference clean-up). */
  async referencing(id: string, columns: readonly string[]): Promise<PolicyTypes[K][]> {
    const { rows } = await this.sql.query(
      `SELECT * FROM "${TABLE[this.kind]}" WHERE ${columns.map((c) => `$1 = ANY("${c}")`).join(' OR ')}`,
      [`@${id}`],
    );
    return rows.map(MAPPERS[this.kind] as (r: any) => PolicyTypes[K]);
  }
}

/** Strips `@<id>` from the given role columns of every policy of a kind (the entity is gone). */
export async function removeIdReferences(sql: Sql, kind: PolicyKind, id: string, columns: readonly string[]): Promise<void> {
  for (const c of columns) {
    await sql.query(`UPDATE "${TABLE[kind]}" SET "${c}" = array_remove("${c}", $1), "updated_at" = now() WHERE $1 = ANY("${c}")`, [`@${id}`]);
  }
}
