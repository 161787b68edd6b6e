import { Metadata } from '@grpc/grpc-js';
import { type ChangeEvent, createInProcessBus, createMemoryCache, type OutboxRelay, startOutboxRelay } from '@ziti/messaging';
import { GetRouterDataModelRequest, PolicyServiceClient, type RouterDataModel } from '@ziti/proto';
import { internalTestClient } from '@ziti/service-kit';
import { createTestDatabase, testInfra, type TestDatabase } from '@ziti/test-kit';
import { AccessManager } from './domain/access-manager.js';
import { ConfigManager } from './domain/config-manager.js';
import { PolicyManager } from './domain/policy-manager.js';
import { ProjectionManager } from './domain/projection-manager.js';
import { ServiceManager } from './domain/service-manager.js';
import { runMigrations, startService, type RunningService } from './index.js';
import { type Database, openDatabase } from './store/db.js';
import { SqlUnitOfWork } from './store/unit-of-work.js';

type Change = { kind: string; id: string };

/**
 * The router data model as the fabric context reads it (`GetRouterDataModel`), and the
 * `router-data-model.changed` event every transaction that changes it publishes.
 */
describe('router data model', () => {
  let tdb: TestDatabase;
  let db: Database;
  let service: RunningService;
  let relay: OutboxRelay;
  let client: PolicyServiceClient;
  let configs: ConfigManager;
  let services: ServiceManager;
  let policies: PolicyManager;
  let projections: ProjectionManager;
  let access: AccessManager;
  const bus = createInProcessBus();
  const cache = createMemoryCache();
  const seen: ChangeEvent[] = [];
  let clock = Date.parse('2026-12-01T10:00:00.000Z');
  const tick = () => new Date((clock += 1000));

  const model = (only: Partial<GetRouterDataModelRequest> = {}) =>
    new Promise<RouterDataModel>((resolve, reject) =>
      client.getRouterDataModel(GetRouterDataModelRequest.fromPartial(only), new Metadata(), (err, res) => (err ? reject(err) : resolve(res))),
    );

  /** The changes of the events published while `fn` ran (one event per transaction here). */
  async function changesOf(fn: () => Promise<unknown>): Promise<Change[][]> {
    await relay.flush();
    await bus.idle();
    const from = seen.length;
    await fn();
    await relay.flush();
    await bus.idle();
    return seen.slice(from).map((e) => e.data.changes as Change[]);
  }

  const identity = (id: string, roleAttributes: string[], extra: Partial<Parameters<ProjectionManager['syncIdentity']>[0]> = {}) =>
    projections.syncIdentity({ identityId: id, name: id, roleAttributes, isAdmin: false, disabled: false, deleted: false, updatedAt: tick(), ...extra });

  beforeAll(async () => {
    tdb = await createTestDatabase((await testInfra()).databaseUrl);
    await runMigrations(tdb.url);
    service = await startService({ databaseUrl: tdb.url, bus, cache, internalSecret: 's', http: { host: '127.0.0.1', port: 0 }, grpc: { host: '127.0.0.1', port: 0 } });
    client = internalTestClient(PolicyServiceClient, service.grpcAddress, 'policy');
    db = openDatabase(tdb.url, () => undefined);
    relay = startOutboxRelay({ pool: db.pool, bus, log: () => undefined });
    const uow = new SqlUnitOfWork(db, () => relay.notify());
    configs = new ConfigManager(uow);
    services = new ServiceManager(uow);
    policies = new PolicyManager(uow);
    projections = new ProjectionManager(uow);
    access = new AccessManager(uow, { evaluate: async () => ({ anyExist: false, results: new Map() }) }, { read: async () => null });
    await bus.subscribeBroadcast('policy', ['router-data-model.changed'], async (e) => void seen.push(e));
  });
  afterAll(async () => {
    client?.close();
    await relay?.stop();
    await db?.close();
    await service?.stop();
    await bus.close();
    await cache.close();
    await tdb?.drop();
  });

  const ids: Record<string, string> = {};

  it('a config type, a config and its update each publish the event with what they changed', async () => {
    expect(await changesOf(async () => (ids.type = await configs.createType({ name: 'rdm-type', schema: {} })))).toEqual([[{ kind: 'config-type', id: ids.type }]]);
    expect(await changesOf(async () => (ids.config = await configs.create({ name: 'rdm-config', configTypeId: ids.type, data: { port: 80 } })))).toEqual([
      [{ kind: 'config', id: ids.config }],
    ]);
    expect(await changesOf(() => configs.update(ids.config, { data: { port: 443 } }, true))).toEqual([[{ kind: 'config', id: ids.config }]]);
  });

  it('a service with configs, a service policy, and identities that policies then select', async () => {
    expect(await changesOf(async () => (ids.svc = await services.create({ name: 'rdm-svc', roleAttributes: ['web'], configs: [ids.config], encryptionRequired: true })))).toEqual([
      [{ kind: 'service', id: ids.svc }],
    ]);
    expect(await changesOf(async () => (ids.sp = await policies.create('sp', { name: 'rdm-dial', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#users'], serviceRoles: ['#web'], postureCheckRoles: ['#strict'] })))).toEqual([
      [{ kind: 'service-policy', id: ids.sp }],
    ]);
    // The identity's projection changes, and the policy now selects it: one event with both.
    expect(await changesOf(() => identity('alice', ['users']))).toEqual([
      [
        { kind: 'identity', id: 'alice' },
        { kind: 'service-policy', id: ids.sp },
      ],
    ]);
    expect(await changesOf(() => identity('bob', []))).toEqual([[{ kind: 'identity', id: 'bob' }]]);
    expect(await changesOf(() => identity('bob', [], { disabled: true }))).toEqual([[{ kind: 'identity', id: 'bob' }]]);
  });

  it('a posture check, its selection by the policy, and identity service configs', async () => {
    expect(
      await changesOf(() =>
        projections.syncPostureCheck({ postureCheckId: 'pc-mac', name: 'mac', typeId: 'MAC', roleAttributes: ['strict'], deleted: false, updatedAt: tick(), version: 1, detail: { id: 'pc-mac', name: 'mac', typeId: 'MAC', version: 1, tags: {}, macAddresses: ['aabbccddeeff'] } }),
      ),
    ).toEqual([
      [
        { kind: 'posture-check', id: 'pc-mac' },
        { kind: 'service-policy', id: ids.sp },
      ],
    ]);
    expect(await changesOf(() => access.assignServiceConfigs('alice', [{ serviceId: ids.svc, configId: ids.config }]))).toEqual([[{ kind: 'identity', id: 'alice' }]]);
  });

  it('publishes nothing for a transaction that changes nothing of the model', async () => {
    const same = { postureCheckId: 'pc-mac', name: 'mac', typeId: 'MAC', roleAttributes: ['strict'], deleted: false, version: 1 };
    const at = tick();
    await projections.syncPostureCheck({ ...same, updatedAt: at, detail: { macAddresses: ['aabbccddeeff'] } });
    // The same change again (the event after the synchronous call): no event.
    expect(await changesOf(() => projections.syncPostureCheck({ ...same, updatedAt: at }))).toEqual([]);
    expect(await changesOf(() => policies.create('erp', { name: 'rdm-erp', semantic: 'AnyOf', identityRoles: ['#users'], edgeRouterRoles: ['#all'] }))).toEqual([]);
  });

  const hosting = () => ({
    defaultHostingPrecedence: 'required',
    defaultHostingCost: 12,
    serviceHostingPrecedences: { [ids.svc]: 'failed' },
    serviceHostingCosts: { [ids.svc]: 300 },
    appData: { site: 'lab', n: [1] },
  });

  it("an identity's hosting precedences and costs and appData are model changes of the identity", async () => {
    expect(await changesOf(() => identity('bob', [], { disabled: true, ...hosting() }))).toEqual([[{ kind: 'identity', id: 'bob' }]]);
    // Each column alone (SQL run by hand): noted for the event by the identities' trigger.
    const sets = [`"default_hosting_precedence" = 'failed'`, `"default_hosting_cost" = 13`, `"service_hosting_precedences" = '{}'`, `"service_hosting_costs" = '{}'`, `"app_data" = '{}'`];
    for (const set of sets) {
      const c = await db.pool.connect();
      try {
        await c.query('BEGIN');
        await c.query(`UPDATE "identities" SET ${set} WHERE "id" = 'bob'`);
        const noted = await c.query(`SELECT "kind", "id" FROM "rdm_pending" WHERE "txid" = txid_current()`);
        expect({ set, noted: noted.rows }).toEqual({ set, noted: [{ kind: 'identity', id: 'bob' }] });
      } finally {
        await c.query('ROLLBACK');
        c.release();
      }
    }
  });

  it('answers the whole model: configs, services, what policies select, identities, posture checks', async () => {
    const m = await model();
    expect(m.configTypes).toContainEqual({ id: ids.type, name: 'rdm-type' });
    expect(m.configTypes.length).toBeGreaterThan(1); // the built-ins too
    expect(m.configs).toEqual([{ id: ids.config, typeId: ids.type, name: 'rdm-config', dataJson: expect.any(String) }]);
    expect(JSON.parse(m.configs[0].dataJson)).toEqual({ port: 443 });
    expect(m.services).toEqual([{ id: ids.svc, name: 'rdm-svc', encryptionRequired: true, configIds: [ids.config] }]);
    expect(m.servicePolicies).toEqual([{ id: ids.sp, name: 'rdm-dial', policyType: 'Dial', identityIds: ['alice'], serviceIds: [ids.svc], postureCheckIds: ['pc-mac'] }]);
    const base = { defaultHostingPrecedence: 'default', defaultHostingCost: 0, serviceHostingPrecedences: {}, serviceHostingCosts: {}, appDataJson: '{}' };
    const { appData, ...bobHosting } = hosting();
    expect(m.identities).toEqual([
      { id: 'alice', name: 'alice', disabled: false, ...base, serviceConfigs: { [ids.svc]: { configs: { [ids.type]: ids.config } } } },
      { id: 'bob', name: 'bob', disabled: true, ...bobHosting, appDataJson: expect.any(String), serviceConfigs: {} },
    ]);
    expect(JSON.parse(m.identities[1].appDataJson)).toEqual(appData);
    expect(m.postureChecks).toEqual([{ id: 'pc-mac', name: 'mac', typeId: 'MAC', detailJson: expect.any(String) }]);
    expect(JSON.parse(m.postureChecks[0].detailJson)).toEqual({ macAddresses: ['aabbccddeeff'] });
  });

  it('answers only the named entities of a partial read (an unknown id is simply absent)', async () => {
    const m = await model({ partial: true, identityIds: ['bob', 'nobody'], servicePolicyIds: [ids.sp] });
    expect(m.identities.map((i) => i.id)).toEqual(['bob']);
    const { appData, ...bobHosting } = hosting();
    expect(m.identities[0]).toMatchObject(bobHosting);
    expect(JSON.parse(m.identities[0].appDataJson)).toEqual(appData);
    expect(m.servicePolicies).toEqual([{ id: ids.sp, name: 'rdm-dial', policyType: 'Dial', identityIds: ['alice'], serviceIds: [ids.svc], postureCheckIds: ['pc-mac'] }]);
    expect([m.configTypes, m.configs, m.services, m.postureChecks]).toEqual([[], [], [], []]);
  });

  it('a service delete publishes the service and the policies that selected it', async () => {
    expect(await changesOf(() => services.delete(ids.svc))).toEqual([
      [
        { kind: 'identity', id: 'alice' },
        { kind: 'service', id: ids.svc },
        { kind: 'service-policy', id: ids.sp },
      ],
    ]);
    expect((await model()).servicePolicies[0].serviceIds).toEqual([]);
  });

  it('announces changes made outside a transaction of the context (a restore) with a following one', async () => {
    await db.pool.query(`INSERT INTO "config_types" ("id", "name") VALUES ('restored', 'restored')`);
    // A transaction publishes the rows of transactions older than every one still running, so a
    // concurrent open transaction (the outbox relay's) may defer them to the next write: a few writes at most.
    const seen: Change[] = [];
    for (let i = 0; i < 5 && !seen.some((c) => c.id === 'restored'); i++) {
      for (const event of await changesOf(() => identity('carol', [`r${i}`]))) seen.push(...event);
    }
    expect(seen).toContainEqual({ kind: 'config-type', id: 'restored' });
    expect(seen).toContainEqual({ kind: 'identity', id: 'carol' });
    expect(seen.filter((c) => c.id === 'restored')).toHaveLength(1);
  });
});
