import { formatTimestamp } from '@ziti/errors';
import type { AuthPolicy, AuthenticatorView, ExternalJwtSigner, Mfa } from '../domain/auth-model.js';
import type { RoleAttributeUsage } from '../domain/role-attributes.js';
import { provisioningUrl } from '../domain/mfa/totp.js';
import { type Links, entityRef, link, ts } from './views.js';

/** Wire shapes (swagger definitions) of auth policies, authenticators, signers and MFA. */

const base = (id: string, links: Links, tags: Record<string, unknown>, createdAt: Date, updatedAt: Date) => ({
  _links: links,
  createdAt: formatTimestamp(createdAt),
  id,
  tags,
  updatedAt: formatTimestamp(updatedAt),
});

/** The zero time Go renders for an unset `time.Time` (a JWKS signer has no certificate dates). */
const ZERO_TIME = '0001-01-01T00:00:00.000Z';

/** `authPolicyDetail`. */
export function authPolicyDetail(p: AuthPolicy) {
  return {
    ...base(p.id, { self: link(`./auth-policies/${p.id}`) }, p.tags, p.createdAt, p.updatedAt),
    name: p.name,
    primary: {
      cert: { allowExpiredCerts: p.primaryCertAllowExpiredCerts, allowed: p.primaryCertAllowed },
      extJwt: { allowed: p.primaryExtJwtAllowed, allowedSigners: p.primaryExtJwtAllowedSigners },
      updb: {
        allowed: p.primaryUpdbAllowed,
        lockoutDurationMinutes: p.primaryUpdbLockoutDurationMinutes,
        maxAttempts: p.primaryUpdbMaxAttempts,
        minPasswordLength: p.primaryUpdbMinPasswordLength,
        requireMixedCase: p.primaryUpdbRequireMixedCase,
        requireNumberChar: p.primaryUpdbRequireNumberChar,
        requireSpecialChar: p.primaryUpdbRequireSpecialChar,
      },
    },
    secondary: { requireExtJwtSigner: p.secondaryRequiredExtJwtSigner, requireTotp: p.secondaryRequireTotp },
  };
}

/**
 * `authenticatorDetail`: `username` for updb, `certPem`/`fingerprint` and the extension flags for
 * cert. Never the hash or salt. `self` defaults to the management path.
 */
export function authenticatorDetail(a: AuthenticatorView, self = `./authenticators/${a.id}`) {
  const out: Record<string, unknown> = {
    ...base(a.id, { self: link(self), identities: link(`./identities/${a.identityId}`) }, a.tags, a.createdAt, a.updatedAt),
    identity: entityRef('identities', a.identityId, a.identityName),
    identityId: a.identityId,
    method: a.method,
  };
  if (a.method === 'updb') out.username = a.username ?? '';
  if (a.method === 'cert') {
    Object.assign(out, {
      certPem: a.certPem ?? '',
      fingerprint: a.fingerprint ?? '',
      isIssuedByNetwork: a.isIssuedByNetwork,
      isExtendRequested: a.isExtendRequested,
      isKeyRollRequested: a.isKeyRollRequested,
      extendRequestedAt: ts(a.extendRequestedAt),
      lastAuthResolvedToRoot: a.lastAuthResolvedToRoot,
      lastExtendRolledKeys: a.lastExtendRolledKeys,
    });
  }
  return out;
}

/** `externalJwtSignerDetail` (management). Unset optional strings are null, as the controller renders them. */
export function signerDetail(s: ExternalJwtSigner) {
  return {
    ...base(s.id, { self: link(`./external-jwt-signers/${s.id}`) }, s.tags, s.createdAt, s.updatedAt),
    audience: s.audience,
    certPem: s.certPem,
    claimsProperty: s.claimsProperty,
    clientId: s.clientId,
    commonName: s.commonName,
    enabled: s.enabled,
    enrollAttributeClaimsSelector: s.enrollAttributeClaimsSelector,
    enrollAuthPolicyId: s.enrollAuthPolicyId ?? '',
    enrollNameClaimsSelector: s.enrollNameClaimsSelector,
    enrollToCertEnabled: s.enrollToCertEnabled,
    enrollToTokenEnabled: s.enrollToTokenEnabled,
    externalAuthUrl: s.externalAuthUrl,
    fingerprint: s.fingerprint,
    issuer: s.issuer,
    jwksEndpoint: s.jwksEndpoint,
    kid: s.kid,
    name: s.name,
    notAfter: s.notAfter ? formatTimestamp(s.notAfter) : ZERO_TIME,
    notBefore: s.notBefore ? formatTimestamp(s.notBefore) : ZERO_TIME,
    scopes: s.scopes,
    targetToken: s.targetToken,
    useExternalId: s.useExternalId,
  };
}

/** `clientExternalJwtSignerDetail`: what an SDK needs before login (no keys, no issuer details). */
export function clientSignerDetail(s: ExternalJwtSigner) {
  return {
    ...base(s.id, { self: link(`./external-jwt-signers/${s.id}`) }, s.tags, s.createdAt, s.updatedAt),
    audience: s.audience,
    clientId: s.clientId,
    enrollToCertEnabled: s.enrollToCertEnabled,
    enrollToTokenEnabled: s.enrollToTokenEnabled,
    externalAuthUrl: s.externalAuthUrl,
    name: s.name,
    scopes: s.scopes,
    targetToken: s.targetToken,
  };
}

const MFA_SELF = './current-identity/mfa';

/** `detailMfa`: the provisioning URL and recovery codes only while unverified. */
export function mfaDetail(m: Mfa, identityName: string, issuer?: string) {
  const links: Links = { self: link(MFA_SELF) };
  if (m.isVerified) links['recovery-codes'] = link(`${MFA_SELF}/recovery-codes`);
  else Object.assign(links, { verify: link(`${MFA_SELF}/verify`), qr: link(`${MFA_SELF}/qr-code`) });
  const out: Record<string, unknown> = { ...base(m.id, links, m.tags, m.createdAt, m.updatedAt), isVerified: m.isVerified };
  if (!m.isVerified) {
    out.provisioningUrl = provisioningUrl(m.secret, identityName, issuer);
    out.recoveryCodes = m.recoveryCodes;
  }
  return out;
}

export function mfaRecoveryCodesDetail(m: Mfa) {
  return { ...base(m.id, { self: link(MFA_SELF) }, m.tags, m.createdAt, m.updatedAt), recoveryCodes: m.recoveryCodes };
}

const source = (v: string[] | number) => (Array.isArray(v) ? { count: v.length, ids: v } : { count: v });

/** `roleAttributeUsageDetail`: every source present (0 when unused); `ids` only with `withIds`. */
export function roleAttributeUsageDetail(u: RoleAttributeUsage) {
  return {
    roleAttribute: u.roleAttribute,
    usage: { identities: source(u.identities), servicePolicies: source(u.servicePolicies), edgeRouterPolicies: source(u.edgeRouterPolicies) },
  };
}
