import { ApiError } from '@ziti/errors';
import { usableAsClientCert } from '@ziti/x509';
import { certCommonName, externalIdOf } from '../crypto/claims.js';
import { type Csr, CsrError, parseCsr } from '../crypto/csr.js';
import { certPem, fingerprint } from '@ziti/x509';
import { parseChain, verifiedByCa } from './client-certs.js';
import { formatIdentityName } from './cas.js';
import type { Enrollment } from './model.js';
import type { ControllerPki } from './pki.js';
import type { IdentityDirectory, UnitOfWork } from './ports.js';

/** The body of an enrollment response (`enrollmentCerts`, or the empty object). */
export interface EnrollResult {
  cert?: string;
  serverCert?: string;
  ca?: string;
  username?: string;
}

/** What the generic `POST /enroll` received: a PEM CSR body, or JSON fields. */
export interface GenericInput {
  csrPem?: string;
  clientCsr?: string;
  certCsr?: string;
  serverCertCsr?: string;
  password?: string;
  username?: string;
  name?: string;
}

const ROUTER_METHODS = ['erott', 'trott'];

function csrOrFail(pem: string | undefined): Csr {
  if (!pem) throw ApiError.of('COULD_NOT_PROCESS_CSR', { cause: { code: 'UNHANDLED', message: 'no certificate signing request was supplied' } });
  try {
    return parseCsr(pem);
  } catch (err) {
    throw ApiError.of('COULD_NOT_PROCESS_CSR', { cause: { code: 'UNHANDLED', message: err instanceof CsrError ? err.message : String(err) } });
  }
}

/** identity-auth answered NOT_FOUND: the enrollment's identity is gone, so its token is no good. */
function identityGone(err: unknown): never {
  if (err instanceof ApiError && err.code === 'NOT_FOUND') throw ApiError.of('INVALID_ENROLLMENT_TOKEN');
  throw err;
}

/**
 * The enroll flows of the client API. A flow that needs identity-auth (creating an authenticator
 * or an identity) runs inside a transaction holding the enrollment's row lock: the enrollment is
 * deleted only when identity-auth succeeded, and two concurrent uses of one token cannot both win.
 */
export class EnrollFlows {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly pki: ControllerPki,
    private readonly identities: IdentityDirectory,
    private readonly now: () => number = Date.now,
  ) {}

  /** A usable enrollment by token: unknown → INVALID_ENROLLMENT_TOKEN, past its expiry → ENROLLMENT_EXPIRED. */
  async usable(token: string | undefined): Promise<Enrollment> {
    const e = token ? await this.uow.repos.enrollments.findByToken(token) : null;
    if (!e) throw ApiError.of('INVALID_ENROLLMENT_TOKEN');
    if (e.expiresAt.getTime() < this.now()) throw ApiError.of('ENROLLMENT_EXPIRED');
    return e;
  }

  /** Runs `work` with the enrollment locked, then deletes it, all in one transaction. */
  private consume<T>(token: string, work: (e: Enrollment) => Promise<T>): Promise<T> {
    return this.uow.run(async (tx) => {
      const e = await tx.enrollments.lockByToken(token);
      if (!e) throw ApiError.of('INVALID_ENROLLMENT_TOKEN');
      const result = await work(e);
      await tx.enrollments.delete(e.id);
      return result;
    });
  }

  /** `POST /enroll` (generic): the method is the enrollment's; a different `method` parameter is refused. */
  async generic(token: string | undefined, method: string | undefined, input: GenericInput, chainDer: readonly Buffer[]): Promise<EnrollResult> {
    if (method === 'ca') return this.ca(chainDer, input.name);
    const e = await this.usable(token);
    const same = (a: string, b: string) => a === b || (ROUTER_METHODS.includes(a) && ROUTER_METHODS.includes(b));
    if (method && !same(method, e.method)) throw ApiError.of('INVALID_ENROLL_METHOD');
    switch (e.method) {
      case 'ott':
        return this.ott(e.token, input.csrPem ?? input.clientCsr);
      case 'ottca':
        return this.ottca(e.token, chainDer);
      case 'updb':
        return this.updb(e.token, input.password);
      case 'erott':
      case 'trott':
        return this.router(e.token, input.serverCertCsr, input.certCsr);
      default:
        throw ApiError.of('INVALID_ENROLL_METHOD');
    }
  }

  /** One-time token → an identity certificate from the CSR (SPIFFE id SAN) and a cert authenticator. */
  async ott(token: string | undefined, csrPem: string | undefined): Promise<EnrollResult> {
    const e = await this.usable(token);
    if (e.method !== 'ott' || !e.identityId) throw ApiError.of('INVALID_ENROLLMENT_TOKEN');
    const csr = csrOrFail(csrPem);
    const identityId = e.identityId;
    const issued = this.pki.issue(csr, { kind: 'client', sans: { uri: [this.pki.spiffeId(identityId)] }, fallbackCn: identityId });
    await this.consume(e.token, () =>
      this.identities
        .createCertAuthenticator({ identityId, certPem: issued.chainPem, fingerprint: issued.fingerprint, isIssuedByNetwork: true })
        .catch(identityGone),
    );
    return { cert: issued.chainPem };
  }

  /** One-time token + a client certificate (TLS) issued by the enrollment's CA → a cert authenticator. */
  async ottca(token: string | undefined, chainDer: readonly Buffer[]): Promise<EnrollResult> {
    const e = await this.usable(token);
    if (e.method !== 'ottca' || !e.identityId || !e.caId) throw ApiError.of('INVALID_ENROLLMENT_TOKEN');
    const ca = await this.uow.repos.cas.findById(e.caId);
    if (!ca) throw ApiError.of('INVALID_ENROLLMENT_TOKEN');
    if (!ca.isVerified || !ca.isOttCaEnrollmentEnabled) throw ApiError.of('ENROLLMENT_CA_NOT_VALID');
    const certs = parseChain(chainDer);
    const leaf = certs[0];
    if (!leaf || !usableAsClientCert(leaf) || !verifiedByCa(leaf, certs.slice(1), ca).ok) throw ApiError.of('CERT_FAILED_VALIDATION');
    const identityId = e.identityId;
    await this.consume(e.token, () =>
      this.identities
        .createCertAuthenticator({ identityId, certPem: certPem(leaf.raw), fingerprint: fingerprint(leaf.raw), isIssuedByNetwork: false, caId: ca.id })
        .catch(identityGone),
    );
    return {};
  }

  /** One-time token + a password → an updb authenticator with the enrollment's username. */
  async updb(token: string | undefined, password: string | undefined): Promise<EnrollResult> {
    const e = await this.usable(token);
    if (e.method !== 'updb' || !e.identityId || !e.username) throw ApiError.of('INVALID_ENROLLMENT_TOKEN');
    if (!password) throw ApiError.field('password', 'password in body is required', password);
    const identityId = e.identityId;
    const username = e.username;
    await this.consume(e.token, () => this.identities.createUpdbAuthenticator({ identityId, username, password }).catch(identityGone));
    return { username };
  }

  /**
   * CA auto-enrollment: a client certificate (TLS) issued by a verified CA with auto-enrollment
   * creates an identity named by the CA's format, with the CA's identity roles, and (unless the
   * CA reads an externalId from the certificate) a cert authenticator.
   */
  async ca(chainDer: readonly Buffer[], requestedName?: string): Promise<EnrollResult> {
    if ((await this.uow.repos.cas.count()) === 0) throw ApiError.of('ENROLLMENT_NO_VALID_CAS');
    const certs = parseChain(chainDer);
    const leaf = certs[0];
    if (!leaf || !usableAsClientCert(leaf)) throw ApiError.of('CERT_FAILED_VALIDATION');
    const ca = (await this.uow.repos.cas.listVerified()).find((c) => c.isAutoCaEnrollmentEnabled && verifiedByCa(leaf, certs.slice(1), c).ok);
    if (!ca) throw ApiError.of('CERT_FAILED_VALIDATION');
    let externalId = '';
    if (ca.externalIdClaim) {
      const claim = externalIdOf(leaf, ca.externalIdClaim);
      if (claim === undefined) throw ApiError.of('MISSING_CERT_CLAIM');
      externalId = claim;
    }
    const name = formatIdentityName(ca.identityNameFormat, {
      caName: ca.name,
      caId: ca.id,
      commonName: certCommonName(leaf),
      requestedName: requestedName || '[identityId]',
    });
    await this.identities.createIdentityFromCa({
      name,
      roleAttributes: ca.identityRoles,
      caId: ca.id,
      certPem: certPem(leaf.raw),
      fingerprint: fingerprint(leaf.raw),
      externalId,
    });
    return {};
  }

  /** Router one-time token → a client certificate (CN must be the router id) and a server certificate. */
  async router(token: string | undefined, serverCsrPem: string | undefined, clientCsrPem: string | undefined): Promise<EnrollResult> {
    const e = await this.usable(token);
    const routerId = e.edgeRouterId ?? e.transitRouterId;
    if (!ROUTER_METHODS.includes(e.method) || !routerId) throw ApiError.of('INVALID_ENROLLMENT_TOKEN');
    if (!serverCsrPem) throw ApiError.of('MISSING_OR_INVALID_CSR', { cause: { code: 'UNHANDLED', message: 'invalid server CSR' } });
    if (!clientCsrPem) throw ApiError.of('MISSING_OR_INVALID_CSR', { cause: { code: 'UNHANDLED', message: 'invalid client CSR' } });
    const issued = this.routerCerts(routerId, serverCsrPem, clientCsrPem);
    await this.uow.run(async (tx) => {
      const locked = await tx.enrollments.lockByToken(e.token);
      if (!locked) throw ApiError.of('INVALID_ENROLLMENT_TOKEN');
      await tx.routerCerts.upsert({
        routerId, routerType: e.edgeRouterId ? 'edge' : 'transit', fingerprint: issued.client.fingerprint,
        certPem: issued.client.pem, serverCertPem: issued.server.pem,
      });
      await tx.enrollments.delete(locked.id);
    });
    // As the controller answers `ziti router enroll`: each certificate with its chain minus the root.
    return { ca: this.pki.caBundlePem(), cert: issued.client.chainPem, serverCert: issued.server.chainPem };
  }

  /**
   * `POST /enroll/extend/router`: the router proves itself with its current client certificate
   * (mTLS); new client and server certificates replace the old ones, whose fingerprint then no
   * longer matches (the previous certificate stops working).
   */
  async extendRouter(chainDer: readonly Buffer[], certCsr: string, serverCertCsr: string): Promise<EnrollResult> {
    const leaf = parseChain(chainDer).find((c) => !c.ca);
    if (!leaf) throw ApiError.of('UNAUTHORIZED');
    const current = await this.uow.repos.routerCerts.findByFingerprint(fingerprint(leaf.raw));
    if (!current) throw ApiError.of('UNAUTHORIZED');
    const issued = this.routerCerts(current.routerId, serverCertCsr, certCsr);
    await this.uow.run(async (tx) => {
      const again = await tx.routerCerts.findByFingerprint(current.fingerprint);
      if (!again) throw ApiError.of('UNAUTHORIZED');
      await tx.routerCerts.upsert({ ...again, fingerprint: issued.client.fingerprint, certPem: issued.client.pem, serverCertPem: issued.server.pem });
    });
    return { cert: issued.client.chainPem, serverCert: issued.server.chainPem };
  }

  private routerCerts(routerId: string, serverCsrPem: string, clientCsrPem: string) {
    const serverCsr = csrOrFail(serverCsrPem);
    const clientCsr = csrOrFail(clientCsrPem);
    if (clientCsr.commonName !== routerId) {
      throw new ApiError({
        code: 'EDGE_ROUTER_ENROLL_COMMON_NAME_INVALID',
        message: "The edge router CSR enrollment must have a common name that matches the edge router's id",
        status: 400,
      });
    }
    return {
      server: this.pki.issue(serverCsr, { kind: 'client-server', sans: serverCsr.sans, fallbackCn: routerId }),
      client: this.pki.issue(clientCsr, { kind: 'client-server', sans: clientCsr.sans, fallbackCn: routerId }),
    };
  }
}
