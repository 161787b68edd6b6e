import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { formatTimestamp, fromGrpcError } from '@ziti/errors';
import { PolicyServiceClient, type SyncPostureCheckRequest } from '@ziti/proto';
import type { PostureCheck } from '../domain/model.js';
import type { PolicyPort } from '../domain/ports.js';
import { grpcClient } from '@ziti/service-kit';

const DEADLINE_MS = 5000;

/** A gRPC address, or a function giving it once known (the all-in-one controller starts policy first). */
export type Address = string | (() => string | undefined);

/** The policy context over gRPC. Without an address every call fails with UNAVAILABLE. */
/** The `SyncPostureCheck` request of a check (null = deleted); also the integrity check's projection source. */
export function syncPostureCheckRequest(check: PostureCheck | null, id: string, detail?: Record<string, unknown>): SyncPostureCheckRequest {
  return {
    postureCheckId: id,
    name: check?.name ?? '',
    typeId: check?.data.typeId ?? '',
    roleAttributes: check?.roleAttributes ?? [],
    deleted: check === null,
    updatedAt: check ? formatTimestamp(check.updatedAt) : formatTimestamp(new Date()),
    version: check?.version ?? 0,
    createdAt: check ? formatTimestamp(check.createdAt) : '',
    detailJson: detail ? JSON.stringify(detail) : '',
  };
}

export function grpcPolicyPort(address: Address | undefined): PolicyPort & { close(): void } {
  let client: PolicyServiceClient | undefined;
  const get = (): PolicyServiceClient => {
    if (client) return client;
    const addr = typeof address === 'function' ? address() : address;
    if (!addr) throw Object.assign(new Error('policy context address unknown'), { code: status.UNAVAILABLE });
    client = grpcClient(PolicyServiceClient, addr, 'posture');
    return client;
  };
  const call = <Req, Res>(method: (c: PolicyServiceClient) => (req: Req, md: Metadata, opts: { deadline: number }, cb: (err: ServiceError | null, res: Res) => void) => unknown, req: Req) =>
    new Promise<Res>((resolve, reject) => {
      try {
        const c = get();
        method(c).call(c, req, new Metadata(), { deadline: Date.now() + DEADLINE_MS }, (err, res) => (err ? reject(fromGrpcError(err)) : resolve(res)));
      } catch (err) {
        reject(err);
      }
    });

  return {
    async syncPostureCheck(check: PostureCheck | null, id: string, detail?: Record<string, unknown>) {
      await call((c) => c.syncPostureCheck, syncPostureCheckRequest(check, id, detail));
    },
    async attributeUsage(attributes, withIds) {
      const res = await call((c) => c.getRoleAttributeUsage, { entityType: 'posture-check', roleAttributes: [...attributes], withIds });
      return new Map(res.usages.map((u) => [u.roleAttribute, { count: Number(u.servicePolicies), ids: u.servicePolicyIds }]));
    },
    async servicesOfChecks(identityId, checkIds) {
      if (checkIds.length === 0) return [];
      const res = await call((c) => c.listPostureCheckServices, { identityId, postureCheckIds: [...checkIds] });
      return res.services.map((s) => ({ id: s.id, name: s.name, checkIds: s.postureCheckIds }));
    },
    close() {
      client?.close();
    },
  };
}
