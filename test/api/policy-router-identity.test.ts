import type { EdgeApi } from '../support/clients.js';
import { policyBuilder, policyClients, unique } from '../support/clients-policy.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectEmpty, expectError, expectList, expectSuccess } from '../support/envelope.js';

/**
 * The identity of a tunneler-enabled edge router (§5.4, OpenZiti's router_identities_test): a real
 * identity of identity-auth (id = router id, type Router, the router's name), listed by
 * `GET /identities`; disabling tunneling or deleting the router deletes it.
 */

const ctl = useController({ natsUrl: undefined });
failOnConformanceProblems();

let mgmt: EdgeApi;
let m: ReturnType<typeof policyClients>;
let build: ReturnType<typeof policyBuilder>;

beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
  m = policyClients(mgmt);
  build = policyBuilder(mgmt);
});

async function expectRouterIdentity(id: string, name: string): Promise<void> {
  const d = await mgmt.identities.get(id);
  expectSuccess(d);
  expect(d.body.data).toMatchObject({ id, name, typeId: 'Router', isAdmin: false, authPolicyId: 'default' });
  const l = await mgmt.identities.list({ filter: `id = "${id}"` });
  expectList(l);
  expect(l.body.data).toHaveLength(1);
  expect(l.body.data[0]).toMatchObject({ id, name, typeId: 'Router' });
}

describe('router identities', () => {
  it('creates the identity with the tunneler-enabled router and deletes it when tunneling is disabled', async () => {
    const id = await build.edgeRouter([], { isTunnelerEnabled: true });
    const name = (await m.edgeRouters.get(id)).body.data.name as string;
    await expectRouterIdentity(id, name);

    expectEmpty(await m.edgeRouters.patch(id, { isTunnelerEnabled: false }));
    expectError(await mgmt.identities.get(id), 404, 'NOT_FOUND');

    expectEmpty(await m.edgeRouters.patch(id, { isTunnelerEnabled: true }));
    await expectRouterIdentity(id, name);

    expectEmpty(await m.edgeRouters.delete(id));
    expectError(await mgmt.identities.get(id), 404, 'NOT_FOUND');
  });

  it('renames the identity with the router and creates none for a router without tunneling', async () => {
    const id = await build.edgeRouter([], { isTunnelerEnabled: true });
    const renamed = unique('er-renamed');
    expectEmpty(await m.edgeRouters.patch(id, { name: renamed }));
    await expectRouterIdentity(id, renamed);

    const plain = await build.edgeRouter();
    expectError(await mgmt.identities.get(plain), 404, 'NOT_FOUND');
    expectEmpty(await m.edgeRouters.patch(plain, { isTunnelerEnabled: true }));
    await expectRouterIdentity(plain, (await m.edgeRouters.get(plain)).body.data.name as string);
    expectEmpty(await m.edgeRouters.delete(plain));
    expectError(await mgmt.identities.get(plain), 404, 'NOT_FOUND');
  });
});
