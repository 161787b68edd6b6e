import type { ListRequest, Page } from './model.js';
import type { PolicyContext, PolicyUsage, Repositories } from './ports.js';

/** Usage of one identity role attribute: by identities, service policies and edge-router policies. */
export interface RoleAttributeUsage {
  roleAttribute: string;
  /** Ids when requested (`withIds`), else counts. */
  identities: string[] | number;
  servicePolicies: string[] | number;
  edgeRouterPolicies: string[] | number;
  /** False when the policy context could not be asked (its counts are then 0). */
  policyCountsKnown: boolean;
}

/**
 * The role-attribute lists of identities (§4.1 exception): only the filter applies (symbol `id`,
 * the attribute itself; its `sort by`/`skip`/`limit` included); the `limit`/`offset` parameters are
 * ignored and there is no default limit.
 */
export class RoleAttributeQueries {
  constructor(
    private readonly repos: Repositories,
    private readonly policy: PolicyContext,
  ) {}

  list(req: ListRequest): Promise<Page<string>> {
    return this.repos.identities.listRoleAttributes(filterOnly(req));
  }

  /**
   * `/identity-role-attribute-usage`: the attributes identities carry or policies reference, each
   * with its per-source usage. Policy counts come from the policy context; when it is unavailable
   * they are 0 and `policyCountsKnown` is false.
   */
  async usage(req: ListRequest, withIds: boolean): Promise<Page<RoleAttributeUsage>> {
    const referenced = await this.policy.roleAttributeUsage([], withIds);
    const page = await this.repos.identities.listRoleAttributes(filterOnly(req), referenced ? [...referenced.keys()] : []);
    const byPolicy = new Map(referenced ?? []);
    const missing = page.items.filter((a) => !byPolicy.has(a));
    if (referenced && missing.length > 0) {
      for (const [k, v] of (await this.policy.roleAttributeUsage(missing, withIds)) ?? []) byPolicy.set(k, v);
    }
    const holders = await this.repos.identities.idsByRoleAttribute(page.items);
    const none: PolicyUsage = { servicePolicies: withIds ? [] : 0, edgeRouterPolicies: withIds ? [] : 0 };
    const items = page.items.map((roleAttribute): RoleAttributeUsage => {
      const ids = holders.get(roleAttribute) ?? [];
      const p = byPolicy.get(roleAttribute) ?? none;
      return { roleAttribute, identities: withIds ? ids : ids.length, ...p, policyCountsKnown: referenced !== null };
    });
    return { ...page, items };
  }
}

function filterOnly(req: ListRequest): ListRequest {
  return { filter: req.filter, limit: '-1' };
}
