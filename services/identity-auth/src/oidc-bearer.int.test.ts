import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type { RequestPrincipal } from '@ziti/http-kit';
import type { Cache } from '@ziti/messaging';
import { signEs256 } from './oidc/jwt.js';
import { JwksFetcher } from './clients/jwks-fetcher.js';
import { ActivityRecorder, ApiSessionManager } from './domain/api-session-manager.js';
import { JwtVerifier } from './domain/ext-jwt/jwt-verifier.js';
import { SecondaryFactorChecker } from './domain/session-state.js';
import { sharedPrincipalCache } from './events/principal-cache.js';
import { type Harness, C, M } from './testing/harness.js';
import { EXPIRED_BEARER, INVALID_BEARER, OidcFixture, nowSeconds } from './testing/oidc.js';

/**
 * Bearer resolution (OIDC.md "Bearer sessions"): access tokens signed by identity-auth's OIDC keys,
 * resolved for the gateway; OIDC sessions in the sweep, as the current API session, never as zt-session.
 * OIDC sessions are inserted as the provider stores them (UUID id, kind 'oidc', token `oidc:<uuid>`).
 */
describe('OIDC bearer sessions', () => {
  let f: OidcFixture;
  let h: Harness;
  let admin: RequestPrincipal;
  let redis: Cache;

  beforeAll(async () => {
    f = await OidcFixture.start();
    ({ h, admin, redis } = f);
  });
  afterAll(async () => {
    await f?.close();
  });

  describe('resolution', () => {
    it('answers the session principal, fully authenticated, cacheable until the token expires (at most 30 s)', async () => {
      const identityId = await f.user({ isAdmin: true });
      const completed = new Date(Date.now() - 60_000);
      const sid = await f.oidcSession(identityId, { mfaCompletedAt: completed });
      await h.sql("UPDATE api_sessions SET config_types = '{ct1}' WHERE id = $1", [sid]);
      const exp = nowSeconds() + 1800;
      const res = await h.resolveBearer(await f.accessToken(identityId, sid, { exp }));
      expect(res.principal).toMatchObject({
        identityId, apiSessionId: sid, isAdmin: true, isFullyAuthenticated: true, configTypes: ['ct1'],
        mfaCompletedAt: completed.toISOString(), expiresAt: new Date(exp * 1000).toISOString(),
      });
      expect(res.cacheTtlSeconds).toBe(30);
      const short = await h.resolveBearer(await f.accessToken(identityId, sid, { exp: nowSeconds() + 10 }));
      expect(short.cacheTtlSeconds).toBeLessThanOrEqual(10);
      expect(short.cacheTtlSeconds).toBeGreaterThanOrEqual(8);
    });

    it('refuses tampered, expired, not-yet-valid and non-access tokens', async () => {
      const identityId = await f.user();
      const sid = await f.oidcSession(identityId);
      const good = await f.accessToken(identityId, sid);
      const [head, body, sig] = good.split('.') as [string, string, string];
      const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), z_ia: true })).toString('base64url');
      expect(await f.refusal(`${head}.${forged}.${sig}`)).toBe(INVALID_BEARER);
      expect(await f.refusal('not-a-jwt')).toBe(INVALID_BEARER);
      expect(await f.refusal(await f.accessToken(identityId, sid, { exp: nowSeconds() - 5 }))).toBe(EXPIRED_BEARER);
      expect(await f.refusal(await f.accessToken(identityId, sid, { nbf: nowSeconds() + 600 }))).toBe(INVALID_BEARER);
      expect(await f.refusal(await f.accessToken(identityId, sid, { z_t: 'r' }))).toBe(INVALID_BEARER);
      expect(await f.refusal(await f.accessToken(identityId, sid, { z_t: 't' }))).toBe(INVALID_BEARER);
      expect((await f.failure(h.resolveBearer(good.slice(0, -2)))).code).toBe('UNAUTHORIZED');
      // A key this controller never had.
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      expect(await f.refusal(await signEs256(privateKey, 'unknown-kid', { sub: identityId, z_asid: sid, z_t: 'a', exp: nowSeconds() + 60 }))).toBe(INVALID_BEARER);
    });

    it('refuses tokens of an unknown, expired, legacy or other identity session, and of a disabled identity', async () => {
      const identityId = await f.user();
      expect(await f.refusal(await f.accessToken(identityId, randomUUID()))).toBe(INVALID_BEARER);
      const expired = await f.oidcSession(identityId, { expiresAt: new Date(Date.now() - 1000) });
      expect(await f.refusal(await f.accessToken(identityId, expired))).toBe(INVALID_BEARER);
      const legacy = (await h.login()).principal.apiSessionId;
      expect(await f.refusal(await f.accessToken(admin.identityId, legacy))).toBe(INVALID_BEARER);
      const other = await f.user();
      const sid = await f.oidcSession(identityId);
      expect(await f.refusal(await f.accessToken(other, sid))).toBe(INVALID_BEARER);
      const token = await f.accessToken(identityId, sid);
      expect((await h.resolveBearer(token)).principal?.identityId).toBe(identityId);
      await h.sql("UPDATE identities SET disabled = true, disabled_until = now() + interval '1 hour' WHERE id = $1", [identityId]);
      expect(await f.refusal(token)).toBe(INVALID_BEARER);
    });

    it('refuses a token revoked by its jti, its API session, or its identity when issued before the cutoff', async () => {
      const identityId = await f.user();
      const sid = await f.oidcSession(identityId);
      const jti = randomUUID();
      const byJti = await f.accessToken(identityId, sid, { jti });
      const post = (body: unknown) => h.call('POST', `${M}/revocations`, { principal: admin, body });
      expect((await h.resolveBearer(byJti)).principal).toBeDefined();
      expect((await post({ id: jti, type: 'JTI' })).status).toBe(201);
      expect(await f.refusal(byJti)).toBe(INVALID_BEARER);
      const sibling = await f.accessToken(identityId, sid);
      expect((await h.resolveBearer(sibling)).principal).toBeDefined();

      expect((await post({ id: sid, type: 'API_SESSION' })).status).toBe(201);
      expect(await f.refusal(sibling)).toBe(INVALID_BEARER);

      const sid2 = await f.oidcSession(identityId);
      const before = await f.accessToken(identityId, sid2, { iat: nowSeconds() - 10 });
      expect((await post({ id: identityId, type: 'IDENTITY' })).status).toBe(201);
      expect(await f.refusal(before)).toBe(INVALID_BEARER);
      const after = await f.accessToken(identityId, sid2, { iat: nowSeconds() + 2 });
      expect((await h.resolveBearer(after)).principal?.apiSessionId).toBe(sid2);
    });
  });

  it('shows an OIDC session as the current API session, expiring with the access token', async () => {
    const identityId = await f.user();
    const sid = await f.oidcSession(identityId);
    const exp = nowSeconds() + 600;
    const principal = (await h.resolveBearer(await f.accessToken(identityId, sid, { exp }))).principal as RequestPrincipal;
    const res = await h.call('GET', `${C}/current-api-session`, { principal });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: sid, identityId, expiresAt: new Date(exp * 1000).toISOString() });
    expect(res.body.data.expirationSeconds).toBeGreaterThan(590);
    expect(res.body.data.expirationSeconds).toBeLessThanOrEqual(600);
  });

  it('never resolves an OIDC session row as a zt-session', async () => {
    const identityId = await f.user();
    const sid = await f.oidcSession(identityId);
    const [{ token }] = await h.sql<{ token: string }>('SELECT token FROM api_sessions WHERE id = $1', [sid]);
    const err = await f.failure(h.resolve(token!));
    expect(err.code).toBe('UNAUTHORIZED');
    expect(err.headers['WWW-Authenticate']).toContain('zt-session');
  });

  it('sweeps idle legacy sessions and expired OIDC sessions, never a live OIDC session however idle', async () => {
    const identityId = await f.user();
    const idleOidc = await f.oidcSession(identityId);
    const expiredOidc = await f.oidcSession(identityId, { expiresAt: new Date(Date.now() - 1000) });
    const legacy = (await h.login()).principal.apiSessionId;
    const ids = [idleOidc, expiredOidc, legacy];
    await h.sql("UPDATE api_sessions SET last_activity_at = now() - interval '2 hours' WHERE id = ANY($1)", [ids]);
    await f.withUow(async (uow) => {
      const factors = new SecondaryFactorChecker(uow.repos, new JwtVerifier(new JwksFetcher()));
      const manager = new ApiSessionManager(uow, sharedPrincipalCache(redis, () => undefined), new ActivityRecorder(uow), factors, 30 * 60_000);
      expect(await manager.sweepIdle(1)).toBeGreaterThanOrEqual(2);
    });
    const left = (await h.sql<{ id: string }>('SELECT id FROM api_sessions WHERE id = ANY($1)', [ids])).map((r) => r.id);
    expect(left).toEqual([idleOidc]);
  });
});
