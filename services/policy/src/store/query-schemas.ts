import type { EntityQuerySchema, QuerySymbol, SchemaRegistry, SymbolType } from '@ziti/http-kit';

/** The public (filterable and sortable) symbols of this context's lists (§4.2), mapped to SQL. */

const col = (type: SymbolType, column: string): QuerySymbol => ({ kind: 'scalar', type, sql: (a) => `${a}."${column}"` });
/** Entity names are stored NFC-normalised (`normalizeName`): filter literals compared with them are too. */
const NAME: QuerySymbol = { kind: 'scalar', type: 'string', sql: (a) => `${a}."name"`, nfc: true };
const textSet = (column: string): QuerySymbol => ({ kind: 'set', type: 'string', elements: (a) => `SELECT unnest(${a}."${column}") AS v` });
const linkSet = (table: string, own: string, other: string, entity: string): QuerySymbol => ({
  kind: 'set',
  type: 'string',
  entity,
  elements: (a) => `SELECT x."${other}" AS v FROM "${table}" x WHERE x."${own}" = ${a}."id"`,
});
const constant = (type: SymbolType, value: string): QuerySymbol => ({ kind: 'scalar', type, sql: () => value });

const base = (): Record<string, QuerySymbol> => ({
  id: col('string', 'id'),
  createdAt: col('datetime', 'created_at'),
  updatedAt: col('datetime', 'updated_at'),
  tags: { kind: 'map', sql: (a) => `${a}."tags"` },
  isSystem: constant('bool', 'FALSE'),
});

export const CONFIG_TYPE_QUERY: EntityQuerySchema = {
  entity: 'configTypes',
  table: '"config_types"',
  symbols: { ...base(), name: NAME, target: col('string', 'target') },
};

export const CONFIG_QUERY: EntityQuerySchema = {
  entity: 'configs',
  table: '"configs"',
  symbols: { ...base(), name: NAME, type: col('string', 'config_type_id'), data: { kind: 'map', sql: (a) => `${a}."data"` } },
};

export const SERVICE_QUERY: EntityQuerySchema = {
  entity: 'services',
  table: '"services"',
  symbols: {
    ...base(),
    name: NAME,
    terminatorStrategy: col('string', 'terminator_strategy'),
    roleAttributes: textSet('role_attributes'),
    configs: linkSet('service_configs', 'service_id', 'config_id', 'configs'),
    encryptionRequired: col('bool', 'encryption_required'),
    maxIdleTime: col('int', 'max_idle_time_millis'),
  },
};

const routerSymbols = (): Record<string, QuerySymbol> => ({
  ...base(),
  name: NAME,
  fingerprint: col('string', 'fingerprint'),
  cost: col('int', 'cost'),
  noTraversal: col('bool', 'no_traversal'),
  disabled: col('bool', 'disabled'),
});

export const ROUTER_QUERY: EntityQuerySchema = { entity: 'routers', table: '"routers"', symbols: routerSymbols() };

export const EDGE_ROUTER_QUERY: EntityQuerySchema = {
  entity: 'edgeRouters',
  table: `(SELECT * FROM "routers" WHERE "kind" = 'edge')`,
  symbols: {
    ...routerSymbols(),
    roleAttributes: textSet('role_attributes'),
    isTunnelerEnabled: col('bool', 'is_tunneler_enabled'),
  },
};

export const TRANSIT_ROUTER_QUERY: EntityQuerySchema = {
  entity: 'transitRouters',
  table: `(SELECT * FROM "routers" WHERE "kind" <> 'edge')`,
  symbols: routerSymbols(),
};


export const TERMINATOR_QUERY: EntityQuerySchema = {
  entity: 'terminators',
  table: '"terminators"',
  symbols: {
    ...base(),
    service: col('string', 'service_id'),
    router: col('string', 'router_id'),
    // OpenZiti resolves entity references in filters: `service.name = "x"` (`ziti ops verify traffic` waits on it).
    'service.name': { kind: 'scalar', type: 'string', nfc: true, sql: (a) => `(SELECT sv."name" FROM "services" sv WHERE sv."id" = ${a}."service_id")` },
    'router.name': { kind: 'scalar', type: 'string', nfc: true, sql: (a) => `(SELECT rt."name" FROM "routers" rt WHERE rt."id" = ${a}."router_id")` },
    binding: col('string', 'binding'),
    address: col('string', 'address'),
    // The controller's terminator store names the instance id `instanceId` (the Edge API renders it as `identity`);
    // `identity` is no symbol there, so `filter=identity` (the admin console's) is 400 INVALID_FILTER "unknown symbol 'identity'".
    instanceId: col('string', 'identity'),
    hostId: col('string', 'host_id'),
    isSystem: col('bool', 'is_system'),
    cost: col('int', 'cost'),
    precedence: col('string', 'precedence'),
  },
};

export const SERVICE_POLICY_QUERY: EntityQuerySchema = {
  entity: 'servicePolicies',
  table: '"service_policies"',
  symbols: {
    ...base(),
    name: NAME,
    type: col('string', 'type'),
    semantic: col('string', 'semantic'),
    identityRoles: textSet('identity_roles'),
    serviceRoles: textSet('service_roles'),
    postureCheckRoles: textSet('posture_check_roles'),
    identities: linkSet('sp_identities', 'policy_id', 'identity_id', 'identities'),
    services: linkSet('sp_services', 'policy_id', 'service_id', 'services'),
    postureChecks: linkSet('sp_posture_checks', 'policy_id', 'posture_check_id', 'postureChecks'),
  },
};

export const EDGE_ROUTER_POLICY_QUERY: EntityQuerySchema = {
  entity: 'edgeRouterPolicies',
  table: '"edge_router_policies"',
  symbols: {
    ...base(),
    isSystem: col('bool', 'is_system'),
    name: NAME,
    semantic: col('string', 'semantic'),
    identityRoles: textSet('identity_roles'),
    edgeRouterRoles: textSet('edge_router_roles'),
    identities: linkSet('erp_identities', 'policy_id', 'identity_id', 'identities'),
    edgeRouters: linkSet('erp_edge_routers', 'policy_id', 'router_id', 'edgeRouters'),
  },
};

export const SERVICE_EDGE_ROUTER_POLICY_QUERY: EntityQuerySchema = {
  entity: 'serviceEdgeRouterPolicies',
  table: '"service_edge_router_policies"',
  symbols: {
    ...base(),
    name: NAME,
    semantic: col('string', 'semantic'),
    serviceRoles: textSet('service_roles'),
    edgeRouterRoles: textSet('edge_router_roles'),
    services: linkSet('serp_services', 'policy_id', 'service_id', 'services'),
    edgeRouters: linkSet('serp_edge_routers', 'policy_id', 'router_id', 'edgeRouters'),
  },
};

/** The identity projection: the symbols identity-auth's list has that the projection carries. */
export const IDENTITY_QUERY: EntityQuerySchema = {
  entity: 'identities',
  table: '"identities"',
  symbols: {
    ...base(),
    isSystem: col('bool', 'is_system'),
    name: NAME,
    roleAttributes: textSet('role_attributes'),
    externalId: col('string', 'external_id'),
    type: col('string', 'type_id'),
    authPolicyId: col('string', 'auth_policy_id'),
    isAdmin: col('bool', 'is_admin'),
    isDefaultAdmin: col('bool', 'is_default_admin'),
    disabled: col('bool', 'disabled'),
  },
};

export const POSTURE_CHECK_QUERY: EntityQuerySchema = {
  entity: 'postureChecks',
  table: '"posture_checks"',
  symbols: { ...base(), name: NAME, typeId: col('string', 'type_id'), roleAttributes: textSet('role_attributes') },
};

/** Role attribute lists: one row per distinct attribute of an entity table, the attribute being `id`. */
export function roleAttributeQuery(table: string, where = 'TRUE'): EntityQuerySchema {
  return {
    entity: 'roleAttributes',
    table: `(SELECT DISTINCT unnest("role_attributes") AS "id" FROM "${table}" WHERE ${where})`,
    symbols: { id: col('string', 'id') },
  };
}

/** Entities reachable from `from <set> where …` sub-queries. */
export const REGISTRY: SchemaRegistry = {
  configs: CONFIG_QUERY,
  services: SERVICE_QUERY,
  identities: IDENTITY_QUERY,
  edgeRouters: EDGE_ROUTER_QUERY,
  postureChecks: POSTURE_CHECK_QUERY,
  servicePolicies: SERVICE_POLICY_QUERY,
  edgeRouterPolicies: EDGE_ROUTER_POLICY_QUERY,
  serviceEdgeRouterPolicies: SERVICE_EDGE_ROUTER_POLICY_QUERY,
};
