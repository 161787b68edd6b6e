import { formatTimestamp } from '@ziti/errors';
import type { ApiSessionCertificate, Ca, Enrollment } from '../domain/model.js';

/** Wire shapes (swagger definitions) of this context's entities. Links are relative (§7.3). */

type Links = Record<string, { href: string }>;
const link = (href: string) => ({ href });

function entityRef(entity: string, id: string, name: string | null) {
  return { _links: { self: link(`./${entity}/${id}`) }, entity, id, ...(name ? { name } : {}) };
}

/** `enrollmentDetail`. */
export function enrollmentDetail(e: Enrollment) {
  const out: Record<string, unknown> = {
    _links: { self: link(`./enrollments/${e.id}`) } as Links,
    caId: e.caId,
    createdAt: formatTimestamp(e.createdAt),
    expiresAt: formatTimestamp(e.expiresAt),
    id: e.id,
    // Optional in the spec: left out when blanked for a caller who may not use it (`token` is required: '').
    ...(e.jwt ? { jwt: e.jwt } : {}),
    method: e.method,
    tags: e.tags,
    token: e.token,
    updatedAt: formatTimestamp(e.updatedAt),
    username: e.username ?? '',
  };
  if (e.identityId) {
    out.identityId = e.identityId;
    out.identity = entityRef('identities', e.identityId, e.identityName);
  }
  if (e.edgeRouterId) {
    out.edgeRouterId = e.edgeRouterId;
    out.edgeRouter = entityRef('edge-routers', e.edgeRouterId, e.routerName);
  }
  if (e.transitRouterId) {
    out.transitRouterId = e.transitRouterId;
    out.transitRouter = entityRef('transit-routers', e.transitRouterId, e.routerName);
  }
  return out;
}

/** `caDetail`. Links: `verify` while unverified, `jwt` while auto-enrollment is enabled. */
export function caDetail(ca: Ca) {
  const links: Links = { self: link(`./cas/${ca.id}`) };
  if (!ca.isVerified) links.verify = link(`./cas/${ca.id}/verify`);
  if (ca.isAutoCaEnrollmentEnabled) links.jwt = link(`./cas/${ca.id}/jwt`);
  return {
    _links: links,
    certPem: ca.certPem,
    createdAt: formatTimestamp(ca.createdAt),
    ...(ca.externalIdClaim ? { externalIdClaim: { ...ca.externalIdClaim } } : {}),
    fingerprint: ca.fingerprint,
    id: ca.id,
    identityNameFormat: ca.identityNameFormat,
    identityRoles: ca.identityRoles,
    isAuthEnabled: ca.isAuthEnabled,
    isAutoCaEnrollmentEnabled: ca.isAutoCaEnrollmentEnabled,
    isOttCaEnrollmentEnabled: ca.isOttCaEnrollmentEnabled,
    isVerified: ca.isVerified,
    name: ca.name,
    tags: ca.tags,
    updatedAt: formatTimestamp(ca.updatedAt),
    verificationToken: ca.verificationToken,
  };
}

/** `currentApiSessionCertificateDetail`. */
export function sessionCertDetail(c: ApiSessionCertificate) {
  return {
    _links: { self: link(`./current-api-session/certificates/${c.id}`) },
    certificate: c.certPem,
    createdAt: formatTimestamp(c.createdAt),
    fingerprint: c.fingerprint,
    id: c.id,
    subject: c.subject,
    tags: c.tags,
    updatedAt: formatTimestamp(c.updatedAt),
    validFrom: formatTimestamp(c.validFrom),
    validTo: formatTimestamp(c.validTo),
  };
}
