import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import {
  type CheckIntegrityRequest,
  type CheckProjectionRequest,
  type ExistingIdsRequest,
  type ExistingIdsResponse,
  type IntegrityFindings,
  IntegrityServiceClient,
  type ListProjectionSourcesRequest,
  type ListProjectionSourcesResponse,
  type ListReferencesRequest,
  type ListReferencesResponse,
  type RepairReferencesRequest,
} from '@ziti/proto';
import { type IntegrityHandlers, grpcClient } from '@ziti/service-kit';
import type { UpstreamOwner } from '../service.js';

/** A context's `IntegrityService`, as promises (the handlers a context implements, over gRPC). */
export type IntegrityPeer = IntegrityHandlers & { close(): void };

/** A failed call: the gRPC status and its details. */
export class PeerError extends Error {
  constructor(
    readonly code: number,
    details: string,
  ) {
    super(`${status[code] ?? code}: ${details}`);
  }

  get unimplemented(): boolean {
    return this.code === status.UNIMPLEMENTED;
  }
}

/** A fix may rebuild large tables: each call gets this long. */
const DEADLINE_MS = 300_000;

type Callback<Res> = (err: ServiceError | null, res?: Res) => void;
type Method<Req, Res> = (req: Req, md: Metadata, opts: { deadline: number }, cb: Callback<Res>) => unknown;

/** An `IntegrityService` client for a context's gRPC address (direct in the same process). */
export function grpcIntegrityPeer(address: string, owner: UpstreamOwner): IntegrityPeer {
  const client = grpcClient(IntegrityServiceClient, address, 'gateway', owner);
  const call =
    <Req, Res>(method: Method<Req, Res>) =>
    (req: Req): Promise<Res> =>
      new Promise((resolve, reject) => {
        method.call(client, req, new Metadata(), { deadline: Date.now() + DEADLINE_MS }, (err, res) => {
          if (err) return reject(new PeerError(err.code, err.details));
          resolve(res as Res);
        });
      });
  return {
    checkIntegrity: call(client.checkIntegrity as Method<CheckIntegrityRequest, IntegrityFindings>),
    listReferences: call(client.listReferences as Method<ListReferencesRequest, ListReferencesResponse>),
    existingIds: call(client.existingIds as Method<ExistingIdsRequest, ExistingIdsResponse>),
    repairReferences: call(client.repairReferences as Method<RepairReferencesRequest, IntegrityFindings>),
    listProjectionSources: call(client.listProjectionSources as Method<ListProjectionSourcesRequest, ListProjectionSourcesResponse>),
    checkProjection: call(client.checkProjection as Method<CheckProjectionRequest, IntegrityFindings>),
    close: () => client.close(),
  };
}
