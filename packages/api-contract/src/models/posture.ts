import { type TObject, type TSchema, Type } from '@sinclair/typebox';
import { BaseEntity, Links, Meta, Tags, envelope, nullable } from './common.js';
import { Attributes, SdkInfo } from './identity-auth.js';
import { DialBind } from './session.js';

/**
 * Models of the posture context (posture check types, posture checks, posture responses, posture
 * data, failed service requests, posture check role attributes), transcribed from the OpenZiti
 * swagger definitions of the same name (`$id` = definition name).
 *
 * The spec's posture checks and responses are discriminated by `typeId` (`x-class` = the type):
 * the base models are the route bodies; the posture context validates the type-specific model
 * (e.g. `postureCheckOperatingSystemCreate`) once the base has been checked.
 */

export const OS_TYPES = ['Windows', 'WindowsServer', 'Android', 'iOS', 'Linux', 'macOS'] as const;
export const OsType = Type.String({ $id: 'osType', enum: [...OS_TYPES] });
export const POSTURE_CHECK_TYPES = ['OS', 'PROCESS', 'DOMAIN', 'MAC', 'MFA', 'PROCESS_MULTI'] as const;
export const PostureCheckType = Type.String({ $id: 'postureCheckType', enum: [...POSTURE_CHECK_TYPES] });
export const SEMANTICS = ['AllOf', 'AnyOf'] as const;
export const Semantic = Type.String({ $id: 'semantic', enum: [...SEMANTICS] });

export const OperatingSystem = Type.Object(
  { type: OsType, versions: Type.Array(Type.String()) },
  { $id: 'operatingSystem', additionalProperties: false },
);

export const Process = Type.Object(
  {
    hashes: Type.Optional(Type.Array(Type.String())),
    osType: OsType,
    path: Type.String(),
    signerFingerprint: Type.Optional(Type.String()),
  },
  { $id: 'process', additionalProperties: false },
);

export const ProcessMulti = Type.Object(
  {
    hashes: Type.Optional(Type.Array(Type.String())),
    osType: OsType,
    path: Type.String(),
    signerFingerprints: Type.Optional(Type.Array(Type.String())),
  },
  { $id: 'processMulti', additionalProperties: false },
);

// ---------------------------------------------------------------- posture check types

export const PostureCheckTypeDetail = Type.Intersect(
  [BaseEntity, Type.Object({ name: Type.String(), operatingSystems: Type.Array(OperatingSystem), version: Type.String() })],
  { $id: 'postureCheckTypeDetail' },
);
export const PostureCheckTypeList = Type.Array(PostureCheckTypeDetail, { $id: 'postureCheckTypeList' });

// ---------------------------------------------------------------- posture checks

const base = {
  name: Type.String(),
  roleAttributes: Type.Optional(Attributes),
  tags: Type.Optional(Tags),
  typeId: PostureCheckType,
};

/** Route bodies: the discriminated bases (type-specific fields are checked by the posture context). */
export const PostureCheckCreate = Type.Object(base, { $id: 'postureCheckCreate', discriminator: 'typeId' });
export const PostureCheckUpdate = Type.Object(
  { ...base, typeId: Type.Optional(PostureCheckType) },
  { $id: 'postureCheckUpdate', discriminator: 'typeId' },
);
export const PostureCheckPatch = Type.Object(
  { ...base, name: Type.Optional(Type.String()) },
  { $id: 'postureCheckPatch', discriminator: 'typeId' },
);

export const PostureCheckMfaProperties = Type.Object(
  {
    ignoreLegacyEndpoints: Type.Optional(Type.Boolean()),
    promptOnUnlock: Type.Optional(Type.Boolean()),
    promptOnWake: Type.Optional(Type.Boolean()),
    timeoutSeconds: Type.Optional(Type.Integer()),
  },
  { $id: 'postureCheckMfaProperties' },
);
export const PostureCheckMfaPropertiesPatch = Type.Object(
  {
    ignoreLegacyEndpoints: Type.Optional(nullable(Type.Boolean())),
    promptOnUnlock: Type.Optional(nullable(Type.Boolean())),
    promptOnWake: Type.Optional(nullable(Type.Boolean())),
    timeoutSeconds: Type.Optional(nullable(Type.Integer())),
  },
  { $id: 'postureCheckMfaPropertiesPatch' },
);

type Mode = 'Create' | 'Update' | 'Patch';
const BASES: Record<Mode, TObject> = { Create: PostureCheckCreate, Update: PostureCheckUpdate, Patch: PostureCheckPatch };

/**
 * The type-specific fields of each posture check kind, as the spec's `postureCheck<Kind><Mode>`
 * definitions declare them. `required` lists the fields required on create and update (patch
 * requires none).
 */
const KIND_FIELDS: Record<string, { name: string; fields: Record<string, TSchema>; required: string[] }> = {
  OS: { name: 'OperatingSystem', fields: { operatingSystems: Type.Array(OperatingSystem, { minItems: 1 }) }, required: ['operatingSystems'] },
  DOMAIN: { name: 'Domain', fields: { domains: Type.Array(Type.String(), { minItems: 1 }) }, required: ['domains'] },
  MAC: { name: 'MacAddress', fields: { macAddresses: Type.Array(Type.String(), { minItems: 1 }) }, required: ['macAddresses'] },
  PROCESS: { name: 'Process', fields: { process: Process }, required: ['process'] },
  PROCESS_MULTI: {
    name: 'ProcessMulti',
    fields: { processes: Type.Array(ProcessMulti, { minItems: 1 }), semantic: Semantic },
    required: ['semantic', 'processes'],
  },
};

function kindModel(typeId: string, mode: Mode): TSchema {
  const id = (name: string) => `postureCheck${name}${mode}`;
  if (typeId === 'MFA') {
    const props = mode === 'Patch' ? PostureCheckMfaPropertiesPatch : PostureCheckMfaProperties;
    return Type.Intersect([BASES[mode], props], { $id: id('Mfa'), 'x-class': 'MFA' });
  }
  const kind = KIND_FIELDS[typeId]!;
  const fields = Object.fromEntries(
    Object.entries(kind.fields).map(([k, v]) => [k, mode !== 'Patch' && kind.required.includes(k) ? v : Type.Optional(v)]),
  );
  return Type.Intersect([BASES[mode], Type.Object(fields)], { $id: id(kind.name), 'x-class': typeId });
}

/** `postureCheck<Kind>Create|Update|Patch` by typeId and mode, e.g. `POSTURE_CHECK_BODIES.Create.OS`. */
export const POSTURE_CHECK_BODIES: Record<Mode, Record<string, TSchema>> = {
  Create: Object.fromEntries(POSTURE_CHECK_TYPES.map((t) => [t, kindModel(t, 'Create')])),
  Update: Object.fromEntries(POSTURE_CHECK_TYPES.map((t) => [t, kindModel(t, 'Update')])),
  Patch: Object.fromEntries(POSTURE_CHECK_TYPES.map((t) => [t, kindModel(t, 'Patch')])),
};

/**
 * The whole body of a posture check write of one kind as one closed object (validation drops the
 * fields it does not name), for validating a body once its `typeId` is known. Patch bodies require only `typeId`.
 */
export function strictPostureCheckBody(typeId: string, mode: Mode): TSchema {
  const common: Record<string, TSchema> = {
    name: mode === 'Patch' ? Type.Optional(Type.String()) : Type.String(),
    roleAttributes: Type.Optional(Attributes),
    tags: Type.Optional(Tags),
    typeId: mode === 'Update' ? Type.Optional(Type.String()) : Type.String(),
  };
  let fields: Record<string, TSchema>;
  if (typeId === 'MFA') {
    const props = (mode === 'Patch' ? PostureCheckMfaPropertiesPatch : PostureCheckMfaProperties).properties as Record<string, TSchema>;
    fields = props;
  } else {
    const kind = KIND_FIELDS[typeId]!;
    fields = Object.fromEntries(
      Object.entries(kind.fields).map(([k, v]) => [k, mode !== 'Patch' && kind.required.includes(k) ? v : Type.Optional(v)]),
    );
  }
  return Type.Object({ ...common, ...fields }, { additionalProperties: false });
}

export const PostureCheckDetail = Type.Object(
  {
    _links: Links,
    createdAt: Type.String({ format: 'date-time' }),
    id: Type.String(),
    name: Type.String(),
    roleAttributes: Attributes,
    tags: Tags,
    typeId: Type.String(),
    updatedAt: Type.String({ format: 'date-time' }),
    version: Type.Integer(),
  },
  { $id: 'postureCheckDetail', discriminator: 'typeId' },
);

const detail = (name: string, typeId: string, fields: TSchema) =>
  Type.Intersect([PostureCheckDetail, fields], { $id: `postureCheck${name}Detail`, 'x-class': typeId });

export const POSTURE_CHECK_DETAILS: TSchema[] = [
  detail('OperatingSystem', 'OS', Type.Object({ operatingSystems: Type.Array(OperatingSystem) })),
  detail('Domain', 'DOMAIN', Type.Object({ domains: Type.Array(Type.String(), { minItems: 1 }) })),
  detail('MacAddress', 'MAC', Type.Object({ macAddresses: Type.Array(Type.String(), { minItems: 1 }) })),
  detail('Process', 'PROCESS', Type.Object({ process: Process })),
  detail('ProcessMulti', 'PROCESS_MULTI', Type.Object({ processes: Type.Array(ProcessMulti, { minItems: 1 }), semantic: Semantic })),
  detail('Mfa', 'MFA', PostureCheckMfaProperties),
];

export const PostureCheckList = Type.Array(PostureCheckDetail, { $id: 'postureCheckList' });

// ---------------------------------------------------------------- posture responses (client)

export const PostureResponseCreate = Type.Object(
  { id: Type.String(), typeId: Type.String() },
  { $id: 'postureResponseCreate', discriminator: 'typeId' },
);

const response = (name: string, typeId: string, fields: TObject) =>
  Type.Intersect([PostureResponseCreate, fields], { $id: `postureResponse${name}Create`, 'x-class': typeId });

/** The type-specific posture response models by `typeId` (ENDPOINT_STATE is not a posture check type). */
export const POSTURE_RESPONSE_BODIES: Record<string, TSchema> = {
  DOMAIN: response('Domain', 'DOMAIN', Type.Object({ domain: Type.String() })),
  ENDPOINT_STATE: response(
    'EndpointState',
    'ENDPOINT_STATE',
    Type.Object({ unlocked: Type.Optional(Type.Boolean()), woken: Type.Optional(Type.Boolean()) }),
  ),
  MAC: response('MacAddress', 'MAC', Type.Object({ macAddresses: Type.Array(Type.String()) })),
  OS: response(
    'OperatingSystem',
    'OS',
    Type.Object({ build: Type.Optional(Type.String()), type: Type.String(), version: Type.String() }),
  ),
  PROCESS: response(
    'Process',
    'PROCESS',
    Type.Object({
      hash: Type.Optional(Type.String()),
      isRunning: Type.Optional(Type.Boolean()),
      path: Type.Optional(Type.String()),
      signerFingerprints: Type.Optional(Type.Array(Type.String())),
    }),
  ),
};

/** A posture response of one type as one closed object (validation drops the fields it does not name). */
export function strictPostureResponseBody(typeId: string): TSchema | undefined {
  const model = POSTURE_RESPONSE_BODIES[typeId] as { allOf?: TObject[] } | undefined;
  if (!model?.allOf) return undefined;
  const own = model.allOf[1]!;
  return Type.Object({ id: Type.String(), typeId: Type.String(), ...own.properties }, { additionalProperties: false });
}

export const PostureResponseBulk = Type.Array(PostureResponseCreate);

export const PostureResponseService = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    postureQueryType: Type.String(),
    timeout: Type.Integer(),
    timeoutRemaining: Type.Integer(),
  },
  { $id: 'postureResponseService' },
);
export const PostureResponse = Type.Object({ services: Type.Array(PostureResponseService) }, { $id: 'postureResponse' });

// ---------------------------------------------------------------- posture data (management)

const dateTime = () => Type.String({ format: 'date-time' });

export const PostureDataBase = Type.Object(
  { lastUpdatedAt: dateTime(), postureCheckId: Type.String(), timedOut: Type.Boolean() },
  { $id: 'postureDataBase' },
);
export const PostureDataDomain = Type.Intersect([PostureDataBase, Type.Object({ domain: Type.String() })], { $id: 'postureDataDomain' });
export const PostureDataMac = Type.Intersect([PostureDataBase, Type.Object({ addresses: Type.Array(Type.String()) })], {
  $id: 'postureDataMac',
});
export const PostureDataOs = Type.Intersect(
  [PostureDataBase, Type.Object({ build: Type.String(), type: Type.String(), version: Type.String() })],
  { $id: 'postureDataOs' },
);
export const PostureDataProcess = Type.Intersect(
  [
    PostureDataBase,
    Type.Object({
      binaryHash: Type.Optional(Type.String()),
      isRunning: Type.Optional(Type.Boolean()),
      signerFingerprints: Type.Optional(Type.Array(Type.String())),
    }),
  ],
  { $id: 'postureDataProcess' },
);
export const PostureDataEndpointState = Type.Object(
  { unlockedAt: dateTime(), wokenAt: dateTime() },
  { $id: 'postureDataEndpointState' },
);
export const PostureDataMfa = Type.Object(
  {
    apiSessionId: Type.String(),
    passedAt: Type.String({ format: 'date-time', 'x-omitempty': false }),
    passedMfa: Type.Boolean({ 'x-omitempty': false }),
    passedOnUnlock: Type.Boolean({ 'x-omitempty': false }),
    passedOnWake: Type.Boolean({ 'x-omitempty': false }),
  },
  { $id: 'postureDataMfa' },
);
export const ApiSessionPostureData = Type.Object(
  { endpointState: Type.Optional(PostureDataEndpointState), mfa: PostureDataMfa, sdkInfo: Type.Optional(SdkInfo) },
  { $id: 'apiSessionPostureData' },
);
export const PostureData = Type.Object(
  {
    apiSessionPostureData: Type.Object({}, { additionalProperties: ApiSessionPostureData }),
    domain: PostureDataDomain,
    mac: PostureDataMac,
    os: PostureDataOs,
    processes: Type.Array(PostureDataProcess),
  },
  { $id: 'postureData' },
);

// ---------------------------------------------------------------- failed service requests

export const PostureCheckFailure = Type.Object(
  { postureCheckId: Type.String(), postureCheckName: Type.String(), postureCheckType: Type.String() },
  { $id: 'postureCheckFailure', discriminator: 'postureCheckType' },
);
export const PostureChecksFailureMfaValues = Type.Object(
  {
    passedMfa: Type.Optional(Type.Boolean({ 'x-omitempty': false })),
    passedOnUnlock: Type.Optional(Type.Boolean({ 'x-omitempty': false })),
    passedOnWake: Type.Optional(Type.Boolean({ 'x-omitempty': false })),
    timedOut: Type.Optional(Type.Boolean({ 'x-omitempty': false })),
  },
  { $id: 'postureChecksFailureMfaValues' },
);
export const PostureChecksFailureMfaCriteria = Type.Object(
  {
    passedMfaAt: dateTime(),
    timeoutRemainingSeconds: Type.Integer(),
    timeoutSeconds: Type.Integer(),
    unlockedAt: dateTime(),
    wokenAt: dateTime(),
  },
  { $id: 'postureChecksFailureMfaCriteria' },
);
export const PostureCheckFailureOperatingSystemActual = Type.Object(
  { type: Type.String(), version: Type.String() },
  { $id: 'postureCheckFailureOperatingSystemActual' },
);
export const PostureCheckFailureProcessActual = Type.Object(
  {
    hash: Type.String(),
    isRunning: Type.Boolean(),
    osType: Type.Optional(OsType),
    path: Type.Optional(Type.String()),
    signerFingerprints: Type.Array(Type.String()),
  },
  { $id: 'postureCheckFailureProcessActual' },
);

const failure = (name: string, typeId: string, fields: TObject) =>
  Type.Intersect([PostureCheckFailure, fields], { $id: `postureCheckFailure${name}`, 'x-class': typeId });

export const POSTURE_CHECK_FAILURES: TSchema[] = [
  failure('Domain', 'DOMAIN', Type.Object({ actualValue: Type.String(), expectedValue: Type.Array(Type.String()) })),
  failure('MacAddress', 'MAC', Type.Object({ actualValue: Type.Array(Type.String()), expectedValue: Type.Array(Type.String()) })),
  failure(
    'Mfa',
    'MFA',
    Type.Object({ actualValue: PostureChecksFailureMfaValues, criteria: PostureChecksFailureMfaCriteria, expectedValue: PostureChecksFailureMfaValues }),
  ),
  failure(
    'OperatingSystem',
    'OS',
    Type.Object({ actualValue: PostureCheckFailureOperatingSystemActual, expectedValue: Type.Array(OperatingSystem, { minItems: 1 }) }),
  ),
  failure('Process', 'PROCESS', Type.Object({ actualValue: PostureCheckFailureProcessActual, expectedValue: Process })),
  failure(
    'ProcessMulti',
    'PROCESS_MULTI',
    Type.Object({
      actualValue: Type.Array(PostureCheckFailureProcessActual),
      expectedValue: Type.Array(ProcessMulti),
      semantic: Semantic,
    }),
  ),
];

export const PolicyFailure = Type.Object(
  {
    checks: Type.Optional(Type.Array(PostureCheckFailure)),
    policyId: Type.Optional(Type.String()),
    policyName: Type.Optional(Type.String()),
  },
  { $id: 'policyFailure' },
);
export const FailedServiceRequest = Type.Object(
  {
    apiSessionId: Type.Optional(Type.String()),
    policyFailures: Type.Optional(Type.Array(PolicyFailure)),
    serviceId: Type.Optional(Type.String()),
    serviceName: Type.Optional(Type.String()),
    sessionType: Type.Optional(DialBind),
    when: Type.Optional(dateTime()),
  },
  { $id: 'failedServiceRequest' },
);
export const FailedServiceRequestList = Type.Array(FailedServiceRequest, { $id: 'failedServiceRequestList' });

// ---------------------------------------------------------------- role attributes

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

export const ListPostureCheckTypesEnvelope = envelope('listPostureCheckTypesEnvelope', PostureCheckTypeList);
export const DetailPostureCheckTypeEnvelope = envelope('detailPostureCheckTypeEnvelope', PostureCheckTypeDetail);
export const ListPostureCheckEnvelope = envelope('listPostureCheckEnvelope', PostureCheckList);
export const DetailPostureCheckEnvelope = envelope('detailPostureCheckEnvelope', PostureCheckDetail);
export const PostureResponseEnvelope = envelope('postureResponseEnvelope', PostureResponse);
export const PostureDataEnvelope = envelope('postureDataEnvelope', PostureData);
export const FailedServiceRequestEnvelope = envelope('failedServiceRequestEnvelope', FailedServiceRequestList);
export const ListRoleAttributesEnvelope = envelope('listRoleAttributesEnvelope', RoleAttributesList);
export const ListRoleAttributeUsageEnvelope = envelope('listRoleAttributeUsageEnvelope', RoleAttributeUsageList);

/** Models of the posture context (`$id` = the OpenZiti definition name). Shared shapes are in common.ts. */
export const POSTURE_MODELS: Record<string, TSchema> = Object.fromEntries(
  [
    OsType, PostureCheckType, Semantic, OperatingSystem, Process, ProcessMulti,
    PostureCheckTypeDetail, PostureCheckTypeList,
    PostureCheckCreate, PostureCheckUpdate, PostureCheckPatch, PostureCheckMfaProperties, PostureCheckMfaPropertiesPatch,
    ...Object.values(POSTURE_CHECK_BODIES).flatMap((byType) => Object.values(byType)),
    PostureCheckDetail, ...POSTURE_CHECK_DETAILS, PostureCheckList,
    PostureResponseCreate, ...Object.values(POSTURE_RESPONSE_BODIES), PostureResponseService, PostureResponse,
    PostureDataBase, PostureDataDomain, PostureDataMac, PostureDataOs, PostureDataProcess, PostureDataEndpointState,
    PostureDataMfa, ApiSessionPostureData, PostureData,
    PostureCheckFailure, PostureChecksFailureMfaValues, PostureChecksFailureMfaCriteria,
    PostureCheckFailureOperatingSystemActual, PostureCheckFailureProcessActual, ...POSTURE_CHECK_FAILURES,
    PolicyFailure, FailedServiceRequest, FailedServiceRequestList,
    RoleAttributesList, RoleAttributeSourceUsage, RoleAttributeUsageDetail, RoleAttributeUsageList,
    ListPostureCheckTypesEnvelope, DetailPostureCheckTypeEnvelope, ListPostureCheckEnvelope, DetailPostureCheckEnvelope,
    PostureResponseEnvelope, PostureDataEnvelope, FailedServiceRequestEnvelope, ListRoleAttributesEnvelope,
    ListRoleAttributeUsageEnvelope,
  ].map((m) => [m.$id as string, m]),
);
