import { internalTestClient } from '@ziti/service-kit';
import { type ServiceError, status } from '@grpc/grpc-js';
import { HealthServiceClient } from '@ziti/proto';
import { fromGrpcError } from '@ziti/errors';
import { principalCacheKey, tokenHash } from '@ziti/http-kit';
import { JwksFetcher } from './clients/jwks-fetcher.js';
import { ActivityRecorder, ApiSessionManager } from './domain/api-session-manager.js';
import { JwtVerifier } from './domain/ext-jwt/jwt-verifier.js';
import { SecondaryFactorChecker } from './domain/session-state.js';
import { sharedPrincipalCache } from './events/principal-cache.js';
import { openDatabase } from './store/db.js';
import { PrismaUnitOfWork } from './store/unit-of-work.js';
import { ADMIN, C, Harness, M } from './testing/harness.js';

const GO_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,3})? \+0000 UTC$/;
const UUID4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const INVALID_TOKEN = 'zt-session realm="zt-session" error="invalid" error_description="token is invalid"';

async function grpcFailure(p: Promise<unknown>) {
  const err = (await p.then(
    () => {
      throw new Error('expected a gRPC error');
    },
    (e: unknown) => e,
  )) as ServiceError;
  return { grpcCode: err.code, api: fromGrpcError(err) };
}

describe('authenticate, current API session and token resolution', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await Harness.start();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('logs in with a password on both APIs and answers the current API session with the session headers', async () => {
    await h.settle();
    const eventsBefore = h.events.length;
    for (const api of ['client', 'management']) {
      const before = Date.now();
      const res = await h.call('POST', `/edge/${api}/v1/authenticate?method=password`, {
        body: {
          username: ADMIN.username,
          password: ADMIN.password,
          configTypes: ['all', 'all'],
          sdkInfo: { type: 'ziti-sdk-golang', version: '1.2.3', extra: 'kept' },
          envInfo: { os: 'linux', arch: 'amd64' },
        },
        headers: { 'x-forwarded-for': '203.0.113.7, 10.0.0.1' },
      });
      expect(res.status).toBe(200);
      const token = res.headers.get('zt-session')!;
      expect(token).toMatch(UUID4);
      expect(res.headers.get('expires-at')).toMatch(GO_TIME);
      expect(Number(res.headers.get('expiration-seconds'))).toBeGreaterThanOrEqual(1790);
      expect(res.body.meta).toEqual({});
      const d = res.body.data;
      expect(d).toMatchObject({
        token,
        identity: { entity: 'identities', name: 'Default Admin', _links: { self: { href: `./identities/${d.identityId}` } } },
        configTypes: ['all'],
        ipAddress: '203.0.113.7',
        authQueries: [],
        isMfaRequired: false,
        isMfaComplete: false,
        isCertExtendable: false,
        tags: {},
        _links: { self: { href: './current-api-session' } },
      });
      expect(d.id).toMatch(/^[0-9A-Za-z][0-9A-Za-z.-]{8}$/);
      expect(d.expirationSeconds).toBeGreaterThanOrEqual(1790);
      expect(Date.parse(d.expiresAt) - Date.parse(d.lastActivityAt)).toBe(30 * 60_000);
      expect(Date.parse(d.lastActivityAt)).toBeGreaterThanOrEqual(before - 1000);
      expect(d.cachedUpdatedAt).toBe(d.lastActivityAt);
      expect(d.authenticatorId).toEqual(expect.any(String));
    }
    const [identity] = await h.sql('SELECT sdk_info, env_info FROM identities WHERE is_default_admin');
    expect(identity.sdk_info).toEqual({ type: 'ziti-sdk-golang', version: '1.2.3', extra: 'kept' });
    expect(identity.env_info).toEqual({ os: 'linux', arch: 'amd64' });
    await h.settle();
    // a new session changes nothing another context keeps; the router control plane learns of it (ids only)
    const after = h.events.slice(eventsBefore);
    expect(after.map((e) => e.type)).toEqual(['api-session.created', 'api-session.created']);
    expect(after.map((e) => Object.keys(e.data).sort())).toEqual([['apiSessionId', 'id', 'identityId'], ['apiSessionId', 'id', 'identityId']]);
  });

  it('answers 401 INVALID_AUTH for a wrong password, an unknown user and a disabled identity', async () => {
    const bad = await h.call('POST', `${C}/authenticate?method=password`, { body: { username: ADMIN.username, password: 'wrong-password' } });
    expect(bad.status).toBe(401);
    expect(bad.body.error).toMatchObject({ code: 'INVALID_AUTH', message: 'The authentication request failed', requestId: expect.any(String) });
    expect(bad.body.meta).toEqual({ apiEnrollmentVersion: '0.0.1', apiVersion: '0.0.1' });
    expect(bad.headers.get('www-authenticate')).toBeNull();

    const unknown = await h.call('POST', `${C}/authenticate?method=password`, { body: { username: 'nobody', password: 'whatever' } });
    expect(unknown.status).toBe(401);
    expect(unknown.body.error.code).toBe('INVALID_AUTH');

    await h.sql("UPDATE identities SET disabled = true, disabled_at = now() WHERE is_default_admin");
    const disabled = await h.call('POST', `${C}/authenticate?method=password`, { body: { username: ADMIN.username, password: ADMIN.password } });
    expect(disabled.body.error.code).toBe('INVALID_AUTH');
    await h.sql("UPDATE identities SET disabled_until = now() - interval '1 minute' WHERE is_default_admin");
    await h.login(); // the lock has run out
    await h.sql('UPDATE identities SET disabled = false, disabled_at = NULL, disabled_until = NULL WHERE is_default_admin');
  });

  it('validates the method and the credentials document', async () => {
    const cases: [string, unknown, number, string, string?][] = [
      ['', { username: 'admin', password: 'x1234' }, 400, 'COULD_NOT_VALIDATE', 'method'],
      ['?method=magic', { username: 'admin', password: 'x1234' }, 400, 'COULD_NOT_VALIDATE', 'method'],
      ['?method=password', { password: 'x1234' }, 400, 'COULD_NOT_VALIDATE', 'username'],
      ['?method=password', { username: 'admin' }, 400, 'COULD_NOT_VALIDATE', 'password'],
      ['?method=password', { username: 'adm', password: 'x1234' }, 400, 'COULD_NOT_VALIDATE', 'username'],
      ['?method=password', { username: 'admin', password: 'x1234', bogus: 1 }, 401, 'INVALID_AUTH'], // an unknown field is ignored: the credentials are checked
      ['?method=cert', {}, 401, 'INVALID_AUTH'],
      ['?method=ext-jwt', {}, 401, 'UNAUTHORIZED'], // no external JWT signer at all
    ];
    for (const [q, body, st, code, field] of cases) {
      const res = await h.call('POST', `${C}/authenticate${q}`, { body });
      expect([q, res.status, res.body.error.code]).toEqual([q, st, code]);
      if (field) expect(res.body.error.cause.field).toBe(field);
    }
  });

  it('locks an identity out after maxAttempts failures when the auth policy says so', async () => {
    const existing = await h.login();
    await h.cache.set(principalCacheKey(existing.token), '{}', 30);
    await h.sql('UPDATE auth_policies SET primary_updb_max_attempts = 2, primary_updb_lockout_duration_minutes = 5');
    try {
      for (let i = 0; i < 2; i++) {
        await h.call('POST', `${C}/authenticate?method=password`, { body: { username: ADMIN.username, password: 'wrong-password' } });
      }
      const [row] = await h.sql('SELECT disabled, disabled_at, disabled_until FROM identities WHERE is_default_admin');
      expect(row.disabled).toBe(true);
      expect(row.disabled_until.getTime() - row.disabled_at.getTime()).toBe(5 * 60_000);
      await expect(h.login()).rejects.toThrow(/401/);
      // its sessions stop working at once
      expect(await h.cache.get(principalCacheKey(existing.token))).toBeNull();
      expect((await grpcFailure(h.resolve(existing.token))).api.code).toBe('UNAUTHORIZED');
    } finally {
      await h.sql('UPDATE auth_policies SET primary_updb_max_attempts = 0, primary_updb_lockout_duration_minutes = 0');
      await h.sql('UPDATE identities SET disabled = false, disabled_at = NULL, disabled_until = NULL');
    }
  });

  it('resolves a token over gRPC to its principal with a cache hint', async () => {
    const { token, reply } = await h.login();
    const res = await h.resolve(token);
    expect(res.principal).toEqual({
      identityId: reply.body.data.identityId,
      identityName: 'Default Admin',
      apiSessionId: reply.body.data.id,
      isAdmin: true,
      isDefaultAdmin: true,
      isFullyAuthenticated: true,
      permissions: [],
      configTypes: [],
      authenticatorId: reply.body.data.authenticatorId,
      expiresAt: expect.stringMatching(/Z$/),
      expirationSeconds: expect.any(Number),
      identityTypeId: 'Default',
      mfaCompletedAt: '',
    });
    expect(res.cacheTtlSeconds).toBe(30);
    expect(res.wwwAuthenticate).toBe('');
  });

  it('puts a new session\'s principal in the gateway cache at login, the same one resolution gives', async () => {
    const user = await h.createUser((await h.login()).principal, { isAdmin: false }, 'Cache!pass1');
    const { token } = await h.login(user.username, 'Cache!pass1', 'client');
    const raw = await h.cache.get(principalCacheKey(token));
    expect(raw).not.toBeNull();
    const cached = JSON.parse(raw!) as { principal: Record<string, unknown>; expiresAt: string };
    const resolved = (await h.resolve(token)).principal!;
    expect(cached.principal).toEqual({ ...resolved, expiresAt: cached.principal.expiresAt, expirationSeconds: cached.principal.expirationSeconds });
    expect(Math.abs(Date.parse(cached.principal.expiresAt as string) - Date.parse(resolved.expiresAt))).toBeLessThan(5_000);
    expect(cached.principal).toMatchObject({ identityId: user.id, isAdmin: false, isFullyAuthenticated: true, identityTypeId: 'Default' });
    const left = (Date.parse(cached.expiresAt) - Date.now()) / 1000;
    expect(left).toBeGreaterThan(25);
    expect(left).toBeLessThanOrEqual(30);
  });

  it('refuses unknown, expired and disabled-identity tokens with UNAUTHORIZED and the invalid-token challenge', async () => {
    const unknown = await grpcFailure(h.resolve('1b4e28ba-2fa1-41d2-883f-0016d3cca427'));
    expect(unknown.grpcCode).toBe(status.UNAUTHENTICATED);
    expect(unknown.api).toMatchObject({ code: 'UNAUTHORIZED', status: 401, headers: { 'WWW-Authenticate': INVALID_TOKEN } });
    expect((await grpcFailure(h.resolve(''))).api.code).toBe('UNAUTHORIZED');

    const { token } = await h.login();
    await h.sql("UPDATE api_sessions SET last_activity_at = now() - interval '31 minutes' WHERE token = $1", [token]);
    expect((await grpcFailure(h.resolve(token))).api.code).toBe('UNAUTHORIZED');

    const fresh = await h.login();
    await h.sql('UPDATE identities SET disabled = true WHERE is_default_admin');
    expect((await grpcFailure(h.resolve(fresh.token))).api.code).toBe('UNAUTHORIZED');
    await h.sql('UPDATE identities SET disabled = false WHERE is_default_admin');
    await h.resolve(fresh.token);
  });

  it('slides the expiry of a session used after more than 10 s', async () => {
    const { token } = await h.login();
    await h.sql("UPDATE api_sessions SET last_activity_at = now() - interval '20 minutes' WHERE token = $1", [token]);
    const res = await h.resolve(token);
    expect(res.principal!.expirationSeconds).toBeGreaterThanOrEqual(1790);
    await h.service.stop(); // flushes the batched activity writes
    const [row] = await h.sql('SELECT last_activity_at FROM api_sessions WHERE token = $1', [token]);
    expect(Date.now() - row.last_activity_at.getTime()).toBeLessThan(60_000);
    await h.restart();
  });

  it('shows the current API session and the current identity to their owner', async () => {
    const { token, principal } = await h.login();
    const res = await h.call('GET', `${C}/current-api-session`, { principal });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: principal.apiSessionId, token, identityId: principal.identityId });
    expect(res.body.data.expirationSeconds).toBeGreaterThan(1700);

    const me = await h.call('GET', `${C}/current-identity`, { principal });
    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({
      id: principal.identityId,
      name: 'Default Admin',
      isDefaultAdmin: true,
      hasApiSession: true,
      authenticators: { updb: { username: ADMIN.username } },
      _links: { self: { href: './current-identity' }, mfa: { href: './current-identity/mfa' } },
    });

    const partial = { ...principal, isFullyAuthenticated: false };
    expect((await h.call('GET', `${C}/current-api-session`, { principal: partial })).status).toBe(200);
    expect((await h.call('GET', `${C}/current-identity`, { principal: partial })).status).toBe(401);
    expect((await h.call('GET', `${C}/current-api-session`)).status).toBe(401);
  });

  it('logs out: the session is deleted, its cached principal dropped and an event published', async () => {
    const { token, principal } = await h.login();
    await h.cache.set(principalCacheKey(token), '{"cached":true}', 30);
    const res = await h.call('DELETE', `${C}/current-api-session`, { principal });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: {}, meta: {} });
    expect(await h.cache.get(principalCacheKey(token))).toBeNull();
    expect(await h.sql('SELECT id FROM api_sessions WHERE token = $1', [token])).toHaveLength(0);
    expect((await grpcFailure(h.resolve(token))).api.code).toBe('UNAUTHORIZED');
    expect((await h.call('GET', `${C}/current-api-session`, { principal })).status).toBe(401);
    await h.settle();
    const deleted = h.events.filter((e) => e.type === 'api-session.deleted' && e.data.apiSessionId === principal.apiSessionId);
    expect(deleted).toHaveLength(1);
    expect(deleted[0]!.data).toEqual({ apiSessionId: principal.apiSessionId, identityId: principal.identityId, tokenHashes: [tokenHash(token)] });
    expect(deleted[0]!.source).toBe('identity-auth');
  });

  it('deletes idle sessions in the sweep, dropping their cache entries, with their events', async () => {
    const idle = await h.login();
    const active = await h.login();
    await h.sql("UPDATE api_sessions SET last_activity_at = now() - interval '2 hours' WHERE token = $1", [idle.token]);
    await h.cache.set(principalCacheKey(idle.token), '{}', 30);
    const [{ n }] = await h.sql("SELECT count(*)::int AS n FROM api_sessions WHERE last_activity_at < now() - interval '30 minutes'");
    expect(n).toBeGreaterThanOrEqual(1);
    const db = openDatabase(h.db.url);
    try {
      const uow = new PrismaUnitOfWork(db.prisma, db.pool, { publishOnCommit: (_events, commit) => commit });
      const factors = new SecondaryFactorChecker(uow.repos, new JwtVerifier(new JwksFetcher()));
      const manager = new ApiSessionManager(uow, sharedPrincipalCache(h.cache, () => undefined), new ActivityRecorder(uow), factors, 30 * 60_000);
      expect(await manager.sweepIdle(1)).toBe(n); // batches of one: every idle session, no active one
      expect(await manager.sweepIdle()).toBe(0);
    } finally {
      await db.close();
    }
    expect(await h.sql('SELECT token FROM api_sessions WHERE token = ANY($1)', [[idle.token, active.token]])).toEqual([{ token: active.token }]);
    expect(await h.cache.get(principalCacheKey(idle.token))).toBeNull();
    await h.settle();
    expect(h.events.some((e) => e.type === 'api-session.deleted' && e.data.apiSessionId === idle.principal.apiSessionId)).toBe(true);
  });

  it('answers the gRPC health check and the HTTP probes', async () => {
    const client = internalTestClient(HealthServiceClient, h.service.grpcAddress, 'identity-auth');
    try {
      const res = await new Promise((resolve, reject) => client.check({}, (err, r) => (err ? reject(err) : resolve(r))));
      expect(res).toEqual({ service: 'identity-auth', ready: true });
    } finally {
      client.close();
    }
    expect((await h.call('GET', '/readyz')).body).toEqual({ service: 'identity-auth', ready: true });
    expect((await h.call('GET', '/healthz')).status).toBe(200);
  });

  it('rejects a forged principal', async () => {
    const res = await h.call('GET', `${M}/current-api-session`, { headers: { 'x-ziti-principal': 'abc.def' } });
    expect(res.status).toBe(401);
  });
});
