import { Metadata } from '@grpc/grpc-js';
import { dataEnvelope, fromGrpcError } from '@ziti/errors';
import type { LocalHandler } from '../http/informational.js';
import type { MaintenanceClient } from './contexts.js';

/** How long a context may take to count (the proxy's upstream timeout). */
const COUNT_DEADLINE_MS = 10_000;

/**
 * `GET /summary` (management, admin): every context's entity counts (`CountEntities`), merged,
 * plus `controllers` (this deployment's one controller, as `/controllers` lists it). As OpenZiti's
 * `GetEntityCounts`, the keys are the store names and `routers.edge` counts the edge routers.
 * A context that does not answer fails the whole answer (503 `TIMEOUT`, as a proxied request to
 * a context that is down): partial counts would read as zeros in a console.
 */
export function summaryHandler(clients: readonly MaintenanceClient[]): LocalHandler {
  return async () => ({ body: dataEnvelope(await countEntities(clients)) });
}

/** Every context's counts merged, keys sorted (also the `entityCount` event records). */
export async function countEntities(clients: readonly MaintenanceClient[]): Promise<Record<string, number>> {
  const parts = await Promise.all(
    clients.map(
      ({ client }) =>
        new Promise<Record<string, number>>((resolve, reject) => {
          client.countEntities({}, new Metadata(), { deadline: Date.now() + COUNT_DEADLINE_MS }, (err, res) =>
            err ? reject(fromGrpcError(err)) : resolve(res.counts),
          );
        }),
    ),
  );
  const counts: Record<string, number> = { controllers: 1 };
  for (const part of parts) for (const [k, v] of Object.entries(part)) counts[k] = Number(v);
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
