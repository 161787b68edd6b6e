import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { ApiError } from '@ziti/errors';
import { IntegrityServiceClient } from '@ziti/proto';
import { Findings, MAX_INTEGRITY_RESULTS, findingsFor, integrityService, internalChannelCredentials, startGrpcServer } from './index.js';

describe('integrity kit', () => {
  it('keeps findings up to the limit and then only says there were more', () => {
    const f = new Findings(2);
    f.add('a', false);
    expect(f.full).toBe(false);
    f.add('b', true);
    f.add('c', true);
    expect(f.toMessage()).toEqual({ results: [{ description: 'a', fixed: false }, { description: 'b', fixed: true }], tooMany: true });
    expect(findingsFor(0).limit).toBe(MAX_INTEGRITY_RESULTS);
    expect(findingsFor(5000).limit).toBe(MAX_INTEGRITY_RESULTS);
    expect(findingsFor(-3).limit).toBe(MAX_INTEGRITY_RESULTS);
    expect(findingsFor(7).limit).toBe(7);
  });

  it('serves the handlers a context has, UNIMPLEMENTED for the rest, and its errors as gRPC errors', async () => {
    const grpc = await startGrpcServer('127.0.0.1', 0, [
      integrityService({
        existingIds: async (req) => ({ ids: req.ids.filter((id) => id !== 'gone') }),
        listReferences: async () => {
          throw ApiError.field('kind', 'unknown kind', 'x');
        },
      }),
    ], 'policy');
    // Over the network, as the gateway (the one caller of IntegrityService).
    const client = new IntegrityServiceClient(grpc.address, internalChannelCredentials('gateway', 'policy'));
    const call = <R>(fn: (cb: (err: ServiceError | null, res?: R) => void) => void) =>
      new Promise<{ err: ServiceError | null; res?: R }>((resolve) => fn((err, res) => resolve({ err, res })));
    try {
      const ok = await call<{ ids: string[] }>((cb) => client.existingIds({ kind: 'identity', ids: ['a', 'gone', 'b'] }, new Metadata(), cb));
      expect(ok.res?.ids).toEqual(['a', 'b']);
      const missing = await call((cb) => client.checkIntegrity({ fix: false, limit: 0 }, new Metadata(), cb));
      expect(missing.err?.code).toBe(status.UNIMPLEMENTED);
      const failed = await call((cb) => client.listReferences({ kind: 'x', after: '', limit: 1 }, new Metadata(), cb));
      expect(failed.err?.code).toBe(status.INVALID_ARGUMENT);
    } finally {
      client.close();
      await grpc.stop();
    }
  });
});
