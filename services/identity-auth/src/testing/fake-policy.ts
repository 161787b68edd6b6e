// A stand-in for the policy context's gRPC service: records SyncIdentity calls and answers
// GetRoleAttributeUsage from a table (or not at all: every other RPC is UNIMPLEMENTED).
import { type ServiceError, type UntypedServiceImplementation, status } from '@grpc/grpc-js';
import { PolicyServiceService, type RoleAttributeUsage, type SyncIdentityRequest } from '@ziti/proto';
import { type GrpcListener, startGrpcServer } from '@ziti/service-kit';

export interface FakePolicy {
  address: string;
  syncs: SyncIdentityRequest[];
  /** Usages by attribute; `null` = answer UNIMPLEMENTED. */
  usages: RoleAttributeUsage[] | null;
  /** When set, SyncIdentity fails with UNAVAILABLE. */
  failSync: boolean;
  stop(): Promise<void>;
}

const unimplemented = (_call: unknown, cb: (err: Partial<ServiceError>) => void) => cb({ code: status.UNIMPLEMENTED, details: 'fake' });

export async function startFakePolicy(): Promise<FakePolicy> {
  const fake = { syncs: [] as SyncIdentityRequest[], usages: [] as RoleAttributeUsage[] | null, failSync: false };
  const impl: Record<string, unknown> = {};
  for (const name of Object.keys(PolicyServiceService)) impl[name] = unimplemented;
  impl.syncIdentity = (call: { request: SyncIdentityRequest }, cb: (err: Partial<ServiceError> | null, res?: object) => void) => {
    if (fake.failSync) return cb({ code: status.UNAVAILABLE, details: 'down' });
    fake.syncs.push(call.request);
    cb(null, {});
  };
  impl.getRoleAttributeUsage = (
    call: { request: { roleAttributes: string[]; withIds: boolean } },
    cb: (err: Partial<ServiceError> | null, res?: object) => void,
  ) => {
    if (fake.usages === null) return cb({ code: status.UNIMPLEMENTED, details: 'fake' });
    const wanted = call.request.roleAttributes;
    const usages = fake.usages
      .filter((u) => wanted.length === 0 || wanted.includes(u.roleAttribute))
      .map((u) => (call.request.withIds ? u : { ...u, servicePolicyIds: [], edgeRouterPolicyIds: [], serviceEdgeRouterPolicyIds: [] }));
    cb(null, { usages });
  };
  const server: GrpcListener = await startGrpcServer('127.0.0.1', 0, [
    { definition: PolicyServiceService, implementation: impl as UntypedServiceImplementation },
  ], 'policy');
  return Object.assign(fake, { address: server.address, stop: () => server.stop() });
}
