import { type RequestPrincipal, principalCacheKey } from '@ziti/http-kit';
import { totpCode } from './domain/mfa/totp.js';
import { C, Harness, M } from './testing/harness.js';
import { totpCodes } from './testing/totp-codes.js';

describe('TOTP MFA', () => {
  let h: Harness;
  let admin: RequestPrincipal;
  beforeAll(async () => {
    h = await Harness.start({ secretsKey: 'mfa-test-key' });
    admin = (await h.login()).principal;
  });
  afterAll(async () => {
    await h?.close();
  });

  const as = (p: RequestPrincipal) => ({
    get: (path: string, headers?: Record<string, string>) => h.call('GET', `${C}${path}`, { principal: p, headers }),
    post: (path: string, body?: unknown) => h.call('POST', `${C}${path}`, { principal: p, body }),
    del: (path: string, headers?: Record<string, string>, body?: unknown) => h.call('DELETE', `${C}${path}`, { principal: p, headers, body }),
  });

  /** A user with a verified enrollment; returns its secret and recovery codes. */
  async function enrolled() {
    const user = await h.createUser(admin, {}, 'mfa-pass1');
    const { principal } = await h.login(user.username, 'mfa-pass1', 'client');
    const me = as(principal);
    expect((await me.post('/current-identity/mfa')).status).toBe(201);
    const detail = (await me.get('/current-identity/mfa')).body.data;
    const secret = new URL(detail.provisioningUrl).searchParams.get('secret')!;
    const totp = totpCodes(secret);
    expect((await me.post('/current-identity/mfa/verify', { code: totp() })).status).toBe(200);
    return { user, secret, totp, codes: detail.recoveryCodes as string[], principal };
  }

  it('every MFA endpoint is 404 before enrollment', async () => {
    const user = await h.createUser(admin, {}, 'mfa-pass1');
    const me = as((await h.login(user.username, 'mfa-pass1', 'client')).principal);
    for (const r of [
      await me.get('/current-identity/mfa'),
      await me.get('/current-identity/mfa/qr-code'),
      await me.get('/current-identity/mfa/recovery-codes'),
      await me.post('/current-identity/mfa/recovery-codes', { code: '' }),
      await me.post('/current-identity/mfa/verify', { code: '' }),
      await me.del('/current-identity/mfa'),
    ]) expect([r.status, r.body?.error?.code]).toEqual([404, 'NOT_FOUND']);
    expect((await me.post('/authenticate/mfa', { code: '123456' })).body.error.code).toBe('MFA_NOT_ENROLLED');
  });

  it('enrolls: provisioning URL, 20 codes, QR png, verify with TOTP only; secrets encrypted at rest', async () => {
    const user = await h.createUser(admin, {}, 'mfa-pass1');
    const { principal } = await h.login(user.username, 'mfa-pass1', 'client');
    const me = as(principal);
    const created = await me.post('/current-identity/mfa');
    expect(created.body.data._links.self.href).toBe('./current-identity/mfa');
    expect((await me.post('/current-identity/mfa')).body.error.code).toBe('MFA_EXISTS');
    const d = (await me.get('/current-identity/mfa')).body.data;
    expect(d).toMatchObject({ isVerified: false, recoveryCodes: expect.any(Array) });
    expect(d.recoveryCodes).toHaveLength(20);
    const url = new URL(d.provisioningUrl);
    expect([url.protocol, url.host, decodeURIComponent(url.pathname)]).toEqual(['otpauth:', 'totp', `/openziti.io:${user.username}`]);
    const secret = url.searchParams.get('secret')!;
    expect(secret).toMatch(/^[A-Z2-7]{16}$/);
    const [row] = await h.sql('SELECT secret, recovery_codes FROM mfas WHERE identity_id = $1', [user.id]);
    expect(`${row.secret}${row.recovery_codes}`).not.toContain(secret);
    expect(row.recovery_codes).not.toContain(d.recoveryCodes[0]);
    const qr = await me.get('/current-identity/mfa/qr-code');
    expect([qr.status, qr.headers.get('content-type')]).toEqual([200, 'image/png']);
    expect((await me.get('/current-identity/mfa/recovery-codes', { 'mfa-validation-code': totpCode(secret) })).status).toBe(404);
    expect((await h.call('GET', `${M}/identities/${user.id}`, { principal: admin })).body.data.isMfaEnabled).toBe(false);

    expect((await me.post('/current-identity/mfa/verify', {})).body.error.code).toBe('COULD_NOT_VALIDATE');
    expect((await me.post('/current-identity/mfa/verify', { code: '' })).body.error.code).toBe('MFA_INVALID_TOKEN');
    expect((await me.post('/current-identity/mfa/verify', { code: 'qwgjwoigrw92' })).body.error.code).toBe('MFA_INVALID_TOKEN');
    expect((await me.post('/current-identity/mfa/verify', { code: d.recoveryCodes[2] })).body.error.code).toBe('MFA_INVALID_TOKEN');
    expect((await me.post('/current-identity/mfa/verify', { code: totpCode(secret) })).status).toBe(200);
    expect((await me.post('/current-identity/mfa/verify', { code: totpCode(secret) })).status).toBe(404);
    const s = (await me.get('/current-api-session')).body.data;
    expect([s.isMfaRequired, s.isMfaComplete]).toEqual([true, true]);
    const v = (await me.get('/current-identity/mfa')).body.data;
    expect([v.isVerified, v.provisioningUrl, v.recoveryCodes]).toEqual([true, undefined, undefined]);
    expect((await me.get('/current-identity/mfa/qr-code')).status).toBe(404);
    expect((await h.call('GET', `${M}/identities/${user.id}`, { principal: admin })).body.data.isMfaEnabled).toBe(true);
  });

  it('new sessions start partial; a TOTP or an unused recovery code completes them', async () => {
    const { user, totp, codes } = await enrolled();
    const login = await h.call('POST', `${C}/authenticate?method=password`, { body: { username: user.username, password: 'mfa-pass1' } });
    expect(login.body.data).toMatchObject({ isMfaRequired: true, isMfaComplete: false });
    expect(login.body.data.authQueries).toEqual([
      { typeId: 'MFA', provider: 'ziti', format: 'alphaNumeric', httpMethod: 'POST', httpUrl: './authenticate/mfa', minLength: 4, maxLength: 6, isTotpEnrolled: true },
    ]);
    const token = login.headers.get('zt-session')!;
    expect(await h.cache.get(principalCacheKey(token))).toBeNull(); // a partial session is never cached at login
    const partial = (await h.resolve(token)).principal as RequestPrincipal;
    expect(partial.isFullyAuthenticated).toBe(false);
    const me = as(partial);
    expect((await me.get('/current-identity')).status).toBe(401);
    expect((await me.get('/current-api-session')).status).toBe(200);
    expect((await me.get('/current-identity/mfa')).status).toBe(200);
    expect((await me.get('/current-identity/authenticators')).status).toBe(401);
    expect((await me.post('/authenticate/mfa', { code: '' })).body.error.code).toBe('MFA_INVALID_TOKEN');
    expect((await me.post('/authenticate/mfa', { code: '8f4b48er' })).body.error.code).toBe('MFA_INVALID_TOKEN');
    await h.cache.set(principalCacheKey(token), '{}', 30);
    expect((await me.post('/authenticate/mfa', { code: codes[0] })).status).toBe(200);
    expect(await h.cache.get(principalCacheKey(token))).toBeNull();
    const full = (await h.resolve(token)).principal!;
    expect(full.isFullyAuthenticated).toBe(true);
    expect(Math.abs(Date.parse(full.mfaCompletedAt) - Date.now())).toBeLessThan(60_000);
    expect(partial.mfaCompletedAt).toBe('');

    // a recovery code works once only
    const second = await h.login(user.username, 'mfa-pass1', 'client');
    expect((await as(second.principal).post('/authenticate/mfa', { code: codes[0] })).body.error.code).toBe('MFA_INVALID_TOKEN');
    expect((await as(second.principal).post('/authenticate/mfa', { code: totp() })).status).toBe(200);
  });

  it('recovery codes: shown for a TOTP, regenerated for any code', async () => {
    const { totp, codes, principal } = await enrolled();
    const me = as(principal);
    expect((await me.get('/current-identity/mfa/recovery-codes')).body.error.code).toBe('MFA_INVALID_TOKEN');
    expect((await me.get('/current-identity/mfa/recovery-codes', { 'mfa-validation-code': codes[3] })).body.error.code).toBe('MFA_INVALID_TOKEN');
    const shown = await me.get('/current-identity/mfa/recovery-codes', { 'mfa-validation-code': totp() });
    expect(shown.body.data.recoveryCodes).toEqual(codes);
    expect((await me.post('/current-identity/mfa/recovery-codes', { code: '' })).body.error.code).toBe('MFA_INVALID_TOKEN');
    expect((await me.post('/current-identity/mfa/recovery-codes', { code: codes[5] })).status).toBe(200);
    const fresh = (await me.get('/current-identity/mfa/recovery-codes', { 'mfa-validation-code': totp() })).body.data.recoveryCodes;
    expect(fresh).toHaveLength(20);
    expect(fresh).not.toEqual(codes);
  });

  it('removal: by its owner with a code, by an admin at any time; an unverified one needs no code', async () => {
    const a = await enrolled();
    const me = as(a.principal);
    expect((await me.del('/current-identity/mfa')).body.error.code).toBe('MFA_INVALID_TOKEN');
    expect((await me.del('/current-identity/mfa', { 'mfa-validation-code': '44444' })).body.error.code).toBe('MFA_INVALID_TOKEN');
    expect((await me.del('/current-identity/mfa', { 'mfa-validation-code': a.codes[1] })).status).toBe(200);
    expect((await me.get('/current-identity/mfa')).status).toBe(404);

    const b = await enrolled();
    const nonAdmin: RequestPrincipal = { ...admin, identityId: 'x', isAdmin: false, isDefaultAdmin: false, permissions: [] };
    expect((await h.call('DELETE', `${M}/identities/${b.user.id}/mfa`, { principal: nonAdmin })).status).toBe(401);
    expect((await h.call('DELETE', `${M}/identities/${b.user.id}/mfa`, { principal: admin })).status).toBe(200);
    expect((await h.call('GET', `${M}/identities/${b.user.id}`, { principal: admin })).body.data.isMfaEnabled).toBe(false);

    const c = await h.createUser(admin, {}, 'mfa-pass1');
    const cme = as((await h.login(c.username, 'mfa-pass1', 'client')).principal);
    await cme.post('/current-identity/mfa');
    expect((await cme.del('/current-identity/mfa', {}, { code: '' })).status).toBe(200);
  });

  it('a policy requiring TOTP makes sessions partial even before enrollment', async () => {
    const policy = await h.call('POST', `${M}/auth-policies`, {
      principal: admin,
      body: {
        name: 'totp-required',
        primary: { cert: { allowed: true, allowExpiredCerts: true }, extJwt: { allowed: true, allowedSigners: [] }, updb: { allowed: true, minPasswordLength: 5, requireSpecialChar: false, requireNumberChar: false, requireMixedCase: false, maxAttempts: 0, lockoutDurationMinutes: 0 } },
        secondary: { requireTotp: true },
      },
    });
    const user = await h.createUser(admin, { authPolicyId: policy.body.data.id }, 'mfa-pass1');
    const login = await h.login(user.username, 'mfa-pass1', 'client');
    expect(login.reply.body.data.authQueries[0]).toMatchObject({ typeId: 'MFA', isTotpEnrolled: false });
    expect(login.principal.isFullyAuthenticated).toBe(false);
    const me = as(login.principal);
    await me.post('/current-identity/mfa');
    const secret = new URL((await me.get('/current-identity/mfa')).body.data.provisioningUrl).searchParams.get('secret')!;
    expect((await me.post('/current-identity/mfa/verify', { code: totpCode(secret) })).status).toBe(200);
    expect((await h.principal(login.token)).isFullyAuthenticated).toBe(true);
  });
});
