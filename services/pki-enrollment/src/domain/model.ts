import type { ExternalIdClaimSpec } from '../crypto/claims.js';

/** Entities of the pki-enrollment context, as the domain sees them. */

/** Identity enrollments: ott, ottca, updb. Router enrollments: erott (edge), trott (transit; its JWT says `erott`). */
export type EnrollMethod = 'ott' | 'ottca' | 'updb' | 'erott' | 'trott';

export const IDENTITY_METHODS = ['ott', 'ottca', 'updb'] as const;

export interface Enrollment {
  id: string;
  method: EnrollMethod;
  token: string;
  jwt: string;
  expiresAt: Date;
  identityId: string | null;
  identityName: string | null;
  edgeRouterId: string | null;
  transitRouterId: string | null;
  routerName: string | null;
  caId: string | null;
  username: string | null;
  tags: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

export interface Ca {
  id: string;
  name: string;
  fingerprint: string;
  certPem: string;
  isVerified: boolean;
  verificationToken: string;
  isAutoCaEnrollmentEnabled: boolean;
  isOttCaEnrollmentEnabled: boolean;
  isAuthEnabled: boolean;
  identityRoles: string[];
  identityNameFormat: string;
  externalIdClaim: ExternalIdClaimSpec | null;
  /**
   * Created, and last changed, by an admin. A CA a non-admin (a holder of `ca`, who may hold its
   * key) created or changed never logs in a privileged identity (an admin or a holder of
   * permissions) by externalId; an admin's create or change trusts it. Verifying does not change it.
   */
  trustedForAdmins: boolean;
  tags: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

/** The certificate state of an enrolled router. */
export interface RouterCert {
  routerId: string;
  routerType: 'edge' | 'transit';
  fingerprint: string;
  certPem: string;
  serverCertPem: string;
  updatedAt: Date;
}

export interface ApiSessionCertificate {
  id: string;
  apiSessionId: string;
  identityId: string;
  subject: string;
  fingerprint: string;
  certPem: string;
  validFrom: Date;
  validTo: Date;
  tags: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

/** One of the controller's own certificates with its (decrypted) key. */
export interface PkiMaterial {
  name: 'root' | 'intermediate' | 'server';
  certPem: string;
  keyPem: string;
  sans: string[];
}

export interface ListRequest {
  filter?: string;
  limit?: string;
  offset?: string;
  sort?: string;
}

export interface Page<T> {
  items: T[];
  totalCount: number;
  limit: number;
  offset: number;
  filterableFields: string[];
}

/** What the domain knows of an identity (from identity-auth). */
export interface IdentityRef {
  id: string;
  name: string;
  /** An admin, the default admin, or a holder of permissions (identity-auth's answer; absent: not known). */
  privilege?: { isAdmin: boolean; isDefaultAdmin: boolean; permissions: string[] };
}
