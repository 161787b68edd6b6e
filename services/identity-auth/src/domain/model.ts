/** Entities of the identity-auth context, as the domain sees them (no wire or SQL shapes). */

import type { EnrollmentInfo } from './pki-context.js';

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

export type { AuthPolicy } from './auth-model.js';

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

/** An identity's trace (`PUT /identities/{id}/trace`): its requests are logged with `traceId` until `until`. */
export interface IdentityTrace {
  traceId: string;
  until: Date;
  channels: string[];
}

export interface Identity extends IdentityFields {
  id: string;
  /** The identity's trace, if one was enabled (it may have run out: see `until`). */
  trace: IdentityTrace | null;
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
  /** A verified TOTP enrollment exists. */
  isMfaEnabled: boolean;
  updb: UpdbAuthenticatorRef | null;
  cert: { id: string; fingerprint: string } | null;
  /** Outstanding enrollments (pki-enrollment), when the manager attached them. */
  enrollments?: EnrollmentInfo[];
  /** An edge router reported the identity connected (fabric), when the manager asked. */
  hasEdgeRouterConnection?: boolean;
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
  /** When the second factor was completed (null until then). */
  mfaCompletedAt: Date | null;
  isCertExtendable: boolean;
  isCertExtendRequested: boolean;
  isCertKeyRollRequested: boolean;
  improperClientCertChain: boolean;
  lastActivityAt: Date;
  /** 'legacy' (zt-session, idle timeout) or 'oidc' (bearer tokens, OIDC.md); absent: legacy. */
  kind?: ApiSessionKind;
  /** An OIDC session's end (its refresh token's expiry); null for legacy sessions. */
  expiresAt?: Date | null;
  tags: JsonMap;
  createdAt: Date;
  updatedAt: Date;
}

export type ApiSessionKind = 'legacy' | 'oidc';

/** An API session with the name of its identity (for the `identity` entityRef). */
export interface ApiSessionView extends ApiSession {
  identityName: string;
}

/** The secondary-factor settings of an identity's auth policy that decide whether a session is complete. */
export interface SecondaryFactors {
  requireTotp: boolean;
  /** The external JWT signer whose token every request must carry, if any. */
  requiredExtJwtSigner: string | null;
}

/** A session together with the identity facts needed to resolve a principal. */
export interface ApiSessionWithIdentity extends ApiSession {
  identity: Pick<Identity, 'id' | 'name' | 'isAdmin' | 'isDefaultAdmin' | 'permissions' | 'typeId' | 'disabled' | 'disabledUntil' | 'externalId' | 'trace'>;
  secondary: SecondaryFactors;
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

/** A session whose second factor was just marked done. */
export interface CompletedMfa {
  token: string;
  /** TOTP was pending before: the session has just become fully authenticated. */
  wasPending: boolean;
  kind: ApiSessionKind;
}
