import { formatTimestamp } from '@ziti/errors';
import type { RoleDisplays } from '../domain/policy-manager.js';
import type {
  Config,
  ConfigType,
  EdgeRouterPolicy,
  IdentityRecord,
  PostureCheckRecord,
  Router,
  RouterEnrollmentInfo,
  RouterLiveState,
  ServiceEdgeRouterPolicy,
  ServicePolicy,
  ServiceView,
  Terminator,
} from '../domain/model.js';
import type { ServiceConfigOverride } from '../domain/ports.js';
import { OFFLINE_ROUTER } from '../domain/model.js';

/** Wire shapes (swagger definitions) of this context's entities. Links are relative (§7.3). */

export type Links = Record<string, { href: string }>;

const ts = (d: Date) => (d instanceof Date ? d.toISOString() : formatTimestamp(d));
const isoOrNull = (v: string | null) => (v ? formatTimestamp(new Date(v)) : null);

export function links(plural: string, id: string, subs: readonly string[] = []): Links {
  const out: Links = { self: { href: `./${plural}/${id}` } };
  for (const s of subs) out[s] = { href: `./${plural}/${id}/${s}` };
  return out;
}

export function entityRef(plural: string, id: string, name: string) {
  return { _links: links(plural, id), entity: plural, id, name };
}

const base = (plural: string, e: { id: string; tags: Record<string, unknown>; createdAt: Date; updatedAt: Date }, subs: readonly string[] = []) => ({
  _links: links(plural, e.id, subs),
  createdAt: ts(e.createdAt),
  id: e.id,
  tags: e.tags,
  updatedAt: ts(e.updatedAt),
});

export const configTypeDetail = (t: ConfigType) => ({ ...base('config-types', t), name: t.name, schema: t.schema, target: t.target });

export const configDetail = (c: Config) => ({
  ...base('configs', c),
  configType: entityRef('config-types', c.configTypeId, c.configTypeName),
  configTypeId: c.configTypeId,
  data: c.data,
  name: c.name,
});

/** `postureQueries` entries with their checks' timestamps rendered. */
const postureQueries = (list: ServiceView['postureQueries']) =>
  list.length === 0
    ? list
    : list.map((p) => ({
        ...p,
        postureQueries: p.postureQueries.map((q) => ({ ...q, createdAt: ts(q.createdAt as Date), updatedAt: ts(q.updatedAt as Date) })),
      }));

/** `serviceDetail` (the client list renders hundreds per page: built without spreads). */
export function serviceDetail(s: ServiceView) {
  const self = `./services/${s.id}`;
  return {
    _links: {
      self: { href: self },
      'service-edge-router-policies': { href: `${self}/service-edge-router-policies` },
      'service-policies': { href: `${self}/service-policies` },
      terminators: { href: `${self}/terminators` },
      configs: { href: `${self}/configs` },
    },
    createdAt: ts(s.createdAt),
    id: s.id,
    tags: s.tags,
    updatedAt: ts(s.updatedAt),
    config: s.config,
    configs: s.configs,
    encryptionRequired: s.encryptionRequired,
    maxIdleTimeMillis: s.maxIdleTimeMillis,
    name: s.name,
    permissions: s.permissions,
    postureQueries: postureQueries(s.postureQueries),
    roleAttributes: s.roleAttributes,
    terminatorStrategy: s.terminatorStrategy,
  };
}

/** A pre-rendered `serviceDetail` (its caller-independent fields) completed with the caller's extras. */
export function renderedServiceDetail(s: { json: string } & Pick<ServiceView, 'permissions' | 'config' | 'postureQueries'>): string {
  return `${s.json.slice(0, -1)},"permissions":${JSON.stringify(s.permissions)},"config":${JSON.stringify(s.config)},"postureQueries":${JSON.stringify(postureQueries(s.postureQueries))}}`;
}

/** `commonEdgeRouterProperties`: the router's record with its live state (offline when fabric does not report it). */
export const commonEdgeRouter = (r: Router, s: RouterLiveState = OFFLINE_ROUTER) => ({
  appData: r.appData,
  cost: r.cost,
  disabled: r.disabled,
  hostname: s.hostname,
  isOnline: s.isOnline,
  name: r.name,
  noTraversal: r.noTraversal,
  supportedProtocols: s.supportedProtocols,
  syncStatus: s.syncStatus,
});

/** OpenZiti's `versionInfo` of a router state: empty strings while the router has not reported one. */
const versionInfo = (s: RouterLiveState) => s.versionInfo ?? { version: '', revision: '', buildDate: '', os: '', arch: '' };

const enrollmentFields = (e: RouterEnrollmentInfo | undefined) =>
  e
    ? {
        enrollmentCreatedAt: isoOrNull(e.createdAt),
        enrollmentExpiresAt: isoOrNull(e.expiresAt),
        enrollmentJwt: e.jwt,
        enrollmentToken: e.token,
      }
    : {};

export const edgeRouterDetail = (r: Router, e: RouterEnrollmentInfo | undefined, s: RouterLiveState = OFFLINE_ROUTER) => ({
  ...base('edge-routers', r, ['edge-router-policies']),
  ...commonEdgeRouter(r, s),
  ...enrollmentFields(e),
  arch: versionInfo(s).arch,
  buildDate: versionInfo(s).buildDate,
  certPem: e?.certPem ?? null,
  configs: r.configs,
  ctrlChanListeners: r.ctrlChanListeners,
  fingerprint: e?.fingerprint ?? r.fingerprint ?? undefined,
  isTunnelerEnabled: r.isTunnelerEnabled,
  isVerified: e?.isVerified ?? false,
  os: versionInfo(s).os,
  revision: versionInfo(s).revision,
  roleAttributes: r.roleAttributes,
  unverifiedCertPem: null,
  unverifiedFingerprint: null,
  version: versionInfo(s).version,
  versionInfo: versionInfo(s),
});

/** The management API's `routerDetail` (`/routers`, `/transit-routers`): `isOnline` while the control channel is up. */
export const routerDetail = (plural: 'routers' | 'transit-routers', r: Router, e: RouterEnrollmentInfo | undefined, s: RouterLiveState = OFFLINE_ROUTER) => ({
  ...base(plural, r),
  ...enrollmentFields(e),
  configs: r.configs,
  cost: r.cost,
  ctrlChanListeners: r.ctrlChanListeners,
  disabled: r.disabled,
  fingerprint: e?.fingerprint ?? r.fingerprint ?? '',
  isOnline: s.connected,
  isVerified: e?.isVerified ?? false,
  name: r.name,
  noTraversal: r.noTraversal,
  unverifiedCertPem: null,
  unverifiedFingerprint: null,
});

export const currentIdentityEdgeRouter = (r: Router, s: RouterLiveState = OFFLINE_ROUTER) => ({ ...base('edge-routers', r, ['edge-router-policies']), ...commonEdgeRouter(r, s) });

export const terminatorDetail = (t: Terminator) => ({
  ...base('terminators', t),
  address: t.address,
  binding: t.binding,
  cost: t.cost,
  dynamicCost: 0,
  identity: t.identity,
  precedence: t.precedence,
  router: entityRef('routers', t.routerId, t.routerName),
  routerId: t.routerId,
  service: entityRef('services', t.serviceId, t.serviceName),
  serviceId: t.serviceId,
});

export const clientTerminator = (t: Terminator) => ({
  ...base('terminators', t),
  identity: t.identity,
  routerId: t.routerId,
  service: entityRef('services', t.serviceId, t.serviceName),
  serviceId: t.serviceId,
});

export const servicePolicyDetail = (p: ServicePolicy, d: RoleDisplays) => ({
  ...base('service-policies', p, ['services', 'identities', 'posture-checks']),
  identityRoles: p.identityRoles,
  identityRolesDisplay: d.identityRolesDisplay ?? [],
  name: p.name,
  postureCheckRoles: p.postureCheckRoles,
  postureCheckRolesDisplay: d.postureCheckRolesDisplay ?? [],
  semantic: p.semantic,
  serviceRoles: p.serviceRoles,
  serviceRolesDisplay: d.serviceRolesDisplay ?? [],
  type: p.type,
});

export const edgeRouterPolicyDetail = (p: EdgeRouterPolicy, d: RoleDisplays) => ({
  ...base('edge-router-policies', p, ['edge-routers', 'identities']),
  edgeRouterRoles: p.edgeRouterRoles,
  edgeRouterRolesDisplay: d.edgeRouterRolesDisplay ?? [],
  identityRoles: p.identityRoles,
  identityRolesDisplay: d.identityRolesDisplay ?? [],
  isSystem: p.isSystem,
  name: p.name,
  semantic: p.semantic,
});

export const serviceEdgeRouterPolicyDetail = (p: ServiceEdgeRouterPolicy, d: RoleDisplays) => ({
  ...base('service-edge-router-policies', p, ['edge-routers', 'services']),
  edgeRouterRoles: p.edgeRouterRoles,
  edgeRouterRolesDisplay: d.edgeRouterRolesDisplay ?? [],
  name: p.name,
  semantic: p.semantic,
  serviceRoles: p.serviceRoles,
  serviceRolesDisplay: d.serviceRolesDisplay ?? [],
});

const IDENTITY_SUBS = ['edge-router-policies', 'edge-routers', 'service-policies', 'services', 'posture-data', 'failed-service-requests', 'authenticators', 'enrollments', 'service-configs'];

/**
 * `identityDetail` rendered from the projection (association lists of this context). The fields
 * identity-auth alone knows (authenticators, enrollments, sessions, SDK and environment info,
 * permissions) are shown empty.
 */
export const identityDetail = (i: IdentityRecord) => ({
  ...base('identities', i, IDENTITY_SUBS),
  _links: { ...links('identities', i.id, IDENTITY_SUBS), 'auth-policies': { href: `./auth-policies/${i.authPolicyId}` } },
  appData: i.appData,
  authPolicy: entityRef('auth-policies', i.authPolicyId, i.authPolicyId === 'default' ? 'Default' : i.authPolicyId),
  authPolicyId: i.authPolicyId,
  authenticators: {},
  defaultHostingCost: i.defaultHostingCost,
  defaultHostingPrecedence: i.defaultHostingPrecedence,
  disabled: i.disabled,
  edgeRouterConnectionStatus: 'offline',
  enrollment: {},
  envInfo: {},
  externalId: i.externalId,
  hasApiSession: false,
  hasEdgeRouterConnection: false,
  isAdmin: i.isAdmin,
  isDefaultAdmin: i.isDefaultAdmin,
  isMfaEnabled: false,
  name: i.name,
  permissions: [],
  roleAttributes: i.roleAttributes,
  sdkInfo: {},
  serviceHostingCosts: i.serviceHostingCosts,
  serviceHostingPrecedences: i.serviceHostingPrecedences,
  type: entityRef('identity-types', i.typeId, i.typeId),
  typeId: i.typeId,
});

/** `postureCheckDetail`: the posture context's own rendering when it sent one, else the projected fields. */
export const postureCheckDetail = (c: PostureCheckRecord) => ({
  ...(c.detail ?? {}),
  ...base('posture-checks', c),
  name: c.name,
  roleAttributes: c.roleAttributes,
  typeId: c.typeId,
  version: c.version,
});

export const serviceConfigDetail = (o: ServiceConfigOverride) => ({
  config: entityRef('configs', o.configId, o.configName),
  configId: o.configId,
  service: entityRef('services', o.serviceId, o.serviceName),
  serviceId: o.serviceId,
});

// ---------------------------------------------------------------- the fabric API (/fabric/v1)

const fabricRef = (plural: 'routers' | 'services', id: string, name: string) => ({ _links: links(plural, id, ['terminators']), entity: plural, id, name });

/** A link listener address (`tls:host:port`) as the fabric API's `{address, protocol}`. */
const routerListener = (address: string) => ({ address, protocol: address.includes(':') ? address.slice(0, address.indexOf(':')) : '' });

/**
 * The fabric API's `routerDetail` (controller `FabricRouterModelMapper`): every router kind, with
 * `connected`, the listener addresses and `versionInfo` of a connected router (absent or null
 * while it is not). Go's nil slices and pointers are null; `ctrlChanListeners` is left out when empty.
 */
export const fabricRouterDetail = (r: Router, e: RouterEnrollmentInfo | undefined, s: RouterLiveState = OFFLINE_ROUTER) => ({
  ...base('routers', r, ['terminators']),
  configs: r.configs.length > 0 ? r.configs : null,
  connected: s.connected,
  cost: r.cost,
  ...(Object.keys(r.ctrlChanListeners).length > 0 ? { ctrlChanListeners: r.ctrlChanListeners } : {}),
  disabled: r.disabled,
  fingerprint: e?.fingerprint ?? r.fingerprint ?? null,
  interfaces: null,
  listenerAddresses: s.connected && s.listenerAddresses.length > 0 ? s.listenerAddresses.map(routerListener) : null,
  name: r.name,
  noTraversal: r.noTraversal,
  ...(s.connected && s.versionInfo ? { versionInfo: s.versionInfo } : {}),
});

/** The fabric API's `terminatorDetail`: `instanceId` (the Edge API's `identity`), `hostId` (the hosting identity), `dynamicCost`. */
export const fabricTerminatorDetail = (t: Terminator) => ({
  ...base('terminators', t),
  address: t.address,
  binding: t.binding,
  cost: t.cost,
  dynamicCost: 0,
  hostId: t.hostId,
  instanceId: t.identity,
  precedence: t.precedence,
  router: fabricRef('routers', t.routerId, t.routerName),
  routerId: t.routerId,
  service: fabricRef('services', t.serviceId, t.serviceName),
  serviceId: t.serviceId,
});
