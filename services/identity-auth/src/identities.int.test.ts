import type { RequestPrincipal } from '@ziti/http-kit';
import { principalCacheKey, tokenHash } from '@ziti/http-kit';
import { Harness, M } from './testing/harness.js';

describe('management identities', () => {
  let h: Harness;
  let admin: RequestPrincipal;

  const create = (body: Record<string, unknown>, principal = admin) => h.call('POST', `${M}/identities`, { principal, body });
  const detail = async (id: string) => (await h.call('GET', `${M}/identities/${id}`, { principal: admin })).body.data;
  const newIdentity = async (body: Record<string, unknown> = {}) => {
    const res = await create({ name: `id-${Math.random().toString(36).slice(2, 10)}`, type: 'User', isAdmin: false, ...body });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  };
  const field = (res: { status: number; body: any }) => [res.status, res.body.error?.code, res.body.error?.cause?.field];

  beforeAll(async () => {
    h = await Harness.start();
    admin = (await h.login()).principal;
  });
  afterAll(async () => {
    await h?.close();
  });

  it('creates an identity with every field and shows it in the detail view', async () => {
    const res = await create({
      name: 'laptop-1',
      type: 'Device',
      isAdmin: false,
      roleAttributes: ['sales', 'emea'],
      tags: { owner: 'alice', n: 1 },
      appData: { color: 'blue' },
      externalId: 'ext-1',
      defaultHostingPrecedence: 'required',
      defaultHostingCost: 42,
      serviceHostingPrecedences: { svc1: 'failed' },
      serviceHostingCosts: { svc1: 7 },
      permissions: ['service.read'],
    });
    expect(res.status).toBe(201);
    const id = res.body.data.id;
    expect(res.body).toEqual({ data: { id, _links: { self: { href: `./identities/${id}` } } }, meta: {} });

    const d = await detail(id);
    expect(d).toEqual({
      id,
      name: 'laptop-1',
      type: { id: 'Default', name: 'Default', entity: 'identity-types', _links: { self: { href: './identity-types/Default' } } },
      typeId: 'Default',
      isAdmin: false,
      isDefaultAdmin: false,
      roleAttributes: ['sales', 'emea'],
      tags: { owner: 'alice', n: 1 },
      appData: { color: 'blue' },
      authPolicy: { id: 'default', name: 'Default', entity: 'auth-policies', _links: { self: { href: './auth-policies/default' } } },
      authPolicyId: 'default',
      externalId: 'ext-1',
      hasApiSession: false,
      hasEdgeRouterConnection: false,
      edgeRouterConnectionStatus: 'offline',
      isMfaEnabled: false,
      sdkInfo: {},
      envInfo: {},
      disabled: false,
      disabledAt: null,
      disabledUntil: null,
      defaultHostingPrecedence: 'required',
      defaultHostingCost: 42,
      serviceHostingPrecedences: { svc1: 'failed' },
      serviceHostingCosts: { svc1: 7 },
      permissions: ['service.read'],
      authenticators: {},
      enrollment: {},
      interfaces: [],
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updatedAt: expect.stringMatching(/Z$/),
      _links: expect.objectContaining({
        self: { href: `./identities/${id}` },
        'edge-router-policies': { href: `./identities/${id}/edge-router-policies` },
        services: { href: `./identities/${id}/services` },
        'auth-policies': { href: './auth-policies/default' },
      }),
    });
    expect(Object.keys(d._links).sort()).toEqual(
      ['auth-policies', 'authenticators', 'edge-router-policies', 'edge-routers', 'enrollments', 'failed-service-requests',
        'posture-data', 'self', 'service-configs', 'service-policies', 'services'].sort(),
    );
    await h.settle();
    expect(h.events.some((e) => e.type === 'identity.created' && e.data.identityId === id)).toBe(true);
  });

  it('defaults the optional fields and maps the API types', async () => {
    const d = await detail(await newIdentity({ type: 'Router' }));
    expect(d).toMatchObject({
      typeId: 'Router',
      roleAttributes: [],
      tags: {},
      appData: {},
      externalId: null,
      authPolicyId: 'default',
      defaultHostingPrecedence: 'default',
      defaultHostingCost: 0,
      permissions: [],
    });
    for (const type of ['User', 'Service', 'Default']) expect((await detail(await newIdentity({ type }))).typeId).toBe('Default');
  });

  it('validates the document', async () => {
    expect(field(await create({ type: 'User', isAdmin: false }))).toEqual([400, 'COULD_NOT_VALIDATE', 'name']);
    expect(field(await create({ name: '', type: 'User', isAdmin: false }))).toEqual([400, 'COULD_NOT_VALIDATE', 'name']);
    expect(field(await create({ name: 'x1', isAdmin: false }))).toEqual([400, 'COULD_NOT_VALIDATE', 'type']);
    expect(field(await create({ name: 'x1', type: 'User' }))).toEqual([400, 'COULD_NOT_VALIDATE', 'isAdmin']);
    expect(field(await create({ name: 'x1', type: 'Robot', isAdmin: false }))).toEqual([400, 'COULD_NOT_VALIDATE', 'type']);
    expect(field(await create({ name: 'x-extra', type: 'User', isAdmin: false, surprise: 1 }))).toEqual([201, undefined, undefined]); // an unknown field is ignored
    expect(field(await create({ name: 'x1', type: 'User', isAdmin: false, permissions: ['root'] }))).toEqual([400, 'COULD_NOT_VALIDATE', 'permissions']);
    expect(field(await create({ name: 'x1', type: 'User', isAdmin: false, authPolicyId: 'nope' }))).toEqual([400, 'COULD_NOT_VALIDATE', 'authPolicyId']);
    expect(field(await create({ name: 'x1', type: 'User', isAdmin: false, defaultHostingCost: 65536 }))).toEqual([400, 'COULD_NOT_VALIDATE', 'defaultHostingCost']);
    expect(field(await create({ name: 'x1', type: 'User', isAdmin: false, defaultHostingPrecedence: 'sometimes' }))).toEqual([400, 'COULD_NOT_VALIDATE', 'defaultHostingPrecedence']);
    expect(field(await create({ name: 'x1', type: 'User', isAdmin: false, serviceHostingPrecedences: { s: 'x' } }))).toEqual([400, 'COULD_NOT_VALIDATE', 'serviceHostingPrecedences']);
    const attr = await create({ name: 'x1', type: 'User', isAdmin: false, roleAttributes: ['ok', '#bad'] });
    expect(attr.body.error.cause).toEqual({ field: 'roleAttributes', reason: 'role attributes may not be prefixed with #', value: '#bad' });
    expect(field(await create({ name: 'x1', type: 'User', isAdmin: false, roleAttributes: ['@bad'] }))).toEqual([400, 'COULD_NOT_VALIDATE', 'roleAttributes']);
    expect(await h.sql("SELECT id FROM identities WHERE name = 'x1'")).toHaveLength(0);
  });

  it('keeps names and external ids unique', async () => {
    await newIdentity({ name: 'unique-one', externalId: 'ext-u' });
    const dup = await create({ name: 'unique-one', type: 'User', isAdmin: false });
    expect(dup.status).toBe(400);
    expect(dup.body.error).toMatchObject({ code: 'COULD_NOT_VALIDATE', cause: { field: 'name', reason: 'name must be unique', value: 'unique-one' } });
    expect(field(await create({ name: 'unique-two', type: 'User', isAdmin: false, externalId: 'ext-u' }))).toEqual([400, 'COULD_NOT_VALIDATE', 'externalId']);
    const other = await newIdentity();
    expect(field(await h.call('PATCH', `${M}/identities/${other}`, { principal: admin, body: { name: 'unique-one' } }))).toEqual([
      400, 'COULD_NOT_VALIDATE', 'name',
    ]);
  });

  it('PATCH changes only the fields present; PUT replaces every field', async () => {
    const id = await newIdentity({ roleAttributes: ['a'], tags: { t: 'x' }, externalId: 'ext-p', defaultHostingCost: 5, permissions: ['ca'] });
    const patch = await h.call('PATCH', `${M}/identities/${id}`, { principal: admin, body: { appData: { k: 1 }, isDefaultAdmin: true } });
    expect(patch.status).toBe(200);
    expect(patch.body).toEqual({ data: {}, meta: {} });
    expect(await detail(id)).toMatchObject({ roleAttributes: ['a'], tags: { t: 'x' }, appData: { k: 1 }, externalId: 'ext-p', defaultHostingCost: 5, permissions: ['ca'], isDefaultAdmin: false });

    await h.call('PATCH', `${M}/identities/${id}`, { principal: admin, body: { roleAttributes: null, isAdmin: true, type: 'Router' } });
    expect(await detail(id)).toMatchObject({ roleAttributes: [], isAdmin: true, typeId: 'Router', tags: { t: 'x' } });

    const put = await h.call('PUT', `${M}/identities/${id}`, { principal: admin, body: { name: 'replaced', type: 'User', isAdmin: false } });
    expect(put.status).toBe(200);
    expect(await detail(id)).toMatchObject({
      name: 'replaced', typeId: 'Default', isAdmin: false, roleAttributes: [], tags: {}, appData: {}, externalId: null,
      defaultHostingCost: 0, defaultHostingPrecedence: 'default', permissions: [], authPolicyId: 'default',
    });
    expect(field(await h.call('PUT', `${M}/identities/${id}`, { principal: admin, body: { name: 'replaced', isAdmin: false } }))).toEqual([400, 'COULD_NOT_VALIDATE', 'type']);
    expect((await h.call('PATCH', `${M}/identities/nope`, { principal: admin, body: { name: 'z' } })).status).toBe(404);
  });

  it('an update drops the cached principals of the identity and publishes identity.updated', async () => {
    const id = await newIdentity({ name: 'with-login' });
    await h.sql("INSERT INTO authenticators (id, identity_id, method, username, password, salt) SELECT 'auth1', $1, 'updb', 'with-login', password, salt FROM authenticators WHERE username = 'admin'", [id]);
    const { token } = await h.login('with-login', 'admin-password-1');
    await h.cache.set(principalCacheKey(token), '{}', 30);
    await h.call('PATCH', `${M}/identities/${id}`, { principal: admin, body: { isAdmin: true } });
    expect(await h.cache.get(principalCacheKey(token))).toBeNull();
    expect((await h.principal(token)).isAdmin).toBe(true);
    expect((await detail(id)).hasApiSession).toBe(true);
    await h.settle();
    const e = h.events.filter((x) => x.type === 'identity.updated' && x.data.identityId === id).at(-1)!;
    expect(e.data).toMatchObject({ identityId: id, name: 'with-login', isAdmin: true, disabled: false, roleAttributes: [], tokenHashes: [tokenHash(token)] });
    expect(e.data.deleted).toBeUndefined();
  });

  it('DELETE removes the identity, its authenticators and API sessions, and publishes the events', async () => {
    const id = await newIdentity({ name: 'doomed' });
    await h.sql("INSERT INTO authenticators (id, identity_id, method, username, password, salt) SELECT 'auth2', $1, 'updb', 'doomed', password, salt FROM authenticators WHERE username = 'admin'", [id]);
    const { token, principal } = await h.login('doomed', 'admin-password-1');
    await h.cache.set(principalCacheKey(token), '{}', 30);
    const res = await h.call('DELETE', `${M}/identities/${id}`, { principal: admin });
    expect(res.status).toBe(200);
    expect(await h.cache.get(principalCacheKey(token))).toBeNull();
    expect(await h.sql('SELECT id FROM authenticators WHERE identity_id = $1 UNION ALL SELECT id FROM api_sessions WHERE identity_id = $1', [id])).toEqual([]);
    expect((await h.call('GET', `${M}/identities/${id}`, { principal: admin })).status).toBe(404);
    expect((await h.call('DELETE', `${M}/identities/${id}`, { principal: admin })).status).toBe(404);
    await h.settle();
    expect(h.events.find((e) => e.type === 'identity.deleted' && e.data.identityId === id)!.data).toMatchObject({ identityId: id, deleted: true, tokenHashes: [tokenHash(token)] });
    expect(h.events.some((e) => e.type === 'api-session.deleted' && e.data.apiSessionId === principal.apiSessionId)).toBe(true);
  });

  it('refuses to delete the default admin', async () => {
    const res = await h.call('DELETE', `${M}/identities/${admin.identityId}`, { principal: admin });
    expect([res.status, res.body.error.code]).toEqual([400, 'ENTITY_CAN_NOT_BE_DELETED']);
  });

  it('lists with paging defaults, limits, filters, sorting and role filters', async () => {
    for (let i = 0; i < 12; i++) await newIdentity({ name: `bulk-${String(i).padStart(2, '0')}`, roleAttributes: i % 2 ? ['odd', 'x'] : ['even', 'x'] });
    const list = (q: string) => h.call('GET', `${M}/identities${q}`, { principal: admin });

    const first = await list('');
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(10);
    const total = first.body.meta.pagination.totalCount;
    expect(first.body.meta.pagination).toEqual({ limit: 10, offset: 0, totalCount: total });
    expect(first.body.meta.filterableFields).toEqual(expect.arrayContaining(['id', 'name', 'roleAttributes', 'type', 'isAdmin', 'tags', 'externalId', 'authPolicyId', 'isDefaultAdmin', 'isSystem']));
    const ids = first.body.data.map((d: any) => d.id);
    expect([...ids].sort()).toEqual(ids); // default order: id ascending

    expect((await list('?limit=1000')).body.meta.pagination.limit).toBe(500);
    const all = await list('?limit=-1');
    expect(all.text).toContain('"limit":9223372036854775807');
    expect(all.body.data).toHaveLength(total);

    const bulk = await list(`?filter=${encodeURIComponent('name contains "bulk-" sort by name desc')}&limit=3&offset=2`);
    expect(bulk.body.data.map((d: any) => d.name)).toEqual(['bulk-09', 'bulk-08', 'bulk-07']);
    expect(bulk.body.meta.pagination).toEqual({ limit: 3, offset: 2, totalCount: 12 });

    const odd = await list(`?filter=${encodeURIComponent('anyOf(roleAttributes) = "odd"')}&limit=100`);
    expect(odd.body.meta.pagination.totalCount).toBe(6);

    const count = async (filter: string) => (await list(`?filter=${encodeURIComponent(filter)}`)).body.meta.pagination.totalCount;
    expect(await count('isDefaultAdmin = true')).toBe(1);
    expect(await count('tags.owner = "alice"')).toBe(1);
    expect(await count('type = "Router" and not (name contains "bulk")')).toBeGreaterThanOrEqual(1);

    const bad = await list(`?filter=${encodeURIComponent('name = ')}`);
    expect([bad.status, bad.body.error.code]).toEqual([400, 'INVALID_FILTER']);
    expect((await list(`?filter=${encodeURIComponent('password = "x"')}`)).body.error.code).toBe('INVALID_FILTER');
    expect((await list('?sort=bogus')).body.error.code).toBe('INVALID_SORT_IDENTIFIER');
    expect((await list('?limit=abc')).body.error.code).toBe('INVALID_PAGINATION');

    const roleAll = await list(`?roleFilter=${encodeURIComponent('#odd')}&roleFilter=${encodeURIComponent('#x')}&limit=100`);
    expect(roleAll.body.meta.pagination.totalCount).toBe(6);
    const roleAny = await list(`?roleFilter=${encodeURIComponent('#odd')}&roleFilter=${encodeURIComponent('#even')}&roleSemantic=AnyOf&limit=100`);
    expect(roleAny.body.meta.pagination.totalCount).toBe(12);
    const roleNone = await list(`?roleFilter=${encodeURIComponent('#odd')}&roleFilter=${encodeURIComponent('#even')}&limit=100`);
    expect(roleNone.body.meta.pagination.totalCount).toBe(0);
    const byId = await list(`?roleFilter=${encodeURIComponent(`@${admin.identityId}`)}&roleFilter=${encodeURIComponent('#odd')}&limit=100`);
    expect(byId.body.meta.pagination.totalCount).toBe(7);
    const filtered = await list(`?roleFilter=${encodeURIComponent('#odd')}&filter=${encodeURIComponent('name = "bulk-01"')}`);
    expect(filtered.body.data.map((d: any) => d.name)).toEqual(['bulk-01']);
    expect(field(await list('?roleFilter=odd'))).toEqual([400, 'COULD_NOT_VALIDATE', 'roleFilter']);
    expect(field(await list(`?roleFilter=${encodeURIComponent('#odd')}&roleSemantic=Most`))).toEqual([400, 'COULD_NOT_VALIDATE', 'roleSemantic']);
  });

  it('refuses non-admins without the permission, and lets permissions grant what they name', async () => {
    const user: RequestPrincipal = { ...admin, isAdmin: false, isDefaultAdmin: false, permissions: [] };
    const res = await h.call('GET', `${M}/identities`, { principal: user });
    expect([res.status, res.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
    expect((await create({ name: 'n1', type: 'User', isAdmin: false }, user)).status).toBe(401);

    const reader = { ...user, permissions: ['identity.read'] };
    expect((await h.call('GET', `${M}/identities`, { principal: reader })).status).toBe(200);
    expect((await create({ name: 'n1', type: 'User', isAdmin: false }, reader)).status).toBe(401);
    expect((await h.call('GET', `${M}/identities`, { principal: { ...user, permissions: ['admin_readonly'] } })).status).toBe(200);

    const manager = { ...user, permissions: ['identity'] };
    expect((await create({ name: 'n2', type: 'User', isAdmin: false }, manager)).status).toBe(201);
    expect((await create({ name: 'n3', type: 'User', isAdmin: true }, manager)).status).toBe(401);
    expect((await create({ name: 'n4', type: 'User', isAdmin: false, permissions: ['identity'] }, manager)).status).toBe(401);
    expect((await h.call('PATCH', `${M}/identities/${admin.identityId}`, { principal: manager, body: { tags: {} } })).status).toBe(401);
    expect((await h.call('GET', `${M}/identities`)).status).toBe(401);
  });
});
