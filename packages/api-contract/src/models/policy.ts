import { type TSchema, Type } from '@sinclair/typebox';
import { BaseEntity, EntityRef, Tags, envelope, nullable } from './common.js';
import { Attributes, NetworkInterface, TerminatorCost, TerminatorPrecedence } from './identity-auth.js';
import { Roles } from './pki-enrollment.js';
import { PostureCheckType, Semantic } from './posture.js';
import { CommonEdgeRouterProperties, DialBind } from './session.js';

/**
 * Models of the policy context (config types, configs, services, routers, terminators, the three
 * policy kinds, an identity's view), transcribed from the OpenZiti swagger definitions of the same
 * name (`$id` = definition name). Shapes owned by other contexts' files (roles, semantic,
 * dialBind, commonEdgeRouterProperties, role attribute lists) are reused from there.
 */

const opt = Type.Optional;
const str = () => Type.String();
const stringList = () => Type.Array(Type.String());
const ctrlChanListeners = () => nullable(Type.Object({}, { additionalProperties: Type.Array(Type.String()) }), { 'x-omitempty': false });
const cost = () => nullable(Type.Integer({ minimum: 0, maximum: 65535 }));

// ---------------------------------------------------------------- shared policy shapes

export const NamedRole = Type.Object({ name: opt(str()), role: opt(str()) }, { $id: 'namedRole' });
export const NamedRoles = Type.Array(NamedRole, { $id: 'namedRoles', 'x-omitempty': false });
export const DialBindArray = Type.Array(DialBind, { $id: 'dialBindArray' });

// ---------------------------------------------------------------- config types and configs

const TARGETS = ['service', 'router'];

export const ConfigTypeCreate = Type.Object(
  {
    name: str(),
    schema: opt(Type.Object({}, { additionalProperties: true, description: 'A JSON schema to enforce configuration against' })),
    tags: opt(Tags),
    target: opt(nullable(Type.String({ enum: TARGETS }))),
  },
  { $id: 'configTypeCreate', description: 'A config-type create object', additionalProperties: false },
);
export const ConfigTypeUpdate = Type.Object(
  { name: str(), schema: opt(Type.Object({}, { additionalProperties: true })), tags: opt(Tags) },
  { $id: 'configTypeUpdate', description: 'A config-type update object', additionalProperties: false },
);
export const ConfigTypePatch = Type.Object(
  { name: opt(str()), schema: opt(Type.Object({}, { additionalProperties: true })), tags: opt(Tags) },
  { $id: 'configTypePatch', description: 'A config-type patch object', additionalProperties: false },
);
export const ConfigTypeDetail = Type.Intersect(
  [
    BaseEntity,
    Type.Object({
      name: str(),
      schema: Type.Object({}, { additionalProperties: true, description: 'A JSON schema to enforce configuration against' }),
      target: opt(nullable(Type.String({ enum: TARGETS }))),
    }),
  ],
  { $id: 'configTypeDetail', description: 'A config-type resource' },
);
export const ConfigTypeList = Type.Array(ConfigTypeDetail, { $id: 'configTypeList', description: 'An array of config-type resources' });

const configData = () => Type.Object({}, { additionalProperties: true });

export const ConfigCreate = Type.Object(
  { configTypeId: str(), data: configData(), name: str(), tags: opt(Tags) },
  { $id: 'configCreate', description: 'A config create object', additionalProperties: false },
);
export const ConfigUpdate = Type.Object(
  { data: configData(), name: str(), tags: opt(Tags) },
  { $id: 'configUpdate', description: 'A config update object', additionalProperties: false },
);
export const ConfigPatch = Type.Object(
  { data: opt(configData()), name: opt(str()), tags: opt(Tags) },
  { $id: 'configPatch', description: 'A config patch object', additionalProperties: false },
);
export const ConfigDetail = Type.Intersect(
  [BaseEntity, Type.Object({ configType: EntityRef, configTypeId: str(), data: Type.Object({}, { additionalProperties: true }), name: str() })],
  { $id: 'configDetail', description: 'A config resource' },
);
export const ConfigList = Type.Array(ConfigDetail, { $id: 'configList', description: 'An array of config resources' });

// ---------------------------------------------------------------- services

const serviceWritable = {
  configs: opt(stringList()),
  encryptionRequired: opt(Type.Boolean()),
  maxIdleTimeMillis: opt(Type.Integer()),
  roleAttributes: opt(stringList()),
  tags: opt(Tags),
  terminatorStrategy: opt(str()),
};

export const ServiceCreate = Type.Object(
  { ...serviceWritable, encryptionRequired: Type.Boolean(), name: str() },
  { $id: 'serviceCreate', additionalProperties: false },
);
export const ServiceUpdate = Type.Object({ ...serviceWritable, name: str() }, { $id: 'serviceUpdate', additionalProperties: false });
export const ServicePatch = Type.Object({ ...serviceWritable, name: opt(str()) }, { $id: 'servicePatch', additionalProperties: false });

export const PostureQueryProcess = Type.Object({ osType: opt(str()), path: opt(str()) }, { $id: 'postureQueryProcess' });
export const PostureQuery = Type.Intersect(
  [
    BaseEntity,
    Type.Object({
      isPassing: Type.Boolean(),
      process: opt(PostureQueryProcess),
      processes: opt(Type.Array(PostureQueryProcess)),
      promptGracePeriodSeconds: opt(Type.Integer()),
      promptOnUnlock: opt(Type.Boolean()),
      promptOnWake: opt(Type.Boolean()),
      queryType: PostureCheckType,
      timeout: Type.Integer(),
      timeoutAt: opt(nullable(Type.String({ format: 'date-time' }))),
      timeoutRemaining: Type.Integer(),
    }),
  ],
  { $id: 'postureQuery' },
);
export const PostureQueries = Type.Object(
  { isPassing: Type.Boolean(), policyId: str(), policyType: opt(DialBind), postureQueries: Type.Array(PostureQuery) },
  { $id: 'postureQueries' },
);

export const ServiceDetail = Type.Intersect(
  [
    BaseEntity,
    Type.Object({
      config: Type.Object({}, { additionalProperties: Type.Object({}, { additionalProperties: true }) }),
      configs: stringList(),
      encryptionRequired: Type.Boolean(),
      maxIdleTimeMillis: Type.Integer(),
      name: str(),
      permissions: DialBindArray,
      postureQueries: Type.Array(PostureQueries),
      roleAttributes: Attributes,
      terminatorStrategy: str(),
    }),
  ],
  { $id: 'serviceDetail' },
);
export const ServiceList = Type.Array(ServiceDetail, { $id: 'serviceList' });

// ---------------------------------------------------------------- routers

export const VersionInfo = Type.Object({ arch: str(), buildDate: str(), os: str(), revision: str(), version: str() }, { $id: 'versionInfo' });

const edgeRouterWritable = {
  appData: opt(Tags),
  configs: opt(stringList()),
  cost: opt(cost()),
  ctrlChanListeners: opt(ctrlChanListeners()),
  disabled: opt(nullable(Type.Boolean())),
  isTunnelerEnabled: opt(Type.Boolean()),
  noTraversal: opt(nullable(Type.Boolean())),
  roleAttributes: opt(Attributes),
  tags: opt(Tags),
};

export const EdgeRouterCreate = Type.Object({ ...edgeRouterWritable, name: str() }, { $id: 'edgeRouterCreate', description: 'An edge router create object', additionalProperties: false });
export const EdgeRouterUpdate = Type.Object({ ...edgeRouterWritable, name: str() }, { $id: 'edgeRouterUpdate', description: 'An edge router update object', additionalProperties: false });
export const EdgeRouterPatch = Type.Object(
  { ...edgeRouterWritable, name: opt(nullable(str())) },
  { $id: 'edgeRouterPatch', description: 'An edge router patch object', additionalProperties: false },
);

const enrollmentFields = {
  enrollmentCreatedAt: opt(nullable(Type.String({ format: 'date-time' }))),
  enrollmentExpiresAt: opt(nullable(Type.String({ format: 'date-time' }))),
  enrollmentJwt: opt(nullable(str())),
  enrollmentToken: opt(nullable(str())),
  unverifiedCertPem: opt(nullable(str(), { 'x-omitempty': false })),
  unverifiedFingerprint: opt(nullable(str(), { 'x-omitempty': false })),
};

export const EdgeRouterDetail = Type.Intersect(
  [
    BaseEntity,
    CommonEdgeRouterProperties,
    Type.Object({
      ...enrollmentFields,
      arch: str(),
      buildDate: str(),
      certPem: opt(nullable(str(), { 'x-omitempty': false })),
      configs: opt(stringList()),
      ctrlChanListeners: opt(Type.Object({}, { additionalProperties: stringList() })),
      fingerprint: opt(str()),
      interfaces: opt(Type.Array(NetworkInterface)),
      isTunnelerEnabled: Type.Boolean(),
      isVerified: Type.Boolean(),
      os: str(),
      revision: str(),
      roleAttributes: Attributes,
      version: str(),
      versionInfo: opt(VersionInfo),
    }),
  ],
  { $id: 'edgeRouterDetail', description: 'A detail edge router resource' },
);
export const EdgeRouterList = Type.Array(EdgeRouterDetail, { $id: 'edgeRouterList', description: 'A list of edge router resources' });

const routerWritable = {
  configs: opt(stringList()),
  cost: opt(cost()),
  ctrlChanListeners: opt(ctrlChanListeners()),
  disabled: opt(nullable(Type.Boolean())),
  noTraversal: opt(nullable(Type.Boolean())),
  tags: opt(Tags),
};

export const RouterCreate = Type.Object({ ...routerWritable, name: str() }, { $id: 'routerCreate', additionalProperties: false });
export const RouterUpdate = Type.Object({ ...routerWritable, name: str() }, { $id: 'routerUpdate', additionalProperties: false });
export const RouterPatch = Type.Object({ ...routerWritable, name: opt(str()) }, { $id: 'routerPatch', additionalProperties: false });

export const RouterDetail = Type.Intersect(
  [
    BaseEntity,
    Type.Object({
      ...enrollmentFields,
      configs: opt(stringList()),
      cost: Type.Integer({ minimum: 0, maximum: 65535 }),
      ctrlChanListeners: opt(Type.Object({}, { additionalProperties: stringList() })),
      disabled: Type.Boolean(),
      fingerprint: str(),
      interfaces: opt(Type.Array(NetworkInterface)),
      isOnline: Type.Boolean(),
      isVerified: Type.Boolean(),
      name: str(),
      noTraversal: Type.Boolean(),
    }),
  ],
  { $id: 'routerDetail' },
);
export const RouterList = Type.Array(RouterDetail, { $id: 'routerList' });

export const CurrentIdentityEdgeRouterDetail = Type.Intersect([BaseEntity, CommonEdgeRouterProperties], {
  $id: 'currentIdentityEdgeRouterDetail',
  description: 'A detail edge router resource',
});
export const CurrentIdentityEdgeRouterList = Type.Array(CurrentIdentityEdgeRouterDetail, {
  $id: 'currentIdentityEdgeRouterList',
  description: 'A list of edge router resources',
});
export const ServiceEdgeRouters = Type.Object({ edgeRouters: opt(Type.Array(CommonEdgeRouterProperties)) }, { $id: 'serviceEdgeRouters' });

// ---------------------------------------------------------------- terminators

const terminatorWritable = {
  address: opt(str()),
  binding: opt(str()),
  cost: opt(TerminatorCost),
  precedence: opt(TerminatorPrecedence),
  router: opt(str()),
  service: opt(str()),
  tags: opt(Tags),
};

export const TerminatorCreate = Type.Object(
  { ...terminatorWritable, address: str(), binding: str(), router: str(), service: str(), identity: opt(str()), identitySecret: opt(Type.String({ format: 'byte' })) },
  { $id: 'terminatorCreate', additionalProperties: false },
);
export const TerminatorUpdate = Type.Object(
  { ...terminatorWritable, address: str(), binding: str(), router: str(), service: str() },
  { $id: 'terminatorUpdate', additionalProperties: false },
);
export const TerminatorPatch = Type.Object(terminatorWritable, { $id: 'terminatorPatch', additionalProperties: false });

export const TerminatorDetail = Type.Intersect(
  [
    BaseEntity,
    Type.Object({
      address: str(),
      binding: str(),
      cost: TerminatorCost,
      dynamicCost: TerminatorCost,
      identity: str(),
      precedence: TerminatorPrecedence,
      router: EntityRef,
      routerId: str(),
      service: EntityRef,
      serviceId: str(),
    }),
  ],
  { $id: 'terminatorDetail' },
);
export const TerminatorList = Type.Array(TerminatorDetail, { $id: 'terminatorList' });
export const TerminatorClientDetail = Type.Intersect(
  [BaseEntity, Type.Object({ identity: str(), routerId: str(), service: EntityRef, serviceId: str() })],
  { $id: 'terminatorClientDetail' },
);
export const TerminatorClientList = Type.Array(TerminatorClientDetail, { $id: 'terminatorClientList' });

// ---------------------------------------------------------------- policies

const policyWrite = (fields: Record<string, TSchema>, required: string[], patch: boolean) =>
  Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, !patch && required.includes(k) ? v : opt(v)]));

const spFields = { identityRoles: Roles, name: str(), postureCheckRoles: Roles, semantic: Semantic, serviceRoles: Roles, tags: Tags, type: DialBind };
export const ServicePolicyCreate = Type.Object(policyWrite(spFields, ['name', 'type', 'semantic'], false), { $id: 'servicePolicyCreate', additionalProperties: false });
export const ServicePolicyUpdate = Type.Object(policyWrite(spFields, ['name', 'type', 'semantic'], false), { $id: 'servicePolicyUpdate', additionalProperties: false });
export const ServicePolicyPatch = Type.Object(policyWrite(spFields, [], true), { $id: 'servicePolicyPatch', additionalProperties: false });
export const ServicePolicyDetail = Type.Intersect(
  [
    BaseEntity,
    Type.Object({
      identityRoles: Roles,
      identityRolesDisplay: NamedRoles,
      name: str(),
      postureCheckRoles: Roles,
      postureCheckRolesDisplay: NamedRoles,
      semantic: Semantic,
      serviceRoles: Roles,
      serviceRolesDisplay: NamedRoles,
      type: DialBind,
    }),
  ],
  { $id: 'servicePolicyDetail' },
);
export const ServicePolicyList = Type.Array(ServicePolicyDetail, { $id: 'servicePolicyList' });

const erpFields = { edgeRouterRoles: Roles, identityRoles: Roles, name: str(), semantic: Semantic, tags: Tags };
export const EdgeRouterPolicyCreate = Type.Object(policyWrite(erpFields, ['name', 'semantic'], false), { $id: 'edgeRouterPolicyCreate', additionalProperties: false });
export const EdgeRouterPolicyUpdate = Type.Object(policyWrite(erpFields, ['name', 'semantic'], false), { $id: 'edgeRouterPolicyUpdate', additionalProperties: false });
export const EdgeRouterPolicyPatch = Type.Object(policyWrite(erpFields, [], true), { $id: 'edgeRouterPolicyPatch', additionalProperties: false });
export const EdgeRouterPolicyDetail = Type.Intersect(
  [
    BaseEntity,
    Type.Object({
      edgeRouterRoles: Roles,
      edgeRouterRolesDisplay: NamedRoles,
      identityRoles: Roles,
      identityRolesDisplay: NamedRoles,
      isSystem: Type.Boolean(),
      name: str(),
      semantic: Semantic,
    }),
  ],
  { $id: 'edgeRouterPolicyDetail' },
);
export const EdgeRouterPolicyList = Type.Array(EdgeRouterPolicyDetail, { $id: 'edgeRouterPolicyList' });

const serpFields = { edgeRouterRoles: Roles, name: str(), semantic: Semantic, serviceRoles: Roles, tags: Tags };
export const ServiceEdgeRouterPolicyCreate = Type.Object(policyWrite(serpFields, ['name', 'semantic'], false), {
  $id: 'serviceEdgeRouterPolicyCreate',
  additionalProperties: false,
});
export const ServiceEdgeRouterPolicyUpdate = Type.Object(policyWrite(serpFields, ['name', 'semantic'], false), {
  $id: 'serviceEdgeRouterPolicyUpdate',
  additionalProperties: false,
});
export const ServiceEdgeRouterPolicyPatch = Type.Object(policyWrite(serpFields, [], true), { $id: 'serviceEdgeRouterPolicyPatch', additionalProperties: false });
export const ServiceEdgeRouterPolicyDetail = Type.Intersect(
  [
    BaseEntity,
    Type.Object({
      edgeRouterRoles: Roles,
      edgeRouterRolesDisplay: NamedRoles,
      name: str(),
      semantic: Semantic,
      serviceRoles: Roles,
      serviceRolesDisplay: NamedRoles,
    }),
  ],
  { $id: 'serviceEdgeRouterPolicyDetail' },
);
export const ServiceEdgeRouterPolicyList = Type.Array(ServiceEdgeRouterPolicyDetail, { $id: 'serviceEdgeRouterPolicyList' });

// ---------------------------------------------------------------- an identity's view

export const ServiceConfigAssign = Type.Object({ configId: str(), serviceId: str() }, { $id: 'serviceConfigAssign' });
export const ServiceConfigsAssignList = Type.Array(ServiceConfigAssign, { $id: 'serviceConfigsAssignList' });
export const ServiceConfigDetail = Type.Object({ config: EntityRef, configId: str(), service: EntityRef, serviceId: str() }, { $id: 'serviceConfigDetail' });
export const ServiceConfigList = Type.Array(ServiceConfigDetail, { $id: 'serviceConfigList' });

export const RouterEntityRef = Type.Intersect([EntityRef, Type.Object({ isOnline: Type.Boolean() })], { $id: 'routerEntityRef' });
export const PolicyAdvice = Type.Object(
  {
    commonRouters: opt(Type.Array(RouterEntityRef)),
    identity: opt(EntityRef),
    identityId: opt(str()),
    identityRouterCount: opt(Type.Number({ format: 'int32' })),
    isBindAllowed: opt(Type.Boolean()),
    isDialAllowed: opt(Type.Boolean()),
    service: opt(EntityRef),
    serviceId: opt(str()),
    serviceRouterCount: opt(Type.Number({ format: 'int32' })),
  },
  { $id: 'policyAdvice' },
);

// ---------------------------------------------------------------- envelopes

export const ListConfigTypesEnvelope = envelope('listConfigTypesEnvelope', ConfigTypeList);
export const DetailConfigTypeEnvelope = envelope('detailConfigTypeEnvelope', ConfigTypeDetail);
export const ListConfigsEnvelope = envelope('listConfigsEnvelope', ConfigList);
export const DetailConfigEnvelope = envelope('detailConfigEnvelope', ConfigDetail);
export const ListServicesEnvelope = envelope('listServicesEnvelope', ServiceList);
export const DetailServiceEnvelope = envelope('detailServiceEnvelope', ServiceDetail);
export const ListEdgeRoutersEnvelope = envelope('listEdgeRoutersEnvelope', EdgeRouterList);
export const DetailedEdgeRouterEnvelope = envelope('detailedEdgeRouterEnvelope', EdgeRouterDetail);
export const ListRoutersEnvelope = envelope('listRoutersEnvelope', RouterList);
export const DetailRouterEnvelope = envelope('detailRouterEnvelope', RouterDetail);
export const ListTerminatorsEnvelope = envelope('listTerminatorsEnvelope', TerminatorList);
export const DetailTerminatorEnvelope = envelope('detailTerminatorEnvelope', TerminatorDetail);
export const ListClientTerminatorsEnvelope = envelope('listClientTerminatorsEnvelope', TerminatorClientList);
export const ListServicePoliciesEnvelope = envelope('listServicePoliciesEnvelope', ServicePolicyList);
export const DetailServicePolicyEnvelop = envelope('detailServicePolicyEnvelop', ServicePolicyDetail);
export const ListEdgeRouterPoliciesEnvelope = envelope('listEdgeRouterPoliciesEnvelope', EdgeRouterPolicyList);
export const DetailEdgeRouterPolicyEnvelope = envelope('detailEdgeRouterPolicyEnvelope', EdgeRouterPolicyDetail);
export const ListServiceEdgeRouterPoliciesEnvelope = envelope('listServiceEdgeRouterPoliciesEnvelope', ServiceEdgeRouterPolicyList);
export const DetailServiceEdgePolicyEnvelope = envelope('detailServiceEdgePolicyEnvelope', ServiceEdgeRouterPolicyDetail);
export const ListServiceConfigsEnvelope = envelope('listServiceConfigsEnvelope', ServiceConfigList);
export const GetIdentityPolicyAdviceEnvelope = envelope('getIdentityPolicyAdviceEnvelope', PolicyAdvice);
export const ListServiceEdgeRoutersEnvelope = envelope('listServiceEdgeRoutersEnvelope', ServiceEdgeRouters);
export const ListCurrentIdentityEdgeRoutersEnvelope = envelope('listCurrentIdentityEdgeRoutersEnvelope', CurrentIdentityEdgeRouterList);

/** Models of the policy context. */
export const POLICY_MODELS: Record<string, TSchema> = Object.fromEntries(
  [
    NamedRole, NamedRoles, DialBindArray, ConfigTypeCreate, ConfigTypeUpdate, ConfigTypePatch, ConfigTypeDetail, ConfigTypeList,
    ConfigCreate, ConfigUpdate, ConfigPatch, ConfigDetail, ConfigList, ServiceCreate, ServiceUpdate, ServicePatch, PostureQueryProcess,
    PostureQuery, PostureQueries, ServiceDetail, ServiceList, VersionInfo, EdgeRouterCreate, EdgeRouterUpdate, EdgeRouterPatch,
    EdgeRouterDetail, EdgeRouterList, RouterCreate, RouterUpdate, RouterPatch, RouterDetail, RouterList, CurrentIdentityEdgeRouterDetail,
    CurrentIdentityEdgeRouterList, ServiceEdgeRouters, TerminatorCreate, TerminatorUpdate, TerminatorPatch, TerminatorDetail,
    TerminatorList, TerminatorClientDetail, TerminatorClientList, ServicePolicyCreate, ServicePolicyUpdate, ServicePolicyPatch,
    ServicePolicyDetail, ServicePolicyList, EdgeRouterPolicyCreate, EdgeRouterPolicyUpdate, EdgeRouterPolicyPatch,
    EdgeRouterPolicyDetail, EdgeRouterPolicyList, ServiceEdgeRouterPolicyCreate, ServiceEdgeRouterPolicyUpdate,
    ServiceEdgeRouterPolicyPatch, ServiceEdgeRouterPolicyDetail, ServiceEdgeRouterPolicyList, ServiceConfigAssign,
    ServiceConfigsAssignList, ServiceConfigDetail, ServiceConfigList, RouterEntityRef, PolicyAdvice,
    ListConfigTypesEnvelope, DetailConfigTypeEnvelope, ListConfigsEnvelope, DetailConfigEnvelope, ListServicesEnvelope,
    DetailServiceEnvelope, ListEdgeRoutersEnvelope, DetailedEdgeRouterEnvelope, ListRoutersEnvelope, DetailRouterEnvelope,
    ListTerminatorsEnvelope, DetailTerminatorEnvelope, ListClientTerminatorsEnvelope, ListServicePoliciesEnvelope,
    DetailServicePolicyEnvelop, ListEdgeRouterPoliciesEnvelope, DetailEdgeRouterPolicyEnvelope, ListServiceEdgeRouterPoliciesEnvelope,
    DetailServiceEdgePolicyEnvelope, ListServiceConfigsEnvelope, GetIdentityPolicyAdviceEnvelope, ListServiceEdgeRoutersEnvelope,
    ListCurrentIdentityEdgeRoutersEnvelope,
  ].map((s) => [s.$id as string, s]),
);
