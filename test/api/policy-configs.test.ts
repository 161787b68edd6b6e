import { BASE, type EdgeApi } from '../support/clients.js';
import { ids, policyBuilder, policyClients, unique } from '../support/clients-policy.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectEmpty, expectError, expectFieldError, expectList, expectSuccess } from '../support/envelope.js';
import { EdgeApi as Api } from '../support/clients.js';

/**
 * Config types and configs (reference §6.10): the built-ins at their fixed ids, schemas validated
 * as schemas, data validated against them (`(root)` errors), the type immutable, every 409; and the
 * client service list's `config` map by requested type, `all`, and identity overrides.
 */

const ctl = useController({ natsUrl: undefined });
failOnConformanceProblems();

let mgmt: EdgeApi;
let m: ReturnType<typeof policyClients>;
let build: ReturnType<typeof policyBuilder>;

const HOST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['hostname', 'port'],
  properties: { hostname: { type: 'string' }, port: { type: 'integer', minimum: 0, maximum: 65535 } },
};

beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
  m = policyClients(mgmt);
  build = policyBuilder(mgmt);
});

describe('config types', () => {
  it('has the built-in config types at their fixed ids, names and targets', async () => {
    const expected: [string, string, string][] = [
      ['f2dd2df0-9c04-4b84-a91e-71437ac229f1', 'ziti-tunneler-client.v1', 'service'],
      ['cea49285-6c07-42cf-9f52-09a9b115c783', 'ziti-tunneler-server.v1', 'service'],
      ['g7cIWbcGg', 'intercept.v1', 'service'],
      ['NH5p4FpGR', 'host.v1', 'service'],
      ['host.v2', 'host.v2', 'service'],
      ['interfaces.v1', 'interfaces.v1', 'service'],
      ['proxy.v1', 'proxy.v1', 'service'],
      ['router.link.v1', 'router.link.v1', 'router'],
    ];
    for (const [id, name, target] of expected) {
      const res = await m.configTypes.get(id);
      expectSuccess(res);
      expect(res.body.data).toMatchObject({ id, name, target });
    }
    const intercept = (await m.configTypes.get('g7cIWbcGg')).body.data.schema;
    expect(intercept.required).toEqual(['protocols', 'addresses', 'portRanges']);
    expect(intercept.$id).toBe('http://edge.openziti.org/schemas/intercept.v1.config.json');
    const list = await m.configTypes.list({ filter: 'name = "host.v2"' });
    expectList(list);
    expect(ids(list)).toEqual(['host.v2']);
  });

  it('creates with an optional schema, refuses an invalid schema and a bad target', async () => {
    const id = expectCreated(await m.configTypes.create({ name: unique('ct') }), 'config-types');
    expect((await m.configTypes.get(id)).body.data).toMatchObject({ schema: {}, target: 'service' });
    expectFieldError(await m.configTypes.create({ name: unique('ct'), schema: { type: 'no-such-type' } }), 'schema');
    expectFieldError(await m.configTypes.create({ name: unique('ct'), target: 'elsewhere' }), 'target');
    expectFieldError(await m.configTypes.create({ schema: {} }));
    const name = unique('ct');
    await build.configType({}, { name });
    expectFieldError(await m.configTypes.create({ name }), 'name');
  });

  it('lists its configs and refuses to delete while configs use it (409)', async () => {
    const type = await build.configType(HOST_SCHEMA);
    const cfg = await build.config(type, { hostname: 'a', port: 1 });
    const res = await m.subList('config-types', type, 'configs');
    expectList(res);
    expect(ids(res)).toEqual([cfg]);
    const del = await m.configTypes.delete(type);
    expectError(del, 409, 'CAN_NOT_DELETE_REFERENCED_ENTITY');
    expect(del.body.error.cause).toMatchObject({ field: 'configs' });
    expectEmpty(await m.configs.delete(cfg));
    expectEmpty(await m.configTypes.delete(type));
    expectError(await m.configTypes.get(type), 404, 'NOT_FOUND');
  });
});

describe('configs', () => {
  let type: string;
  beforeAll(async () => {
    type = await build.configType(HOST_SCHEMA);
  });

  it('validates data against the type schema, with the (root) field for the document itself', async () => {
    const missing = await m.configs.create({ name: unique('cfg'), configTypeId: type, data: { hostname: 'x' } });
    expectFieldError(missing, '(root)');
    expect(missing.body.error.cause.reason).toContain('port is required');
    expectFieldError(await m.configs.create({ name: unique('cfg'), configTypeId: type, data: { hostname: 'x', port: 'eighty' } }), 'port');
    expectFieldError(await m.configs.create({ name: unique('cfg'), configTypeId: 'no-such-type', data: {} }), 'configTypeId');
    expectFieldError(await m.configs.create({ name: unique('cfg'), configTypeId: type }));
    expectFieldError(await m.configs.create({ configTypeId: type, data: { hostname: 'x', port: 1 } }));
    expectFieldError(await m.configs.create({ name: unique('cfg'), configTypeId: 'g7cIWbcGg', data: { protocols: ['tcp'] } }), '(root)');
    expectCreated(await m.configs.create({ name: unique('cfg'), configTypeId: 'g7cIWbcGg', data: { protocols: ['tcp'], addresses: ['x.ziti'], portRanges: [{ low: 80, high: 80 }] } }), 'configs');
  });

  it('keeps the type, and PATCH of data alone leaves name and tags', async () => {
    const id = expectCreated(await m.configs.create({ name: unique('cfg'), configTypeId: type, data: { hostname: 'a', port: 1 }, tags: { k: 'v' } }), 'configs');
    const before = (await m.configs.get(id)).body.data;
    expect(before).toMatchObject({ configTypeId: type, configType: { id: type, entity: 'config-types' }, data: { hostname: 'a', port: 1 }, tags: { k: 'v' } });
    expectEmpty(await m.configs.patch(id, { data: { hostname: 'b', port: 2 } }));
    expect((await m.configs.get(id)).body.data).toMatchObject({ name: before.name, tags: { k: 'v' }, data: { hostname: 'b', port: 2 } });
    expectFieldError(await m.configs.patch(id, { data: { hostname: 'b' } }), '(root)');
    // configTypeId is not a field of an update (the type never changes): it is ignored.
    expectEmpty(await m.configs.update(id, { name: before.name, data: { hostname: 'c', port: 3 }, configTypeId: 'host.v2' }));
    expect((await m.configs.get(id)).body.data).toMatchObject({ configTypeId: type, tags: {} });
  });

  it('lists the services of a config, refuses two configs of one type on a service, and a router config on a service', async () => {
    const c1 = await build.config(type, { hostname: 'a', port: 1 });
    const c2 = await build.config(type, { hostname: 'b', port: 2 });
    const s = await build.service([], [c1]);
    const res = await m.subList('configs', c1, 'services');
    expectList(res);
    expect(ids(res)).toEqual([s]);
    expect(ids(await m.subList('services', s, 'configs'))).toEqual([c1]);
    expectFieldError(await m.services.create({ name: unique('svc'), encryptionRequired: false, configs: [c1, c2] }), 'configs');
    const link = await build.config('router.link.v1', {});
    expectFieldError(await m.services.create({ name: unique('svc'), encryptionRequired: false, configs: [link] }), 'configs');
    expectFieldError(await m.edgeRouters.create({ name: unique('er'), configs: [c1] }), 'configs');
    expectCreated(await m.edgeRouters.create({ name: unique('er'), configs: [link] }), 'edge-routers');
    expectEmpty(await m.configs.delete(c1));
    expect((await m.services.get(s)).body.data.configs).toEqual([]);
  });
});

describe("the client's config map", () => {
  let t: string;
  let user: { id: string; username: string; password: string };
  const type: Record<string, string> = {};
  const typeName: Record<string, string> = {};
  const cfg: Record<string, string> = {};
  let svc: string;
  let svcPlain: string;

  async function clientWith(configTypes?: string[]): Promise<ReturnType<typeof policyClients>> {
    const res = await ctl().http.request({
      method: 'POST',
      path: `${BASE.client}/authenticate?method=password`,
      json: { username: user.username, password: user.password, ...(configTypes ? { configTypes } : {}) },
    });
    expectSuccess(res);
    return policyClients(new Api(ctl().http, 'client', res.body.data.token));
  }

  beforeAll(async () => {
    t = unique('cm');
    for (const k of ['one', 'two', 'three']) {
      typeName[k] = unique(`ct-${k}`);
      type[k] = await build.configType({}, { name: typeName[k] });
    }
    cfg.one = await build.config(type.one, { v: 'one' });
    cfg.two = await build.config(type.two, { v: 'two' });
    cfg.three = await build.config(type.three, { v: 'three' });
    cfg.oneOverride = await build.config(type.one, { v: 'one-override' });
    svc = await build.service([`${t}-s`], [cfg.one, cfg.two]);
    svcPlain = await build.service([`${t}-s`]);
    user = await build.identity([`${t}-u`]);
    await build.servicePolicy('Dial', [`#${t}-s`], [`#${t}-u`]);
  });

  const configOf = async (c: ReturnType<typeof policyClients>, query?: Record<string, string | string[]>) => {
    const res = await c.services.list({ ...query, filter: `id = "${svc}"` });
    expectList(res);
    return res.body.data[0].config;
  };

  it('fills config only for the requested types: none, by name, all, and the query beating the session', async () => {
    const none = await clientWith();
    expect(await configOf(none)).toEqual({});
    expect((await none.services.get(svc)).body.data.configs).toEqual([cfg.one, cfg.two]);
    const byName = await clientWith([typeName.one]);
    expect(await configOf(byName)).toEqual({ [typeName.one]: { v: 'one' } });
    expect((await byName.services.get(svc)).body.data.config).toEqual({ [typeName.one]: { v: 'one' } });
    expect(await configOf(byName, { configTypes: [typeName.two] })).toEqual({ [typeName.two]: { v: 'two' } });
    expect(await configOf(none, { configTypes: 'all' })).toEqual({ [typeName.one]: { v: 'one' }, [typeName.two]: { v: 'two' } });
    expect(await configOf(await clientWith(['all']))).toEqual({ [typeName.one]: { v: 'one' }, [typeName.two]: { v: 'two' } });
  });

  it('applies identity overrides, lists them, and removes some or all of them', async () => {
    const pairs = [
      { serviceId: svc, configId: cfg.oneOverride },
      { serviceId: svcPlain, configId: cfg.three },
    ];
    expectEmpty(await m.serviceConfigs.assign(user.id, pairs));
    const listed = await m.serviceConfigs.list(user.id);
    expectList(listed);
    expect(listed.body.data.map((d: { serviceId: string; configId: string }) => ({ serviceId: d.serviceId, configId: d.configId })).sort((a: any, b: any) => a.serviceId.localeCompare(b.serviceId))).toEqual(
      [...pairs].sort((a, b) => a.serviceId.localeCompare(b.serviceId)),
    );
    const all = await clientWith(['all']);
    expect(await configOf(all)).toEqual({ [typeName.one]: { v: 'one-override' }, [typeName.two]: { v: 'two' } });
    const plain = await all.services.get(svcPlain);
    expect(plain.body.data.config).toEqual({ [typeName.three]: { v: 'three' } });
    expectError(await m.configs.delete(cfg.oneOverride), 409, 'CAN_NOT_DELETE_REFERENCED_ENTITY');
    expectEmpty(await m.serviceConfigs.remove(user.id, [{ serviceId: svc, configId: cfg.oneOverride }]));
    expect(await configOf(all)).toEqual({ [typeName.one]: { v: 'one' }, [typeName.two]: { v: 'two' } });
    expectEmpty(await m.serviceConfigs.remove(user.id));
    expect((await m.serviceConfigs.list(user.id)).body.data).toEqual([]);
    expectFieldError(await m.serviceConfigs.assign(user.id, [{ serviceId: 'nope', configId: cfg.one }]), 'serviceId');
    expectError(await m.serviceConfigs.list('no-such-identity'), 404, 'NOT_FOUND');
  });
});
