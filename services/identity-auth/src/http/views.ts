import { formatTimestamp } from '@ziti/errors';
import { type Caller, mayUseEnrollmentSecrets } from '@ziti/http-kit';
import { isDisabled } from '../domain/model.js';
import type { ExternalJwtSigner } from '../domain/auth-model.js';
import type { EnrollmentInfo } from '../domain/pki-context.js';
import type { ApiSessionView, IdentityType, IdentityView } from '../domain/model.js';
import type { SessionAuthState } from '../domain/session-state.js';
import type { Expiry } from '../domain/session-time.js';

/** Wire shapes (swagger definitions) of this context's entities. Links are relative (§7.3). */

export type Links = Record<string, { href: string }>;

export const link = (href: string) => ({ href });

const IDENTITY_SUB_RESOURCES = [
  'edge-router-policies',
  'edge-routers',
  'service-policies',
  'services',
  'posture-data',
  'failed-service-requests',
  'authenticators',
  'enrollments',
  'service-configs',
] as const;

export function identityLinks(id: string, authPolicyId: string): Links {
  const links: Links = { self: link(`./identities/${id}`) };
  for (const sub of IDENTITY_SUB_RESOURCES) links[sub] = link(`./identities/${id}/${sub}`);
  links['auth-policies'] = link(`./auth-policies/${authPolicyId}`);
  return links;
}

export function entityRef(entity: string, id: string, name: string, links: Links = { self: link(`./${entity}/${id}`) }) {
  return { _links: links, entity, id, name };
}

export const ts = (d: Date | null) => (d ? formatTimestamp(d) : null);

/**
 * `identityEnrollments`: the outstanding enrollment of each method (`{}` when none). Without
 * `secrets` (a caller who may not use them, see `mayUseEnrollmentSecrets`) `jwt` and `token`,
 * optional in the spec, are left out.
 */
export function enrollmentBlock(enrollments: readonly EnrollmentInfo[], secrets: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const e of enrollments) {
    const base = { expiresAt: e.expiresAt, id: e.id, ...(secrets ? { jwt: e.jwt, token: e.token } : {}) };
    if (e.method === 'ott' || e.method === 'updb') out[e.method] = base;
    if (e.method === 'ottca' && e.caId) out.ottca = { ...base, ca: entityRef('cas', e.caId, e.caName), caId: e.caId };
  }
  return out;
}

/**
 * `identityDetail` as `viewer` may see it (its enrollments' secrets only when it may use them);
 * `'self'` is the identity itself. `links` defaults to the management links of the identity.
 */
export function identityDetail(v: IdentityView, viewer: Caller | 'self', links: Links = identityLinks(v.id, v.authPolicyId)) {
  const authenticators: Record<string, unknown> = {};
  if (v.cert) authenticators.cert = { id: v.cert.id, fingerprint: v.cert.fingerprint };
  if (v.updb) authenticators.updb = { id: v.updb.id, username: v.updb.username };
  return {
    _links: links,
    appData: v.appData,
    authPolicy: entityRef('auth-policies', v.authPolicyId, v.authPolicyName),
    authPolicyId: v.authPolicyId,
    authenticators,
    createdAt: formatTimestamp(v.createdAt),
    defaultHostingCost: v.defaultHostingCost,
    defaultHostingPrecedence: v.defaultHostingPrecedence,
    disabled: isDisabled(v),
    disabledAt: ts(v.disabledAt),
    disabledUntil: ts(v.disabledUntil),
    edgeRouterConnectionStatus: 'offline',
    enrollment: enrollmentBlock(v.enrollments ?? [], viewer === 'self' || mayUseEnrollmentSecrets(viewer, v)),
    envInfo: v.envInfo,
    externalId: v.externalId,
    hasApiSession: v.hasApiSession,
    hasEdgeRouterConnection: v.hasEdgeRouterConnection === true,
    id: v.id,
    interfaces: [],
    isAdmin: v.isAdmin,
    isDefaultAdmin: v.isDefaultAdmin,
    isMfaEnabled: v.isMfaEnabled,
    name: v.name,
    permissions: v.permissions,
    roleAttributes: v.roleAttributes,
    sdkInfo: v.sdkInfo,
    serviceHostingCosts: v.serviceHostingCosts,
    serviceHostingPrecedences: v.serviceHostingPrecedences,
    tags: v.tags,
    type: entityRef('identity-types', v.typeId, v.typeName),
    typeId: v.typeId,
    updatedAt: formatTimestamp(v.updatedAt),
  };
}

/** `GET /current-identity`: the identity detail with the current-identity links (incl. `mfa`). */
export function currentIdentityDetail(v: IdentityView) {
  return identityDetail(v, 'self', { self: link('./current-identity'), mfa: link('./current-identity/mfa') });
}

/** The MFA auth query of a session whose TOTP is outstanding (§2.4). */
function mfaQuery(isTotpEnrolled: boolean) {
  return {
    typeId: 'MFA',
    provider: 'ziti',
    format: 'alphaNumeric',
    httpMethod: 'POST',
    httpUrl: './authenticate/mfa',
    minLength: 4,
    maxLength: 6,
    isTotpEnrolled,
  };
}

/** The EXT-JWT auth query of a session that still needs a token of its required signer. */
function extJwtQuery(signer: ExternalJwtSigner | null) {
  if (!signer) return { typeId: 'EXT-JWT', provider: 'url' };
  return {
    typeId: 'EXT-JWT',
    provider: 'url',
    id: signer.id,
    httpUrl: signer.externalAuthUrl ?? '',
    clientId: signer.clientId ?? '',
    scopes: signer.scopes,
  };
}

/**
 * What a session still has to prove. With a request's state (the caller's own session) both
 * factors count; without one (management views) only the stored TOTP flags do.
 */
function authQueries(s: ApiSessionView, state?: SessionAuthState) {
  if (!state) return s.isMfaRequired && !s.isMfaComplete ? [mfaQuery(false)] : [];
  const out: Record<string, unknown>[] = [];
  if (state.totpPending) out.push(mfaQuery(state.totpEnrolled));
  if (state.extJwt && !state.extJwt.ok) out.push(extJwtQuery(state.extJwt.signer));
  return out;
}

/** `apiSessionDetail`. `cachedUpdatedAt` is in the spec's required list, so it is emitted too. */
export function apiSessionDetail(
  s: ApiSessionView,
  links: Links = { self: link(`./api-sessions/${s.id}`), sessions: link(`./api-sessions/${s.id}/sessions`) },
  state?: SessionAuthState,
) {
  const lastActivityAt = formatTimestamp(s.lastActivityAt);
  return {
    _links: links,
    authQueries: authQueries(s, state),
    authenticatorId: s.authenticatorId,
    cachedLastActivityAt: lastActivityAt,
    cachedUpdatedAt: lastActivityAt,
    configTypes: s.configTypes,
    createdAt: formatTimestamp(s.createdAt),
    id: s.id,
    identity: entityRef('identities', s.identityId, s.identityName),
    identityId: s.identityId,
    improperClientCertChain: s.improperClientCertChain,
    ipAddress: s.ipAddress,
    isCertExtendRequested: s.isCertExtendRequested,
    isCertExtendable: s.isCertExtendable,
    isCertKeyRollRequested: s.isCertKeyRollRequested,
    isMfaComplete: s.isMfaComplete,
    isMfaRequired: s.isMfaRequired,
    lastActivityAt,
    tags: s.tags,
    token: s.token,
    updatedAt: formatTimestamp(s.updatedAt),
  };
}

/** `currentApiSessionDetail`: the session seen by its owner, with its expiry and what it still has to prove. */
export function currentApiSessionDetail(s: ApiSessionView, expiry: Expiry, state: SessionAuthState) {
  return {
    ...apiSessionDetail(s, { self: link('./current-api-session') }, state),
    expirationSeconds: expiry.expirationSeconds,
    expiresAt: formatTimestamp(expiry.expiresAt),
  };
}

export function identityTypeDetail(t: IdentityType) {
  return {
    _links: { self: link(`./identity-types/${t.id}`) },
    createdAt: formatTimestamp(t.createdAt),
    id: t.id,
    name: t.name,
    tags: t.tags,
    updatedAt: formatTimestamp(t.updatedAt),
  };
}
