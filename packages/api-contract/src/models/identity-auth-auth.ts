import { Type } from '@sinclair/typebox';
import { BaseEntity, EntityRef, Tags, envelope, nullable } from './common.js';
import { EnvInfo, SdkInfo } from './identity-auth-identities.js';

/**
 * Models of authentication: `authenticate`, API sessions, auth policies, authenticators (and the
 * certificate lifecycle: request-extend, re-enroll, extend), external JWT signers and MFA,
 * transcribed from the OpenZiti swagger definitions of the same name (`$id` = definition name).
 * Part of IDENTITY_AUTH_MODELS (identity-auth.ts).
 */

// ---------------------------------------------------------------- authentication and API sessions

export const Username = Type.String({ $id: 'username', minLength: 4, maxLength: 100 });
export const Password = Type.String({ $id: 'password', minLength: 5, maxLength: 100 });
export const ConfigTypes = Type.Array(Type.String(), { $id: 'configTypes', description: 'Specific configuration types that should be returned' });

/** Body of `POST /authenticate`. Every field is optional; which ones matter depends on the method. */
export const Authenticate = Type.Object(
  {
    configTypes: Type.Optional(ConfigTypes),
    envInfo: Type.Optional(EnvInfo),
    password: Type.Optional(Password),
    sdkInfo: Type.Optional(SdkInfo),
    username: Type.Optional(Username),
  },
  {
    $id: 'authenticate',
    description: 'A generic authenticate object meant for use with the /authenticate path. Required fields depend on authentication method.',
    additionalProperties: false,
  },
);

export const AuthQueryDetail = Type.Object(
  {
    clientId: Type.Optional(Type.String()),
    format: Type.Optional(Type.String({ $id: 'mfaFormats', enum: ['numeric', 'alpha', 'alphaNumeric'] })),
    httpMethod: Type.Optional(Type.String()),
    httpUrl: Type.Optional(Type.String()),
    id: Type.Optional(Type.String()),
    isTotpEnrolled: Type.Optional(Type.Boolean()),
    maxLength: Type.Optional(Type.Integer()),
    minLength: Type.Optional(Type.Integer()),
    provider: Type.String({ $id: 'mfaProviders', enum: ['ziti', 'url'] }),
    scopes: Type.Optional(Type.Array(Type.String())),
    typeId: Type.Optional(Type.String({ $id: 'authQueryType', enum: ['MFA', 'TOTP', 'EXT-JWT'] })),
  },
  { $id: 'authQueryDetail' },
);
export const AuthQueryList = Type.Array(AuthQueryDetail, { $id: 'authQueryList' });

/**
 * Note: the spec's `required` list names `cachedUpdatedAt`, which is not among its properties;
 * the service emits it (same value as `cachedLastActivityAt`) so bodies validate against the spec.
 */
export const ApiSessionDetail = Type.Intersect(
  [
    BaseEntity,
    Type.Object({
      authQueries: AuthQueryList,
      authenticatorId: Type.String(),
      cachedLastActivityAt: Type.Optional(Type.String({ format: 'date-time' })),
      cachedUpdatedAt: Type.String({ format: 'date-time' }),
      configTypes: Type.Array(Type.String()),
      identity: EntityRef,
      identityId: Type.String(),
      improperClientCertChain: Type.Optional(Type.Boolean()),
      ipAddress: Type.String(),
      isCertExtendRequested: Type.Optional(Type.Boolean()),
      isCertExtendable: Type.Boolean(),
      isCertKeyRollRequested: Type.Optional(Type.Boolean()),
      isMfaComplete: Type.Boolean(),
      isMfaRequired: Type.Boolean(),
      lastActivityAt: Type.Optional(Type.String({ format: 'date-time' })),
      token: Type.String(),
    }),
  ],
  { $id: 'apiSessionDetail', description: 'An API Session object' },
);
export const ApiSessionList = Type.Array(ApiSessionDetail, { $id: 'apiSessionList' });

export const CurrentApiSessionDetail = Type.Intersect(
  [ApiSessionDetail, Type.Object({ expirationSeconds: Type.Integer(), expiresAt: Type.String({ format: 'date-time' }) })],
  { $id: 'currentApiSessionDetail', description: 'An API Session object for the current API session' },
);

// ---------------------------------------------------------------- auth policies

const optBool = () => Type.Optional(nullable(Type.Boolean()));
const optInt = () => Type.Optional(nullable(Type.Integer()));

export const AuthPolicyPrimaryCert = Type.Object(
  { allowExpiredCerts: Type.Boolean(), allowed: Type.Boolean() },
  { $id: 'authPolicyPrimaryCert' },
);
export const AuthPolicyPrimaryCertPatch = nullable(Type.Object({ allowExpiredCerts: optBool(), allowed: optBool() }), { $id: 'authPolicyPrimaryCertPatch' });
export const AuthPolicyPrimaryExtJwt = Type.Object(
  { allowed: Type.Boolean(), allowedSigners: Type.Array(Type.String()) },
  { $id: 'authPolicyPrimaryExtJwt' },
);
export const AuthPolicyPrimaryExtJwtPatch = nullable(
  Type.Object({ allowed: optBool(), allowedSigners: Type.Optional(nullable(Type.Array(Type.String()))) }),
  { $id: 'authPolicyPrimaryExtJwtPatch' },
);
export const AuthPolicyPrimaryUpdb = Type.Object(
  {
    allowed: Type.Boolean(),
    lockoutDurationMinutes: Type.Integer(),
    maxAttempts: Type.Integer(),
    minPasswordLength: Type.Integer(),
    requireMixedCase: Type.Boolean(),
    requireNumberChar: Type.Boolean(),
    requireSpecialChar: Type.Boolean(),
  },
  { $id: 'authPolicyPrimaryUpdb' },
);
export const AuthPolicyPrimaryUpdbPatch = nullable(
  Type.Object({
    allowed: optBool(),
    lockoutDurationMinutes: optInt(),
    maxAttempts: optInt(),
    minPasswordLength: optInt(),
    requireMixedCase: optBool(),
    requireNumberChar: optBool(),
    requireSpecialChar: optBool(),
  }),
  { $id: 'authPolicyPrimaryUpdbPatch' },
);
export const AuthPolicyPrimary = Type.Object(
  { cert: AuthPolicyPrimaryCert, extJwt: AuthPolicyPrimaryExtJwt, updb: AuthPolicyPrimaryUpdb },
  { $id: 'authPolicyPrimary' },
);
export const AuthPolicyPrimaryPatch = Type.Object(
  { cert: Type.Optional(AuthPolicyPrimaryCertPatch), extJwt: Type.Optional(AuthPolicyPrimaryExtJwtPatch), updb: Type.Optional(AuthPolicyPrimaryUpdbPatch) },
  { $id: 'authPolicyPrimaryPatch' },
);
export const AuthPolicySecondary = Type.Object(
  { requireExtJwtSigner: Type.Optional(nullable(Type.String(), { 'x-omit-empty': false })), requireTotp: Type.Boolean() },
  { $id: 'authPolicySecondary' },
);
export const AuthPolicySecondaryPatch = nullable(
  Type.Object({ requireExtJwtSigner: Type.Optional(nullable(Type.String())), requireTotp: optBool() }),
  { $id: 'authPolicySecondaryPatch' },
);
const authPolicyWritable = { name: Type.String(), primary: AuthPolicyPrimary, secondary: AuthPolicySecondary, tags: Type.Optional(Tags) };
export const AuthPolicyCreate = Type.Object(authPolicyWritable, { $id: 'authPolicyCreate', description: 'A Auth Policy resource', additionalProperties: false });
export const AuthPolicyUpdate = Type.Object(authPolicyWritable, { $id: 'authPolicyUpdate', description: 'A Auth Policy resource', additionalProperties: false });
export const AuthPolicyPatch = Type.Object(
  {
    name: Type.Optional(nullable(Type.String())),
    primary: Type.Optional(AuthPolicyPrimaryPatch),
    secondary: Type.Optional(AuthPolicySecondaryPatch),
    tags: Type.Optional(Tags),
  },
  { $id: 'authPolicyPatch', description: 'A Auth Policy resource', additionalProperties: false },
);
export const AuthPolicyDetail = Type.Intersect(
  [BaseEntity, Type.Object({ name: Type.String(), primary: AuthPolicyPrimary, secondary: AuthPolicySecondary })],
  { $id: 'authPolicyDetail', description: 'A Auth Policy resource' },
);
export const AuthPolicyList = Type.Array(AuthPolicyDetail, { $id: 'authPolicyList' });

// ---------------------------------------------------------------- authenticators

export const UsernameNullable = nullable(Type.String({ minLength: 4, maxLength: 100 }), { $id: 'usernameNullable' });
export const PasswordNullable = nullable(Type.String({ minLength: 5, maxLength: 100 }), { $id: 'passwordNullable' });

export const AuthenticatorCreate = Type.Object(
  {
    certPem: Type.Optional(Type.String()),
    identityId: Type.String(),
    method: Type.String(),
    password: Type.Optional(Type.String()),
    tags: Type.Optional(Tags),
    username: Type.Optional(Type.String()),
  },
  { $id: 'authenticatorCreate', additionalProperties: false },
);
export const AuthenticatorUpdate = Type.Object(
  { password: Password, tags: Type.Optional(Tags), username: Username },
  { $id: 'authenticatorUpdate', additionalProperties: false },
);
export const AuthenticatorPatch = Type.Object(
  { password: Type.Optional(PasswordNullable), tags: Type.Optional(Tags), username: Type.Optional(UsernameNullable) },
  { $id: 'authenticatorPatch', additionalProperties: false },
);
export const AuthenticatorUpdateWithCurrent = Type.Object(
  { currentPassword: Password, password: Password, tags: Type.Optional(Tags), username: Username },
  { $id: 'authenticatorUpdateWithCurrent', additionalProperties: false },
);
export const AuthenticatorPatchWithCurrent = Type.Object(
  { currentPassword: Password, password: Type.Optional(PasswordNullable), tags: Type.Optional(Tags), username: Type.Optional(UsernameNullable) },
  { $id: 'authenticatorPatchWithCurrent', additionalProperties: false },
);
export const AuthenticatorDetail = Type.Intersect(
  [
    BaseEntity,
    Type.Object({
      certPem: Type.Optional(Type.String()),
      extendRequestedAt: Type.Optional(nullable(Type.String({ format: 'date-time' }))),
      fingerprint: Type.Optional(Type.String()),
      identity: EntityRef,
      identityId: Type.String(),
      isExtendRequested: Type.Optional(Type.Boolean()),
      isIssuedByNetwork: Type.Optional(Type.Boolean()),
      isKeyRollRequested: Type.Optional(Type.Boolean()),
      lastAuthResolvedToRoot: Type.Optional(Type.Boolean()),
      lastExtendRolledKeys: Type.Optional(Type.Boolean()),
      method: Type.String(),
      username: Type.Optional(Type.String()),
    }),
  ],
  { $id: 'authenticatorDetail', description: 'A singular authenticator resource' },
);
export const AuthenticatorList = Type.Array(AuthenticatorDetail, { $id: 'authenticatorList' });

/** `POST /authenticators/{id}/request-extend` (and the identity-wide `/identities/{id}/request-extend`). */
export const RequestExtendAuthenticator = Type.Object({ rollKeys: Type.Optional(Type.Boolean()) }, { $id: 'requestExtendAuthenticator', additionalProperties: false });
/** `POST /authenticators/{id}/re-enroll`. */
export const ReEnroll = Type.Object({ expiresAt: Type.String({ format: 'date-time' }) }, { $id: 'reEnroll', additionalProperties: false });
/** `POST /current-identity/authenticators/{id}/extend`: a CSR for the new client certificate. */
export const IdentityExtendEnrollmentRequest = Type.Object(
  { clientCertCsr: Type.String() },
  { $id: 'identityExtendEnrollmentRequest', additionalProperties: false },
);
/**
 * `POST /enroll/token`: an external JWT (`Authorization: Bearer`) enrolls a new identity; with a
 * CSR it gets a certificate authenticator, without one it authenticates with such tokens.
 */
export const TokenEnrollmentRequest = Type.Object(
  { clientCsr: Type.Optional(Type.String()) },
  { $id: 'tokenEnrollmentRequest', additionalProperties: false },
);
/** `POST /current-identity/authenticators/{id}/extend-verify`: the certificate extend returned. */
export const IdentityExtendValidateEnrollmentRequest = Type.Object(
  { clientCert: Type.String({ description: 'A PEM encoded client certificate previously returned after an extension request' }) },
  { $id: 'identityExtendValidateEnrollmentRequest', additionalProperties: false },
);
export const IdentityExtendCerts = Type.Object(
  {
    ca: Type.Optional(Type.String({ description: 'A PEM encoded set of CA certificates' })),
    clientCert: Type.Optional(Type.String({ description: 'A PEM encoded client certificate' })),
  },
  { $id: 'identityExtendCerts' },
);

// ---------------------------------------------------------------- external JWT signers

export const TargetToken = nullable(Type.String({ enum: ['ACCESS', 'ID'] }), { $id: 'targetToken', description: 'Defines the target token type' });
const optStr = () => Type.Optional(nullable(Type.String()));
const signerOptional = {
  certPem: optStr(),
  claimsProperty: optStr(),
  clientId: optStr(),
  enrollAttributeClaimsSelector: optStr(),
  enrollAuthPolicyId: optStr(),
  enrollNameClaimsSelector: optStr(),
  enrollToCertEnabled: optBool(),
  enrollToTokenEnabled: optBool(),
  // The spec's formats (url, uri) are checked by the service with its own wording (TypeBox would
  // refuse any string for an unregistered format).
  externalAuthUrl: Type.Optional(nullable(Type.String())),
  jwksEndpoint: Type.Optional(nullable(Type.String())),
  kid: optStr(),
  scopes: Type.Optional(nullable(Type.Array(Type.String()))),
  tags: Type.Optional(Tags),
  targetToken: Type.Optional(TargetToken),
  useExternalId: optBool(),
};
export const ExternalJwtSignerCreate = Type.Object(
  { ...signerOptional, audience: nullable(Type.String()), enabled: Type.Boolean(), issuer: Type.String(), name: Type.String() },
  { $id: 'externalJwtSignerCreate', additionalProperties: false },
);
export const ExternalJwtSignerUpdate = Type.Object(
  { ...signerOptional, audience: nullable(Type.String()), enabled: Type.Boolean(), issuer: Type.String(), name: Type.String() },
  { $id: 'externalJwtSignerUpdate', additionalProperties: false },
);
export const ExternalJwtSignerPatch = Type.Object(
  { ...signerOptional, audience: optStr(), enabled: optBool(), issuer: optStr(), name: optStr() },
  { $id: 'externalJwtSignerPatch', additionalProperties: false },
);
export const ExternalJwtSignerDetail = Type.Intersect(
  [
    BaseEntity,
    Type.Object({
      audience: Type.String(),
      certPem: nullable(Type.String()),
      claimsProperty: Type.String(),
      clientId: nullable(Type.String()),
      commonName: Type.String(),
      enabled: Type.Boolean(),
      enrollAttributeClaimsSelector: Type.Optional(Type.String()),
      enrollAuthPolicyId: Type.Optional(Type.String()),
      enrollNameClaimsSelector: Type.Optional(Type.String()),
      enrollToCertEnabled: Type.Optional(Type.Boolean()),
      enrollToTokenEnabled: Type.Optional(Type.Boolean()),
      externalAuthUrl: nullable(Type.String({ format: 'url' })),
      fingerprint: nullable(Type.String()),
      issuer: Type.String(),
      jwksEndpoint: nullable(Type.String({ format: 'uri' })),
      kid: nullable(Type.String()),
      name: Type.String(),
      notAfter: Type.String({ format: 'date-time' }),
      notBefore: Type.String({ format: 'date-time' }),
      scopes: Type.Array(Type.String()),
      targetToken: TargetToken,
      useExternalId: Type.Boolean(),
    }),
  ],
  { $id: 'externalJwtSignerDetail', description: 'A External JWT Signer resource' },
);
export const ExternalJwtSignerList = Type.Array(ExternalJwtSignerDetail, { $id: 'externalJwtSignerList' });
export const ClientExternalJwtSignerDetail = Type.Intersect(
  [
    BaseEntity,
    Type.Object({
      audience: Type.Optional(nullable(Type.String())),
      clientId: Type.Optional(nullable(Type.String())),
      enrollToCertEnabled: Type.Optional(Type.Boolean()),
      enrollToTokenEnabled: Type.Optional(Type.Boolean()),
      externalAuthUrl: nullable(Type.String({ format: 'url' })),
      name: Type.String(),
      openIdConfigurationUrl: Type.Optional(Type.String()),
      scopes: Type.Optional(Type.Array(Type.String())),
      targetToken: Type.Optional(TargetToken),
    }),
  ],
  { $id: 'clientExternalJwtSignerDetail', description: 'A External JWT Signer resource' },
);
export const ClientExternalJwtSignerList = Type.Array(ClientExternalJwtSignerDetail, { $id: 'clientExternalJwtSignerList' });

// ---------------------------------------------------------------- MFA

export const MfaCode = Type.Object({ code: Type.String() }, { $id: 'mfaCode', additionalProperties: false });
export const DetailMfa = Type.Intersect(
  [
    BaseEntity,
    Type.Object({
      isVerified: Type.Boolean(),
      provisioningUrl: Type.Optional(Type.String({ description: 'Not provided if MFA verification has been completed' })),
      recoveryCodes: Type.Optional(Type.Array(Type.String(), { description: 'Not provided if MFA verification has been completed' })),
    }),
  ],
  { $id: 'detailMfa' },
);
export const DetailMfaRecoveryCodes = Type.Intersect([BaseEntity, Type.Object({ recoveryCodes: Type.Array(Type.String()) })], {
  $id: 'detailMfaRecoveryCodes',
});

// ---------------------------------------------------------------- envelopes

export const ListApiSessionsEnvelope = envelope('listApiSessionsEnvelope', ApiSessionList);
export const DetailApiSessionEnvelope = envelope('detailApiSessionEnvelope', ApiSessionDetail);
export const CurrentApiSessionDetailEnvelope = envelope('currentApiSessionDetailEnvelope', CurrentApiSessionDetail);
export const ListAuthPoliciesEnvelope = envelope('listAuthPoliciesEnvelope', AuthPolicyList);
export const DetailAuthPolicyEnvelope = envelope('detailAuthPolicyEnvelope', AuthPolicyDetail);
export const ListAuthenticatorsEnvelope = envelope('listAuthenticatorsEnvelope', AuthenticatorList);
export const DetailAuthenticatorEnvelope = envelope('detailAuthenticatorEnvelope', AuthenticatorDetail);
export const IdentityExtendEnrollmentEnvelope = envelope('identityExtendEnrollmentEnvelope', IdentityExtendCerts);
export const ListExternalJwtSignersEnvelope = envelope('listExternalJwtSignersEnvelope', ExternalJwtSignerList);
export const DetailExternalJwtSignerEnvelope = envelope('detailExternalJwtSignerEnvelope', ExternalJwtSignerDetail);
export const ListClientExternalJwtSignersEnvelope = envelope('listClientExternalJwtSignersEnvelope', ClientExternalJwtSignerList);
export const DetailMfaEnvelope = envelope('detailMfaEnvelope', DetailMfa);
export const DetailMfaRecoveryCodesEnvelope = envelope('detailMfaRecoveryCodesEnvelope', DetailMfaRecoveryCodes);
