// A stand-in for pki-enrollment's gRPC service (not compiled into dist): keeps enrollments in
// memory, answers VerifyClientCertificate from a table of verdicts by leaf fingerprint, and
// records the clean-up calls. Every other RPC is UNIMPLEMENTED.
import { createHash, randomUUID } from 'node:crypto';
import { type ServiceError, type UntypedServiceImplementation, status } from '@grpc/grpc-js';
import { ApiError, toGrpcError } from '@ziti/errors';
import { type CreateEnrollmentRequest, type Enrollment, PkiEnrollmentServiceService, type VerifyClientCertificateResponse } from '@ziti/proto';
import { type GrpcListener, startGrpcServer } from '@ziti/service-kit';
import { selfSignedCert } from './certs.js';

export interface FakePki {
  address: string;
  enrollments: Enrollment[];
  creates: CreateEnrollmentRequest[];
  deletedEnrollments: string[];
  deletedForIdentities: string[];
  /** CreateEnrollment of this method fails with a field error `caId`. */
  refuseMethod?: string;
  /** SignIdentityCsr requests; each answer is a fresh self-signed certificate (a CSR without a PEM request is refused). */
  signed: { identityId: string; purpose: string; apiSessionId: string; certPem: string; fingerprint: string }[];
  /** Verdicts by the lower-case SHA-1 of the presented leaf DER; unknown leaves are not verified. */
  verdicts: Map<string, Partial<VerifyClientCertificateResponse>>;
  stop(): Promise<void>;
}

type Callback = (err: Partial<ServiceError> | null, res?: object) => void;
const unimplemented = (_call: unknown, cb: Callback) => cb({ code: status.UNIMPLEMENTED, details: 'fake' });

export async function startFakePki(): Promise<FakePki> {
  const fake = {
    enrollments: [] as Enrollment[],
    creates: [] as CreateEnrollmentRequest[],
    deletedEnrollments: [] as string[],
    deletedForIdentities: [] as string[],
    verdicts: new Map<string, Partial<VerifyClientCertificateResponse>>(),
    signed: [] as FakePki['signed'],
  } as Omit<FakePki, 'address' | 'stop'>;
  const impl: Record<string, unknown> = {};
  for (const name of Object.keys(PkiEnrollmentServiceService)) impl[name] = unimplemented;
  impl.createEnrollment = (call: { request: CreateEnrollmentRequest }, cb: Callback) => {
    const r = call.request;
    fake.creates.push(r);
    if (fake.refuseMethod === r.method) return cb(toGrpcError(ApiError.field('caId', 'no CA found with the given id', r.caId)));
    const e: Enrollment = {
      id: randomUUID(), identityId: r.identityId, method: r.method, token: randomUUID(), jwt: `jwt-${r.method}`,
      expiresAt: new Date(Date.now() + 3600_000).toISOString(), caId: r.caId, username: r.username, caName: r.caId ? `CA ${r.caId}` : '',
    };
    fake.enrollments.push(e);
    cb(null, e);
  };
  impl.deleteEnrollment = (call: { request: { id: string } }, cb: Callback) => {
    fake.deletedEnrollments.push(call.request.id);
    fake.enrollments = fake.enrollments.filter((e) => e.id !== call.request.id);
    cb(null, { deleted: true });
  };
  impl.listEnrollments = (call: { request: { identityId: string; identityIds: string[] } }, cb: Callback) => {
    const ids = call.request.identityIds.length > 0 ? call.request.identityIds : [call.request.identityId];
    cb(null, { enrollments: fake.enrollments.filter((e) => ids.includes(e.identityId)) });
  };
  impl.deleteIdentityEnrollments = (call: { request: { identityId: string } }, cb: Callback) => {
    fake.deletedForIdentities.push(call.request.identityId);
    cb(null, { deleted: 0 });
  };
  impl.verifyClientCertificate = (call: { request: { chainDer: Buffer[] } }, cb: Callback) => {
    const leaf = call.request.chainDer[0];
    const fingerprint = leaf ? createHash('sha1').update(leaf).digest('hex') : '';
    const v = fake.verdicts.get(fingerprint);
    cb(null, { verified: false, improperClientCertChain: false, leafPem: '', externalId: '', isExpired: false, missingExternalIdClaim: false, fingerprint, ...v });
  };
  impl.signIdentityCsr = (call: { request: { identityId: string; csrPem: string; purpose: string; apiSessionId: string } }, cb: Callback) => {
    const r = call.request;
    if (!r.csrPem.includes('-----BEGIN CERTIFICATE REQUEST-----')) {
      return cb(toGrpcError(ApiError.of('COULD_NOT_PROCESS_CSR', { cause: { code: 'UNHANDLED', message: 'no PEM certificate request' } })));
    }
    const cert = selfSignedCert(`session-${r.apiSessionId}`);
    fake.signed.push({ identityId: r.identityId, purpose: r.purpose, apiSessionId: r.apiSessionId, certPem: cert.certPem, fingerprint: cert.fingerprint });
    cb(null, { certPem: cert.certPem, chainPem: cert.certPem, fingerprint: cert.fingerprint, expiresAt: new Date(Date.now() + 3600_000).toISOString(), caBundlePem: '' });
  };
  const server: GrpcListener = await startGrpcServer('127.0.0.1', 0, [
    { definition: PkiEnrollmentServiceService, implementation: impl as UntypedServiceImplementation },
  ], 'pki-enrollment');
  return Object.assign(fake, { address: server.address, stop: () => server.stop() }) as FakePki;
}
