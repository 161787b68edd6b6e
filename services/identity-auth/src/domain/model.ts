/** Entities of the identity-auth context, as the domain sees them (no wire or SQL shapes). */

export type JsonMap = Record<string, unknown>;

export interface IdentityType {
  id: string;
  name: string;
  tags: JsonMap;
  createdAt: Date;
  updatedAt: Date;
}

export interface AuthPolicyRef {
  id: string;
  name: string;
}

/** The auth policy settings the authenticate flow needs (§6.1). */
export interface AuthPolicy extends AuthPolicyRef {
  primaryUpdbAllowed: boolean;
  primaryUpdbMaxAttempts: number;
  primaryUpdbLockoutDurationMinutes: number;
  secondaryRequireTotp: boolean;
}

/** The writable fields of an identity (create, update and patch work on these). */
export interface IdentityFields {
  name: string;
  typeId: string;
  isAdmin: boolean;
  roleAttributes: string[];
  tags: JsonMap;
  appData: JsonMap;
  authPolicyId: string;
  externalId: string | null;
  defaultHostingPrecedence: string;
  defaultHostingCost: number;
  serviceHostingPrecedences: Record<string, string>;
  serviceHostingCosts: Record<string, number>;
  permissions: string[];
}

export interface UpdbAuthenticatorRef {
  id: string;
  username: string;
}

export interface Identity extends IdentityFields {
  id: string;
  isDefaultAdmin: boolean;
  isSystem: boolean;
  sdkInfo: JsonMap;
  envInfo: JsonMap;
  disabled: boolean;
  disabledAt: Date | null;
  disabledUntil: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** An identity with what its detail view shows from related records. */
export interface IdentityView extends Identity {
  typeName: string;
  authPolicyName: string;
  hasApiSession: boolean;
  updb: UpdbAuthenticatorRef | null;
  cert: { id: string; fingerprint: string } | null;
}

export interface UpdbAuthenticator {
  id: string;
  identityId: string;
  username: string;
  password: string;
  salt: string;
  failedAttempts: number;
}

export interface ApiSession {
  id: string;
  token: string;
  identityId: string;
  authenticatorId: string;
  ipAddress: string;
  configTypes: string[];
  isMfaRequired: boolean;
  isMfaComplete: boolean;
  isCertExtendable: boolean;
  isCertExtendRequested: boolean;
  isCertKeyRollRequested: boolean;
  improperClientCertChain: boolean;
  lastActivityAt: Date;
  tags: JsonMap;
  createdAt: Date;
  updatedAt: Date;
}

/** An API session with the name of its identity (for the `identity` entityRef). */
export interface ApiSessionView extends ApiSession {
  identityName: string;
}

/** A session together with the identity facts needed to resolve a principal. */
export interface ApiSessionWithIdentity extends ApiSession {
  identity: Pick<Identity, 'id' | 'name' | 'isAdmin' | 'isDefaultAdmin' | 'permissions' | 'typeId' | 'disabled' | 'disabledUntil'>;
}

/** List request as the HTTP layer hands it over (ZitiQL and paging, §4.1). */
export interface ListRequest {
  filter?: string;
  limit?: string;
  offset?: string;
  sort?: string;
}

/** roleFilter / roleSemantic of `GET /identities` (§4.1). */
export interface RoleFilter {
  ids: string[];
  attributes: string[];
  all: boolean;
  semantic: 'AllOf' | 'AnyOf';
}

export interface Page<T> {
  items: T[];
  totalCount: number;
  /** Effective limit (the UNLIMITED marker when unlimited) and offset, for meta.pagination. */
  limit: number;
  offset: number;
  filterableFields: string[];
}

/** Is the identity disabled right now (disabled, and not past `disabledUntil`)? */
export function isDisabled(identity: { disabled: boolean; disabledUntil: Date | null }, now = new Date()): boolean {
  return identity.disabled && (identity.disabledUntil === null || identity.disabledUntil.getTime() > now.getTime());
}
