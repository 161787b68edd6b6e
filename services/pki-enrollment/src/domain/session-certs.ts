import { X509Certificate } from 'node:crypto';
import { ApiError } from '@ziti/errors';
import { isStorableText, shortId } from '@ziti/http-kit';
import { CsrError, parseCsr } from '../crypto/csr.js';
import { subjectString } from '@ziti/x509';
import type { ApiSessionCertificate, ListRequest, Page } from './model.js';
import type { ControllerPki } from './pki.js';
import type { UnitOfWork } from './ports.js';

/** Lifetime of an API-session certificate (the controller uses 12 hours). */
export const SESSION_CERT_LIFETIME_MS = 12 * 3600_000;

/**
 * The most certificates one API session holds unless configured otherwise
 * (`ZITI_MAX_API_SESSION_CERTIFICATES`). OpenZiti sets no bound. An SDK holds one per session and
 * asks for the next shortly before it expires (12 hours), so 10 leaves room for renewals and
 * retries while one session can no longer mint certificates without end.
 */
export const DEFAULT_MAX_API_SESSION_CERTIFICATES = 10;

/** The most API sessions one ListApiSessionCertificateFingerprints call may name. */
export const MAX_FINGERPRINT_SESSIONS_PER_CALL = 1000;
/** An id longer than this names no API session (ids are shortids or UUIDs). */
const MAX_SESSION_ID_LENGTH = 128;

/** 409: the session holds its bound of certificates (expired ones do not count: they are deleted first). */
function tooManyCertificates(max: number): ApiError {
  return ApiError.of('MAX_AUTHENTICATOR_METHODS_REACHED', {
    cause: { code: 'MAX_AUTHENTICATOR_METHODS_REACHED', message: `an API session holds at most ${max} certificates: delete one to create another` },
  });
}

/**
 * Ephemeral certificates of an API session (`/current-api-session/certificates`): issued from a
 * CSR for 12 hours with the session's SPIFFE id, visible only to their session, deleted with it
 * (`api-session.deleted`). A session holds at most `maxPerSession` (0 = no bound): a create first
 * deletes the session's expired certificates, and at the bound is refused with 409
 * MAX_AUTHENTICATOR_METHODS_REACHED (checked under a lock on the session, so concurrent creates
 * can not pass it). A create or delete raises `api-session-certificate.created|deleted` (ids only)
 * in its transaction: routers accept an SDK's certificate only when its fingerprint is among its
 * session's, and fabric pushes the session again on that event.
 */
export class SessionCertManager {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly pki: ControllerPki,
    private readonly maxPerSession = DEFAULT_MAX_API_SESSION_CERTIFICATES,
  ) {}

  async create(session: { apiSessionId: string; identityId: string }, csrPem: string): Promise<{ cert: ApiSessionCertificate; cas: string }> {
    let csr;
    try {
      csr = parseCsr(csrPem);
    } catch (err) {
      throw ApiError.of('COULD_NOT_PROCESS_CSR', { cause: { code: 'UNHANDLED', message: err instanceof CsrError ? err.message : String(err) } });
    }
    const id = shortId();
    await this.uow.run(async (tx) => {
      if (this.maxPerSession > 0) {
        await tx.lock(`session-certs:${session.apiSessionId}`);
        await tx.sessionCerts.deleteExpired(session.apiSessionId, new Date());
        if ((await tx.sessionCerts.countBySession(session.apiSessionId)) >= this.maxPerSession) throw tooManyCertificates(this.maxPerSession);
      }
      const issued = this.pki.issue(csr, {
        kind: 'client',
        sans: { uri: [this.pki.spiffeId(session.identityId, session.apiSessionId)] },
        fallbackCn: session.identityId,
        validityMs: SESSION_CERT_LIFETIME_MS,
      });
      const x509 = new X509Certificate(issued.der);
      await tx.sessionCerts.create({
        id,
        apiSessionId: session.apiSessionId,
        identityId: session.identityId,
        subject: subjectString(x509),
        fingerprint: issued.fingerprint,
        certPem: issued.pem,
        validFrom: new Date(x509.validFrom),
        validTo: new Date(x509.validTo),
      });
      await tx.emit({ type: 'api-session-certificate.created', certificateId: id, ...session });
    });
    return { cert: (await this.uow.repos.sessionCerts.findById(id))!, cas: this.pki.caBundlePem() };
  }

  list(apiSessionId: string, req: ListRequest): Promise<Page<ApiSessionCertificate>> {
    return this.uow.repos.sessionCerts.list(req, apiSessionId);
  }

  async detail(apiSessionId: string, id: string): Promise<ApiSessionCertificate> {
    const c = await this.uow.repos.sessionCerts.findById(id);
    if (!c || c.apiSessionId !== apiSessionId) throw ApiError.notFound();
    return c;
  }

  async delete(apiSessionId: string, id: string): Promise<void> {
    const cert = await this.detail(apiSessionId, id);
    await this.uow.run(async (tx) => {
      if (await tx.sessionCerts.delete(id)) {
        await tx.emit({ type: 'api-session-certificate.deleted', certificateId: id, apiSessionId, identityId: cert.identityId });
      }
    });
  }

  /**
   * The fingerprints of the certificates of these API sessions (fabric, for routers): one entry per
   * session that has any, in the order given, each session's oldest first. Ids no session can have
   * (too long, or text PostgreSQL can not hold) are left out; more than 1000 ids: 400 on
   * `apiSessionIds`.
   */
  async fingerprintsOf(apiSessionIds: readonly string[]): Promise<{ apiSessionId: string; fingerprints: string[] }[]> {
    const wanted = [...new Set(apiSessionIds.filter((id) => typeof id === 'string' && id.length > 0))];
    if (wanted.length > MAX_FINGERPRINT_SESSIONS_PER_CALL) {
      throw ApiError.field('apiSessionIds', `at most ${MAX_FINGERPRINT_SESSIONS_PER_CALL} API sessions per call`, wanted.length);
    }
    const lookable = wanted.filter((id) => id.length <= MAX_SESSION_ID_LENGTH && isStorableText(id));
    if (lookable.length === 0) return [];
    const bySession = new Map<string, string[]>();
    for (const row of await this.uow.repos.sessionCerts.fingerprintsBySessions(lookable)) {
      const list = bySession.get(row.apiSessionId) ?? [];
      list.push(row.fingerprint);
      bySession.set(row.apiSessionId, list);
    }
    return lookable.flatMap((id) => (bySession.has(id) ? [{ apiSessionId: id, fingerprints: bySession.get(id)! }] : []));
  }

  /** The session ended: its certificates go (idempotent). */
  sessionEnded(apiSessionId: string): Promise<number> {
    return this.uow.repos.sessionCerts.deleteBySession(apiSessionId);
  }
}
