import type { TSchema } from '@sinclair/typebox';
import { BaseEntity, CreateEnvelope, CreateLocation, Empty, EntityRef, Link, Links, Meta, Pagination, SubTags, Tags } from './common.js';
import * as auth from './identity-auth-auth.js';
import * as identities from './identity-auth-identities.js';
import * as oidc from './identity-auth-oidc.js';
import * as settings from './identity-auth-settings.js';

/**
 * Models of the identity-auth context, transcribed from the OpenZiti swagger definitions of the
 * same name (`$id` = definition name): identities, identity types and role attributes in
 * identity-auth-identities.ts; authenticate, API sessions, auth policies, authenticators, external
 * JWT signers and MFA in identity-auth-auth.ts. Shared shapes and conventions are in common.ts.
 */

export * from './identity-auth-auth.js';
export * from './identity-auth-identities.js';
export * from './identity-auth-oidc.js';
export * from './identity-auth-settings.js';
export { BaseEntity, CreateEnvelope, CreateLocation, Empty, EntityRef, Link, Links, Meta, Pagination, SubTags, Tags };

/** Models of the identity-auth context (identities, API sessions, authenticate, …). */
export const IDENTITY_AUTH_MODELS: Record<string, TSchema> = Object.fromEntries(
  [
    Link, Links, SubTags, Tags, EntityRef, BaseEntity, Pagination, Meta, Empty, CreateLocation, CreateEnvelope,
    identities.Attributes, identities.Permissions, identities.TerminatorCost, identities.TerminatorPrecedence,
    identities.TerminatorCostMap, identities.TerminatorPrecedenceMap, identities.IdentityTypeName, identities.EnvInfo,
    identities.SdkInfo, identities.IdentityAuthenticators, identities.IdentityEnrollments, identities.NetworkInterface,
    identities.IdentityCreate, identities.IdentityUpdate, identities.IdentityPatch, identities.IdentityDetail,
    identities.IdentityList, identities.IdentityTypeDetail, identities.IdentityTypeList, auth.Username, auth.Password,
    auth.ConfigTypes, auth.Authenticate, auth.AuthQueryDetail, auth.AuthQueryList, auth.ApiSessionDetail, auth.ApiSessionList,
    auth.CurrentApiSessionDetail, identities.ListIdentitiesEnvelope, identities.DetailIdentityEnvelope,
    identities.CurrentIdentityDetailEnvelope, identities.ListIdentityTypesEnvelope, identities.DetailIdentityTypeEnvelope,
    auth.ListApiSessionsEnvelope, auth.DetailApiSessionEnvelope, auth.CurrentApiSessionDetailEnvelope,
    auth.AuthPolicyPrimaryCert, auth.AuthPolicyPrimaryCertPatch, auth.AuthPolicyPrimaryExtJwt, auth.AuthPolicyPrimaryExtJwtPatch,
    auth.AuthPolicyPrimaryUpdb, auth.AuthPolicyPrimaryUpdbPatch, auth.AuthPolicyPrimary, auth.AuthPolicyPrimaryPatch,
    auth.AuthPolicySecondary, auth.AuthPolicySecondaryPatch, auth.AuthPolicyCreate, auth.AuthPolicyUpdate, auth.AuthPolicyPatch,
    auth.AuthPolicyDetail, auth.AuthPolicyList, auth.UsernameNullable, auth.PasswordNullable, auth.AuthenticatorCreate,
    auth.AuthenticatorUpdate, auth.AuthenticatorPatch, auth.AuthenticatorUpdateWithCurrent, auth.AuthenticatorPatchWithCurrent,
    auth.AuthenticatorDetail, auth.AuthenticatorList, auth.RequestExtendAuthenticator, auth.ReEnroll,
    auth.IdentityExtendEnrollmentRequest, auth.TokenEnrollmentRequest, auth.IdentityExtendValidateEnrollmentRequest, auth.IdentityExtendCerts,
    auth.IdentityExtendEnrollmentEnvelope, auth.TargetToken, auth.ExternalJwtSignerCreate, auth.ExternalJwtSignerUpdate,
    auth.ExternalJwtSignerPatch, auth.ExternalJwtSignerDetail, auth.ExternalJwtSignerList, auth.ClientExternalJwtSignerDetail,
    auth.ClientExternalJwtSignerList, auth.MfaCode, auth.DetailMfa, auth.DetailMfaRecoveryCodes, identities.DisableParams,
    identities.RoleAttributesList, identities.RoleAttributeSourceUsage, identities.RoleAttributeUsageDetail,
    identities.RoleAttributeUsageList, auth.ListAuthPoliciesEnvelope, auth.DetailAuthPolicyEnvelope,
    auth.ListAuthenticatorsEnvelope, auth.DetailAuthenticatorEnvelope, auth.ListExternalJwtSignersEnvelope,
    auth.DetailExternalJwtSignerEnvelope, auth.ListClientExternalJwtSignersEnvelope, auth.DetailMfaEnvelope,
    auth.DetailMfaRecoveryCodesEnvelope, identities.ListRoleAttributesEnvelope, identities.ListRoleAttributeUsageEnvelope,
    settings.ControllerSettings, settings.ControllerSettingCreate, settings.ControllerSettingUpdate, settings.ControllerSettingPatch,
    settings.ControllerSettingDetail, settings.ControllerSettingsList, settings.ControllerSettingEffective,
    settings.ListControllerSettingEnvelope, settings.DetailControllerSettingEnvelope, settings.DetailControllerSettingEffectiveEnvelope,
    settings.TraceSpec, settings.TraceDetail, settings.TraceDetailEnvelope,
    oidc.RevocationTypeEnum, oidc.RevocationCreate, oidc.RevocationDetail, oidc.RevocationList, oidc.ListRevocationsEnvelope,
    oidc.DetailRevocationEnvelope, oidc.TotpToken, oidc.TotpTokenEnvelope,
  ].map((s) => [s.$id as string, s]),
);
