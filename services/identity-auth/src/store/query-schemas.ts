import type { EntityQuerySchema, QuerySymbol, SymbolType } from '@ziti/http-kit';

/** The public (filterable and sortable) symbols of this context's lists (§4.2), mapped to SQL. */

const col = (type: SymbolType, column: string): QuerySymbol => ({ kind: 'scalar', type, sql: (a) => `${a}."${column}"` });
/** Entity names are stored NFC-normalised (`normalizeName`): filter literals compared with them are too. */
const NAME: QuerySymbol = { kind: 'scalar', type: 'string', sql: (a) => `${a}."name"`, nfc: true };
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
    name: NAME,
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

export const REVOCATION_QUERY: EntityQuerySchema = {
  entity: 'revocations',
  table: '"revocations"',
  symbols: {
    ...base(),
    type: col('string', 'type'),
    expiresAt: col('datetime', 'expires_at'),
  },
};

export const IDENTITY_TYPE_QUERY: EntityQuerySchema = {
  entity: 'identityTypes',
  table: '"identity_types"',
  symbols: {
    ...base(),
    isSystem: col('bool', 'is_system'),
    name: NAME,
  },
};

const noSystem = (): QuerySymbol => ({ kind: 'scalar', type: 'bool', sql: () => 'FALSE' });

export const AUTH_POLICY_QUERY: EntityQuerySchema = {
  entity: 'authPolicies',
  table: '"auth_policies"',
  symbols: { ...base(), isSystem: col('bool', 'is_system'), name: NAME },
};

export const CONTROLLER_SETTING_QUERY: EntityQuerySchema = {
  entity: 'controllerSettings',
  table: '"controller_settings"',
  symbols: { ...base(), isSystem: { kind: 'scalar', type: 'bool', sql: (a) => `(${a}."id" = 'global')` } },
};

export const AUTHENTICATOR_QUERY: EntityQuerySchema = {
  entity: 'authenticators',
  table: '"authenticators"',
  symbols: {
    ...base(),
    isSystem: noSystem(),
    identity: col('string', 'identity_id'),
    method: col('string', 'method'),
    username: col('string', 'username'),
    certFingerprint: col('string', 'fingerprint'),
    isIssuedByNetwork: col('bool', 'is_issued_by_network'),
  },
};

export const SIGNER_QUERY: EntityQuerySchema = {
  entity: 'externalJwtSigners',
  table: '"external_jwt_signers"',
  symbols: {
    ...base(),
    isSystem: noSystem(),
    name: NAME,
    fingerprint: col('string', 'fingerprint'),
    kid: col('string', 'kid'),
    issuer: col('string', 'issuer'),
    certPem: col('string', 'cert_pem'),
    commonName: col('string', 'common_name'),
    notAfter: col('datetime', 'not_after'),
    notBefore: col('datetime', 'not_before'),
    enabled: col('bool', 'enabled'),
    claimsProperty: col('string', 'claims_property'),
    useExternalId: col('bool', 'use_external_id'),
    audience: col('string', 'audience'),
    clientId: col('string', 'client_id'),
    targetToken: col('string', 'target_token'),
    externalAuthUrl: col('string', 'external_auth_url'),
    jwksEndpoint: col('string', 'jwks_endpoint'),
  },
};

/**
 * Role attributes as a list of their own (§4.1 exception): the symbol `id` is the attribute. The
 * table is the distinct attributes of identities plus the text[] bound as `$1` (attributes only
 * policies reference, for the usage list).
 */
export const ROLE_ATTRIBUTE_QUERY: EntityQuerySchema = {
  entity: 'roleAttributes',
  table: '(SELECT unnest("role_attributes") AS "id" FROM "identities" UNION SELECT unnest($1::text[]) AS "id")',
  symbols: { id: col('string', 'id') },
};
