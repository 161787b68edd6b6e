import type { RequestPrincipal } from '@ziti/http-kit';
import { principalCacheKey } from '@ziti/http-kit';
import { selfSignedCert } from './testing/certs.js';
import { C, Harness, M } from './testing/harness.js';

const policyBody = (name: string, over: Record<string, unknown> = {}) => ({
  name,
  primary: {
    cert: { allowed: true, allowExpiredCerts: false },
    extJwt: { allowed: true, allowedSigners: [] },
    updb: { allowed: true, minPasswordLength: 8, requireSpecialChar: true, requireNumberChar: true, requireMixedCase: true, maxAttempts: 3, lockoutDurationMinutes: 10 },
  },
  secondary: { requireTotp: false, requireExtJwtSigner: null },
  ...over,
});

describe('auth policies, authenticators and password login rules', () => {
  let h: Harness;
  let admin: RequestPrincipal;
  beforeAll(async () => {
    h = await Harness.start();
    admin = (await h.login()).principal;
  });
  afterAll(async () => {
    await h?.close();
  });
  const call = (method: string, url: string, body?: unknown) => h.call(method, url, { principal: admin, body });

  it('CRUD of auth policies with the controller clamps and the system default', async () => {
    const created = await call('POST', `${M}/auth-policies`, policyBody('p-crud', { tags: { t: 'v' } }));
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    expect(created.body.data._links.self.href).toBe(`./auth-policies/${id}`);
    const d = (await call('GET', `${M}/auth-policies/${id}`)).body.data;
    expect(d).toMatchObject({ name: 'p-crud', tags: { t: 'v' }, secondary: { requireTotp: false, requireExtJwtSigner: null } });
    expect(d.primary.updb).toEqual({ allowed: true, minPasswordLength: 8, requireSpecialChar: true, requireNumberChar: true, requireMixedCase: true, maxAttempts: 3, lockoutDurationMinutes: 10 });

    const clamped = policyBody('p-clamp');
    Object.assign(clamped.primary.updb, { maxAttempts: -1, minPasswordLength: -1, lockoutDurationMinutes: -1 });
    const c = (await call('POST', `${M}/auth-policies`, clamped)).body.data.id;
    expect((await call('GET', `${M}/auth-policies/${c}`)).body.data.primary.updb).toMatchObject({ maxAttempts: 0, minPasswordLength: 5, lockoutDurationMinutes: 0 });

    expect((await call('PATCH', `${M}/auth-policies/${id}`, { name: 'p-patched', primary: { updb: { maxAttempts: 7 } } })).status).toBe(200);
    const p = (await call('GET', `${M}/auth-policies/${id}`)).body.data;
    expect([p.name, p.primary.updb.maxAttempts, p.primary.updb.minPasswordLength, p.tags]).toEqual(['p-patched', 7, 8, { t: 'v' }]);
    expect((await call('PUT', `${M}/auth-policies/${id}`, policyBody('p-put'))).status).toBe(200);
    expect((await call('GET', `${M}/auth-policies/${id}`)).body.data).toMatchObject({ name: 'p-put', tags: {} });

    const dup = await call('POST', `${M}/auth-policies`, policyBody('p-put'));
    expect([dup.status, dup.body.error.cause.field]).toEqual([400, 'name']);
    const missing = await call('POST', `${M}/auth-policies`, { name: 'x', primary: {}, secondary: { requireTotp: false } });
    expect([missing.status, missing.body.error.code]).toEqual([400, 'COULD_NOT_VALIDATE']);

    const list = await call('GET', `${M}/auth-policies?filter=${encodeURIComponent('name = "p-put"')}`);
    expect(list.body.data.map((x: { id: string }) => x.id)).toEqual([id]);
    expect(list.body.meta.filterableFields).toEqual(expect.arrayContaining(['id', 'name', 'isSystem', 'tags']));

    expect((await call('DELETE', `${M}/auth-policies/${id}`)).status).toBe(200);
    expect((await call('GET', `${M}/auth-policies/${id}`)).status).toBe(404);
    const del = await call('DELETE', `${M}/auth-policies/default`);
    expect([del.status, del.body.error.code]).toEqual([409, 'CAN_NOT_DELETE_REFERENCED_ENTITY']);
    expect((await call('PATCH', `${M}/auth-policies/default`, { name: 'Default renamed' })).status).toBe(200);
    expect((await call('GET', `${M}/auth-policies/default`)).body.data.name).toBe('Default renamed');
  });

  it('a policy used by an identity is referenced (409); an unknown one is refused on the identity', async () => {
    const id = (await call('POST', `${M}/auth-policies`, policyBody('p-used'))).body.data.id;
    const ident = await call('POST', `${M}/identities`, { name: 'on-policy', type: 'User', isAdmin: false, authPolicyId: id });
    const del = await call('DELETE', `${M}/auth-policies/${id}`);
    expect([del.status, del.body.error.code, del.body.error.cause.field]).toEqual([409, 'CAN_NOT_DELETE_REFERENCED_ENTITY', 'authPolicyId']);
    expect(del.body.error.cause.value).toBe(`[${ident.body.data.id}]`);
    const bad = await call('POST', `${M}/identities`, { name: 'bad-policy', type: 'User', isAdmin: false, authPolicyId: 'nope' });
    expect([bad.status, bad.body.error.cause.field]).toEqual([400, 'authPolicyId']);
    await call('PATCH', `${M}/identities/${ident.body.data.id}`, { authPolicyId: 'default' });
    expect((await call('DELETE', `${M}/auth-policies/${id}`)).status).toBe(200);
  });

  it('enforces the password rules of the identity policy when passwords are set', async () => {
    const policy = (await call('POST', `${M}/auth-policies`, policyBody('p-rules'))).body.data.id;
    const ident = (await call('POST', `${M}/identities`, { name: 'rules-user', type: 'User', isAdmin: false, authPolicyId: policy })).body.data.id;
    const create = (password: string) => call('POST', `${M}/authenticators`, { method: 'updb', identityId: ident, username: 'rules-user', password });
    for (const [pw, reason] of [['Sh0rt!', 'at least 8'], ['nonumber!Aa', 'number'], ['alllower1!', 'upper and lower'], ['NoSpecial12', 'special']] as const) {
      const r = await create(pw);
      expect([r.status, r.body.error.cause.field, r.body.error.cause.reason]).toEqual([400, 'password', expect.stringContaining(reason)]);
      expect(r.text).not.toContain(pw);
    }
    expect((await create('G00d!Passw0rd')).status).toBe(201);
    expect(await h.sql('SELECT count(*)::int AS n FROM authenticators WHERE identity_id = $1', [ident])).toEqual([{ n: 1 }]);
  });

  it('counts failures, locks out at maxAttempts, refuses while locked, and a success resets the counter', async () => {
    const policy = (await call('POST', `${M}/auth-policies`, policyBody('p-lock'))).body.data.id;
    const user = await h.createUser(admin, { authPolicyId: policy }, 'G00d!Passw0rd');
    const login = (password: string) => h.call('POST', `${C}/authenticate?method=password`, { body: { username: user.username, password } });
    expect((await login('wrong')).status).toBe(401);
    expect((await login('G00d!Passw0rd')).status).toBe(200);
    expect(await h.sql('SELECT failed_attempts AS n FROM authenticators WHERE username = $1', [user.username])).toEqual([{ n: 0 }]);
    const { token } = await h.login(user.username, 'G00d!Passw0rd', 'client');
    await h.cache.set(principalCacheKey(token), '{}', 30);
    for (let i = 0; i < 3; i++) expect((await login('wrong')).body.error.code).toBe('INVALID_AUTH');
    const d = (await call('GET', `${M}/identities/${user.id}`)).body.data;
    expect(d.disabled).toBe(true);
    expect(Date.parse(d.disabledUntil) - Date.parse(d.disabledAt)).toBe(10 * 60_000);
    expect(await h.cache.get(principalCacheKey(token))).toBeNull();
    await expect(h.resolve(token)).rejects.toMatchObject({ code: 16 });
    expect((await login('G00d!Passw0rd')).body.error.code).toBe('INVALID_AUTH');
    await h.sql("UPDATE identities SET disabled_until = now() - interval '1 second' WHERE id = $1", [user.id]);
    expect((await login('G00d!Passw0rd')).status).toBe(200);
    expect((await call('GET', `${M}/identities/${user.id}`)).body.data).toMatchObject({ disabled: false, disabledAt: null, disabledUntil: null });
  });

  it('a disallowed updb module refuses password logins', async () => {
    const body = policyBody('p-noupdb');
    body.primary.updb.allowed = false;
    const policy = (await call('POST', `${M}/auth-policies`, body)).body.data.id;
    const user = await h.createUser(admin, { authPolicyId: policy }, 'G00d!Passw0rd');
    const r = await h.call('POST', `${C}/authenticate?method=password`, { body: { username: user.username, password: 'G00d!Passw0rd' } });
    expect([r.status, r.body.error.code]).toEqual([401, 'INVALID_AUTH']);
  });

  it('manages updb and cert authenticators; one of each method per identity', async () => {
    const ident = (await call('POST', `${M}/identities`, { name: 'auths', type: 'Device', isAdmin: false })).body.data.id;
    const updb = await call('POST', `${M}/authenticators`, { method: 'updb', identityId: ident, username: 'auths-user', password: 'secret-1' });
    expect(updb.status).toBe(201);
    const again = await call('POST', `${M}/authenticators`, { method: 'updb', identityId: ident, username: 'auths-user2', password: 'secret-1' });
    expect([again.status, again.body.error.code]).toEqual([409, 'MAX_AUTHENTICATOR_METHODS_REACHED']);
    const cert = selfSignedCert('auths');
    const c = await call('POST', `${M}/authenticators`, { method: 'cert', identityId: ident, certPem: cert.certPem });
    expect(c.status).toBe(201);
    const cd = (await call('GET', `${M}/authenticators/${c.body.data.id}`)).body.data;
    expect(cd).toMatchObject({ method: 'cert', identityId: ident, certPem: cert.certPem, fingerprint: cert.fingerprint, identity: { id: ident, name: 'auths' } });
    const other = (await call('POST', `${M}/identities`, { name: 'auths2', type: 'Device', isAdmin: false })).body.data.id;
    const reused = await call('POST', `${M}/authenticators`, { method: 'cert', identityId: other, certPem: cert.certPem });
    expect([reused.status, reused.body.error.code]).toEqual([409, 'CERT_IN_USE']);
    const badPem = await call('POST', `${M}/authenticators`, { method: 'cert', identityId: other, certPem: 'nope' });
    expect(badPem.status).toBe(400);
    expect((await call('POST', `${M}/authenticators`, { method: 'updb', identityId: 'nope', username: 'nobody-x', password: 'secret-1' })).status).toBe(404);
    const badMethod = await call('POST', `${M}/authenticators`, { method: 'magic', identityId: ident });
    expect([badMethod.status, badMethod.body.error.cause.field]).toEqual([400, 'method']);

    const ud = (await call('GET', `${M}/authenticators/${updb.body.data.id}`)).body.data;
    expect(ud).toMatchObject({ method: 'updb', username: 'auths-user', _links: { identities: { href: `./identities/${ident}` } } });
    expect(JSON.stringify(ud)).not.toMatch(/salt|"password"/);
    const list = await call('GET', `${M}/authenticators?filter=${encodeURIComponent(`identity = "${ident}"`)}`);
    expect(list.body.data.map((a: { method: string }) => a.method).sort()).toEqual(['cert', 'updb']);
    const sub = await call('GET', `${M}/identities/${ident}/authenticators`);
    expect(sub.body.meta.pagination).toEqual({ limit: 2, offset: 0, totalCount: 2 });
    expect((await call('GET', `${M}/identities/nope/authenticators`)).status).toBe(404);
    const detail = (await call('GET', `${M}/identities/${ident}`)).body.data.authenticators;
    expect(detail).toEqual({ updb: { id: updb.body.data.id, username: 'auths-user' }, cert: { id: c.body.data.id, fingerprint: cert.fingerprint } });

    expect((await call('PATCH', `${M}/authenticators/${updb.body.data.id}`, { password: 'secret-2' })).status).toBe(200);
    await h.login('auths-user', 'secret-2', 'client');
    expect((await call('PUT', `${M}/authenticators/${updb.body.data.id}`, { username: 'auths-renamed', password: 'secret-3', tags: { a: 'b' } })).status).toBe(200);
    await h.login('auths-renamed', 'secret-3', 'client');
    const certPut = await call('PATCH', `${M}/authenticators/${c.body.data.id}`, { password: 'secret-3' });
    expect([certPut.status, certPut.body.error.code]).toEqual([409, 'CAN_NOT_UPDATE_AUTHENTICATOR']);
    expect((await call('PATCH', `${M}/authenticators/${c.body.data.id}`, { tags: { x: 'y' } })).status).toBe(200);
    expect((await call('DELETE', `${M}/authenticators/${updb.body.data.id}`)).status).toBe(200);
    const gone = await h.call('POST', `${C}/authenticate?method=password`, { body: { username: 'auths-renamed', password: 'secret-3' } });
    expect(gone.status).toBe(401);
    expect((await call('DELETE', `${M}/authenticators/${updb.body.data.id}`)).status).toBe(404);
  });

  it('self-service authenticators: own only, current password required, cert not updatable', async () => {
    const user = await h.createUser(admin, {}, 'first-pass');
    const other = await h.createUser(admin, {}, 'other-pass');
    const me = (await h.login(user.username, 'first-pass', 'client')).principal;
    const mine = await h.call('GET', `${C}/current-identity/authenticators`, { principal: me });
    expect(mine.body.data).toHaveLength(1);
    const aid = mine.body.data[0].id;
    expect(mine.body.data[0]._links.self.href).toBe(`./current-identity/authenticators/${aid}`);
    const otherId = (await h.sql('SELECT id FROM authenticators WHERE identity_id = $1', [other.id]))[0].id;
    expect((await h.call('GET', `${C}/current-identity/authenticators/${otherId}`, { principal: me })).status).toBe(404);
    const wrong = await h.call('PATCH', `${C}/current-identity/authenticators/${aid}`, { principal: me, body: { currentPassword: 'wrong-pass', password: 'second-pass' } });
    expect([wrong.status, wrong.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
    expect((await h.call('PATCH', `${C}/current-identity/authenticators/${otherId}`, { principal: me, body: { currentPassword: 'first-pass', password: 'x-pass' } })).status).toBe(404);
    const ok = await h.call('PUT', `${C}/current-identity/authenticators/${aid}`, { principal: me, body: { currentPassword: 'first-pass', username: `${user.username}-2`, password: 'second-pass' } });
    expect(ok.status).toBe(200);
    await h.login(`${user.username}-2`, 'second-pass', 'client');
    const noCurrent = await h.call('PATCH', `${C}/current-identity/authenticators/${aid}`, { principal: me, body: { password: 'third-pass' } });
    expect([noCurrent.status, noCurrent.body.error.cause.field]).toEqual([400, 'currentPassword']);

    const certUser = (await call('POST', `${M}/identities`, { name: 'cert-self', type: 'User', isAdmin: false })).body.data.id;
    const certAuth = (await call('POST', `${M}/authenticators`, { method: 'cert', identityId: certUser, certPem: selfSignedCert('cs').certPem })).body.data.id;
    const certMe = { ...me, identityId: certUser };
    const r = await h.call('PATCH', `${C}/current-identity/authenticators/${certAuth}`, { principal: certMe, body: { currentPassword: 'whatever', password: 'x-x-x-x' } });
    expect([r.status, r.body.error.code]).toEqual([409, 'CAN_NOT_UPDATE_AUTHENTICATOR']);
    expect((await h.call('DELETE', `${C}/current-identity/authenticators/${aid}`, { principal: me })).status).toBe(405);
  });

  it('authenticator writes are for admins; admin_readonly may read', async () => {
    const ro: RequestPrincipal = { ...admin, identityId: 'ro', isAdmin: false, isDefaultAdmin: false, permissions: ['admin_readonly'] };
    expect((await h.call('GET', `${M}/authenticators`, { principal: ro })).status).toBe(200);
    expect((await h.call('POST', `${M}/authenticators`, { principal: ro, body: { method: 'updb', identityId: 'x', username: 'abcd', password: 'abcde' } })).status).toBe(401);
    const ident: RequestPrincipal = { ...ro, permissions: ['identity'] };
    expect((await h.call('GET', `${M}/authenticators`, { principal: ident })).status).toBe(401);
  });
});
