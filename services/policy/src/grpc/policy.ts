import type { ServiceError } from '@grpc/grpc-js';
import { toGrpcError } from '@ziti/errors';
import type { GetRouterDataModelRequest, PolicyServiceServer, ServiceAccess, SyncIdentityRequest, SyncPostureCheckRequest } from '@ziti/proto';
import type { AccessManager } from '../domain/access-manager.js';
import type { IdentityChange, PostureCheckChange, ProjectionManager } from '../domain/projection-manager.js';
import type { RouterDataModelSource } from '../domain/router-data-model.js';
import type { UsageManager } from '../domain/usage-manager.js';
import type { RouterStates } from '../domain/ports.js';
import type { TerminatorManager } from '../domain/terminator-manager.js';
import { fabricCalls, liveEdgeRouterRefs, storedEdgeRouterRefs } from './fabric-calls.js';

function time(value: string, fallback: Date): Date {
  const d = value ? new Date(value) : fallback;
  return Number.isNaN(d.getTime()) ? fallback : d;
}

function json(value: string): Record<string, unknown> | undefined {
  if (!value) return undefined;
  try {
    const v = JSON.parse(value);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** A `SyncIdentity` request (or a projection source of the integrity check) as the domain's change. */
export function identityChange(r: SyncIdentityRequest): IdentityChange {
  return {
    identityId: r.identityId,
    name: r.name,
    roleAttributes: r.roleAttributes,
    isAdmin: r.isAdmin,
    disabled: r.disabled,
    deleted: r.deleted,
    updatedAt: time(r.updatedAt, new Date()),
    typeId: r.typeId || undefined,
    isDefaultAdmin: r.isDefaultAdmin,
    externalId: r.externalId || null,
    authPolicyId: r.authPolicyId || undefined,
    createdAt: r.createdAt ? time(r.createdAt, new Date()) : undefined,
    tags: json(r.tagsJson),
    ...(r.hosting
      ? {
          defaultHostingPrecedence: r.hosting.defaultPrecedence,
          defaultHostingCost: r.hosting.defaultCost,
          serviceHostingPrecedences: r.hosting.servicePrecedences,
          serviceHostingCosts: r.hosting.serviceCosts,
        }
      : {}),
    appData: json(r.appDataJson),
  };
}

/** A `SyncPostureCheck` request (or a projection source of the integrity check) as the domain's change. */
export function postureCheckChange(r: SyncPostureCheckRequest): PostureCheckChange {
  return {
    postureCheckId: r.postureCheckId,
    name: r.name,
    typeId: r.typeId,
    roleAttributes: r.roleAttributes,
    deleted: r.deleted,
    updatedAt: time(r.updatedAt, new Date()),
    version: r.version ? Number(r.version) : undefined,
    createdAt: r.createdAt ? time(r.createdAt, new Date()) : undefined,
    detail: json(r.detailJson),
  };
}

const USAGE_SOURCES = ['servicePolicies', 'edgeRouterPolicies', 'serviceEdgeRouterPolicies'] as const;

/** `ziti.v1.PolicyService`: projections fed by other contexts, role attribute usage, and session access. */
export function policyServer(projections: ProjectionManager, usage: UsageManager, access: AccessManager, terminators: TerminatorManager, routerStates: RouterStates, rdm: RouterDataModelSource): PolicyServiceServer {
  const unary = <Req, Res>(fn: (req: Req) => Promise<Res>) => (call: { request: Req }, callback: (err: Partial<ServiceError> | null, res?: Res) => void) => {
    fn(call.request).then(
      (res) => callback(null, res),
      (err: unknown) => callback(toGrpcError(err)),
    );
  };
  return {
    syncIdentity: unary(async (r) => {
      await projections.syncIdentity(identityChange(r));
      return {};
    }),
    syncPostureCheck: unary(async (r) => {
      await projections.syncPostureCheck(postureCheckChange(r));
      return {};
    }),
    getRoleAttributeUsage: unary(async (r) => {
      const rows = await usage.policyUsage(r.entityType, r.roleAttributes);
      return {
        usages: rows.map((u) => {
          const [sp, erp, serp] = USAGE_SOURCES.map((s) => u.sources[s] ?? []);
          return {
            roleAttribute: u.attribute,
            servicePolicies: sp.length,
            edgeRouterPolicies: erp.length,
            serviceEdgeRouterPolicies: serp.length,
            servicePolicyIds: r.withIds ? sp : [],
            edgeRouterPolicyIds: r.withIds ? erp : [],
            serviceEdgeRouterPolicyIds: r.withIds ? serp : [],
          };
        }),
      };
    }),
    getRouterDataModel: unary((r: GetRouterDataModelRequest) =>
      rdm.model(
        r.partial
          ? { configTypes: r.configTypeIds, configs: r.configIds, services: r.serviceIds, servicePolicies: r.servicePolicyIds, identities: r.identityIds, postureChecks: r.postureCheckIds }
          : undefined,
      ),
    ),
    ...fabricCalls(terminators),
    listPostureCheckServices: unary(async (r) => ({
      services: (await access.postureCheckServices(r.identityId, r.postureCheckIds)).map((s) => ({ id: s.id, name: s.name, postureCheckIds: s.postureCheckIds })),
    })),
    getServiceAccess: unary(async (r): Promise<ServiceAccess> => {
      const a = await access.serviceAccess(r.identityId, r.serviceId);
      return {
        visible: a.visible,
        serviceName: a.serviceName,
        permissions: a.permissions,
        policies: a.policies.map((p) => ({ policyId: p.policyId, policyType: p.type, postureCheckIds: p.postureCheckIds })),
        edgeRouters: r.withoutLiveState ? storedEdgeRouterRefs(a.edgeRouters) : await liveEdgeRouterRefs(routerStates, a.edgeRouters),
      };
    }),
  };
}
