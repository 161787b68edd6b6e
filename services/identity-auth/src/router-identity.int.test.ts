import { internalTestClient } from '@ziti/service-kit';

import type { RequestPrincipal } from '@ziti/http-kit';
import { type DeleteRouterIdentityResponse, IdentityAuthServiceClient, type IdentityInfo } from '@ziti/proto';
import { type FakePolicy, startFakePolicy } from './testing/fake-policy.js';
import { Harness, M } from './testing/harness.js';

describe('router identities (EnsureRouterIdentity, DeleteRouterIdentity)', () => {
  let h: Harness;
  let policy: FakePolicy;
  let admin: RequestPrincipal;
  let client: IdentityAuthServiceClient;

  beforeAll(async () => {
    policy = await startFakePolicy();
    h = await Harness.start({ policyGrpc: () => policy.address });
    admin = (await h.login()).principal;
    client = internalTestClient(IdentityAuthServiceClient, h.service.grpcAddress, 'identity-auth');
  });
  afterAll(async () => {
    client?.close();
    await h?.close();
    await policy?.stop();
  });

  const ensure = (routerId: string, name: string) =>
    new Promise<IdentityInfo>((resolve, reject) => client.ensureRouterIdentity({ routerId, name }, (err, res) => (err ? reject(err) : resolve(res))));
  const remove = (routerId: string) =>
    new Promise<DeleteRouterIdentityResponse>((resolve, reject) => client.deleteRouterIdentity({ routerId }, (err, res) => (err ? reject(err) : resolve(res))));
  const detail = (id: string) => h.call('GET', `${M}/identities/${id}`, { principal: admin });

  it('creates, renames and deletes the Router identity idempotently, with events and syncs', async () => {
    expect(await ensure('rtr-1', 'router-one')).toMatchObject({ id: 'rtr-1', name: 'router-one', typeId: 'Router', isAdmin: false, authPolicyId: 'default' });
    expect(await ensure('rtr-1', 'router-one')).toMatchObject({ id: 'rtr-1', name: 'router-one' });
    expect((await detail('rtr-1')).body.data).toMatchObject({ id: 'rtr-1', name: 'router-one', typeId: 'Router' });
    expect(policy.syncs.at(-1)).toMatchObject({ identityId: 'rtr-1', name: 'router-one', deleted: false });

    expect(await ensure('rtr-1', 'router-renamed')).toMatchObject({ name: 'router-renamed' });
    expect((await detail('rtr-1')).body.data.name).toBe('router-renamed');

    expect(await remove('rtr-1')).toEqual({ deleted: true });
    expect(await remove('rtr-1')).toEqual({ deleted: false });
    expect((await detail('rtr-1')).status).toBe(404);
    expect(policy.syncs.at(-1)).toMatchObject({ identityId: 'rtr-1', deleted: true });
    await h.settle();
    const types = h.events.filter((e) => (e.data as { identityId?: string }).identityId === 'rtr-1').map((e) => e.type);
    expect(types).toEqual(['identity.created', 'identity.updated', 'identity.deleted']);
  });

  it('leaves identities of other types alone', async () => {
    const created = await h.call('POST', `${M}/identities`, { principal: admin, body: { name: 'not-a-router', type: 'User', isAdmin: false } });
    const id = created.body.data.id as string;
    expect(await remove(id)).toEqual({ deleted: false });
    expect((await detail(id)).status).toBe(200);
    await expect(ensure(id, 'x')).rejects.toMatchObject({ details: expect.any(String) });
    expect((await detail(id)).body.data.name).toBe('not-a-router');
  });
});
