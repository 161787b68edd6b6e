import type { EdgeApi } from '../support/clients.js';
import { ids, policyBuilder, policyClients, unique } from '../support/clients-policy.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectEmpty, expectError, expectFieldError, expectList, expectSuccess } from '../support/envelope.js';

/**
 * Role resolution of the three policy kinds (reference §5.1, §5.2): `#attr` under AllOf and AnyOf,
 * `#all`, `@id`, every validation rule, the display fields, and associations that move at once
 * when policies, attributes or entities change or go away.
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

const sub = (plural: string, id: string, name: string) => m.subList(plural, id, name, { limit: 500 }).then((r) => {
  expectList(r);
  return ids(r);
});

describe('service policies', () => {
  let t: string;
  const i: Record<string, string> = {};
  const s: Record<string, string> = {};

  beforeAll(async () => {
    t = unique('sp');
    i.ab = (await build.identity([`${t}-a`, `${t}-b`])).id;
    i.a = (await build.identity([`${t}-a`])).id;
    i.c = (await build.identity([`${t}-c`])).id;
    s.ab = await build.service([`${t}-a`, `${t}-b`]);
    s.b = await build.service([`${t}-b`]);
  });

  it('AllOf selects entities with every attribute, AnyOf with any', async () => {
    const allOf = await build.servicePolicy('Dial', [`#${t}-a`, `#${t}-b`], [`#${t}-a`, `#${t}-b`], 'AllOf');
    expect(await sub('service-policies', allOf, 'identities')).toEqual([i.ab]);
    expect(await sub('service-policies', allOf, 'services')).toEqual([s.ab]);
    const anyOf = await build.servicePolicy('Dial', [`#${t}-a`, `#${t}-b`], [`#${t}-a`, `#${t}-c`], 'AnyOf');
    expect(await sub('service-policies', anyOf, 'identities')).toEqual([i.ab, i.a, i.c].sort());
    expect(await sub('service-policies', anyOf, 'services')).toEqual([s.ab, s.b].sort());
    expect(await sub('identities', i.c, 'service-policies')).toEqual([anyOf]);
    expect(await sub('services', s.b, 'service-policies')).toEqual([anyOf]);
    expect(await sub('identities', i.ab, 'service-policies')).toEqual([allOf, anyOf].sort());
  });

  it('#all selects every entity, @id exactly one, and both show in the display fields', async () => {
    const all = await build.servicePolicy('Bind', ['#all'], [`@${i.a}`]);
    const services = await sub('service-policies', all, 'services');
    expect(services).toEqual(expect.arrayContaining([s.ab, s.b]));
    expect(await sub('service-policies', all, 'identities')).toEqual([i.a]);
    const d = await m.servicePolicies.get(all);
    expectSuccess(d);
    const name = (await mgmt.identities.get(i.a)).body.data.name;
    expect(d.body.data).toMatchObject({
      type: 'Bind', semantic: 'AllOf', serviceRoles: ['#all'], identityRoles: [`@${i.a}`], postureCheckRoles: [],
      serviceRolesDisplay: [{ role: '#all', name: '#all' }],
      identityRolesDisplay: [{ role: `@${i.a}`, name: `@${name}` }],
      postureCheckRolesDisplay: [],
    });
    expect(d.body.data._links).toMatchObject({ services: { href: `./service-policies/${all}/services` }, 'posture-checks': { href: `./service-policies/${all}/posture-checks` } });
  });

  it('moves associations at once on policy update, entity attribute change and delete', async () => {
    const p = await build.servicePolicy('Dial', [`#${t}-b`], [`#${t}-c`]);
    expect(await sub('service-policies', p, 'identities')).toEqual([i.c]);
    expectEmpty(await m.servicePolicies.patch(p, { identityRoles: [`#${t}-a`] }));
    expect(await sub('service-policies', p, 'identities')).toEqual([i.ab, i.a].sort());
    expectEmpty(await mgmt.identities.patch(i.c, { roleAttributes: [`${t}-a`, `${t}-c`] }));
    expect(await sub('service-policies', p, 'identities')).toEqual([i.ab, i.a, i.c].sort());
    expectEmpty(await mgmt.identities.patch(i.c, { roleAttributes: [`${t}-c`] }));
    expect(await sub('service-policies', p, 'identities')).toEqual([i.ab, i.a].sort());
    expectEmpty(await m.services.patch(s.b, { roleAttributes: [] }));
    expect(await sub('service-policies', p, 'services')).toEqual([s.ab]);
    expectEmpty(await m.services.patch(s.b, { roleAttributes: [`${t}-b`] }));
    expect(await sub('service-policies', p, 'services')).toEqual([s.ab, s.b].sort());
    expectEmpty(await m.servicePolicies.update(p, { name: unique('sp'), type: 'Bind', semantic: 'AnyOf', serviceRoles: [`@${s.b}`], identityRoles: [] }));
    expect(await sub('service-policies', p, 'identities')).toEqual([]);
    expect(await sub('service-policies', p, 'services')).toEqual([s.b]);
    expectEmpty(await m.servicePolicies.delete(p));
    expectError(await m.servicePolicies.get(p), 404, 'NOT_FOUND');
    expect(await sub('services', s.b, 'service-policies')).not.toContain(p);
  });

  it('removes @id entries when their entity is deleted', async () => {
    const svc = await build.service();
    const who = await build.identity();
    const p = await build.servicePolicy('Dial', [`@${svc}`, `#${t}-b`], [`@${who.id}`]);
    expectEmpty(await m.services.delete(svc));
    expectEmpty(await mgmt.identities.delete(who.id));
    const d = (await m.servicePolicies.get(p)).body.data;
    expect(d.serviceRoles).toEqual([`#${t}-b`]);
    expect(d.identityRoles).toEqual([]);
  });

  it('validates names, types, semantics and role entries (§5.1)', async () => {
    const base = { name: unique('sp'), type: 'Dial', semantic: 'AllOf' };
    expectFieldError(await m.servicePolicies.create({ ...base, name: '' }), 'name');
    expectFieldError(await m.servicePolicies.create({ ...base, type: 'Invalid' }), 'type');
    expectFieldError(await m.servicePolicies.create({ ...base, semantic: 'OneOf' }), 'semantic');
    expectFieldError(await m.servicePolicies.create({ ...base, identityRoles: ['plain'] }), 'identityRoles');
    expectFieldError(await m.servicePolicies.create({ ...base, serviceRoles: ['#all', '#x'] }), 'serviceRoles');
    expectFieldError(await m.servicePolicies.create({ ...base, identityRoles: ['@no-such-identity'] }), 'identityRoles');
    expectFieldError(await m.servicePolicies.create({ ...base, postureCheckRoles: ['@no-such-check'] }), 'postureCheckRoles');
    expectFieldError(await m.servicePolicies.create({ type: 'Dial', semantic: 'AllOf' }));
    const p = await build.servicePolicy('Dial', [], []);
    expectFieldError(await m.servicePolicies.create({ ...base, name: (await m.servicePolicies.get(p)).body.data.name }), 'name');
    expectError(await m.servicePolicies.patch('no-such-policy', { name: 'x' }), 404, 'NOT_FOUND');
  });
});

describe('edge router policies and service edge router policies', () => {
  let t: string;
  const i: Record<string, string> = {};
  const er: Record<string, string> = {};
  const s: Record<string, string> = {};

  beforeAll(async () => {
    t = unique('erp');
    i.x = (await build.identity([`${t}-x`])).id;
    i.y = (await build.identity([`${t}-y`])).id;
    er.x = await build.edgeRouter([`${t}-x`]);
    er.xy = await build.edgeRouter([`${t}-x`, `${t}-y`]);
    s.x = await build.service([`${t}-x`]);
  });

  it('links identities and edge routers both ways, and follows their attributes', async () => {
    const p = await build.edgeRouterPolicy([`#${t}-x`, `#${t}-y`], [`#${t}-x`], 'AnyOf');
    expect(await sub('edge-router-policies', p, 'edge-routers')).toEqual([er.x, er.xy].sort());
    expect(await sub('edge-router-policies', p, 'identities')).toEqual([i.x]);
    expect(await sub('identities', i.x, 'edge-router-policies')).toEqual([p]);
    expect(await sub('identities', i.x, 'edge-routers')).toEqual([er.x, er.xy].sort());
    expect(await sub('edge-routers', er.x, 'edge-router-policies')).toEqual([p]);
    expect(await sub('edge-routers', er.x, 'identities')).toEqual([i.x]);
    expectEmpty(await m.edgeRouters.patch(er.x, { roleAttributes: [] }));
    expect(await sub('edge-router-policies', p, 'edge-routers')).toEqual([er.xy]);
    expect(await sub('identities', i.x, 'edge-routers')).toEqual([er.xy]);
    expectEmpty(await m.edgeRouterPolicies.patch(p, { semantic: 'AllOf' }));
    expect(await sub('edge-router-policies', p, 'edge-routers')).toEqual([er.xy]);
    expectEmpty(await m.edgeRouters.patch(er.x, { roleAttributes: [`${t}-x`] }));
    const d = await m.edgeRouterPolicies.get(p);
    expectSuccess(d);
    expect(d.body.data).toMatchObject({ isSystem: false, edgeRouterRolesDisplay: [{ role: `#${t}-x`, name: `#${t}-x` }, { role: `#${t}-y`, name: `#${t}-y` }] });
    expectEmpty(await m.edgeRouterPolicies.delete(p));
    expect(await sub('identities', i.x, 'edge-routers')).toEqual([]);
  });

  it('links services and edge routers both ways', async () => {
    const p = await build.serviceEdgeRouterPolicy([`@${er.xy}`], ['#all']);
    expect(await sub('service-edge-router-policies', p, 'edge-routers')).toEqual([er.xy]);
    expect(await sub('service-edge-router-policies', p, 'services')).toEqual(expect.arrayContaining([s.x]));
    expect(await sub('services', s.x, 'service-edge-router-policies')).toContain(p);
    expect(await sub('services', s.x, 'edge-routers')).toEqual([er.xy]);
    expect(await sub('edge-routers', er.xy, 'services')).toContain(s.x);
    const list = await m.subList('edge-routers', er.xy, 'service-edge-router-policies');
    expectList(list);
    expect(ids(list)).toEqual([p]);
    const d = (await m.serviceEdgeRouterPolicies.get(p)).body.data;
    const erName = (await m.edgeRouters.get(er.xy)).body.data.name;
    expect(d.edgeRouterRolesDisplay).toEqual([{ role: `@${er.xy}`, name: `@${erName}` }]);
    expectEmpty(await m.edgeRouters.delete(er.xy));
    expect((await m.serviceEdgeRouterPolicies.get(p)).body.data.edgeRouterRoles).toEqual([]);
    expect(await sub('services', s.x, 'edge-routers')).toEqual([]);
  });

  it('validates role entries and @ids of routers', async () => {
    expectFieldError(await m.edgeRouterPolicies.create({ name: unique('erp'), semantic: 'AllOf', edgeRouterRoles: ['@no-router'] }), 'edgeRouterRoles');
    expectFieldError(await m.serviceEdgeRouterPolicies.create({ name: unique('serp'), semantic: 'AnyOf', serviceRoles: ['#all', '@x'] }), 'serviceRoles');
    expectFieldError(await m.serviceEdgeRouterPolicies.create({ name: unique('serp') }));
    const transit = expectCreated(await m.transitRouters.create({ name: unique('tr') }), 'transit-routers');
    expectFieldError(await m.edgeRouterPolicies.create({ name: unique('erp'), semantic: 'AllOf', edgeRouterRoles: [`@${transit}`] }), 'edgeRouterRoles');
  });
});

describe('association lists whose items are identities', () => {
  it("carry identity-auth's rendering: each item deep-equals the identity's item of GET /identities", async () => {
    const t = unique('render');
    const user = await build.identity([`${t}-u`], { tags: { team: 'blue' }, defaultHostingCost: 7 });
    // An API session with SDK and environment info, and an outstanding enrollment: fields only identity-auth knows.
    const login = await ctl().http.request({
      method: 'POST',
      path: '/edge/client/v1/authenticate?method=password',
      json: { username: user.username, password: user.password, sdkInfo: { type: 'ziti-sdk-golang', version: '1.2.3' }, envInfo: { os: 'linux', arch: 'amd64' } },
    });
    expectSuccess(login);
    expectCreated(await mgmt.call('POST', '/enrollments', { method: 'ott', identityId: user.id, expiresAt: new Date(Date.now() + 3_600_000).toISOString() }), 'enrollments');

    const serviceId = await build.service([`${t}-s`]);
    const routerId = await build.edgeRouter([`${t}-r`]);
    const spId = await build.servicePolicy('Dial', [`#${t}-s`], [`#${t}-u`]);
    const erpId = await build.edgeRouterPolicy([`#${t}-r`], [`#${t}-u`]);

    const listed = await mgmt.call('GET', `/identities?filter=${encodeURIComponent(`id = "${user.id}"`)}`);
    expectList(listed);
    const expected = listed.body.data[0] as Record<string, any>;
    expect(expected).toMatchObject({ id: user.id, hasApiSession: true, sdkInfo: { type: 'ziti-sdk-golang', version: '1.2.3' }, envInfo: { os: 'linux', arch: 'amd64' }, defaultHostingCost: 7 });
    expect(Object.keys(expected.authenticators)).toEqual(['updb']);
    expect(expected.enrollment.ott).toMatchObject({ id: expect.any(String), jwt: expect.any(String) });

    for (const [plural, id] of [['service-policies', spId], ['edge-router-policies', erpId], ['services', serviceId], ['edge-routers', routerId]] as const) {
      const res = await m.subList(plural, id, 'identities', { limit: 500 });
      expectList(res);
      const item = (res.body.data as { id: string }[]).find((x) => x.id === user.id);
      expect({ list: `${plural}/{id}/identities`, item }).toEqual({ list: `${plural}/{id}/identities`, item: expected });
    }
  });
});
