import { BASE } from '../support/clients.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectError, expectList, expectSuccess } from '../support/envelope.js';
import type { HttpResponse } from '../support/http.js';

/** Path aliases and `/version` (reference §1.1, §10, §11). */

const ctl = useController();
failOnConformanceProblems();

function expectVersion(res: HttpResponse): void {
  expectSuccess(res);
  expect(typeof res.body.data.version).toBe('string');
  expect(typeof res.body.data.apiVersions).toBe('object');
  expect(Array.isArray(res.body.data.capabilities)).toBe(true);
}

describe('version aliases', () => {
  it.each([
    '/version',
    '/',
    '/edge/client/v1',
    '/edge/client/v1/',
    '/edge/client/v1/version',
    '/edge/management/v1',
    '/edge/management/v1/version',
    '/edge/v1/version',
  ])('GET %s → the version envelope', async (path) => {
    expectVersion(await ctl().http.get(path));
  });

  it('doubled slashes are normalised', async () => {
    expectVersion(await ctl().http.get('/edge/client/v1//version'));
    const mgmt = await ctl().adminSession('management');
    expectList(await ctl().http.get('/edge/management/v1//identities', mgmt.token));
  });
});

describe('GET /version content', () => {
  let res: HttpResponse;
  beforeAll(async () => {
    res = await ctl().http.get(`${BASE.management}/version`);
  });

  it('apiVersions has edge, edge-client and edge-management, each with v1.path and apiBaseUrls', () => {
    expectSuccess(res);
    const v = res.body.data.apiVersions;
    const expected: Record<string, string> = { edge: '/edge/client/v1', 'edge-client': '/edge/client/v1', 'edge-management': '/edge/management/v1', 'edge-oidc': '/oidc' };
    for (const [binding, path] of Object.entries(expected)) {
      expect(v[binding]?.v1?.path).toBe(path);
      const urls = v[binding].v1.apiBaseUrls;
      expect(Array.isArray(urls) && urls.length > 0).toBe(true);
      for (const u of urls) expect(u).toMatch(new RegExp(`^https://[^/]+${path.replace(/\//g, '\\/')}$`));
    }
  });

  it('advertises OIDC: OIDC_AUTH and OIDC_AUTH_WITH_CSR, and the edge-oidc binding at /oidc', () => {
    expect(res.body.data.capabilities).toEqual(['OIDC_AUTH', 'OIDC_AUTH_WITH_CSR']);
    const oidc = res.body.data.apiVersions['edge-oidc'];
    expect(oidc?.v1?.path).toBe('/oidc');
    expect(oidc.v1.apiBaseUrls).toHaveLength(1);
    expect(oidc.v1.apiBaseUrls[0]).toMatch(/^https:\/\/[^/]+\/oidc$/);
  });

  it('is the same on both APIs', async () => {
    const client = await ctl().http.get(`${BASE.client}/version`);
    expectSuccess(client);
    expect(client.body.data.apiVersions).toEqual(res.body.data.apiVersions);
    expect(client.body.data.version).toBe(res.body.data.version);
  });
});

describe('tokens on anonymous endpoints', () => {
  it('GET /version with Authorization: Bearer <legacy token> → 200', async () => {
    const mgmt = await ctl().adminSession('management');
    const res = await ctl().http.get('/version', undefined, { authorization: `Bearer ${mgmt.token}` });
    expectVersion(res);
  });

  it('GET /version with an unknown zt-session → 200 and no WWW-Authenticate', async () => {
    const res = await ctl().http.get(`${BASE.client}/version`, '00000000-0000-4000-8000-000000000000');
    expectVersion(res);
    expect(res.headers['www-authenticate']).toBeUndefined();
  });
});

describe('un-prefixed client paths', () => {
  it('POST /authenticate?method=password logs in', async () => {
    const { username, password } = ctl().admin;
    const res = await ctl().http.request({ method: 'POST', path: '/authenticate?method=password', json: { username, password } });
    expectSuccess(res);
    expect(typeof res.body.data.token).toBe('string');
  });

  it('GET /current-api-session with the token works un-prefixed', async () => {
    const mgmt = await ctl().adminSession('client');
    const res = await ctl().http.get('/current-api-session', mgmt.token);
    expectSuccess(res);
    expect(res.body.data.token).toBe(mgmt.token);
  });

  it('an unknown un-prefixed path → 404 NOT_FOUND', async () => {
    expectError(await ctl().http.get('/no-such-thing-here'), 404, 'NOT_FOUND');
  });
});
