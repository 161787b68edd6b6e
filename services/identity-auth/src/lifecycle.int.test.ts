import { internalTestClient } from '@ziti/service-kit';

import { fromGrpcError } from '@ziti/errors';
import { type RequestPrincipal, principalCacheKey, tokenHash } from '@ziti/http-kit';
import { IdentityAuthServiceClient, type IdentityInfo } from '@ziti/proto';
import { type FakePolicy, startFakePolicy } from './testing/fake-policy.js';
import { Harness, M } from './testing/harness.js';

describe('identity lifecycle, projection to the policy context, role attributes', () => {
  let h: Harness;
  let policy: FakePolicy;
  let admin: RequestPrincipal;

  beforeAll(async () => {
    policy = await startFakePolicy();
    h = await Harness.start({ policyGrpc: () => policy.address });
    admin = (await h.login()).principal;
  });
  afterAll(async () => {
    await h?.close();
    await policy?.stop();
  });

  const identity = async (id: string) => (await h.call('GET', `${M}/identities/${id}`, { principal: admin })).body.data;

  it('pushes every committed identity change to the policy context before answering', async () => {
    policy.syncs.length = 0;
    const created = await h.call('POST', `${M}/identities`, { principal: admin, body: { name: 'synced', type: 'User', isAdmin: false, roleAttributes: ['eng'] } });
    const id = created.body.data.id;
    expect(policy.syncs.at(-1)).toMatchObject({ identityId: id, name: 'synced', roleAttributes: ['eng'], isAdmin: false, disabled: false, deleted: false });
    await h.call('PATCH', `${M}/identities/${id}`, { principal: admin, body: { roleAttributes: ['ops'], isAdmin: true } });
    expect(policy.syncs.at(-1)).toMatchObject({ identityId: id, roleAttributes: ['ops'], isAdmin: true });
    const updatedAt = (await identity(id)).updatedAt;
    expect(policy.syncs.at(-1)!.updatedAt).toBe(updatedAt);
    await h.call('DELETE', `${M}/identities/${id}`, { principal: admin });
    expect(policy.syncs.at(-1)).toMatchObject({ identityId: id, deleted: true });
  });

  it("carries the hosting precedences and costs and appData in the event and the sync; a PATCH or PUT of them alone publishes identity.updated", async () => {
    const hosting = { defaultHostingPrecedence: 'required', defaultHostingCost: 7, serviceHostingPrecedences: { s1: 'failed' }, serviceHostingCosts: { s1: 40 } };
    const created = await h.call('POST', `${M}/identities`, { principal: admin, body: { name: 'hosting', type: 'User', isAdmin: false, ...hosting, appData: { site: 'lab' } } });
    const id = created.body.data.id as string;
    await h.settle();
    const last = (type: string) => h.events.filter((x) => x.type === type && x.data.identityId === id).at(-1);
    expect(last('identity.created')?.data).toMatchObject({ ...hosting, appData: { site: 'lab' } });
    expect(policy.syncs.at(-1)).toMatchObject({
      identityId: id,
      hosting: { defaultPrecedence: 'required', defaultCost: 7, servicePrecedences: { s1: 'failed' }, serviceCosts: { s1: 40 } },
    });
    expect(JSON.parse(policy.syncs.at(-1)!.appDataJson)).toEqual({ site: 'lab' });

    const patched = { defaultHostingPrecedence: 'failed', defaultHostingCost: 9, serviceHostingPrecedences: {}, serviceHostingCosts: { s2: 1 }, appData: { site: 'edge', n: [1] } };
    expect((await h.call('PATCH', `${M}/identities/${id}`, { principal: admin, body: patched })).status).toBe(200);
    await h.settle();
    expect(last('identity.updated')?.data).toMatchObject(patched);
    expect(policy.syncs.at(-1)).toMatchObject({ identityId: id, hosting: { defaultPrecedence: 'failed', defaultCost: 9, servicePrecedences: {}, serviceCosts: { s2: 1 } } });
    expect(JSON.parse(policy.syncs.at(-1)!.appDataJson)).toEqual({ site: 'edge', n: [1] });

    // PUT without them: the defaults again.
    const updates = h.events.filter((x) => x.type === 'identity.updated' && x.data.identityId === id).length;
    expect((await h.call('PUT', `${M}/identities/${id}`, { principal: admin, body: { name: 'hosting', type: 'User', isAdmin: false } })).status).toBe(200);
    await h.settle();
    expect(h.events.filter((x) => x.type === 'identity.updated' && x.data.identityId === id)).toHaveLength(updates + 1);
    expect(last('identity.updated')?.data).toMatchObject({ defaultHostingPrecedence: 'default', defaultHostingCost: 0, serviceHostingPrecedences: {}, serviceHostingCosts: {}, appData: {} });
  });

  it('answers even when the policy context is down; the event carries the projection', async () => {
    policy.failSync = true;
    try {
      const res = await h.call('POST', `${M}/identities`, { principal: admin, body: { name: 'unsynced', type: 'User', isAdmin: false } });
      expect(res.status).toBe(201);
      await h.settle();
      const e = h.events.find((x) => x.type === 'identity.created' && x.data.identityId === res.body.data.id)!;
      expect(e.data).toMatchObject({ name: 'unsynced', roleAttributes: [], isAdmin: false, disabled: false, tokenHashes: [] });
      expect(h.logs.some((l) => l.includes('SyncIdentity') && l.includes('converge'))).toBe(true);
    } finally {
      policy.failSync = false;
    }
  });

  it('disable ends the sessions at once; enable lets the identity back in', async () => {
    const user = await h.createUser(admin);
    const { token } = await h.login(user.username, user.password, 'client');
    await h.cache.set(principalCacheKey(token), '{}', 30);
    const res = await h.call('POST', `${M}/identities/${user.id}/disable`, { principal: admin, body: { durationMinutes: 0 } });
    expect(res.status).toBe(200);
    expect(await h.cache.get(principalCacheKey(token))).toBeNull();
    await expect(h.resolve(token)).rejects.toMatchObject({ code: 16 });
    expect(await h.sql('SELECT id FROM api_sessions WHERE identity_id = $1', [user.id])).toEqual([]);
    const d = await identity(user.id);
    expect(d).toMatchObject({ disabled: true, disabledUntil: null, hasApiSession: false });
    expect(Date.parse(d.disabledAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(policy.syncs.at(-1)).toMatchObject({ identityId: user.id, disabled: true });
    const refused = await h.call('POST', '/edge/client/v1/authenticate?method=password', { body: { username: user.username, password: user.password } });
    expect([refused.status, refused.body.error.code]).toEqual([401, 'INVALID_AUTH']);
    await h.settle();
    const e = h.events.find((x) => x.type === 'identity.disabled' && x.data.identityId === user.id)!;
    expect(e.data).toMatchObject({ disabled: true, tokenHashes: [tokenHash(token)] });

    expect((await h.call('POST', `${M}/identities/${user.id}/enable`, { principal: admin })).status).toBe(200);
    expect(await identity(user.id)).toMatchObject({ disabled: false, disabledAt: null, disabledUntil: null });
    expect(policy.syncs.at(-1)).toMatchObject({ identityId: user.id, disabled: false });
    await h.login(user.username, user.password, 'client');
  });

  it('a disable with a duration runs out on its own, and the sweep clears it everywhere', async () => {
    const user = await h.createUser(admin);
    await h.call('POST', `${M}/identities/${user.id}/disable`, { principal: admin, body: { durationMinutes: 5 } });
    const d = await identity(user.id);
    expect(Date.parse(d.disabledUntil) - Date.parse(d.disabledAt)).toBe(5 * 60_000);
    await h.sql("UPDATE identities SET disabled_until = now() - interval '1 second' WHERE id = $1", [user.id]);
    expect((await identity(user.id)).disabled).toBe(false);
    await h.login(user.username, user.password, 'client');
    expect(await identity(user.id)).toMatchObject({ disabled: false, disabledAt: null, disabledUntil: null });
    expect(policy.syncs.filter((s) => s.identityId === user.id).at(-1)).toMatchObject({ disabled: false });
  });

  it('validates disable and needs identity.update; non-admins cannot disable admins', async () => {
    const user = await h.createUser(admin);
    const bad = await h.call('POST', `${M}/identities/${user.id}/disable`, { principal: admin, body: { durationMinutes: -1 } });
    expect([bad.status, bad.body.error.cause.field]).toEqual([400, 'durationMinutes']);
    expect((await h.call('POST', `${M}/identities/${user.id}/disable`, { principal: admin, body: {} })).status).toBe(400);
    expect((await h.call('POST', `${M}/identities/nope/disable`, { principal: admin, body: { durationMinutes: 0 } })).status).toBe(404);
    const as = (permissions: string[]): RequestPrincipal => ({ ...admin, identityId: 'x', isAdmin: false, isDefaultAdmin: false, permissions });
    for (const [perms, status] of [[['identity.read'], 401], [['identity.create'], 401], [['identity.update'], 200], [['identity'], 200]] as const) {
      const res = await h.call('POST', `${M}/identities/${user.id}/enable`, { principal: as([...perms]) });
      expect([perms, res.status]).toEqual([perms, status]);
    }
    const res = await h.call('POST', `${M}/identities/${admin.identityId}/disable`, { principal: as(['identity']), body: { durationMinutes: 0 } });
    expect(res.status).toBe(401);
  });

  it('lists identity role attributes with a filter over the attribute and no default limit', async () => {
    for (let i = 0; i < 12; i++) {
      await h.call('POST', `${M}/identities`, { principal: admin, body: { name: `attr-${i}`, type: 'User', isAdmin: false, roleAttributes: [`ra-${String(i).padStart(2, '0')}`, 'ra-common'] } });
    }
    const all = await h.call('GET', `${M}/identity-role-attributes?filter=${encodeURIComponent('id contains "ra-"')}&limit=2`, { principal: admin });
    expect(all.status).toBe(200);
    expect(all.body.data).toHaveLength(13);
    expect(all.body.data[0]).toBe('ra-00');
    expect(all.text).toContain('"limit":9223372036854775807');
    const limited = await h.call('GET', `${M}/identity-role-attributes?filter=${encodeURIComponent('id contains "ra-" sort by id desc skip 1 limit 2')}`, { principal: admin });
    expect(limited.body.data).toEqual(['ra-11', 'ra-10']);
    expect(limited.body.meta.pagination).toEqual({ limit: 2, offset: 1, totalCount: 13 });
  });

  it('reports role attribute usage with the policy counts', async () => {
    await h.call('POST', `${M}/identities`, { principal: admin, body: { name: 'usage-1', type: 'User', isAdmin: false, roleAttributes: ['u-both', 'u-id'] } });
    policy.usages = [
      { roleAttribute: 'u-both', servicePolicies: 1, edgeRouterPolicies: 1, serviceEdgeRouterPolicies: 0, servicePolicyIds: ['sp1'], edgeRouterPolicyIds: ['erp1'], serviceEdgeRouterPolicyIds: [] },
      { roleAttribute: 'u-sp', servicePolicies: 2, edgeRouterPolicies: 0, serviceEdgeRouterPolicies: 0, servicePolicyIds: ['sp1', 'sp2'], edgeRouterPolicyIds: [], serviceEdgeRouterPolicyIds: [] },
    ];
    const filter = encodeURIComponent('id contains "u-" sort by id');
    const res = await h.call('GET', `${M}/identity-role-attribute-usage?filter=${filter}`, { principal: admin });
    expect(res.body.data).toEqual([
      { roleAttribute: 'u-both', usage: { identities: { count: 1 }, servicePolicies: { count: 1 }, edgeRouterPolicies: { count: 1 } } },
      { roleAttribute: 'u-id', usage: { identities: { count: 1 }, servicePolicies: { count: 0 }, edgeRouterPolicies: { count: 0 } } },
      { roleAttribute: 'u-sp', usage: { identities: { count: 0 }, servicePolicies: { count: 2 }, edgeRouterPolicies: { count: 0 } } },
    ]);
    const ids = await h.call('GET', `${M}/identity-role-attribute-usage?withIds=true&filter=${filter}`, { principal: admin });
    expect(ids.body.data[1].usage).toEqual({ identities: { count: 1, ids: [expect.any(String)] }, servicePolicies: { count: 0, ids: [] }, edgeRouterPolicies: { count: 0, ids: [] } });
    expect(ids.body.data[2].usage.servicePolicies).toEqual({ count: 2, ids: ['sp1', 'sp2'] });

    policy.usages = null; // a policy service without the RPC: zero counts
    const fallback = await h.call('GET', `${M}/identity-role-attribute-usage?filter=${filter}`, { principal: admin });
    expect(fallback.body.data.map((d: { roleAttribute: string }) => d.roleAttribute)).toEqual(['u-both', 'u-id']);
    expect(fallback.body.data[0].usage.servicePolicies).toEqual({ count: 0 });
    policy.usages = [];
  });

  it('serves GetIdentity and GetIdentities over gRPC (with the admin flags and permissions)', async () => {
    const user = await h.createUser(admin, { roleAttributes: ['grpc'], externalId: 'ext-grpc' });
    const holder = await h.createUser(admin, { permissions: ['service.read'] });
    const client = internalTestClient(IdentityAuthServiceClient, h.service.grpcAddress, 'identity-auth');
    const get = (identityId: string) =>
      new Promise<IdentityInfo>((resolve, reject) => client.getIdentity({ identityId }, (err, res) => (err ? reject(err) : resolve(res))));
    try {
      const info = {
        id: user.id, name: user.username, typeId: 'Default', isAdmin: false, disabled: false, roleAttributes: ['grpc'], externalId: 'ext-grpc', authPolicyId: 'default',
        isDefaultAdmin: false, permissions: [],
      };
      expect(await get(user.id)).toEqual(info);
      const err = await get('nope').catch((e: unknown) => e);
      expect(fromGrpcError(err as never).code).toBe('NOT_FOUND');
      const many = await new Promise<IdentityInfo[]>((resolve, reject) =>
        client.getIdentities({ identityIds: [user.id, 'nope', holder.id, user.id] }, (e, res) => (e ? reject(e) : resolve(res.identities))),
      );
      expect(many).toEqual([info, expect.objectContaining({ id: holder.id, isAdmin: false, permissions: ['service.read'] })]);
    } finally {
      client.close();
    }
  });
});
