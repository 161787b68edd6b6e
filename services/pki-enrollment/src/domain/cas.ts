import { X509Certificate, randomUUID } from 'node:crypto';
import { ApiError } from '@ziti/errors';
import { normalizeName, shortId } from '@ziti/http-kit';
import { type ExternalIdClaimSpec, certCommonName, claimProblem } from '../crypto/claims.js';
import { fingerprint, pemBlocks, pemCertificates } from '@ziti/x509';
import type { Jwts } from './jwts.js';
import type { Ca, ListRequest, Page } from './model.js';
import type { IdentityDirectory, UnitOfWork } from './ports.js';

export const DEFAULT_IDENTITY_NAME_FORMAT = '[caName]-[commonName]';

/** The writable fields of a CA (create, update; a patch supplies any subset). */
export interface CaFields {
  name: string;
  isAuthEnabled: boolean;
  isAutoCaEnrollmentEnabled: boolean;
  isOttCaEnrollmentEnabled: boolean;
  identityRoles: string[];
  identityNameFormat: string;
  externalIdClaim: ExternalIdClaimSpec | null;
  tags: Record<string, unknown>;
}

/** A claim as the wire carries it (every field nullable). */
export type ClaimInput = Partial<Record<keyof ExternalIdClaimSpec, string | number | null>> | null | undefined;

export function claimFrom(input: ClaimInput, base?: ExternalIdClaimSpec | null): ExternalIdClaimSpec | null {
  if (input === null || input === undefined) return base ?? null;
  const s = (k: keyof ExternalIdClaimSpec, d: string) => (input[k] === undefined ? d : input[k] === null ? '' : String(input[k]));
  const claim: ExternalIdClaimSpec = {
    location: s('location', base?.location ?? ''),
    matcher: s('matcher', base?.matcher ?? ''),
    matcherCriteria: s('matcherCriteria', base?.matcherCriteria ?? ''),
    parser: s('parser', base?.parser ?? ''),
    parserCriteria: s('parserCriteria', base?.parserCriteria ?? ''),
    index: input.index === undefined ? (base?.index ?? 0) : input.index === null ? 0 : Number(input.index),
  };
  const problem = claimProblem(claim);
  if (problem) throw ApiError.field(problem.field, problem.reason, problem.value);
  return claim;
}

/** Replaces the name-format symbols that pki-enrollment knows; `[identityId]` is left for identity-auth. */
export function formatIdentityName(format: string, v: { caName: string; caId: string; commonName: string; requestedName: string }): string {
  return (format || DEFAULT_IDENTITY_NAME_FORMAT)
    .replaceAll('[caName]', v.caName)
    .replaceAll('[caId]', v.caId)
    .replaceAll('[commonName]', v.commonName)
    .replaceAll('[requestedName]', v.requestedName);
}

/**
 * Third-party CAs: created unverified with a verification token, verified by a certificate they
 * signed whose common name is that token; only verified CAs serve authentication and enrollment.
 * Deleting a CA deletes its enrollments (cascade) and asks identity-auth to delete the certificate
 * authenticators it issued (the `ca.deleted` event carries the same request durably).
 */
/**
 * A CA's name in its stored form (`normalizeName`: NFC, no surrounding white space), so names that
 * differ only by those clash on the unique index. Empty or only white space → 400, as OpenZiti's
 * unique name index refuses an empty value.
 */
function validCaName(name: string): string {
  const normalized = normalizeName(name);
  if (normalized === '') throw ApiError.field('name', 'name in body is required', name);
  return normalized;
}

export class CaManager {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly jwts: Jwts,
    private readonly identities: IdentityDirectory,
    private readonly log: (m: string) => void,
  ) {}

  /** `byAdmin`: an admin writes it (see `Ca.trustedForAdmins`). */
  async create(certPemInput: string, fields: CaFields, byAdmin: boolean): Promise<string> {
    const name = validCaName(fields.name);
    const blocks = pemBlocks(certPemInput, ['CERTIFICATE']);
    if (blocks.length === 0) throw ApiError.field('certPem', 'at least one leaf certificate must be supplied', certPemInput);
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(blocks[0]!);
    } catch (err) {
      throw ApiError.field('certPem', (err as Error).message, certPemInput);
    }
    if (!cert.ca) throw ApiError.of('CERTIFICATE_IS_NOT_CA');
    const fp = fingerprint(cert.raw);
    const existing = await this.uow.repos.cas.findByFingerprint(fp);
    if (existing) throw ApiError.field('certPem', `certificate already used as CA ${existing.id}`, certPemInput);
    const id = shortId();
    await this.uow.repos.cas.create({
      id,
      ...fields,
      name,
      identityNameFormat: fields.identityNameFormat || DEFAULT_IDENTITY_NAME_FORMAT,
      fingerprint: fp,
      certPem: certPemInput,
      isVerified: false,
      verificationToken: randomUUID(),
      trustedForAdmins: byAdmin,
    });
    return id;
  }

  async detail(id: string): Promise<Ca> {
    const ca = await this.uow.repos.cas.findById(id);
    if (!ca) throw ApiError.notFound();
    return ca;
  }

  list(req: ListRequest): Promise<Page<Ca>> {
    return this.uow.repos.cas.list(req);
  }

  async update(id: string, fields: Partial<CaFields>, byAdmin: boolean): Promise<void> {
    const ca = await this.detail(id);
    const next: Ca = { ...ca, ...fields, trustedForAdmins: byAdmin, updatedAt: new Date() };
    if (fields.name !== undefined) next.name = validCaName(fields.name);
    if (fields.identityNameFormat !== undefined) next.identityNameFormat = fields.identityNameFormat || DEFAULT_IDENTITY_NAME_FORMAT;
    await this.uow.repos.cas.update(next);
  }

  /** `POST /cas/{id}/verify` with a PEM certificate signed by the CA whose common name is its token. */
  async verify(id: string, body: string): Promise<void> {
    const ca = await this.detail(id);
    if (ca.isVerified) throw ApiError.of('CA_ALREADY_VERIFIED');
    if (!body.trim()) throw ApiError.of('COULD_NOT_PARSE_BODY');
    const m = /-----BEGIN ([A-Z0-9 ]+)-----/.exec(body);
    if (!m) throw ApiError.of('COULD_NOT_PARSE_BODY', { cause: { code: 'UNHANDLED', message: 'no PEM block found' } });
    if (m[1] !== 'CERTIFICATE') throw ApiError.of('EXPECTED_PEM_CERTIFICATE', { cause: { code: 'UNHANDLED', message: `encountered PEM block type ${m[1]}` } });
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(pemBlocks(body, ['CERTIFICATE'])[0]!);
    } catch (err) {
      throw ApiError.of('COULD_NOT_PARSE_DER_BLOCK', { cause: { code: 'UNHANDLED', message: (err as Error).message } });
    }
    if (certCommonName(cert) !== ca.verificationToken) throw ApiError.of('INVALID_COMMON_NAME');
    const caCert = new X509Certificate(pemCertificates(ca.certPem)[0]!);
    let ok = false;
    try {
      ok = cert.checkIssued(caCert) && cert.verify(caCert.publicKey);
    } catch {
      ok = false;
    }
    if (!ok) throw ApiError.of('CERTIFICATE_FAILED_VALIDATION', { cause: { code: 'UNHANDLED', message: 'x509: certificate signed by unknown authority' } });
    await this.uow.run(async (tx) => {
      const current = await tx.cas.findById(id);
      if (!current) throw ApiError.notFound();
      await tx.cas.update({ ...current, isVerified: true, updatedAt: new Date() });
      await tx.emit({ type: 'ca.verified', caId: id });
    });
  }

  async delete(id: string): Promise<void> {
    await this.uow.run(async (tx) => {
      if (!(await tx.cas.delete(id))) throw ApiError.notFound();
      await tx.emit({ type: 'ca.deleted', caId: id });
    });
    try {
      await this.identities.deleteCaAuthenticators(id);
    } catch (err) {
      // The ca.deleted event asks the same durably; certificates of a deleted CA no longer verify anyway.
      this.log(`pki-enrollment: DeleteCaAuthenticators(${id}) failed, left to the ca.deleted event: ${(err as Error).message}`);
    }
  }

  async jwt(id: string): Promise<string> {
    const ca = await this.detail(id);
    return this.jwts.caJwt(ca.id);
  }
}
