import type { ServerWritableStream, UntypedServiceImplementation } from '@grpc/grpc-js';
import { once } from 'node:events';
import { toGrpcError } from '@ziti/errors';
import {
  type DumpSchemaChunk,
  type DumpSchemaRequest,
  type HoldSnapshotEvent,
  type HoldSnapshotRequest,
  MaintenanceServiceService,
  type MaintenanceServiceServer,
} from '@ziti/proto';
import type { GrpcServiceBinding } from './grpc.js';

/** What a context's MaintenanceService answers from (`@ziti/db-kit` has the SQL side of each). */
export interface MaintenancePort {
  /** Entity type name (OpenZiti's store name) → count. */
  countEntities(): Promise<Record<string, number>>;
  /** Exports a snapshot and holds its transaction for at most `holdMs`. */
  holdSnapshot(holdMs: number): Promise<{ id: string; release(): Promise<void>; released: Promise<void> }>;
  /** This context's lines of a snapshot file, in chunks, in the exported snapshot `snapshotId` ('' = its own). */
  dumpSchema(snapshotId: string): AsyncIterable<string[]>;
}

/** Longest hold of an exported snapshot a caller may ask for. */
export const MAX_HOLD_SECONDS = 600;

async function writeAll<T>(call: ServerWritableStream<unknown, T>, message: T): Promise<void> {
  if (!call.write(message)) await once(call, 'drain');
}

/**
 * The MaintenanceService every context serves (`proto/ziti/v1/maintenance.proto`): counts for
 * `GET /summary`, and the two streaming calls of a database snapshot. `HoldSnapshot` keeps the
 * exporting transaction exactly as long as its call: it ends when the caller cancels (or goes
 * away) or the hold time passes.
 */
export function maintenanceService(port: MaintenancePort, log: (m: string) => void = () => undefined): GrpcServiceBinding {
  const impl: MaintenanceServiceServer = {
    countEntities: (_call, callback) => {
      port.countEntities().then(
        (counts) => callback(null, { counts }),
        (err: unknown) => callback(toGrpcError(err)),
      );
    },
    holdSnapshot: (call: ServerWritableStream<HoldSnapshotRequest, HoldSnapshotEvent>) => {
      const seconds = Math.min(Math.max(call.request.holdSeconds || 60, 1), MAX_HOLD_SECONDS);
      port.holdSnapshot(seconds * 1000).then(
        (held) => {
          if (call.cancelled) return void held.release();
          call.on('cancelled', () => void held.release());
          call.on('error', () => void held.release());
          held.released.then(() => call.end());
          call.write({ snapshotId: held.id });
        },
        (err: unknown) => {
          log(`maintenance: exporting a snapshot failed: ${(err as Error).message}`);
          call.emit('error', toGrpcError(err));
        },
      );
    },
    dumpSchema: (call: ServerWritableStream<DumpSchemaRequest, DumpSchemaChunk>) => {
      void (async () => {
        const chunks = port.dumpSchema(call.request.snapshotId)[Symbol.asyncIterator]();
        try {
          for (;;) {
            if (call.cancelled) {
              await chunks.return?.();
              return;
            }
            const next = await chunks.next();
            if (next.done) break;
            await writeAll(call, { lines: next.value });
          }
          call.end();
        } catch (err) {
          await chunks.return?.().catch(() => undefined);
          log(`maintenance: dumping the schema failed: ${(err as Error).message}`);
          call.emit('error', toGrpcError(err));
        }
      })();
    },
  };
  return { definition: MaintenanceServiceService, implementation: impl as unknown as UntypedServiceImplementation };
}
