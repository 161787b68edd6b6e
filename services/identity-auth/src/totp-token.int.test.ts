import { type RequestPrincipal, principalCacheKey } from '@ziti/http-kit';
import type { Cache } from '@ziti/messaging';
import { totpCodes, wrongTotpCodes } from './testing/totp-codes.js';
import { type Harness, C } from './testing/harness.js';
import { OidcFixture } from './testing/oidc.js';

/**
 * The TOTP token of an OIDC session (OIDC.md "TOTP token"), through the client API.
 * OIDC sessions are inserted as the provider stores them (UUID id, kind 'oidc', token `oidc:<uuid>`).
 */
describe('POST /current-api-session/totp-token', () => {
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
    const sid = await f.oidcSession(u.id);
    const token = await f.accessToken(u.id, sid, { aud: ['native'] });
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

    const plain = await f.user();
    const sid = await f.oidcSession(plain);
    const p = (await h.resolveBearer(await f.accessToken(plain, sid))).principal as RequestPrincipal;
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

    const verified = await f.ring.verify(res.body.data.token);
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
    const aud = (await f.ring.verify(plainAud.body.data.token)) as { claims: Record<string, unknown> };
    expect(aud.claims.aud).toEqual(['openziti']);
  });
});
