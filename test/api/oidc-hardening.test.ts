import { BASE, type EdgeApi, auth, uniqueName } from '../support/clients.js';
import { authPolicyBody, createUser, nowSeconds, signJwt, startJwksServer, totpCodes } from '../support/clients-identity.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectError, expectSuccess } from '../support/envelope.js';
import type { HttpResponse } from '../support/http.js';
import { C_SDK, bearerApi, claimsOf, locationPath, pkce, refreshAsCSdk } from '../support/oidc.js';

/**
 * The OIDC provider as RFC 6749, RFC 7009 and RFC 9700 ask (OIDC.md): a code goes only to whoever
 * logged in, refresh tokens are single use with replay detection, the code exchange names its
 * redirect URI, a credential change ends the identity's other sessions, logout revokes at
 * `/oidc/oauth/revoke`, and hostile text never breaks a header or a login page.
 */

// The ext-jwt signer's JWKS server listens on loopback, which the controller reaches only with the setting on.
const ctl = useController({ outboundAllowPrivate: true });
failOnConformanceProblems();

let mgmt: EdgeApi;
beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
});

type Headers = Record<string, string>;
const get = (path: string, headers: Headers = {}) => ctl().http.request({ method: 'GET', path, headers, validate: false });
const send = (method: string, path: string, json: unknown, headers: Headers = {}) =>
  ctl().http.request({ method, path, raw: JSON.stringify(json), headers: { 'content-type': 'application/json', ...headers }, validate: false });
const postForm = (path: string, form: string, headers: Headers = {}) =>
  ctl().http.request({ method: 'POST', path, raw: form, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, validate: false });

/** `GET /oidc/authorize` as the C SDK's client would (its redirect URI); the PKCE pair and the auth request id. */
async function startAuth(redirectUri: string = C_SDK.redirectUri) {
  const p = pkce();
  const q = new URLSearchParams({
    client_id: C_SDK.clientId, scope: C_SDK.scope, response_type: 'code', redirect_uri: redirectUri,
    code_challenge: p.challenge, code_challenge_method: 'S256', state: p.state,
  });
  const res = await get(`/oidc/authorize?${q}`);
  expect(res.status).toBe(302);
  const id = new URL(String(res.headers.location), 'https://x').searchParams.get('authRequestID')!;
  return { ...p, id, redirectUri };
}

/** The code in the `Location` of a callback answer, if any. */
const codeOf = (res: HttpResponse) => new URL(String(res.headers.location ?? 'https://x/'), 'https://x').searchParams.get('code');

/** The cookies a response sets, as a `Cookie` header value. */
const cookiesOf = (res: HttpResponse) => ((res.headers['set-cookie'] ?? []) as string[]).map((c) => c.split(';')[0]).join('; ');

/** The code exchange of `a` with `code` (the redirect URI of the request unless `redirect` says otherwise; null: none). */
function exchange(a: { verifier: string; redirectUri: string }, code: string, redirect: string | null = a.redirectUri) {
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: a.verifier, client_id: C_SDK.clientId });
  if (redirect !== null) form.set('redirect_uri', redirect);
  return postForm('/oidc/oauth/token', form.toString());
}

/** A password login to the end: the tokens. */
async function oidcLogin(user: { username: string; password: string }) {
  const a = await startAuth();
  const login = await send('POST', `/oidc/login/username?authRequestID=${a.id}`, { username: user.username, password: user.password });
  expect(login.status).toBe(302);
  const callback = await get(locationPath(login));
  const code = codeOf(callback);
  expect(code).toBeTruthy();
  const t = await exchange(a, code!);
  expect(t.status).toBe(200);
  return { access: t.body.access_token as string, refresh: t.body.refresh_token as string, asid: claimsOf(t.body.access_token).z_asid as string };
}

const works = async (access: string) => expectSuccess(await bearerApi(ctl().http, access).client('GET', '/current-identity'));
const refused = async (access: string) => expectError(await bearerApi(ctl().http, access).client('GET', '/current-identity'), 401, 'UNAUTHORIZED');
const refreshRefused = async (refresh: string) => expect((await refreshAsCSdk(ctl().http, refresh)).body).toMatchObject({ error: 'invalid_grant' });

describe('login fixation: the code goes only to whoever logged in', () => {
  it('the one who started an auth request gets no code when someone else logs in to it', async () => {
    const victim = await createUser(mgmt);
    const attacker = await startAuth();
    // The victim is lured to the login page of the attacker's auth request and logs in.
    const login = await send('POST', `/oidc/login/username?authRequestID=${attacker.id}`, { username: victim.username, password: victim.password });
    expect(login.status).toBe(302);
    // The attacker polls the callback with the request id it knows: no code, by any spelling.
    for (const path of [`/oidc/authorize/callback?id=${attacker.id}`, `/oidc/authorize/callback?authRequestID=${attacker.id}`, `/oidc/authorize/callback?id=${attacker.id}&ticket=${'A'.repeat(43)}`]) {
      const polled = await get(path);
      expect(polled.status).toBeLessThan(500);
      expect(codeOf(polled)).toBeNull();
    }
    // The victim's own redirect carries the code (once).
    const callback = await get(locationPath(login));
    expect(callback.status).toBe(302);
    const code = codeOf(callback)!;
    expect(code).toBeTruthy();
    expect(codeOf(await get(locationPath(login)))).toBeNull();
    // (It reaches the victim's redirect URI, where the request's verifier redeems it.)
    expect((await exchange(attacker, code)).status).toBe(200);
  });

  it('TOTP enrollment in the middle of a login is only for the one who logged in', async () => {
    const policy = expectCreated(await mgmt.call('POST', '/auth-policies', authPolicyBody(uniqueName('ap-totp'), { secondary: { requireTotp: true } })), 'auth-policies');
    const victim = await createUser(mgmt, { authPolicyId: policy });
    const attacker = await startAuth();
    const login = await send('POST', `/oidc/login/username?authRequestID=${attacker.id}`, { username: victim.username, password: victim.password });
    expect(login.status).toBe(200);
    expect(login.body.authQueries[0]).toMatchObject({ typeId: 'TOTP', isTotpEnrolled: false });
    // Knowing the request id is not enough to enroll an authenticator of one's own for the victim.
    expectError(await send('POST', '/oidc/login/totp/enroll', { id: attacker.id }), 401, 'INVALID_AUTH');
    expectError(await send('POST', '/oidc/login/totp/enroll/verify', { id: attacker.id, code: '123456' }), 401, 'INVALID_AUTH');
    expectError(await send('DELETE', '/oidc/login/totp/enroll', { id: attacker.id, code: '123456' }), 401, 'INVALID_AUTH');
    // The browser that logged in carries its binding (a cookie) and enrolls.
    const cookie = cookiesOf(login);
    expect(cookie).toMatch(/^ziti-oidc-login-/);
    const started = await send('POST', '/oidc/login/totp/enroll', { id: attacker.id }, { cookie });
    expect(started.status).toBe(201);
    const codes = totpCodes(new URL(started.body.provisioningUrl).searchParams.get('secret')!);
    const verified = await send('POST', '/oidc/login/totp/enroll/verify', { id: attacker.id, code: codes() }, { cookie });
    expect(verified.status).toBe(302);
    expect(codeOf(await get(`/oidc/authorize/callback?id=${attacker.id}`))).toBeNull();
    expect(codeOf(await get(locationPath(verified)))).toBeTruthy();
  });
});

describe('refresh token rotation (RFC 9700 §4.14.2)', () => {
  it('exactly one of several parallel refreshes of one refresh token succeeds', async () => {
    const user = await createUser(mgmt);
    const { refresh } = await oidcLogin(user);
    const answers = await Promise.all(Array.from({ length: 6 }, () => refreshAsCSdk(ctl().http, refresh)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 200)) expect([a.status, a.body?.error]).toEqual([400, 'invalid_grant']);
  });

  it('a rotated-away refresh token presented again ends its whole family', async () => {
    const user = await createUser(mgmt);
    const first = await oidcLogin(user);
    const second = await refreshAsCSdk(ctl().http, first.refresh);
    expect(second.status).toBe(200);
    const third = await refreshAsCSdk(ctl().http, second.body.refresh_token);
    expect(third.status).toBe(200);
    await works(third.body.access_token);
    // The stolen first token comes back: refused, and every token of that login with it.
    await refreshRefused(first.refresh);
    await refused(third.body.access_token);
    await refused(first.access);
    await refreshRefused(third.body.refresh_token);
    const listed = await mgmt.call('GET', `/api-sessions?filter=${encodeURIComponent(`id = "${first.asid}"`)}`);
    expectSuccess(listed);
    expect(listed.body.data).toEqual([]);
    // Another login of the same identity is not of that family.
    await works((await oidcLogin(user)).access);
  });

  it('a rotated-away refresh token brought to the token exchange ends its family too', async () => {
    const user = await createUser(mgmt);
    const first = await oidcLogin(user);
    const next = await refreshAsCSdk(ctl().http, first.refresh);
    expect(next.status).toBe(200);
    const form = new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', client_id: 'openziti', subject_token: first.refresh,
      subject_token_type: 'urn:ietf:params:oauth:token-type:refresh_token',
    });
    expect((await postForm('/oidc/oauth/token', form.toString())).body).toMatchObject({ error: 'invalid_grant' });
    await refused(next.body.access_token);
  });
});

describe('the code exchange names the redirect URI of its request (RFC 6749 §4.1.3)', () => {
  it('without redirect_uri, or with another one, the code is refused with invalid_grant', async () => {
    const user = await createUser(mgmt);
    for (const redirect of [null, 'http://localhost:20315/auth/callback', `${C_SDK.redirectUri}/`]) {
      const a = await startAuth();
      const login = await send('POST', `/oidc/login/username?authRequestID=${a.id}`, { username: user.username, password: user.password });
      const code = codeOf(await get(locationPath(login)))!;
      const t = await exchange(a, code, redirect);
      expect([t.status, t.body]).toEqual([400, { error: 'invalid_grant', error_description: expect.any(String) }]);
      expect(t.headers['cache-control']).toBe('no-store');
    }
  });
});

describe('a password change or reset ends the identity\'s other sessions', () => {
  /** A legacy client session of the user. */
  async function legacy(user: { username: string; password: string }): Promise<EdgeApi> {
    const { res, session } = await auth.login(ctl().http, user.username, user.password, 'client');
    expectSuccess(res);
    return session;
  }
  const updbOf = async (identityId: string) => {
    const list = await mgmt.call('GET', `/identities/${identityId}/authenticators`);
    expectSuccess(list);
    return list.body.data.find((x: { method: string }) => x.method === 'updb').id as string;
  };

  it('self-service with a legacy session: that session stays, the others and every OIDC token end', async () => {
    const user = await createUser(mgmt);
    const mine = await legacy(user);
    const other = await legacy(user);
    const oidc = await oidcLogin(user);
    const id = await updbOf(user.id);
    const newPassword = `${user.password}-new`;
    expectSuccess(await mine.call('PUT', `/current-identity/authenticators/${id}`, { username: user.username, password: newPassword, currentPassword: user.password, tags: {} }));
    expectSuccess(await mine.call('GET', '/current-identity'));
    expectError(await other.call('GET', '/current-identity'), 401, 'UNAUTHORIZED');
    await refused(oidc.access);
    await refreshRefused(oidc.refresh);
    expectError((await auth.login(ctl().http, user.username, user.password, 'client')).res, 401, 'INVALID_AUTH');
    await legacy({ username: user.username, password: newPassword });
  });

  it('self-service with an OIDC session: that session\'s tokens stay, the others end', async () => {
    const user = await createUser(mgmt);
    const mine = await oidcLogin(user);
    const other = await oidcLogin(user);
    const old = await legacy(user);
    const id = await updbOf(user.id);
    expectSuccess(await bearerApi(ctl().http, mine.access).client('PATCH', `/current-identity/authenticators/${id}`, { password: `${user.password}-new`, currentPassword: user.password }));
    await works(mine.access);
    expect((await refreshAsCSdk(ctl().http, mine.refresh)).status).toBe(200);
    await refused(other.access);
    await refreshRefused(other.refresh);
    expectError(await old.call('GET', '/current-identity'), 401, 'UNAUTHORIZED');
  });

  it('an admin\'s password reset (PATCH or PUT) ends every session of the identity', async () => {
    for (const method of ['PATCH', 'PUT']) {
      const user = await createUser(mgmt);
      const session = await legacy(user);
      const oidc = await oidcLogin(user);
      const id = await updbOf(user.id);
      const body = method === 'PUT' ? { username: user.username, password: `${user.password}-reset`, tags: {} } : { password: `${user.password}-reset` };
      expectSuccess(await mgmt.call(method, `/authenticators/${id}`, body));
      expectError(await session.call('GET', '/current-identity'), 401, 'UNAUTHORIZED');
      await refused(oidc.access);
      await refreshRefused(oidc.refresh);
    }
  });

  it('tags alone end nothing', async () => {
    const user = await createUser(mgmt);
    const session = await legacy(user);
    const oidc = await oidcLogin(user);
    expectSuccess(await mgmt.call('PATCH', `/authenticators/${await updbOf(user.id)}`, { tags: { team: 'a' } }));
    expectSuccess(await session.call('GET', '/current-identity'));
    await works(oidc.access);
  });

  it('re-enrolling the authenticator ends every session of the identity', async () => {
    const user = await createUser(mgmt);
    const session = await legacy(user);
    const oidc = await oidcLogin(user);
    const res = await mgmt.call('POST', `/authenticators/${await updbOf(user.id)}/re-enroll`, { expiresAt: new Date(Date.now() + 3600_000).toISOString() });
    expect(res.status).toBe(201);
    expectError(await session.call('GET', '/current-identity'), 401, 'UNAUTHORIZED');
    await refused(oidc.access);
  });
});

describe('RFC 7009 revocation at /oidc/oauth/revoke (ZAC\'s logout)', () => {
  it('revokes the refresh token as /oidc/revoke does; discovery keeps advertising /oidc/revoke', async () => {
    const user = await createUser(mgmt);
    const { refresh } = await oidcLogin(user);
    const res = await postForm('/oidc/oauth/revoke', new URLSearchParams({ token: refresh, token_type_hint: 'refresh_token', client_id: 'openziti' }).toString());
    expect(res.status).toBe(200);
    await refreshRefused(refresh);
    const unknownClient = await postForm('/oidc/oauth/revoke', 'token=x&client_id=nobody');
    expect([unknownClient.status, unknownClient.body?.error]).toEqual([400, 'invalid_client']);
    const discovery = await get('/oidc/.well-known/openid-configuration');
    expect(discovery.body.revocation_endpoint).toBe(`${ctl().url}/oidc/revoke`);
  });
});

describe('hostile input at the provider', () => {
  const HOSTILE = ['%E2%82%AC', '%0D%0Aset-cookie:%20x=y', '%00', '%ED%A0%80', '%FF%FE', 'a%', '%%', 'x'.repeat(8000), '%22%3E%3Cscript%3E'];

  it('login pages answer a hostile authRequestID with a 4xx, never a 500 or a broken header', async () => {
    for (const step of ['username', 'password', 'cert', 'ext-jwt']) {
      for (const v of HOSTILE) {
        const page = await get(`/oidc/login/${step}?authRequestID=${v}`);
        expect([step, v.slice(0, 20), page.status >= 400 && page.status < 500]).toEqual([step, v.slice(0, 20), true]);
        expect(page.headers['set-cookie']).toBeUndefined();
        const html = await send('POST', `/oidc/login/${step}?authRequestID=${v}`, { username: 'a', password: 'b' }, { accept: 'text/html' });
        expect([step, v.slice(0, 20), html.status >= 400 && html.status < 500]).toEqual([step, v.slice(0, 20), true]);
      }
    }
  });

  it('every /oidc endpoint answers hostile parameters with a 4xx or a redirect, never a 500', async () => {
    const a = await startAuth();
    const cases: [string, string, (v: string) => string, string?][] = [
      ['GET', '/oidc/authorize', (v) => `client_id=openziti&redirect_uri=${v}&response_type=code&scope=openid&code_challenge=${a.challenge}&code_challenge_method=S256`],
      ['GET', '/oidc/authorize', (v) => `client_id=openziti&redirect_uri=${encodeURIComponent(C_SDK.redirectUri)}&response_type=code&scope=openid&code_challenge=${v}&code_challenge_method=S256&state=${v}&nonce=${v}&configTypes=${v}&configTypes=${v}&method=${v}`],
      ['GET', '/oidc/authorize/callback', (v) => `id=${v}&ticket=${v}`],
      ['GET', '/oidc/login/auth-queries', (v) => `id=${v}`],
      ['POST', '/oidc/login/totp', (v) => `id=${v}&code=${v}`, 'form'],
      ['POST', '/oidc/login/totp/enroll', (v) => `id=${v}`, 'form'],
      ['POST', '/oidc/login/totp/enroll/verify', (v) => `id=${v}&code=${v}`, 'form'],
      ['POST', '/oidc/oauth/token', (v) => `grant_type=authorization_code&client_id=openziti&code=${v}&code_verifier=${v}&redirect_uri=${v}`, 'form'],
      ['POST', '/oidc/oauth/token', (v) => `grant_type=refresh_token&client_id=openziti&refresh_token=${v}&scope=${v}`, 'form'],
      ['POST', '/oidc/oauth/token', (v) => `grant_type=${v}&client_id=${v}`, 'form'],
      ['POST', '/oidc/oauth/token', (v) => `grant_type=urn:ietf:params:oauth:grant-type:token-exchange&client_id=openziti&subject_token=${v}&subject_token_type=${v}&audience=${v}`, 'form'],
      ['POST', '/oidc/revoke', (v) => `token=${v}&client_id=openziti`, 'form'],
      ['POST', '/oidc/oauth/revoke', (v) => `token=${v}&client_id=${v}`, 'form'],
      ['GET', '/oidc/end_session', (v) => `id_token_hint=${v}&post_logout_redirect_uri=${v}&state=${v}`],
      ['POST', '/oidc/end_session', (v) => `id_token_hint=${v}&state=${v}`, 'form'],
    ];
    for (const [method, path, params, body] of cases) {
      for (const v of HOSTILE) {
        const res =
          body === 'form'
            ? await postForm(`${path}?${params(v)}`, params(v))
            : await ctl().http.request({ method, path: `${path}?${params(v)}`, validate: false });
        expect([method, path, v.slice(0, 20), res.status < 500]).toEqual([method, path, v.slice(0, 20), true]);
      }
    }
    // JSON bodies with arrays and objects where text is expected.
    for (const path of ['/oidc/login/password', '/oidc/login/totp', '/oidc/login/totp/enroll', '/oidc/login/totp/enroll/verify']) {
      for (const body of [{ id: [a.id, a.id], code: ['1'], username: ['a'], password: { x: 1 } }, { id: { a: 1 }, code: 12 }, { id: a.id, envInfo: 'x', sdkInfo: [1], configTypes: 'x' }]) {
        const res = await send('POST', path, body);
        expect([path, res.status < 500]).toEqual([path, true]);
      }
    }
    expect((await send('POST', '/oidc/authorize?client_id=openziti', { x: [1] })).status).toBeLessThan(500);
    // Hostile headers: client credentials, cookies, content negotiation.
    for (const headers of <Headers[]>[
      { authorization: 'Basic %%%' }, { authorization: `Basic ${Buffer.from('%E0%A4%A:').toString('base64')}` }, { authorization: 'Basic' },
      { cookie: `ziti-oidc-login-${a.id}` }, { cookie: `=; ;=;ziti-oidc-login-${a.id}==x;${'a'.repeat(4000)}` },
      { accept: 'text/html;q=x, */*;q=-1' }, { accept: ',,,;;;' },
    ]) {
      for (const [path, form] of [['/oidc/oauth/token', 'grant_type=refresh_token&refresh_token=x'], ['/oidc/oauth/revoke', 'token=x'], ['/oidc/login/totp/enroll', `id=${a.id}`], ['/oidc/login/password', `id=${a.id}`]]) {
        const res = await postForm(path, form, headers);
        expect([path, JSON.stringify(headers).slice(0, 40), res.status < 500]).toEqual([path, JSON.stringify(headers).slice(0, 40), true]);
      }
    }
  });
});

describe('an ext-jwt signer\'s issuer in WWW-Authenticate', () => {
  it('quoted and escaped: every failed ext-jwt login still answers 401 with one well-formed challenge', async () => {
    const jwks = await startJwksServer();
    try {
      const created: string[] = [];
      for (const issuer of [`${uniqueName('iss')} "quoted", error="forged`, `${uniqueName('iss')}-€-日本`, `${uniqueName('iss')}\r\nset-cookie: a=b`]) {
        const res = await mgmt.call('POST', '/external-jwt-signers', { name: uniqueName('hostile-signer'), enabled: true, issuer, audience: 'aud', jwksEndpoint: jwks.url, claimsProperty: 'sub' });
        if (res.status === 201) created.push(res.body.data.id);
        else expect(res.status).toBe(400);
      }
      expect(created.length).toBeGreaterThanOrEqual(2);
      const bogus = await signJwt(jwks.privateKey, { iss: 'nobody', aud: 'aud', sub: 'x', exp: nowSeconds() + 60 }, { kid: jwks.kid });
      const legacy = await ctl().http.request({ method: 'POST', path: `${BASE.client}/authenticate?method=ext-jwt`, headers: { authorization: `Bearer ${bogus}` }, json: {} });
      const a = await startAuth();
      const oidcLogin = await ctl().http.request({
        method: 'POST', path: `/oidc/login/ext-jwt?authRequestID=${a.id}`, headers: { authorization: `Bearer ${bogus}`, 'content-type': 'application/json' }, raw: '{}', validate: false,
      });
      for (const res of [legacy, oidcLogin]) {
        expect(res.status).toBe(401);
        expect(res.body.error).toMatchObject({ code: expect.any(String), requestId: expect.any(String) });
        expect(res.headers['set-cookie']).toBeUndefined();
        const challenge = String(res.headers['www-authenticate']);
        expect(challenge).toMatch(/^[\x20-\x7e]+$/);
        // Exactly the five parameters, each a well-formed quoted string.
        const params = [...challenge.matchAll(/\s([a-z_]+)="((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]);
        expect(params).toEqual(['realm', 'error', 'error_description', 'id', 'issuer']);
        expect(challenge).toMatch(/^Bearer realm="[^"]*" error="[^"]*" error_description="[^"]*" id="(?:[^"\\]|\\.)*" issuer="(?:[^"\\]|\\.)*"$/);
        expect(challenge).toContain('\\"quoted\\"');
      }
      for (const id of created) expectSuccess(await mgmt.call('DELETE', `/external-jwt-signers/${id}`));
    } finally {
      await jwks.close();
    }
  });
});
