// A stand-in for the fabric context's gRPC service: answers GetIdentityConnections from a set (or
// with UNIMPLEMENTED), and counts the calls.
import { type ServiceError, type UntypedServiceImplementation, status } from '@grpc/grpc-js';
import { FabricServiceService, type GetIdentityConnectionsRequest } from '@ziti/proto';
import { type GrpcListener, startGrpcServer } from '@ziti/service-kit';

export interface FakeFabric {
  address: string;
  /** Identities an edge router reported connected; `null` = answer UNIMPLEMENTED. */
  connected: Set<string> | null;
  calls: GetIdentityConnectionsRequest[];
  stop(): Promise<void>;
}

export async function startFakeFabric(): Promise<FakeFabric> {
  const fake = { connected: new Set<string>() as Set<string> | null, calls: [] as GetIdentityConnectionsRequest[] };
  const impl: Record<string, unknown> = {};
  for (const name of Object.keys(FabricServiceService)) impl[name] = (_c: unknown, cb: (e: Partial<ServiceError>) => void) => cb({ code: status.UNIMPLEMENTED, details: 'fake' });
  impl.getIdentityConnections = (call: { request: GetIdentityConnectionsRequest }, cb: (e: Partial<ServiceError> | null, r?: object) => void) => {
    fake.calls.push(call.request);
    if (fake.connected === null) return cb({ code: status.UNIMPLEMENTED, details: 'fake' });
    cb(null, { connectedIdentityIds: call.request.identityIds.filter((id) => fake.connected!.has(id)) });
  };
  const server: GrpcListener = await startGrpcServer('127.0.0.1', 0, [{ definition: FabricServiceService, implementation: impl as UntypedServiceImplementation }], 'fabric');
  return Object.assign(fake, { address: server.address, stop: () => server.stop() });
}
