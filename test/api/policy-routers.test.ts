import type { EdgeApi } from '../support/clients.js';
import { ids, policyBuilder, policyClients, unique } from '../support/clients-policy.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectEmpty, expectError, expectFieldError, expectList, expectSuccess } from '../support/envelope.js';

/**
 * Edge routers (with the system identity and policy of a tunneler-enabled router, §5.4), transit
 * and fabric routers, terminators (§6.13), and the role attribute lists and their usage (§1.3).
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

describe('edge routers', () => {
  it('creates with defaults and shows the detail fields', async () => {
    const name = unique('er');
    const id = expectCreated(await m.edgeRouters.create({ name, roleAttributes: ['eu'], appData: { zone: 'a' } }), 'edge-routers');
    const d = await m.edgeRouters.get(id);
    expectSuccess(d);
    expect(d.body.data).toMatchObject({
      id, name, roleAttributes: ['eu'], appData: { zone: 'a' }, cost: 0, noTraversal: false, disabled: false, isTunnelerEnabled: false,
      isOnline: false, isVerified: false, hostname: '', supportedProtocols: {}, configs: [],
    });
    expect(d.body.data._links).toMatchObject({ self: { href: `./edge-routers/${id}` }, 'edge-router-policies': { href: `./edge-routers/${id}/edge-router-policies` } });
    expectList(await m.edgeRouters.list({ filter: `name = "${name}"` }));
    expect(ids(await m.routers.list({ filter: `name = "${name}"` }))).toEqual([id]);
    expect(ids(await m.transitRouters.list({ filter: `name = "${name}"` }))).toEqual([]);
  });

  it('validates cost 0..65535, names and role attributes; PATCH keeps the rest', async () => {
    expectFieldError(await m.edgeRouters.create({ name: unique('er'), cost: 65536 }));
    expectFieldError(await m.edgeRouters.create({ name: unique('er'), cost: -1 }));
    expectFieldError(await m.edgeRouters.create({ name: unique('er'), roleAttributes: ['@x'] }), 'roleAttributes');
    const id = await build.edgeRouter(['a'], { cost: 65535, noTraversal: true });
    expectEmpty(await m.edgeRouters.patch(id, { disabled: true }));
    expect((await m.edgeRouters.get(id)).body.data).toMatchObject({ cost: 65535, noTraversal: true, disabled: true, roleAttributes: ['a'] });
    const name = (await m.edgeRouters.get(id)).body.data.name;
    expectFieldError(await m.edgeRouters.create({ name }), 'name');
    expectEmpty(await m.edgeRouters.update(id, { name }));
    expect((await m.edgeRouters.get(id)).body.data).toMatchObject({ cost: 0, noTraversal: false, disabled: false, roleAttributes: [] });
    expectError(await m.edgeRouters.get('nope'), 404, 'NOT_FOUND');
  });

  it('gives a tunneler-enabled router a system identity and a system edge router policy that can not be changed', async () => {
    const id = await build.edgeRouter([], { isTunnelerEnabled: true });
    const erp = await m.edgeRouterPolicies.list({ filter: `name = "edge-router-${id}-system"` });
    expectList(erp);
    expect(erp.body.data).toHaveLength(1);
    const p = erp.body.data[0];
    expect(p).toMatchObject({ isSystem: true, semantic: 'AnyOf', edgeRouterRoles: [`@${id}`], identityRoles: [`@${id}`] });
    expect(ids(await m.subList('edge-router-policies', p.id, 'edge-routers'))).toEqual([id]);
    const identities = await m.subList('edge-router-policies', p.id, 'identities');
    expectList(identities);
    expect(identities.body.data[0]).toMatchObject({ id, typeId: 'Router', name: (await m.edgeRouters.get(id)).body.data.name });
    expectError(await m.edgeRouterPolicies.delete(p.id), 400, 'ENTITY_CAN_NOT_BE_DELETED');
    expectError(await m.edgeRouterPolicies.patch(p.id, { name: 'x' }), 400, 'ENTITY_CAN_NOT_BE_UPDATED');
    expectEmpty(await m.edgeRouters.patch(id, { isTunnelerEnabled: false }));
    expectError(await m.edgeRouterPolicies.get(p.id), 404, 'NOT_FOUND');
    expectEmpty(await m.edgeRouters.patch(id, { isTunnelerEnabled: true }));
    const again = (await m.edgeRouterPolicies.list({ filter: `name = "edge-router-${id}-system"` })).body.data[0];
    expectEmpty(await m.edgeRouters.delete(id));
    expectError(await m.edgeRouterPolicies.get(again.id), 404, 'NOT_FOUND');
    expectError(await m.edgeRouters.get(id), 404, 'NOT_FOUND');
  });
});

describe('transit and fabric routers', () => {
  it('keeps transit routers apart from edge routers; /routers shows every router', async () => {
    const t = expectCreated(await m.transitRouters.create({ name: unique('tr'), cost: 7 }), 'transit-routers');
    const d = await m.transitRouters.get(t);
    expectSuccess(d);
    expect(d.body.data).toMatchObject({ id: t, cost: 7, isOnline: false, isVerified: false, noTraversal: false, disabled: false });
    expectError(await m.edgeRouters.get(t), 404, 'NOT_FOUND');
    expect((await m.routers.get(t)).body.data.id).toBe(t);
    expectEmpty(await m.transitRouters.patch(t, { noTraversal: true }));
    expect((await m.routers.get(t)).body.data.noTraversal).toBe(true);
    const f = expectCreated(await m.routers.create({ name: unique('fr') }), 'routers');
    expect(ids(await m.transitRouters.list({ filter: `id in ["${t}", "${f}"]` }))).toEqual([t, f].sort());
    expectEmpty(await m.routers.delete(f));
    expectEmpty(await m.transitRouters.delete(t));
    expectError(await m.routers.get(t), 404, 'NOT_FOUND');
  });
});

describe('terminators', () => {
  it('creates, validates precedence and cost, updates and deletes', async () => {
    const s = await build.service();
    const er = await build.edgeRouter();
    const id = expectCreated(await m.terminators.create({ service: s, router: er, binding: 'transport', address: 'tcp:10.0.0.1:80', cost: 5, precedence: 'required' }), 'terminators');
    const d = await m.terminators.get(id);
    expectSuccess(d);
    expect(d.body.data).toMatchObject({ serviceId: s, routerId: er, binding: 'transport', address: 'tcp:10.0.0.1:80', cost: 5, precedence: 'required', dynamicCost: 0, identity: '' });
    expectFieldError(await m.terminators.create({ service: s, router: er, binding: 'b', address: 'a', precedence: 'best' }));
    expectFieldError(await m.terminators.create({ service: s, router: er, binding: 'b', address: 'a', cost: 70000 }));
    expectFieldError(await m.terminators.create({ service: 'nope', router: er, binding: 'b', address: 'a' }), 'service');
    expectFieldError(await m.terminators.create({ service: s, router: 'nope', binding: 'b', address: 'a' }), 'router');
    expectEmpty(await m.terminators.patch(id, { cost: 9 }));
    expect((await m.terminators.get(id)).body.data).toMatchObject({ cost: 9, precedence: 'required' });
    expect(ids(await m.subList('services', s, 'terminators'))).toEqual([id]);
    expectEmpty(await m.terminators.delete(id));
    expectError(await m.terminators.get(id), 404, 'NOT_FOUND');
    const gone = expectCreated(await m.terminators.create({ service: s, router: er, binding: 'b', address: 'a' }), 'terminators');
    expectEmpty(await m.services.delete(s));
    expectError(await m.terminators.get(gone), 404, 'NOT_FOUND');
  });
});

describe('role attributes and their usage', () => {
  it('lists the attributes of services and edge routers, only the filter paging', async () => {
    const p = unique('ra');
    await build.service([`${p}-b`, `${p}-a`]);
    await build.edgeRouter([`${p}-r`]);
    const res = await m.roleAttributes('service', { filter: `id contains "${p}"`, limit: 1 });
    expectList(res);
    expect(res.body.data).toEqual([`${p}-a`, `${p}-b`]);
    expect(res.text).toContain('"limit":9223372036854775807');
    const limited = await m.roleAttributes('service', { filter: `id contains "${p}" limit 1` });
    expect(limited.body.data).toEqual([`${p}-a`]);
    expect((await m.roleAttributes('edge-router', { filter: `id contains "${p}"` })).body.data).toEqual([`${p}-r`]);
  });

  it('counts the entities and policies that use each attribute, with ids on request', async () => {
    const p = unique('use');
    const svc = await build.service([`${p}-both`]);
    await build.service([`${p}-svc-only`]);
    const sp = await build.servicePolicy('Dial', [`#${p}-both`, `#${p}-sp-only`], ['#all']);
    const serp = await build.serviceEdgeRouterPolicy(['#all'], [`#${p}-serp-only`]);
    const res = await m.roleAttributeUsage('service', { filter: `id contains "${p}" sort by id`, withIds: 'true' });
    expectList(res);
    expect(res.body.data.map((u: { roleAttribute: string }) => u.roleAttribute)).toEqual([`${p}-both`, `${p}-serp-only`, `${p}-sp-only`, `${p}-svc-only`]);
    const both = res.body.data[0];
    expect(both.usage).toEqual({
      services: { count: 1, ids: [svc] },
      servicePolicies: { count: 1, ids: [sp] },
      serviceEdgeRouterPolicies: { count: 0, ids: [] },
    });
    expect(res.body.data[1].usage.serviceEdgeRouterPolicies).toEqual({ count: 1, ids: [serp] });
    const noIds = await m.roleAttributeUsage('service', { filter: `id contains "${p}" sort by id skip 1 limit 2` });
    expect(noIds.body.data.map((u: { roleAttribute: string }) => u.roleAttribute)).toEqual([`${p}-serp-only`, `${p}-sp-only`]);
    expect(noIds.body.data[0].usage.services).toEqual({ count: 0 });
    const er = await m.roleAttributeUsage('edge-router', { filter: `id contains "${p}"` });
    expectList(er);
    expect(er.body.data).toEqual([]);
  });
});
