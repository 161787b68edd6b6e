import { uniqueName, type EdgeApi } from '../support/clients.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectEmpty, expectError, expectFieldError, expectSuccess } from '../support/envelope.js';
import { expectValid } from '../support/spec-validator.js';

/** Management identities: create, detail, update, patch, delete (reference §7, §5.1, §6.9, §6.10). */

const ctl = useController();
failOnConformanceProblems();

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const IDENTITY_LINKS = [
  'self', 'edge-router-policies', 'edge-routers', 'service-policies', 'services', 'posture-data',
  'failed-service-requests', 'authenticators', 'enrollments', 'service-configs', 'auth-policies',
];

let mgmt: EdgeApi;
beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
});

async function create(body: Record<string, unknown> = {}): Promise<string> {
  const res = await mgmt.identities.create({ name: uniqueName('id'), type: 'Default', isAdmin: false, ...body });
  return expectCreated(res, 'identities');
}

async function detail(id: string): Promise<Record<string, any>> {
  const res = await mgmt.identities.get(id);
  expectSuccess(res);
  return res.body.data;
}

describe('create and detail', () => {
  it('create → 201 with data.id and _links.self.href ./identities/<id>', async () => {
    const res = await mgmt.identities.create({ name: uniqueName('created'), type: 'Default', isAdmin: false });
    expectCreated(res, 'identities');
    expect(res.body.meta).toEqual({});
  });

  it('detail has every field of identityDetail, with the defaults', async () => {
    const name = uniqueName('detail');
    const id = await create({ name, roleAttributes: ['alpha'] });
    const res = await mgmt.identities.get(id);
    expectSuccess(res);
    expectValid('management', 'GET', '/identities/{id}', 200, res.body);
    const d = res.body.data;
    expect(d).toMatchObject({
      id, name, typeId: 'Default', isAdmin: false, isDefaultAdmin: false, roleAttributes: ['alpha'], tags: {},
      authPolicyId: 'default', hasApiSession: false, disabled: false, externalId: null,
    });
    expect(d.type).toMatchObject({ id: 'Default', name: 'Default', entity: 'identity-types' });
    expect(d.authPolicy).toMatchObject({ id: 'default', entity: 'auth-policies' });
    expect(d.createdAt).toMatch(TIMESTAMP);
    expect(d.updatedAt).toMatch(TIMESTAMP);
    expect(Object.keys(d._links).sort()).toEqual([...IDENTITY_LINKS].sort());
    expect(d._links.self.href).toBe(`./identities/${id}`);
    expect(d._links['auth-policies'].href).toBe('./auth-policies/default');
  });

  it('type User maps to Default', async () => {
    const d = await detail(await create({ type: 'User' }));
    expect(d.typeId).toBe('Default');
  });

  it('tags, externalId and isAdmin round-trip', async () => {
    const externalId = uniqueName('ext');
    const d = await detail(await create({ tags: { team: 'blue', on: true }, externalId, isAdmin: true }));
    expect(d).toMatchObject({ tags: { team: 'blue', on: true }, externalId, isAdmin: true, isDefaultAdmin: false });
  });

  it('GET of an unknown id → 404 NOT_FOUND', async () => {
    expectError(await mgmt.identities.get('doesNotExist'), 404, 'NOT_FOUND');
  });
});

describe('validation rules', () => {
  it('a duplicate name → 400 COULD_NOT_VALIDATE, field name', async () => {
    const name = uniqueName('dup');
    await create({ name });
    expectFieldError(await mgmt.identities.create({ name, type: 'Default', isAdmin: false }), 'name');
  });

  it('renaming onto an existing name (PATCH) → 400 COULD_NOT_VALIDATE, field name', async () => {
    const taken = uniqueName('taken');
    await create({ name: taken });
    const id = await create();
    expectFieldError(await mgmt.identities.patch(id, { name: taken }), 'name');
  });

  it.each(['#sales', '@sales'])('a role attribute like %s → 400 COULD_NOT_VALIDATE, field roleAttributes', async (attr) => {
    expectFieldError(await mgmt.identities.create({ name: uniqueName('attr'), type: 'Default', isAdmin: false, roleAttributes: ['ok', attr] }), 'roleAttributes');
    const id = await create({ roleAttributes: ['ok'] });
    expectFieldError(await mgmt.identities.patch(id, { roleAttributes: [attr] }), 'roleAttributes');
    expect((await detail(id)).roleAttributes).toEqual(['ok']);
  });

  it('PUT without a required field → 400 COULD_NOT_VALIDATE', async () => {
    const id = await create();
    expectFieldError(await mgmt.identities.update(id, { name: uniqueName('put'), type: 'Default' }), 'isAdmin');
  });
});

describe('patch and update', () => {
  it('PATCH changes only the given fields (roleAttributes and tags kept)', async () => {
    const id = await create({ roleAttributes: ['a', 'b'], tags: { keep: 'me' } });
    const before = await detail(id);
    const name = uniqueName('patched');
    expectEmpty(await mgmt.identities.patch(id, { name }));
    const after = await detail(id);
    expect(after).toMatchObject({ name, roleAttributes: ['a', 'b'], tags: { keep: 'me' }, isAdmin: false, createdAt: before.createdAt });
    expect(Date.parse(after.updatedAt)).toBeGreaterThanOrEqual(Date.parse(before.updatedAt));
  });

  it('PATCH of roleAttributes alone leaves name and tags alone', async () => {
    const name = uniqueName('patch-attrs');
    const id = await create({ name, roleAttributes: ['a'], tags: { t: 'x' } });
    expectEmpty(await mgmt.identities.patch(id, { roleAttributes: ['c'] }));
    expect(await detail(id)).toMatchObject({ name, roleAttributes: ['c'], tags: { t: 'x' } });
  });

  it('PUT replaces: omitted roleAttributes and tags are cleared', async () => {
    const id = await create({ roleAttributes: ['a', 'b'], tags: { gone: 'soon' } });
    const name = uniqueName('put');
    expectEmpty(await mgmt.identities.update(id, { name, type: 'Default', isAdmin: true }));
    const d = await detail(id);
    expect(d).toMatchObject({ name, isAdmin: true, tags: {} });
    expect(d.roleAttributes ?? []).toEqual([]);
  });

  it('PATCH or PUT of an unknown id → 404 NOT_FOUND', async () => {
    expectError(await mgmt.identities.patch('doesNotExist', { name: uniqueName('x') }), 404, 'NOT_FOUND');
    expectError(await mgmt.identities.update('doesNotExist', { name: uniqueName('x'), type: 'Default', isAdmin: false }), 404, 'NOT_FOUND');
  });

  it('isDefaultAdmin cannot be changed by PATCH or PUT (silently kept)', async () => {
    const me = await mgmt.currentIdentity.get();
    expectSuccess(me);
    const { id, name } = me.body.data;
    expectEmpty(await mgmt.identities.patch(id, { isDefaultAdmin: false }));
    expect((await detail(id)).isDefaultAdmin).toBe(true);
    expectEmpty(await mgmt.identities.update(id, { name, type: 'Default', isAdmin: true, isDefaultAdmin: false }));
    expect(await detail(id)).toMatchObject({ isDefaultAdmin: true, isAdmin: true });
    const other = await detail(await create({ isAdmin: true }));
    expectEmpty(await mgmt.identities.patch(other.id, { isDefaultAdmin: true }));
    expect((await detail(other.id)).isDefaultAdmin).toBe(false);
  });
});

describe('delete', () => {
  it('DELETE → 200 empty; then GET, PATCH and DELETE → 404', async () => {
    const id = await create();
    expectEmpty(await mgmt.identities.delete(id));
    expectError(await mgmt.identities.get(id), 404, 'NOT_FOUND');
    expectError(await mgmt.identities.patch(id, { name: uniqueName('x') }), 404, 'NOT_FOUND');
    expectError(await mgmt.identities.delete(id), 404, 'NOT_FOUND');
  });

  it('a deleted identity disappears from the list, and its name can be reused', async () => {
    const name = uniqueName('reuse');
    const id = await create({ name });
    expectEmpty(await mgmt.identities.delete(id));
    const list = await mgmt.identities.list({ filter: `name = "${name}"` });
    expectSuccess(list);
    expect(list.body.data).toEqual([]);
    await create({ name });
  });
});

describe('access', () => {
  it('without a session every identity operation → 401 UNAUTHORIZED', async () => {
    const anon = mgmt.withToken(undefined);
    const id = await create();
    expectError(await anon.identities.list(), 401, 'UNAUTHORIZED');
    expectError(await anon.identities.get(id), 401, 'UNAUTHORIZED');
    expectError(await anon.identities.create({ name: uniqueName('anon'), type: 'Default', isAdmin: false }), 401, 'UNAUTHORIZED');
    expectError(await anon.identities.patch(id, { name: uniqueName('anon') }), 401, 'UNAUTHORIZED');
    expectError(await anon.identities.delete(id), 401, 'UNAUTHORIZED');
    expectSuccess(await mgmt.identities.get(id));
  });

  it('the client API does not serve /identities → 404', async () => {
    const res = await mgmt.http.get('/edge/client/v1/identities', mgmt.token);
    expectError(res, 404, 'NOT_FOUND');
  });
});
