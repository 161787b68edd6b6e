import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { formatTimestamp } from '@ziti/errors';
import { type GetRoleAttributeUsageResponse, PolicyServiceClient, type SyncIdentityRequest } from '@ziti/proto';
import type { IdentityProjection, PolicyContext, PolicyUsage } from '../domain/ports.js';
import { grpcClient } from '@ziti/service-kit';

/** The policy context's gRPC address, or a function giving it once known (all-in-one start). */
export type PolicyAddress = string | (() => string | undefined) | undefined;

const DEADLINE_MS = 3000;

/**
 * `PolicyContext` over `ziti.v1.PolicyService`. Without an address every call is skipped
 * (syncIdentity false, roleAttributeUsage null); failures are logged, never thrown: the identity
 * events of the outbox converge the projection, and usage counts fall back to 0.
 */
/** The `SyncIdentity` request of an identity's projection (also the integrity check's projection source). */
export function syncIdentityRequest(p: IdentityProjection, deleted: boolean): SyncIdentityRequest {
  return {
    identityId: p.id,
    name: p.name,
    roleAttributes: p.roleAttributes,
    deleted,
    isAdmin: p.isAdmin,
    disabled: p.disabled,
    updatedAt: formatTimestamp(p.updatedAt),
    typeId: p.typeId,
    isDefaultAdmin: p.isDefaultAdmin,
    externalId: p.externalId ?? '',
    authPolicyId: p.authPolicyId,
    createdAt: formatTimestamp(p.createdAt),
    tagsJson: JSON.stringify(p.tags ?? {}),
    hosting: {
      defaultPrecedence: p.defaultHostingPrecedence,
      defaultCost: p.defaultHostingCost,
      servicePrecedences: p.serviceHostingPrecedences,
      serviceCosts: p.serviceHostingCosts,
    },
    appDataJson: JSON.stringify(p.appData ?? {}),
  };
}

export function grpcPolicyContext(address: PolicyAddress, log: (m: string) => void): PolicyContext & { close(): void } {
  let client: PolicyServiceClient | undefined;
  let clientAddress: string | undefined;
  const current = (): PolicyServiceClient | undefined => {
    const addr = typeof address === 'function' ? address() : address;
    if (!addr) return undefined;
    if (!client || clientAddress !== addr) {
      client?.close();
      client = grpcClient(PolicyServiceClient, addr, 'identity-auth');
      clientAddress = addr;
    }
    return client;
  };
  const deadline = () => ({ deadline: Date.now() + DEADLINE_MS });

  return {
    async syncIdentity(p: IdentityProjection, deleted: boolean): Promise<boolean> {
      const c = current();
      if (!c) return false;
      const request = syncIdentityRequest(p, deleted);
      return new Promise((resolve) => {
        c.syncIdentity(request, new Metadata(), deadline(), (err: ServiceError | null) => {
          if (err) log(`identity-auth: SyncIdentity(${p.id}) failed, the identity event will converge it: ${err.code} ${err.details}`);
          resolve(!err);
        });
      });
    },

    async roleAttributeUsage(attributes: string[], withIds: boolean): Promise<Map<string, PolicyUsage> | null> {
      const c = current();
      if (!c) return null;
      const res = await new Promise<GetRoleAttributeUsageResponse | null>((resolve) => {
        c.getRoleAttributeUsage({ entityType: 'identity', roleAttributes: attributes, withIds }, new Metadata(), deadline(), (err, r) => {
          if (err && err.code !== status.UNIMPLEMENTED && err.code !== status.UNAVAILABLE) {
            log(`identity-auth: GetRoleAttributeUsage failed, policy counts answer 0: ${err.code} ${err.details}`);
          }
          resolve(err ? null : (r ?? null));
        });
      });
      if (!res) return null;
      return new Map(
        res.usages.map((u) => [
          u.roleAttribute,
          withIds
            ? { servicePolicies: [...u.servicePolicyIds], edgeRouterPolicies: [...u.edgeRouterPolicyIds] }
            : { servicePolicies: Number(u.servicePolicies), edgeRouterPolicies: Number(u.edgeRouterPolicies) },
        ]),
      );
    },

    close() {
      client?.close();
      client = undefined;
    },
  };
}
