import type { ServiceError, handleUnaryCall } from '@grpc/grpc-js';
import { ApiError, formatTimestamp, toGrpcError } from '@ziti/errors';
import type { Enrollment as EnrollmentMsg, PkiEnrollmentServiceServer, RouterEnrollment } from '@ziti/proto';
import { CsrError, parseCsr } from '../crypto/csr.js';
import { verifyClientChain } from '../domain/client-certs.js';
import { ctrlPublicKey, ctrlSans } from '../domain/ctrl-cert.js';
import type { EnrollmentManager } from '../domain/enrollments.js';
import type { EdgeAddress, Jwts } from '../domain/jwts.js';
import type { Enrollment } from '../domain/model.js';
import type { ControllerPki } from '../domain/pki.js';
import type { CaRepository } from '../domain/ports.js';
import type { RouterEnrollmentView, RouterEnrollments } from '../domain/routers.js';
import { SESSION_CERT_LIFETIME_MS, type SessionCertManager } from '../domain/session-certs.js';

/** The most session tokens one SignSessionTokens call may ask for. */
const MAX_TOKENS_PER_CALL = 500;

export interface GrpcDeps {
  pki: ControllerPki;
  jwts: Jwts;
  address: EdgeAddress;
  enrollments: EnrollmentManager;
  routers: RouterEnrollments;
  cas: CaRepository;
  sessionCerts: SessionCertManager;
}

/** A unary handler from an async function; errors travel with their OpenZiti code (toGrpcError). */
function unary<Req, Res>(fn: (req: Req) => Promise<Res>): handleUnaryCall<Req, Res> {
  return (call, callback) => {
    fn(call.request).then(
      (res) => callback(null, res),
      (err: unknown) => callback(toGrpcError(err) as ServiceError),
    );
  };
}

function date(value: string, field: string): Date | null {
  if (!value) return null;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw ApiError.field(field, 'must be an RFC 3339 date-time', value);
  return d;
}

function enrollmentMsg(e: Enrollment, caName = ''): EnrollmentMsg {
  return {
    caName,
    id: e.id,
    identityId: e.identityId ?? '',
    method: e.method,
    token: e.token,
    jwt: e.jwt,
    expiresAt: formatTimestamp(e.expiresAt),
    caId: e.caId ?? '',
    username: e.username ?? '',
  };
}

function routerMsg(r: RouterEnrollmentView): RouterEnrollment {
  return {
    routerId: r.routerId,
    token: r.token,
    jwt: r.jwt,
    expiresAt: r.expiresAt ? formatTimestamp(r.expiresAt) : '',
    isVerified: r.isVerified,
    fingerprint: r.fingerprint,
    certPem: r.certPem,
    enrollmentId: r.enrollmentId,
    routerType: r.routerType,
    createdAt: r.createdAt ? formatTimestamp(r.createdAt) : '',
  };
}

/** `ziti.v1.PkiEnrollmentService`: every RPC of proto/ziti/v1/pki_enrollment.proto. */
export function pkiEnrollmentServer(d: GrpcDeps): PkiEnrollmentServiceServer {
  return {
    createEnrollment: unary(async (req) =>
      enrollmentMsg(
        await d.enrollments.create(
          { method: req.method, identityId: req.identityId, expiresAt: date(req.expiresAt, 'expiresAt'), caId: req.caId || null, username: req.username || null },
          { identityTrusted: req.identityTrusted, identityName: req.identityName },
        ),
      ),
    ),
    listEnrollments: unary(async (req) => {
      const ids = req.identityIds.length > 0 ? req.identityIds : [req.identityId];
      const list = await d.enrollments.forIdentities(ids);
      const names = new Map<string, string>();
      for (const caId of new Set(list.map((e) => e.caId).filter((c): c is string => !!c))) names.set(caId, (await d.cas.findById(caId))?.name ?? '');
      return { enrollments: list.map((e) => enrollmentMsg(e, e.caId ? names.get(e.caId) : '')) };
    }),
    verifyClientCertificate: unary(async (req) => {
      const v = await verifyClientChain(d.pki, d.cas, req.chainDer);
      return {
        verified: v.verified,
        improperClientCertChain: v.improperClientCertChain,
        fingerprint: v.fingerprint,
        leafPem: v.leafPem,
        ca: v.ca
          ? {
              id: v.ca.id,
              name: v.ca.name,
              isAutoCaEnrollmentEnabled: v.ca.isAutoCaEnrollmentEnabled,
              identityRoles: v.ca.identityRoles,
              identityNameFormat: v.ca.identityNameFormat,
              authPolicyId: '',
              trustedForAdmins: v.ca.trustedForAdmins,
            }
          : undefined,
        externalId: v.externalId,
        isExpired: v.isExpired,
        missingExternalIdClaim: v.missingExternalIdClaim,
      };
    }),
    signIdentityCsr: unary(async (req) => {
      if (!req.identityId) throw ApiError.field('identityId', 'identity id is required', req.identityId);
      let csr;
      try {
        csr = parseCsr(req.csrPem);
      } catch (err) {
        throw ApiError.of('COULD_NOT_PROCESS_CSR', { cause: { code: 'UNHANDLED', message: err instanceof CsrError ? err.message : String(err) } });
      }
      const session = req.purpose === 'api-session';
      const issued = d.pki.issue(csr, {
        kind: 'client',
        sans: { uri: [d.pki.spiffeId(req.identityId, session ? req.apiSessionId : undefined)] },
        fallbackCn: req.identityId,
        validityMs: session ? SESSION_CERT_LIFETIME_MS : undefined,
      });
      return {
        certPem: issued.pem,
        chainPem: issued.chainPem,
        fingerprint: issued.fingerprint,
        expiresAt: formatTimestamp(issued.notAfter),
        caBundlePem: d.pki.caBundlePem(),
      };
    }),
    issueServerCertificate: unary(async (req) => {
      if (!d.pki.isServerKey(req.publicKeyPem)) {
        throw ApiError.fromCode('UNHANDLED', { status: 412, message: "The gateway's server key is not pki-enrollment's: give both the same ZITI_SERVER_KEY_SECRET" });
      }
      await d.address.record(req.advertisedAddress);
      const creds = await d.pki.serverCredentials(req.sans);
      return { certPem: creds.certChainPem, caBundlePem: d.pki.caBundlePem(), rootCaPem: d.pki.root.certPem };
    }),
    signSessionTokens: unary(async (req) => {
      if (req.tokens.length > MAX_TOKENS_PER_CALL) throw ApiError.field('tokens', `at most ${MAX_TOKENS_PER_CALL} tokens per call`, req.tokens.length);
      for (const t of req.tokens) {
        if (!t.id || !t.serviceId || !t.apiSessionId || !t.identityId) throw ApiError.field('tokens', 'id, serviceId, apiSessionId and identityId are required', t.id);
        if (t.sessionType !== 'Dial' && t.sessionType !== 'Bind') throw ApiError.field('sessionType', 'must be Dial or Bind', t.sessionType);
      }
      const tokens = await d.jwts.sessionTokens(
        req.tokens.map((t) => ({ ...t, issuedAt: Number(t.issuedAt), expiresAt: Number(t.expiresAt) })),
      );
      return { tokens };
    }),
    getSigningCertificate: unary(async () => d.jwts.signingCertificate()),
    createRouterEnrollment: unary(async (req) =>
      routerMsg(await d.routers.create(req.routerId, req.routerType, date(req.expiresAt, 'expiresAt'), req.routerName)),
    ),
    getRouterEnrollment: unary(async (req) => routerMsg(await d.routers.get(req.routerId))),
    deleteRouterEnrollment: unary(async (req) => {
      await d.routers.delete(req.routerId);
      return {};
    }),
    deleteIdentityEnrollments: unary(async (req) => ({ deleted: await d.enrollments.deleteForIdentity(req.identityId) })),
    // The router control listener's certificate (fabric): only its public key comes in, nothing is stored.
    issueCtrlCertificate: unary(async (req) => {
      const key = ctrlPublicKey(req.publicKeyPem);
      const sans = ctrlSans(req.sans);
      const issued = d.pki.issueCtrl(key, sans);
      return { certPem: issued.certChainPem, caBundlePem: d.pki.caBundlePem(), rootCaPem: d.pki.root.certPem };
    }),
    deleteEnrollment: unary(async (req) => ({ deleted: await d.enrollments.deleteIfPresent(req.id) })),
    // fabric: what routers accept from an SDK beside its identity's certificate authenticators.
    listApiSessionCertificateFingerprints: unary(async (req) => ({ entries: await d.sessionCerts.fingerprintsOf(req.apiSessionIds) })),
  };
}
