import { type TSchema, Type } from '@sinclair/typebox';

/**
 * Models of the identity-auth context (identities, identity types, API sessions, authenticate),
 * transcribed from the OpenZiti swagger definitions of the same name (`$id` = definition name).
 * Shared shapes and conventions are in common.ts.
 */

import { BaseEntity, CreateEnvelope, CreateLocation, Empty, EntityRef, Link, Links, Meta, Pagination, SubTags, Tags, envelope, nullable } from './common.js';

export { BaseEntity, CreateEnvelope, CreateLocation, Empty, EntityRef, Link, Links, Meta, Pagination, SubTags, Tags };

// ---------------------------------------------------------------- identity field types

export const Attributes = nullable(Type.Array(Type.String()), {
  $id: 'attributes',
  description: 'A set of strings used to loosely couple this resource to policies',
  'x-omitempty': true,
});

/** Permission names of `controller/permissions` (§6.12), in the spec's order. */
export const PERMISSION_NAMES: readonly string[] = [
  'admin_readonly',
  ...['auth-policy', 'ca', 'config', 'config-type', 'edge-router-policy', 'enrollment', 'external-jwt-signer', 'identity']
    .flatMap((e) => [e, `${e}.read`, `${e}.create`, `${e}.update`, `${e}.delete`]),
  'ops', 'ops.read', 'ops.update', 'ops.delete',
  ...['posture-check', 'router', 'service', 'service-edge-router-policy', 'service-policy', 'terminator']
    .flatMap((e) => [e, `${e}.read`, `${e}.create`, `${e}.update`, `${e}.delete`]),
];

export const Permissions = nullable(Type.Array(Type.String({ enum: [...PERMISSION_NAMES] })), {
  $id: 'permissions',
  description: 'A set of strings used to define which types of resources this resource can acccess',
  'x-omitempty': true,
});

export const TerminatorCost = Type.Integer({ $id: 'terminatorCost', minimum: 0, maximum: 65535 });
export const TERMINATOR_PRECEDENCES = ['default', 'required', 'failed'] as const;
export const TerminatorPrecedence = Type.String({ $id: 'terminatorPrecedence', enum: [...TERMINATOR_PRECEDENCES] });
export const TerminatorCostMap = Type.Object({}, { $id: 'terminatorCostMap', additionalProperties: TerminatorCost });
export const TerminatorPrecedenceMap = Type.Object({}, { $id: 'terminatorPrecedenceMap', additionalProperties: TerminatorPrecedence });

/** The API's identity type names; User, Device and Service are stored as Default. */
export const IDENTITY_TYPE_NAMES = ['User', 'Device', 'Service', 'Router', 'Default'] as const;
export const IdentityTypeName = Type.String({ $id: 'identityType', enum: [...IDENTITY_TYPE_NAMES] });

const infoField = (maxLength: number) => Type.Optional(Type.String({ maxLength }));

export const EnvInfo = Type.Object(
  {
    arch: infoField(255),
    domain: infoField(253),
    hostname: infoField(253),
    os: infoField(255),
    osRelease: infoField(255),
    osVersion: infoField(255),
  },
  { $id: 'envInfo', description: 'Environment information an authenticating client may provide' },
);

export const SdkInfo = Type.Object(
  {
    appId: infoField(255),
    appVersion: infoField(255),
    branch: infoField(255),
    revision: infoField(255),
    type: infoField(255),
    version: infoField(255),
  },
  { $id: 'sdkInfo', description: 'SDK information an authenticating client may provide' },
);

export const IdentityAuthenticators = Type.Object(
  {
    cert: Type.Optional(Type.Object({ fingerprint: Type.Optional(Type.String()), id: Type.Optional(Type.String()) })),
    updb: Type.Optional(Type.Object({ id: Type.Optional(Type.String()), username: Type.Optional(Type.String()) })),
  },
  { $id: 'identityAuthenticators' },
);

const enrollmentInfo = (extra: Record<string, TSchema> = {}) =>
  Type.Optional(
    Type.Object({
      ...extra,
      expiresAt: Type.Optional(Type.String({ format: 'date-time' })),
      id: Type.Optional(Type.String()),
      jwt: Type.Optional(Type.String()),
      token: Type.Optional(Type.String()),
    }),
  );

export const IdentityEnrollments = Type.Object(
  {
    ott: enrollmentInfo(),
    ottca: enrollmentInfo({ ca: Type.Optional(EntityRef), caId: Type.Optional(Type.String()) }),
    updb: enrollmentInfo(),
  },
  { $id: 'identityEnrollments' },
);

export const NetworkInterface = Type.Object(
  {
    addresses: Type.Optional(Type.Array(Type.String())),
    hardwareAddress: Type.String(),
    index: Type.Integer({ minimum: 0 }),
    isBroadcast: Type.Boolean(),
    isLoopback: Type.Boolean(),
    isMulticast: Type.Boolean(),
    isRunning: Type.Boolean(),
    isUp: Type.Boolean(),
    mtu: Type.Integer({ minimum: 0 }),
    name: Type.String(),
  },
  { $id: 'interface', description: 'A resource describing a network interface' },
);

// ---------------------------------------------------------------- identities

const identityWritable = {
  appData: Type.Optional(Tags),
  authPolicyId: Type.Optional(nullable(Type.String())),
  defaultHostingCost: Type.Optional(TerminatorCost),
  defaultHostingPrecedence: Type.Optional(TerminatorPrecedence),
  externalId: Type.Optional(nullable(Type.String())),
  permissions: Type.Optional(Permissions),
  roleAttributes: Type.Optional(Attributes),
  serviceHostingCosts: Type.Optional(TerminatorCostMap),
  serviceHostingPrecedences: Type.Optional(TerminatorPrecedenceMap),
  tags: Type.Optional(Tags),
  /**
   * Not in the spec's write models, but sent back by clients that echo a detail view: the
   * controller ignores unknown fields, and `isDefaultAdmin` is immutable (kept silently).
   */
  isDefaultAdmin: Type.Optional(Type.Boolean({ description: 'Ignored: isDefaultAdmin can not be changed' })),
};

export const IdentityCreate = Type.Object(
  {
    ...identityWritable,
    enrollment: Type.Optional(
      Type.Object({
        ott: Type.Optional(Type.Boolean()),
        ottca: Type.Optional(Type.String()),
        updb: Type.Optional(Type.String()),
      }),
    ),
    isAdmin: Type.Boolean(),
    name: Type.String(),
    type: IdentityTypeName,
  },
  { $id: 'identityCreate', description: 'An identity to create', additionalProperties: false },
);

export const IdentityUpdate = Type.Object(
  { ...identityWritable, isAdmin: Type.Boolean(), name: Type.String(), type: IdentityTypeName },
  { $id: 'identityUpdate', additionalProperties: false },
);

export const IdentityPatch = Type.Object(
  {
    ...identityWritable,
    isAdmin: Type.Optional(nullable(Type.Boolean())),
    name: Type.Optional(nullable(Type.String())),
    type: Type.Optional(IdentityTypeName),
  },
  { $id: 'identityPatch', additionalProperties: false },
);

export const IdentityDetail = Type.Intersect(
  [
    BaseEntity,
    Type.Object({
      appData: Type.Optional(Tags),
      authPolicy: EntityRef,
      authPolicyId: Type.String(),
      authenticators: IdentityAuthenticators,
      defaultHostingCost: TerminatorCost,
      defaultHostingPrecedence: Type.Optional(TerminatorPrecedence),
      disabled: Type.Boolean(),
      disabledAt: Type.Optional(nullable(Type.String({ format: 'date-time' }))),
      disabledUntil: Type.Optional(nullable(Type.String({ format: 'date-time' }))),
      edgeRouterConnectionStatus: Type.String({ enum: ['online', 'offline', 'unknown'] }),
      enrollment: IdentityEnrollments,
      envInfo: EnvInfo,
      externalId: nullable(Type.String()),
      hasApiSession: Type.Boolean(),
      hasEdgeRouterConnection: Type.Boolean(),
      interfaces: Type.Optional(Type.Array(NetworkInterface)),
      isAdmin: Type.Boolean(),
      isDefaultAdmin: Type.Boolean(),
      isMfaEnabled: Type.Boolean(),
      name: Type.String(),
      permissions: Permissions,
      roleAttributes: Attributes,
      sdkInfo: SdkInfo,
      serviceHostingCosts: TerminatorCostMap,
      serviceHostingPrecedences: TerminatorPrecedenceMap,
      type: EntityRef,
      typeId: Type.String(),
    }),
  ],
  { $id: 'identityDetail', description: 'Detail of a specific identity' },
);

export const IdentityList = Type.Array(IdentityDetail, { $id: 'identityList', description: 'A list of identities' });

export const IdentityTypeDetail = Type.Intersect([BaseEntity, Type.Object({ name: Type.Optional(Type.String()) })], {
  $id: 'identityTypeDetail',
});
export const IdentityTypeList = Type.Array(IdentityTypeDetail, { $id: 'identityTypeList' });

// ---------------------------------------------------------------- authentication and API sessions

export const Username = Type.String({ $id: 'username', minLength: 4, maxLength: 100 });
export const Password = Type.String({ $id: 'password', minLength: 5, maxLength: 100 });
export const ConfigTypes = Type.Array(Type.String(), { $id: 'configTypes', description: 'Specific configuration types that should be returned' });

/** Body of `POST /authenticate`. Every field is optional; which ones matter depends on the method. */
export const Authenticate = Type.Object(
  {
    configTypes: Type.Optional(ConfigTypes),
    envInfo: Type.Optional(EnvInfo),
    password: Type.Optional(Password),
    sdkInfo: Type.Optional(SdkInfo),
    username: Type.Optional(Username),
  },
  {
    $id: 'authenticate',
    description: 'A generic authenticate object meant for use with the /authenticate path. Required fields depend on authentication method.',
    additionalProperties: false,
  },
);

export const AuthQueryDetail = Type.Object(
  {
    clientId: Type.Optional(Type.String()),
    format: Type.Optional(Type.String({ $id: 'mfaFormats', enum: ['numeric', 'alpha', 'alphaNumeric'] })),
    httpMethod: Type.Optional(Type.String()),
    httpUrl: Type.Optional(Type.String()),
    id: Type.Optional(Type.String()),
    isTotpEnrolled: Type.Optional(Type.Boolean()),
    maxLength: Type.Optional(Type.Integer()),
    minLength: Type.Optional(Type.Integer()),
    provider: Type.String({ $id: 'mfaProviders', enum: ['ziti', 'url'] }),
    scopes: Type.Optional(Type.Array(Type.String())),
    typeId: Type.Optional(Type.String({ $id: 'authQueryType', enum: ['MFA', 'TOTP', 'EXT-JWT'] })),
  },
  { $id: 'authQueryDetail' },
);
export const AuthQueryList = Type.Array(AuthQueryDetail, { $id: 'authQueryList' });

/**
 * Note: the spec's `required` list names `cachedUpdatedAt`, which is not among its properties;
 * the service emits it (same value as `cachedLastActivityAt`) so bodies validate against the spec.
 */
export const ApiSessionDetail = Type.Intersect(
  [
    BaseEntity,
    Type.Object({
      authQueries: AuthQueryList,
      authenticatorId: Type.String(),
      cachedLastActivityAt: Type.Optional(Type.String({ format: 'date-time' })),
      cachedUpdatedAt: Type.String({ format: 'date-time' }),
      configTypes: Type.Array(Type.String()),
      identity: EntityRef,
      identityId: Type.String(),
      improperClientCertChain: Type.Optional(Type.Boolean()),
      ipAddress: Type.String(),
      isCertExtendRequested: Type.Optional(Type.Boolean()),
      isCertExtendable: Type.Boolean(),
      isCertKeyRollRequested: Type.Optional(Type.Boolean()),
      isMfaComplete: Type.Boolean(),
      isMfaRequired: Type.Boolean(),
      lastActivityAt: Type.Optional(Type.String({ format: 'date-time' })),
      token: Type.String(),
    }),
  ],
  { $id: 'apiSessionDetail', description: 'An API Session object' },
);
export const ApiSessionList = Type.Array(ApiSessionDetail, { $id: 'apiSessionList' });

export const CurrentApiSessionDetail = Type.Intersect(
  [ApiSessionDetail, Type.Object({ expirationSeconds: Type.Integer(), expiresAt: Type.String({ format: 'date-time' }) })],
  { $id: 'currentApiSessionDetail', description: 'An API Session object for the current API session' },
);

// ---------------------------------------------------------------- envelopes

export const ListIdentitiesEnvelope = envelope('listIdentitiesEnvelope', IdentityList);
export const DetailIdentityEnvelope = envelope('detailIdentityEnvelope', IdentityDetail);
export const CurrentIdentityDetailEnvelope = envelope('currentIdentityDetailEnvelope', IdentityDetail);
export const ListIdentityTypesEnvelope = envelope('listIdentityTypesEnvelope', IdentityTypeList);
export const DetailIdentityTypeEnvelope = envelope('detailIdentityTypeEnvelope', IdentityTypeDetail);
export const ListApiSessionsEnvelope = envelope('listApiSessionsEnvelope', ApiSessionList);
export const DetailApiSessionEnvelope = envelope('detailApiSessionEnvelope', ApiSessionDetail);
export const CurrentApiSessionDetailEnvelope = envelope('currentApiSessionDetailEnvelope', CurrentApiSessionDetail);

/** Models of the identity-auth context (identities, API sessions, authenticate, …). */
export const IDENTITY_AUTH_MODELS: Record<string, TSchema> = Object.fromEntries(
  [
    Link, Links, SubTags, Tags, EntityRef, BaseEntity, Pagination, Meta, Empty, CreateLocation, CreateEnvelope,
    Attributes, Permissions, TerminatorCost, TerminatorPrecedence, TerminatorCostMap, TerminatorPrecedenceMap,
    IdentityTypeName, EnvInfo, SdkInfo, IdentityAuthenticators, IdentityEnrollments, NetworkInterface,
    IdentityCreate, IdentityUpdate, IdentityPatch, IdentityDetail, IdentityList, IdentityTypeDetail, IdentityTypeList,
    Username, Password, ConfigTypes, Authenticate, AuthQueryDetail, AuthQueryList, ApiSessionDetail, ApiSessionList,
    CurrentApiSessionDetail,
    ListIdentitiesEnvelope, DetailIdentityEnvelope, CurrentIdentityDetailEnvelope, ListIdentityTypesEnvelope,
    DetailIdentityTypeEnvelope, ListApiSessionsEnvelope, DetailApiSessionEnvelope, CurrentApiSessionDetailEnvelope,
  ].map((s) => [s.$id as string, s]),
);
