import { type ServiceError, status } from '@grpc/grpc-js';
import { createSchemaPool } from '@ziti/db-kit';
import { createInProcessBus, createMemoryCache } from '@ziti/messaging';
import { type GetSessionsResponse, SessionServiceClient } from '@ziti/proto';
import { type ContextName, internalChannelCredentials, internalRpc } from '@ziti/service-kit';
import { type TestDatabase, createTestDatabase, testInfra } from '@ziti/test-kit';
import type { Pool } from 'pg';
import type { Session } from './domain/model.js';
import { SCHEMA, runMigrations, startService } from './index.js';
import type { RunningService } from './service.js';
import { SessionRepository } from './store/session-repo.js';

/** `SessionService.GetSessions` over gRPC, as the fabric context calls it, on a real database. */
describe('SessionService.GetSessions', () => {
  let db: TestDatabase;
  let pool: Pool;
  let service: RunningService;
  let fabric: ReturnType<typeof internalRpc<SessionServiceClient>>;
  const bus = createInProcessBus();
  const cache = createMemoryCache();

  const session = (id: string, type: 'Dial' | 'Bind', apiSessionId = 'as-1'): Session => ({
    id, token: `jwt-${id}`, apiSessionId, identityId: 'ident-1', serviceId: `svc-${id}`, serviceName: 'svc', type, tags: {},
    edgeRouters: [], servicePolicyIds: [], postureCheckIds: [], createdAt: new Date(), updatedAt: new Date(),
  });

  beforeAll(async () => {
    db = await createTestDatabase((await testInfra()).databaseUrl, 'session');
    await runMigrations(db.url);
    pool = createSchemaPool(db.url, SCHEMA, { max: 2 });
    service = await startService({
      databaseUrl: db.url, bus, cache, internalSecret: 'session-grpc-test-secret', http: { host: '127.0.0.1', port: 0 }, grpc: { host: '127.0.0.1', port: 0 }, log: () => undefined,
    });
    fabric = internalRpc(SessionServiceClient, service.grpcAddress, 'session');
    const repo = new SessionRepository(pool);
    await repo.insertMany([session('s-dial', 'Dial'), session('s-bind', 'Bind', 'as-2')]);
  });
  afterAll(async () => {
    fabric?.close();
    await service?.stop();
    await pool?.end();
    await bus.close();
    await cache.close();
    await db?.drop();
  });

  it('answers the sessions that exist, leaving unknown ids out', async () => {
    const res = await fabric.call<GetSessionsResponse>('getSessions', { ids: ['s-bind', 'nope', 's-dial', 's-dial', ''] });
    expect(res.sessions).toEqual([
      { id: 's-bind', apiSessionId: 'as-2', identityId: 'ident-1', serviceId: 'svc-s-bind', type: 'Bind' },
      { id: 's-dial', apiSessionId: 'as-1', identityId: 'ident-1', serviceId: 'svc-s-dial', type: 'Dial' },
    ]);
    expect((await fabric.call<GetSessionsResponse>('getSessions', { ids: [] })).sessions).toEqual([]);
    expect((await fabric.call<GetSessionsResponse>('getSessions', { ids: ['a\u0000b', 'x'.repeat(5000)] })).sessions).toEqual([]);
  });

  it('refuses more than 1000 ids with INVALID_ARGUMENT; 1000 are fine', async () => {
    const ids = Array.from({ length: 1000 }, (_, i) => `id-${i}`);
    expect((await fabric.call<GetSessionsResponse>('getSessions', { ids: [...ids, 's-dial'].slice(1) })).sessions.map((s) => s.id)).toEqual(['s-dial']);
    await expect(fabric.call('getSessions', { ids: [...ids, 'one-more'] })).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
  });

  it('is for the fabric context only', async () => {
    for (const caller of ['gateway', 'policy', 'identity-auth', 'pki-enrollment', 'posture'] as ContextName[]) {
      const client = new SessionServiceClient(service.grpcAddress, internalChannelCredentials(caller, 'session'));
      try {
        const err = await new Promise<ServiceError | null>((resolve) => client.getSessions({ ids: ['s-dial'] }, (e) => resolve(e)));
        expect(err?.code).toBe(status.PERMISSION_DENIED);
      } finally {
        client.close();
      }
    }
  });
});
