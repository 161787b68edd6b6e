import { type TSchema, Type } from '@sinclair/typebox';
import { BaseEntity, CreateLocation, EntityRef, Tags, envelope, nullable } from './common.js';
import { Password, Username } from './identity-auth.js';

/**
 * Models of the pki-enrollment context (CAs, enrollments, the enroll flows, network JWTs, JWKS,
 * API-session certificates), transcribed from the OpenZiti swagger definitions of the same name
 * (`$id` = definition name). Shared shapes and conventions are in common.ts.
 */

// ---------------------------------------------------------------- network JWTs, JWKS, challenge

export const NetworkJwt = Type.Object({ name: Type.String(), token: Type.String() }, { $id: 'networkJWT', description: 'A network JWT' });
export const NetworkJwtList = Type.Array(NetworkJwt, { $id: 'networkJWTList', description: 'An array of network JWTs' });
export const ListNetworkJwtsEnvelope = envelope('listNetworkJWTsEnvelope', NetworkJwtList);

export const OtherPrime = Type.Object(
  { d: Type.Optional(Type.String()), r: Type.Optional(Type.String()), t: Type.Optional(Type.String()) },
  { $id: 'otherPrime' },
);

const jwkString = (description: string) => Type.Optional(Type.String({ description }));

export const Jwk = Type.Object(
  {
    alg: jwkString('Algorithm intended for use with the key.'),
    crv: jwkString('Curve for ECC Public Keys.'),
    d: jwkString('ECC Private Key or RSA Private Exponent.'),
    dp: jwkString('First Factor CRT Exponent for RSA.'),
    dq: jwkString('Second Factor CRT Exponent for RSA.'),
    e: jwkString('Exponent for RSA Public Key.'),
    key_ops: Type.Optional(Type.Array(Type.String(), { description: 'Intended key operations, e.g., sign, verify.' })),
    kid: jwkString('Key ID.'),
    kty: Type.String({ description: 'Key Type.' }),
    n: jwkString('Modulus for RSA Public Key.'),
    oth: Type.Optional(Type.Array(OtherPrime)),
    p: jwkString('First Prime Factor for RSA.'),
    q: jwkString('Second Prime Factor for RSA.'),
    qi: jwkString('First CRT Coefficient for RSA.'),
    use: jwkString('Public key use, e.g., sig (signature) or enc (encryption).'),
    x: jwkString('X Coordinate for ECC Public Keys.'),
    x5c: Type.Optional(Type.Array(Type.String(), { description: 'X.509 Certificate Chain.' })),
    x5t: jwkString('X.509 Certificate SHA-1 Thumbprint.'),
    'x5t#S256': jwkString('X.509 Certificate SHA-256 Thumbprint.'),
    x5u: jwkString('X.509 URL.'),
    y: jwkString('Y Coordinate for ECC Public Keys.'),
  },
  { $id: 'jwk' },
);

/** `GET /enroll/jwks`: bare (no envelope), as the spec declares it. */
export const Jwks = Type.Object({ keys: Type.Optional(Type.Array(Jwk)) }, { $id: 'jwks' });

export const NonceChallenge = Type.Object(
  { keyId: Type.String(), nonce: Type.String({ format: 'uuid' }) },
  { $id: 'nonceChallenge', additionalProperties: false },
);

/** `POST /enroll/challenge`: bare (no envelope), as the spec declares it. */
export const NonceSignature = Type.Object(
  { algorithm: Type.String(), caPool: Type.String(), kid: Type.String(), signature: Type.String() },
  { $id: 'nonceSignature' },
);

// ---------------------------------------------------------------- enrollments

export const EnrollmentCreate = Type.Object(
  {
    caId: Type.Optional(nullable(Type.String())),
    expiresAt: Type.String({ format: 'date-time' }),
    identityId: Type.String(),
    method: Type.String({ enum: ['ott', 'ottca', 'updb'] }),
    username: Type.Optional(nullable(Type.String())),
  },
  { $id: 'enrollmentCreate', additionalProperties: false },
);

export const EnrollmentRefresh = Type.Object(
  { expiresAt: Type.String({ format: 'date-time' }) },
  { $id: 'enrollmentRefresh', additionalProperties: false },
);

/**
 * Note: the spec's `required` list names `details`, which is not among its properties and which
 * the controller never sends.
 */
export const EnrollmentDetail = Type.Intersect(
  [
    BaseEntity,
    Type.Object({
      caId: Type.Optional(nullable(Type.String())),
      edgeRouter: Type.Optional(EntityRef),
      edgeRouterId: Type.Optional(Type.String()),
      expiresAt: Type.String({ format: 'date-time' }),
      identity: Type.Optional(EntityRef),
      identityId: Type.Optional(Type.String()),
      jwt: Type.Optional(Type.String()),
      method: Type.String(),
      token: Type.String(),
      transitRouter: Type.Optional(EntityRef),
      transitRouterId: Type.Optional(Type.String()),
      username: Type.Optional(Type.String()),
    }),
  ],
  { $id: 'enrollmentDetail', description: 'An enrollment object' },
);
export const EnrollmentList = Type.Array(EnrollmentDetail, { $id: 'enrollmentList', description: 'An array of enrollment resources' });
export const ListEnrollmentsEnvelope = envelope('listEnrollmentsEnvelope', EnrollmentList);
export const DetailEnrollmentEnvelope = envelope('detailEnrollmentEnvelope', EnrollmentDetail);

// ---------------------------------------------------------------- enroll flows

/** The body of the generic `POST /enroll` when it is JSON (a PEM CSR body is read raw). */
export const GenericEnroll = Type.Object(
  {
    certCsr: Type.Optional(Type.String()),
    clientCsr: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    password: Type.Optional(Password),
    serverCertCsr: Type.Optional(Type.String()),
    username: Type.Optional(Username),
  },
  { $id: 'genericEnroll' },
);

export const OttEnrollmentRequest = Type.Object(
  { clientCsr: Type.Optional(Type.String()), token: Type.Optional(Type.String()) },
  { $id: 'ottEnrollmentRequest', additionalProperties: false },
);

export const ErOttEnrollmentRequest = Type.Object(
  { clientCsr: Type.Optional(Type.String()), serverCsr: Type.Optional(Type.String()), token: Type.Optional(Type.String()) },
  { $id: 'erOttEnrollmentRequest', additionalProperties: false },
);

export const RouterExtendEnrollmentRequest = Type.Object(
  { certCsr: Type.String(), serverCertCsr: Type.String() },
  { $id: 'routerExtendEnrollmentRequest', additionalProperties: false },
);

/** `POST /enroll/updb` (the spec declares the object inline). */
export const UpdbCredentials = Type.Object(
  { password: Type.Optional(Password), username: Type.Optional(Username) },
  { $id: 'updbCredentials', additionalProperties: false },
);

export const EnrollmentCerts = Type.Object(
  {
    ca: Type.Optional(Type.String({ description: 'A PEM encoded set of CA certificates to trust' })),
    cert: Type.Optional(Type.String({ description: 'A PEM encoded set of certificates to use as the client chain' })),
    serverCert: Type.Optional(Type.String({ description: 'A PEM encoded set of certificates to use as the servers chain' })),
  },
  { $id: 'enrollmentCerts' },
);
export const EnrollmentCertsEnvelope = envelope('enrollmentCertsEnvelope', EnrollmentCerts);

// ---------------------------------------------------------------- certificate authorities

export const Roles = Type.Array(Type.String(), { $id: 'roles', 'x-omitempty': false });

export const CA_CLAIM_LOCATIONS = ['COMMON_NAME', 'SAN_URI', 'SAN_EMAIL'] as const;
export const CA_CLAIM_MATCHERS = ['ALL', 'PREFIX', 'SUFFIX', 'SCHEME'] as const;
export const CA_CLAIM_PARSERS = ['NONE', 'SPLIT'] as const;

const claimFields = {
  index: nullable(Type.Integer()),
  location: nullable(Type.String({ enum: [...CA_CLAIM_LOCATIONS] })),
  matcher: nullable(Type.String({ enum: [...CA_CLAIM_MATCHERS] })),
  matcherCriteria: nullable(Type.String()),
  parser: nullable(Type.String({ enum: [...CA_CLAIM_PARSERS] })),
  parserCriteria: nullable(Type.String()),
};

export const ExternalIdClaim = Type.Object(claimFields, { $id: 'externalIdClaim' });
export const ExternalIdClaimPatch = Type.Object(
  {
    index: Type.Optional(claimFields.index),
    location: Type.Optional(claimFields.location),
    matcher: Type.Optional(claimFields.matcher),
    matcherCriteria: Type.Optional(claimFields.matcherCriteria),
    parser: Type.Optional(claimFields.parser),
    parserCriteria: Type.Optional(claimFields.parserCriteria),
  },
  { $id: 'externalIdClaimPatch' },
);

const caFlags = {
  isAuthEnabled: Type.Boolean(),
  isAutoCaEnrollmentEnabled: Type.Boolean(),
  isOttCaEnrollmentEnabled: Type.Boolean(),
};

export const CaCreate = Type.Object(
  {
    ...caFlags,
    certPem: Type.String(),
    externalIdClaim: Type.Optional(ExternalIdClaim),
    identityNameFormat: Type.Optional(Type.String()),
    identityRoles: Roles,
    name: Type.String(),
    tags: Type.Optional(Tags),
  },
  { $id: 'caCreate', description: 'A create Certificate Authority (CA) object', additionalProperties: false },
);

export const CaUpdate = Type.Object(
  {
    ...caFlags,
    externalIdClaim: Type.Optional(ExternalIdClaim),
    identityNameFormat: Type.String(),
    identityRoles: Roles,
    name: Type.String(),
    tags: Type.Optional(Tags),
  },
  { $id: 'caUpdate', additionalProperties: false },
);

export const CaPatch = Type.Object(
  {
    externalIdClaim: Type.Optional(ExternalIdClaimPatch),
    identityNameFormat: Type.Optional(nullable(Type.String())),
    identityRoles: Type.Optional(Roles),
    isAuthEnabled: Type.Optional(nullable(Type.Boolean())),
    isAutoCaEnrollmentEnabled: Type.Optional(nullable(Type.Boolean())),
    isOttCaEnrollmentEnabled: Type.Optional(nullable(Type.Boolean())),
    name: Type.Optional(nullable(Type.String())),
    tags: Type.Optional(Tags),
  },
  { $id: 'caPatch', additionalProperties: false },
);

export const CaDetail = Type.Intersect(
  [
    BaseEntity,
    Type.Object({
      ...caFlags,
      certPem: Type.String(),
      externalIdClaim: Type.Optional(ExternalIdClaim),
      fingerprint: Type.String(),
      identityNameFormat: Type.String(),
      identityRoles: Roles,
      isVerified: Type.Boolean(),
      name: Type.String(),
      verificationToken: Type.Optional(Type.String({ format: 'uuid' })),
    }),
  ],
  { $id: 'caDetail', description: 'A Certificate Authority (CA) resource' },
);
export const CaList = Type.Array(CaDetail, { $id: 'caList', description: 'An array of Certificate Authority (CA) resources' });
export const ListCasEnvelope = envelope('listCasEnvelope', CaList);
export const DetailCaEnvelope = envelope('detailCaEnvelope', CaDetail);

/** `GET /cas/{id}/jwt` answers the bare JWT (`application/jwt`). */
export const CaJwt = Type.String({ $id: 'caJwt' });

/** `GET /.well-known/est/cacerts`: base64 PKCS#7 certs-only, 64-character lines (`application/pkcs7-mime`). */
export const WellKnownCaCerts = Type.String({ $id: 'wellKnownCaCerts' });

// ---------------------------------------------------------------- API-session certificates

export const CurrentApiSessionCertificateCreate = Type.Object(
  { csr: Type.String() },
  { $id: 'currentApiSessionCertificateCreate', additionalProperties: false },
);

export const CurrentApiSessionCertificateCreateResponse = Type.Intersect(
  [CreateLocation, Type.Object({ cas: Type.Optional(Type.String()), certificate: Type.String() })],
  { $id: 'currentApiSessionCertificateCreateResponse' },
);
export const CreateCurrentApiSessionCertificateEnvelope = envelope('createCurrentApiSessionCertificateEnvelope', CurrentApiSessionCertificateCreateResponse);

export const CurrentApiSessionCertificateDetail = Type.Intersect(
  [
    BaseEntity,
    Type.Object({
      certificate: Type.String(),
      fingerprint: Type.String(),
      subject: Type.String(),
      validFrom: Type.String({ format: 'date-time' }),
      validTo: Type.String({ format: 'date-time' }),
    }),
  ],
  { $id: 'currentApiSessionCertificateDetail' },
);
export const CurrentApiSessionCertificateList = Type.Array(CurrentApiSessionCertificateDetail, { $id: 'currentApiSessionCertificateList' });
export const ListCurrentApiSessionCertificatesEnvelope = envelope('listCurrentApiSessionCertificatesEnvelope', CurrentApiSessionCertificateList);
export const DetailCurrentApiSessionCertificateEnvelope = envelope('detailCurrentApiSessionCertificateEnvelope', CurrentApiSessionCertificateDetail);

/** Models of the pki-enrollment context. */
export const PKI_ENROLLMENT_MODELS: Record<string, TSchema> = Object.fromEntries(
  [
    NetworkJwt, NetworkJwtList, ListNetworkJwtsEnvelope, OtherPrime, Jwk, Jwks, NonceChallenge, NonceSignature,
    EnrollmentCreate, EnrollmentRefresh, EnrollmentDetail, EnrollmentList, ListEnrollmentsEnvelope, DetailEnrollmentEnvelope,
    GenericEnroll, OttEnrollmentRequest, ErOttEnrollmentRequest, RouterExtendEnrollmentRequest, UpdbCredentials,
    EnrollmentCerts, EnrollmentCertsEnvelope, Roles, ExternalIdClaim, ExternalIdClaimPatch, CaCreate, CaUpdate, CaPatch,
    CaDetail, CaList, ListCasEnvelope, DetailCaEnvelope, CaJwt, WellKnownCaCerts, CurrentApiSessionCertificateCreate,
    CurrentApiSessionCertificateCreateResponse, CreateCurrentApiSessionCertificateEnvelope, CurrentApiSessionCertificateDetail,
    CurrentApiSessionCertificateList, ListCurrentApiSessionCertificatesEnvelope, DetailCurrentApiSessionCertificateEnvelope,
  ].map((s) => [s.$id as string, s]),
);
