import { MaintenanceServiceClient } from '@ziti/proto';
import { grpcClient } from '@ziti/service-kit';
import type { UpstreamOwner } from '../service.js';

/** A context's MaintenanceService, by the context's name. */
export interface MaintenanceClient {
  owner: UpstreamOwner;
  client: MaintenanceServiceClient;
}

/** The order contexts are asked in (and written to a snapshot in). */
export const CONTEXT_ORDER: readonly UpstreamOwner[] = ['identity-auth', 'pki-enrollment', 'policy', 'session', 'posture', 'fabric'];

/** One MaintenanceService client per context with a gRPC address; `close()` ends them all. */
export function maintenanceClients(contextGrpc: Partial<Record<UpstreamOwner, string>>): { clients: MaintenanceClient[]; close(): void } {
  const owners = (Object.keys(contextGrpc) as UpstreamOwner[])
    .filter((o) => contextGrpc[o])
    .sort((a, b) => rank(a) - rank(b));
  const clients = owners.map((owner) => ({ owner, client: grpcClient(MaintenanceServiceClient, contextGrpc[owner]!, 'gateway', owner) }));
  return { clients, close: () => clients.forEach((c) => c.client.close()) };
}

function rank(owner: UpstreamOwner): number {
  const i = CONTEXT_ORDER.indexOf(owner);
  return i < 0 ? CONTEXT_ORDER.length : i;
}
