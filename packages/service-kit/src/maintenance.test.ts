import type { ClientReadableStream } from '@grpc/grpc-js';
import { ApiError, fromGrpcError } from '@ziti/errors';
import { MaintenanceServiceClient } from '@ziti/proto';
import { type MaintenancePort, grpcClient, maintenanceService, startGrpcServer } from './index.js';

function readAll<T>(stream: ClientReadableStream<T>): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const out: T[] = [];
    stream.on('data', (m: T) => out.push(m));
    stream.on('error', reject);
    stream.on('end', () => resolve(out));
  });
}

describe('maintenanceService', () => {
  const events: string[] = [];
  let releasedAfter: number | undefined;
  const port: MaintenancePort = {
    countEntities: async () => ({ identities: 3, 'routers.edge': 1 }),
    async holdSnapshot(holdMs) {
      releasedAfter = holdMs;
      let done!: () => void;
      const released = new Promise<void>((r) => (done = r));
      const timer = setTimeout(() => release(), holdMs);
      const release = async () => {
        clearTimeout(timer);
        events.push('released');
        done();
      };
      return { id: '00000003-0000001B-1', release, released };
    },
    async *dumpSchema(snapshotId) {
      if (snapshotId === 'bad') throw ApiError.of('UNHANDLED', { cause: { code: 'UNHANDLED', message: 'no such snapshot' } });
      yield ['["context",{}]', `{"id":"${snapshotId}"}`];
      yield ['["end-context",{}]'];
    },
  };

  it('answers the counts, the snapshot hold (until cancelled) and the dump over the network', async () => {
    const grpc = await startGrpcServer('127.0.0.1', 0, [maintenanceService(port)], 'policy');
    // grpcClient: unary calls may be in-process; the streaming ones use the network.
    const client = grpcClient(MaintenanceServiceClient, grpc.address, 'gateway', 'policy');
    try {
      const counts = await new Promise((res, rej) => client.countEntities({}, (err, r) => (err ? rej(err) : res(r))));
      expect(counts).toEqual({ counts: { identities: 3, 'routers.edge': 1 } });

      const hold = client.holdSnapshot({ holdSeconds: 5000 });
      const first = await new Promise<{ snapshotId: string }>((res, rej) => {
        hold.once('data', res);
        hold.once('error', rej);
      });
      expect(first.snapshotId).toBe('00000003-0000001B-1');
      expect(releasedAfter).toBe(600_000);
      expect(events).toEqual([]);
      hold.on('error', () => undefined);
      hold.cancel();
      for (let i = 0; i < 100 && events.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(events).toEqual(['released']);

      const brief = await readAll(client.holdSnapshot({ holdSeconds: 1 }));
      expect(brief).toEqual([{ snapshotId: '00000003-0000001B-1' }]);

      const chunks = await readAll(client.dumpSchema({ snapshotId: 'abc' }));
      expect(chunks.flatMap((c) => c.lines)).toEqual(['["context",{}]', '{"id":"abc"}', '["end-context",{}]']);
      const failed = await readAll(client.dumpSchema({ snapshotId: 'bad' })).catch((err: unknown) => fromGrpcError(err));
      expect(failed).toBeInstanceOf(ApiError);
      expect((failed as ApiError).cause?.message).toBe('no such snapshot');
    } finally {
      (client as unknown as { close(): void }).close();
      await grpc.stop();
    }
  });
});
