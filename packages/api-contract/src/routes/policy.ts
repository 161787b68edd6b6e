import { type TSchema, Type } from '@sinclair/typebox';
import { CreateEnvelope, Empty } from '../models/common.js';
import { ListIdentitiesEnvelope } from '../models/identity-auth.js';
import * as M from '../models/policy.js';
import { ListPostureCheckEnvelope, ListRoleAttributeUsageEnvelope, ListRoleAttributesEnvelope } from '../models/posture.js';
import { type Access, type RouteDef, route } from '../route.js';

const CLIENT = ['client'] as const;
const MANAGEMENT = ['management'] as const;
const owner = 'policy' as const;

const listQuery = {
  limit: Type.Optional(Type.Integer()),
  offset: Type.Optional(Type.Integer()),
  filter: Type.Optional(Type.String()),
};
const roleQuery = {
  roleFilter: Type.Optional(Type.Array(Type.String(), { collectionFormat: 'multi' })),
  roleSemantic: Type.Optional(Type.String()),
};
const policyTypeQuery = { policyType: Type.Optional(Type.String()) };

interface Op {
  op: string;
  method: RouteDef['method'];
  path: string;
  summary: string;
  schema?: TSchema;
  body?: TSchema;
  query?: Record<string, TSchema>;
  status?: number;
}

/** Management operations of one resource family: one permission, one tag. */
function management(permission: string, tag: string, ops: Op[]): RouteDef[] {
  return ops.map((o) => op(o, MANAGEMENT, 'management', [tag], permission));
}

function op(o: Op, apis: RouteDef['apis'], access: Access, tags: string[], permission?: string): RouteDef {
  return route({
    operationId: o.op,
    method: o.method,
    path: o.path,
    apis,
    owner,
    access,
    ...(permission ? { permission } : {}),
    tags,
    summary: o.summary,
    ...(o.query ? { query: Type.Object(o.query) } : {}),
    ...(o.body ? { body: o.body } : {}),
    success: { status: o.status ?? (o.method === 'POST' && !o.op.startsWith('associate') && o.op !== 'reEnrollEdgeRouter' ? 201 : 200), schema: o.schema ?? Empty },
  });
}

/** CRUD operations of a management collection. */
function crud(plural: string, names: { list: string; create: string; detail: string; update: string; patch: string; delete: string }, s: { list: TSchema; detail: TSchema; create: TSchema; update: TSchema; patch: TSchema }, extraListQuery: Record<string, TSchema> = {}): Op[] {
  const one = `/${plural}/{id}`;
  return [
    { op: names.list, method: 'GET', path: `/${plural}`, summary: `List ${plural}`, schema: s.list, query: { ...listQuery, ...extraListQuery } },
    { op: names.create, method: 'POST', path: `/${plural}`, summary: `Create a ${plural} resource`, schema: CreateEnvelope, body: s.create },
    { op: names.detail, method: 'GET', path: one, summary: `Retrieves a single ${plural} resource`, schema: s.detail },
    { op: names.update, method: 'PUT', path: one, summary: `Update all fields on a ${plural} resource`, body: s.update },
    { op: names.patch, method: 'PATCH', path: one, summary: `Update the supplied fields on a ${plural} resource`, body: s.patch },
    { op: names.delete, method: 'DELETE', path: one, summary: `Delete a ${plural} resource` },
  ];
}

const sub = (opId: string, path: string, schema: TSchema, query: Record<string, TSchema> | undefined = listQuery): Op => ({
  op: opId, method: 'GET', path, summary: `List ${path.split('/').pop()} of a resource`, schema, ...(query ? { query } : {}),
});

/** Operations served by the policy context. */
export const POLICY_ROUTES: readonly RouteDef[] = [
  // ---- config types and configs
  ...management('config-type', 'Config', [
    ...crud('config-types', { list: 'listConfigTypes', create: 'createConfigType', detail: 'detailConfigType', update: 'updateConfigType', patch: 'patchConfigType', delete: 'deleteConfigType' },
      { list: M.ListConfigTypesEnvelope, detail: M.DetailConfigTypeEnvelope, create: M.ConfigTypeCreate, update: M.ConfigTypeUpdate, patch: M.ConfigTypePatch }),
    sub('listConfigsForConfigType', '/config-types/{id}/configs', M.ListConfigsEnvelope, undefined),
  ]),
  ...management('config', 'Config', [
    ...crud('configs', { list: 'listConfigs', create: 'createConfig', detail: 'detailConfig', update: 'updateConfig', patch: 'patchConfig', delete: 'deleteConfig' },
      { list: M.ListConfigsEnvelope, detail: M.DetailConfigEnvelope, create: M.ConfigCreate, update: M.ConfigUpdate, patch: M.ConfigPatch }),
    sub('listConfigServices', '/configs/{id}/services', M.ListServicesEnvelope),
  ]),

  // ---- services: the client sees only what policies grant; management sees everything
  op({ op: 'listServices', method: 'GET', path: '/services', summary: 'List services', schema: M.ListServicesEnvelope,
    query: { ...listQuery, configTypes: Type.Optional(Type.Array(Type.String(), { collectionFormat: 'multi' })), ...roleQuery } }, CLIENT, 'authenticated', ['Service']),
  op({ op: 'detailService', method: 'GET', path: '/services/{id}', summary: 'Retrieves a single service', schema: M.DetailServiceEnvelope }, CLIENT, 'authenticated', ['Service']),
  op({ op: 'listServiceEdgeRouters', method: 'GET', path: '/services/{id}/edge-routers', summary: 'List accessible edge-routers', schema: M.ListServiceEdgeRoutersEnvelope, query: listQuery }, CLIENT, 'authenticated', ['Service']),
  op(sub('listServiceTerminators', '/services/{id}/terminators', M.ListClientTerminatorsEnvelope), CLIENT, 'authenticated', ['Service']),
  // The client API's service writes (client.yml updateService, patchService, deleteService): the management handlers, for admins.
  ...([
    { op: 'updateService', method: 'PUT', path: '/services/{id}', summary: 'Update all fields on a service', body: M.ServiceUpdate },
    { op: 'patchService', method: 'PATCH', path: '/services/{id}', summary: 'Update the supplied fields on a service', body: M.ServicePatch },
    { op: 'deleteService', method: 'DELETE', path: '/services/{id}', summary: 'Delete a service' },
  ] satisfies Op[]).map((o) => op(o, CLIENT, 'admin', ['Service'])),
  ...management('service', 'Service', [
    ...crud('services', { list: 'listServices', create: 'createService', detail: 'detailService', update: 'updateService', patch: 'patchService', delete: 'deleteService' },
      { list: M.ListServicesEnvelope, detail: M.DetailServiceEnvelope, create: M.ServiceCreate, update: M.ServiceUpdate, patch: M.ServicePatch },
      { configTypes: Type.Optional(Type.Array(Type.String(), { collectionFormat: 'multi' })), ...roleQuery }),
  ]),
  ...management('config', 'Service', [sub('listServiceConfig', '/services/{id}/configs', M.ListConfigsEnvelope)]),
  ...management('service-policy', 'Service', [sub('listServiceServicePolicies', '/services/{id}/service-policies', M.ListServicePoliciesEnvelope)]),
  ...management('service-edge-router-policy', 'Service', [sub('listServiceServiceEdgeRouterPolicies', '/services/{id}/service-edge-router-policies', M.ListServiceEdgeRouterPoliciesEnvelope)]),
  ...management('identity', 'Service', [sub('listServiceIdentities', '/services/{id}/identities', ListIdentitiesEnvelope, { ...listQuery, ...policyTypeQuery })]),
  ...management('router', 'Service', [sub('listServiceEdgeRouters', '/services/{id}/edge-routers', M.ListEdgeRoutersEnvelope)]),
  ...management('terminator', 'Service', [sub('listServiceTerminators', '/services/{id}/terminators', M.ListTerminatorsEnvelope)]),
  ...management('service', 'Role Attributes', [
    { op: 'listServiceRoleAttributes', method: 'GET', path: '/service-role-attributes', summary: 'Retrieve a list of role attributes in use by services', schema: ListRoleAttributesEnvelope, query: listQuery },
    { op: 'listServiceRoleAttributeUsage', method: 'GET', path: '/service-role-attribute-usage', summary: 'How service role attributes are used', schema: ListRoleAttributeUsageEnvelope, query: { ...listQuery, withIds: Type.Optional(Type.Boolean()) } },
  ]),

  // ---- edge routers, transit routers, fabric routers
  ...management('router', 'Edge Router', [
    ...crud('edge-routers', { list: 'listEdgeRouters', create: 'createEdgeRouter', detail: 'detailEdgeRouter', update: 'updateEdgeRouter', patch: 'patchEdgeRouter', delete: 'deleteEdgeRouter' },
      { list: M.ListEdgeRoutersEnvelope, detail: M.DetailedEdgeRouterEnvelope, create: M.EdgeRouterCreate, update: M.EdgeRouterUpdate, patch: M.EdgeRouterPatch }, roleQuery),
    { op: 'reEnrollEdgeRouter', method: 'POST', path: '/edge-routers/{id}/re-enroll', summary: 'Re-enroll an edge router' },
    sub('listEdgeRouterServices', '/edge-routers/{id}/services', M.ListServicesEnvelope),
    sub('listEdgeRouterIdentities', '/edge-routers/{id}/identities', ListIdentitiesEnvelope),
  ]),
  ...management('edge-router-policy', 'Edge Router', [sub('listEdgeRouterEdgeRouterPolicies', '/edge-routers/{id}/edge-router-policies', M.ListEdgeRouterPoliciesEnvelope)]),
  ...management('service-edge-router-policy', 'Edge Router', [
    // The spec names listServicePoliciesEnvelope here; the controller answers with service edge router policies.
    sub('listEdgeRouterServiceEdgeRouterPolicies', '/edge-routers/{id}/service-edge-router-policies', M.ListServiceEdgeRouterPoliciesEnvelope),
  ]),
  ...management('router', 'Role Attributes', [
    { op: 'listEdgeRouterRoleAttributes', method: 'GET', path: '/edge-router-role-attributes', summary: 'Retrieve a list of role attributes in use by edge routers', schema: ListRoleAttributesEnvelope, query: listQuery },
    { op: 'listEdgeRouterRoleAttributeUsage', method: 'GET', path: '/edge-router-role-attribute-usage', summary: 'How edge router role attributes are used', schema: ListRoleAttributeUsageEnvelope, query: { ...listQuery, withIds: Type.Optional(Type.Boolean()) } },
  ]),
  ...management('router', 'Router', [
    ...crud('routers', { list: 'listRouters', create: 'createRouter', detail: 'detailRouter', update: 'updateRouter', patch: 'patchRouter', delete: 'deleteRouter' },
      { list: M.ListRoutersEnvelope, detail: M.DetailRouterEnvelope, create: M.RouterCreate, update: M.RouterUpdate, patch: M.RouterPatch }),
    ...crud('transit-routers', { list: 'listTransitRouters', create: 'createTransitRouter', detail: 'detailTransitRouter', update: 'updateTransitRouter', patch: 'patchTransitRouter', delete: 'deleteTransitRouter' },
      { list: M.ListRoutersEnvelope, detail: M.DetailRouterEnvelope, create: M.RouterCreate, update: M.RouterUpdate, patch: M.RouterPatch }),
  ]),
  ...management('terminator', 'Terminator', crud('terminators', { list: 'listTerminators', create: 'createTerminator', detail: 'detailTerminator', update: 'updateTerminator', patch: 'patchTerminator', delete: 'deleteTerminator' },
    { list: M.ListTerminatorsEnvelope, detail: M.DetailTerminatorEnvelope, create: M.TerminatorCreate, update: M.TerminatorUpdate, patch: M.TerminatorPatch })),

  // ---- the three policy kinds
  ...management('service-policy', 'Service Policy', [
    ...crud('service-policies', { list: 'listServicePolicies', create: 'createServicePolicy', detail: 'detailServicePolicy', update: 'updateServicePolicy', patch: 'patchServicePolicy', delete: 'deleteServicePolicy' },
      { list: M.ListServicePoliciesEnvelope, detail: M.DetailServicePolicyEnvelop, create: M.ServicePolicyCreate, update: M.ServicePolicyUpdate, patch: M.ServicePolicyPatch }),
    sub('listServicePolicyIdentities', '/service-policies/{id}/identities', ListIdentitiesEnvelope),
    sub('listServicePolicyServices', '/service-policies/{id}/services', M.ListServicesEnvelope),
    sub('listServicePolicyPostureChecks', '/service-policies/{id}/posture-checks', ListPostureCheckEnvelope),
  ]),
  ...management('edge-router-policy', 'Edge Router Policy', [
    ...crud('edge-router-policies', { list: 'listEdgeRouterPolicies', create: 'createEdgeRouterPolicy', detail: 'detailEdgeRouterPolicy', update: 'updateEdgeRouterPolicy', patch: 'patchEdgeRouterPolicy', delete: 'deleteEdgeRouterPolicy' },
      { list: M.ListEdgeRouterPoliciesEnvelope, detail: M.DetailEdgeRouterPolicyEnvelope, create: M.EdgeRouterPolicyCreate, update: M.EdgeRouterPolicyUpdate, patch: M.EdgeRouterPolicyPatch }),
    sub('listEdgeRouterPolicyEdgeRouters', '/edge-router-policies/{id}/edge-routers', M.ListEdgeRoutersEnvelope),
    sub('listEdgeRouterPolicyIdentities', '/edge-router-policies/{id}/identities', ListIdentitiesEnvelope),
  ]),
  ...management('service-edge-router-policy', 'Service Edge Router Policy', [
    ...crud('service-edge-router-policies', { list: 'listServiceEdgeRouterPolicies', create: 'createServiceEdgeRouterPolicy', detail: 'detailServiceEdgeRouterPolicy', update: 'updateServiceEdgeRouterPolicy', patch: 'patchServiceEdgeRouterPolicy', delete: 'deleteServiceEdgeRouterPolicy' },
      { list: M.ListServiceEdgeRouterPoliciesEnvelope, detail: M.DetailServiceEdgePolicyEnvelope, create: M.ServiceEdgeRouterPolicyCreate, update: M.ServiceEdgeRouterPolicyUpdate, patch: M.ServiceEdgeRouterPolicyPatch }),
    sub('listServiceEdgeRouterPolicyEdgeRouters', '/service-edge-router-policies/{id}/edge-routers', M.ListEdgeRoutersEnvelope),
    sub('listServiceEdgeRouterPolicyServices', '/service-edge-router-policies/{id}/services', M.ListServicesEnvelope),
  ]),

  // ---- an identity's view
  ...management('identity', 'Identity', [
    sub('listIdentityServices', '/identities/{id}/services', M.ListServicesEnvelope, { ...listQuery, ...policyTypeQuery }),
    sub('listIdentityEdgeRouters', '/identities/{id}/edge-routers', M.ListEdgeRoutersEnvelope),
    sub('listIdentitysEdgeRouterPolicies', '/identities/{id}/edge-router-policies', M.ListEdgeRouterPoliciesEnvelope),
    sub('listIdentityServicePolicies', '/identities/{id}/service-policies', M.ListServicePoliciesEnvelope),
    { op: 'getIdentityPolicyAdvice', method: 'GET', path: '/identities/{id}/policy-advice/{serviceId}', summary: 'Analyze policies relating the identity and the service', schema: M.GetIdentityPolicyAdviceEnvelope },
    { op: 'listIdentitysServiceConfigs', method: 'GET', path: '/identities/{id}/service-configs', summary: 'List the service configs of an identity', schema: M.ListServiceConfigsEnvelope },
    { op: 'associateIdentitysServiceConfigs', method: 'POST', path: '/identities/{id}/service-configs', summary: 'Associate service configs for a specific identity', body: M.ServiceConfigsAssignList },
    { op: 'disassociateIdentitysServiceConfigs', method: 'DELETE', path: '/identities/{id}/service-configs', summary: 'Remove associated service configs from a specific identity' },
  ]),
  op({ op: 'getCurrentIdentityEdgeRouters', method: 'GET', path: '/current-identity/edge-routers', summary: 'Return this identity\'s edge routers', schema: M.ListCurrentIdentityEdgeRoutersEnvelope, query: listQuery }, CLIENT, 'authenticated', ['Current Identity', 'Edge Router']),
];
