import type { EdgeApi } from '../support/clients.js';
import { policyBuilder, policyClients, unique } from '../support/clients-policy.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectError, expectList } from '../support/envelope.js';
import type { HttpResponse } from '../support/http.js';

/**
 * The fabric API (`/fabric/v1`) as the admin console reads it: `GET /routers` (every router kind,
 * `connected`), `/terminators`, and `/links` and `/circuits` (empty: no router connects to this
 * controller), in the envelope, paged and filtered as the Edge lists, doubled slashes tolerated,
 * for admins only. The fabric swagger (openziti/ziti `controller/specs/swagger.yml`) is not in the
 * reference folder, and the spec validator skips `/fabric` paths (`resolveApiPath`), so the shapes
 * of its `routerDetail`, `terminatorDetail` and list envelope are asserted here field by field.
 * Also the admin console's `GET /edge/management/v1//terminators?limit=1000&filter=identity`.
 */

const ctl = useController({ natsUrl: undefined });
failOnConformanceProblems();

let mgmt: EdgeApi;
let m: ReturnType<typeof policyClients>;
let build: ReturnType<typeof policyBuilder>;

const fabric = (path: string, token: string | null = mgmt.token ?? null) => ctl().http.request({ method: 'GET', path: `/fabric/v1${path}`, token: token ?? undefined });

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const ERROR_META = { apiEnrollmentVersion: '0.0.1', apiVersion: '0.0.1' };

function dataOf(res: HttpResponse): Record<string, any>[] {
  expectList(res);
  return res.body.data as Record<string, any>[];
}

beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
  m = policyClients(mgmt);
  build = policyBuilder(mgmt);
});

describe('GET /fabric/v1/routers', () => {
  it('lists every router (edge, transit, fabric) in the fabric routerDetail shape, offline', async () => {
    const t = unique('fab');
    const edge = await build.edgeRouter([`${t}-r`], { cost: 3 });
    const transit = expectCreated(await m.transitRouters.create({ name: `${t}-transit`, noTraversal: true }), 'transit-routers');
    const plain = expectCreated(await m.routers.create({ name: `${t}-fabric`, tags: { zone: 'a' } }), 'routers');

    const res = await fabric(`/routers?limit=500&filter=${encodeURIComponent(`id in ["${edge}", "${transit}", "${plain}"]`)}`);
    const items = dataOf(res);
    expect(items.map((r) => r.id).sort()).toEqual([edge, transit, plain].sort());
    expect(res.body.meta).toEqual({ filterableFields: expect.arrayContaining(['id', 'name', 'cost', 'disabled', 'noTraversal']), pagination: { limit: 500, offset: 0, totalCount: 3 } });
    for (const r of items) {
      expect(Object.keys(r).sort()).toEqual(['_links', 'configs', 'connected', 'cost', 'createdAt', 'disabled', 'fingerprint', 'id', 'interfaces', 'listenerAddresses', 'name', 'noTraversal', 'tags', 'updatedAt']);
      expect(r).toMatchObject({
        _links: { self: { href: `./routers/${r.id}` }, terminators: { href: `./routers/${r.id}/terminators` } },
        configs: null, connected: false, disabled: false, interfaces: null, listenerAddresses: null,
        createdAt: expect.stringMatching(TIMESTAMP), updatedAt: expect.stringMatching(TIMESTAMP),
      });
      expect(Object.keys(r._links).sort()).toEqual(['self', 'terminators']);
    }
    const byId = new Map(items.map((r) => [r.id, r]));
    expect(byId.get(edge)).toMatchObject({ name: (await m.edgeRouters.get(edge)).body.data.name, cost: 3, noTraversal: false, tags: {} });
    expect(byId.get(transit)).toMatchObject({ name: `${t}-transit`, cost: 0, noTraversal: true, fingerprint: null });
    expect(byId.get(plain)).toMatchObject({ name: `${t}-fabric`, fingerprint: null, tags: { zone: 'a' } });
  });

  it('tolerates doubled slashes, pages, sorts and refuses a bad filter as the Edge lists do', async () => {
    const t = unique('fabpage');
    for (const n of ['a', 'b', 'c']) await build.edgeRouter([`${t}-${n}`]);
    const filter = encodeURIComponent(`name contains "er-" and anyOf(id) != "x"`);
    expectError(await fabric(`/routers?filter=${filter}`), 400, 'INVALID_FILTER');

    const all = dataOf(await fabric('//routers?limit=-1'));
    const doubled = await ctl().http.request({ method: 'GET', path: '/fabric/v1//routers?limit=-1', token: mgmt.token });
    expect(dataOf(doubled).map((r) => r.id)).toEqual(all.map((r) => r.id));
    expect(doubled.text).toContain('"limit":9223372036854775807');

    const page = await fabric('/routers?limit=2&offset=1&filter=' + encodeURIComponent('true sort by name desc'));
    expect(page.body.meta.pagination).toEqual({ limit: 2, offset: 1, totalCount: all.length });
    const names = all.map((r) => r.name as string).sort().reverse();
    expect(dataOf(page).map((r) => r.name)).toEqual(names.slice(1, 3));

    const defaults = await fabric('/routers');
    expect(defaults.body.meta.pagination).toMatchObject({ limit: 10, offset: 0 });
    expectError(await fabric('/routers?filter=' + encodeURIComponent('name = ')), 400, 'INVALID_FILTER');
    expectError(await fabric('/routers?filter=nosuch'), 400, 'INVALID_FILTER');
  });
});

describe('GET /fabric/v1/terminators', () => {
  it('lists terminators in the fabric terminatorDetail shape (instanceId, hostId, fabric entity refs)', async () => {
    const s = await build.service();
    const er = await build.edgeRouter();
    const id = expectCreated(await m.terminators.create({ service: s, router: er, binding: 'transport', address: 'tcp:10.0.0.9:80', cost: 4, precedence: 'failed' }), 'terminators');
    const items = dataOf(await fabric(`/terminators?filter=${encodeURIComponent(`id = "${id}"`)}`));
    expect(items).toHaveLength(1);
    const service = (await m.services.get(s)).body.data;
    const router = (await m.edgeRouters.get(er)).body.data;
    expect(items[0]).toEqual({
      _links: { self: { href: `./terminators/${id}` } },
      address: 'tcp:10.0.0.9:80',
      binding: 'transport',
      cost: 4,
      createdAt: expect.stringMatching(TIMESTAMP),
      dynamicCost: 0,
      hostId: '',
      id,
      instanceId: '',
      precedence: 'failed',
      router: { _links: { self: { href: `./routers/${er}` }, terminators: { href: `./routers/${er}/terminators` } }, entity: 'routers', id: er, name: router.name },
      routerId: er,
      service: { _links: { self: { href: `./services/${s}` }, terminators: { href: `./services/${s}/terminators` } }, entity: 'services', id: s, name: service.name },
      serviceId: s,
      tags: {},
      updatedAt: expect.stringMatching(TIMESTAMP),
    });
  });
});

describe('GET /fabric/v1/links and /fabric/v1/circuits', () => {
  it.each(['links', 'circuits'])('/%s is an empty list in the envelope (no router connects yet), its filter still checked', async (what) => {
    const res = await fabric(`/${what}`);
    expect(res.body).toEqual({ data: [], meta: { filterableFields: expect.arrayContaining(['id']), pagination: { limit: 10, offset: 0, totalCount: 0 } } });
    expect(dataOf(await fabric(`//${what}?limit=1000&filter=${encodeURIComponent('id = "x"')}`))).toEqual([]);
    expectError(await fabric(`/${what}?filter=identity`), 400, 'INVALID_FILTER');
  });
});

describe('access', () => {
  it.each(['/routers', '/terminators', '/links', '/circuits'])('%s: 401 without a session, with a bad one, and for a non-admin', async (path) => {
    const none = await fabric(path, null);
    expectError(none, 401, 'UNAUTHORIZED');
    expectError(await fabric(path, 'not-a-session'), 401, 'UNAUTHORIZED');
    const user = await build.identity([]);
    const login = await ctl().http.request({ method: 'POST', path: '/edge/management/v1/authenticate?method=password', json: { username: user.username, password: user.password } });
    expectError(await fabric(path, login.body.data.token as string), 401, 'UNAUTHORIZED');
  });

  it('answers 404 for an unknown fabric path and 405 for a write it does not serve', async () => {
    expectError(await fabric('/nope'), 404, 'NOT_FOUND');
    expectError(await ctl().http.request({ method: 'DELETE', path: '/fabric/v1/links', token: mgmt.token }), 405, 'METHOD_NOT_ALLOWED');
  });
});

describe("the admin console's terminator query", () => {
  it('GET /edge/management/v1//terminators?limit=1000&filter=identity is 400 INVALID_FILTER: `identity` is no terminator symbol', async () => {
    const res = await ctl().http.request({ method: 'GET', path: '/edge/management/v1//terminators?limit=1000&filter=identity', token: mgmt.token });
    expectError(res, 400, 'INVALID_FILTER');
    expect(res.body).toEqual({
      error: {
        cause: { code: 'UNHANDLED', message: "unknown symbol 'identity'" },
        code: 'INVALID_FILTER',
        message: 'The filter query supplied is invalid',
        requestId: expect.any(String),
      },
      meta: ERROR_META,
    });
    // The instance id is filterable under the controller's name for it.
    expectList(await ctl().http.request({ method: 'GET', path: `/edge/management/v1/terminators?filter=${encodeURIComponent('instanceId = ""')}`, token: mgmt.token }));
  });
});
