import { BASE, type EdgeApi, auth, uniqueName } from '../support/clients.js';
import { enrollOtt } from '../support/clients-cert.js';
import { authPolicyBody, createUser, signJwt, nowSeconds, startJwksServer, totpCodes } from '../support/clients-identity.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectError, expectSuccess } from '../support/envelope.js';
import type { HttpResponse } from '../support/http.js';
import { C_SDK, bearerApi, cSdkLogin, claimsOf, headerOf, locationPath, locationQuery, refreshAsCSdk, relyingParty, rpRequest } from '../support/oidc.js';
import { fingerprintOf } from '../support/x509.js';

/**
 * OIDC authentication (OIDC.md): the provider at `/oidc` driven by a standard relying party
 * (openid-client) and by the exact request sequence of OpenZiti's C SDK, then both Edge APIs with
 * `Authorization: Bearer`. The legacy flow beside it is unchanged.
 */

// The ext-jwt signer's JWKS server listens on loopback, which the controller reaches only with the setting on.
const ctl = useController({ outboundAllowPrivate: true });
failOnConformanceProblems();

let mgmt: EdgeApi;
let jwks: Awaited<ReturnType<typeof startJwksServer>>;
beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
  jwks = await startJwksServer();
});
afterAll(async () => {
  await jwks?.close();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** GET of a path relative to the provider, no redirect following, no swagger check. */
const get = (path: string, headers: Record<string, string> = {}) => ctl().http.request({ method: 'GET', path, headers, validate: false });
const postForm = (path: string, form: string, headers: Record<string, string> = {}) =>
  ctl().http.request({ method: 'POST', path, raw: form, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, validate: false });
const postJson = (path: string, json: unknown, headers: Record<string, string> = {}) =>
  ctl().http.request({ method: 'POST', path, raw: JSON.stringify(json), headers: { 'content-type': 'application/json', ...headers }, validate: false });

/**
 * A password login through openid-client: its authorization URL, the login page's POST, the
 * callback, and `client.callback` (which checks the id token's signature against the JWKS, its
 * issuer, audience, nonce and expiry). `bearer`: tokens sent with the login (secondary ext-jwt);
 * `totp`: the code when TOTP is asked for.
 */
async function rpPasswordLogin(user: { username: string; password: string }, o: { clientId?: 'openziti' | 'native'; totp?: () => string; bearer?: string } = {}) {
  const { client, redirectUri } = await relyingParty(ctl().url, ctl().running.caCertPem, o.clientId);
  const r = rpRequest();
  const url = new URL(client.authorizationUrl({ scope: 'openid offline_access', code_challenge: r.challenge, code_challenge_method: 'S256', state: r.state, nonce: r.nonce, method: 'password' }));
  const authorize = await get(url.pathname + url.search);
  expect(authorize.status).toBe(302);
  const loginPath = locationPath(authorize);
  expect(loginPath).toMatch(/^\/oidc\/login\/username\?authRequestID=[A-Za-z0-9_-]+$/);
  const login = await postJson(loginPath, { username: user.username, password: user.password }, o.bearer ? { authorization: `Bearer ${o.bearer}` } : {});
  let done: HttpResponse = login;
  if (login.status === 200 && o.totp) {
    expect(login.headers['totp-required']).toBe('true');
    done = await postJson('/oidc/login/totp', { id: locationQuery(authorize).get('authRequestID'), code: o.totp() });
  }
  expect(done.status).toBe(302);
  const callback = await get(locationPath(done));
  expect(callback.status).toBe(302);
  expect(String(callback.headers.location).startsWith(`${redirectUri}?`)).toBe(true);
  const tokens = await client.callback(redirectUri, client.callbackParams(String(callback.headers.location)), { code_verifier: r.verifier, state: r.state, nonce: r.nonce });
  return { client, tokens, access: tokens.access_token!, refresh: tokens.refresh_token! };
}

describe('advertising and discovery', () => {
  it('/version lists OIDC_AUTH, OIDC_AUTH_WITH_CSR and the edge-oidc API', async () => {
    const v = await ctl().http.get(`${BASE.client}/version`);
    expectSuccess(v);
    expect(v.body.data.capabilities).toEqual(expect.arrayContaining(['OIDC_AUTH', 'OIDC_AUTH_WITH_CSR']));
    expect(v.body.data.apiVersions['edge-oidc']).toEqual({ v1: { path: '/oidc', apiBaseUrls: [expect.stringMatching(/^https:\/\/.+\/oidc$/)] } });
  });

  it('openid-client discovers the provider: issuer, endpoints, PKCE S256, the JWKS; the root well-known path stays 404', async () => {
    const { issuer } = await relyingParty(ctl().url, ctl().running.caCertPem);
    const base = `${ctl().url}/oidc`;
    expect(issuer.metadata).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}/authorize`,
      token_endpoint: `${base}/oauth/token`,
      jwks_uri: `${base}/keys`,
      revocation_endpoint: `${base}/revoke`,
      end_session_endpoint: `${base}/end_session`,
      code_challenge_methods_supported: ['S256'],
    });
    expect(issuer.metadata.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:token-exchange']));
    expect((issuer.metadata as Record<string, any>).openziti_endpoints).toMatchObject({ cert: `${base}/login/cert`, ext_jwt: `${base}/login/ext-jwt`, totp: `${base}/login/totp` });
    const keys = await get('/oidc/keys');
    expect(keys.status).toBe(200);
    expect(keys.body.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: expect.any(String) });
    expect(keys.body.keys.some((k: Record<string, unknown>) => 'd' in k)).toBe(false);
    expect((await get('/.well-known/openid-configuration')).status).toBe(404);
  });
});

describe('password login with a standard relying party (openid-client)', () => {
  it('issues access, refresh and id tokens with OpenZiti claims; the id token verifies', async () => {
    const user = await createUser(mgmt);
    const { tokens, access, refresh } = await rpPasswordLogin(user);
    const idClaims = tokens.claims();
    expect(idClaims).toMatchObject({ sub: user.id, aud: ['openziti'], z_asid: expect.stringMatching(UUID), name: user.name });
    const a = claimsOf(access);
    expect(headerOf(access)).toMatchObject({ alg: 'ES256', typ: 'JWT', kid: expect.any(String) });
    expect(a).toMatchObject({ iss: `${ctl().url}/oidc`, sub: user.id, aud: ['openziti'], z_t: 'a', z_asid: idClaims.z_asid, amr: ['password'], jti: expect.stringMatching(UUID) });
    expect(a.z_ia).toBeUndefined(); // omitted when false, as OpenZiti's `omitempty`
    expect(a.exp - a.iat).toBe(30 * 60);
    const r = claimsOf(refresh);
    expect(r).toMatchObject({ z_t: 'r', z_asid: a.z_asid, sub: user.id });
    expect(r.exp - r.iat).toBe(24 * 3600);
    expect(r.jti).not.toBe(a.jti);
    // The access token verifies against the published key set, as a router would check it.
    const jwk = (await get('/oidc/keys')).body.keys.find((k: { kid: string }) => k.kid === headerOf(access).kid);
    const jose = await import('jose');
    await expect(jose.jwtVerify(access, await jose.importJWK(jwk, 'ES256'), { issuer: `${ctl().url}/oidc`, audience: 'openziti' })).resolves.toBeTruthy();
  });

  it('sdk-golang\'s `native` client and its callback work too', async () => {
    const user = await createUser(mgmt);
    const { access } = await rpPasswordLogin(user, { clientId: 'native' });
    expect(claimsOf(access)).toMatchObject({ aud: ['native'], sub: user.id });
  });

  it('a wrong password is 401 INVALID_AUTH in the envelope, and the auth request stays usable', async () => {
    const user = await createUser(mgmt);
    const { client } = await relyingParty(ctl().url, ctl().running.caCertPem);
    const r = rpRequest();
    const url = new URL(client.authorizationUrl({ scope: 'openid', code_challenge: r.challenge, code_challenge_method: 'S256', state: r.state }));
    const authorize = await get(url.pathname + url.search);
    const loginPath = locationPath(authorize);
    expectError(await postJson(loginPath, { username: user.username, password: 'wrong-password' }), 401, 'INVALID_AUTH');
    expect((await postJson(loginPath, { username: user.username, password: user.password })).status).toBe(302);
  });
});

describe('bearer tokens on both Edge APIs', () => {
  it('an admin\'s access token reads the management API, lists its own API session, and the client API', async () => {
    const { access } = await rpPasswordLogin(ctl().admin);
    const asid = claimsOf(access).z_asid;
    const api = bearerApi(ctl().http, access);
    const me = await api.client('GET', '/current-identity');
    expectSuccess(me);
    expect(me.body.data.isDefaultAdmin).toBe(true);
    expect(me.headers['expiration-seconds']).toBeUndefined();
    expectSuccess(await api.management('GET', '/identities?limit=1'));
    const current = await api.client('GET', '/current-api-session');
    expectSuccess(current);
    expect(current.body.data.id).toBe(asid);
    const listed = await mgmt.call('GET', `/api-sessions?filter=${encodeURIComponent(`id = "${asid}"`)}`);
    expectSuccess(listed);
    expect(listed.body.data).toEqual([expect.objectContaining({ id: asid })]);
    expectSuccess(await api.client('GET', '/services'));
    expectSuccess(await api.client('GET', '/current-identity/edge-routers'));
  });

  it('a non-admin\'s token has the non-admin\'s permissions', async () => {
    const user = await createUser(mgmt);
    const api = bearerApi(ctl().http, (await rpPasswordLogin(user)).access);
    expectSuccess(await api.client('GET', '/current-identity'));
    expectError(await api.management('GET', '/identities'), 401, 'UNAUTHORIZED');
  });

  it('refresh (openid-client) issues new tokens; both access tokens work; the old refresh token, replayed, ends the family', async () => {
    const user = await createUser(mgmt);
    const { client, access, refresh } = await rpPasswordLogin(user);
    const next = await client.refresh(refresh);
    expect(next.access_token).toBeTruthy();
    expect(claimsOf(next.access_token!)).toMatchObject({ z_asid: claimsOf(access).z_asid, sub: user.id, amr: ['password'] });
    expectSuccess(await bearerApi(ctl().http, next.access_token!).client('GET', '/current-identity'));
    expectSuccess(await bearerApi(ctl().http, access).client('GET', '/current-identity'));
    const again = await refreshAsCSdk(ctl().http, refresh);
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ error: 'invalid_grant' });
    // RFC 9700 §4.14.2: a rotated-away refresh token that comes back revokes every token of its login.
    expect((await refreshAsCSdk(ctl().http, next.refresh_token!)).body).toMatchObject({ error: 'invalid_grant' });
    expectError(await bearerApi(ctl().http, next.access_token!).client('GET', '/current-identity'), 401, 'UNAUTHORIZED');
  });

  it('logout (DELETE /current-api-session) ends the session: its tokens and refresh are refused', async () => {
    const user = await createUser(mgmt);
    const { access, refresh } = await rpPasswordLogin(user);
    const api = bearerApi(ctl().http, access);
    expectSuccess(await api.client('GET', '/current-identity'));
    expectSuccess(await api.client('DELETE', '/current-api-session'));
    const after = await api.client('GET', '/current-identity');
    expectError(after, 401, 'UNAUTHORIZED');
    expect(String(after.headers['www-authenticate'])).toContain('Bearer realm="openziti-oidc"');
    expect((await refreshAsCSdk(ctl().http, refresh)).body).toMatchObject({ error: 'invalid_grant' });
  });

  it('forged, tampered and foreign tokens are 401 with the Bearer challenge', async () => {
    const user = await createUser(mgmt);
    const { access } = await rpPasswordLogin(user);
    const [h, , s] = access.split('.');
    const escalated = `${h}.${Buffer.from(JSON.stringify({ ...claimsOf(access), z_ia: true, sub: 'admin' })).toString('base64url')}.${s}`;
    const foreign = await signJwt(jwks.privateKey, { ...claimsOf(access) }, { kid: headerOf(access).kid });
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${access.split('.')[1]}.`;
    for (const token of [escalated, foreign, none, 'garbage', `${access}x`]) {
      const res = await bearerApi(ctl().http, token).client('GET', '/current-identity');
      expectError(res, 401, 'UNAUTHORIZED');
      expect(String(res.headers['www-authenticate'])).toContain('Bearer realm="openziti-oidc"');
    }
  });

  it('a refresh token is not an access token', async () => {
    const user = await createUser(mgmt);
    const { refresh } = await rpPasswordLogin(user);
    expectError(await bearerApi(ctl().http, refresh).client('GET', '/current-identity'), 401, 'UNAUTHORIZED');
  });
});

describe('the C SDK\'s request sequence (library/oidc.c)', () => {
  it('certificate login over mTLS: code, tokens bound to the certificate, bearer use, refresh with the certificate', async () => {
    const { id, cred } = await enrollOtt(ctl().http, mgmt);
    const r = await cSdkLogin(ctl().http, { clientCert: cred });
    expect(r.authorize.headers.location).toMatch(/^(https:\/\/[^/]+)?\/oidc\/login\/cert\?authRequestID=[A-Za-z0-9_-]+$/);
    expect(r.token.status).toBe(200);
    expect(r.token.body).toMatchObject({ token_type: 'Bearer', expires_in: expect.any(Number) });
    const a = claimsOf(r.accessToken);
    expect(a).toMatchObject({ sub: id, amr: ['cert'], z_cfs: [fingerprintOf(cred.leaf)], z_acf: fingerprintOf(cred.leaf), z_sdk: expect.objectContaining({ type: 'ziti-sdk-c' }) });
    const me = await bearerApi(ctl().http, r.accessToken).client('GET', '/current-identity');
    expectSuccess(me);
    expect(me.body.data).toMatchObject({ id, sdkInfo: expect.objectContaining({ type: 'ziti-sdk-c' }) });
    const refreshed = await refreshAsCSdk(ctl().http, r.refreshToken, cred);
    expect(refreshed.status).toBe(200);
    // Proof of possession: the certificate-bound refresh token needs the certificate.
    expect((await refreshAsCSdk(ctl().http, refreshed.body.refresh_token)).body).toMatchObject({ error: 'invalid_grant' });
  });

  it('external JWT login: the token in Authorization: Bearer names the identity', async () => {
    const signer = expectCreated(
      await mgmt.call('POST', '/external-jwt-signers', { name: uniqueName('signer'), enabled: true, issuer: uniqueName('iss'), audience: 'aud', jwksEndpoint: `${jwks.url}`, claimsProperty: 'sub' }),
      'external-jwt-signers',
    );
    const issuer = (await mgmt.call('GET', `/external-jwt-signers/${signer}`)).body.data.issuer;
    const user = await createUser(mgmt);
    const ext = await signJwt(jwks.privateKey, { iss: issuer, aud: 'aud', sub: user.id, exp: nowSeconds() + 300 }, { kid: jwks.kid });
    const r = await cSdkLogin(ctl().http, { bearer: [ext] });
    expect(r.authorize.headers.location).toMatch(/^(https:\/\/[^/]+)?\/oidc\/login\/username\?authRequestID=[A-Za-z0-9_-]+$/);
    expect(r.token.status).toBe(200);
    expect(claimsOf(r.accessToken)).toMatchObject({ sub: user.id, amr: ['ext-jwt'] });
    expectSuccess(await bearerApi(ctl().http, r.accessToken).client('GET', '/current-identity'));
  });

  it('the code is single use and bound to the verifier and the redirect URI', async () => {
    const { cred } = await enrollOtt(ctl().http, mgmt);
    const r = await cSdkLogin(ctl().http, { clientCert: cred });
    const code = /code=([^&]+)/.exec(String(r.callback.headers.location))![1]!;
    const replay = await postForm('/oidc/oauth/token', `code=${code}&grant_type=authorization_code&code_verifier=x&client_id=openziti&redirect_uri=${C_SDK.redirectUri}`);
    expect(replay.status).toBe(400);
    expect(replay.body).toMatchObject({ error: 'invalid_grant' });
  });
});

describe('second factors', () => {
  it('TOTP: the login asks for it (authQueries, totp-required), a wrong code is refused, the right one completes with amr totp', async () => {
    const user = await createUser(mgmt);
    const { session } = await auth.login(ctl().http, user.username, user.password, 'client');
    expectSuccess(await session.call('POST', '/current-identity/mfa'), 201);
    const secret = new URL((await session.call('GET', '/current-identity/mfa')).body.data.provisioningUrl).searchParams.get('secret')!;
    const codes = totpCodes(secret);
    expectSuccess(await session.call('POST', '/current-identity/mfa/verify', { code: codes() }));

    const { client, redirectUri } = await relyingParty(ctl().url, ctl().running.caCertPem);
    const r = rpRequest();
    const url = new URL(client.authorizationUrl({ scope: 'openid offline_access', code_challenge: r.challenge, code_challenge_method: 'S256', state: r.state, nonce: r.nonce }));
    const authorize = await get(url.pathname + url.search);
    const id = locationQuery(authorize).get('authRequestID')!;
    const login = await postJson(locationPath(authorize), { username: user.username, password: user.password });
    expect(login.status).toBe(200);
    expect(login.headers['totp-required']).toBe('true');
    expect(login.body).toEqual({ authQueries: [expect.objectContaining({ typeId: 'TOTP', provider: 'ziti', httpMethod: 'POST', httpUrl: './oidc/login/totp', isTotpEnrolled: true })] });
    expect((await get(locationPath(authorize).replace(/^\/oidc\/login\/username\?authRequestID=/, '/oidc/login/auth-queries?id='))).body).toEqual(login.body);
    // No code yet: the callback does not issue one.
    const early = await get(`/oidc/authorize/callback?id=${id}`);
    expect(String(early.headers.location ?? '')).not.toMatch(/[?&]code=/);
    const bad = await postJson('/oidc/login/totp', { id, code: '000000' });
    expectError(bad, 400, 'INVALID TOTP CODE');
    const ok = await postForm('/oidc/login/totp', `id=${id}&code=${codes()}`);
    expect(ok.status).toBe(302);
    const callback = await get(locationPath(ok));
    const tokens = await client.callback(redirectUri, client.callbackParams(String(callback.headers.location)), { code_verifier: r.verifier, state: r.state, nonce: r.nonce });
    expect(claimsOf(tokens.access_token!).amr.sort()).toEqual(['password', 'totp']);
    const current = await bearerApi(ctl().http, tokens.access_token!).client('GET', '/current-api-session');
    expectSuccess(current);
    expect(current.body.data).toMatchObject({ isMfaRequired: true, isMfaComplete: true });
  });

  it('a secondary ext-jwt signer: the login lists the EXT-JWT query until a valid token of the signer comes along', async () => {
    const signer = expectCreated(
      await mgmt.call('POST', '/external-jwt-signers', { name: uniqueName('signer2'), enabled: true, issuer: uniqueName('iss2'), audience: 'aud2', jwksEndpoint: `${jwks.url}`, claimsProperty: 'sub' }),
      'external-jwt-signers',
    );
    const issuer = (await mgmt.call('GET', `/external-jwt-signers/${signer}`)).body.data.issuer;
    const policy = expectCreated(await mgmt.call('POST', '/auth-policies', authPolicyBody(uniqueName('ap-2nd'), { secondary: { requireExtJwtSigner: signer } })), 'auth-policies');
    const user = await createUser(mgmt, { authPolicyId: policy });
    const { client } = await relyingParty(ctl().url, ctl().running.caCertPem);
    const r = rpRequest();
    const url = new URL(client.authorizationUrl({ scope: 'openid', code_challenge: r.challenge, code_challenge_method: 'S256', state: r.state }));
    const loginPath = locationPath(await get(url.pathname + url.search));
    const first = await postJson(loginPath, { username: user.username, password: user.password });
    expect(first.status).toBe(200);
    expect(first.body.authQueries).toEqual([expect.objectContaining({ typeId: 'EXT-JWT', provider: 'url', id: signer })]);
    const ext = await signJwt(jwks.privateKey, { iss: issuer, aud: 'aud2', sub: user.id, exp: nowSeconds() + 300 }, { kid: jwks.kid });
    const second = await postJson(loginPath, { username: user.username, password: user.password }, { authorization: `Bearer ${ext}` });
    expect(second.status).toBe(302);
  });
});

describe('the legacy flow beside it', () => {
  it('zt-session logins and requests are unchanged; an access token is not a zt-session', async () => {
    const user = await createUser(mgmt);
    const { res, token, session } = await auth.login(ctl().http, user.username, user.password, 'client');
    expectSuccess(res);
    expect(token).toMatch(UUID);
    expectSuccess(await session.call('GET', '/current-identity'));
    const { access } = await rpPasswordLogin(user);
    expectError(await ctl().http.get(`${BASE.client}/current-identity`, access), 401, 'UNAUTHORIZED');
    // With a zt-session, a bearer token is a secondary factor, not a session of its own.
    const both = await ctl().http.request({ method: 'GET', path: `${BASE.client}/current-identity`, token, headers: { authorization: `Bearer ${access}` } });
    expectSuccess(both);
    expect(both.headers['expiration-seconds']).toBeDefined();
    expectError(await ctl().http.request({ method: 'POST', path: `${BASE.client}/current-api-session/totp-token`, token, json: { code: '123456' } }), 400, 'INVALID_BACKING_TOKEN_TYPE');
  });
});

describe('hostile input at the provider', () => {
  it('token endpoint errors are OAuth errors, never 500', async () => {
    const cases: [string, string][] = [
      ['grant_type=authorization_code&code=x&client_id=nobody&code_verifier=x', 'invalid_client'],
      ['grant_type=refresh_token&refresh_token=garbage&client_id=openziti', 'invalid_grant'],
      ['client_id=openziti', 'invalid_request'],
      ['grant_type=password&client_id=openziti&username=a&password=b', 'unsupported_grant_type'],
      [`grant_type=authorization_code&code=unknown&client_id=openziti&code_verifier=x&redirect_uri=${C_SDK.redirectUri}`, 'invalid_grant'],
    ];
    for (const [form, error] of cases) {
      const res = await postForm('/oidc/oauth/token', form);
      expect([res.status, res.body?.error]).toEqual([400, error]);
    }
    for (const raw of ['{"grant_type":"refresh_token"}', '%%%', 'grant_type=refresh_token&refresh_token=\u0000']) {
      const res = await ctl().http.request({ method: 'POST', path: '/oidc/oauth/token', raw, headers: { 'content-type': raw.startsWith('{') ? 'application/json' : 'application/x-www-form-urlencoded' }, validate: false });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    }
  });

  it('authorize refuses unknown clients and unlisted redirect URIs without redirecting', async () => {
    const p = new URLSearchParams({ client_id: 'openziti', response_type: 'code', scope: 'openid', redirect_uri: 'https://evil.example/cb', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' });
    const evil = await get(`/oidc/authorize?${p}`);
    expect(evil.status).toBe(400);
    expect(evil.headers.location).toBeUndefined();
    p.set('redirect_uri', C_SDK.redirectUri);
    p.set('client_id', 'nobody');
    const unknown = await get(`/oidc/authorize?${p}`);
    expect(unknown.status).toBe(400);
    expect(unknown.headers.location).toBeUndefined();
  });

  it('login endpoints: unknown auth request 401, malformed bodies 4xx, unsupported media type 415', async () => {
    expectError(await postJson('/oidc/login/password?authRequestID=nope', { username: 'a', password: 'b' }), 401, 'INVALID_AUTH');
    const broken = await ctl().http.request({ method: 'POST', path: '/oidc/login/password?authRequestID=nope', raw: '{"username":', headers: { 'content-type': 'application/json' }, validate: false });
    expect(broken.status).toBeGreaterThanOrEqual(400);
    expect(broken.status).toBeLessThan(500);
    const xml = await ctl().http.request({ method: 'POST', path: '/oidc/login/password?authRequestID=nope', raw: '<a/>', headers: { 'content-type': 'application/xml' }, validate: false });
    expect(xml.status).toBe(415);
  });
});
