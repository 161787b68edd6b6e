import type { EdgeApi } from '../support/clients.js';
import { createUser, loginAs } from '../support/clients-identity.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectEmpty, expectError, expectList, expectSuccess } from '../support/envelope.js';

/**
 * Fine-grained management permissions (reference §6.12, permissions_*_test.go): a non-admin without
 * permissions is refused every management operation with 401 UNAUTHORIZED; admin_readonly reads only;
 * `identity` grants identity CRUD; `identity.read` reads only; non-admins can not create or affect admins.
 */

const ctl = useController();
failOnConformanceProblems();

let mgmt: EdgeApi;
let target: string;
beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
  target = expectCreated(await mgmt.identities.create({ name: `perm-target-${Date.now()}`, type: 'User', isAdmin: false }), 'identities');
});

async function sessionWith(permissions: string[]): Promise<EdgeApi> {
  const user = await createUser(mgmt, { permissions });
  const { res, session } = await loginAs(ctl().http, user);
  expectSuccess(res);
  return session;
}

const newIdentity = (api: EdgeApi, extra: Record<string, unknown> = {}) => api.identities.create({ name: `perm-${Math.random().toString(36).slice(2)}`, type: 'User', isAdmin: false, ...extra });

describe('a non-admin without permissions', () => {
  let none: EdgeApi;
  beforeAll(async () => {
    none = await sessionWith([]);
  });

  it.each([
    ['GET', '/identities'],
    ['GET', '/identities/x'],
    ['POST', '/identities'],
    ['PATCH', '/identities/x'],
    ['DELETE', '/identities/x'],
    ['GET', '/auth-policies'],
    ['POST', '/auth-policies'],
    ['GET', '/external-jwt-signers'],
    ['GET', '/authenticators'],
    ['POST', '/authenticators'],
    ['GET', '/api-sessions'],
    ['GET', '/identity-role-attributes'],
    ['GET', '/identities/x/authenticators'],
    ['DELETE', '/identities/x/mfa'],
  ])('%s %s → 401 UNAUTHORIZED', async (method, path) => {
    const body = method === 'POST' || method === 'PATCH' ? {} : undefined;
    expectError(await none.call(method, path, body), 401, 'UNAUTHORIZED');
  });

  it('POST /identities/{id}/disable → 401 UNAUTHORIZED', async () => {
    expectError(await none.call('POST', `/identities/${target}/disable`, { durationMinutes: 0 }), 401, 'UNAUTHORIZED');
  });

  it('still reaches its own identity and session', async () => {
    expectSuccess(await none.currentIdentity.get());
    expectSuccess(await none.currentApiSession.get());
  });
});

describe('admin_readonly', () => {
  let ro: EdgeApi;
  beforeAll(async () => {
    ro = await sessionWith(['admin_readonly']);
  });

  it('reads identities, auth policies, signers and authenticators', async () => {
    expectList(await ro.identities.list());
    expectSuccess(await ro.identities.get(target));
    expectList(await ro.call('GET', '/auth-policies'));
    expectList(await ro.call('GET', '/external-jwt-signers'));
    expectList(await ro.call('GET', '/authenticators'));
  });

  it('may not create, update or delete', async () => {
    expectError(await newIdentity(ro), 401, 'UNAUTHORIZED');
    expectError(await ro.identities.patch(target, { roleAttributes: ['x'] }), 401, 'UNAUTHORIZED');
    expectError(await ro.identities.delete(target), 401, 'UNAUTHORIZED');
    expectError(await ro.call('POST', `/identities/${target}/enable`), 401, 'UNAUTHORIZED');
  });
});

describe('the entity permission `identity`', () => {
  let perm: EdgeApi;
  beforeAll(async () => {
    perm = await sessionWith(['identity']);
  });

  it('grants identity CRUD, disable and enable', async () => {
    const id = expectCreated(await newIdentity(perm), 'identities');
    expectSuccess(await perm.identities.get(id));
    expectList(await perm.identities.list());
    expectEmpty(await perm.identities.patch(id, { roleAttributes: ['updated'] }));
    expectEmpty(await perm.call('POST', `/identities/${id}/disable`, { durationMinutes: 0 }));
    expectEmpty(await perm.call('POST', `/identities/${id}/enable`));
    expectEmpty(await perm.identities.delete(id));
  });

  it('grants nothing else', async () => {
    expectError(await perm.call('GET', '/auth-policies'), 401, 'UNAUTHORIZED');
    expectError(await perm.call('GET', '/authenticators'), 401, 'UNAUTHORIZED');
  });

  it('can not create or affect admins, nor grant permissions', async () => {
    expectError(await newIdentity(perm, { isAdmin: true }), 401, 'UNAUTHORIZED');
    expectError(await newIdentity(perm, { permissions: ['service.read'] }), 401, 'UNAUTHORIZED');
    const adminId = expectCreated(await newIdentity(mgmt, { isAdmin: true }), 'identities');
    expectError(await perm.identities.patch(adminId, { roleAttributes: ['patched'] }), 401, 'UNAUTHORIZED');
    expectError(await perm.identities.delete(adminId), 401, 'UNAUTHORIZED');
    expectError(await perm.call('POST', `/identities/${adminId}/disable`, { durationMinutes: 0 }), 401, 'UNAUTHORIZED');
    expectError(await perm.identities.patch(target, { permissions: ['service.read'] }), 401, 'UNAUTHORIZED');
    expectError(await perm.identities.patch(target, { isAdmin: true }), 401, 'UNAUTHORIZED');
    expectError(await perm.identities.update(target, { name: 'put-by-non-admin', type: 'User', isAdmin: false }), 401, 'UNAUTHORIZED');
    const after = await mgmt.identities.get(target);
    expect(after.body.data).toMatchObject({ isAdmin: false, permissions: [] });
  });
});

describe('the action permission `identity.read`', () => {
  it('reads identities and nothing more', async () => {
    const read = await sessionWith(['identity.read']);
    expectSuccess(await read.identities.get(target));
    expectList(await read.identities.list());
    expectList(await read.call('GET', '/identity-role-attributes'));
    expectError(await newIdentity(read), 401, 'UNAUTHORIZED');
    expectError(await read.identities.patch(target, { roleAttributes: ['x'] }), 401, 'UNAUTHORIZED');
    expectError(await read.identities.delete(target), 401, 'UNAUTHORIZED');
  });

  it('identity.update patches but does not read; identity.create creates but does not read', async () => {
    const update = await sessionWith(['identity.update']);
    expectEmpty(await update.identities.patch(target, { roleAttributes: ['by-update'] }));
    expectError(await update.identities.get(target), 401, 'UNAUTHORIZED');
    const create = await sessionWith(['identity.create']);
    const id = expectCreated(await newIdentity(create), 'identities');
    expectError(await create.identities.get(id), 401, 'UNAUTHORIZED');
  });
});

describe('auth policies and signers follow their own permissions', () => {
  it('auth-policy grants auth policy CRUD; external-jwt-signer.read lists signers', async () => {
    const ap = await sessionWith(['auth-policy']);
    expectList(await ap.call('GET', '/auth-policies'));
    expectError(await ap.call('GET', '/external-jwt-signers'), 401, 'UNAUTHORIZED');
    const signers = await sessionWith(['external-jwt-signer.read']);
    expectList(await signers.call('GET', '/external-jwt-signers'));
    expectError(await signers.call('POST', '/external-jwt-signers', { name: 'x', enabled: true, issuer: 'x', audience: 'x', jwksEndpoint: 'https://x.example/jwks' }), 401, 'UNAUTHORIZED');
  });

  it('authenticator writes are for admins only, even with every permission', async () => {
    const all = await sessionWith(['identity', 'auth-policy', 'external-jwt-signer']);
    expectError(await all.call('POST', '/authenticators', { method: 'updb', identityId: target, username: 'nope-user', password: 'nope-pass' }), 401, 'UNAUTHORIZED');
    expectError(await all.call('GET', '/authenticators'), 401, 'UNAUTHORIZED');
  });
});
