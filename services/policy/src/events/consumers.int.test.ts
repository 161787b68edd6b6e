import { Metadata } from '@grpc/grpc-js';
import { createInProcessBus, createMemoryCache, newChangeEvent } from '@ziti/messaging';
import { GetRouterDataModelRequest, PolicyServiceClient, type RouterDataModel } from '@ziti/proto';
import { internalTestClient } from '@ziti/service-kit';
import { createTestDatabase, testInfra, type TestDatabase } from '@ziti/test-kit';
import { Client } from 'pg';
import { runMigrations, startService, type RunningService } from '../index.js';

/** The convergence path of the projections: identity-auth and posture events applied by the durable consumers. */
describe('projection consumers', () => {
  let db: TestDatabase;
  let service: RunningService;
  let pg: Client;
  const bus = createInProcessBus();
  const cache = createMemoryCache();

  beforeAll(async () => {
    db = await createTestDatabase((await testInfra()).databaseUrl);
    await runMigrations(db.url);
    service = await startService({ databaseUrl: db.url, bus, cache, internalSecret: 's', http: { host: '127.0.0.1', port: 0 }, grpc: { host: '127.0.0.1', port: 0 } });
    pg = new Client({ connectionString: db.url });
    await pg.connect();
  });
  afterAll(async () => {
    await pg?.end();
    await service?.stop();
    await bus.close();
    await cache.close();
    await db?.drop();
  });

  const row = async (table: string, id: string) => (await pg.query(`SELECT * FROM policy.${table} WHERE id = $1`, [id])).rows[0];
  const until = async <T>(probe: () => Promise<T>, ok: (v: T) => boolean): Promise<T> => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const v = await probe();
      if (ok(v) || Date.now() > deadline) return v;
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  it('applies identity events in updatedAt order and deletes with a tombstone', async () => {
    const data = { identityId: 'dave', name: 'dave', roleAttributes: ['a'], isAdmin: true, disabled: false, updatedAt: '2026-11-22T10:00:00.000Z', typeId: 'Default', tags: { k: 'v' } };
    await bus.publish(newChangeEvent('identity-auth', 'identity.created', data));
    const created = await until(() => row('identities', 'dave'), (r) => !!r);
    expect(created).toMatchObject({ name: 'dave', role_attributes: ['a'], is_admin: true, tags: { k: 'v' } });
    await bus.publish(newChangeEvent('identity-auth', 'identity.updated', { ...data, roleAttributes: ['b'], updatedAt: '2026-11-22T09:00:00.000Z' }));
    await bus.publish(newChangeEvent('identity-auth', 'identity.updated', { ...data, name: 'david', updatedAt: '2026-11-22T11:00:00.000Z' }));
    const renamed = await until(() => row('identities', 'dave'), (r) => r?.name === 'david');
    expect(renamed).toMatchObject({ name: 'david', role_attributes: ['a'] });
    await bus.publish(newChangeEvent('identity-auth', 'identity.deleted', { identityId: 'dave', deleted: true, updatedAt: '2026-11-22T12:00:00.000Z' }));
    expect(await until(() => row('identities', 'dave'), (r) => !r)).toBeUndefined();
  });

  it("keeps an identity's hosting precedences and costs and appData from its events, and the router data model answers them", async () => {
    const data = { identityId: 'hank', name: 'hank', roleAttributes: [], isAdmin: false, disabled: false, updatedAt: '2026-11-22T10:00:00.000Z' };
    const hosting = { defaultHostingPrecedence: 'required', defaultHostingCost: 7, serviceHostingPrecedences: { s1: 'failed' }, serviceHostingCosts: { s1: 40 }, appData: { site: 'lab' } };
    await bus.publish(newChangeEvent('identity-auth', 'identity.created', { ...data, ...hosting }));
    const stored = { default_hosting_precedence: 'required', default_hosting_cost: 7, service_hosting_precedences: { s1: 'failed' }, service_hosting_costs: { s1: 40 }, app_data: { site: 'lab' } };
    expect(await until(() => row('identities', 'hank'), (r) => !!r)).toMatchObject(stored);
    // An older identity-auth's event (no such fields): the stored ones stay.
    await bus.publish(newChangeEvent('identity-auth', 'identity.updated', { ...data, name: 'hank2', updatedAt: '2026-11-22T11:00:00.000Z' }));
    expect(await until(() => row('identities', 'hank'), (r) => r?.name === 'hank2')).toMatchObject(stored);
    // Values that are no precedence or cost are not taken.
    const odd = { defaultHostingPrecedence: 'sometimes', defaultHostingCost: -1, serviceHostingPrecedences: { s1: 'default', s2: 'never' }, serviceHostingCosts: { s1: 1.5, s2: 65535 } };
    await bus.publish(newChangeEvent('identity-auth', 'identity.updated', { ...data, ...odd, name: 'hank3', updatedAt: '2026-11-22T12:00:00.000Z' }));
    expect(await until(() => row('identities', 'hank'), (r) => r?.name === 'hank3')).toMatchObject({
      ...stored,
      service_hosting_precedences: { s1: 'default' },
      service_hosting_costs: { s2: 65535 },
    });
    // A new identity from an event without them: the defaults.
    await bus.publish(newChangeEvent('identity-auth', 'identity.created', { ...data, identityId: 'ivy', name: 'ivy' }));
    expect(await until(() => row('identities', 'ivy'), (r) => !!r)).toMatchObject({
      default_hosting_precedence: 'default', default_hosting_cost: 0, service_hosting_precedences: {}, service_hosting_costs: {}, app_data: {},
    });

    const client = internalTestClient(PolicyServiceClient, service.grpcAddress, 'policy');
    try {
      const m = await new Promise<RouterDataModel>((resolve, reject) =>
        client.getRouterDataModel(GetRouterDataModelRequest.fromPartial({ partial: true, identityIds: ['hank', 'ivy'] }), new Metadata(), (err, res) => (err ? reject(err) : resolve(res))),
      );
      expect(m.identities.map(({ serviceConfigs, appDataJson, ...i }) => ({ ...i, appData: JSON.parse(appDataJson) }))).toEqual([
        { id: 'hank', name: 'hank3', disabled: false, ...hosting, serviceHostingPrecedences: { s1: 'default' }, serviceHostingCosts: { s2: 65535 } },
        { id: 'ivy', name: 'ivy', disabled: false, defaultHostingPrecedence: 'default', defaultHostingCost: 0, serviceHostingPrecedences: {}, serviceHostingCosts: {}, appData: {} },
      ]);
    } finally {
      client.close();
    }
  });

  it('skips identity events without the projected fields, and applies posture check events', async () => {
    await bus.publish(newChangeEvent('identity-auth', 'identity.created', { identityId: 'eve' }));
    await bus.publish(newChangeEvent('posture', 'posture-check.created', { postureCheckId: 'pc9', name: 'mac', typeId: 'MAC', roleAttributes: ['x'], updatedAt: '2026-11-22T10:00:00.000Z' }));
    expect(await until(() => row('posture_checks', 'pc9'), (r) => !!r)).toMatchObject({ name: 'mac', type_id: 'MAC', role_attributes: ['x'] });
    expect(await row('identities', 'eve')).toBeUndefined();
  });

  it('keeps the whole posture check from its events: the detail with the kind\'s fields, not thinned by an event without it', async () => {
    const detail = { id: 'pc10', name: 'dom', typeId: 'DOMAIN', version: 3, tags: { t: 1 }, roleAttributes: ['x'], domains: ['corp.example'] };
    const data = { postureCheckId: 'pc10', name: 'dom', typeId: 'DOMAIN', roleAttributes: ['x'], updatedAt: '2026-11-22T10:00:00.000Z', createdAt: '2026-11-22T09:00:00.000Z', version: 3 };
    await bus.publish(newChangeEvent('posture', 'posture-check.created', { ...data, detail }));
    const created = await until(() => row('posture_checks', 'pc10'), (r) => !!r);
    expect(created).toMatchObject({ detail, version: '3', tags: { t: 1 }, created_at: new Date('2026-11-22T09:00:00.000Z') });
    // The same version again without its detail (a sender that does not carry it): the detail stays.
    await bus.publish(newChangeEvent('posture', 'posture-check.updated', data));
    await bus.idle();
    expect((await row('posture_checks', 'pc10')).detail).toEqual(detail);
    await bus.publish(newChangeEvent('posture', 'posture-check.updated', { ...data, name: 'dom2', updatedAt: '2026-11-22T11:00:00.000Z', version: 4, detail: { ...detail, name: 'dom2', version: 4, domains: ['b.example'] } }));
    const updated = await until(() => row('posture_checks', 'pc10'), (r) => r?.name === 'dom2');
    expect(updated.detail).toMatchObject({ domains: ['b.example'], version: 4 });
  });
});
