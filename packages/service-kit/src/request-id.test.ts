import { Metadata, type ServiceError, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { configureLogging, currentRequestId, logger, runWithRequest } from '@ziti/log';
import { HealthServiceClient, type HealthServiceServer, HealthServiceService } from '@ziti/proto';
import { REQUEST_ID_METADATA, grpcClient, internalChannelCredentials, startGrpcServer } from './index.js';

/** A health service recording the request id its handler runs under and logging one line. */
function recording(seen: (string | undefined)[]) {
  const impl: HealthServiceServer = {
    check: (_call, cb) => {
      seen.push(currentRequestId());
      logger('demo').info('checking');
      cb(null, { service: 'demo', ready: true });
    },
  };
  return { definition: HealthServiceService, implementation: impl as unknown as UntypedServiceImplementation };
}

type Client = InstanceType<typeof HealthServiceClient>;
const check = (client: Client, metadata?: Metadata) =>
  new Promise<void>((res, rej) => {
    const done = (err: ServiceError | null) => (err ? rej(err) : res());
    if (metadata) client.check({}, metadata, done);
    else client.check({}, done);
  });

describe('the request id across gRPC', () => {
  let lines: Record<string, unknown>[];
  // Clients and servers of the test, closed after it whatever its outcome.
  const closers: (() => unknown)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });
  beforeEach(() => {
    lines = [];
    configureLogging({ level: 'debug', format: 'json', destination: { write: (l: string) => lines.push(JSON.parse(l)) } });
  });

  it('goes with a call to a server of this process, which serves and logs under it', async () => {
    const seen: (string | undefined)[] = [];
    const grpc = await startGrpcServer('127.0.0.1', 0, [recording(seen)], 'policy');
    const client = grpcClient(HealthServiceClient, grpc.address, 'gateway', 'policy');
    closers.push(() => client.close(), () => grpc.stop());
    const mine = new Metadata();
    mine.set('other', 'kept');
    await runWithRequest({ requestId: 'req-In.1' }, () => check(client, mine));
    await check(client);
    expect(seen).toEqual(['req-In.1', undefined]);
    // The caller's metadata is left as it was.
    expect(mine.get(REQUEST_ID_METADATA)).toEqual([]);
    const handled = lines.filter((l) => l.msg === 'grpc call handled');
    expect(handled).toHaveLength(2);
    expect(handled[0]).toMatchObject({ level: 'debug', context: 'policy', requestId: 'req-In.1', grpcMethod: HealthServiceService.check.path, grpcCode: 0 });
    expect(handled[1]).not.toHaveProperty('requestId');
    expect(lines.find((l) => l.msg === 'checking')).toMatchObject({ context: 'demo', requestId: 'req-In.1' });
  });

  it('goes over the network as x-request-id metadata', async () => {
    process.env.ZITI_IN_PROCESS = 'off';
    try {
      const seen: (string | undefined)[] = [];
      const grpc = await startGrpcServer('127.0.0.1', 0, [recording(seen)], 'policy');
      const client = grpcClient(HealthServiceClient, grpc.address, 'gateway', 'policy');
      closers.push(() => client.close(), () => grpc.stop());
      await runWithRequest({ requestId: 'req-Net-2' }, () => check(client));
      expect(seen).toEqual(['req-Net-2']);
      expect(lines.find((l) => l.msg === 'checking')).toMatchObject({ requestId: 'req-Net-2' });
    } finally {
      delete process.env.ZITI_IN_PROCESS;
    }
  });

  it('ignores a request id that is not a plain short token', async () => {
    process.env.ZITI_IN_PROCESS = 'off';
    try {
      const seen: (string | undefined)[] = [];
      const grpc = await startGrpcServer('127.0.0.1', 0, [recording(seen)], 'policy');
      // A plain generated client: what any peer could send.
      const raw = new HealthServiceClient(grpc.address, internalChannelCredentials('gateway', 'policy'));
      closers.push(() => raw.close(), () => grpc.stop());
      for (const bad of ['has space', 'x'.repeat(65), 'quote"']) {
        const md = new Metadata();
        md.set(REQUEST_ID_METADATA, bad);
        await check(raw, md);
      }
      expect(seen).toEqual([undefined, undefined, undefined]);
    } finally {
      delete process.env.ZITI_IN_PROCESS;
    }
  });
});
