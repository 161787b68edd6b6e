import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import type { ServiceError } from '@grpc/grpc-js';
import { type ApiError, fromGrpcError } from '@ziti/errors';
import { type RequestPrincipal, principalCacheKey } from '@ziti/http-kit';
import { createSchemaPool } from '@ziti/db-kit';
import { type Cache, createRedisCache } from '@ziti/messaging';
import { testInfra } from '@ziti/test-kit';
import type { Pool } from 'pg';
import { SecretBox } from './domain/mfa/secret-box.js';
import { KeyRing, sqlKeyStore } from './oidc/key-ring.js';
import { signEs256 } from './oidc/jwt.js';
import { revocationMarkerKey } from './oidc/revocations.js';
import { SCHEMA } from './schema.js';
import { totpCodes, wrongTotpCodes } from './testing/totp-codes.js';
import { C, Harness, M, SECRET } from './testing/harness.js';
import { JwksFetcher } from './clients/jwks-fetcher.js';
import { ActivityRecorder, ApiSessionManager } from './domain/api-session-manager.js';
import { JwtVerifier } from './domain/ext-jwt/jwt-verifier.js';
import { SecondaryFactorChecker } from './domain/session-state.js';
import { sharedPrincipalCache } from './events/principal-cache.js';
import { Revocations } from './oidc/revocations.js';
import { openDatabase } from './store/db.js';
import { PrismaUnitOfWork } from './store/unit-of-work.js';

const INVALID = 'Bearer realm="openziti-oidc" error="invalid" error_description="token is invalid"';
const EXPIRED = 'Bearer realm="openziti-oidc" error="expired" error_description="token expired"';
const nowS = () => Math.floor(Date.now() / 1000);

/**
 * Bearer sessions (OIDC.md): access tokens signed by identity-auth's OIDC keys, resolved for the
 * gateway; revocations with their Redis markers; OIDC sessions in the sweep and on logout. OIDC
 * sessions are inserted as the provider creates them (UUID id, kind 'oidc', token `oidc:<uuid>`).
 */
describe('OIDC bearer sessions', () => {
  let h: Harness;
  let redis: Cache;
  let pool: Pool;
  let ring: KeyRing;
  let admin: RequestPrincipal;

  beforeAll(async () => {
    const { redisUrl } = await testInfra();
    redis = await createRedisCache(redisUrl, { keyPrefix: `test:idauth-oidc:${randomBytes(6).toString('hex')}:` });
    h = await Harness.start({ cache: redis });
    pool = createSchemaPool(h.db.url, SCHEMA);
    ring = new KeyRing(sqlKeyStore(pool), new SecretBox(SECRET));
    admin = (await h.login()).principal;
  });
  afterAll(async () => {
    await pool?.end();
    await h?.close();
    await redis?.close();
  });

  /** An OIDC API session of the identity, as the provider stores it at the code exchange. */
  async function oidcSession(identityId: string, opts: { expiresAt?: Date; mfaCompletedAt?: Date } = {}): Promise<string> {
    const id = randomUUID();
    await h.sql(
      `INSERT INTO api_sessions (id, token, identity_id, authenticator_id, kind, expires_at, mfa_completed_at)
       VALUES ($1, $2, $3, 'auth-1', 'oidc', $4, $5)`,
      [id, `oidc:${randomUUID()}`, identityId, opts.expiresAt ?? new Date(Date.now() + 86_400_000), opts.mfaCompletedAt ?? null],
    );
    return id;
  }

  /** An access token of the session (`z_t:"a"`, 30 minutes), with `claims` overriding. */
  function accessToken(identityId: string, apiSessionId: string, claims: Record<string, unknown> = {}): Promise<string> {
    const iat = nowS();
    return ring.sign({
      iss: 'https://ctrl.example:1280/oidc', sub: identityId, aud: ['openziti'], iat, nbf: iat, exp: iat + 1800, jti: randomUUID(),
      auth_time: iat, amr: ['password'], client_id: 'openziti', z_asid: apiSessionId, z_t: 'a', z_ia: false, ...claims,
    });
  }

  const failure = (p: Promise<unknown>): Promise<ApiError> =>
    p.then(
      () => {
        throw new Error('resolved');
      },
      (e: ServiceError) => fromGrpcError(e),
    );
  const refusedWith = async (token: string) => (await failure(h.resolveBearer(token))).headers['WWW-Authenticate'];

  async function user(body: Record<string, unknown> = {}) {
    return (await h.createUser(admin, body)).id;
  }

  describe('resolution', () => {
    it('answers the session principal, fully authenticated, cacheable until the token expires (at most 30 s)', async () => {
      const identityId = await user({ isAdmin: true });
      const completed = new Date(Date.now() - 60_000);
      const sid = await oidcSession(identityId, { mfaCompletedAt: completed });
      await h.sql("UPDATE api_sessions SET config_types = '{ct1}' WHERE id = $1", [sid]);
      const exp = nowS() + 1800;
      const res = await h.resolveBearer(await accessToken(identityId, sid, { exp }));
      expect(res.principal).toMatchObject({
        identityId, apiSessionId: sid, isAdmin: true, isFullyAuthenticated: true, configTypes: ['ct1'],
        mfaCompletedAt: completed.toISOString(), expiresAt: new Date(exp * 1000).toISOString(),
      });
      expect(res.cacheTtlSeconds).toBe(30);
      const short = await h.resolveBearer(await accessToken(identityId, sid, { exp: nowS() + 10 }));
      expect(short.cacheTtlSeconds).toBeLessThanOrEqual(10);
      expect(short.cacheTtlSeconds).toBeGreaterThanOrEqual(8);
    });

    it('refuses tampered, expired, not-yet-valid and non-access tokens', async () => {
      const identityId = await user();
      const sid = await oidcSession(identityId);
      const good = await accessToken(identityId, sid);
      const [head, body, sig] = good.split('.') as [string, string, string];
      const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), z_ia: true })).toString('base64url');
      expect(await refusedWith(`${head}.${forged}.${sig}`)).toBe(INVALID);
      expect(await refusedWith('not-a-jwt')).toBe(INVALID);
      expect(await refusedWith(await accessToken(identityId, sid, { exp: nowS() - 5 }))).toBe(EXPIRED);
      expect(await refusedWith(await accessToken(identityId, sid, { nbf: nowS() + 600 }))).toBe(INVALID);
      expect(await refusedWith(await accessToken(identityId, sid, { z_t: 'r' }))).toBe(INVALID);
      expect(await refusedWith(await accessToken(identityId, sid, { z_t: 't' }))).toBe(INVALID);
      expect((await failure(h.resolveBearer(good.slice(0, -2)))).code).toBe('UNAUTHORIZED');
      // A key this controller never had.
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      expect(await refusedWith(await signEs256(privateKey, 'unknown-kid', { sub: identityId, z_asid: sid, z_t: 'a', exp: nowS() + 60 }))).toBe(INVALID);
    });

    it('refuses tokens of an unknown, expired, legacy or other identity session, and of a disabled identity', async () => {
      const identityId = await user();
      expect(await refusedWith(await accessToken(identityId, randomUUID()))).toBe(INVALID);
      const expired = await oidcSession(identityId, { expiresAt: new Date(Date.now() - 1000) });
      expect(await refusedWith(await accessToken(identityId, expired))).toBe(INVALID);
      const legacy = (await h.login()).principal.apiSessionId;
      expect(await refusedWith(await accessToken(admin.identityId, legacy))).toBe(INVALID);
      const other = await user();
      const sid = await oidcSession(identityId);
      expect(await refusedWith(await accessToken(other, sid))).toBe(INVALID);
      const token = await accessToken(identityId, sid);
      expect((await h.resolveBearer(token)).principal?.identityId).toBe(identityId);
      await h.sql("UPDATE identities SET disabled = true, disabled_until = now() + interval '1 hour' WHERE id = $1", [identityId]);
      expect(await refusedWith(token)).toBe(INVALID);
    });

    it('refuses a token revoked by its jti, its API session, or its identity when issued before the cutoff', async () => {
      const identityId = await user();
      const sid = await oidcSession(identityId);
      const jti = randomUUID();
      const byJti = await accessToken(identityId, sid, { jti });
      const post = (body: unknown) => h.call('POST', `${M}/revocations`, { principal: admin, body });
      expect((await h.resolveBearer(byJti)).principal).toBeDefined();
      expect((await post({ id: jti, type: 'JTI' })).status).toBe(201);
      expect(await refusedWith(byJti)).toBe(INVALID);
      const sibling = await accessToken(identityId, sid);
      expect((await h.resolveBearer(sibling)).principal).toBeDefined();

      expect((await post({ id: sid, type: 'API_SESSION' })).status).toBe(201);
      expect(await refusedWith(sibling)).toBe(INVALID);

      const sid2 = await oidcSession(identityId);
      const before = await accessToken(identityId, sid2, { iat: nowS() - 10 });
      expect((await post({ id: identityId, type: 'IDENTITY' })).status).toBe(201);
      expect(await refusedWith(before)).toBe(INVALID);
      const after = await accessToken(identityId, sid2, { iat: nowS() + 2 });
      expect((await h.resolveBearer(after)).principal?.apiSessionId).toBe(sid2);
    });
  });

  it('shows an OIDC session as the current API session, expiring with the access token', async () => {
    const identityId = await user();
    const sid = await oidcSession(identityId);
    const exp = nowS() + 600;
    const principal = (await h.resolveBearer(await accessToken(identityId, sid, { exp }))).principal as RequestPrincipal;
    const res = await h.call('GET', `${C}/current-api-session`, { principal });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: sid, identityId, expiresAt: new Date(exp * 1000).toISOString() });
    expect(res.body.data.expirationSeconds).toBeGreaterThan(590);
    expect(res.body.data.expirationSeconds).toBeLessThanOrEqual(600);
  });

  it('never resolves an OIDC session row as a zt-session', async () => {
    const identityId = await user();
    const sid = await oidcSession(identityId);
    const [{ token }] = await h.sql<{ token: string }>('SELECT token FROM api_sessions WHERE id = $1', [sid]);
    const err = await failure(h.resolve(token!));
    expect(err.code).toBe('UNAUTHORIZED');
    expect(err.headers['WWW-Authenticate']).toContain('zt-session');
  });

  /** A unit of work on the harness database, for the sweeps the service runs every minute. */
  async function withUow<T>(fn: (uow: PrismaUnitOfWork) => Promise<T>): Promise<T> {
    const db = openDatabase(h.db.url);
    try {
      return await fn(new PrismaUnitOfWork(db.prisma, db.pool, { publishOnCommit: (_events, commit) => commit }));
    } finally {
      await db.close();
    }
  }

  it('sweeps idle legacy sessions and expired OIDC sessions, never a live OIDC session however idle', async () => {
    const identityId = await user();
    const idleOidc = await oidcSession(identityId);
    const expiredOidc = await oidcSession(identityId, { expiresAt: new Date(Date.now() - 1000) });
    const legacy = (await h.login()).principal.apiSessionId;
    const ids = [idleOidc, expiredOidc, legacy];
    await h.sql("UPDATE api_sessions SET last_activity_at = now() - interval '2 hours' WHERE id = ANY($1)", [ids]);
    await withUow(async (uow) => {
      const factors = new SecondaryFactorChecker(uow.repos, new JwtVerifier(new JwksFetcher()));
      const manager = new ApiSessionManager(uow, sharedPrincipalCache(redis, () => undefined), new ActivityRecorder(uow), factors, 30 * 60_000);
      expect(await manager.sweepIdle(1)).toBeGreaterThanOrEqual(2);
    });
    const left = (await h.sql<{ id: string }>('SELECT id FROM api_sessions WHERE id = ANY($1)', [ids])).map((r) => r.id);
    expect(left).toEqual([idleOidc]);
  });

  describe('/revocations', () => {
    const post = (body: unknown, principal = admin) => h.call('POST', `${M}/revocations`, { principal, body });
    const marker = (type: string, id: string) => redis.get(revocationMarkerKey(type as 'JTI', id));

    it('creates a JTI revocation by default, for 24 h, with its marker, and shows it', async () => {
      const id = randomUUID();
      const started = Date.now();
      const res = await post({ id, tags: { why: 'leaked' } });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ data: { id, _links: { self: { href: `./revocations/${id}` } } }, meta: {} });
      const detail = await h.call('GET', `${M}/revocations/${id}`, { principal: admin });
      expect(detail.status).toBe(200);
      expect(detail.body.data).toEqual({
        id, type: 'JTI', tags: { why: 'leaked' }, expiresAt: expect.any(String), createdAt: expect.any(String), updatedAt: expect.any(String),
        _links: { self: { href: `./revocations/${id}` } },
      });
      const expiresIn = Date.parse(detail.body.data.expiresAt) - started;
      expect(expiresIn).toBeGreaterThanOrEqual(86_400_000 - 1000);
      expect(expiresIn).toBeLessThanOrEqual(86_400_000 + 60_000);
      const [row] = await h.sql<{ issued_before: Date }>('SELECT issued_before FROM revocations WHERE id = $1', [id]);
      expect(await marker('JTI', id)).toBe(String(row!.issued_before.getTime()));
    });

    it('replaces a revocation of the same id with a fresh cutoff', async () => {
      const identityId = await user();
      expect((await post({ id: identityId, type: 'IDENTITY' })).status).toBe(201);
      const [first] = await h.sql<{ issued_before: Date }>('SELECT issued_before FROM revocations WHERE id = $1', [identityId]);
      await new Promise((r) => setTimeout(r, 20));
      expect((await post({ id: identityId, type: 'IDENTITY', tags: { n: 2 } })).status).toBe(201);
      const rows = await h.sql<{ issued_before: Date; tags: unknown }>('SELECT issued_before, tags FROM revocations WHERE id = $1', [identityId]);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.issued_before.getTime()).toBeGreaterThan(first!.issued_before.getTime());
      expect(rows[0]!.tags).toEqual({ n: 2 });
      expect(await marker('IDENTITY', identityId)).toBe(String(rows[0]!.issued_before.getTime()));
    });

    it('validates the id and type', async () => {
      for (const type of ['JTI', 'API_SESSION', undefined]) {
        const res = await post({ id: 'not-a-uuid', type });
        expect([res.status, res.body.error.code]).toEqual([400, 'COULD_NOT_VALIDATE']);
        expect(res.body.error.cause).toMatchObject({ field: 'id', reason: 'must be a valid UUID v4', value: 'not-a-uuid' });
      }
      const unknown = await post({ id: 'no-such-identity', type: 'IDENTITY' });
      expect([unknown.status, unknown.body.error.code]).toEqual([404, 'NOT_FOUND']);
      const badType = await post({ id: randomUUID(), type: 'SESSION' });
      expect([badType.status, badType.body.error.cause.field]).toEqual([400, 'type']);
      expect((await post({ type: 'JTI' })).status).toBe(400);
      expect((await h.call('GET', `${M}/revocations/${randomUUID()}`, { principal: admin })).status).toBe(404);
    });

    it('lists with filter, sort and paging; admins only (admin_readonly may read)', async () => {
      const ids = [randomUUID(), randomUUID()];
      for (const id of ids) expect((await post({ id, type: 'API_SESSION' })).status).toBe(201);
      const q = encodeURIComponent(`type = "API_SESSION" and id in ["${ids[0]}", "${ids[1]}"] sort by id asc`);
      const res = await h.call('GET', `${M}/revocations?filter=${q}&limit=1`, { principal: admin });
      expect(res.status).toBe(200);
      expect(res.body.meta.pagination).toEqual({ limit: 1, offset: 0, totalCount: 2 });
      expect(res.body.data.map((r: { id: string }) => r.id)).toEqual([[...ids].sort()[0]]);
      expect(res.body.meta.filterableFields).toEqual(expect.arrayContaining(['id', 'type', 'expiresAt', 'createdAt']));
      const user = { ...admin, isAdmin: false, isDefaultAdmin: false, permissions: [] };
      expect((await h.call('GET', `${M}/revocations`, { principal: user })).status).toBe(401);
      expect((await post({ id: randomUUID() }, user)).status).toBe(401);
      const ro = { ...user, permissions: ['admin_readonly'] };
      expect((await h.call('GET', `${M}/revocations`, { principal: ro })).status).toBe(200);
      expect((await post({ id: randomUUID() }, ro)).status).toBe(401);
      expect((await h.call('GET', `${C}/revocations`, { principal: admin })).status).toBe(404);
    });

    it('prunes expired revocations in batches', async () => {
      await h.sql(
        `INSERT INTO revocations (id, type, expires_at, issued_before)
         SELECT gen_random_uuid()::text, 'JTI', now() - interval '1 minute', now() - interval '1 day' FROM generate_series(1, 1203)`,
      );
      const live = randomUUID();
      expect((await post({ id: live })).status).toBe(201);
      const pruned = await withUow((uow) => new Revocations(uow, redis).prune());
      expect(pruned).toBeGreaterThanOrEqual(1203);
      expect(await h.sql("SELECT id FROM revocations WHERE expires_at < now()")).toEqual([]);
      expect(await h.sql('SELECT id FROM revocations WHERE id = $1', [live])).toHaveLength(1);
    });
  });

  describe('what ends an identity or a session revokes its tokens', () => {
    const revocation = async (id: string) => (await h.sql<{ type: string; issued_before: Date }>('SELECT type, issued_before FROM revocations WHERE id = $1', [id]))[0];

    it('disabling an identity writes an IDENTITY revocation and its marker; disabling it again keeps the first', async () => {
      const identityId = await user();
      const sid = await oidcSession(identityId);
      const token = await accessToken(identityId, sid, { iat: nowS() - 1 });
      expect((await h.call('POST', `${M}/identities/${identityId}/disable`, { principal: admin, body: { durationMinutes: 0 } })).status).toBe(200);
      const r = await revocation(identityId);
      expect(r?.type).toBe('IDENTITY');
      expect(await redis.get(revocationMarkerKey('IDENTITY', identityId))).toBe(String(r!.issued_before.getTime()));
      expect(await h.sql('SELECT id FROM api_sessions WHERE id = $1', [sid])).toEqual([]);
      expect(await refusedWith(token)).toBe(INVALID);
      await new Promise((res) => setTimeout(res, 20));
      expect((await h.call('POST', `${M}/identities/${identityId}/disable`, { principal: admin, body: { durationMinutes: 5 } })).status).toBe(200);
      expect((await revocation(identityId))!.issued_before.getTime()).toBe(r!.issued_before.getTime());
    });

    it('a password lockout is a disable too', async () => {
      await h.sql('UPDATE auth_policies SET primary_updb_max_attempts = 2, primary_updb_lockout_duration_minutes = 5');
      try {
        const u = await h.createUser(admin);
        for (let i = 0; i < 2; i++) await h.call('POST', `${C}/authenticate?method=password`, { body: { username: u.username, password: 'wrong-password' } });
        expect((await revocation(u.id))?.type).toBe('IDENTITY');
        expect(await redis.get(revocationMarkerKey('IDENTITY', u.id))).toMatch(/^\d+$/);
      } finally {
        await h.sql('UPDATE auth_policies SET primary_updb_max_attempts = 0, primary_updb_lockout_duration_minutes = 0');
      }
    });

    it('deleting an identity writes an IDENTITY revocation and its marker', async () => {
      const identityId = await user();
      expect((await h.call('DELETE', `${M}/identities/${identityId}`, { principal: admin })).status).toBe(200);
      const r = await revocation(identityId);
      expect(r?.type).toBe('IDENTITY');
      expect(await redis.get(revocationMarkerKey('IDENTITY', identityId))).toBe(String(r!.issued_before.getTime()));
    });

    it('ending an OIDC session (logout or management delete) writes an API_SESSION revocation and its marker', async () => {
      const identityId = await user();
      const sid = await oidcSession(identityId);
      const token = await accessToken(identityId, sid);
      const principal = (await h.resolveBearer(token)).principal as RequestPrincipal;
      await redis.set(principalCacheKey(token), '{}', 30);
      expect((await h.call('DELETE', `${C}/current-api-session`, { principal })).status).toBe(200);
      expect((await revocation(sid))?.type).toBe('API_SESSION');
      expect(await redis.get(revocationMarkerKey('API_SESSION', sid))).toMatch(/^\d+$/);
      expect(await refusedWith(token)).toBe(INVALID);

      const sid2 = await oidcSession(identityId);
      expect((await h.call('DELETE', `${M}/api-sessions/${sid2}`, { principal: admin })).status).toBe(200);
      expect((await revocation(sid2))?.type).toBe('API_SESSION');
      expect(await redis.get(revocationMarkerKey('API_SESSION', sid2))).toMatch(/^\d+$/);
    });

    it('ending a legacy session revokes nothing', async () => {
      const { principal } = await h.login();
      expect((await h.call('DELETE', `${C}/current-api-session`, { principal })).status).toBe(200);
      expect(await revocation(principal.apiSessionId)).toBeUndefined();
    });
  });

  describe('POST /current-api-session/totp-token', () => {
    const PASSWORD = 'Totp-Pass-1';
    const HOST = 'ctrl.example:1280';
    const create = (principal: RequestPrincipal, body: unknown, bearer?: string) =>
      h.call('POST', `${C}/current-api-session/totp-token`, {
        principal, body, headers: { 'x-forwarded-host': HOST, ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
      });

    /** A user with a verified TOTP enrollment (made over a legacy session), and an OIDC session of it. */
    async function enrolledOidcUser() {
      const u = await h.createUser(admin, {}, PASSWORD);
      const legacy = (await h.login(u.username, PASSWORD, 'client')).principal;
      expect((await h.call('POST', `${C}/current-identity/mfa`, { principal: legacy })).status).toBe(201);
      const detail = (await h.call('GET', `${C}/current-identity/mfa`, { principal: legacy })).body.data;
      const secret = new URL(detail.provisioningUrl).searchParams.get('secret')!;
      const totp = totpCodes(secret);
      expect((await h.call('POST', `${C}/current-identity/mfa/verify`, { principal: legacy, body: { code: totp() } })).status).toBe(200);
      const sid = await oidcSession(u.id);
      const token = await accessToken(u.id, sid, { aud: ['native'] });
      const principal = (await h.resolveBearer(token)).principal as RequestPrincipal;
      const wrong = wrongTotpCodes(secret, 1)[0]!;
      return { id: u.id, username: u.username, sid, token, principal, totp, wrong, legacy, recoveryCodes: detail.recoveryCodes as string[] };
    }

    it('refuses a legacy session with INVALID_BACKING_TOKEN_TYPE', async () => {
      const u = await enrolledOidcUser();
      const res = await create(u.legacy, { code: u.totp() });
      expect([res.status, res.body.error.code, res.body.error.message]).toEqual([400, 'INVALID_BACKING_TOKEN_TYPE', 'The backing token type is invalid']);
    });

    it('refuses an empty, wrong, recovery or reused code (MFA_INVALID_TOKEN) and a missing enrollment (MFA_NOT_ENROLLED)', async () => {
      const u = await enrolledOidcUser();
      const code = async (c: string) => {
        const r = await create(u.principal, { code: c }, u.token);
        return `${r.status} ${r.body?.error?.code ?? ''}`.trim();
      };
      expect(await code('')).toBe('400 MFA_INVALID_TOKEN');
      expect(await code(u.wrong)).toBe('400 MFA_INVALID_TOKEN');
      expect(await code(u.recoveryCodes[0]!)).toBe('400 MFA_INVALID_TOKEN');
      const once = u.totp();
      expect(await code(once)).toBe('200');
      expect(await code(once)).toBe('400 MFA_INVALID_TOKEN');

      const plain = await user();
      const sid = await oidcSession(plain);
      const p = (await h.resolveBearer(await accessToken(plain, sid))).principal as RequestPrincipal;
      const res = await create(p, { code: '123456' });
      expect([res.status, res.body.error.code]).toEqual([409, 'MFA_NOT_ENROLLED']);
      expect((await create(p, {})).status).toBe(400);
    });

    it('answers a signed TOTP token of the session and renews its mfaCompletedAt', async () => {
      const u = await enrolledOidcUser();
      await redis.set(principalCacheKey(u.token), '{}', 30);
      const before = Date.now();
      const res = await create(u.principal, { code: u.totp() }, u.token);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: { token: expect.any(String), issuedAt: expect.any(String) }, meta: {} });
      const issuedAt = Date.parse(res.body.data.issuedAt);
      expect(issuedAt).toBeGreaterThanOrEqual(before - 1000);

      const verified = await ring.verify(res.body.data.token);
      expect(verified.ok).toBe(true);
      const claims = (verified as { claims: Record<string, unknown> }).claims;
      expect(claims).toEqual({
        iss: `https://${HOST}`, sub: u.id, aud: ['native'], iat: Math.floor(issuedAt / 1000), jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
        z_asid: u.sid, z_t: 't',
      });
      expect(claims.exp).toBeUndefined();

      const [row] = await h.sql<{ mfa_completed_at: Date }>('SELECT mfa_completed_at FROM api_sessions WHERE id = $1', [u.sid]);
      expect(row!.mfa_completed_at.getTime()).toBe(issuedAt);
      expect(await redis.get(principalCacheKey(u.token))).toBeNull();
      expect((await h.resolveBearer(u.token)).principal?.mfaCompletedAt).toBe(new Date(issuedAt).toISOString());
      // Without the access token on the request the audience is OpenZiti's client id.
      const plainAud = await create(u.principal, { code: u.totp() });
      const aud = (await ring.verify(plainAud.body.data.token)) as { claims: Record<string, unknown> };
      expect(aud.claims.aud).toEqual(['openziti']);
    });
  });
});
