import { internalTestClient } from '@ziti/service-kit';
import { Metadata } from '@grpc/grpc-js';
import { createInProcessBus, createMemoryCache } from '@ziti/messaging';
import { PolicyServiceClient } from '@ziti/proto';
import { createTestDatabase, testInfra, type TestDatabase } from '@ziti/test-kit';
import { rebuildDerivedLinks, runMigrations, startService, type RunningService } from './index.js';

/** The `ziti.v1.PolicyService` contract as other contexts call it. */
describe('PolicyService over gRPC', () => {
  let db: TestDatabase;
  let service: RunningService;
  let client: PolicyServiceClient;
  const bus = createInProcessBus();
  const cache = createMemoryCache();

  // The generated client methods are overloaded, so the callback's type cannot be inferred: answers are `any` here.
  const call = <Res = any>(fn: (...args: any[]) => unknown, req: object) =>
    new Promise<Res>((resolve, reject) => fn.call(client, req, new Metadata(), (err: Error | null, res: Res) => (err ? reject(err) : resolve(res))));

  beforeAll(async () => {
    db = await createTestDatabase((await testInfra()).databaseUrl);
    await runMigrations(db.url);
    service = await startService({ databaseUrl: db.url, bus, cache, internalSecret: 's', http: { host: '127.0.0.1', port: 0 }, grpc: { host: '127.0.0.1', port: 0 } });
    client = internalTestClient(PolicyServiceClient, service.grpcAddress, 'policy');
  });
  afterAll(async () => {
    client?.close();
    await service?.stop();
    await bus.close();
    await cache.close();
    await db?.drop();
  });

  const sync = (identityId: string, roleAttributes: string[], updatedAt: string, extra: Record<string, unknown> = {}) =>
    call(client.syncIdentity, {
      identityId, name: identityId, roleAttributes, deleted: false, isAdmin: false, disabled: false, updatedAt,
      typeId: '', isDefaultAdmin: false, externalId: '', authPolicyId: '', createdAt: '', tagsJson: '', ...extra,
    });

  it('projects identities (ignoring stale updates) and answers GetServiceAccess from the evaluated links', async () => {
    await sync('carol', ['ops'], '2026-11-22T10:00:00.000Z');
    await sync('carol', [], '2026-11-22T09:00:00.000Z');
    const pg = new (await import('pg')).Client({ connectionString: db.url });
    await pg.connect();
    try {
      await pg.query(`INSERT INTO policy.services (id, name) VALUES ('s1', 'svc-1')`);
      await pg.query(`INSERT INTO policy.service_policies (id, name, type, semantic, identity_roles, service_roles) VALUES ('p1', 'p1', 'Dial', 'AnyOf', '{#ops}', '{@s1}')`);
    } finally {
      await pg.end();
    }
    // Rows written around the API get their links from a rebuild; then syncs evaluate incrementally.
    await rebuildDerivedLinks(db.url);
    const access = await call(client.getServiceAccess, { identityId: 'carol', serviceId: 's1', withoutLiveState: false });
    expect(access).toMatchObject({ visible: true, serviceName: 'svc-1', permissions: ['Dial'], policies: [{ policyId: 'p1', policyType: 'Dial', postureCheckIds: [] }], edgeRouters: [] });
    expect(await call(client.getServiceAccess, { identityId: 'nobody', serviceId: 's1', withoutLiveState: false })).toMatchObject({ visible: false, permissions: [] });
    await sync('carol', ['x'], '2026-11-22T11:00:00.000Z');
    expect((await call(client.getServiceAccess, { identityId: 'carol', serviceId: 's1', withoutLiveState: false })).visible).toBe(false);
    await sync('carol', ['ops'], '2026-11-22T11:30:00.000Z');
    expect((await call(client.getServiceAccess, { identityId: 'carol', serviceId: 's1', withoutLiveState: false })).visible).toBe(true);
    await sync('carol', [], '2026-11-22T12:00:00.000Z', { deleted: true });
    expect((await call(client.getServiceAccess, { identityId: 'carol', serviceId: 's1', withoutLiveState: false })).visible).toBe(false);
  });

  it('reports which policies use role attributes; an empty list means every referenced attribute', async () => {
    const usage = await call(client.getRoleAttributeUsage, { entityType: 'identity', roleAttributes: [], withIds: true });
    expect(usage.usages).toEqual([
      { roleAttribute: 'ops', servicePolicies: 1, edgeRouterPolicies: 0, serviceEdgeRouterPolicies: 0, servicePolicyIds: ['p1'], edgeRouterPolicyIds: [], serviceEdgeRouterPolicyIds: [] },
    ]);
    const counts = await call(client.getRoleAttributeUsage, { entityType: 'identity', roleAttributes: ['ops', 'nope'], withIds: false });
    expect(counts.usages.map((u: { roleAttribute: string; servicePolicies: number; servicePolicyIds: string[] }) => [u.roleAttribute, Number(u.servicePolicies), u.servicePolicyIds])).toEqual([['ops', 1, []], ['nope', 0, []]]);
  });

  it('projects posture checks and refuses a sync without an id', async () => {
    await call(client.syncPostureCheck, {
      postureCheckId: 'pc1', name: 'pc', typeId: 'MAC', roleAttributes: ['a'], deleted: false, updatedAt: '2026-11-22T10:00:00.000Z',
      version: 2, createdAt: '', detailJson: '{"macAddresses":["aa"]}',
    });
    await expect(sync('', [], '2026-11-22T10:00:00.000Z')).rejects.toMatchObject({ details: expect.any(String) });
  });
});
