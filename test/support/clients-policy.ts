import type { EdgeApi } from './clients.js';
import { Resource, queryString, type Query } from './clients.js';
import type { HttpResponse } from './http.js';

/**
 * Typed clients of the policy area: config types, configs, services, routers, terminators, the
 * three policy kinds, role attributes, and an identity's view. They return the raw response;
 * assertions stay in the tests.
 */
export function policyClients(api: EdgeApi) {
  const sub = (plural: string) => (id: string, name: string, query?: Query) => api.call('GET', `/${plural}/${encodeURIComponent(id)}/${name}${queryString(query)}`);
  return {
    configTypes: new Resource(api, 'config-types'),
    configs: new Resource(api, 'configs'),
    services: new Resource(api, 'services'),
    edgeRouters: new Resource(api, 'edge-routers'),
    routers: new Resource(api, 'routers'),
    transitRouters: new Resource(api, 'transit-routers'),
    terminators: new Resource(api, 'terminators'),
    servicePolicies: new Resource(api, 'service-policies'),
    edgeRouterPolicies: new Resource(api, 'edge-router-policies'),
    serviceEdgeRouterPolicies: new Resource(api, 'service-edge-router-policies'),
    /** `GET /<plural>/{id}/<name>` */
    subList: (plural: string, id: string, name: string, query?: Query) => sub(plural)(id, name, query),
    roleAttributes: (entity: 'service' | 'edge-router', query?: Query) => api.call('GET', `/${entity}-role-attributes${queryString(query)}`),
    roleAttributeUsage: (entity: 'service' | 'edge-router', query?: Query) => api.call('GET', `/${entity}-role-attribute-usage${queryString(query)}`),
    serviceConfigs: {
      list: (identityId: string) => api.call('GET', `/identities/${encodeURIComponent(identityId)}/service-configs`),
      assign: (identityId: string, pairs: { serviceId: string; configId: string }[]) => api.call('POST', `/identities/${encodeURIComponent(identityId)}/service-configs`, pairs),
      remove: (identityId: string, pairs?: { serviceId: string; configId: string }[]) =>
        api.call('DELETE', `/identities/${encodeURIComponent(identityId)}/service-configs`, pairs),
    },
    policyAdvice: (identityId: string, serviceId: string) => api.call('GET', `/identities/${encodeURIComponent(identityId)}/policy-advice/${encodeURIComponent(serviceId)}`),
    currentIdentityEdgeRouters: () => api.call('GET', '/current-identity/edge-routers'),
    serviceEdgeRouters: (serviceId: string, headers?: Record<string, string>) => api.call('GET', `/services/${encodeURIComponent(serviceId)}/edge-routers`, undefined, headers),
  };
}

let seq = 0;
/** A name no other test uses. */
export const unique = (p: string) => `${p}-${process.pid}-${++seq}-${Math.random().toString(36).slice(2, 7)}`;

export async function created(res: HttpResponse, what = 'an entity'): Promise<string> {
  if (res.status !== 201 || typeof res.body?.data?.id !== 'string') throw new Error(`creating ${what} failed: ${res.status} ${res.text.slice(0, 600)}`);
  return res.body.data.id as string;
}

/** The ids of a list response, sorted. */
export const ids = (res: HttpResponse): string[] => ((res.body?.data ?? []) as { id: string }[]).map((x) => x.id).sort();

/** Management helpers that create the entities of the policy area, returning their ids. */
export function policyBuilder(mgmt: EdgeApi) {
  const c = policyClients(mgmt);
  return {
    configType: (schema: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
      c.configTypes.create({ name: unique('ct'), schema, ...extra }).then((r) => created(r, 'a config type')),
    config: (configTypeId: string, data: Record<string, unknown>, name = unique('cfg')) => c.configs.create({ name, configTypeId, data }).then((r) => created(r, 'a config')),
    service: (roleAttributes: string[] = [], configs: string[] = [], name = unique('svc')) =>
      c.services.create({ name, roleAttributes, configs, encryptionRequired: true }).then((r) => created(r, 'a service')),
    edgeRouter: (roleAttributes: string[] = [], extra: Record<string, unknown> = {}) =>
      c.edgeRouters.create({ name: unique('er'), roleAttributes, ...extra }).then((r) => created(r, 'an edge router')),
    servicePolicy: (type: 'Dial' | 'Bind', serviceRoles: string[], identityRoles: string[], semantic = 'AllOf', postureCheckRoles: string[] = []) =>
      c.servicePolicies.create({ name: unique('sp'), type, semantic, serviceRoles, identityRoles, postureCheckRoles }).then((r) => created(r, 'a service policy')),
    edgeRouterPolicy: (edgeRouterRoles: string[], identityRoles: string[], semantic = 'AllOf') =>
      c.edgeRouterPolicies.create({ name: unique('erp'), semantic, edgeRouterRoles, identityRoles }).then((r) => created(r, 'an edge router policy')),
    serviceEdgeRouterPolicy: (edgeRouterRoles: string[], serviceRoles: string[], semantic = 'AllOf') =>
      c.serviceEdgeRouterPolicies.create({ name: unique('serp'), semantic, edgeRouterRoles, serviceRoles }).then((r) => created(r, 'a service edge router policy')),
    /** A non-admin identity with a password authenticator (identity-auth's `/authenticators`). */
    identity: async (roleAttributes: string[] = [], extra: Record<string, unknown> = {}) => {
      const id = await mgmt.identities.create({ name: unique('user'), type: 'User', isAdmin: false, roleAttributes, ...extra }).then((r) => created(r, 'an identity'));
      const username = unique('u');
      const password = `Pw!${Math.random().toString(36).slice(2)}Aa9`;
      await mgmt.call('POST', '/authenticators', { method: 'updb', identityId: id, username, password }).then((r) => created(r, 'an authenticator'));
      return { id, username, password };
    },
  };
}
