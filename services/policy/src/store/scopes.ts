import type { LinkName, ListScope } from '../domain/ports.js';
import { type Condition, shift } from './list.js';

/** Link table, the owner's column and the listed entity's column, per named association. */
const LINKS: Record<LinkName, [table: string, owner: string, listed: string]> = {
  'sp-identities': ['sp_identities', 'policy_id', 'identity_id'],
  'sp-services': ['sp_services', 'policy_id', 'service_id'],
  'sp-posture-checks': ['sp_posture_checks', 'policy_id', 'posture_check_id'],
  'erp-identities': ['erp_identities', 'policy_id', 'identity_id'],
  'erp-edge-routers': ['erp_edge_routers', 'policy_id', 'router_id'],
  'serp-services': ['serp_services', 'policy_id', 'service_id'],
  'serp-edge-routers': ['serp_edge_routers', 'policy_id', 'router_id'],
  'identity-sps': ['sp_identities', 'identity_id', 'policy_id'],
  'identity-erps': ['erp_identities', 'identity_id', 'policy_id'],
  'service-sps': ['sp_services', 'service_id', 'policy_id'],
  'service-serps': ['serp_services', 'service_id', 'policy_id'],
  'router-erps': ['erp_edge_routers', 'router_id', 'policy_id'],
  'router-serps': ['serp_edge_routers', 'router_id', 'policy_id'],
  'identity-edge-routers': ['identity_edge_routers', 'identity_id', 'router_id'],
  'service-edge-routers': ['service_edge_routers', 'service_id', 'router_id'],
  'router-identities': ['identity_edge_routers', 'router_id', 'identity_id'],
  'router-services': ['service_edge_routers', 'router_id', 'service_id'],
  'config-services': ['service_configs', 'config_id', 'service_id'],
  'service-configs': ['service_configs', 'service_id', 'config_id'],
  'config-type-configs': ['configs', 'config_type_id', 'id'],
  'service-terminators': ['terminators', 'service_id', 'id'],
};

/** A list scope as SQL over alias "e" (placeholders from $1). */
export function scopeCondition(scope: ListScope | undefined): Condition | undefined {
  if (!scope) return undefined;
  switch (scope.of) {
    case 'linked': {
      const [table, owner, listed] = LINKS[scope.link];
      return { sql: `"e"."id" IN (SELECT x."${listed}" FROM "${table}" x WHERE x."${owner}" = $1)`, params: [scope.ownerId] };
    }
    case 'identity-services':
    case 'service-identities': {
      const [own, listed] = scope.of === 'identity-services' ? ['identity_id', 'service_id'] : ['service_id', 'identity_id'];
      const type = scope.policyType === 'Dial' ? ' AND x."dial" > 0' : scope.policyType === 'Bind' ? ' AND x."bind" > 0' : '';
      return { sql: `EXISTS (SELECT 1 FROM "identity_services" x WHERE x."${own}" = $1 AND x."${listed}" = "e"."id"${type})`, params: [scope.id] };
    }
    case 'role-filter': {
      const s = scope.selector;
      if (s.all) return { sql: 'TRUE', params: [] };
      const parts: string[] = [];
      const params: unknown[] = [];
      if (s.ids.length > 0) {
        params.push(s.ids);
        parts.push(`"e"."id" = ANY($${params.length}::text[])`);
      }
      if (s.attrs.length > 0) {
        params.push(s.attrs);
        parts.push(`"e"."role_attributes" ${s.semantic === 'AnyOf' ? '&&' : '@>'} $${params.length}::text[]`);
      }
      return { sql: parts.length > 0 ? parts.join(' OR ') : 'FALSE', params };
    }
    case 'all-of': {
      const conds = scope.scopes.map(scopeCondition).filter((c): c is Condition => !!c);
      const params: unknown[] = [];
      const sql = conds.map((c) => {
        const part = `(${shift(c.sql, params.length)})`;
        params.push(...c.params);
        return part;
      });
      return { sql: sql.length > 0 ? sql.join(' AND ') : 'TRUE', params };
    }
  }
}
