import { BASE, type EdgeApi, uniqueName } from '../support/clients.js';
import { createUser, loginAs } from '../support/clients-identity.js';
import { enrollments, inMinutes, newIdentity } from '../support/clients-pki.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectEmpty, expectError, expectList, expectSuccess } from '../support/envelope.js';

/**
 * Scoped permissions never reach an admin (enrollments and identities): a holder of `enrollment`
 * can not create, refresh or delete an enrollment of an admin (or of an identity holding
 * permissions), nor read its secrets; `admin_readonly` never reads an enrollment's or an API
 * session's secret; a holder of `identity` can not touch an admin, its credentials, or anyone's
 * admin flag and permissions. Every refusal is 401 UNAUTHORIZED.
 */

const ctl = useController();
failOnConformanceProblems();

let mgmt: EdgeApi;
let defaultAdmin: string;
beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
  defaultAdmin = (await mgmt.currentIdentity.get()).body.data.id;
});

async function sessionWith(permissions: string[]): Promise<EdgeApi> {
  const user = await createUser(mgmt, { permissions });
  const { res, session } = await loginAs(ctl().http, user);
  expectSuccess(res);
  return session;
}

/** An identity created by the admin, with an outstanding ott enrollment (its id). */
async function withOtt(body: Record<string, unknown>): Promise<{ id: string; enrollmentId: string }> {
  const id = expectCreated(await mgmt.identities.create({ name: uniqueName('esc'), type: 'User', isAdmin: false, ...body, enrollment: { ott: true } }), 'identities');
  const enrollmentId = (await mgmt.identities.get(id)).body.data.enrollment.ott.id as string;
  return { id, enrollmentId };
}

const enroll = (token: string, body: Record<string, unknown>) => ctl().http.post(`${BASE.client}/enroll/updb?token=${token}`, body);

describe('the `enrollment` permission never reaches an admin', () => {
  let enr: EdgeApi;
  let admin: { id: string; enrollmentId: string };
  beforeAll(async () => {
    enr = await sessionWith(['enrollment']);
    admin = await withOtt({ isAdmin: true });
  });

  it('an ott or updb enrollment of the default admin, another admin or a permission holder is 401; nothing is created', async () => {
    const holder = await newIdentity(mgmt, { permissions: ['service.read'] });
    const cases = [
      { method: 'ott', identityId: defaultAdmin },
      { method: 'updb', identityId: defaultAdmin, username: uniqueName('takeover') },
      { method: 'updb', identityId: admin.id, username: uniqueName('takeover') },
      { method: 'ott', identityId: holder.id },
    ];
    for (const body of cases) expectError(await enrollments(enr).create({ expiresAt: inMinutes(30), ...body }), 401, 'UNAUTHORIZED');
    for (const id of [defaultAdmin, holder.id]) {
      const left = await enrollments(mgmt).list({ filter: `identity = "${id}"` });
      expectList(left);
      expect(left.body.data).toEqual([]);
    }
  });

  it("an admin's pending enrollment can not be refreshed or deleted, and its secrets are not shown", async () => {
    expectError(await enr.call('POST', `/enrollments/${admin.enrollmentId}/refresh`, { expiresAt: inMinutes(60) }), 401, 'UNAUTHORIZED');
    expectError(await enrollments(enr).delete(admin.enrollmentId), 401, 'UNAUTHORIZED');
    const detail = await enrollments(enr).get(admin.enrollmentId);
    expectSuccess(detail);
    expect(detail.body.data.token).toBe('');
    expect(detail.body.data).not.toHaveProperty('jwt');
    const listed = await enrollments(enr).list({ filter: `id = "${admin.enrollmentId}"` });
    expect(listed.body.data).toEqual([expect.objectContaining({ id: admin.enrollmentId, token: '' })]);
    expect(listed.body.data[0]).not.toHaveProperty('jwt');
    // The admin's enrollment is intact: an admin sees it with its secrets.
    const seen = (await enrollments(mgmt).get(admin.enrollmentId)).body.data;
    expect(seen.token).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof seen.jwt).toBe('string');
  });

  it('an enrollment of an ordinary identity still works end to end', async () => {
    const plain = await newIdentity(mgmt);
    const created = expectCreated(await enrollments(enr).create({ method: 'updb', identityId: plain.id, username: uniqueName('plain'), expiresAt: inMinutes(30) }), 'enrollments');
    expectSuccess(await enr.call('POST', `/enrollments/${created}/refresh`, { expiresAt: inMinutes(45) }));
    const e = (await enrollments(enr).get(created)).body.data;
    expect(e.token).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof e.jwt).toBe('string');
    expectSuccess(await enroll(e.token, { password: 'Plain-Passw0rd!' }));
  });
});

describe('admin_readonly never reads a secret', () => {
  let ro: EdgeApi;
  let admin: { id: string; enrollmentId: string };
  let plain: { id: string; enrollmentId: string };
  beforeAll(async () => {
    ro = await sessionWith(['admin_readonly']);
    admin = await withOtt({ isAdmin: true });
    plain = await withOtt({});
  });

  const noSecrets = (block: Record<string, unknown>) => {
    expect(block).toMatchObject({ id: expect.any(String), expiresAt: expect.any(String) });
    expect(block).not.toHaveProperty('jwt');
    expect(block).not.toHaveProperty('token');
  };

  it('the identity detail and list show the enrollment without its jwt and token (admin or not)', async () => {
    for (const target of [admin, plain]) {
      noSecrets((await ro.identities.get(target.id)).body.data.enrollment.ott);
      const listed = await ro.identities.list({ filter: `id = "${target.id}"` });
      expectList(listed);
      noSecrets(listed.body.data[0].enrollment.ott);
    }
  });

  it('/enrollments, /enrollments/{id} and /identities/{id}/enrollments blank the token and leave out the jwt', async () => {
    for (const target of [admin, plain]) {
      const views = [
        (await enrollments(ro).get(target.enrollmentId)).body.data,
        (await enrollments(ro).list({ filter: `id = "${target.enrollmentId}"` })).body.data[0],
        (await ro.call('GET', `/identities/${target.id}/enrollments`)).body.data[0],
      ];
      for (const v of views) {
        expect(v).toMatchObject({ id: target.enrollmentId, token: '' });
        expect(v).not.toHaveProperty('jwt');
      }
    }
  });

  it('association lists of identities show no secrets either', async () => {
    const sp = expectCreated(
      await mgmt.call('POST', '/service-policies', { name: uniqueName('esc-sp'), type: 'Dial', semantic: 'AnyOf', identityRoles: [`@${admin.id}`], serviceRoles: [] }),
      'service-policies',
    );
    const listed = await ro.call('GET', `/service-policies/${sp}/identities`);
    expectList(listed);
    noSecrets(listed.body.data.find((i: { id: string }) => i.id === admin.id).enrollment.ott);
    const asAdmin = await mgmt.call('GET', `/service-policies/${sp}/identities`);
    expect(asAdmin.body.data.find((i: { id: string }) => i.id === admin.id).enrollment.ott).toMatchObject({ jwt: expect.any(String), token: expect.any(String) });
  });

  it("API sessions: the token is '' for admin_readonly, an admin sees it", async () => {
    const own = (await mgmt.currentApiSession.get()).body.data.id as string;
    const seen = await ro.apiSessions.get(own);
    expectSuccess(seen);
    expect(seen.body.data.token).toBe('');
    const listed = await ro.apiSessions.list({ filter: `id = "${own}"` });
    expect(listed.body.data).toEqual([expect.objectContaining({ id: own, token: '' })]);
    expect((await mgmt.apiSessions.get(own)).body.data.token).toBe(mgmt.token);
  });

  it('an admin still reads every secret', async () => {
    for (const target of [admin, plain]) {
      expect((await mgmt.identities.get(target.id)).body.data.enrollment.ott).toMatchObject({ jwt: expect.any(String), token: expect.any(String) });
    }
  });
});

describe('scoped holders read the secrets of ordinary identities only', () => {
  it('`identity`: the identity detail shows the ordinary identity\'s jwt, not the admin\'s', async () => {
    const perm = await sessionWith(['identity']);
    const admin = await withOtt({ isAdmin: true });
    const plain = await withOtt({});
    expect((await perm.identities.get(plain.id)).body.data.enrollment.ott).toMatchObject({ jwt: expect.any(String), token: expect.any(String) });
    expect((await perm.identities.get(admin.id)).body.data.enrollment.ott).not.toHaveProperty('jwt');
    expect((await perm.call('GET', `/identities/${admin.id}/enrollments`)).body.data[0].token).toBe('');
    expect((await perm.call('GET', `/identities/${plain.id}/enrollments`)).body.data[0].token).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('the `identity` permission never reaches an admin', () => {
  let perm: EdgeApi;
  let self: string;
  let adminUser: { id: string; username: string; password: string };
  let adminUpdb: string;
  beforeAll(async () => {
    perm = await sessionWith(['identity']);
    self = (await perm.currentIdentity.get()).body.data.id;
    adminUser = await createUser(mgmt, { isAdmin: true });
    adminUpdb = (await mgmt.call('GET', `/identities/${adminUser.id}/authenticators`)).body.data[0].id;
  });

  it("the admin's credentials: create, change, delete, re-enroll, extend, MFA removal, trace → 401", async () => {
    const cases: [string, string, unknown][] = [
      ['POST', '/authenticators', { method: 'updb', identityId: defaultAdmin, username: uniqueName('x'), password: 'Takeover-Passw0rd!' }],
      ['PATCH', `/authenticators/${adminUpdb}`, { password: 'Takeover-Passw0rd!' }],
      ['PUT', `/authenticators/${adminUpdb}`, { username: uniqueName('x'), password: 'Takeover-Passw0rd!', tags: {} }],
      ['DELETE', `/authenticators/${adminUpdb}`, undefined],
      ['POST', `/authenticators/${adminUpdb}/re-enroll`, { expiresAt: inMinutes(30) }],
      ['POST', `/authenticators/${adminUpdb}/request-extend`, { rollKeys: false }],
      ['POST', `/identities/${adminUser.id}/request-extend`, { rollKeys: false }],
      ['DELETE', `/identities/${adminUser.id}/mfa`, undefined],
      ['PUT', `/identities/${adminUser.id}/trace`, { enabled: true, duration: '5m' }],
      ['POST', `/identities/${adminUser.id}/disable`, { durationMinutes: 0 }],
      ['PATCH', `/identities/${adminUser.id}`, { authPolicyId: 'default', roleAttributes: ['x'] }],
      ['DELETE', `/identities/${adminUser.id}`, undefined],
    ];
    for (const [method, path, body] of cases) expectError(await perm.call(method, path, body), 401, 'UNAUTHORIZED');
    expectSuccess((await loginAs(ctl().http, adminUser)).res);
  });

  it('no admin flag or permission is granted: on create, patch or put, to itself or another', async () => {
    const target = (await newIdentity(mgmt)).id;
    const attempts = [
      () => perm.identities.create({ name: uniqueName('x'), type: 'User', isAdmin: true }),
      () => perm.identities.create({ name: uniqueName('x'), type: 'User', isAdmin: false, permissions: ['identity'] }),
      () => perm.identities.patch(target, { isAdmin: true }),
      () => perm.identities.patch(target, { permissions: ['external-jwt-signer'] }),
      () => perm.identities.patch(self, { permissions: ['identity', 'enrollment'] }),
      () => perm.identities.patch(self, { isAdmin: true }),
      () => perm.identities.update(target, { name: uniqueName('x'), type: 'User', isAdmin: true }),
    ];
    for (const attempt of attempts) expectError(await attempt(), 401, 'UNAUTHORIZED');
    expect((await mgmt.identities.get(target)).body.data).toMatchObject({ isAdmin: false, permissions: [] });
    expect((await mgmt.identities.get(self)).body.data).toMatchObject({ isAdmin: false, permissions: ['identity'] });
  });

  it('an ordinary identity is still the holder\'s to manage', async () => {
    const target = (await newIdentity(mgmt)).id;
    expectEmpty(await perm.identities.patch(target, { roleAttributes: ['managed'] }));
    expectSuccess(await perm.call('PUT', `/identities/${target}/trace`, { enabled: true, duration: '1m' }));
  });
});
