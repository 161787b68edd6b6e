/**
 * The pki-enrollment context as identity-auth needs it (its `PkiEnrollmentService` over gRPC):
 * enrollments of identities, the verification of client certificates for `method=cert`, and
 * identity certificates for `extend`. Errors arrive as the ApiError pki-enrollment answered.
 */

/** An outstanding enrollment of an identity (the `enrollment` block of its detail). */
export interface EnrollmentInfo {
  id: string;
  identityId: string;
  method: string;
  token: string;
  jwt: string;
  /** RFC 3339 with milliseconds. */
  expiresAt: string;
  caId: string | null;
  caName: string;
}

export interface NewEnrollment {
  identityId: string;
  method: 'ott' | 'ottca' | 'updb';
  caId?: string;
  username?: string;
  /** RFC 3339; absent = pki-enrollment's default lifetime. */
  expiresAt?: string;
  /** The identity's name: identity-auth vouches for it (it may not be committed yet). */
  identityName: string;
}

/** A verified third-party CA, as `VerifyClientCertificate` reports it. */
export interface ThirdPartyCa {
  id: string;
  name: string;
  isAutoCaEnrollmentEnabled: boolean;
  identityRoles: string[];
  identityNameFormat: string;
  authPolicyId: string;
  /** Created and last changed by an admin: only then may its certificates log in a privileged identity by externalId. */
  trustedForAdmins: boolean;
}

/** What pki-enrollment concluded about a presented client certificate chain. */
export interface ClientCertVerdict {
  verified: boolean;
  improperClientCertChain: boolean;
  /** Lower-case SHA-1 hex of the leaf DER. */
  fingerprint: string;
  leafPem: string;
  ca: ThirdPartyCa | null;
  externalId: string;
  isExpired: boolean;
  missingExternalIdClaim: boolean;
}

export interface SignedCertificate {
  certPem: string;
  chainPem: string;
  fingerprint: string;
  caBundlePem: string;
}

export interface PkiContext {
  /** Throws pki-enrollment's error (field errors, 409 ENROLLMENT_EXISTS), or 503 when it is unreachable. */
  createEnrollment(e: NewEnrollment): Promise<EnrollmentInfo>;
  /** Undoes a `createEnrollment` (idempotent); failures are logged, never thrown. */
  deleteEnrollment(id: string): Promise<void>;
  /** The outstanding enrollments of these identities; null when pki-enrollment is unavailable. */
  listEnrollments(identityIds: string[]): Promise<EnrollmentInfo[] | null>;
  /** After an identity delete (the `identity.deleted` event is the durable fallback); never throws. */
  deleteIdentityEnrollments(identityId: string): Promise<void>;
  verifyClientCertificate(chainDer: readonly Buffer[]): Promise<ClientCertVerdict>;
  /** An identity certificate, or with `apiSessionId` an API session certificate (purpose `api-session`). */
  signIdentityCsr(identityId: string, csrPem: string, apiSessionId?: string): Promise<SignedCertificate>;
}
