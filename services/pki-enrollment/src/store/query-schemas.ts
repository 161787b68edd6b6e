import type { EntityQuerySchema, QuerySymbol, SymbolType } from '@ziti/http-kit';

/** The public (filterable and sortable) symbols of this context's lists, mapped to SQL. */

const col = (type: SymbolType, column: string): QuerySymbol => ({ kind: 'scalar', type, sql: (a) => `${a}."${column}"` });
/** Entity names are stored NFC-normalised (`normalizeName`): filter literals compared with them are too. */
const NAME: QuerySymbol = { kind: 'scalar', type: 'string', sql: (a) => `${a}."name"`, nfc: true };

const base = (): Record<string, QuerySymbol> => ({
  id: col('string', 'id'),
  createdAt: col('datetime', 'created_at'),
  updatedAt: col('datetime', 'updated_at'),
  tags: { kind: 'map', sql: (a) => `${a}."tags"` },
  isSystem: { kind: 'scalar', type: 'bool', sql: () => 'FALSE' },
});

export const ENROLLMENT_QUERY: EntityQuerySchema = {
  entity: 'enrollments',
  table: '"enrollments"',
  symbols: {
    ...base(),
    method: col('string', 'method'),
    token: col('string', 'token'),
    expiresAt: col('datetime', 'expires_at'),
    identity: col('string', 'identity_id'),
    edgeRouter: col('string', 'edge_router_id'),
    transitRouter: col('string', 'transit_router_id'),
    ca: col('string', 'ca_id'),
    username: col('string', 'username'),
  },
};

export const CA_QUERY: EntityQuerySchema = {
  entity: 'cas',
  table: '"cas"',
  symbols: {
    ...base(),
    name: NAME,
    fingerprint: col('string', 'fingerprint'),
    isVerified: col('bool', 'is_verified'),
    verificationToken: col('string', 'verification_token'),
    isAutoCaEnrollmentEnabled: col('bool', 'is_auto_ca_enrollment_enabled'),
    isOttCaEnrollmentEnabled: col('bool', 'is_ott_ca_enrollment_enabled'),
    isAuthEnabled: col('bool', 'is_auth_enabled'),
    identityNameFormat: col('string', 'identity_name_format'),
    identityRoles: { kind: 'set', type: 'string', elements: (a) => `SELECT unnest(${a}."identity_roles") AS v` },
  },
};

export const SESSION_CERT_QUERY: EntityQuerySchema = {
  entity: 'apiSessionCertificates',
  table: '"api_session_certificates"',
  symbols: {
    ...base(),
    apiSession: col('string', 'api_session_id'),
    subject: col('string', 'subject'),
    fingerprint: col('string', 'fingerprint'),
    validAfter: col('datetime', 'valid_from'),
    validBefore: col('datetime', 'valid_to'),
  },
};
