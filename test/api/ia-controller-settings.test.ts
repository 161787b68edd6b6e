import type { EdgeApi } from '../support/clients.js';
import { createUser, loginAs } from '../support/clients-identity.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectEmpty, expectError, expectFieldError, expectList, expectSuccess } from '../support/envelope.js';
import { expectValid } from '../support/spec-validator.js';

/**
 * Controller settings (management `/controller-settings*`; in OpenZiti's spec without a handler,
 * reference §1.4): the `global` settings, one override per known controller (the id `GET
 * /controllers` lists), the effective view, PUT/PATCH/DELETE at `/{id}/effective`, absolute-URI
 * validation of the OIDC lists, and access (admin or admin_readonly reads, admin writes).
 */

const ctl = useController();
failOnConformanceProblems();

const OPENZITI_REDIRECTS = [
  'openziti://auth/callback', 'https://127.0.0.1:*/auth/callback', 'http://127.0.0.1:*/auth/callback',
  'https://localhost:*/auth/callback', 'http://localhost:*/auth/callback',
];

let mgmt: EdgeApi;
let controllerId: string;
beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
  const controllers = await mgmt.call('GET', '/controllers');
  expectSuccess(controllers);
  controllerId = controllers.body.data[0].id;
});

const get = async (path: string) => {
  const res = await mgmt.call('GET', path);
  expectSuccess(res);
  return res.body.data;
};
const removeOverride = async () => {
  const res = await mgmt.call('DELETE', `/controller-settings/${controllerId}/effective`);
  if (res.status !== 200 && res.status !== 404) throw new Error(`cleanup failed: ${res.status} ${res.text}`);
};

describe('the global settings', () => {
  it('are always listed, start with the URIs OpenZiti allows by default, and show their effective view', async () => {
    const res = await mgmt.call('GET', '/controller-settings');
    expectList(res);
    expectValid('management', 'GET', '/controller-settings', 200, res.body);
    const global = res.body.data.find((s: { id: string }) => s.id === 'global');
    expect(global).toMatchObject({
      id: 'global', tags: {}, _links: { self: { href: './controller-settings/global' }, effective: { href: './controller-settings/global/effective' } },
      oidc: { redirectUris: OPENZITI_REDIRECTS, postLogoutUris: expect.arrayContaining(['openziti://auth/logout', 'http://localhost:*/auth/logout']) },
    });
    expect(await get('/controller-settings/global')).toEqual(global);
    const effective = await get('/controller-settings/global/effective');
    expect(effective).toMatchObject({ id: 'global', effective: { oidc: global.oidc }, instance: { oidc: global.oidc } });
  });

  it('cannot be deleted (409); unknown settings are 404', async () => {
    expectError(await mgmt.call('DELETE', '/controller-settings/global/effective'), 409, 'CAN_NOT_DELETE_REFERENCED_ENTITY');
    expect((await get('/controller-settings/global')).id).toBe('global');
    for (const path of ['/controller-settings/nope', '/controller-settings/nope/effective']) expectError(await mgmt.call('GET', path), 404, 'NOT_FOUND');
    expectError(await mgmt.call('PUT', '/controller-settings/nope/effective', { oidc: {} }), 404, 'NOT_FOUND');
    expectError(await mgmt.call('PATCH', '/controller-settings/nope/effective', { tags: {} }), 404, 'NOT_FOUND');
    expectError(await mgmt.call('DELETE', '/controller-settings/nope/effective'), 404, 'NOT_FOUND');
  });
});

describe('a controller-specific setting', () => {
  afterEach(removeOverride);

  it('is created for a known controller (its id is the controller id) and overrides the global lists it sets', async () => {
    const id = expectCreated(
      await mgmt.call('POST', '/controller-settings', { controllerId, oidc: { redirectUris: ['https://app.example.com/cb'] }, tags: { site: 'a' }, extra: 1 }),
      'controller-settings',
    );
    expect(id).toBe(controllerId);
    const detail = await mgmt.call('GET', `/controller-settings/${id}`);
    expectSuccess(detail);
    expectValid('management', 'GET', '/controller-settings/{id}', 200, detail.body);
    expect(detail.body.data).toMatchObject({ id, tags: { site: 'a' }, oidc: { redirectUris: ['https://app.example.com/cb'] } });
    expect(detail.body.data.oidc.postLogoutUris).toBeUndefined();

    const effective = await mgmt.call('GET', `/controller-settings/${id}/effective`);
    expectSuccess(effective);
    expectValid('management', 'GET', '/controller-settings/{id}/effective', 200, effective.body);
    const global = await get('/controller-settings/global');
    expect(effective.body.data).toMatchObject({
      id,
      instance: { oidc: { redirectUris: ['https://app.example.com/cb'] } },
      effective: { oidc: { redirectUris: ['https://app.example.com/cb'], postLogoutUris: global.oidc.postLogoutUris } },
    });

    const list = await mgmt.call('GET', '/controller-settings');
    expectList(list);
    expect(list.body.data.map((s: { id: string }) => s.id).sort()).toEqual([controllerId, 'global'].sort());
    expect(list.body.meta.pagination).toMatchObject({ totalCount: 2 });
  });

  it('the effective view follows a change of the global settings for the lists the override leaves out', async () => {
    const before = await get('/controller-settings/global');
    try {
      expectCreated(await mgmt.call('POST', '/controller-settings', { controllerId, oidc: { postLogoutUris: [] } }), 'controller-settings');
      expectEmpty(await mgmt.call('PATCH', '/controller-settings/global/effective', { oidc: { redirectUris: ['https://global.example.com/cb'] } }));
      const global = await get('/controller-settings/global');
      expect(global.oidc).toEqual({ redirectUris: ['https://global.example.com/cb'], postLogoutUris: before.oidc.postLogoutUris });
      expect((await get(`/controller-settings/${controllerId}/effective`)).effective.oidc).toEqual({ redirectUris: ['https://global.example.com/cb'], postLogoutUris: [] });
    } finally {
      expectEmpty(await mgmt.call('PUT', '/controller-settings/global/effective', { oidc: before.oidc, tags: before.tags }));
    }
    expect((await get('/controller-settings/global')).oidc).toEqual(before.oidc);
  });

  it('PATCH changes the named fields; PUT replaces all (a list left out is inherited again); DELETE removes it', async () => {
    expectCreated(await mgmt.call('POST', '/controller-settings', { controllerId, oidc: { redirectUris: ['https://a.example.com/cb'] }, tags: { keep: 'me' } }), 'controller-settings');
    expectEmpty(await mgmt.call('PATCH', `/controller-settings/${controllerId}/effective`, { oidc: { postLogoutUris: ['https://a.example.com/bye'] } }));
    expect(await get(`/controller-settings/${controllerId}`)).toMatchObject({
      tags: { keep: 'me' }, oidc: { redirectUris: ['https://a.example.com/cb'], postLogoutUris: ['https://a.example.com/bye'] },
    });
    expectEmpty(await mgmt.call('PUT', `/controller-settings/${controllerId}/effective`, { oidc: { postLogoutUris: ['myapp://logout'] } }));
    const put = await get(`/controller-settings/${controllerId}`);
    expect([put.oidc, put.tags]).toEqual([{ postLogoutUris: ['myapp://logout'] }, {}]);
    const global = await get('/controller-settings/global');
    expect((await get(`/controller-settings/${controllerId}/effective`)).effective.oidc.redirectUris).toEqual(global.oidc.redirectUris);

    expectEmpty(await mgmt.call('DELETE', `/controller-settings/${controllerId}/effective`));
    expectError(await mgmt.call('GET', `/controller-settings/${controllerId}`), 404, 'NOT_FOUND');
    expect((await mgmt.call('GET', '/controller-settings')).body.data.map((s: { id: string }) => s.id)).toEqual(['global']);
  });

  it('one per controller: a second create is 400 on controllerId and leaves the first as it was', async () => {
    expectCreated(await mgmt.call('POST', '/controller-settings', { controllerId, oidc: { redirectUris: ['https://first.example.com/cb'] } }), 'controller-settings');
    expectFieldError(await mgmt.call('POST', '/controller-settings', { controllerId, oidc: { redirectUris: ['https://second.example.com/cb'] } }), 'controllerId');
    expect((await get(`/controller-settings/${controllerId}`)).oidc.redirectUris).toEqual(['https://first.example.com/cb']);
  });
});

describe('validation', () => {
  afterEach(removeOverride);

  it('controllerId must name a known controller (not `global`) and is required', async () => {
    for (const body of [{ controllerId: 'not-a-controller' }, { controllerId: 'global' }, { controllerId: '' }, {}, { controllerId: 7 }]) {
      expectFieldError(await mgmt.call('POST', '/controller-settings', body), 'controllerId');
    }
    expect((await mgmt.call('GET', '/controller-settings')).body.data.map((s: { id: string }) => s.id)).toEqual(['global']);
  });

  it('every OIDC URI must be absolute, on create, PUT and PATCH, and a refused write changes nothing', async () => {
    for (const bad of ['/relative/cb', 'no-scheme.example.com', 'https://', 'http:// spaced.example.com/cb', 'https://bad host/cb', '', '1http://x']) {
      expectFieldError(await mgmt.call('POST', '/controller-settings', { controllerId, oidc: { redirectUris: ['https://ok.example.com/cb', bad] } }), 'oidc.redirectUris');
      expectFieldError(await mgmt.call('PATCH', '/controller-settings/global/effective', { oidc: { postLogoutUris: [bad] } }), 'oidc.postLogoutUris');
      expectFieldError(await mgmt.call('PUT', '/controller-settings/global/effective', { oidc: { redirectUris: [bad] } }), 'oidc.redirectUris');
    }
    expectError(await mgmt.call('GET', `/controller-settings/${controllerId}`), 404, 'NOT_FOUND');
    expect((await get('/controller-settings/global')).oidc.redirectUris).toEqual(OPENZITI_REDIRECTS);
    // Custom schemes and wildcard ports are absolute URIs.
    expectCreated(await mgmt.call('POST', '/controller-settings', { controllerId, oidc: { redirectUris: ['myapp://cb', 'http://127.0.0.1:*/cb', 'urn:ietf:wg:oauth:2.0:oob'] } }), 'controller-settings');
  });

  it('wrong types, NUL bytes and oversized lists are 400 with nothing written', async () => {
    const bodies: [unknown, string][] = [
      [{ controllerId, oidc: { redirectUris: 'https://x.example.com' } }, 'oidc.redirectUris'],
      [{ controllerId, oidc: { redirectUris: [1] } }, 'oidc.redirectUris.0'],
      [{ controllerId, oidc: [] }, 'oidc'],
      [{ controllerId, oidc: { redirectUris: Array.from({ length: 101 }, (_, i) => `https://h${i}.example.com/cb`) } }, 'oidc.redirectUris'],
      [{ controllerId, oidc: { redirectUris: [`https://x.example.com/${'a'.repeat(3000)}`] } }, 'oidc.redirectUris.0'],
      [{ controllerId, tags: 'x' }, 'tags'],
    ];
    for (const [body, field] of bodies) expectFieldError(await mgmt.call('POST', '/controller-settings', body), field);
    expectError(await mgmt.call('POST', '/controller-settings', { controllerId, oidc: { redirectUris: ['https://x.example.com/\u0000'] } }), 400, 'COULD_NOT_VALIDATE');
    expectFieldError(await mgmt.call('PATCH', '/controller-settings/global/effective', { oidc: { redirectUris: 'x' } }), 'oidc.redirectUris');
    expectError(await mgmt.call('GET', `/controller-settings/${controllerId}`), 404, 'NOT_FOUND');
  });

  it('lists filter, sort and page like the other lists; bad filters are 400', async () => {
    expectCreated(await mgmt.call('POST', '/controller-settings', { controllerId, tags: { site: 'b' } }), 'controller-settings');
    const byId = await mgmt.call('GET', `/controller-settings?filter=${encodeURIComponent('id = "global"')}`);
    expectList(byId);
    expect(byId.body.data.map((s: { id: string }) => s.id)).toEqual(['global']);
    const page = await mgmt.call('GET', '/controller-settings?limit=1&offset=1&sort=id%20desc');
    expectList(page);
    expect(page.body.meta.pagination).toMatchObject({ limit: 1, offset: 1, totalCount: 2 });
    expect(page.body.data.map((s: { id: string }) => s.id)).toEqual([[controllerId, 'global'].sort().reverse()[1]]);
    expect((await mgmt.call('GET', `/controller-settings?filter=${encodeURIComponent('isSystem = false')}`)).body.data.map((s: { id: string }) => s.id)).toEqual([controllerId]);
    expectError(await mgmt.call('GET', `/controller-settings?filter=${encodeURIComponent('nope = 1')}`), 400, 'INVALID_FILTER');
  });
});

describe('access', () => {
  it('non-admins are refused; admin_readonly reads only', async () => {
    const plain = (await loginAs(ctl().http, await createUser(mgmt))).session;
    const readonly = (await loginAs(ctl().http, await createUser(mgmt, { permissions: ['admin_readonly'] }))).session;
    for (const [method, path, body] of [
      ['GET', '/controller-settings'], ['GET', '/controller-settings/global'], ['GET', '/controller-settings/global/effective'],
      ['POST', '/controller-settings', { controllerId }], ['PUT', '/controller-settings/global/effective', {}],
      ['PATCH', '/controller-settings/global/effective', {}], ['DELETE', '/controller-settings/global/effective'],
    ] as [string, string, unknown?][]) {
      expectError(await plain.call(method, path, body), 401, 'UNAUTHORIZED');
      if (method === 'GET') expectSuccess(await readonly.call(method, path));
      else expectError(await readonly.call(method, path, body), 401, 'UNAUTHORIZED');
    }
    expectError(await ctl().http.get('/edge/management/v1/controller-settings'), 401, 'UNAUTHORIZED');
  });
});
