import { createInProcessBus } from '@ziti/messaging';
import { createTestDatabase, testInfra, type TestDatabase } from '@ziti/test-kit';
import { PolicyManager } from './domain/policy-manager.js';
import { ProjectionManager } from './domain/projection-manager.js';
import { selects, selector } from './domain/roles.js';
import { RouterManager } from './domain/router-manager.js';
import { ServiceManager } from './domain/service-manager.js';
import { runMigrations } from './schema.js';
import { openDatabase, type Database } from './store/db.js';
import { KINDS, pairDrift, rebuildDerived } from './store/evaluation.js';
import { SqlUnitOfWork } from './store/unit-of-work.js';

/**
 * Write-time evaluation against a naive model: after every random change, each policy's links
 * equal the entities its selectors pick (computed here in JS), and every ref-counted pair equals
 * the count derived from the links (`pairDrift` empty).
 */
describe('write-time policy evaluation', () => {
  let tdb: TestDatabase;
  let db: Database;
  let policies: PolicyManager;
  let services: ServiceManager;
  let routers: RouterManager;
  let projections: ProjectionManager;
  const noEnrollment = { create: async () => null, get: async () => null, remove: async () => undefined };

  beforeAll(async () => {
    tdb = await createTestDatabase((await testInfra()).databaseUrl);
    await runMigrations(tdb.url);
    db = openDatabase(tdb.url, () => undefined);
    const bus = createInProcessBus();
    void bus;
    const uow = new SqlUnitOfWork(db, () => undefined);
    policies = new PolicyManager(uow);
    services = new ServiceManager(uow);
    routers = new RouterManager(uow, noEnrollment);
    projections = new ProjectionManager(uow);
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  let seed = 42;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const ATTRS = ['a', 'b', 'c', 'd', 'e'];
  const attrs = () => ATTRS.filter(() => rand(3) === 0);
  let clock = Date.now();
  const tick = () => new Date((clock += 10));

  async function expectConsistent(): Promise<void> {
    const q = (sql: string) => db.pool.query(sql).then((r) => r.rows);
    const entities = {
      identity: await q(`SELECT id, role_attributes FROM identities`),
      service: await q(`SELECT id, role_attributes FROM services`),
      edgeRouter: await q(`SELECT id, role_attributes FROM routers WHERE kind = 'edge'`),
      postureCheck: await q(`SELECT id, role_attributes FROM posture_checks`),
    };
    for (const k of Object.values(KINDS)) {
      const rows = await q(`SELECT * FROM ${k.table}`);
      for (const p of rows) {
        for (const side of k.sides) {
          const s = selector(p[side.rolesCol], p.semantic);
          const expected = entities[side.entity].filter((e: any) => selects(s, e.id, e.role_attributes)).map((e: any) => e.id).sort();
          const actual = (await db.pool.query(`SELECT ${side.linkCol} AS id FROM ${side.link} WHERE policy_id = $1 ORDER BY 1`, [p.id])).rows.map((r) => r.id);
          expect({ policy: p.name, side: side.link, ids: actual }).toEqual({ policy: p.name, side: side.link, ids: expected });
        }
      }
    }
    for (const kind of ['sp', 'erp', 'serp'] as const) expect(await pairDrift(db.pool, kind)).toEqual([]);
  }

  it('keeps links and pair counts equal to a recomputation through creates, updates and deletes', async () => {
    const identityIds: string[] = [];
    const serviceIds: string[] = [];
    const routerIds: string[] = [];
    const spIds: string[] = [];
    const erpIds: string[] = [];
    const serpIds: string[] = [];
    for (let i = 0; i < 12; i++) {
      const id = `ident-${i}`;
      await projections.syncIdentity({ identityId: id, name: id, roleAttributes: attrs(), isAdmin: false, disabled: false, deleted: false, updatedAt: tick() });
      identityIds.push(id);
    }
    for (let i = 0; i < 8; i++) serviceIds.push(await services.create({ name: `svc-${i}`, encryptionRequired: true, roleAttributes: attrs() }));
    for (let i = 0; i < 5; i++) routerIds.push(await routers.create('edge-routers', { name: `er-${i}`, roleAttributes: attrs(), isTunnelerEnabled: i === 0 }));
    for (let i = 0; i < 3; i++) {
      await projections.syncPostureCheck({ postureCheckId: `pc-${i}`, name: `pc-${i}`, typeId: 'OS', roleAttributes: attrs(), deleted: false, updatedAt: tick() });
    }
    await expectConsistent();

    const roles = (ids: string[]): string[] => {
      const r = rand(6);
      if (r === 0) return ['#all'];
      if (r === 1 && ids.length > 0) return [`@${ids[rand(ids.length)]}`, ...attrs().slice(0, 1).map((a) => `#${a}`)];
      return attrs().map((a) => `#${a}`);
    };
    const semantic = () => (rand(2) === 0 ? 'AllOf' : 'AnyOf');
    for (let i = 0; i < 6; i++) {
      spIds.push(await policies.create('sp', { name: `sp-${i}`, type: rand(2) ? 'Dial' : 'Bind', semantic: semantic(), identityRoles: roles(identityIds), serviceRoles: roles(serviceIds), postureCheckRoles: roles([]) }));
      erpIds.push(await policies.create('erp', { name: `erp-${i}`, semantic: semantic(), identityRoles: roles(identityIds), edgeRouterRoles: roles(routerIds) }));
      serpIds.push(await policies.create('serp', { name: `serp-${i}`, semantic: semantic(), serviceRoles: roles(serviceIds), edgeRouterRoles: roles(routerIds) }));
    }
    await expectConsistent();
    for (const t of ['identity_services', 'identity_edge_routers', 'service_edge_routers']) {
      expect(Number((await db.pool.query(`SELECT count(*) AS n FROM ${t}`)).rows[0].n)).toBeGreaterThan(0);
    }

    for (let step = 0; step < 40; step++) {
      switch (rand(8)) {
        case 0:
          await policies.update('sp', spIds[rand(spIds.length)], { type: rand(2) ? 'Dial' : 'Bind', identityRoles: roles(identityIds), serviceRoles: roles(serviceIds) }, true);
          break;
        case 1:
          await policies.update('erp', erpIds[rand(erpIds.length)], { name: `erp-u-${step}`, semantic: semantic(), identityRoles: roles(identityIds), edgeRouterRoles: roles(routerIds) }, false);
          break;
        case 2:
          await policies.update('serp', serpIds[rand(serpIds.length)], { semantic: semantic(), serviceRoles: roles(serviceIds) }, true);
          break;
        case 3: {
          const id = identityIds[rand(identityIds.length)];
          await projections.syncIdentity({ identityId: id, name: id, roleAttributes: attrs(), isAdmin: false, disabled: false, deleted: false, updatedAt: tick() });
          break;
        }
        case 4:
          await services.update(serviceIds[rand(serviceIds.length)], { roleAttributes: attrs() }, true);
          break;
        case 5:
          await routers.update('edge-routers', routerIds[rand(routerIds.length)], { roleAttributes: attrs(), isTunnelerEnabled: rand(2) === 0 }, true);
          break;
        case 6:
          if (spIds.length > 2) await policies.delete('sp', spIds.splice(rand(spIds.length), 1)[0]);
          break;
        case 7:
          if (serviceIds.length > 3) await services.delete(serviceIds.splice(rand(serviceIds.length), 1)[0]);
          else await projections.syncIdentity({ identityId: identityIds[0], name: 'x', roleAttributes: [], isAdmin: false, disabled: false, deleted: true, updatedAt: tick() });
          break;
      }
      await expectConsistent();
    }
  }, 120_000);

  it('rebuilds the same links and pairs from scratch', async () => {
    const snapshot = async () => {
      const out: Record<string, unknown[]> = {};
      for (const k of Object.values(KINDS)) {
        for (const side of k.sides) out[side.link] = (await db.pool.query(`SELECT * FROM ${side.link} ORDER BY 1, 2`)).rows;
        out[k.pair.table] = (await db.pool.query(`SELECT * FROM ${k.pair.table} ORDER BY 1, 2`)).rows;
      }
      return out;
    };
    const before = await snapshot();
    expect(Object.values(before).some((rows) => rows.length > 0)).toBe(true);
    await db.tx(async (sql) => rebuildDerived(sql));
    expect(await snapshot()).toEqual(before);
  });

  it('ignores stale identity updates and resurrections after a delete', async () => {
    const at = tick();
    await projections.syncIdentity({ identityId: 'stale', name: 'stale', roleAttributes: ['x'], isAdmin: false, disabled: false, deleted: false, updatedAt: at });
    await projections.syncIdentity({ identityId: 'stale', name: 'old', roleAttributes: ['y'], isAdmin: false, disabled: false, deleted: false, updatedAt: new Date(at.getTime() - 5) });
    expect((await db.pool.query(`SELECT name, role_attributes FROM identities WHERE id = 'stale'`)).rows).toEqual([{ name: 'stale', role_attributes: ['x'] }]);
    await projections.syncIdentity({ identityId: 'stale', name: 'stale', roleAttributes: [], isAdmin: false, disabled: false, deleted: true, updatedAt: tick() });
    await projections.syncIdentity({ identityId: 'stale', name: 'late', roleAttributes: ['x'], isAdmin: false, disabled: false, deleted: false, updatedAt: at });
    expect((await db.pool.query(`SELECT 1 FROM identities WHERE id = 'stale'`)).rowCount).toBe(0);
  });
});
