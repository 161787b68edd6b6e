import { internalFetch, internalTestClient } from '@ziti/service-kit';
import { type UntypedServiceImplementation } from '@grpc/grpc-js';
import { type RequestPrincipal, signPrincipal } from '@ziti/http-kit';
import { type ChangeEvent, type InProcessEventBus, createInProcessBus, createMemoryCache, newChangeEvent } from '@ziti/messaging';
import {
  type EvaluatePostureChecksResponse,
  PolicyServiceService,
  PostureServiceClient,
  type SyncPostureCheckRequest,
} from '@ziti/proto';
import { type GrpcListener, startGrpcServer } from '@ziti/service-kit';
import { type TestDatabase, createTestDatabase, testInfra } from '@ziti/test-kit';
import { runMigrations, startService } from './index.js';
import type { RunningService } from './service.js';

/**
 * The posture service on a real database and the in-memory cache, with a fake policy context:
 * checks are pushed to policy on every write, EvaluatePostureChecks answers per kind (MFA from
 * the caller's MFA time), RecordFailedServiceRequest feeds failed-service-requests, and posture
 * responses publish `posture-data.changed`.
 */

const SECRET = 'posture-test-secret';
const synced: SyncPostureCheckRequest[] = [];
let db: TestDatabase;
let bus: InProcessEventBus;
let service: RunningService;
let fake: GrpcListener;
let client: PostureServiceClient;
const events: ChangeEvent[] = [];

const principal = (identityId: string, apiSessionId: string, isAdmin = false): RequestPrincipal => ({
  identityId, identityName: identityId, apiSessionId, isAdmin, isDefaultAdmin: false, isFullyAuthenticated: true,
  permissions: [], configTypes: [], authenticatorId: 'a', expiresAt: '', expirationSeconds: 1800, identityTypeId: 'Default',
});
const admin = principal('root', 'as-root', true);

beforeAll(async () => {
  db = await createTestDatabase((await testInfra()).databaseUrl, 'posture');
  await runMigrations(db.url);
  fake = await startGrpcServer('127.0.0.1', 0, [
    {
      definition: PolicyServiceService,
      implementation: {
        syncPostureCheck: (call: { request: SyncPostureCheckRequest }, cb: (e: null, r: unknown) => void) => {
          synced.push(call.request);
          cb(null, {});
        },
        getRoleAttributeUsage: (_c: unknown, cb: (e: null, r: unknown) => void) => cb(null, { usages: [] }),
      } as unknown as UntypedServiceImplementation,
    },
  ], 'policy');
  bus = createInProcessBus();
  await bus.subscribeBroadcast('posture', ['>'], (e) => {
    events.push(e);
  });
  service = await startService({
    databaseUrl: db.url, bus, cache: createMemoryCache(), internalSecret: SECRET,
    http: { host: '127.0.0.1', port: 0 }, grpc: { host: '127.0.0.1', port: 0 }, policyGrpc: fake.address, log: () => undefined,
  });
  client = internalTestClient(PostureServiceClient, service.grpcAddress, 'posture');
});

afterAll(async () => {
  client?.close();
  await service?.stop();
  await fake?.stop();
  await bus?.close();
  await db?.drop();
});

async function call(p: RequestPrincipal, method: string, path: string, body?: unknown, api = 'management') {
  const res = await internalFetch(`${service.httpUrl}/edge/${api}/v1${path}`, {
    method,
    headers: { 'x-ziti-principal': signPrincipal(SECRET, p, 'r'), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** Waits (polling) for what the outbox relay publishes asynchronously after a commit. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 25));
  expect(done()).toBe(true);
}

const evaluate = (identityId: string, apiSessionId: string, ids: string[], mfaCompletedAt = '') =>
  new Promise<EvaluatePostureChecksResponse>((resolve, reject) =>
    client.evaluatePostureChecks({ identityId, apiSessionId, postureCheckIds: ids, mfaCompletedAt }, (err, res) => (err ? reject(err) : resolve(res))),
  );

async function createCheck(body: Record<string, unknown>): Promise<string> {
  const res = await call(admin, 'POST', '/posture-checks', { name: `pc-${Math.random()}`, ...body });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

it('answers that no posture check exists before the first one', async () => {
  expect(await evaluate('i0', 'a0', [])).toEqual({ results: [], anyPostureChecksExist: false });
});

it('pushes every committed write to the policy context with its detail, and publishes posture-check events', async () => {
  const id = await createCheck({ typeId: 'DOMAIN', domains: ['corp'], roleAttributes: ['r'] });
  expect(synced.at(-1)).toMatchObject({ postureCheckId: id, typeId: 'DOMAIN', roleAttributes: ['r'], deleted: false, version: 1 });
  expect(JSON.parse(synced.at(-1)!.detailJson)).toMatchObject({ id, domains: ['corp'], version: 1 });
  expect((await call(admin, 'DELETE', `/posture-checks/${id}`)).status).toBe(200);
  expect(synced.at(-1)).toMatchObject({ postureCheckId: id, deleted: true });
  const types = () => events.filter((e) => e.data.postureCheckId === id).map((e) => e.type);
  await until(() => types().length === 2);
  expect(types()).toEqual(['posture-check.created', 'posture-check.deleted']);
});

it('evaluates against posture responses, skipping unknown check ids, with the postureQuery extras', async () => {
  const domain = await createCheck({ typeId: 'DOMAIN', domains: ['Corp.Example'] });
  const proc = await createCheck({ typeId: 'PROCESS', process: { osType: 'Linux', path: '/usr/bin/agent' } });
  const alice = principal('alice', 'as-a');
  expect((await call(alice, 'POST', '/posture-response', { id: domain, typeId: 'DOMAIN', domain: 'corp.example' }, 'client')).status).toBe(201);
  const res = await evaluate('alice', 'as-a', [domain, proc, 'missing']);
  expect(res.anyPostureChecksExist).toBe(true);
  expect(res.results.map((r) => [r.id, r.isPassing, r.timeout])).toEqual([
    [domain, true, -1],
    [proc, false, -1],
  ]);
  expect(JSON.parse(res.results[1]!.queryJson)).toMatchObject({ _links: { self: { href: `./posture-checks/${proc}` } }, process: { osType: 'Linux', path: '/usr/bin/agent' } });
  await until(() => events.some((e) => e.type === 'posture-data.changed' && e.data.identityId === 'alice'));
});

it('evaluates MFA from the caller’s MFA time: passing within the timeout, failing once it lapsed', async () => {
  const mfa = await createCheck({ typeId: 'MFA', timeoutSeconds: 60 });
  expect((await evaluate('bob', 'as-b', [mfa])).results[0]).toMatchObject({ isPassing: false, timeout: 60, timeoutRemaining: 0 });
  const recent = new Date(Date.now() - 10_000).toISOString();
  const passing = (await evaluate('bob', 'as-b', [mfa], recent)).results[0]!;
  expect(passing.isPassing).toBe(true);
  expect(passing.timeoutRemaining).toBeGreaterThan(45);
  expect(JSON.parse(passing.queryJson).timeoutAt).toBe(new Date(Date.parse(recent) + 60_000).toISOString());
  // Recorded for the API session: later evaluations without the hint still see it.
  expect((await evaluate('bob', 'as-b', [mfa])).results[0]!.isPassing).toBe(true);
  const lapsed = new Date(Date.now() - 120_000).toISOString();
  expect((await evaluate('bob', 'as-b', [mfa], lapsed)).results[0]).toMatchObject({ isPassing: false, timeoutRemaining: 0 });
  const pd = await call(admin, 'GET', '/identities/bob/posture-data');
  expect(pd.body.data.apiSessionPostureData['as-b'].mfa).toMatchObject({ apiSessionId: 'as-b', passedMfa: true, passedAt: lapsed });
});

it('records failed service requests with each failing check’s expectation and the data of the moment', async () => {
  const domain = await createCheck({ typeId: 'DOMAIN', domains: ['corp'] });
  await new Promise<void>((resolve, reject) =>
    client.recordFailedServiceRequest(
      {
        identityId: 'carol', apiSessionId: 'as-c', serviceId: 's1', serviceName: 'one', sessionType: 'Dial',
        policyFailuresJson: JSON.stringify({ sp1: [{ id: domain, typeId: 'DOMAIN', isPassing: false }] }),
      },
      (err) => (err ? reject(err) : resolve()),
    ),
  );
  const res = await call(admin, 'GET', '/identities/carol/failed-service-requests');
  expect(res.body.data).toEqual([
    {
      apiSessionId: 'as-c', serviceId: 's1', serviceName: 'one', sessionType: 'Dial', when: expect.any(String),
      policyFailures: [{ policyId: 'sp1', checks: [{ postureCheckId: domain, postureCheckName: expect.any(String), postureCheckType: 'DOMAIN', actualValue: '', expectedValue: ['corp'] }] }],
    },
  ]);
});

it('drops an identity’s posture data when identity-auth deletes it', async () => {
  const eve = principal('eve', 'as-e');
  await call(eve, 'POST', '/posture-response', { id: 'x', typeId: 'DOMAIN', domain: 'eve.example' }, 'client');
  expect((await call(admin, 'GET', '/identities/eve/posture-data')).body.data.domain.domain).toBe('eve.example');
  await bus.publish(newChangeEvent('identity-auth', 'identity.deleted', { identityId: 'eve', tokenHashes: [] }));
  await bus.idle();
  expect((await call(admin, 'GET', '/identities/eve/posture-data')).body.data.domain.domain).toBe('');
});
