import type { ClientReadableStream } from '@grpc/grpc-js';
import { join } from 'node:path';
import { createSnapshotFile } from '@ziti/db-kit';
import { ApiError, emptyEnvelope, fromGrpcError } from '@ziti/errors';
import type { Cache } from '@ziti/messaging';
import type { DumpSchemaChunk, HoldSnapshotEvent } from '@ziti/proto';
import type { LocalHandler } from '../http/informational.js';
import type { UpstreamOwner } from '../service.js';
import { type MaintenanceClient, maintenanceClients } from './contexts.js';

export interface SnapshotterDeps {
  /** Every context's gRPC `host:port` (`GatewayDeps.contextGrpc`); each one's schema is in the snapshot. */
  contextGrpc: Partial<Record<UpstreamOwner, string>>;
  /** Where snapshot files go: `ZITI_SNAPSHOT_DIR`, else `<dataDir>/snapshots`. */
  snapshotDir: string;
  /** How long the exporting transaction may stay open at most (seconds, default 300). */
  holdSeconds?: number;
  log?: (m: string) => void;
}

export interface Snapshotter {
  /**
   * Takes a snapshot of every context's schema in one transaction view and writes it to one file
   * (`<snapshotDir>/ziti-db-YYYYMMDD-HHMMSS.jsonl.gz`). No rate limit: the data integrity fix
   * calls it before it repairs anything; `POST /database/snapshot` adds the once-a-minute limit.
   * Rejects with an ApiError (503 `TIMEOUT` when a context does not answer in time, 503
   * `SERVICE_UNAVAILABLE` when one cannot be reached); no file is left then.
   */
  take(): Promise<{ path: string }>;
  close(): void;
}

/** How long the exporting context may take to export, and each context to import, the snapshot. */
const START_TIMEOUT_MS = 30_000;

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(ApiError.of('TIMEOUT', { cause: { code: 'UNHANDLED', message: `${what} took longer than ${ms} ms` } })), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** The next message of a server stream (or its end), with its error as an ApiError. */
function nextOf<T>(it: AsyncIterator<T>): Promise<IteratorResult<T>> {
  return it.next().catch((err: unknown) => Promise.reject(err instanceof ApiError ? err : fromGrpcError(err)));
}

/**
 * A database snapshot of every context, in one transaction view although the contexts may run
 * as separate processes: the first context (identity-auth) exports a snapshot and holds its
 * transaction (`HoldSnapshot`, a server stream that lives as long as the hold); every context
 * then dumps its schema in a transaction that imports it (`DumpSchema`). Once each dump has
 * started (its first chunk, sent after the import), the hold is released; the dumps are written
 * one after the other into one gzip'd JSON-lines file under a temporary name, renamed when
 * complete. Any failure cancels every stream and removes the unfinished file.
 */
export function createSnapshotter(deps: SnapshotterDeps): Snapshotter {
  const log = deps.log ?? (() => undefined);
  const { clients, close } = maintenanceClients(deps.contextGrpc);
  const holdSeconds = deps.holdSeconds ?? 300;

  async function take(): Promise<{ path: string }> {
    if (clients.length === 0) throw ApiError.of('TIMEOUT', { cause: { code: 'UNHANDLED', message: 'no context gRPC address is configured' } });
    const streams: ClientReadableStream<unknown>[] = [];
    const cancelAll = () => streams.forEach((s) => s.cancel());
    const started = Date.now();
    let file: ReturnType<typeof createSnapshotFile> | undefined;
    try {
      const hold = clients[0]!.client.holdSnapshot({ holdSeconds });
      hold.on('error', () => undefined);
      streams.push(hold);
      const held = await withTimeout(nextOf<HoldSnapshotEvent>(hold[Symbol.asyncIterator]()), START_TIMEOUT_MS, `${clients[0]!.owner}: exporting the snapshot`);
      if (held.done || !held.value.snapshotId) throw ApiError.of('TIMEOUT', { cause: { code: 'UNHANDLED', message: `${clients[0]!.owner} ended the snapshot hold at once` } });
      const snapshotId = held.value.snapshotId;

      const dumps = clients.map((c: MaintenanceClient) => {
        const stream = c.client.dumpSchema({ snapshotId });
        streams.push(stream);
        return { owner: c.owner, it: stream[Symbol.asyncIterator]() as AsyncIterator<DumpSchemaChunk> };
      });
      // Every dump's first chunk comes after its transaction imported the snapshot.
      const firsts = await withTimeout(Promise.all(dumps.map((d) => nextOf(d.it))), START_TIMEOUT_MS, 'importing the snapshot');
      hold.cancel();

      file = createSnapshotFile(deps.snapshotDir, clients.map((c) => c.owner));
      for (const [i, d] of dumps.entries()) {
        for (let next = firsts[i]!; !next.done; next = await nextOf(d.it)) await file.write(next.value.lines);
      }
      const path = await file.finish();
      log(`database snapshot written to ${path} (${Date.now() - started} ms)`);
      return { path };
    } catch (err) {
      cancelAll();
      await file?.abort();
      const apiErr = err instanceof ApiError ? err : ApiError.unhandled(err);
      log(`database snapshot failed: ${apiErr.cause?.message ?? apiErr.message}`);
      throw apiErr;
    }
  }

  return { take, close };
}

/** Where snapshots go when `ZITI_SNAPSHOT_DIR` is not set. */
export function defaultSnapshotDir(dataDir: string): string {
  return join(dataDir, 'snapshots');
}

/** The shared-cache key that allows one snapshot per minute across every gateway replica. */
export const SNAPSHOT_LIMIT_KEY = 'ziti:maintenance:snapshot';
const SNAPSHOT_LIMIT_SECONDS = 60;

/**
 * `POST /database/snapshot` (management, admin): at most one per minute across all gateway
 * replicas (`Cache.setIfAbsent` in the shared cache), else 429 `RATE_LIMITED`; 200 with the empty
 * envelope once the file is written. A snapshot that failed does not use up the minute.
 */
export function snapshotHandler(snapshotter: Snapshotter, cache: Cache, instanceId: string): LocalHandler {
  return async () => {
    if (!(await cache.setIfAbsent(SNAPSHOT_LIMIT_KEY, `${instanceId} ${new Date().toISOString()}`, SNAPSHOT_LIMIT_SECONDS))) {
      throw ApiError.of('RATE_LIMITED');
    }
    try {
      await snapshotter.take();
    } catch (err) {
      await cache.del(SNAPSHOT_LIMIT_KEY).catch(() => undefined);
      throw err;
    }
    return { body: emptyEnvelope() };
  };
}
