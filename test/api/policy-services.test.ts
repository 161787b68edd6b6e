import { auth, type EdgeApi } from '../support/clients.js';
import { ids, policyBuilder, policyClients, unique } from '../support/clients-policy.js';
import { eventually } from '../support/clients-session.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectEmpty, expectError, expectFieldError, expectList, expectSuccess } from '../support/envelope.js';

/**
 * Services and an identity's view of them (reference §5.3, §1.2): management CRUD, `permissions`
 * (Bind before Dial, `Invalid` for the admin without a policy), client visibility (404 without a
 * policy), the next request seeing a management write, `/identities/{id}/services` by policy type,
 * policy advice, the routers an identity and a service share.
 */

// The in-process event bus: events of other test files left on the shared NATS stream (posture
// checks, identities) must not reach this controller's projections.
const ctl = useController({ natsUrl: undefined });
failOnConformanceProblems();

let mgmt: EdgeApi;
let m: ReturnType<typeof policyClients>;
let build: ReturnType<typeof policyBuilder>;

async function loginClient(username: string, password: string): Promise<EdgeApi> {
  const { res, session } = await auth.login(ctl().http, username, password, 'client');
  expectSuccess(res);
  return session;
}

beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
  m = policyClients(mgmt);
  build = policyBuilder(mgmt);
});

describe('management /services', () => {
  it('creates a service with the defaults and shows it with its fields', async () => {
    const name = unique('svc');
    const id = expectCreated(await m.services.create({ name, encryptionRequired: true, roleAttributes: ['web', 'web'] }), 'services');
    const res = await m.services.get(id);
    expectSuccess(res);
    expect(res.body.data).toMatchObject({
      id, name, encryptionRequired: true, terminatorStrategy: 'smartrouting', maxIdleTimeMillis: 0, roleAttributes: ['web'],
      configs: [], config: {}, permissions: ['Invalid'], postureQueries: [], tags: {},
    });
    expect(res.body.data._links).toMatchObject({
      self: { href: `./services/${id}` },
      'service-policies': { href: `./services/${id}/service-policies` },
      'service-edge-router-policies': { href: `./services/${id}/service-edge-router-policies` },
      terminators: { href: `./services/${id}/terminators` },
      configs: { href: `./services/${id}/configs` },
    });
  });

  it('refuses a missing name, a duplicate name, an unknown strategy and prefixed role attributes, and ignores unknown fields', async () => {
    expectFieldError(await m.services.create({ encryptionRequired: true }));
    const name = unique('svc');
    await build.service([], [], name);
    expectFieldError(await m.services.create({ name, encryptionRequired: true }), 'name');
    expectFieldError(await m.services.create({ name: unique('svc'), encryptionRequired: true, terminatorStrategy: 'nope' }), 'terminatorStrategy');
    expectFieldError(await m.services.create({ name: unique('svc'), encryptionRequired: true, roleAttributes: ['#x'] }), 'roleAttributes');
    expect((await m.services.create({ name: unique('svc'), encryptionRequired: true, bogus: 1 })).status).toBe(201);
  });

  it('keeps encryptionRequired from create; PATCH changes only the given fields; PUT replaces the rest', async () => {
    const id = await build.service(['a', 'b']);
    expectEmpty(await m.services.patch(id, { terminatorStrategy: 'weighted', encryptionRequired: false }));
    let d = (await m.services.get(id)).body.data;
    expect(d).toMatchObject({ terminatorStrategy: 'weighted', encryptionRequired: true, roleAttributes: ['a', 'b'] });
    expectEmpty(await m.services.update(id, { name: d.name, maxIdleTimeMillis: 5000 }));
    d = (await m.services.get(id)).body.data;
    expect(d).toMatchObject({ terminatorStrategy: 'smartrouting', maxIdleTimeMillis: 5000, roleAttributes: [], encryptionRequired: true });
  });

  it('filters and sorts, and takes roleFilter with AllOf and AnyOf', async () => {
    const tag = unique('rf');
    const s1 = await build.service([`${tag}-a`, `${tag}-b`]);
    const s2 = await build.service([`${tag}-a`]);
    const s3 = await build.service([`${tag}-c`]);
    let res = await m.services.list({ roleFilter: [`#${tag}-a`, `#${tag}-b`], limit: 100 });
    expectList(res);
    expect(ids(res)).toEqual([s1]);
    res = await m.services.list({ roleFilter: [`#${tag}-a`, `#${tag}-c`], roleSemantic: 'AnyOf', limit: 100 });
    expect(ids(res)).toEqual([s1, s2, s3].sort());
    res = await m.services.list({ roleFilter: [`@${s3}`], limit: 100 });
    expect(ids(res)).toEqual([s3]);
    res = await m.services.list({ filter: `anyOf(roleAttributes) = "${tag}-a" sort by name desc` });
    expect(res.body.data.map((s: { id: string }) => s.id)).toHaveLength(2);
    expect(res.body.meta.filterableFields).toEqual(expect.arrayContaining(['name', 'roleAttributes', 'configs', 'terminatorStrategy']));
    expectError(await m.services.list({ filter: 'nosuch = 1' }), 400, 'INVALID_FILTER');
  });

  it('deletes, then answers 404', async () => {
    const id = await build.service();
    expectEmpty(await m.services.delete(id));
    expectError(await m.services.get(id), 404, 'NOT_FOUND');
    expectError(await m.services.delete(id), 404, 'NOT_FOUND');
  });
});

describe('client API service writes (admin only)', () => {
  it('PUT, PATCH and DELETE /edge/client/v1/services/{id} behave as the management operations, with the same bodies and answers', async () => {
    const admin = policyClients(await ctl().adminSession('client'));
    const id = await build.service(['a', 'b']);
    const name = (await m.services.get(id)).body.data.name as string;

    const patched = await admin.services.patch(id, { terminatorStrategy: 'weighted', bogus: true });
    expectEmpty(patched);
    expect(patched.body).toEqual({ data: {}, meta: {} });
    expect((await m.services.get(id)).body.data).toMatchObject({ name, terminatorStrategy: 'weighted', roleAttributes: ['a', 'b'] });

    const updated = await admin.services.update(id, { name, maxIdleTimeMillis: 7000 });
    expectEmpty(updated);
    expect(updated.body).toEqual({ data: {}, meta: {} });
    expect((await m.services.get(id)).body.data).toMatchObject({ terminatorStrategy: 'smartrouting', maxIdleTimeMillis: 7000, roleAttributes: [] });

    expectFieldError(await admin.services.update(id, { maxIdleTimeMillis: 1 }), 'name');
    expectFieldError(await admin.services.patch(id, { terminatorStrategy: 'nope' }), 'terminatorStrategy');
    expectError(await admin.services.patch('no-such-service', { terminatorStrategy: 'weighted' }), 404, 'NOT_FOUND');

    const deleted = await admin.services.delete(id);
    expectEmpty(deleted);
    expect(deleted.body).toEqual({ data: {}, meta: {} });
    expectError(await m.services.get(id), 404, 'NOT_FOUND');
    expectError(await admin.services.delete(id), 404, 'NOT_FOUND');
  });

  it('refuses a non-admin with 401 UNAUTHORIZED and changes nothing', async () => {
    const tag = unique('cw');
    const user = await build.identity([`${tag}-user`]);
    const c = policyClients(await loginClient(user.username, user.password));
    const id = await build.service([`${tag}-svc`]);
    await build.servicePolicy('Dial', [`#${tag}-svc`], [`#${tag}-user`]);
    const before = (await m.services.get(id)).body.data;
    expectError(await c.services.patch(id, { terminatorStrategy: 'weighted' }), 401, 'UNAUTHORIZED');
    expectError(await c.services.update(id, { name: before.name }), 401, 'UNAUTHORIZED');
    expectError(await c.services.delete(id), 401, 'UNAUTHORIZED');
    expect((await m.services.get(id)).body.data).toEqual(before);
    const anonymous = await ctl().http.request({ method: 'DELETE', path: `/edge/client/v1/services/${id}` });
    expectError(anonymous, 401, 'UNAUTHORIZED');
    expectSuccess(await m.services.get(id));
  });
});

describe("an identity's view", () => {
  let tag: string;
  let user: { id: string; username: string; password: string };
  let client: EdgeApi;
  let c: ReturnType<typeof policyClients>;
  const svc: Record<string, string> = {};

  beforeAll(async () => {
    tag = unique('view');
    user = await build.identity([`${tag}-user`]);
    client = await loginClient(user.username, user.password);
    c = policyClients(client);
    svc.dial = await build.service([`${tag}-dial`]);
    svc.bind = await build.service([`${tag}-bind`]);
    svc.both = await build.service([`${tag}-dial`, `${tag}-bind`]);
    svc.none = await build.service([]);
    await build.servicePolicy('Dial', [`#${tag}-dial`], [`#${tag}-user`]);
    await build.servicePolicy('Bind', [`#${tag}-bind`], [`#${tag}-user`]);
  });

  it('lists only the services a policy grants, with Bind before Dial and the dummy posture entries', async () => {
    const res = await c.services.list({ limit: 500 });
    expectList(res);
    expect(ids(res)).toEqual([svc.dial, svc.bind, svc.both].sort());
    const byId = Object.fromEntries(res.body.data.map((s: { id: string }) => [s.id, s]));
    expect(byId[svc.dial].permissions).toEqual(['Dial']);
    expect(byId[svc.bind].permissions).toEqual(['Bind']);
    expect(byId[svc.both].permissions).toEqual(['Bind', 'Dial']);
    expect(byId[svc.both].postureQueries).toEqual([
      { policyId: 'dummy bind policy: no posture checks defined', policyType: 'Bind', isPassing: true, postureQueries: [] },
      { policyId: 'dummy dial policy: no posture checks defined', policyType: 'Dial', isPassing: true, postureQueries: [] },
    ]);
    expect(res.body.meta.pagination).toEqual({ limit: 500, offset: 0, totalCount: 3 });
  });

  it('answers 404 to the client for a service without a policy, and shows it to the admin as Invalid', async () => {
    expectError(await c.services.get(svc.none), 404, 'NOT_FOUND');
    const filtered = await c.services.list({ filter: `id = "${svc.none}"` });
    expectList(filtered);
    expect(filtered.body.data).toEqual([]);
    const detail = await c.services.get(svc.both);
    expectSuccess(detail);
    expect(detail.body.data.permissions).toEqual(['Bind', 'Dial']);
    expect((await m.services.get(svc.none)).body.data.permissions).toEqual(['Invalid']);
  });

  it('shows the admin only what policies grant on the client API', async () => {
    const admin = policyClients(await ctl().adminSession('client'));
    const res = await admin.services.list({ filter: `id in ["${svc.dial}", "${svc.none}"]` });
    expectList(res);
    expect(res.body.data).toEqual([]);
  });

  it('sees a new identity, policy and attribute change on the very next request', async () => {
    const t = unique('next');
    const fresh = await build.identity([`${t}-u`]);
    const freshClient = await loginClient(fresh.username, fresh.password);
    const fc = policyClients(freshClient);
    const s = await build.service([`${t}-s`]);
    expect(ids(await fc.services.list())).toEqual([]);
    const updates = () => freshClient.call('GET', '/current-api-session/service-updates').then((r) => r.body?.data?.lastChangeAt as string);
    const before = await updates();
    const sp = await build.servicePolicy('Dial', [`#${t}-s`], [`#${t}-u`]);
    expect(ids(await fc.services.list())).toEqual([s]);
    // The policy change reaches the session context as a service-access.changed event.
    await eventually(updates, (at) => typeof at === 'string' && at > before, 'lastChangeAt to move after the grant');
    expectEmpty(await m.services.patch(s, { roleAttributes: ['other'] }));
    expect(ids(await fc.services.list())).toEqual([]);
    expectEmpty(await m.services.patch(s, { roleAttributes: [`${t}-s`] }));
    expectEmpty(await mgmt.identities.patch(fresh.id, { roleAttributes: [] }));
    expect(ids(await fc.services.list())).toEqual([]);
    expectEmpty(await mgmt.identities.patch(fresh.id, { roleAttributes: [`${t}-u`] }));
    expect(ids(await fc.services.list())).toEqual([s]);
    expectEmpty(await m.servicePolicies.delete(sp));
    expectError(await fc.services.get(s), 404, 'NOT_FOUND');
  });

  it('lists an identity services by policy type, and the service identities', async () => {
    let res = await m.subList('identities', user.id, 'services', { policyType: 'bind', limit: 100 });
    expectList(res);
    expect(ids(res)).toEqual([svc.bind, svc.both].sort());
    res = await m.subList('identities', user.id, 'services', { policyType: 'dial', limit: 100 });
    expect(ids(res)).toEqual([svc.dial, svc.both].sort());
    res = await m.subList('services', svc.both, 'identities', { policyType: 'Dial' });
    expectList(res);
    expect(ids(res)).toEqual([user.id]);
    expect(res.body.data[0]).toMatchObject({ id: user.id, roleAttributes: [`${tag}-user`] });
    expectError(await m.subList('identities', 'no-such-identity', 'services'), 404, 'NOT_FOUND');
  });

  it('shares edge routers through ERPs and SERPs: the client lists, the current identity, policy advice', async () => {
    const er1 = await build.edgeRouter([`${tag}-er`]);
    const er2 = await build.edgeRouter([`${tag}-er`, `${tag}-er2`]);
    expectList(await c.currentIdentityEdgeRouters());
    expect((await c.currentIdentityEdgeRouters()).body.data).toEqual([]);
    await build.edgeRouterPolicy([`#${tag}-er`], [`#${tag}-user`]);
    const current = await c.currentIdentityEdgeRouters();
    expectList(current);
    expect(ids(current)).toEqual([er1, er2].sort());
    await build.serviceEdgeRouterPolicy([`#${tag}-er2`], [`@${svc.both}`]);
    const shared = await c.serviceEdgeRouters(svc.both);
    expectSuccess(shared);
    expect(shared.body.data.edgeRouters.map((r: { name: string }) => r.name)).toHaveLength(1);
    expectError(await c.serviceEdgeRouters(svc.none), 404, 'NOT_FOUND');
    expectError(await c.serviceEdgeRouters(svc.both, { 'session-token': 'not-a-token' }), 401, 'UNAUTHORIZED');
    const session = await client.call('POST', '/sessions', { serviceId: svc.both, type: 'Dial' });
    expectSuccess(session, 201);
    expectSuccess(await c.serviceEdgeRouters(svc.both, { 'session-token': session.body.data.token }));
    const other = policyClients(await loginClient(user.username, user.password));
    expectError(await other.serviceEdgeRouters(svc.both, { 'session-token': session.body.data.token }), 401, 'UNAUTHORIZED');
    const advice = await m.policyAdvice(user.id, svc.both);
    expectSuccess(advice);
    expect(advice.body.data).toMatchObject({
      identityId: user.id, serviceId: svc.both, isBindAllowed: true, isDialAllowed: true, identityRouterCount: 2, serviceRouterCount: 1,
      commonRouters: [{ id: er2, isOnline: false, entity: 'edge-routers' }],
    });
    expectEmpty(await m.edgeRouters.delete(er1));
    expect(ids(await c.currentIdentityEdgeRouters())).toEqual([er2]);
    expectError(await m.policyAdvice(user.id, 'nope'), 404, 'NOT_FOUND');
  });

  it('lists a reachable service terminators for the client, 404 otherwise', async () => {
    const er = await build.edgeRouter();
    const t = expectCreated(await m.terminators.create({ service: svc.dial, router: er, binding: 'transport', address: 'tcp:localhost:80' }), 'terminators');
    const res = await c.subList('services', svc.dial, 'terminators');
    expectList(res);
    expect(res.body.data).toEqual([expect.objectContaining({ id: t, serviceId: svc.dial, routerId: er, identity: '' })]);
    expectError(await c.subList('services', svc.none, 'terminators'), 404, 'NOT_FOUND');
  });
});
