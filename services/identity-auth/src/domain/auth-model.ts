/** Entities of authentication (auth policies, authenticators, external JWT signers, MFA). */

import type { IdentityTrace, JsonMap } from './model.js';

/** The settings of an auth policy (§6.1), as create and PUT give them and detail shows them. */
export interface AuthPolicyFields {
  name: string;
  primaryCertAllowed: boolean;
  primaryCertAllowExpiredCerts: boolean;
  primaryUpdbAllowed: boolean;
  primaryUpdbMinPasswordLength: number;
  primaryUpdbRequireSpecialChar: boolean;
  primaryUpdbRequireNumberChar: boolean;
  primaryUpdbRequireMixedCase: boolean;
  /** 0 = unlimited attempts. */
  primaryUpdbMaxAttempts: number;
  /** 0 = locked until enabled again. */
  primaryUpdbLockoutDurationMinutes: number;
  primaryExtJwtAllowed: boolean;
  /** Empty = every signer allowed. */
  primaryExtJwtAllowedSigners: string[];
  secondaryRequireTotp: boolean;
  secondaryRequiredExtJwtSigner: string | null;
  tags: JsonMap;
}

export interface AuthPolicy extends AuthPolicyFields {
  id: string;
  isSystem: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export type AuthenticatorMethod = 'updb' | 'cert';

/** An authenticator as the management and self-service views show it (never its hash or salt). */
export interface AuthenticatorView {
  id: string;
  identityId: string;
  identityName: string;
  method: string;
  username: string | null;
  certPem: string | null;
  fingerprint: string | null;
  isIssuedByNetwork: boolean;
  isExtendRequested: boolean;
  isKeyRollRequested: boolean;
  extendRequestedAt: Date | null;
  lastAuthResolvedToRoot: boolean;
  lastExtendRolledKeys: boolean;
  tags: JsonMap;
  createdAt: Date;
  updatedAt: Date;
}

/** A stored updb credential (Argon2id key and salt, base64), with its failed-attempt counter. */
export interface UpdbCredential {
  authenticatorId: string;
  identityId: string;
  username: string;
  password: string;
  salt: string;
  failedAttempts: number;
}

/** The identity facts a login reads: enough for the new session and its principal. */
export interface LoginIdentity {
  id: string;
  name: string;
  externalId: string | null;
  isAdmin: boolean;
  isDefaultAdmin: boolean;
  permissions: string[];
  typeId: string;
  sdkInfo: JsonMap;
  envInfo: JsonMap;
  /** The identity's trace (the new session's principal carries it while it runs). */
  trace: IdentityTrace | null;
}

/** What the password login needs in one read: the credential, its identity and its auth policy. */
export interface UpdbLogin extends UpdbCredential {
  identity: LoginIdentity & { disabled: boolean; disabledUntil: Date | null };
  policy: AuthPolicy;
  /** The identity has a verified TOTP enrollment. */
  mfaVerified: boolean;
}

/** What the certificate login needs in one read: the cert authenticator, its identity and auth policy. */
export interface CertLogin {
  authenticator: {
    id: string;
    identityId: string;
    isIssuedByNetwork: boolean;
    isExtendRequested: boolean;
    isKeyRollRequested: boolean;
    /** Whether the chain of this authenticator's last login resolved to a root (network-issued certificates). */
    lastAuthResolvedToRoot: boolean;
  };
  identity: UpdbLogin['identity'];
  policy: AuthPolicy;
  mfaVerified: boolean;
}

/** The writable fields of an external JWT signer. */
export interface ExternalJwtSignerFields {
  name: string;
  enabled: boolean;
  issuer: string;
  audience: string;
  certPem: string | null;
  jwksEndpoint: string | null;
  kid: string | null;
  claimsProperty: string;
  useExternalId: boolean;
  externalAuthUrl: string | null;
  clientId: string | null;
  scopes: string[];
  targetToken: 'ACCESS' | 'ID';
  enrollToCertEnabled: boolean;
  enrollToTokenEnabled: boolean;
  enrollNameClaimsSelector: string;
  enrollAttributeClaimsSelector: string;
  enrollAuthPolicyId: string | null;
  tags: JsonMap;
}

/** Facts derived from `certPem` (null for JWKS signers). */
export interface SignerCertFacts {
  fingerprint: string | null;
  commonName: string;
  notBefore: Date | null;
  notAfter: Date | null;
}

export interface ExternalJwtSigner extends ExternalJwtSignerFields, SignerCertFacts {
  id: string;
  /**
   * Created, and last changed, by an admin. A signer a non-admin created or changed (a holder of
   * `external-jwt-signer`, who may hold its key) never logs in a privileged identity (an admin or a
   * holder of permissions), as primary or secondary factor; an admin's create or change trusts it.
   */
  trustedForAdmins: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** A TOTP enrollment, decrypted. */
export interface Mfa {
  id: string;
  identityId: string;
  isVerified: boolean;
  /** base32 (16 chars for the 10-byte secret). */
  secret: string;
  recoveryCodes: string[];
  tags: JsonMap;
  createdAt: Date;
  updatedAt: Date;
}
