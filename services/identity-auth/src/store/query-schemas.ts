import type { EntityQuerySchema, QuerySymbol, SymbolType } from '@ziti/http-kit';

/** The public (filterable and sortable) symbols of this context's lists (§4.2), mapped to SQL. */

const col = (type: SymbolType, column: string): QuerySymbol => ({ kind: 'scalar', type, sql: (a) => `${a}."${column}"` });
const jsonText = (column: string, key: string): QuerySymbol => ({
  kind: 'scalar',
  type: 'string',
  sql: (a) => `(${a}."${column}" ->> '${key}')`,
});
const textSet = (column: string): QuerySymbol => ({
  kind: 'set',
  type: 'string',
  elements: (a) => `SELECT unnest(${a}."${column}") AS v`,
});

const base = (): Record<string, QuerySymbol> => ({
  id: col('string', 'id'),
  createdAt: col('datetime', 'created_at'),
  updatedAt: col('datetime', 'updated_at'),
  tags: { kind: 'map', sql: (a) => `${a}."tags"` },
});

const info = (column: string, keys: string[]) => Object.fromEntries(keys.map((k) => [`${column.replace('_info', 'Info')}.${k}`, jsonText(column, k)]));

export const IDENTITY_QUERY: EntityQuerySchema = {
  entity: 'identities',
  table: '"identities"',
  symbols: {
    ...base(),
    isSystem: col('bool', 'is_system'),
    name: col('string', 'name'),
    roleAttributes: textSet('role_attributes'),
    externalId: col('string', 'external_id'),
    type: col('string', 'type_id'),
    authPolicyId: col('string', 'auth_policy_id'),
    isAdmin: col('bool', 'is_admin'),
    isDefaultAdmin: col('bool', 'is_default_admin'),
    disabled: col('bool', 'disabled'),
    disabledAt: col('datetime', 'disabled_at'),
    disabledUntil: col('datetime', 'disabled_until'),
    defaultHostingPrecedence: col('string', 'default_hosting_precedence'),
    defaultHostingCost: col('int', 'default_hosting_cost'),
    ...info('env_info', ['arch', 'os', 'osRelease', 'osVersion']),
    ...info('sdk_info', ['appId', 'appVersion', 'branch', 'revision', 'type', 'version']),
  },
};

export const API_SESSION_QUERY: EntityQuerySchema = {
  entity: 'apiSessions',
  table: '"api_sessions"',
  symbols: {
    ...base(),
    isSystem: { kind: 'scalar', type: 'bool', sql: () => 'FALSE' },
    identity: col('string', 'identity_id'),
    token: col('string', 'token'),
    ipAddress: col('string', 'ip_address'),
    configTypes: textSet('config_types'),
    authenticator: col('string', 'authenticator_id'),
    lastActivityAt: col('datetime', 'last_activity_at'),
    mfaRequired: col('bool', 'is_mfa_required'),
    mfaComplete: col('bool', 'is_mfa_complete'),
  },
};

export const IDENTITY_TYPE_QUERY: EntityQuerySchema = {
  entity: 'identityTypes',
  table: '"identity_types"',
  symbols: {
    ...base(),
    isSystem: col('bool', 'is_system'),
    name: col('string', 'name'),
  },
};
