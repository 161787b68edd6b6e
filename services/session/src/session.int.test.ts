import { internalFetch } from '@ziti/service-kit';
import { generateKeyPairSync, sign } from 'node:crypto';
import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import { type RequestPrincipal, signPrincipal } from '@ziti/http-kit';
import { type InProcessEventBus, createInProcessBus, createMemoryCache, newChangeEvent } from '@ziti/messaging';
import {
  PkiEnrollmentServiceService,
  PolicyServiceService,
  PostureServiceService,
  type EvaluatePostureChecksRequest,
  type ServiceAccess,
  type SessionTokenClaims,
} from '@ziti/proto';
import { type GrpcListener, startGrpcServer } from '@ziti/service-kit';
import { type TestDatabase, createTestDatabase, testInfra } from '@ziti/test-kit';
import { compactVerify, importSPKI } from 'jose';
import { createSchemaPool } from '@ziti/db-kit';
import type { Session } from './domain/model.js';
import { runMigrations, startService } from './index.js';
import type { RunningService } from './service.js';
import { SessionRepository } from './store/session-repo.js';

/**
 * The session service on a real database, with fake policy, posture and pki-enrollment gRPC
 * servers, driven as the gateway drives it (signed principals) and fed events as the other
 * contexts publish them.
 */

const SECRET = 'session-test-secret';
const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const signRequests: SessionTokenClaims[] = [];
const ER = { id: 'er1', name: 'er-one', hostname: 'er1.example', isOnline: true, urls: {}, supportedProtocols: { tls: 'tls://er1.example:3022' }, syncStatus: 'SYNC_DONE', cost: 0, noTraversal: false, disabled: false };

/** What the fake policy context answers, per service id. */
const access = new Map<string, Partial<ServiceAccess>>();
let postureResults: Record<string, boolean> = {};
const evaluations: EvaluatePostureChecksRequest[] = [];
const failures: unknown[] = [];

function principal(identityId: string, apiSessionId: string, isAdmin = false): RequestPrincipal {
  return {
    identityId, identityName: identityId, apiSessionId, isAdmin, isDefaultAdmin: false, isFullyAuthenticated: true,
    permissions: [], configTypes: [], authenticatorId: 'a', expiresAt: '', expirationSeconds: 1800, identityTypeId: 'Default',
  };
}

let db: TestDatabase;
let bus: InProcessEventBus;
let service: RunningService;
let fakes: GrpcListener;

beforeAll(async () => {
  db = await createTestDatabase((await testInfra()).databaseUrl, 'session');
  await runMigrations(db.url);
  fakes = await startGrpcServer('127.0.0.1', 0, [
    {
      definition: PolicyServiceService,
      implementation: {
        getServiceAccess: (call: { request: { serviceId: string } }, cb: (e: null, r: ServiceAccess) => void) =>
          cb(null, { visible: false, serviceName: '', permissions: [], policies: [], edgeRouters: [], ...access.get(call.request.serviceId) }),
      } as unknown as UntypedServiceImplementation,
    },
    {
      definition: PostureServiceService,
      implementation: {
        evaluatePostureChecks: (call: { request: EvaluatePostureChecksRequest }, cb: (e: null, r: unknown) => void) => {
          evaluations.push(call.request);
          const results = call.request.postureCheckIds.map((id) => ({ id, name: id, typeId: 'OS', isPassing: postureResults[id] ?? false, timeout: -1, timeoutRemaining: -1, queryJson: '{}' }));
          cb(null, { results, anyPostureChecksExist: true });
        },
        recordFailedServiceRequest: (call: { request: unknown }, cb: (e: null, r: unknown) => void) => {
          failures.push(call.request);
          cb(null, {});
        },
      } as unknown as UntypedServiceImplementation,
    },
    {
      definition: PkiEnrollmentServiceService,
      implementation: {
        // pki-enrollment's side, as its contract says: the session context sends the fields, the signer adds iss, aud and z_t.
        signSessionTokens: (call: { request: { tokens: SessionTokenClaims[] } }, cb: (e: null, r: unknown) => void) => {
          signRequests.push(...call.request.tokens);
          const header = Buffer.from(JSON.stringify({ alg: 'ES256', kid: 'ab12', typ: 'JWT' })).toString('base64url');
          const tokens = call.request.tokens.map((t) => {
            const claims = { iss: 'https://ctrl.example:1280', sub: t.serviceId, aud: ['openziti'], iat: Number(t.issuedAt), exp: Number(t.expiresAt), jti: t.id, z_asid: t.apiSessionId, z_iid: t.identityId, z_t: 's', z_st: t.sessionType, z_leg: t.legacy };
            const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
            return `${input}.${sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
          });
          cb(null, { tokens });
        },
        getSigningCertificate: (_call: unknown, cb: (e: null, r: unknown) => void) => cb(null, { certPem: '', kid: 'ab12', alg: 'ES256', issuer: 'https://ctrl.example:1280' }),
      } as unknown as UntypedServiceImplementation,
    },
  ], 'policy');
  bus = createInProcessBus();
  service = await startService({
    databaseUrl: db.url, bus, cache: createMemoryCache(), internalSecret: SECRET,
    http: { host: '127.0.0.1', port: 0 }, grpc: { host: '127.0.0.1', port: 0 },
    policyGrpc: fakes.address, postureGrpc: fakes.address, pkiEnrollmentGrpc: () => fakes.address, log: () => undefined,
  });
});

afterAll(async () => {
  await service?.stop();
  await fakes?.stop();
  await bus?.close();
  await db?.drop();
});

async function call(p: RequestPrincipal, method: string, path: string, body?: unknown, api = 'client') {
  const res = await internalFetch(`${service.httpUrl}/edge/${api}/v1${path}`, {
    method,
    headers: { 'x-ziti-principal': signPrincipal(SECRET, p, 'req1'), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as any };
}

const alice = principal('alice', 'as-a1');

describe('POST /sessions', () => {
  it('creates a session whose token is a JWT signed by the controller key, with the §6.4 claims', async () => {
    access.set('svc1', { visible: true, serviceName: 'one', permissions: ['Dial'], edgeRouters: [ER] });
    const res = await call(alice, 'POST', '/sessions', { serviceId: 'svc1' });
    expect(res.status).toBe(201);
    const s = res.body.data;
    expect(s).toMatchObject({ apiSessionId: 'as-a1', identityId: 'alice', serviceId: 'svc1', type: 'Dial', service: { id: 'svc1', name: 'one' } });
    expect(s.edgeRouters).toEqual([{ name: 'er-one', hostname: 'er1.example', isOnline: true, urls: ER.supportedProtocols, supportedProtocols: ER.supportedProtocols, syncStatus: 'SYNC_DONE', cost: 0, noTraversal: false, disabled: false }]);
    const key = await importSPKI(publicKey.export({ type: 'spki', format: 'pem' }) as string, 'ES256');
    const { payload, protectedHeader } = await compactVerify(s.token, key);
    expect(protectedHeader).toEqual({ alg: 'ES256', kid: 'ab12', typ: 'JWT' });
    const claims = JSON.parse(Buffer.from(payload).toString());
    expect(Object.keys(claims).sort()).toEqual(['aud', 'exp', 'iat', 'iss', 'jti', 'sub', 'z_asid', 'z_iid', 'z_leg', 'z_st', 'z_t']);
    expect(claims).toMatchObject({ iss: 'https://ctrl.example:1280', sub: 'svc1', aud: ['openziti'], jti: s.id, z_asid: 'as-a1', z_iid: 'alice', z_t: 's', z_st: 'Dial', z_leg: true });
    // What this context asked pki-enrollment to sign: the fields of the session, a year of validity.
    const asked = signRequests.find((r) => r.id === s.id)!;
    expect(asked).toMatchObject({ serviceId: 'svc1', apiSessionId: 'as-a1', identityId: 'alice', sessionType: 'Dial', legacy: true });
    expect(Number(asked.expiresAt) - Number(asked.issuedAt)).toBeGreaterThanOrEqual(365 * 86400);

    const again = await call(alice, 'POST', '/sessions', { serviceId: 'svc1', type: 'Dial' });
    expect(again.status).toBe(201);
    expect([again.body.data.id, again.body.data.token]).toEqual([s.id, s.token]);
  });

  it('refuses in the order of §5.4 and records posture refusals', async () => {
    access.set('bind-only', { visible: true, permissions: ['Bind'], edgeRouters: [] });
    access.set('posture', { visible: true, serviceName: 'p', permissions: ['Dial'], policies: [{ policyId: 'sp1', policyType: 'Dial', postureCheckIds: ['pc1'] }], edgeRouters: [] });
    access.set('no-routers', { visible: true, permissions: ['Dial'], edgeRouters: [] });
    expect((await call(alice, 'POST', '/sessions', { serviceId: 'unknown' })).status).toBe(404);
    const denied = await call(alice, 'POST', '/sessions', { serviceId: 'bind-only' });
    expect([denied.status, denied.body.error.code, denied.body.error.cause.field]).toEqual([400, 'COULD_NOT_VALIDATE', 'ServiceId']);
    const posture = await call({ ...alice, mfaCompletedAt: '2026-11-22T10:00:00.000Z' } as RequestPrincipal, 'POST', '/sessions', { serviceId: 'posture' });
    expect([posture.status, posture.body.error.code]).toEqual([409, 'INVALID_POSTURE']);
    expect(posture.body.error.cause.data).toEqual({ sp1: [{ id: 'pc1', typeId: 'OS', isPassing: false }] });
    expect(evaluations.at(-1)).toMatchObject({ identityId: 'alice', apiSessionId: 'as-a1', postureCheckIds: ['pc1'], mfaCompletedAt: '2026-11-22T10:00:00.000Z' });
    expect(failures.at(-1)).toMatchObject({ identityId: 'alice', serviceId: 'posture', serviceName: 'p', sessionType: 'Dial' });
    const none = await call(alice, 'POST', '/sessions', { serviceId: 'no-routers' });
    expect([none.status, none.body.error.code]).toEqual([400, 'NO_EDGE_ROUTERS_AVAILABLE']);
  });
});

describe('SessionRepository.insertMany', () => {
  const session = (id: string, apiSessionId: string, serviceId: string): Session => ({
    id, token: `token-${id}`, apiSessionId, identityId: 'bob', serviceId, serviceName: `name-${serviceId}`, type: 'Dial',
    tags: { k: id }, edgeRouters: [{ ...ER, urls: ER.supportedProtocols }], servicePolicyIds: ['sp1'], postureCheckIds: [],
    createdAt: new Date('2026-01-02T03:04:05.678Z'), updatedAt: new Date('2026-01-02T03:04:05.678Z'),
  });

  it('answers the new session for a new key, the stored one for an existing key, and one session for a key twice in a batch', async () => {
    const pool = createSchemaPool(db.url, 'session');
    try {
      const repo = new SessionRepository(pool);
      const first = session('rs-1', 'as-repo', 'svc-r1');
      expect(await repo.insertMany([first])).toEqual([first]);

      const repeat = session('rs-2', 'as-repo', 'svc-r1');
      const fresh = session('rs-3', 'as-repo', 'svc-r2');
      const twin = session('rs-4', 'as-repo', 'svc-r2');
      const answered = await repo.insertMany([repeat, fresh, twin]);
      expect(answered[0]).toEqual(first); // read back from the table: every field as stored
      expect(answered[1]).toEqual(fresh);
      expect(answered[2]).toEqual(fresh);
      expect(await repo.findExisting('as-repo', 'svc-r2', 'Dial')).toEqual(fresh);
    } finally {
      await pool.end();
    }
  });

  it('fails only the create whose row the database refuses, when it shares a batch with others', async () => {
    const pool = createSchemaPool(db.url, 'session');
    try {
      const repo = new SessionRepository(pool);
      const good = ['svc-i1', 'svc-i2', 'svc-i3', 'svc-i4'].map((svc, i) => session(`ri-${i}`, 'as-iso', svc));
      // A NUL in jsonb breaks the whole multi-row statement (PostgreSQL refuses \u0000 there).
      const bad = { ...session('ri-bad', 'as-iso', 'svc-bad'), tags: { k: 'a\u0000b' } };
      const settled = await Promise.allSettled([good[0], good[1], bad, good[2], good[3]].map((s) => repo.insertOrGet(s!)));
      expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
      for (const s of good) expect(await repo.findExisting('as-iso', s.serviceId, 'Dial')).toEqual(s);
      expect(await repo.findExisting('as-iso', 'svc-bad', 'Dial')).toBeNull();
    } finally {
      await pool.end();
    }
  });
});

describe('reading and deleting', () => {
  it('lists and details the caller’s own sessions; an admin lists all; management detail adds servicePolicies', async () => {
    access.set('svc2', { visible: true, serviceName: 'two', permissions: ['Dial', 'Bind'], edgeRouters: [ER], policies: [{ policyId: 'sp2', policyType: 'Bind', postureCheckIds: [] }] });
    const bob = principal('bob', 'as-b1');
    const bobs = (await call(bob, 'POST', '/sessions', { serviceId: 'svc2', type: 'Bind' })).body.data;
    const own = await call(alice, 'GET', '/sessions');
    expect(own.body.data.every((s: { identityId: string }) => s.identityId === 'alice')).toBe(true);
    expect((await call(alice, 'GET', `/sessions/${bobs.id}`)).status).toBe(404);
    const admin = principal('root', 'as-r', true);
    const all = await call(admin, 'GET', `/sessions?filter=${encodeURIComponent(`service = "svc2"`)}`, undefined, 'management');
    expect(all.body.data.map((s: { id: string }) => s.id)).toEqual([bobs.id]);
    const detail = await call(admin, 'GET', `/sessions/${bobs.id}`, undefined, 'management');
    expect(detail.body.data.servicePolicies).toEqual([{ _links: { self: { href: './service-policies/sp2' } }, entity: 'service-policies', id: 'sp2' }]);
    expect((await call(admin, 'GET', `/sessions/${bobs.id}/route-path`, undefined, 'management')).body.data).toEqual({ routePath: [] });
    expect((await call(alice, 'DELETE', `/sessions/${bobs.id}`)).status).toBe(404);
    expect((await call(bob, 'DELETE', `/sessions/${bobs.id}`)).status).toBe(200);
    expect((await call(bob, 'GET', `/sessions/${bobs.id}`)).status).toBe(404);
  });
});

async function until(probe: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100 && !(await probe()); i++) await new Promise((r) => setTimeout(r, 50));
  expect(await probe()).toBe(true);
}

describe('sessions end with access', () => {
  const count = async (p: RequestPrincipal) => (await call(p, 'GET', '/sessions')).body.data.length as number;

  it('with their API session, their identity, and the access policy takes away', async () => {
    access.set('svc3', { visible: true, serviceName: 'three', permissions: ['Dial'], edgeRouters: [ER] });
    const carol1 = principal('carol', 'as-c1');
    const carol2 = principal('carol', 'as-c2');
    await call(carol1, 'POST', '/sessions', { serviceId: 'svc3' });
    await call(carol2, 'POST', '/sessions', { serviceId: 'svc3' });
    await call(carol2, 'POST', '/sessions', { serviceId: 'svc1' });
    access.set('svc1', { visible: true, serviceName: 'one', permissions: ['Dial'], edgeRouters: [ER] });
    expect(await count(carol1)).toBe(3);

    await bus.publish(newChangeEvent('identity-auth', 'api-session.deleted', { apiSessionId: 'as-c1', identityId: 'carol', tokenHashes: [] }));
    await until(async () => (await count(carol1)) === 2);

    access.set('svc3', { visible: false });
    await bus.publish(newChangeEvent('policy', 'service-access.changed', { identityIds: ['carol'], changedAt: new Date().toISOString(), cause: 'service-policy' }));
    await until(async () => (await count(carol2)) === 1);

    await bus.publish(newChangeEvent('identity-auth', 'identity.disabled', { identityId: 'carol', tokenHashes: [] }));
    await until(async () => (await count(carol2)) === 0);
  });

  it('ignores events of unknown shape', async () => {
    await bus.publish(newChangeEvent('policy', 'service-access.changed', { nothing: true }));
    await bus.publish(newChangeEvent('identity-auth', 'api-session.deleted', {}));
    await bus.idle();
  });
});

describe('GET /current-api-session/service-updates', () => {
  it('keeps lastChangeAt until a relevant event for this identity moves it', async () => {
    const dave = principal('dave', 'as-d1');
    const first = (await call(dave, 'GET', '/current-api-session/service-updates')).body.data.lastChangeAt as string;
    await new Promise((r) => setTimeout(r, 20));
    await bus.publish(newChangeEvent('policy', 'service-access.changed', { identityIds: ['someone-else'], changedAt: new Date().toISOString(), cause: 'service' }));
    await bus.idle();
    expect((await call(dave, 'GET', '/current-api-session/service-updates')).body.data.lastChangeAt).toBe(first);

    await bus.publish(newChangeEvent('posture', 'posture-data.changed', { identityId: 'dave' }));
    await until(async () => (await call(dave, 'GET', '/current-api-session/service-updates')).body.data.lastChangeAt > first);
  });
});
