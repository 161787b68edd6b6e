import { type TestCert, selfSignedCert, signJwt } from '../testing/certs.js';
import { randomBytes } from 'node:crypto';
import type { RequestPrincipal } from '@ziti/http-kit';
import type { FakePki } from '../testing/fake-pki.js';
import { C, type Harness, M } from '../testing/harness.js';
import { totpCodes, wrongTotpCodes } from '../testing/totp-codes.js';
import { CB, EXCHANGE, ISSUER, now, oidcTestbed } from '../testing/oidc-testbed.js';

/** identity-auth's `/oidc` provider, driven as the gateway passes an SDK's requests through: TOTP, token exchange and errors. */
describe('OIDC provider: TOTP, token exchange and errors', () => {
  const t = oidcTestbed();
  const { oidc, newAuth, authorize, codeTail, tokenForm, token, claims, refreshForm, passwordLogin } = t;
  let h: Harness;
  let pki: FakePki;
  let admin: RequestPrincipal;
  beforeAll(() => {
    ({ h, pki, admin } = t);
  });

  it('asks for TOTP after the primary factor and issues the code once a valid TOTP code arrives', async () => {
    const user = await h.createUser(admin);
    const { token: zt } = await h.login(user.username, user.password, 'client');
    const me = await h.principal(zt);
    expect((await h.call('POST', `${C}/current-identity/mfa`, { principal: me })).status).toBe(201);
    const detail = (await h.call('GET', `${C}/current-identity/mfa`, { principal: me })).body.data;
    const secret = new URL(detail.provisioningUrl).searchParams.get('secret')!;
    const totp = totpCodes(secret);
    expect((await h.call('POST', `${C}/current-identity/mfa/verify`, { principal: me, body: { code: totp() } })).status).toBe(200);

    const auth = newAuth();
    const { id } = await authorize(auth);
    const login = await oidc('POST', '/oidc/login/password', { json: { id, username: user.username, password: user.password } });
    expect(login.status).toBe(200);
    expect(login.headers.get('totp-required')).toBe('true');
    expect(login.body).toEqual({
      authQueries: [{ typeId: 'TOTP', provider: 'ziti', format: 'numeric', httpMethod: 'POST', httpUrl: './oidc/login/totp', minLength: 6, maxLength: 8, isTotpEnrolled: true }],
    });
    const queries = await oidc('GET', `/oidc/login/auth-queries?id=${id}`);
    expect([queries.status, queries.body.authQueries[0].typeId]).toEqual([200, 'TOTP']);
    // Not fully authenticated: the callback issues no code.
    const early = await oidc('GET', `/oidc/authorize/callback?id=${id}`);
    expect(early.headers.get('location')).toContain('error=login_required');

    const bad = await oidc('POST', '/oidc/login/totp', { json: { id, code: wrongTotpCodes(secret, 1)[0] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'INVALID TOTP CODE', message: 'an invalid TOTP code was supplied' });
    const recovery = await oidc('POST', '/oidc/login/totp', { json: { id, code: detail.recoveryCodes[0] } });
    expect(recovery.status).toBe(400);
    const code = totp();
    const good = await oidc('POST', '/oidc/login/totp', { form: `id=${id}&code=${code}` });
    expect(good.status).toBe(302);
    // The same code is refused for another login (single use).
    const other = newAuth();
    const second = await authorize(other);
    await oidc('POST', '/oidc/login/password', { json: { id: second.id, username: user.username, password: user.password } });
    expect((await oidc('POST', '/oidc/login/totp', { json: { id: second.id, code } })).status).toBe(400);

    const { tail } = await codeTail(good.headers.get('location')!);
    const t = await token(tokenForm(auth, tail));
    const access = claims(t.body.access_token);
    expect(access.amr).toEqual(['password', 'totp']);
    const [row] = await h.sql('SELECT is_mfa_required, is_mfa_complete, mfa_completed_at FROM api_sessions WHERE id = $1', [access.z_asid]);
    expect(row).toMatchObject({ is_mfa_required: true, is_mfa_complete: true });
    expect(row.mfa_completed_at).not.toBeNull();
  });

  it('enrolls TOTP in the middle of a login when the auth policy requires it', async () => {
    const policy = await h.call('POST', `${M}/auth-policies`, {
      principal: admin,
      body: {
        name: `totp-${randomBytes(3).toString('hex')}`,
        primary: { cert: { allowed: true, allowExpiredCerts: true }, extJwt: { allowed: true, allowedSigners: [] }, updb: { allowed: true, minPasswordLength: 5, requireSpecialChar: false, requireNumberChar: false, requireMixedCase: false, maxAttempts: 0, lockoutDurationMinutes: 0 } },
        secondary: { requireTotp: true, requireExtJwtSigner: null },
      },
    });
    expect(policy.status).toBe(201);
    const user = await h.createUser(admin, { authPolicyId: policy.body.data.id }, 'pass-word1');
    const auth = newAuth();
    const { id } = await authorize(auth);
    expect((await oidc('POST', '/oidc/login/totp/enroll', { json: { id } })).status).toBe(401);
    const login = await oidc('POST', '/oidc/login/password', { json: { id, username: user.username, password: 'pass-word1' } });
    expect(login.status).toBe(200);
    expect(login.body.authQueries[0]).toMatchObject({ typeId: 'TOTP', isTotpEnrolled: false });
    // Only the login's caller (its binding cookie) enrolls: knowing the auth request id is not enough.
    expect((await oidc('POST', '/oidc/login/totp/enroll', { json: { id } })).status).toBe(401);
    const setCookie = login.headers.get('set-cookie')!;
    expect(setCookie).toMatch(new RegExp(`^ziti-oidc-login-${id}=[A-Za-z0-9_-]{43}; Path=/oidc/login; Max-Age=600; HttpOnly; Secure; SameSite=Strict$`));
    const cookie = { cookie: `other=1; ${setCookie.split(';')[0]}` };
    expect((await oidc('POST', '/oidc/login/totp/enroll', { json: { id }, headers: { cookie: `ziti-oidc-login-${id}=${'A'.repeat(43)}` } })).status).toBe(401);
    const started = await oidc('POST', '/oidc/login/totp/enroll', { json: { id }, headers: cookie });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ isVerified: false, provisioningUrl: expect.stringContaining('otpauth://'), recoveryCodes: expect.any(Array) });
    expect((await oidc('POST', '/oidc/login/totp/enroll', { json: { id }, headers: cookie })).body.error.code).toBe('MFA_EXISTS');
    expect((await oidc('DELETE', '/oidc/login/totp/enroll', { json: { id } })).status).toBe(401);
    const dropped = await oidc('DELETE', '/oidc/login/totp/enroll', { json: { id }, headers: cookie });
    expect([dropped.status, dropped.body]).toEqual([200, {}]);
    const restarted = await oidc('POST', '/oidc/login/totp/enroll', { form: `id=${id}`, headers: cookie });
    expect(restarted.status).toBe(201);
    const secret = new URL(restarted.body.provisioningUrl).searchParams.get('secret')!;
    expect((await oidc('POST', '/oidc/login/totp/enroll/verify', { json: { id, code: wrongTotpCodes(secret, 1)[0] }, headers: cookie })).body.error.code).toBe('MFA_INVALID_TOKEN');
    expect((await oidc('POST', '/oidc/login/totp/enroll/verify', { json: { id, code: totpCodes(secret)() } })).status).toBe(401);
    const verified = await oidc('POST', '/oidc/login/totp/enroll/verify', { json: { id, code: totpCodes(secret)() }, headers: cookie });
    expect(verified.status).toBe(302);
    const { tail } = await codeTail(verified.headers.get('location')!);
    const t = await token(tokenForm(auth, tail));
    expect(claims(t.body.access_token).amr).toEqual(['password', 'totp']);
    expect((await h.sql('SELECT is_verified FROM mfas WHERE identity_id = $1', [user.id]))[0].is_verified).toBe(true);
  });

  describe('external JWTs', () => {
    let cert: TestCert;
    let signer: string;
    beforeAll(async () => {
      cert = selfSignedCert('oidc-signer');
      const r = await h.call('POST', `${M}/external-jwt-signers`, {
        principal: admin,
        body: { name: 'oidc-signer', enabled: true, issuer: 'iss-oidc', audience: 'aud-oidc', certPem: cert.certPem, kid: 'kid-oidc', externalAuthUrl: 'https://idp.example.com/login', clientId: 'cid', scopes: ['openid'] },
      });
      expect(r.status).toBe(201);
      signer = r.body.data.id;
    });
    const jwtFor = (sub: string) => signJwt(cert.privateKey, { iss: 'iss-oidc', aud: 'aud-oidc', sub, exp: now() + 600 }, { kid: 'kid-oidc' });

    it('logs in with an external JWT as primary factor (form body, as the SDK re-posts it)', async () => {
      const user = await h.createUser(admin);
      const auth = newAuth();
      const { id } = await authorize(auth, {}, '&method=ext-jwt');
      expect((await oidc('GET', `/oidc/login/ext-jwt?authRequestID=${id}`)).text).toBe('please POST to this URL');
      const none = await oidc('POST', '/oidc/login/ext-jwt', { form: `id=${id}` });
      expect([none.status, none.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
      expect(none.headers.get('www-authenticate')).toContain('openziti-primary-ext-jwt');
      const login = await oidc('POST', '/oidc/login/ext-jwt', { form: `id=${id}`, headers: { authorization: `Bearer ${await jwtFor(user.id)}` } });
      expect(login.status).toBe(302);
      const { tail } = await codeTail(login.headers.get('location')!);
      const t = await token(tokenForm(auth, tail));
      expect(claims(t.body.access_token)).toMatchObject({ sub: user.id, amr: ['ext-jwt'], z_authid: signer });
    });

    it('a required secondary signer is satisfied by a bearer token of the login, or stays open as an EXT-JWT query', async () => {
      const policy = await h.call('POST', `${M}/auth-policies`, {
        principal: admin,
        body: {
          name: `sec-${randomBytes(3).toString('hex')}`,
          primary: { cert: { allowed: true, allowExpiredCerts: true }, extJwt: { allowed: true, allowedSigners: [] }, updb: { allowed: true, minPasswordLength: 5, requireSpecialChar: false, requireNumberChar: false, requireMixedCase: false, maxAttempts: 0, lockoutDurationMinutes: 0 } },
          secondary: { requireTotp: false, requireExtJwtSigner: signer },
        },
      });
      const user = await h.createUser(admin, { authPolicyId: policy.body.data.id }, 'pass-word2');
      const auth = newAuth();
      const { id } = await authorize(auth);
      const partial = await oidc('POST', '/oidc/login/password', { json: { id, username: user.username, password: 'pass-word2' } });
      expect(partial.status).toBe(200);
      expect(partial.headers.get('totp-required')).toBeNull();
      expect(partial.headers.get('www-authenticate')).toContain('openziti-secondary-ext-jwt');
      expect(partial.body.authQueries).toEqual([{ typeId: 'EXT-JWT', provider: 'url', id: signer, clientId: 'cid', httpUrl: 'https://idp.example.com/login', scopes: ['openid'] }]);
      const full = await oidc('POST', '/oidc/login/password', { json: { id, username: user.username, password: 'pass-word2' }, headers: { authorization: `Bearer ${await jwtFor(user.id)}` } });
      expect(full.status).toBe(302);
      const { tail } = await codeTail(full.headers.get('location')!);
      const t = await token(tokenForm(auth, tail));
      expect(claims(t.body.access_token).amr).toEqual(['password', `ejs:${signer}`]);
    });
  });

  it('exchanges tokens, revokes a refresh token, serves userinfo and ends the session', async () => {
    const user = await h.createUser(admin);
    const { tokens } = await passwordLogin(user);
    const asid = claims(tokens.access_token).z_asid;
    const exchange = (subject: string, type: string, extra = '') =>
      token(`client_id=openziti&grant_type=${encodeURIComponent(EXCHANGE)}&subject_token=${subject}&subject_token_type=${encodeURIComponent(type)}${extra}`);
    const AT = 'urn:ietf:params:oauth:token-type:access_token';
    const RT = 'urn:ietf:params:oauth:token-type:refresh_token';
    const fromRefresh = await exchange(tokens.refresh_token, RT);
    expect(fromRefresh.status).toBe(200);
    expect(fromRefresh.body).toMatchObject({ issued_token_type: RT, access_token: expect.any(String), refresh_token: expect.any(String), token_type: 'Bearer' });
    expect(claims(fromRefresh.body.refresh_token)).toMatchObject({ z_t: 'r', z_asid: asid });
    const fromAccess = await exchange(tokens.access_token, AT);
    expect(fromAccess.body.issued_token_type).toBe(AT);
    expect(fromAccess.body.refresh_token).toBeUndefined();
    expect((await exchange(tokens.access_token, AT, `&requested_token_type=${encodeURIComponent(RT)}`)).body.error).toBe('invalid_request');
    // The SDKs' ID token request (sdk-golang edge-apis): the ID token comes in access_token, token type N_A.
    const IT = 'urn:ietf:params:oauth:token-type:id_token';
    for (const [subject, type] of [[tokens.access_token, AT], [tokens.refresh_token, RT]] as const) {
      const id = await exchange(subject, type, `&requested_token_type=${encodeURIComponent(IT)}`);
      expect(id.body).toMatchObject({ issued_token_type: IT, token_type: 'N_A', access_token: expect.any(String) });
      expect(id.body.refresh_token).toBeUndefined();
      expect(claims(id.body.access_token)).toMatchObject({ sub: user.id, z_asid: asid, name: expect.any(String) });
      expect(claims(id.body.access_token).z_t).toBeUndefined();
    }
    expect((await exchange(tokens.refresh_token, RT, '&audience=elsewhere')).body.error).toBe('invalid_request');
    expect((await exchange(tokens.refresh_token, RT, '&scope=admin')).body.error).toBe('invalid_scope');
    expect((await exchange(tokens.access_token, RT)).body.error).toBe('invalid_grant');

    const info = await oidc('GET', '/oidc/userinfo', { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(info.body).toEqual({ sub: user.id, name: user.username, z_ia: false });
    expect((await oidc('GET', '/oidc/userinfo')).status).toBe(401);

    const revoked = await oidc('POST', '/oidc/revoke', { form: `client_id=openziti&token=${fromRefresh.body.refresh_token}&token_type_hint=refresh_token` });
    expect(revoked.status).toBe(200);
    expect((await token(refreshForm(fromRefresh.body.refresh_token))).body.error).toBe('invalid_grant');
    expect((await oidc('POST', '/oidc/revoke', { form: 'client_id=openziti&token=not-a-token' })).status).toBe(200);
    expect((await oidc('POST', '/oidc/revoke', { form: 'client_id=nobody&token=x' })).body.error).toBe('invalid_client');

    const notAllowed = await oidc('GET', `/oidc/end_session?id_token_hint=${tokens.id_token}&post_logout_redirect_uri=${encodeURIComponent('https://evil.example.com/')}`);
    expect([notAllowed.status, notAllowed.body.error]).toEqual([400, 'invalid_request']);
    const ended = await oidc('GET', `/oidc/end_session?id_token_hint=${tokens.id_token}&post_logout_redirect_uri=${encodeURIComponent('http://127.0.0.1:8080/auth/logout')}&state=s1`);
    expect([ended.status, ended.headers.get('location')]).toEqual([302, 'http://127.0.0.1:8080/auth/logout?state=s1']);
    expect(await h.sql('SELECT id FROM api_sessions WHERE id = $1', [asid])).toEqual([]);
    expect(await h.sql("SELECT type FROM revocations WHERE id = $1", [asid])).toEqual([{ type: 'API_SESSION' }]);
    expect((await token(refreshForm(tokens.refresh_token))).body.error).toBe('invalid_grant');
    expect((await exchange(tokens.access_token, AT)).body.error).toBe('invalid_grant');
    const plain = await oidc('POST', '/oidc/end_session', { form: `id_token_hint=${tokens.id_token}` });
    expect(plain.headers.get('location')).toBe(`${ISSUER}/logged-out`);
  });

  it('answers errors in the documented shapes', async () => {
    const auth = newAuth();
    const q = (over: Record<string, string>) =>
      new URLSearchParams({ client_id: 'openziti', scope: 'openid', response_type: 'code', redirect_uri: CB, code_challenge: auth.challenge, code_challenge_method: 'S256', state: 'st', ...over });
    const unknownClient = await oidc('GET', `/oidc/authorize?${q({ client_id: 'nobody' })}`);
    expect([unknownClient.status, unknownClient.body.error]).toEqual([400, 'invalid_client']);
    const badRedirect = await oidc('GET', `/oidc/authorize?${q({ redirect_uri: 'https://evil.example.com/cb' })}`);
    expect([badRedirect.status, badRedirect.body.error, badRedirect.headers.get('location')]).toEqual([400, 'invalid_request', null]);
    const anyPort = await oidc('GET', `/oidc/authorize?${q({ redirect_uri: 'http://127.0.0.1:41234/auth/callback' })}`);
    expect(anyPort.status).toBe(302);
    const noPkce = await oidc('GET', `/oidc/authorize?${q({ code_challenge: '' })}`);
    expect(noPkce.headers.get('location')).toMatch(new RegExp(`^${CB}\\?error=invalid_request&.*state=st$`));
    const none = await oidc('GET', `/oidc/authorize?${q({ prompt: 'none' })}`);
    expect(none.headers.get('location')).toContain('error=login_required');

    const unknownRequest = await oidc('POST', '/oidc/login/password', { json: { id: 'A'.repeat(43), username: 'x', password: 'y' } });
    expect([unknownRequest.status, unknownRequest.body.error.code]).toEqual([401, 'INVALID_AUTH']);
    expect((await oidc('GET', '/oidc/login/auth-queries?id=nope')).status).toBe(401);
    const mediaType = await oidc('POST', '/oidc/login/password', { body: 'id=x', headers: { 'content-type': 'text/plain' } });
    expect([mediaType.status, mediaType.body.error.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
    const notAcceptable = await oidc('POST', '/oidc/login/password', { json: {}, headers: { accept: 'image/png' } });
    expect([notAcceptable.status, notAcceptable.body.error.code]).toEqual([406, 'NOT_ACCEPTABLE']);
    for (const body of ['{"id":', '[1,2]', '"text"', `{"id":"\\u0000"}`, '{"a":'.repeat(200)]) {
      const r = await oidc('POST', '/oidc/login/password', { body, headers: { 'content-type': 'application/json' } });
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
    }
    expect((await oidc('POST', '/oidc/login/totp', { form: 'id=%zz&code=%' })).status).toBe(401);

    const user = await h.createUser(admin);
    const a = newAuth();
    const { id } = await authorize(a);
    const login = await oidc('POST', '/oidc/login/password', { json: { id, username: user.username, password: user.password } });
    const { tail } = await codeTail(login.headers.get('location')!);
    expect((await token(tokenForm(a, tail, { clientId: 'nobody' }))).body.error).toBe('invalid_client');
    expect((await token(tokenForm(a, tail, { verifier: 'x'.repeat(43) }))).body.error).toBe('invalid_grant');
    // The code was claimed by the failed attempt: single use even then.
    expect((await token(tokenForm(a, tail))).body.error).toBe('invalid_grant');
    const b = newAuth();
    const second = await authorize(b);
    const login2 = await oidc('POST', '/oidc/login/password', { json: { id: second.id, username: user.username, password: user.password } });
    const code2 = await codeTail(login2.headers.get('location')!);
    expect((await token(tokenForm(b, code2.tail, { redirect: 'http://localhost:1/auth/callback' }))).body.error).toBe('invalid_grant');
    expect((await token('grant_type=password&client_id=openziti')).body.error).toBe('unsupported_grant_type');
    expect((await token('client_id=openziti')).body.error).toBe('invalid_request');
    expect((await token('grant_type=authorization_code&client_id=openziti&code=abc&code_verifier=x')).body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
    const jsonToken = await oidc('POST', '/oidc/oauth/token', { json: { grant_type: 'refresh_token' } });
    expect([jsonToken.status, jsonToken.body.error]).toEqual([400, 'invalid_request']);
    expect((await token(refreshForm('a.b.c'))).body.error).toBe('invalid_grant');
  });
});
