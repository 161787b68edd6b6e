import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { restoreControllerSnapshot } from '@ziti/controller/dist/restore-snapshot.js';
import { createTestDatabase, type TestDatabase } from '@ziti/test-kit';
import { EdgeApi, auth } from '../support/clients.js';
import { ids, policyBuilder, policyClients, unique } from '../support/clients-policy.js';
import { networkBuilder, sessionClients } from '../support/clients-session.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { type TestController, startTestController, useController } from '../support/controller.js';
import { expectEmpty, expectError, expectSuccess } from '../support/envelope.js';
import { type SecondGateway, startSecondGateway } from '../support/second-gateway.js';

/**
 * The operations the gateway answers by asking every context: `GET /summary` (counts equal to the
 * management lists' `totalCount`) and `POST /database/snapshot` (one file, one transaction view,
 * once a minute across replicas), and restoring that file into a fresh database.
 */

const ctl = useController();
failOnConformanceProblems();

let mgmt: EdgeApi;
let user: { id: string; username: string; password: string; mgmt: EdgeApi };
const made = { identities: [] as string[], services: [] as string[], configs: [] as string[], sessions: [] as string[] };

/** Each summary key and the management list whose totalCount it must equal. */
const LISTS: Record<string, string> = {
  identities: '/identities',
  identityTypes: '/identity-types',
  authenticators: '/authenticators',
  authPolicies: '/auth-policies',
  apiSessions: '/api-sessions',
  externalJwtSigners: '/external-jwt-signers',
  cas: '/cas',
  enrollments: '/enrollments',
  configTypes: '/config-types',
  configs: '/configs',
  services: '/services',
  routers: '/routers',
  'routers.edge': '/edge-routers',
  terminators: '/terminators',
  servicePolicies: '/service-policies',
  edgeRouterPolicies: '/edge-router-policies',
  serviceEdgeRouterPolicies: '/service-edge-router-policies',
  postureChecks: '/posture-checks',
  postureCheckTypes: '/posture-check-types',
  sessions: '/sessions',
  controllers: '/controllers',
};
/** Kept by the controller but without a management list of their own. */
const UNLISTED = ['apiSessionCertificates', 'mfas'];

async function totalCount(api: EdgeApi, path: string): Promise<number> {
  const res = await api.call('GET', `${path}?limit=1`);
  expectSuccess(res);
  return res.body.meta.pagination.totalCount as number;
}

async function summary(api: EdgeApi): Promise<Record<string, number>> {
  const res = await api.call('GET', '/summary');
  expectSuccess(res);
  return res.body.data as Record<string, number>;
}

beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
  const build = policyBuilder(mgmt);
  const net = networkBuilder(mgmt);
  const p = policyClients(mgmt);
  const tag = unique('m');
  const u = await build.identity([`${tag}-users`]);
  made.identities.push(u.id, (await build.identity([`${tag}-users`])).id);
  const enrolling = await mgmt.identities.create({ name: unique('enrolling'), type: 'User', isAdmin: false, enrollment: { ott: true } });
  expectSuccess(enrolling, 201);
  made.identities.push(enrolling.body.data.id);
  const login = await auth.login(ctl().http, u.username, u.password, 'management');
  if (!login.token) throw new Error(`login failed: ${login.res.text}`);
  user = { ...u, mgmt: login.session };

  const configType = await build.configType({ type: 'object' });
  made.configs.push(await build.config(configType, { a: 1 }), await build.config(configType, { b: [true, null, 'x'] }));
  made.services.push(await build.service([`${tag}-svc`], [made.configs[0]!]), await build.service([`${tag}-svc`]));
  const er = await build.edgeRouter([`${tag}-er`]);
  await build.edgeRouter([`${tag}-er`]);
  expectSuccess(await p.transitRouters.create({ name: unique('tr'), cost: 3 }), 201);
  expectSuccess(await p.terminators.create({ service: made.services[0], router: er, binding: 'transport', address: 'tcp:10.0.0.1:80' }), 201);
  await build.edgeRouterPolicy([`#${tag}-er`], [`#${tag}-users`], 'AnyOf');
  await build.serviceEdgeRouterPolicy([`#${tag}-er`], [`#${tag}-svc`], 'AnyOf');
  await build.servicePolicy('Dial', [`#${tag}-svc`], [`#${tag}-users`], 'AnyOf');
  await build.servicePolicy('Bind', [`#${tag}-svc`], [`#${tag}-users`], 'AnyOf');
  await net.postureCheck('DOMAIN', { domains: ['example.org'] }, [`${tag}-pc`]);

  const client = await auth.login(ctl().http, u.username, u.password, 'client');
  if (!client.token) throw new Error(`client login failed: ${client.res.text}`);
  const session = await sessionClients(client.session).createSession(made.services[0]!, 'Dial');
  expectSuccess(session, 201);
  made.sessions.push(session.body.data.id);
}, 60_000);

describe('GET /summary', () => {
  it("counts every entity type under OpenZiti's names, each equal to its management list's totalCount", async () => {
    const counts = await summary(mgmt);
    expect(Object.keys(counts).sort()).toEqual([...Object.keys(LISTS), ...UNLISTED].sort());
    for (const [key, path] of Object.entries(LISTS)) {
      expect({ key, count: counts[key] }).toEqual({ key, count: await totalCount(mgmt, path) });
    }
    expect(counts).toMatchObject({ controllers: 1, 'routers.edge': 2, routers: 3, configs: 2, terminators: 1, servicePolicies: 2, sessions: 1, postureChecks: 1 });
    expect(counts.identities).toBe(4); // the default admin and the three made here
    expect(counts.enrollments).toBeGreaterThanOrEqual(1);
    expect(counts.postureCheckTypes).toBeGreaterThan(0);
    expect(counts.apiSessionCertificates).toBe(0);
    expect(counts.mfas).toBe(0);
  });

  it('moves with a create and a delete at once', async () => {
    const before = await summary(mgmt);
    const id = await policyBuilder(mgmt).service();
    expect((await summary(mgmt)).services).toBe(before.services! + 1);
    expectEmpty(await policyClients(mgmt).services.delete(id));
    expect((await summary(mgmt)).services).toBe(before.services);
  });

  it('is for admins only, and only on the management API', async () => {
    expectError(await user.mgmt.call('GET', '/summary'), 401, 'UNAUTHORIZED');
    expectError(await mgmt.withToken(undefined).call('GET', '/summary'), 401, 'UNAUTHORIZED');
    const clientApi = await ctl().adminSession('client');
    expectError(await clientApi.call('GET', '/summary'), 404, 'NOT_FOUND');
  });
});

describe('POST /database/snapshot', () => {
  let b: SecondGateway;
  let snapshot: string;
  let before: Record<string, number>;
  const dir = () => join(ctl().options.dataDir, 'snapshots');

  afterAll(async () => {
    await b?.stop();
  });

  it('is refused to non-admins without taking one', async () => {
    expectError(await user.mgmt.call('POST', '/database/snapshot'), 401, 'UNAUTHORIZED');
    expectError(await mgmt.withToken(undefined).call('POST', '/database/snapshot'), 401, 'UNAUTHORIZED');
    expect(existsSync(dir()) ? readdirSync(dir()) : []).toEqual([]);
  });

  it('writes one complete, timestamped file with every context, and answers the empty envelope', async () => {
    before = await summary(mgmt);
    const res = await mgmt.call('POST', '/database/snapshot', {});
    expectEmpty(res);
    const files = readdirSync(dir());
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^ziti-db-\d{8}-\d{6}\.jsonl\.gz$/);
    snapshot = join(dir(), files[0]!);
    const lines = gunzipSync(readFileSync(snapshot)).toString('utf8').trimEnd().split('\n');
    const control = lines.filter((l) => l.startsWith('[')).map((l) => JSON.parse(l) as [string, Record<string, unknown>]);
    expect(control[0]![1]).toMatchObject({ format: 'ziti-controller-snapshot', contexts: ['identity-auth', 'pki-enrollment', 'policy', 'session', 'posture', 'fabric'] });
    expect(control.filter(([k]) => k === 'context').map(([, v]) => v.schema)).toEqual(['identity_auth', 'pki_enrollment', 'policy', 'session', 'posture', 'fabric']);
    expect(control.at(-1)).toEqual(['end', { contexts: 6 }]);
    for (const id of [...made.identities, ...made.services, ...made.sessions]) expect(lines.some((l) => l.includes(`"id":"${id}"`))).toBe(true);
  });

  it('is limited to one a minute, across gateway replicas sharing the cache', async () => {
    expectError(await mgmt.call('POST', '/database/snapshot'), 429, 'RATE_LIMITED');
    b = await startSecondGateway(ctl());
    const viaB = new EdgeApi(b.http, 'management', mgmt.token);
    expectError(await viaB.call('POST', '/database/snapshot'), 429, 'RATE_LIMITED');
    expect(readdirSync(dir())).toHaveLength(1);
    // The second replica answers the summary too, from the same contexts.
    expect(await summary(viaB)).toEqual(await summary(mgmt));
  });

  it('answers 503 in the envelope when a context does not answer, rather than partial counts', async () => {
    const grpc = Object.fromEntries(Object.entries(ctl().running.services).map(([name, s]) => [name, s.grpcAddress]));
    const c = await startSecondGateway(ctl(), { name: 'gateway-c', extra: { contextGrpc: { ...grpc, session: '127.0.0.1:1' } } });
    try {
      const viaC = new EdgeApi(c.http, 'management', mgmt.token);
      expectError(await viaC.call('GET', '/summary'), 503, 'SERVICE_UNAVAILABLE');
    } finally {
      await c.stop();
    }
  });

  describe('restored into a fresh database', () => {
    let fresh: TestDatabase;
    let restored: TestController | undefined;

    beforeAll(async () => {
      fresh = await createTestDatabase(ctl().infra.databaseUrl, 'restore');
    });
    afterAll(async () => {
      await restored?.stop();
      await fresh?.drop();
    }, 60_000);

    it('holds the data of the moment of the snapshot, which a controller on it serves', async () => {
      const logs: string[] = [];
      const result = await restoreControllerSnapshot({ file: snapshot, databaseUrl: fresh.url, dataDir: ctl().options.dataDir, log: (m) => logs.push(m) });
      expect(result.map((r) => r.name)).toEqual(['identity-auth', 'pki-enrollment', 'policy', 'session', 'posture', 'fabric']);
      // The same secrets as the original (its PKI keys and MFA secrets are sealed with them).
      restored = await startTestController({ databaseUrl: fresh.url, internalSecret: ctl().options.internalSecret, adminPassword: ctl().admin.password });
      // The admin of the snapshot, with the password it had then.
      const login = await auth.login(restored.http, ctl().admin.username, ctl().admin.password, 'management');
      expectSuccess(login.res);
      const admin = login.session;
      const after = await summary(admin);
      // Every count as at the snapshot, but the admin's new API session.
      expect(after).toEqual({ ...before, apiSessions: before.apiSessions! + 1 });
      const identities = await admin.identities.list({ limit: -1 });
      for (const id of made.identities) expect(ids(identities)).toContain(id);
      expect(ids(await policyClients(admin).services.list({ limit: -1 }))).toEqual(ids(await policyClients(mgmt).services.list({ limit: -1 })));
      expect(ids(await sessionClients(admin).sessions.list())).toEqual(made.sessions);
      // Credentials restored: the user logs in with the password set before the snapshot.
      expect((await auth.login(restored.http, user.username, user.password, 'management')).token).toBeTruthy();
    }, 120_000);

    it('refuses to restore over a database that holds data', async () => {
      await expect(restoreControllerSnapshot({ file: snapshot, databaseUrl: fresh.url, dataDir: ctl().options.dataDir })).rejects.toThrow(/already holds data/);
    });
  });
});
