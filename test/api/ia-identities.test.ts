import { BASE, type EdgeApi, uniqueName } from '../support/clients.js';
import { createUser, loginAs } from '../support/clients-identity.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectEmpty, expectError, expectFieldError, expectSuccess } from '../support/envelope.js';

/**
 * Identity lifecycle (identity_test.go): disable/enable ending sessions at once, hasApiSession,
 * sdkInfo/envInfo from the last login, the role attribute list (§4.1 exception) and its usage.
 */

const ctl = useController();
failOnConformanceProblems();

let mgmt: EdgeApi;
beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
});

describe('disable and enable', () => {
  it('disabling ends the API sessions at once and refuses logins until enabled', async () => {
    const user = await createUser(mgmt);
    const { session } = await loginAs(ctl().http, user, 'client');
    expectSuccess(await session.currentIdentity.get());
    expect((await mgmt.identities.get(user.id)).body.data.hasApiSession).toBe(true);
    expectEmpty(await mgmt.call('POST', `/identities/${user.id}/disable`, { durationMinutes: 0 }));
    expectError(await session.currentIdentity.get(), 401, 'UNAUTHORIZED');
    const d = (await mgmt.identities.get(user.id)).body.data;
    expect(d).toMatchObject({ disabled: true, disabledUntil: null, hasApiSession: false });
    expect(typeof d.disabledAt).toBe('string');
    expectError((await loginAs(ctl().http, user, 'client')).res, 401, 'INVALID_AUTH');
    expectEmpty(await mgmt.call('POST', `/identities/${user.id}/enable`));
    expect((await mgmt.identities.get(user.id)).body.data).toMatchObject({ disabled: false, disabledAt: null, disabledUntil: null });
    expectSuccess((await loginAs(ctl().http, user, 'client')).res);
  });

  it('a duration sets disabledUntil; bad input is 400; an unknown identity 404', async () => {
    const user = await createUser(mgmt);
    expectEmpty(await mgmt.call('POST', `/identities/${user.id}/disable`, { durationMinutes: 30 }));
    const d = (await mgmt.identities.get(user.id)).body.data;
    expect(Date.parse(d.disabledUntil) - Date.parse(d.disabledAt)).toBe(30 * 60_000);
    expectFieldError(await mgmt.call('POST', `/identities/${user.id}/disable`, {}), 'durationMinutes');
    expectFieldError(await mgmt.call('POST', `/identities/${user.id}/disable`, { durationMinutes: -5 }), 'durationMinutes');
    expectError(await mgmt.call('POST', '/identities/does-not-exist/disable', { durationMinutes: 0 }), 404, 'NOT_FOUND');
    expectError(await mgmt.call('POST', '/identities/does-not-exist/enable'), 404, 'NOT_FOUND');
  });
});

describe('what the last login reported', () => {
  it('stores sdkInfo and envInfo of the login', async () => {
    const user = await createUser(mgmt);
    const res = await ctl().http.post(`${BASE.client}/authenticate?method=password`, {
      username: user.username, password: user.password,
      sdkInfo: { type: 'ziti-sdk-golang', version: '1.2.3', appId: 'test-app' },
      envInfo: { os: 'linux', arch: 'amd64', osRelease: '6.1' },
    });
    expectSuccess(res);
    const d = (await mgmt.identities.get(user.id)).body.data;
    expect(d.sdkInfo).toEqual({ type: 'ziti-sdk-golang', version: '1.2.3', appId: 'test-app' });
    expect(d.envInfo).toEqual({ os: 'linux', arch: 'amd64', osRelease: '6.1' });
    const filtered = await mgmt.identities.list({ filter: `sdkInfo.appId = "test-app" and id = "${user.id}"` });
    expect(filtered.body.data.map((i: { id: string }) => i.id)).toEqual([user.id]);
  });
});

describe('identity role attributes', () => {
  const prefix = uniqueName('ra');
  beforeAll(async () => {
    for (const attrs of [['a', 'b'], ['b', 'c'], ['d']]) {
      expectCreated(await mgmt.identities.create({ name: uniqueName('ra-id'), type: 'User', isAdmin: false, roleAttributes: attrs.map((a) => `${prefix}-${a}`) }), 'identities');
    }
  });

  it('lists each attribute once, filtered over the attribute, with no default limit', async () => {
    const res = await mgmt.call('GET', `/identity-role-attributes?filter=${encodeURIComponent(`id contains "${prefix}"`)}&limit=1`);
    expectSuccess(res);
    expect(res.body.data).toEqual(['a', 'b', 'c', 'd'].map((a) => `${prefix}-${a}`));
    expect(res.text).toContain('"limit":9223372036854775807');
    expect(res.body.meta.pagination.totalCount).toBe(4);
    const page = await mgmt.call('GET', `/identity-role-attributes?filter=${encodeURIComponent(`id contains "${prefix}" sort by id desc skip 1 limit 2`)}`);
    expect(page.body.data).toEqual([`${prefix}-c`, `${prefix}-b`]);
    expect(page.body.meta.pagination).toEqual({ limit: 2, offset: 1, totalCount: 4 });
    expectError(await mgmt.call('GET', `/identity-role-attributes?filter=${encodeURIComponent('name = "x"')}`), 400, 'INVALID_FILTER');
  });

  it('reports each attribute with its usage by identities and policies', async () => {
    const filter = encodeURIComponent(`id contains "${prefix}" sort by id`);
    const res = await mgmt.call('GET', `/identity-role-attribute-usage?filter=${filter}`);
    expectSuccess(res);
    const b = res.body.data.find((u: { roleAttribute: string }) => u.roleAttribute === `${prefix}-b`);
    expect(b.usage.identities).toEqual({ count: 2 });
    expect(b.usage.servicePolicies).toEqual({ count: expect.any(Number) });
    expect(b.usage.edgeRouterPolicies).toEqual({ count: expect.any(Number) });
    const withIds = await mgmt.call('GET', `/identity-role-attribute-usage?withIds=true&filter=${filter}`);
    const d = withIds.body.data.find((u: { roleAttribute: string }) => u.roleAttribute === `${prefix}-d`);
    expect(d.usage.identities.ids).toHaveLength(1);
    expect(Array.isArray(d.usage.servicePolicies.ids)).toBe(true);
    expectError(await ctl().http.get(`${BASE.management}/identity-role-attribute-usage`), 401, 'UNAUTHORIZED');
  });
});
