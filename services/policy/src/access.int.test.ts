import { createTestDatabase, testInfra, type TestDatabase } from '@ziti/test-kit';
import { AccessManager, type Viewer } from './domain/access-manager.js';
import type { PostureEvaluator } from './domain/ports.js';
import { PolicyManager } from './domain/policy-manager.js';
import { ProjectionManager } from './domain/projection-manager.js';
import { RouterManager } from './domain/router-manager.js';
import { ServiceManager } from './domain/service-manager.js';
import { runMigrations } from './schema.js';
import { SqlAccessReader } from './store/access.js';
import { type Database, openDatabase } from './store/db.js';
import { SqlUnitOfWork } from './store/unit-of-work.js';

/**
 * An identity's view with posture checks (§5.3) and the session context's `GetServiceAccess`
 * answer (§5.4), against the real database with a fake posture context.
 */
describe('access with posture checks', () => {
  let tdb: TestDatabase;
  let db: Database;
  let access: (posture: PostureEvaluator['evaluate']) => AccessManager;
  const ids: Record<string, string> = {};
  const viewer: Viewer = { identityId: 'alice', apiSessionId: 'as-1', sessionConfigTypes: [] };
  const noTokens = { read: async () => null };

  beforeAll(async () => {
    tdb = await createTestDatabase((await testInfra()).databaseUrl);
    await runMigrations(tdb.url);
    db = openDatabase(tdb.url, () => undefined);
    const uow = new SqlUnitOfWork(db, () => undefined);
    access = (evaluate) => new AccessManager(uow, { evaluate }, noTokens);
    const projections = new ProjectionManager(uow);
    const services = new ServiceManager(uow);
    const policies = new PolicyManager(uow);
    const routers = new RouterManager(uow, { create: async () => null, get: async () => null, remove: async () => undefined });
    const now = new Date();
    await projections.syncIdentity({ identityId: 'alice', name: 'alice', roleAttributes: ['users'], isAdmin: false, disabled: false, deleted: false, updatedAt: now });
    await projections.syncPostureCheck({ postureCheckId: 'pc-os', name: 'os', typeId: 'OS', roleAttributes: ['strict'], deleted: false, updatedAt: now });
    ids.svc = await services.create({ name: 'svc', encryptionRequired: true, roleAttributes: ['web'] });
    ids.dial = await policies.create('sp', { name: 'dial', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#users'], serviceRoles: ['#web'], postureCheckRoles: ['#strict'] });
    ids.bind = await policies.create('sp', { name: 'bind', type: 'Bind', semantic: 'AnyOf', identityRoles: ['#users'], serviceRoles: ['#web'] });
    ids.er1 = await routers.create('edge-routers', { name: 'er1', roleAttributes: ['eu'] });
    ids.er2 = await routers.create('edge-routers', { name: 'er2', roleAttributes: ['us'] });
    await policies.create('erp', { name: 'erp', semantic: 'AnyOf', identityRoles: ['#users'], edgeRouterRoles: ['#eu', '#us'] });
    await policies.create('serp', { name: 'serp', semantic: 'AnyOf', serviceRoles: ['#web'], edgeRouterRoles: ['#us'] });
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  it('shows one entry per linking policy, with the checks as the posture context evaluates them', async () => {
    const asked: unknown[] = [];
    const am = access(async (identityId, apiSessionId, checkIds) => {
      asked.push({ identityId, apiSessionId, checkIds });
      return {
        anyExist: true,
        results: new Map([['pc-os', { id: 'pc-os', isPassing: true, typeId: 'OS', timeout: -1, timeoutRemaining: -1, extra: {} }]]),
      };
    });
    const s = await am.clientService(viewer, ids.svc);
    expect(asked).toEqual([{ identityId: 'alice', apiSessionId: 'as-1', checkIds: ['pc-os'] }]);
    expect(s.permissions).toEqual(['Bind', 'Dial']);
    const byPolicy = Object.fromEntries(s.postureQueries.map((p) => [p.policyId, p]));
    expect(byPolicy[ids.bind]).toEqual({ policyId: ids.bind, policyType: 'Bind', isPassing: true, postureQueries: [] });
    expect(byPolicy[ids.dial]).toMatchObject({ policyType: 'Dial', isPassing: true, postureQueries: [{ id: 'pc-os', queryType: 'OS', isPassing: true, timeout: -1, timeoutRemaining: -1 }] });
  });

  it('counts the checks as failing when the posture context does not answer', async () => {
    const s = await access(async () => null).clientService(viewer, ids.svc);
    const dial = s.postureQueries.find((p) => p.policyId === ids.dial)!;
    expect(dial).toMatchObject({ isPassing: false, postureQueries: [{ id: 'pc-os', isPassing: false }] });
    expect(s.postureQueries.find((p) => p.policyId === ids.bind)!.isPassing).toBe(true);
  });

  it('lists the services reached through policies using given posture checks', async () => {
    const am = access(async () => null);
    expect(await am.postureCheckServices('alice', ['pc-os', 'other'])).toEqual([{ id: ids.svc, name: 'svc', postureCheckIds: ['pc-os'] }]);
    expect(await am.postureCheckServices('alice', ['other'])).toEqual([]);
    expect(await am.postureCheckServices('bob', ['pc-os'])).toEqual([]);
  });

  it('answers GetServiceAccess with permissions, linking policies and the shared routers', async () => {
    const a = await access(async () => null).serviceAccess('alice', ids.svc);
    expect(a.visible).toBe(true);
    expect(a.permissions).toEqual(['Bind', 'Dial']);
    expect(a.policies.map((p) => ({ id: p.policyId, type: p.type, checks: p.postureCheckIds })).sort((x, y) => x.type.localeCompare(y.type))).toEqual([
      { id: ids.bind, type: 'Bind', checks: [] },
      { id: ids.dial, type: 'Dial', checks: ['pc-os'] },
    ]);
    expect(a.edgeRouters.map((r) => r.id)).toEqual([ids.er2]);
    expect((await access(async () => null).serviceAccess('bob', ids.svc)).visible).toBe(false);
    expect((await access(async () => null).serviceAccess('alice', 'no-such-service')).visible).toBe(false);
  });

  it('keeps one generic plan for the batched access lookup instead of planning it on every call', async () => {
    const one = openDatabase(tdb.url, () => undefined, 1); // one connection: the prepared statement's plan cache is observable
    try {
      const reader = new SqlAccessReader(one.pool);
      for (let i = 0; i < 8; i++) {
        const batch = Array.from({ length: 1 + (i % 4) }, (_, j) => ({ identityId: j % 2 ? 'bob' : 'alice', serviceId: ids.svc! }));
        const answers = await reader.serviceAccess(batch);
        expect(answers.map((a) => a?.dial)).toEqual(batch.map((b) => b.identityId === 'alice'));
      }
      const { rows } = await one.pool.query(`SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE '%jsonb_to_recordset%'`);
      expect(rows).toHaveLength(1);
      expect(Number(rows[0].generic_plans)).toBeGreaterThanOrEqual(3);
    } finally {
      await one.close();
    }
  });
});
