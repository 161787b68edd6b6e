import { X509Certificate, createHash } from 'node:crypto';
import { ApiError } from '@ziti/errors';
import { normalizeName } from '@ziti/http-kit';
import type { ExternalJwtSignerFields, SignerCertFacts } from '../auth-model.js';
import type { JsonMap } from '../model.js';

/** `externalJwtSignerCreate` / `Update` / `Patch` as the HTTP layer hands them over. */
export interface SignerInput {
  name?: string | null;
  enabled?: boolean | null;
  issuer?: string | null;
  audience?: string | null;
  certPem?: string | null;
  jwksEndpoint?: string | null;
  kid?: string | null;
  claimsProperty?: string | null;
  useExternalId?: boolean | null;
  externalAuthUrl?: string | null;
  clientId?: string | null;
  scopes?: string[] | null;
  targetToken?: string | null;
  enrollToCertEnabled?: boolean | null;
  enrollToTokenEnabled?: boolean | null;
  enrollNameClaimsSelector?: string | null;
  enrollAttributeClaimsSelector?: string | null;
  enrollAuthPolicyId?: string | null;
  tags?: JsonMap | null;
}

export const DEFAULT_CLAIMS_PROPERTY = 'sub';
const TARGET_TOKENS = ['ACCESS', 'ID'] as const;

const text = (v: string | null | undefined): string | null => (v === undefined || v === null || v === '' ? null : v);

function required(field: string, v: string | null | undefined): string {
  if (typeof v !== 'string' || v === '') throw ApiError.field(field, `${field} in body is required`, v ?? '');
  return v;
}

/** Every field of a create or PUT; absent optional ones take their defaults. */
export function fullSigner(input: SignerInput): ExternalJwtSignerFields {
  const target = input.targetToken ?? 'ACCESS';
  if (!(TARGET_TOKENS as readonly string[]).includes(target)) {
    throw ApiError.field('targetToken', `targetToken in body should be one of [${TARGET_TOKENS.join(' ')}]`, target);
  }
  return {
    name: required('name', typeof input.name === 'string' ? normalizeName(input.name) : input.name),
    enabled: input.enabled === true,
    issuer: required('issuer', input.issuer),
    audience: required('audience', input.audience),
    certPem: text(input.certPem),
    jwksEndpoint: text(input.jwksEndpoint),
    kid: text(input.kid),
    claimsProperty: text(input.claimsProperty) ?? DEFAULT_CLAIMS_PROPERTY,
    useExternalId: input.useExternalId === true,
    externalAuthUrl: text(input.externalAuthUrl),
    clientId: text(input.clientId),
    scopes: [...(input.scopes ?? [])],
    targetToken: target as ExternalJwtSignerFields['targetToken'],
    enrollToCertEnabled: input.enrollToCertEnabled === true,
    enrollToTokenEnabled: input.enrollToTokenEnabled === true,
    enrollNameClaimsSelector: input.enrollNameClaimsSelector ?? '',
    enrollAttributeClaimsSelector: input.enrollAttributeClaimsSelector ?? '',
    enrollAuthPolicyId: text(input.enrollAuthPolicyId),
    tags: input.tags && typeof input.tags === 'object' ? { ...input.tags } : {},
  };
}

/** PATCH: the fields present in the body replace the current ones (null clears the nullable ones). */
export function patchedSigner(current: ExternalJwtSignerFields, input: SignerInput): ExternalJwtSignerFields {
  const merged: SignerInput = { ...current };
  for (const [k, v] of Object.entries(input)) if (v !== undefined) (merged as Record<string, unknown>)[k] = v;
  for (const k of ['name', 'issuer', 'audience', 'enabled'] as const) {
    if (input[k] === null) (merged as Record<string, unknown>)[k] = current[k];
  }
  return fullSigner(merged);
}

/** The lower-case hex SHA-1 of a certificate's DER (OpenZiti's fingerprint form). */
export function certFingerprint(cert: X509Certificate): string {
  return createHash('sha1').update(cert.raw).digest('hex');
}

/** Exactly one PEM certificate, parsed; anything else → 400 INVALID_CERT_PEM. */
export function parseSingleCertificate(pem: string): X509Certificate {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length !== 1) {
    throw ApiError.of('INVALID_CERT_PEM', { cause: { field: 'certPem', reason: `expected exactly one certificate, found ${blocks.length}` } });
  }
  try {
    return new X509Certificate(blocks[0]!);
  } catch (err) {
    throw ApiError.of('INVALID_CERT_PEM', { cause: { field: 'certPem', reason: (err as Error).message } });
  }
}

const NO_CERT: SignerCertFacts = { fingerprint: null, commonName: '', notBefore: null, notAfter: null };

/**
 * The rules of a signer's key source: exactly one of `certPem` (which then needs a `kid`) and
 * `jwksEndpoint` (http or https; where it may point is checked by the signer manager's
 * `OutboundUrlCheck`). Returns the facts of the certificate.
 */
export function checkSigner(f: ExternalJwtSignerFields): SignerCertFacts {
  if (f.certPem && f.jwksEndpoint) throw ApiError.field('certPem', 'only one of certPem and jwksEndpoint may be set', '');
  if (!f.certPem && !f.jwksEndpoint) throw ApiError.field('certPem', 'certPem or jwksEndpoint is required', '');
  if (f.externalAuthUrl !== null) httpUrl('externalAuthUrl', f.externalAuthUrl);
  if (f.jwksEndpoint) {
    httpUrl('jwksEndpoint', f.jwksEndpoint);
    return NO_CERT;
  }
  if (!f.kid) throw ApiError.field('kid', 'kid is required when certPem is set', '');
  const cert = parseSingleCertificate(f.certPem!);
  return {
    fingerprint: certFingerprint(cert),
    commonName: /(?:^|\n)CN=([^\n]*)/.exec(cert.subject)?.[1] ?? '',
    notBefore: new Date(cert.validFrom),
    notAfter: new Date(cert.validTo),
  };
}

/** `value` as a URL the controller may fetch or hand out: absolute, http or https; else 400 COULD_NOT_VALIDATE on `field`. */
export function httpUrl(field: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw ApiError.field(field, `${field} in body must be of type uri: "${value}"`, value);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw ApiError.field(field, `${field} must use http or https`, value);
  return url;
}
