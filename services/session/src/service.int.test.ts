import { credentials } from '@grpc/grpc-js';
import { createInProcessBus, createMemoryCache } from '@ziti/messaging';
import { HealthServiceClient, type HealthCheckResponse } from '@ziti/proto';
import { createTestDatabase, testInfra, type TestDatabase } from '@ziti/test-kit';
import { Client } from 'pg';
import { SCHEMA, SERVICE_NAME, runMigrations, startService } from './index.js';

describe(`${SERVICE_NAME} service`, () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase((await testInfra()).databaseUrl);
  });
  afterAll(() => db?.drop());

  it('migrates its schema once: the outbox table exists and a second run applies nothing', async () => {
    expect(await runMigrations(db.url)).toEqual(expect.arrayContaining(['20261121000000_init']));
    const pg = new Client({ connectionString: db.url });
    await pg.connect();
    try {
      const { rows } = await pg.query('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [SCHEMA]);
      expect(rows.map((r) => r.table_name)).toEqual(expect.arrayContaining(['outbox_events', '_prisma_migrations']));
    } finally {
      await pg.end();
    }
    expect(await runMigrations(db.url)).toEqual([]);
  });

  it('serves health, readiness, the 404 envelope and gRPC health, then stops', async () => {
    const bus = createInProcessBus();
    const cache = createMemoryCache();
    const service = await startService({
      databaseUrl: db.url,
      bus,
      cache,
      internalSecret: 'test-secret',
      http: { host: '127.0.0.1', port: 0 },
      grpc: { host: '127.0.0.1', port: 0 },
    });
    try {
      expect((await fetch(`${service.httpUrl}/healthz`)).status).toBe(200);
      const ready = await fetch(`${service.httpUrl}/readyz`);
      expect([ready.status, await ready.json()]).toEqual([200, { service: SERVICE_NAME, ready: true }]);
      const missing = await fetch(`${service.httpUrl}/edge/management/v1/no-such-thing`);
      expect(missing.status).toBe(404);
      expect(((await missing.json()) as any).error).toMatchObject({ code: 'NOT_FOUND' });

      const client = new HealthServiceClient(service.grpcAddress, credentials.createInsecure());
      const health = await new Promise<HealthCheckResponse>((resolve, reject) =>
        client.check({}, (err, res) => (err ? reject(err) : resolve(res))),
      );
      client.close();
      expect(health).toEqual({ service: SERVICE_NAME, ready: true });
    } finally {
      await service.stop();
      await bus.close();
      await cache.close();
    }
  });
});
