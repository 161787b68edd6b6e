import { Type } from '@sinclair/typebox';
import {
  Authenticate,
  AuthPolicyCreate,
  AuthPolicyPatch,
  AuthPolicyUpdate,
  AuthenticatorCreate,
  AuthenticatorPatch,
  AuthenticatorPatchWithCurrent,
  AuthenticatorUpdate,
  AuthenticatorUpdateWithCurrent,
  CreateEnvelope,
  DetailAuthPolicyEnvelope,
  DetailAuthenticatorEnvelope,
  DetailExternalJwtSignerEnvelope,
  DetailMfaEnvelope,
  DetailMfaRecoveryCodesEnvelope,
  DisableParams,
  IdentityExtendEnrollmentEnvelope,
  IdentityExtendEnrollmentRequest,
  IdentityExtendValidateEnrollmentRequest,
  ReEnroll,
  RequestExtendAuthenticator,
  ExternalJwtSignerCreate,
  ExternalJwtSignerPatch,
  ExternalJwtSignerUpdate,
  ListAuthPoliciesEnvelope,
  ListAuthenticatorsEnvelope,
  ListClientExternalJwtSignersEnvelope,
  ListExternalJwtSignersEnvelope,
  ListRoleAttributeUsageEnvelope,
  ListRoleAttributesEnvelope,
  MfaCode,
  CurrentApiSessionDetailEnvelope,
  CurrentIdentityDetailEnvelope,
  DetailApiSessionEnvelope,
  DetailIdentityEnvelope,
  DetailIdentityTypeEnvelope,
  Empty,
  IdentityCreate,
  IdentityPatch,
  IdentityUpdate,
  ListApiSessionsEnvelope,
  ListIdentitiesEnvelope,
  ListIdentityTypesEnvelope,
  TokenEnrollmentRequest,
  ControllerSettingCreate,
  ControllerSettingPatch,
  ControllerSettingUpdate,
  DetailControllerSettingEffectiveEnvelope,
  DetailControllerSettingEnvelope,
  ListControllerSettingEnvelope,
  TraceDetailEnvelope,
  TraceSpec,
  DetailRevocationEnvelope,
  ListRevocationsEnvelope,
  RevocationCreate,
  TotpTokenEnvelope,
} from '../models/identity-auth.js';
import { EnrollmentCertsEnvelope } from '../models/pki-enrollment.js';
import { type Access, type ApiName, type HttpMethod, type RouteDef, route } from '../route.js';

const BOTH = ['client', 'management'] as const;
const MANAGEMENT = ['management'] as const;
const CLIENT = ['client'] as const;
const owner = 'identity-auth' as const;

/** `limit`, `offset`, `filter` of list operations (an undeclared `sort` is honoured too, see §4.1). */
const listQuery = {
  limit: Type.Optional(Type.Integer()),
  offset: Type.Optional(Type.Integer()),
  filter: Type.Optional(Type.String()),
};

interface Op {
  operationId: string;
  method: HttpMethod;
  path: string;
  apis?: readonly ApiName[];
  access: Access;
  permission?: string;
  tags: readonly string[];
  summary: string;
  query?: RouteDef['query'];
  body?: RouteDef['body'];
  success: RouteDef['success'];
}

/** A route of this context (management API unless `apis` says otherwise). */
const op = (o: Op): RouteDef => route({ apis: MANAGEMENT, ...o, owner });

/** CRUD of one management collection with an entity permission (§6.12). */
function crud(c: {
  path: string;
  permission?: string;
  tag: string;
  ids: { list: string; create: string; detail: string; update: string; patch: string; delete: string };
  what: string;
  envelopes: { list: RouteDef['success']['schema']; detail: RouteDef['success']['schema'] };
  bodies: { create: RouteDef['body']; update: RouteDef['body']; patch: RouteDef['body'] };
  access?: { read: Access; write: Access };
}): RouteDef[] {
  const read = c.access?.read ?? 'management';
  const write = c.access?.write ?? 'management';
  const common = { permission: c.permission, tags: [c.tag] };
  const item = `${c.path}/{id}`;
  return [
    op({ ...common, operationId: c.ids.list, method: 'GET', path: c.path, access: read, summary: `List ${c.what}s`, query: Type.Object(listQuery), success: { status: 200, schema: c.envelopes.list } }),
    op({ ...common, operationId: c.ids.create, method: 'POST', path: c.path, access: write, summary: `Creates an ${c.what}`, body: c.bodies.create, success: { status: 201, schema: CreateEnvelope } }),
    op({ ...common, operationId: c.ids.detail, method: 'GET', path: item, access: read, summary: `Retrieves a single ${c.what}`, success: { status: 200, schema: c.envelopes.detail } }),
    op({ ...common, operationId: c.ids.update, method: 'PUT', path: item, access: write, summary: `Update all fields on an ${c.what}`, body: c.bodies.update, success: { status: 200, schema: Empty } }),
    op({ ...common, operationId: c.ids.patch, method: 'PATCH', path: item, access: write, summary: `Update the supplied fields on an ${c.what}`, body: c.bodies.patch, success: { status: 200, schema: Empty } }),
    op({ ...common, operationId: c.ids.delete, method: 'DELETE', path: item, access: write, summary: `Delete an ${c.what}`, success: { status: 200, schema: Empty } }),
  ];
}

const MFA_TAGS = ['Current Identity', 'MFA'] as const;
const EXTEND_TAGS = ['Current API Session', 'Enroll', 'Extend Enrollment'] as const;

/** Operations served by the identity-auth context. */
export const IDENTITY_AUTH_ROUTES: readonly RouteDef[] = [
  // ---- authentication and the caller's own session
  route({
    operationId: 'authenticate',
    method: 'POST',
    path: '/authenticate',
    apis: BOTH,
    owner,
    access: 'anonymous',
    tags: ['Authentication'],
    summary: 'Authenticate via a method supplied via a query string parameter',
    query: Type.Object({ method: Type.String({ enum: ['password', 'cert', 'ext-jwt'] }) }),
    body: Authenticate,
    // The C SDK posts `method=cert` without any body.
    bodyOptional: true,
    success: { status: 200, schema: CurrentApiSessionDetailEnvelope },
  }),
  route({
    operationId: 'getCurrentAPISession',
    method: 'GET',
    path: '/current-api-session',
    apis: BOTH,
    owner,
    access: 'partial',
    tags: ['Current API Session'],
    summary: 'Return the current API session',
    success: { status: 200, schema: CurrentApiSessionDetailEnvelope },
  }),
  route({
    // The spec gives this operation no operationId; go-swagger names it DeleteCurrentAPISession.
    operationId: 'deleteCurrentApiSession',
    method: 'DELETE',
    path: '/current-api-session',
    apis: BOTH,
    owner,
    access: 'partial',
    tags: ['Current API Session'],
    summary: 'Logout',
    success: { status: 200, schema: Empty },
  }),
  route({
    operationId: 'getCurrentIdentity',
    method: 'GET',
    path: '/current-identity',
    apis: BOTH,
    owner,
    access: 'authenticated',
    tags: ['Current Identity'],
    summary: 'Return the current identity',
    success: { status: 200, schema: CurrentIdentityDetailEnvelope },
  }),

  // ---- identities (management)
  route({
    operationId: 'listIdentities',
    method: 'GET',
    path: '/identities',
    apis: MANAGEMENT,
    owner,
    access: 'management',
    permission: 'identity',
    tags: ['Identity'],
    summary: 'List identities',
    query: Type.Object({
      ...listQuery,
      roleFilter: Type.Optional(Type.Array(Type.String(), { collectionFormat: 'multi' })),
      roleSemantic: Type.Optional(Type.String()),
    }),
    success: { status: 200, schema: ListIdentitiesEnvelope },
  }),
  route({
    operationId: 'createIdentity',
    method: 'POST',
    path: '/identities',
    apis: MANAGEMENT,
    owner,
    access: 'management',
    permission: 'identity',
    tags: ['Identity'],
    summary: 'Create an identity resource',
    body: IdentityCreate,
    success: { status: 201, schema: CreateEnvelope },
  }),
  route({
    operationId: 'detailIdentity',
    method: 'GET',
    path: '/identities/{id}',
    apis: MANAGEMENT,
    owner,
    access: 'management',
    permission: 'identity',
    tags: ['Identity'],
    summary: 'Retrieves a single identity',
    success: { status: 200, schema: DetailIdentityEnvelope },
  }),
  route({
    operationId: 'updateIdentity',
    method: 'PUT',
    path: '/identities/{id}',
    apis: MANAGEMENT,
    owner,
    access: 'management',
    permission: 'identity',
    tags: ['Identity'],
    summary: 'Update all fields on an identity',
    body: IdentityUpdate,
    success: { status: 200, schema: Empty },
  }),
  route({
    operationId: 'patchIdentity',
    method: 'PATCH',
    path: '/identities/{id}',
    apis: MANAGEMENT,
    owner,
    access: 'management',
    permission: 'identity',
    tags: ['Identity'],
    summary: 'Update the supplied fields on an identity',
    body: IdentityPatch,
    success: { status: 200, schema: Empty },
  }),
  route({
    operationId: 'deleteIdentity',
    method: 'DELETE',
    path: '/identities/{id}',
    apis: MANAGEMENT,
    owner,
    access: 'management',
    permission: 'identity',
    tags: ['Identity'],
    summary: 'Delete an identity',
    success: { status: 200, schema: Empty },
  }),

  // ---- identity types (any authenticated caller, as the controller's IsAuthenticated)
  op({
    operationId: 'listIdentityTypes', method: 'GET', path: '/identity-types', access: 'authenticated', tags: ['Identity'],
    summary: 'List available identity types', query: Type.Object(listQuery), success: { status: 200, schema: ListIdentityTypesEnvelope },
  }),
  op({
    operationId: 'detailIdentityType', method: 'GET', path: '/identity-types/{id}', access: 'authenticated', tags: ['Identity'],
    summary: 'Retrieves a identity type', success: { status: 200, schema: DetailIdentityTypeEnvelope },
  }),

  // ---- API sessions (management; no entity permission exists for them: admin or admin_readonly)
  op({
    operationId: 'listAPISessions', method: 'GET', path: '/api-sessions', access: 'management', tags: ['API Session'],
    summary: 'List active API sessions', query: Type.Object(listQuery), success: { status: 200, schema: ListApiSessionsEnvelope },
  }),
  op({
    operationId: 'detailAPISessions', method: 'GET', path: '/api-sessions/{id}', access: 'management', tags: ['API Session'],
    summary: 'Retrieves a single API Session', success: { status: 200, schema: DetailApiSessionEnvelope },
  }),
  op({
    operationId: 'deleteAPISessions', method: 'DELETE', path: '/api-sessions/{id}', access: 'management', tags: ['API Session'],
    summary: 'Deletes an API Sessions', success: { status: 200, schema: Empty },
  }),

  // ---- revocations of OIDC tokens, sessions and identities (management; OIDC.md: reads admin or admin_readonly, create admins only)
  op({
    operationId: 'listRevocations', method: 'GET', path: '/revocations', access: 'management', tags: ['Revocation'],
    summary: 'List Revocations', query: Type.Object(listQuery), success: { status: 200, schema: ListRevocationsEnvelope },
  }),
  op({
    operationId: 'createRevocation', method: 'POST', path: '/revocations', access: 'admin', tags: ['Revocation'],
    summary: 'Create a Revocation', body: RevocationCreate, success: { status: 201, schema: CreateEnvelope },
  }),
  op({
    operationId: 'detailRevocation', method: 'GET', path: '/revocations/{id}', access: 'management', tags: ['Revocation'],
    summary: 'Retrieves a single Revocation', success: { status: 200, schema: DetailRevocationEnvelope },
  }),

  // ---- the second factor and the caller's own MFA / authenticators (partial = reachable before MFA)
  op({
    operationId: 'authenticateMfa', method: 'POST', path: '/authenticate/mfa', apis: BOTH, access: 'partial',
    tags: ['Authentication', 'MFA'], summary: 'Complete MFA authentication', body: MfaCode, success: { status: 200, schema: Empty },
  }),
  op({
    // OIDC sessions only (OIDC.md "TOTP token"); a legacy session is 400 INVALID_BACKING_TOKEN_TYPE.
    operationId: 'createTotpToken', method: 'POST', path: '/current-api-session/totp-token', apis: BOTH, access: 'authenticated',
    tags: ['Current API Session', 'MFA'],
    summary: 'Create an MFA TOTP token that proves TOTP code checking has passed as a specific time for posture checks.',
    body: MfaCode, success: { status: 200, schema: TotpTokenEnvelope },
  }),
  op({
    operationId: 'enrollMfa', method: 'POST', path: '/current-identity/mfa', apis: BOTH, access: 'partial', tags: MFA_TAGS,
    summary: 'Initiate MFA enrollment', success: { status: 201, schema: CreateEnvelope },
  }),
  op({
    operationId: 'detailMfa', method: 'GET', path: '/current-identity/mfa', apis: BOTH, access: 'partial', tags: MFA_TAGS,
    summary: 'Returns the current status of MFA enrollment', success: { status: 200, schema: DetailMfaEnvelope },
  }),
  op({
    operationId: 'deleteMfa', method: 'DELETE', path: '/current-identity/mfa', apis: BOTH, access: 'authenticated', tags: MFA_TAGS,
    summary: 'Disable MFA for the current identity (a code in the body or the mfa-validation-code header)', success: { status: 200, schema: Empty },
  }),
  op({
    operationId: 'detailMfaQrCode', method: 'GET', path: '/current-identity/mfa/qr-code', apis: BOTH, access: 'partial', tags: MFA_TAGS,
    summary: 'Show a QR code for unverified MFA enrollments', success: { status: 200, contentType: 'image/png' },
  }),
  op({
    operationId: 'detailMfaRecoveryCodes', method: 'GET', path: '/current-identity/mfa/recovery-codes', apis: BOTH, access: 'authenticated',
    tags: MFA_TAGS, summary: 'For a current TOTP code (body or mfa-validation-code header), the recovery codes',
    success: { status: 200, schema: DetailMfaRecoveryCodesEnvelope },
  }),
  op({
    operationId: 'createMfaRecoveryCodes', method: 'POST', path: '/current-identity/mfa/recovery-codes', apis: BOTH, access: 'authenticated',
    tags: MFA_TAGS, summary: 'For a valid code, generate new recovery codes', body: MfaCode, success: { status: 200, schema: Empty },
  }),
  op({
    operationId: 'verifyMfa', method: 'POST', path: '/current-identity/mfa/verify', apis: BOTH, access: 'partial', tags: MFA_TAGS,
    summary: 'Complete MFA enrollment with a TOTP code', body: MfaCode, success: { status: 200, schema: Empty },
  }),
  op({
    operationId: 'listCurrentIdentityAuthenticators', method: 'GET', path: '/current-identity/authenticators', apis: BOTH, access: 'authenticated',
    tags: ['Current API Session'], summary: 'List authenticators for the current identity', query: Type.Object(listQuery),
    success: { status: 200, schema: ListAuthenticatorsEnvelope },
  }),
  op({
    operationId: 'detailCurrentIdentityAuthenticator', method: 'GET', path: '/current-identity/authenticators/{id}', apis: BOTH,
    access: 'authenticated', tags: ['Current API Session'], summary: 'Retrieve an authenticator for the current identity',
    success: { status: 200, schema: DetailAuthenticatorEnvelope },
  }),
  op({
    operationId: 'updateCurrentIdentityAuthenticator', method: 'PUT', path: '/current-identity/authenticators/{id}', apis: BOTH,
    access: 'authenticated', tags: ['Current API Session'], summary: 'Update all fields on an authenticator of this identity',
    body: AuthenticatorUpdateWithCurrent, success: { status: 200, schema: Empty },
  }),
  op({
    operationId: 'patchCurrentIdentityAuthenticator', method: 'PATCH', path: '/current-identity/authenticators/{id}', apis: BOTH,
    access: 'authenticated', tags: ['Current API Session'], summary: 'Update the supplied fields on an authenticator of this identity',
    body: AuthenticatorPatchWithCurrent, success: { status: 200, schema: Empty },
  }),
  // Certificate extension (the caller presents its current certificate; the gateway forwards it signed).
  op({
    operationId: 'extendCurrentIdentityAuthenticator', method: 'POST', path: '/current-identity/authenticators/{id}/extend', apis: BOTH,
    access: 'authenticated', tags: EXTEND_TAGS, summary: 'Allows the current identity to recieve a new certificate associated with a certificate based authenticator',
    body: IdentityExtendEnrollmentRequest, success: { status: 200, schema: IdentityExtendEnrollmentEnvelope },
  }),
  op({
    operationId: 'extendVerifyCurrentIdentityAuthenticator', method: 'POST', path: '/current-identity/authenticators/{id}/extend-verify', apis: BOTH,
    access: 'authenticated', tags: EXTEND_TAGS, summary: 'Allows the current identity to validate reciept of a new client certificate',
    body: IdentityExtendValidateEnrollmentRequest, success: { status: 200, schema: Empty },
  }),

  // Token enrollment: the external JWT signers and the identities are this context's; the CSR is
  // signed by pki-enrollment (SignIdentityCsr).
  op({
    operationId: 'enrollToken', method: 'POST', path: '/enroll/token', apis: CLIENT, access: 'anonymous', tags: ['Enroll'],
    summary: 'Enroll an identity with an external JWT (Authorization: Bearer), to a certificate (with a CSR) or to token authentication',
    body: TokenEnrollmentRequest, success: { status: 200, schema: EnrollmentCertsEnvelope },
  }),

  // ---- auth policies, authenticators, external JWT signers (management)
  ...crud({
    path: '/auth-policies', permission: 'auth-policy', tag: 'Auth Policy', what: 'auth policy',
    ids: { list: 'listAuthPolicies', create: 'createAuthPolicy', detail: 'detailAuthPolicy', update: 'updateAuthPolicy', patch: 'patchAuthPolicy', delete: 'deleteAuthPolicy' },
    envelopes: { list: ListAuthPoliciesEnvelope, detail: DetailAuthPolicyEnvelope },
    bodies: { create: AuthPolicyCreate, update: AuthPolicyUpdate, patch: AuthPolicyPatch },
  }),
  // Reads: admin or admin_readonly (HasAdminReadOnly); writes: admins only (IsAdmin).
  ...crud({
    path: '/authenticators', tag: 'Authenticator', what: 'authenticator', access: { read: 'management', write: 'admin' },
    ids: { list: 'listAuthenticators', create: 'createAuthenticator', detail: 'detailAuthenticator', update: 'updateAuthenticator', patch: 'patchAuthenticator', delete: 'deleteAuthenticator' },
    envelopes: { list: ListAuthenticatorsEnvelope, detail: DetailAuthenticatorEnvelope },
    bodies: { create: AuthenticatorCreate, update: AuthenticatorUpdate, patch: AuthenticatorPatch },
  }),
  ...crud({
    path: '/external-jwt-signers', permission: 'external-jwt-signer', tag: 'External JWT Signer', what: 'external JWT signer',
    ids: { list: 'listExternalJwtSigners', create: 'createExternalJwtSigner', detail: 'detailExternalJwtSigner', update: 'updateExternalJwtSigner', patch: 'patchExternalJwtSigner', delete: 'deleteExternalJwtSigner' },
    envelopes: { list: ListExternalJwtSignersEnvelope, detail: DetailExternalJwtSignerEnvelope },
    bodies: { create: ExternalJwtSignerCreate, update: ExternalJwtSignerUpdate, patch: ExternalJwtSignerPatch },
  }),
  // Certificate lifecycle (IsAdmin): flag for early extension, revert to an enrollment (pki-enrollment).
  op({
    operationId: 'requestExtendAuthenticator', method: 'POST', path: '/authenticators/{id}/request-extend', access: 'admin', tags: ['Authenticator'],
    summary: 'Indicate a certificate authenticator should be extended and optionally key rolled on next authentication.',
    body: RequestExtendAuthenticator, success: { status: 200, schema: Empty },
  }),
  op({
    // Not in the bundled spec (a newer edge-api operation): every certificate authenticator of the identity.
    operationId: 'requestExtendAllCertAuthenticators', method: 'POST', path: '/identities/{id}/request-extend', access: 'admin', tags: ['Authenticator'],
    summary: 'Indicate all certificate authenticators for the identity should be extended and optionally key rolled on next authentication.',
    body: RequestExtendAuthenticator, success: { status: 200, schema: Empty },
  }),
  op({
    operationId: 'reEnrollAuthenticator', method: 'POST', path: '/authenticators/{id}/re-enroll', access: 'admin', tags: ['Authenticator'],
    summary: 'Reverts an authenticator to an enrollment', body: ReEnroll, success: { status: 201, schema: CreateEnvelope },
  }),
  // The client API lists the enabled signers to anyone (SDKs and the console read it before login).
  op({
    operationId: 'listExternalJwtSigners', method: 'GET', path: '/external-jwt-signers', apis: ['client'], access: 'anonymous',
    tags: ['External JWT Signer'], summary: 'List Client External JWT Signers', query: Type.Object(listQuery),
    success: { status: 200, schema: ListClientExternalJwtSignersEnvelope },
  }),

  // ---- identity lifecycle and role attributes (management)
  op({
    operationId: 'getIdentityAuthenticators', method: 'GET', path: '/identities/{id}/authenticators', access: 'management',
    tags: ['Identity'], summary: 'Retrieve the current authenticators of a specific identity', success: { status: 200, schema: ListAuthenticatorsEnvelope },
  }),
  // These three need `identity.update` whatever their verb (the controller's InitPermissionsContext):
  // the handlers check it, since the contract derives the action from the verb.
  op({
    operationId: 'disableIdentity', method: 'POST', path: '/identities/{id}/disable', access: 'authenticated', tags: ['Identity'],
    summary: 'Set an identity as disabled', body: DisableParams, success: { status: 200, schema: Empty },
  }),
  op({
    operationId: 'enableIdentity', method: 'POST', path: '/identities/{id}/enable', access: 'authenticated', tags: ['Identity'],
    summary: 'Clears all disabled state from an identity', success: { status: 200, schema: Empty },
  }),
  op({
    operationId: 'removeIdentityMfa', method: 'DELETE', path: '/identities/{id}/mfa', access: 'authenticated', tags: ['Identity', 'MFA'],
    summary: 'Remove MFA from an identity', success: { status: 200, schema: Empty },
  }),
  // Identity tracing: `identity.update`, as the controller's InitPermissionsContext says.
  op({
    operationId: 'updateIdentityTracing', method: 'PUT', path: '/identities/{id}/trace', access: 'management', permission: 'identity',
    tags: ['Identity', 'Tracing'], summary: 'Enable/disable data flow tracing for an identity', body: TraceSpec,
    success: { status: 200, schema: TraceDetailEnvelope },
  }),

  // ---- controller settings (management; no handler in OpenZiti: reads admin or admin_readonly, writes admins only)
  op({
    operationId: 'listControllerSettings', method: 'GET', path: '/controller-settings', access: 'management', tags: ['Settings'],
    summary: 'List the global controller settings and the controller specific overrides', query: Type.Object(listQuery),
    success: { status: 200, schema: ListControllerSettingEnvelope },
  }),
  op({
    operationId: 'createControllerSetting', method: 'POST', path: '/controller-settings', access: 'admin', tags: ['Settings'],
    summary: 'Create a controller specific setting', body: ControllerSettingCreate, success: { status: 201, schema: CreateEnvelope },
  }),
  op({
    operationId: 'detailControllerSetting', method: 'GET', path: '/controller-settings/{id}', access: 'management', tags: ['Settings'],
    summary: 'Retrieves a single controller setting object by id', success: { status: 200, schema: DetailControllerSettingEnvelope },
  }),
  op({
    operationId: 'detailControllerSettingEffective', method: 'GET', path: '/controller-settings/{id}/effective', access: 'management', tags: ['Settings'],
    summary: 'Retrieves the effective and instance values of a controller setting', success: { status: 200, schema: DetailControllerSettingEffectiveEnvelope },
  }),
  op({
    operationId: 'updateControllerSetting', method: 'PUT', path: '/controller-settings/{id}/effective', access: 'admin', tags: ['Settings'],
    summary: 'Update all fields on a controller setting', body: ControllerSettingUpdate, success: { status: 200, schema: Empty },
  }),
  op({
    operationId: 'patchControllerSetting', method: 'PATCH', path: '/controller-settings/{id}/effective', access: 'admin', tags: ['Settings'],
    summary: 'Update the supplied fields on a controller setting', body: ControllerSettingPatch, success: { status: 200, schema: Empty },
  }),
  op({
    operationId: 'deleteControllerSetting', method: 'DELETE', path: '/controller-settings/{id}/effective', access: 'admin', tags: ['Settings'],
    summary: 'Delete a controller setting', success: { status: 200, schema: Empty },
  }),
  op({
    operationId: 'listIdentityRoleAttributes', method: 'GET', path: '/identity-role-attributes', access: 'management', permission: 'identity',
    tags: ['Role Attributes'], summary: 'List role attributes in use by identities', query: Type.Object(listQuery),
    success: { status: 200, schema: ListRoleAttributesEnvelope },
  }),
  op({
    operationId: 'listIdentityRoleAttributeUsage', method: 'GET', path: '/identity-role-attribute-usage', access: 'management', permission: 'identity',
    tags: ['Role Attributes'], summary: 'List identity role attributes with their usage by identities and policies',
    query: Type.Object({ ...listQuery, withIds: Type.Optional(Type.Boolean()) }), success: { status: 200, schema: ListRoleAttributeUsageEnvelope },
  }),
];
