import { type DumpSchemaChunk, type HealthCheckResponse, HealthServiceClient, MaintenanceServiceClient } from '@ziti/proto';
import { Client } from 'pg';
import { createTestDatabase, type TestDatabase } from './database.js';
import { testInfra } from './infra.js';

/** What the shared shape test needs from a context. */
export interface ServiceShapeSubject {
  name: string;
  /**
   * How a test reaches the context's internal listeners (the gateway's identity for HTTP, each
   * method's caller for gRPC): `@ziti/service-kit`'s `internalFetch` and `internalTestClient`.
   */
  internal: {
    fetch(url: string): Promise<Response>;
    client<C>(Ctor: { new (address: string, ...rest: never[]): C; service: object }, address: string): C;
  };
  schema: string;
  runMigrations(databaseUrl: string): Promise<string[]>;
  /** Every migration, in the order the first run applies them. */
  migrations: readonly string[];
  /** Tables the schema must hold after migrating (besides `outbox_events` and `_prisma_migrations`). */
  tables?: readonly string[];
  /** Starts the context on ephemeral ports; `stop` also releases whatever the caller built for it. */
  start(databaseUrl: string): Promise<{ httpUrl: string; grpcAddress: string; stop(): Promise<void> }>;
}

/**
 * The behaviour every context shares (CODE_STYLE "one service, one shape"), as one jest suite:
 * migrations apply once into the context's own schema, and a started service answers `/healthz`,
 * `/readyz`, the 404 envelope and gRPC health, then stops; and it serves the MaintenanceService
 * (entity counts, a dump of its schema). Call it from a `*.int.test.ts` file.
 */
export function describeServiceShape(subject: ServiceShapeSubject): void {
  describe(`${subject.name} service`, () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase((await testInfra()).databaseUrl);
    });
    afterAll(() => db?.drop());

    it('migrates its schema once: its tables exist and a second run applies nothing', async () => {
      expect(await subject.runMigrations(db.url)).toEqual([...subject.migrations]);
      const pg = new Client({ connectionString: db.url });
      await pg.connect();
      try {
        const { rows } = await pg.query('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [subject.schema]);
        expect(rows.map((r) => r.table_name)).toEqual(
          expect.arrayContaining(['outbox_events', '_prisma_migrations', ...(subject.tables ?? [])]),
        );
      } finally {
        await pg.end();
      }
      expect(await subject.runMigrations(db.url)).toEqual([]);
    });

    it('serves health, readiness, the 404 envelope and gRPC health, then stops', async () => {
      const service = await subject.start(db.url);
      try {
        expect((await subject.internal.fetch(`${service.httpUrl}/healthz`)).status).toBe(200);
        const ready = await subject.internal.fetch(`${service.httpUrl}/readyz`);
        expect([ready.status, await ready.json()]).toEqual([200, { service: subject.name, ready: true }]);
        const missing = await subject.internal.fetch(`${service.httpUrl}/edge/management/v1/no-such-thing`);
        expect(missing.status).toBe(404);
        expect(((await missing.json()) as { error: unknown }).error).toMatchObject({ code: 'NOT_FOUND' });

        const client = subject.internal.client(HealthServiceClient, service.grpcAddress);
        const health = await new Promise<HealthCheckResponse>((resolve, reject) =>
          client.check({}, (err, res) => (err ? reject(err) : resolve(res))),
        );
        client.close();
        expect(health).toEqual({ service: subject.name, ready: true });
      } finally {
        await service.stop();
      }
    });

    it('serves the MaintenanceService: entity counts and a dump of its own schema', async () => {
      const service = await subject.start(db.url);
      const client = subject.internal.client(MaintenanceServiceClient, service.grpcAddress);
      try {
        const { counts } = await new Promise<{ counts: Record<string, number> }>((resolve, reject) =>
          client.countEntities({}, (err, res) => (err ? reject(err) : resolve(res))),
        );
        expect(Object.keys(counts).length).toBeGreaterThan(0);
        for (const n of Object.values(counts)) expect(Number.isInteger(n) && n >= 0).toBe(true);
        const lines: string[] = [];
        await new Promise<void>((resolve, reject) => {
          const stream = client.dumpSchema({ snapshotId: '' });
          stream.on('data', (chunk: DumpSchemaChunk) => lines.push(...chunk.lines));
          stream.on('error', reject);
          stream.on('end', resolve);
        });
        expect(JSON.parse(lines[0]!)).toEqual(['context', { name: subject.name, schema: subject.schema, migrations: [...subject.migrations] }]);
        expect(JSON.parse(lines.at(-1)!)).toEqual(['end-context', { name: subject.name, rows: lines.filter((l) => l.startsWith('{')).length }]);
      } finally {
        client.close();
        await service.stop();
      }
    });
  });
}
