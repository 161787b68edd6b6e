import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { ApiError, fromGrpcError } from '@ziti/errors';
import { type Enrollment, PkiEnrollmentServiceClient } from '@ziti/proto';
import type { EnrollmentInfo, PkiContext } from '../domain/pki-context.js';
import { grpcClient } from '@ziti/service-kit';

/** pki-enrollment's gRPC address, or a function giving it once known (all-in-one start). */
export type PkiAddress = string | (() => string | undefined) | undefined;

const DEADLINE_MS = 5000;

/** pki-enrollment is not configured, unreachable, or does not serve the RPC: 503, saying so. */
function unavailable(detail: string): ApiError {
  return ApiError.of('TIMEOUT', { cause: { code: 'UNHANDLED', message: `pki-enrollment: ${detail}` } });
}

const toInfo = (e: Enrollment): EnrollmentInfo => ({
  id: e.id,
  identityId: e.identityId,
  method: e.method,
  token: e.token,
  jwt: e.jwt,
  expiresAt: e.expiresAt,
  caId: e.caId || null,
  caName: e.caName,
});

/**
 * `PkiContext` over `ziti.v1.PkiEnrollmentService`. Calls that decide an answer (create an
 * enrollment, verify a certificate, sign a CSR) fail with pki-enrollment's error, or 503 TIMEOUT
 * when it is not configured or unreachable. Calls that only complete a view (`listEnrollments`,
 * null) or clean up (`deleteEnrollment`, `deleteIdentityEnrollments`) are logged, never thrown.
 */
export function grpcPkiContext(address: PkiAddress, log: (m: string) => void): PkiContext & { close(): void } {
  let client: PkiEnrollmentServiceClient | undefined;
  let clientAddress: string | undefined;
  const current = (): PkiEnrollmentServiceClient | undefined => {
    const addr = typeof address === 'function' ? address() : address;
    if (!addr) return undefined;
    if (!client || clientAddress !== addr) {
      client?.close();
      client = grpcClient(PkiEnrollmentServiceClient, addr, 'identity-auth');
      clientAddress = addr;
    }
    return client;
  };
  type Unary = (req: unknown, md: Metadata, opts: { deadline: number }, cb: (err: ServiceError | null, res: unknown) => void) => void;
  const call = <Res>(method: keyof PkiEnrollmentServiceClient, req: object): Promise<Res> =>
    new Promise((resolve, reject) => {
      const c = current();
      if (!c) return reject(unavailable('not configured'));
      const fn = (c[method] as unknown as Unary).bind(c);
      fn(req, new Metadata(), { deadline: Date.now() + DEADLINE_MS }, (err, res) => {
        if (!err) return resolve(res as Res);
        if (err.code === status.UNIMPLEMENTED) return reject(unavailable(`${String(method)} is not served`));
        reject(fromGrpcError(err));
      });
    });
  const quietly = async (what: string, fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (err) {
      log(`identity-auth: ${what} failed: ${(err as Error).message}`);
    }
  };

  return {
    async createEnrollment(e) {
      const res = await call<Enrollment>('createEnrollment', {
        identityId: e.identityId,
        method: e.method,
        caId: e.caId ?? '',
        username: e.username ?? '',
        expiresAt: e.expiresAt ?? '',
        identityTrusted: true,
        identityName: e.identityName,
      });
      return toInfo(res);
    },
    deleteEnrollment: (id) => quietly(`DeleteEnrollment(${id})`, () => call('deleteEnrollment', { id })),
    async listEnrollments(identityIds) {
      if (identityIds.length === 0) return [];
      try {
        const res = await call<{ enrollments: Enrollment[] }>('listEnrollments', { identityId: '', identityIds });
        return res.enrollments.map(toInfo);
      } catch (err) {
        log(`identity-auth: ListEnrollments failed, enrollment blocks answer {}: ${(err as Error).message}`);
        return null;
      }
    },
    deleteIdentityEnrollments: (identityId) =>
      quietly(`DeleteIdentityEnrollments(${identityId}) (the identity.deleted event converges it)`, () =>
        call('deleteIdentityEnrollments', { identityId }),
      ),
    async verifyClientCertificate(chainDer) {
      const r = await call<{
        verified: boolean;
        improperClientCertChain: boolean;
        fingerprint: string;
        leafPem: string;
        ca?: { id: string; name: string; isAutoCaEnrollmentEnabled: boolean; identityRoles: string[]; identityNameFormat: string; authPolicyId: string; trustedForAdmins: boolean };
        externalId: string;
        isExpired: boolean;
        missingExternalIdClaim: boolean;
      }>('verifyClientCertificate', { chainDer: [...chainDer] });
      return {
        verified: r.verified,
        improperClientCertChain: r.improperClientCertChain,
        fingerprint: r.fingerprint,
        leafPem: r.leafPem,
        ca: r.ca ? { ...r.ca, identityRoles: [...r.ca.identityRoles] } : null,
        externalId: r.externalId,
        isExpired: r.isExpired,
        missingExternalIdClaim: r.missingExternalIdClaim,
      };
    },
    async signIdentityCsr(identityId, csrPem, apiSessionId) {
      const r = await call<{ certPem: string; chainPem: string; fingerprint: string; caBundlePem: string }>('signIdentityCsr', {
        identityId,
        csrPem,
        purpose: apiSessionId ? 'api-session' : 'identity',
        apiSessionId: apiSessionId ?? '',
      });
      return { certPem: r.certPem, chainPem: r.chainPem, fingerprint: r.fingerprint, caBundlePem: r.caBundlePem };
    },
    close() {
      client?.close();
      client = undefined;
    },
  };
}
