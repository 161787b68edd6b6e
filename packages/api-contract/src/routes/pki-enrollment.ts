import { Type } from '@sinclair/typebox';
import { CreateEnvelope, Empty } from '../models/common.js';
import {
  CaCreate,
  CaJwt,
  CaPatch,
  CaUpdate,
  CreateCurrentApiSessionCertificateEnvelope,
  CurrentApiSessionCertificateCreate,
  DetailCaEnvelope,
  DetailCurrentApiSessionCertificateEnvelope,
  DetailEnrollmentEnvelope,
  EnrollmentCertsEnvelope,
  EnrollmentCreate,
  EnrollmentRefresh,
  ErOttEnrollmentRequest,
  Jwks,
  ListCasEnvelope,
  ListCurrentApiSessionCertificatesEnvelope,
  ListEnrollmentsEnvelope,
  ListNetworkJwtsEnvelope,
  NonceChallenge,
  NonceSignature,
  OttEnrollmentRequest,
  RouterExtendEnrollmentRequest,
  UpdbCredentials,
  WellKnownCaCerts,
} from '../models/pki-enrollment.js';
import { type RouteDef, route } from '../route.js';

const BOTH = ['client', 'management'] as const;
const CLIENT = ['client'] as const;
const MANAGEMENT = ['management'] as const;
const owner = 'pki-enrollment' as const;
const ENROLL = ['Enroll'] as const;

const listQuery = {
  limit: Type.Optional(Type.Integer()),
  offset: Type.Optional(Type.Integer()),
  filter: Type.Optional(Type.String()),
};

const management = (permission: string) => ({ apis: MANAGEMENT, owner, access: 'management' as const, permission });

/**
 * Operations served by the pki-enrollment context. Routes without a `body` schema read their
 * body themselves: `POST /enroll` (PEM CSR, or JSON), `POST /enroll/ca` (none, or JSON) and
 * `POST /cas/{id}/verify` (a PEM certificate as `text/plain`).
 */
export const PKI_ENROLLMENT_ROUTES: readonly RouteDef[] = [
  // ---- trust (anonymous, both APIs)
  route({
    operationId: 'listWellKnownCas',
    method: 'GET',
    path: '/.well-known/est/cacerts',
    apis: BOTH,
    owner,
    access: 'anonymous',
    tags: ['Well Known'],
    summary: "Get CA Cert Store: the controller's CA certificates as base64 PKCS#7 certs-only (also served at the root)",
    success: { status: 200, schema: WellKnownCaCerts, contentType: 'application/pkcs7-mime' },
  }),
  route({
    operationId: 'listNetworkJWTs',
    method: 'GET',
    path: '/network-jwts',
    apis: BOTH,
    owner,
    access: 'anonymous',
    tags: ['Enrollment'],
    summary: 'Returns a list of JWTs for trusting a network',
    success: { status: 200, schema: ListNetworkJwtsEnvelope },
  }),

  // ---- enroll (client API, anonymous)
  route({
    operationId: 'enroll',
    method: 'POST',
    path: '/enroll',
    apis: CLIENT,
    owner,
    access: 'anonymous',
    tags: ENROLL,
    summary: 'Enroll an identity via one-time-token (PEM CSR body, or JSON for updb and routers)',
    query: Type.Object({ token: Type.Optional(Type.String({ format: 'uuid' })), method: Type.Optional(Type.String()) }),
    success: { status: 200, schema: EnrollmentCertsEnvelope },
  }),
  route({
    operationId: 'enrollCa',
    method: 'POST',
    path: '/enroll/ca',
    apis: CLIENT,
    owner,
    access: 'anonymous',
    tags: ENROLL,
    summary: 'Enroll an identity with a pre-exchanged certificate',
    success: { status: 200, schema: Empty },
  }),
  route({
    operationId: 'enrollmentChallenge',
    method: 'POST',
    path: '/enroll/challenge',
    apis: CLIENT,
    owner,
    access: 'anonymous',
    tags: ENROLL,
    summary: 'Allows verification of a controller or cluster public signing certificate while establishing trust',
    body: NonceChallenge,
    success: { status: 200, schema: NonceSignature },
  }),
  route({
    operationId: 'enrollErOtt',
    method: 'POST',
    path: '/enroll/erott',
    apis: CLIENT,
    owner,
    access: 'anonymous',
    tags: ENROLL,
    summary: 'Enroll an edge-router',
    body: ErOttEnrollmentRequest,
    success: { status: 200, schema: EnrollmentCertsEnvelope },
  }),
  route({
    operationId: 'extendRouterEnrollment',
    method: 'POST',
    path: '/enroll/extend/router',
    apis: CLIENT,
    owner,
    access: 'anonymous',
    tags: ['Enroll', 'Extend Enrollment'],
    summary: "Extend a router's client and server certificates (mTLS with the current client certificate)",
    body: RouterExtendEnrollmentRequest,
    success: { status: 200, schema: EnrollmentCertsEnvelope },
  }),
  route({
    operationId: 'getEnrollmentJwks',
    method: 'GET',
    path: '/enroll/jwks',
    apis: CLIENT,
    owner,
    access: 'anonymous',
    tags: ENROLL,
    summary: 'List JSON Web Keys that may sign enrollment JWTs',
    success: { status: 200, schema: Jwks },
  }),
  route({
    operationId: 'enrollOtt',
    method: 'POST',
    path: '/enroll/ott',
    apis: CLIENT,
    owner,
    access: 'anonymous',
    tags: ENROLL,
    summary: 'Enroll an identity via one-time-token',
    body: OttEnrollmentRequest,
    success: { status: 200, schema: EnrollmentCertsEnvelope },
  }),
  route({
    operationId: 'enrollOttCa',
    method: 'POST',
    path: '/enroll/ottca',
    apis: CLIENT,
    owner,
    access: 'anonymous',
    tags: ENROLL,
    summary: 'Enroll an identity via one-time-token with a pre-exchanged client certificate',
    body: OttEnrollmentRequest,
    success: { status: 200, schema: Empty },
  }),
  route({
    operationId: 'enrollUpdb',
    method: 'POST',
    path: '/enroll/updb',
    apis: CLIENT,
    owner,
    access: 'anonymous',
    tags: ENROLL,
    summary: 'Enroll an identity via one-time-token (username and password)',
    query: Type.Object({ token: Type.String({ format: 'uuid' }) }),
    body: UpdbCredentials,
    success: { status: 200, schema: Empty },
  }),

  // ---- API-session certificates (client API)
  route({
    operationId: 'listCurrentApiSessionCertificates',
    method: 'GET',
    path: '/current-api-session/certificates',
    apis: CLIENT,
    owner,
    access: 'authenticated',
    tags: ['Current API Session'],
    summary: 'List the ephemeral certificates available for the current API Session',
    query: Type.Object(listQuery),
    success: { status: 200, schema: ListCurrentApiSessionCertificatesEnvelope },
  }),
  route({
    operationId: 'createCurrentApiSessionCertificate',
    method: 'POST',
    path: '/current-api-session/certificates',
    apis: CLIENT,
    owner,
    access: 'authenticated',
    tags: ['Current API Session'],
    summary: 'Creates an ephemeral certificate for the current API Session',
    body: CurrentApiSessionCertificateCreate,
    success: { status: 201, schema: CreateCurrentApiSessionCertificateEnvelope },
  }),
  route({
    operationId: 'detailCurrentApiSessionCertificate',
    method: 'GET',
    path: '/current-api-session/certificates/{id}',
    apis: CLIENT,
    owner,
    access: 'authenticated',
    tags: ['Current API Session'],
    summary: 'Retrieves an ephemeral certificate',
    success: { status: 200, schema: DetailCurrentApiSessionCertificateEnvelope },
  }),
  route({
    operationId: 'deleteCurrentApiSessionCertificate',
    method: 'DELETE',
    path: '/current-api-session/certificates/{id}',
    apis: CLIENT,
    owner,
    access: 'authenticated',
    tags: ['Current API Session'],
    summary: 'Delete an ephemeral certificate',
    success: { status: 200, schema: Empty },
  }),

  // ---- certificate authorities (management)
  route({
    operationId: 'listCas', method: 'GET', path: '/cas', ...management('ca'), tags: ['Certificate Authority'],
    summary: 'List CAs', query: Type.Object(listQuery), success: { status: 200, schema: ListCasEnvelope },
  }),
  route({
    operationId: 'createCa', method: 'POST', path: '/cas', ...management('ca'), tags: ['Certificate Authority'],
    summary: 'Creates a CA', body: CaCreate, success: { status: 201, schema: CreateEnvelope },
  }),
  route({
    operationId: 'detailCa', method: 'GET', path: '/cas/{id}', ...management('ca'), tags: ['Certificate Authority'],
    summary: 'Retrieves a single CA', success: { status: 200, schema: DetailCaEnvelope },
  }),
  route({
    operationId: 'updateCa', method: 'PUT', path: '/cas/{id}', ...management('ca'), tags: ['Certificate Authority'],
    summary: 'Update all fields on a CA', body: CaUpdate, success: { status: 200, schema: Empty },
  }),
  route({
    operationId: 'patchCa', method: 'PATCH', path: '/cas/{id}', ...management('ca'), tags: ['Certificate Authority'],
    summary: 'Update the supplied fields on a CA', body: CaPatch, success: { status: 200, schema: Empty },
  }),
  route({
    operationId: 'deleteCa', method: 'DELETE', path: '/cas/{id}', ...management('ca'), tags: ['Certificate Authority'],
    summary: 'Delete a CA (and the certificate authenticators it issued)', success: { status: 200, schema: Empty },
  }),
  route({
    operationId: 'getCaJwt', method: 'GET', path: '/cas/{id}/jwt', ...management('ca'), tags: ['Certificate Authority'],
    summary: 'Retrieve the enrollment JWT for a CA', success: { status: 200, schema: CaJwt, contentType: 'application/jwt' },
  }),
  route({
    operationId: 'verifyCa', method: 'POST', path: '/cas/{id}/verify', ...management('ca'), tags: ['Certificate Authority'],
    summary: "Verify a CA: a PEM certificate (text/plain) signed by it whose common name is its verificationToken",
    success: { status: 200, schema: Empty },
  }),

  // ---- enrollments (management)
  route({
    operationId: 'listEnrollments', method: 'GET', path: '/enrollments', ...management('enrollment'), tags: ['Enrollment'],
    summary: 'List outstanding enrollments', query: Type.Object(listQuery), success: { status: 200, schema: ListEnrollmentsEnvelope },
  }),
  route({
    operationId: 'createEnrollment', method: 'POST', path: '/enrollments', ...management('enrollment'), tags: ['Enrollment'],
    summary: 'Create an outstanding enrollment for an identity', body: EnrollmentCreate, success: { status: 201, schema: CreateEnvelope },
  }),
  route({
    operationId: 'detailEnrollment', method: 'GET', path: '/enrollments/{id}', ...management('enrollment'), tags: ['Enrollment'],
    summary: 'Retrieves an outstanding enrollment', success: { status: 200, schema: DetailEnrollmentEnvelope },
  }),
  route({
    operationId: 'deleteEnrollment', method: 'DELETE', path: '/enrollments/{id}', ...management('enrollment'), tags: ['Enrollment'],
    summary: 'Deletes an outstanding enrollment', success: { status: 200, schema: Empty },
  }),
  route({
    operationId: 'refreshEnrollment', method: 'POST', path: '/enrollments/{id}/refresh', ...management('enrollment'), tags: ['Enrollment'],
    summary: 'Refreshes an enrollment record: a new token and JWT, and a new expiry',
    body: EnrollmentRefresh, success: { status: 200, schema: CreateEnvelope },
  }),
  route({
    operationId: 'getIdentityEnrollments', method: 'GET', path: '/identities/{id}/enrollments', ...management('identity'), tags: ['Identity'],
    summary: 'Retrieve the current enrollments of a specific identity', success: { status: 200, schema: ListEnrollmentsEnvelope },
  }),
];
