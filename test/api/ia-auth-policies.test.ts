import { BASE, type EdgeApi, uniqueName } from '../support/clients.js';
import { authPolicyBody, createUser, identityAuthSql, loginAs } from '../support/clients-identity.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectEmpty, expectError, expectFieldError, expectList, expectSuccess } from '../support/envelope.js';
import { expectValid } from '../support/spec-validator.js';

/** Auth policies (reference §6.1, auth_policy_test.go) and the password rules and lockout they set (§2.2, auth_updb_test.go). */

const ctl = useController();
failOnConformanceProblems();

let mgmt: EdgeApi;
beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
});

const create = async (body: unknown) => expectCreated(await mgmt.call('POST', '/auth-policies', body), 'auth-policies');
const detail = async (id: string) => {
  const res = await mgmt.call('GET', `/auth-policies/${id}`);
  expectSuccess(res);
  return res.body.data;
};

describe('CRUD', () => {
  it('creates and shows every setting', async () => {
    const name = uniqueName('ap');
    const id = await create({ ...authPolicyBody(name, { updb: { minPasswordLength: 9, maxAttempts: 4, lockoutDurationMinutes: 2, requireMixedCase: true } }), tags: { team: 'blue' } });
    const res = await mgmt.call('GET', `/auth-policies/${id}`);
    expectValid('management', 'GET', '/auth-policies/{id}', 200, res.body);
    expect(res.body.data).toMatchObject({
      id, name, tags: { team: 'blue' }, _links: { self: { href: `./auth-policies/${id}` } },
      primary: {
        cert: { allowed: true, allowExpiredCerts: true },
        extJwt: { allowed: true, allowedSigners: [] },
        updb: { allowed: true, minPasswordLength: 9, maxAttempts: 4, lockoutDurationMinutes: 2, requireMixedCase: true, requireNumberChar: false, requireSpecialChar: false },
      },
      secondary: { requireTotp: false, requireExtJwtSigner: null },
    });
  });

  it('lists with filters', async () => {
    const name = uniqueName('ap-list');
    const id = await create(authPolicyBody(name));
    const res = await mgmt.call('GET', `/auth-policies?filter=${encodeURIComponent(`name = "${name}"`)}`);
    expectList(res);
    expect(res.body.data.map((p: { id: string }) => p.id)).toEqual([id]);
  });

  it('lowers settings below their minimum to the defaults (0 attempts = unlimited, 0 minutes = until enabled)', async () => {
    const id = await create(authPolicyBody(uniqueName('ap-min'), { updb: { maxAttempts: -1, minPasswordLength: -1, lockoutDurationMinutes: -1 } }));
    expect((await detail(id)).primary.updb).toMatchObject({ maxAttempts: 0, minPasswordLength: 5, lockoutDurationMinutes: 0 });
  });

  it('PATCH changes only the named fields; PUT replaces all', async () => {
    const id = await create({ ...authPolicyBody(uniqueName('ap-patch'), { updb: { maxAttempts: 5 } }), tags: { keep: 'me' } });
    expectEmpty(await mgmt.call('PATCH', `/auth-policies/${id}`, { name: 'patched-name', primary: { updb: { maxAttempts: 3 } } }));
    const p = await detail(id);
    expect([p.name, p.primary.updb.maxAttempts, p.primary.updb.allowed, p.tags]).toEqual(['patched-name', 3, true, { keep: 'me' }]);
    expectEmpty(await mgmt.call('PUT', `/auth-policies/${id}`, authPolicyBody('put-name')));
    expect(await detail(id)).toMatchObject({ name: 'put-name', tags: {}, primary: { updb: { maxAttempts: 0 } } });
  });

  it('validates the document and keeps names unique', async () => {
    expectFieldError(await mgmt.call('POST', '/auth-policies', { name: 'x', primary: {}, secondary: { requireTotp: false } }));
    const name = uniqueName('ap-dup');
    await create(authPolicyBody(name));
    expectFieldError(await mgmt.call('POST', '/auth-policies', authPolicyBody(name)), 'name');
  });

  it('deletes; a deleted policy is 404', async () => {
    const id = await create(authPolicyBody(uniqueName('ap-del')));
    expectEmpty(await mgmt.call('DELETE', `/auth-policies/${id}`));
    expectError(await mgmt.call('GET', `/auth-policies/${id}`), 404, 'NOT_FOUND');
    expectError(await mgmt.call('DELETE', `/auth-policies/${id}`), 404, 'NOT_FOUND');
  });
});

describe('the system default policy and references', () => {
  it('default can be updated but not deleted (409)', async () => {
    expectError(await mgmt.call('DELETE', '/auth-policies/default'), 409, 'CAN_NOT_DELETE_REFERENCED_ENTITY');
    expectEmpty(await mgmt.call('PATCH', '/auth-policies/default', { name: 'Default (renamed)' }));
    expect((await detail('default')).name).toBe('Default (renamed)');
    expectEmpty(await mgmt.call('PATCH', '/auth-policies/default', { name: 'Default' }));
  });

  it('new identities use default; a referenced policy can not be deleted until unassigned', async () => {
    const id = await create(authPolicyBody(uniqueName('ap-ref')));
    const free = expectCreated(await mgmt.identities.create({ name: uniqueName('ap-free'), type: 'User', isAdmin: false }), 'identities');
    expect((await mgmt.identities.get(free)).body.data).toMatchObject({ authPolicyId: 'default', authPolicy: { id: 'default', entity: 'auth-policies' } });
    const user = expectCreated(await mgmt.identities.create({ name: uniqueName('ap-user'), type: 'User', isAdmin: false, authPolicyId: id }), 'identities');
    const res = await mgmt.call('DELETE', `/auth-policies/${id}`);
    expectError(res, 409, 'CAN_NOT_DELETE_REFERENCED_ENTITY');
    expect(res.body.error.cause.value).toContain(user);
    expectEmpty(await mgmt.identities.patch(user, { authPolicyId: 'default' }));
    expectEmpty(await mgmt.call('DELETE', `/auth-policies/${id}`));
  });

  it('an unknown external JWT signer is 404; a referenced signer can not be deleted', async () => {
    expectError(await mgmt.call('POST', '/auth-policies', authPolicyBody(uniqueName('ap-bad'), { secondary: { requireExtJwtSigner: 'badId' } })), 404, 'NOT_FOUND');
    expectError(await mgmt.call('POST', '/auth-policies', authPolicyBody(uniqueName('ap-bad'), { extJwt: { allowedSigners: ['badId'] } })), 404, 'NOT_FOUND');
    const signer = expectCreated(
      await mgmt.call('POST', '/external-jwt-signers', { name: uniqueName('s'), enabled: true, issuer: uniqueName('iss'), audience: 'aud', jwksEndpoint: 'https://idp.example.com/jwks' }),
      'external-jwt-signers',
    );
    const id = await create(authPolicyBody(uniqueName('ap-signer'), { extJwt: { allowedSigners: [signer] }, secondary: { requireExtJwtSigner: signer } }));
    expectError(await mgmt.call('DELETE', `/external-jwt-signers/${signer}`), 409, 'CAN_NOT_DELETE_REFERENCED_ENTITY');
    expectEmpty(await mgmt.call('PATCH', `/auth-policies/${id}`, { primary: { extJwt: { allowedSigners: [] } }, secondary: { requireExtJwtSigner: '' } }));
    expect((await detail(id)).secondary.requireExtJwtSigner).toBeNull();
    expectEmpty(await mgmt.call('DELETE', `/external-jwt-signers/${signer}`));
  });
});

describe('password rules and the lockout', () => {
  it('refuses passwords the identity policy does not allow', async () => {
    const policy = await create(authPolicyBody(uniqueName('ap-rules'), { updb: { minPasswordLength: 10, requireMixedCase: true, requireNumberChar: true, requireSpecialChar: true } }));
    const id = expectCreated(await mgmt.identities.create({ name: uniqueName('rules'), type: 'User', isAdmin: false, authPolicyId: policy }), 'identities');
    const set = (password: string) => mgmt.call('POST', '/authenticators', { method: 'updb', identityId: id, username: uniqueName('u'), password });
    for (const weak of ['Sh0rt!', 'nodigits!!Aa', 'lower-only-1', 'NoSpecial1234']) expectFieldError(await set(weak), 'password');
    expectCreated(await set('G00d!Enough#1'), 'authenticators');
  });

  it('locks out after maxAttempts failures for lockoutDurationMinutes, refuses meanwhile, recovers after disabledUntil', async () => {
    const policy = await create(authPolicyBody(uniqueName('ap-lock'), { updb: { maxAttempts: 3, lockoutDurationMinutes: 2 } }));
    const user = await createUser(mgmt, { authPolicyId: policy });
    const login = (password: string) => ctl().http.post(`${BASE.client}/authenticate?method=password`, { username: user.username, password });
    expectError(await login('wrong-1'), 401, 'INVALID_AUTH');
    expectSuccess(await login(user.password)); // a success resets the counter
    const { session } = await loginAs(ctl().http, user, 'client');
    for (let i = 0; i < 3; i++) expectError(await login(`wrong-${i}`), 401, 'INVALID_AUTH');
    const d = (await mgmt.identities.get(user.id)).body.data;
    expect(d.disabled).toBe(true);
    expect(Date.parse(d.disabledUntil) - Date.parse(d.disabledAt)).toBe(2 * 60_000);
    expectError(await login(user.password), 401, 'INVALID_AUTH');
    expectError(await session.currentIdentity.get(), 401, 'UNAUTHORIZED'); // the lockout ended its sessions

    // the clock passes disabledUntil
    await identityAuthSql(ctl().options.databaseUrl!, "UPDATE identities SET disabled_until = now() - interval '1 second' WHERE id = $1", [user.id]);
    expect((await mgmt.identities.get(user.id)).body.data.disabled).toBe(false);
    expectSuccess(await login(user.password));
    expect((await mgmt.identities.get(user.id)).body.data).toMatchObject({ disabled: false, disabledAt: null, disabledUntil: null });
  });

  it('a disallowed updb module refuses password logins', async () => {
    const policy = await create(authPolicyBody(uniqueName('ap-off'), { updb: { allowed: false } }));
    const user = await createUser(mgmt, { authPolicyId: policy });
    expectError((await loginAs(ctl().http, user)).res, 401, 'INVALID_AUTH');
  });
});
