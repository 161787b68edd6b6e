import type { ListRequest, Page, RoleUsage } from './model.js';
import type { UnitOfWork } from './ports.js';

/** The entity types whose role attributes this context lists, with the table that carries them. */
const ENTITY_SOURCES: Record<string, { table: string; where: string; source: string } | null> = {
  service: { table: 'services', where: 'TRUE', source: 'services' },
  'edge-router': { table: 'routers', where: `"kind" = 'edge'`, source: 'edgeRouters' },
  identity: null,
  'posture-check': null,
};

/** Role attribute lists (`/service-role-attributes`, …) and their usage (§1.3, `GetRoleAttributeUsage`). */
export class UsageManager {
  constructor(private readonly uow: UnitOfWork) {}

  /** The attributes carried by services or edge routers; only the filter pages (§4.1 exception). */
  attributes(entityType: 'service' | 'edge-router', filter: string | undefined): Promise<Page<string>> {
    const e = ENTITY_SOURCES[entityType]!;
    return this.uow.repos.usage.attributes(e.table, e.where, filter);
  }

  /** `/service-role-attribute-usage`, `/edge-router-role-attribute-usage`. */
  async usage(entityType: 'service' | 'edge-router', req: ListRequest, withIds: boolean): Promise<Page<RoleUsage>> {
    const e = ENTITY_SOURCES[entityType]!;
    const page = await this.uow.repos.usage.usageAttributes(e.table, e.where, entityType, req);
    const entities = await this.uow.repos.usage.entityUsage(e.table, e.where, page.items);
    const policies = await this.uow.repos.usage.policyUsage(entityType, page.items);
    const items = page.items.map((attr) => {
      const usage: RoleUsage['usage'] = { [e.source]: entry(entities.get(attr), withIds) };
      for (const p of policies) usage[p.source] = entry(p.byAttribute.get(attr), withIds);
      return { roleAttribute: attr, usage };
    });
    return { ...page, items };
  }

  /**
   * Policy usage of attributes for another context's entity type (identity, posture-check,
   * service, edge-router). An empty list means every attribute some policy references.
   */
  async policyUsage(entityType: string, attrs: readonly string[]): Promise<{ attribute: string; sources: Record<string, string[]> }[]> {
    const policies = await this.uow.repos.usage.policyUsage(entityType, attrs.length > 0 ? attrs : 'all');
    const universe = attrs.length > 0 ? [...attrs] : [...new Set(policies.flatMap((p) => [...p.byAttribute.keys()]))].sort();
    return universe.map((attribute) => ({
      attribute,
      sources: Object.fromEntries(policies.map((p) => [p.source, p.byAttribute.get(attribute) ?? []])),
    }));
  }
}

function entry(ids: string[] | undefined, withIds: boolean): { count: number; ids?: string[] } {
  const list = ids ?? [];
  return withIds ? { count: list.length, ids: list } : { count: list.length };
}
