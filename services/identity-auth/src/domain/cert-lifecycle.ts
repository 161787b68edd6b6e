import { X509Certificate, createHash } from 'node:crypto';
import { ApiError } from '@ziti/errors';
import type { EndedSessions, SessionEnder } from './credential-reset.js';
import type { PkiContext } from './pki-context.js';
import type { StoredAuthenticator, UnitOfWork } from './ports.js';

/** What `extend` answers: the new certificate (pending until verified) and the controller's CA bundle. */
export interface ExtendedCertificate {
  clientCert: string;
  ca: string;
}

const fingerprintOf = (der: Buffer) => createHash('sha1').update(der).digest('hex');

/** `extend-verify` takes exactly one PEM certificate; anything else is 400 INVALID_CLIENT_CERT. */
function singleCertificate(pem: string): X509Certificate {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length !== 1) throw ApiError.of('INVALID_CLIENT_CERT');
  try {
    return new X509Certificate(blocks[0]!);
  } catch {
    throw ApiError.of('INVALID_CLIENT_CERT');
  }
}

/** The DER of a certificate's public key (to tell whether an extension rolled the key). */
function spkiOf(pem: string | null): string | null {
  if (!pem) return null;
  try {
    return new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  } catch {
    return null;
  }
}

/**
 * The lifecycle of certificate authenticators (§6.7): an administrator flags them for early
 * extension (and key rolling), or turns an authenticator back into an enrollment (`re-enroll`);
 * the identity itself extends its network-issued certificate (`extend`: a new certificate from a
 * CSR, kept pending while the current one keeps working) and then switches to it (`extend-verify`:
 * the old certificate stops authenticating). The "403" refusals of the controller are 401 here
 * (§3.3: the Edge API has no 403).
 */
export class CertificateLifecycle {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly pki: PkiContext,
    private readonly sessions?: SessionEnder,
  ) {}

  /** Flags one cert authenticator issued by the network; any other authenticator is refused. */
  async requestExtend(id: string, rollKeys: boolean): Promise<void> {
    await this.uow.run(async (tx) => {
      const a = await tx.authenticators.findForUpdate(id);
      if (!a) throw ApiError.notFound();
      if (a.method !== 'cert' || !a.isIssuedByNetwork) throw refused('only certificate authenticators issued by the network can be extended');
      await tx.authenticators.requestExtend([id], rollKeys, new Date());
    });
  }

  /** Flags every network-issued cert authenticator of an identity; an identity without one is refused. */
  async requestExtendAll(identityId: string, rollKeys: boolean): Promise<void> {
    await this.uow.run(async (tx) => {
      if (!(await tx.identities.findByIdForUpdate(identityId))) throw ApiError.notFound();
      const ids = (await tx.authenticators.certsOfIdentity(identityId)).filter((a) => a.isIssuedByNetwork).map((a) => a.id);
      if (ids.length === 0) throw refused('the identity has no certificate authenticator issued by the network');
      await tx.authenticators.requestExtend(ids, rollKeys, new Date());
    });
  }

  /**
   * Reverts an authenticator to an enrollment of the matching method (cert → `ott`, or `ottca`
   * when a third-party CA issued it; updb → `updb` with its username) expiring at `expiresAt`, and
   * deletes the authenticator, in one transaction. The credential is gone, and so is every session
   * of the identity (its OIDC tokens revoked). Returns the enrollment id.
   */
  async reEnroll(id: string, expiresAt: string): Promise<string> {
    let enrollmentId: string | undefined;
    let ended: EndedSessions | undefined;
    try {
      ended = await this.uow.run(async (tx) => {
        const a = await tx.authenticators.findForUpdate(id);
        if (!a) throw ApiError.notFound();
        const identity = await tx.identities.findById(a.identityId);
        if (!identity) throw ApiError.notFound();
        const method = a.method === 'updb' ? 'updb' : a.caId ? 'ottca' : 'ott';
        const e = await this.pki.createEnrollment({
          identityId: a.identityId, method, expiresAt, identityName: identity.name,
          ...(method === 'ottca' ? { caId: a.caId! } : {}), ...(method === 'updb' ? { username: a.username ?? '' } : {}),
        });
        enrollmentId = e.id;
        await tx.authenticators.delete(id);
        return this.sessions?.endIn(tx, a.identityId);
      });
    } catch (err) {
      if (enrollmentId) await this.pki.deleteEnrollment(enrollmentId);
      throw err;
    }
    await this.sessions?.after(ended);
    return enrollmentId!;
  }

  /**
   * A new certificate for the caller's own network-issued cert authenticator, from a CSR. The
   * request must present the authenticator's current certificate (mTLS). The new certificate is
   * kept pending: it authenticates only after `verifyExtend`.
   */
  async extend(ownerId: string, id: string, presented: readonly Buffer[], csrPem: string): Promise<ExtendedCertificate> {
    const a = await this.own(ownerId, id);
    if (!a.isIssuedByNetwork || !a.certPem || !a.fingerprint) throw ApiError.of('CAN_NOT_UPDATE_AUTHENTICATOR');
    if (!presented.some((der) => fingerprintOf(der) === a.fingerprint)) throw ApiError.of('UNAUTHORIZED');
    const signed = await this.pki.signIdentityCsr(ownerId, csrPem);
    await this.uow.run(async (tx) => {
      if (!(await tx.authenticators.findForUpdate(id))) throw ApiError.notFound();
      await tx.authenticators.setPendingCert(id, signed.certPem, signed.fingerprint);
    });
    return { clientCert: signed.certPem, ca: signed.caBundlePem };
  }

  /** The pending certificate (given back as proof of receipt) becomes the authenticator's; the flags clear. */
  async verifyExtend(ownerId: string, id: string, clientCertPem: string): Promise<void> {
    const a = await this.own(ownerId, id);
    if (!a.unverifiedFingerprint) throw ApiError.of('CAN_NOT_UPDATE_AUTHENTICATOR');
    const cert = singleCertificate(clientCertPem);
    const fingerprint = fingerprintOf(cert.raw);
    if (fingerprint !== a.unverifiedFingerprint) throw ApiError.of('INVALID_CLIENT_CERT');
    const rolledKeys = spkiOf(a.certPem) !== spkiOf(a.unverifiedCertPem);
    await this.uow.run(async (tx) => {
      const current = await tx.authenticators.findForUpdate(id);
      if (!current || current.unverifiedFingerprint !== fingerprint) throw ApiError.of('INVALID_CLIENT_CERT');
      await tx.authenticators.promotePendingCert(id, rolledKeys);
    });
  }

  /** The caller's cert authenticator: unknown → 404, another method → 409, another identity's → 401. */
  private async own(ownerId: string, id: string): Promise<StoredAuthenticator> {
    const a = await this.uow.repos.authenticators.find(id);
    if (!a) throw ApiError.notFound();
    if (a.method !== 'cert') throw ApiError.of('CAN_NOT_UPDATE_AUTHENTICATOR');
    if (a.identityId !== ownerId) throw ApiError.of('UNAUTHORIZED');
    return a;
  }
}

const refused = (message: string) => ApiError.of('UNAUTHORIZED', { cause: { code: 'UNAUTHORIZED', message } });
