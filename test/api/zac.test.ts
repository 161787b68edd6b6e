import { auth } from '../support/clients.js';
import { networkBuilder, sessionClients } from '../support/clients-session.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import type { HttpResponse } from '../support/http.js';

/**
 * What OpenZiti's admin console (ZAC 4.5) sends, in its own URL shapes (ziti-console-lib
 * `ziti-controller-data.service.ts` `getUrlFilter`/`call`, `pages/geolocate` for the dashboard and
 * its map, the `*-page.service.ts` list pages): the login, the dashboard's counts and map data, and
 * every list page. None of it may answer 4xx or 5xx, and the dashboard's counts are the lists' totals.
 */

const ctl = useController({ natsUrl: undefined });
failOnConformanceProblems();

const MGMT = '/edge/management/v1';
/** ZAC's list paging (`DEFAULT_PAGING`-like: 50 a page, page 1, by name), with its two spaces before the order when it searches. */
const page = (sort = 'name') => `?limit=50&offset=0&sort=${encodeURIComponent(`${sort} asc`)}`;

let token: string;

async function zacGet(path: string): Promise<HttpResponse> {
  const res = await ctl().http.request({ method: 'GET', path, token });
  if (res.status >= 400) throw new Error(`ZAC's GET ${path} answered ${res.status}: ${res.text.slice(0, 400)}`);
  return res;
}

beforeAll(async () => {
  const mgmt = await ctl().adminSession('management');
  // A small network: an identity that has logged in and holds a session, a service with a config,
  // the three policies, an edge router and a transit router.
  const net = networkBuilder(mgmt);
  const tag = net.unique('zac');
  const user = await net.identity([`${tag}-users`]);
  const intercept = await mgmt.call('GET', `/config-types?filter=${encodeURIComponent('name = "intercept.v1"')}`);
  const configId = await mgmt
    .call('POST', '/configs', {
      name: net.unique('cfg'),
      configTypeId: intercept.body.data[0].id,
      data: { protocols: ['tcp'], addresses: ['zac.example'], portRanges: [{ low: 80, high: 80 }] },
    })
    .then((r) => r.body.data.id as string);
  const serviceId = await mgmt
    .call('POST', '/services', { name: net.unique('svc'), roleAttributes: [`${tag}-svc`], configs: [configId], encryptionRequired: true })
    .then((r) => r.body.data.id as string);
  await net.edgeRouter([`${tag}-routers`]);
  await mgmt.call('POST', '/transit-routers', { name: net.unique('tr') });
  await net.edgeRouterPolicy([`#${tag}-users`], [`#${tag}-routers`]);
  await net.serviceEdgeRouterPolicy([`#${tag}-svc`], [`#${tag}-routers`]);
  await net.servicePolicy('Dial', [`#${tag}-users`], [`#${tag}-svc`]);
  const login = await auth.login(ctl().http, user.username, user.password, 'client');
  const session = await sessionClients(login.session).createSession(serviceId, 'Dial');
  if (session.status !== 201) throw new Error(`session create failed: ${session.status} ${session.text}`);
});

describe('ZAC', () => {
  it('logs in the way ZAC does', async () => {
    await zacGet(`${MGMT}/version`);
    await ctl().http.request({ method: 'GET', path: '/edge/client/v1/external-jwt-signers', validate: true }).then((r) => expect(r.status).toBe(200));
    const res = await ctl().http.request({
      method: 'POST',
      path: `${MGMT}/authenticate?method=password`,
      json: { username: ctl().admin.username, password: ctl().admin.password },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ token: expect.any(String), expiresAt: expect.any(String), expirationSeconds: expect.any(Number) });
    token = res.body.data.token;
    // ZAC sends the legacy token as a bearer token on /version too; that must not fail.
    const version = await ctl().http.request({ method: 'GET', path: `${MGMT}/version`, headers: { authorization: `Bearer ${token}` } });
    expect(version.status).toBe(200);
  });

  it('dashboard: the counts are the totals of the lists they stand for', async () => {
    const summary = (await zacGet(`${MGMT}/summary?limit=1&offset=0&sort=${encodeURIComponent('name asc')}`)).body.data;
    const totals: Record<string, string> = {
      identities: 'identities',
      'routers.edge': 'edge-routers',
      services: 'services',
      configs: 'configs',
      servicePolicies: 'service-policies',
      sessions: 'sessions',
    };
    for (const [key, list] of Object.entries(totals)) {
      const total = (await zacGet(`${MGMT}/${list}?limit=1`)).body.meta.pagination.totalCount;
      expect({ key, count: summary[key] }).toEqual({ key, count: total });
      expect(summary[key]).toBeGreaterThan(0);
    }
  });

  it('dashboard map: routers, identities, services, links, circuits and terminators, with doubled slashes', async () => {
    const fabricRouters = (await zacGet('/fabric/v1//routers?limit=1000')).body.data as { id: string }[];
    const edgeRouters = (await zacGet(`${MGMT}/edge-routers?limit=1000&offset=0&sort=${encodeURIComponent('name asc')}`)).body.data as { id: string }[];
    const transitRouters = (await zacGet(`${MGMT}/transit-routers?limit=1000`)).body.data as { id: string }[];
    // The fabric list holds every router, edge and transit.
    expect(fabricRouters.map((r) => r.id).sort()).toEqual([...edgeRouters, ...transitRouters].map((r) => r.id).sort());
    await zacGet(`${MGMT}/identities?limit=1000&offset=0&sort=${encodeURIComponent('name asc')}`);
    await zacGet(`${MGMT}/services?limit=1000&offset=0&sort=${encodeURIComponent('name asc')}`);
    expect((await zacGet('/fabric/v1//links?limit=1000')).body.data).toEqual([]);
    expect((await zacGet('/fabric/v1//circuits?limit=1000')).body.data).toEqual([]);
    // `filter=identity` is refused by the real controller as well (terminators have no such
    // field); ZAC then falls back to the plain list, which must work.
    const odd = await ctl().http.request({ method: 'GET', path: `${MGMT}//terminators?limit=1000&filter=identity`, token });
    expect(odd.status).toBe(400);
    expect(odd.body.error.code).toBe('INVALID_FILTER');
    await zacGet(`${MGMT}/terminators?limit=1000&offset=0&sort=${encodeURIComponent('address asc')}`);
    await zacGet('/fabric/v1//terminators?limit=1000');
    for (const kind of ['identity', 'service', 'edge-router']) {
      await zacGet(`${MGMT}/${kind}-role-attributes?limit=100&offset=0&sort=${encodeURIComponent('name asc')}`);
    }
  });

  it('every list page, plain and with a search as ZAC builds it', async () => {
    const pages: [string, string][] = [
      ['identities', 'name'],
      ['services', 'name'],
      ['edge-routers', 'name'],
      ['transit-routers', 'name'],
      ['service-policies', 'name'],
      ['edge-router-policies', 'name'],
      ['service-edge-router-policies', 'name'],
      ['configs', 'name'],
      ['config-types', 'name'],
      ['posture-checks', 'name'],
      ['auth-policies', 'name'],
      ['cas', 'name'],
      ['external-jwt-signers', 'name'],
      ['sessions', 'createdAt'],
      ['api-sessions', 'createdAt'],
      ['terminators', 'address'],
    ];
    for (const [list, sort] of pages) {
      const plain = await zacGet(`${MGMT}/${list}${page(sort)}`);
      expect(Array.isArray(plain.body.data)).toBe(true);
      // A search: `?filter= <col> icontains "x"` with a leading space, then two spaces before the order.
      const column = sort === 'createdAt' ? 'id' : sort;
      const search = `?filter=${encodeURIComponent(` ${column} icontains "a"`)}&limit=50&offset=0&sort=${encodeURIComponent(`${sort}  asc`)}`;
      await zacGet(`${MGMT}/${list}${search}`);
    }
  });
});
