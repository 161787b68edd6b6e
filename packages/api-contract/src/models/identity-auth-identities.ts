import { type TSchema, Type } from '@sinclair/typebox';
import { BaseEntity, EntityRef, Tags, envelope, nullable } from './common.js';

/**
 * Models of identities (their field types, create/update/patch and detail), identity types,
 * the identity lifecycle (disable) and identity role attributes, transcribed from the OpenZiti
 * swagger definitions of the same name (`$id` = definition name). Part of IDENTITY_AUTH_MODELS
 * (identity-auth.ts).
 */

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

// ---------------------------------------------------------------- lifecycle and role attributes

export const DisableParams = Type.Object({ durationMinutes: Type.Integer() }, { $id: 'disableParams', additionalProperties: false });
export const RoleAttributesList = Type.Array(Type.String(), { $id: 'roleAttributesList', description: 'An array of role attributes' });
export const RoleAttributeSourceUsage = Type.Object(
  { count: Type.Integer({ format: 'int64' }), ids: Type.Optional(Type.Array(Type.String())) },
  { $id: 'roleAttributeSourceUsage' },
);
export const RoleAttributeUsageDetail = Type.Object(
  { roleAttribute: Type.String(), usage: Type.Object({}, { additionalProperties: RoleAttributeSourceUsage }) },
  { $id: 'roleAttributeUsageDetail' },
);
export const RoleAttributeUsageList = Type.Array(RoleAttributeUsageDetail, { $id: 'roleAttributeUsageList' });

// ---------------------------------------------------------------- envelopes

export const ListIdentitiesEnvelope = envelope('listIdentitiesEnvelope', IdentityList);
export const DetailIdentityEnvelope = envelope('detailIdentityEnvelope', IdentityDetail);
export const CurrentIdentityDetailEnvelope = envelope('currentIdentityDetailEnvelope', IdentityDetail);
export const ListIdentityTypesEnvelope = envelope('listIdentityTypesEnvelope', IdentityTypeList);
export const DetailIdentityTypeEnvelope = envelope('detailIdentityTypeEnvelope', IdentityTypeDetail);
export const ListRoleAttributesEnvelope = envelope('listRoleAttributesEnvelope', RoleAttributesList);
export const ListRoleAttributeUsageEnvelope = envelope('listRoleAttributeUsageEnvelope', RoleAttributeUsageList);
