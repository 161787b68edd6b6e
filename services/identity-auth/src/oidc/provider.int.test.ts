import { X509Certificate } from 'node:crypto';
import { CLIENT_CERT_HEADER, signClientCertChain } from '@ziti/http-kit';
import { selfSignedCert } from '../testing/certs.js';
import { SECRET } from '../testing/harness.js';
import { decodeJwt } from './jwt.js';
import type { RequestPrincipal } from '@ziti/http-kit';
import type { FakePki } from '../testing/fake-pki.js';
import { C, type Harness, M } from '../testing/harness.js';
import { EXCHANGE, HOST, ISSUER, oidcTestbed } from '../testing/oidc-testbed.js';

/** identity-auth's `/oidc` provider, driven as the gateway passes an SDK's requests through: discovery, logins and refresh. */
describe('OIDC provider: discovery, logins and refresh', () => {
  const t = oidcTestbed();
  const { oidc, certHeader, newAuth, authorize, codeTail, tokenForm, token, claims, refreshForm, basic, certIdentity } = t;
  let h: Harness;
  let pki: FakePki;
  let admin: RequestPrincipal;
  beforeAll(() => {
    ({ h, pki, admin } = t);
  });

  it('serves discovery and the JWKS under the issuer of the public host; a malformed host is 400', async () => {
    const d = await oidc('GET', '/oidc/.well-known/openid-configuration');
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({
      issuer: ISSUER,
      authorization_endpoint: `${ISSUER}/authorize`,
      token_endpoint: `${ISSUER}/oauth/token`,
      userinfo_endpoint: `${ISSUER}/userinfo`,
      jwks_uri: `${ISSUER}/keys`,
      revocation_endpoint: `${ISSUER}/revoke`,
      end_session_endpoint: `${ISSUER}/end_session`,
      scopes_supported: ['openid', 'offline_access'],
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token', EXCHANGE],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['ES256'],
      token_endpoint_auth_methods_supported: ['none'],
      code_challenge_methods_supported: ['S256'],
      request_parameter_supported: false,
      ui_locales_supported: ['en'],
      openziti_endpoints: {
        password: `${ISSUER}/login/password`, cert: `${ISSUER}/login/cert`, ext_jwt: `${ISSUER}/login/ext-jwt`, totp: `${ISSUER}/login/totp`,
        totp_enroll: `${ISSUER}/login/totp/enroll`, totp_enroll_verify: `${ISSUER}/login/totp/enroll/verify`, auth_queries: `${ISSUER}/login/auth-queries`,
      },
    });
    const other = await oidc('GET', '/oidc/.well-known/openid-configuration', { headers: { 'x-forwarded-host': '10.0.0.7:443' } });
    expect(other.body.issuer).toBe('https://10.0.0.7:443/oidc');
    const bad = await oidc('GET', '/oidc/.well-known/openid-configuration', { headers: { 'x-forwarded-host': 'evil.com/path?x' } });
    expect(bad.status).toBe(400);
    const keys = await oidc('GET', '/oidc/keys');
    expect(keys.status).toBe(200);
    expect(keys.body).toEqual({ keys: expect.any(Array) });
    expect((await oidc('GET', '/oidc/nothing-here')).status).toBe(404);
    expect((await oidc('GET', '/oidc/logged-out')).text).toBe('signed out successfully');
  });

  it('runs the C SDK sequence with a certificate: authorize, login/cert, callback, code exchange; the API session is created then', async () => {
    const dev = await certIdentity();
    const auth = newAuth();
    const { res, id } = await authorize(auth, certHeader(dev.cert));
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`https://${HOST}/oidc/login/cert?authRequestID=${id}`);
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const sdkInfo = { type: 'ziti-sdk-c', version: '1.2.3', revision: 'abc', branch: 'main', appId: 'app', appVersion: '9' };
    const envInfo = { os: 'linux', arch: 'x86_64', osRelease: '6.1', osVersion: '#1', hostname: 'host1', domain: '' };
    const login = await oidc('POST', `/oidc/login/cert?id=${id}`, { headers: { accept: 'application/json', ...certHeader(dev.cert) }, json: { sdkInfo, envInfo } });
    expect(login.status).toBe(302);
    // The callback needs the one-time ticket only this answer carries (login fixation).
    expect(login.headers.get('location')).toMatch(new RegExp(`^https://${HOST}/oidc/authorize/callback\\?id=${id}&ticket=[A-Za-z0-9_-]{43}$`));
    expect((await oidc('GET', `/oidc/authorize/callback?id=${id}`)).headers.get('location')).toContain('error=login_required');
    expect(await h.sql('SELECT id FROM api_sessions WHERE identity_id = $1', [dev.id])).toEqual([]);

    const { tail } = await codeTail(login.headers.get('location')!);
    expect(tail).toMatch(/^[A-Za-z0-9_-]{43}&state=/);
    const t = await token(tokenForm(auth, tail));
    expect(t.status).toBe(200);
    expect(t.body).toMatchObject({ token_type: 'Bearer', expires_in: 1800, access_token: expect.any(String), refresh_token: expect.any(String), id_token: expect.any(String) });
    expect(t.headers.get('cache-control')).toBe('no-store');

    const access = claims(t.body.access_token);
    expect(decodeJwt(t.body.access_token)!.header).toMatchObject({ alg: 'ES256', typ: 'JWT' });
    expect(access).toMatchObject({
      iss: ISSUER, sub: dev.id, aud: ['openziti'], z_t: 'a', amr: ['cert'], client_id: 'openziti', scopes: ['openid', 'offline_access'],
      z_cfs: [dev.cert.fingerprint], z_acf: dev.cert.fingerprint, z_authid: dev.authenticatorId, z_aid: 'openziti', z_sdk: sdkInfo, z_env: envInfo,
    });
    expect(access.exp - access.iat).toBe(1800);
    expect(access.jti).toMatch(/^[0-9a-f-]{36}$/);
    expect(access.z_asid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const refresh = claims(t.body.refresh_token);
    expect(refresh).toMatchObject({ z_t: 'r', z_asid: access.z_asid, sub: dev.id });
    expect(refresh.exp - refresh.iat).toBe(86400);
    expect(refresh.jti).not.toBe(access.jti);
    const idt = claims(t.body.id_token);
    expect(idt).toMatchObject({ iss: ISSUER, sub: dev.id, aud: ['openziti'], azp: 'openziti', z_asid: access.z_asid, amr: ['cert'], name: expect.stringMatching(/^dev-/) });
    expect(idt.jti).toBeUndefined();
    const jwks = (await oidc('GET', '/oidc/keys')).body.keys as { kid: string }[];
    expect(jwks.find((k) => k.kid === decodeJwt(t.body.id_token)!.header.kid)).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });

    const [row] = await h.sql('SELECT kind, token, expires_at, identity_id, authenticator_id, is_mfa_required FROM api_sessions WHERE id = $1', [access.z_asid]);
    expect(row).toMatchObject({ kind: 'oidc', identity_id: dev.id, authenticator_id: dev.authenticatorId, is_mfa_required: false });
    expect(row.token).toMatch(/^oidc:/);
    expect(Math.round(new Date(row.expires_at).getTime() / 1000)).toBe(refresh.exp);
    const [identity] = await h.sql('SELECT sdk_info, env_info FROM identities WHERE id = $1', [dev.id]);
    expect(identity).toEqual({ sdk_info: sdkInfo, env_info: envInfo });
    const listed = await h.call('GET', `${M}/api-sessions?filter=${encodeURIComponent(`identity = "${dev.id}"`)}`, { principal: admin });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((s: { id: string }) => s.id)).toEqual([access.z_asid]);

    // The code is single use.
    expect((await token(tokenForm(auth, tail))).body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });

    // Proof of possession: a certificate session refreshes only with its certificate.
    const noCert = await oidc('POST', '/oidc/oauth/token', { form: refreshForm(t.body.refresh_token), headers: basic });
    expect([noCert.status, noCert.body.error]).toEqual([400, 'invalid_grant']);
    const refreshed = await oidc('POST', '/oidc/oauth/token', { form: refreshForm(t.body.refresh_token), headers: { ...basic, ...certHeader(dev.cert) } });
    expect(refreshed.status).toBe(200);
    expect(claims(refreshed.body.access_token)).toMatchObject({ z_asid: access.z_asid, auth_time: access.auth_time, z_cfs: [dev.cert.fingerprint] });
  });

  it('signs the CSR of a login as the API session certificate at code exchange, and on refresh (OIDC_AUTH_WITH_CSR)', async () => {
    const dev = await certIdentity();
    const csrPem = '-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n';
    const loginWith = async (csr: string) => {
      const auth = newAuth();
      const { id } = await authorize(auth, certHeader(dev.cert));
      const login = await oidc('POST', `/oidc/login/cert?id=${id}`, { headers: certHeader(dev.cert), json: { csrPem: csr } });
      expect(login.status).toBe(302);
      const { tail } = await codeTail(login.headers.get('location')!);
      return token(tokenForm(auth, tail));
    };
    const bad = await loginWith('not a csr');
    expect([bad.status, bad.body.error]).toEqual([400, 'invalid_request']);
    expect(bad.body.error_description).toMatch(/^invalid CSR: /);

    const t = await loginWith(csrPem);
    expect(t.status).toBe(200);
    const access = claims(t.body.access_token);
    const signed = pki.signed.at(-1)!;
    expect(signed).toMatchObject({ identityId: dev.id, purpose: 'api-session', apiSessionId: access.z_asid });
    expect(t.body.session_cert).toBe(signed.certPem);
    expect(access.z_cfs).toEqual([dev.cert.fingerprint, signed.fingerprint]);
    expect(access.z_acf).toBe(dev.cert.fingerprint);

    // The session certificate proves possession too; a refresh may ask for another one.
    const sessionCert = { [CLIENT_CERT_HEADER]: signClientCertChain(SECRET, [new X509Certificate(signed.certPem).raw], 'r1') };
    const r = await token(`${refreshForm(t.body.refresh_token)}&csr_pem=${encodeURIComponent(csrPem)}`, sessionCert);
    expect(r.status).toBe(200);
    const again = pki.signed.at(-1)!;
    expect(r.body.session_cert).toBe(again.certPem);
    expect(claims(r.body.access_token).z_cfs).toEqual([dev.cert.fingerprint, signed.fingerprint, again.fingerprint]);
    const stranger = certHeader(selfSignedCert('stranger'));
    expect((await token(refreshForm(r.body.refresh_token), stranger)).body.error).toBe('invalid_grant');
  });

  it('logs in with a password and refreshes: the old refresh token is refused afterwards, the session end moves', async () => {
    const user = await h.createUser(admin);
    const auth = newAuth();
    const { res, id } = await authorize(auth);
    expect(res.headers.get('location')).toBe(`https://${HOST}/oidc/login/username?authRequestID=${id}`);
    const page = await oidc('GET', `/oidc/login/username?authRequestID=${id}`);
    expect([page.status, page.headers.get('auth-request-id'), page.headers.get('content-type')]).toEqual([200, id, 'text/html; charset=utf-8']);
    expect(page.text).toContain(`value="${id}"`);

    const wrong = await oidc('POST', '/oidc/login/password', { json: { id, username: user.username, password: 'nope-nope' } });
    expect([wrong.status, wrong.body.error.code]).toEqual([401, 'INVALID_AUTH']);
    expect(wrong.body.meta).toBeDefined();
    const wrongHtml = await oidc('POST', '/oidc/login/password', { form: `id=${id}&username=${user.username}&password=nope`, headers: { accept: 'text/html' } });
    expect([wrongHtml.status, wrongHtml.headers.get('content-type')]).toEqual([401, 'text/html; charset=utf-8']);
    expect(wrongHtml.text).toContain('The authentication request failed');

    const login = await oidc('POST', `/oidc/login/password?authRequestID=${id}`, { json: { username: user.username, password: user.password, configTypes: ['ct1'] } });
    expect(login.status).toBe(302);
    const { tail } = await codeTail(login.headers.get('location')!);
    const t = await token(tokenForm(auth, tail));
    expect(t.status).toBe(200);
    const access = claims(t.body.access_token);
    expect(access).toMatchObject({ sub: user.id, amr: ['password'], z_cfs: [], z_ct: ['ct1'] });
    expect(access.z_acf).toBeUndefined();

    const [before] = await h.sql('SELECT expires_at FROM api_sessions WHERE id = $1', [access.z_asid]);
    await new Promise((r) => setTimeout(r, 1100));
    const r1 = await token(refreshForm(t.body.refresh_token), basic);
    expect(r1.status).toBe(200);
    expect(r1.body.refresh_token).not.toBe(t.body.refresh_token);
    expect(claims(r1.body.access_token)).toMatchObject({ sub: user.id, z_asid: access.z_asid, auth_time: access.auth_time });
    const [after] = await h.sql('SELECT expires_at FROM api_sessions WHERE id = $1', [access.z_asid]);
    expect(new Date(after.expires_at).getTime()).toBeGreaterThan(new Date(before.expires_at).getTime());
    // Refusals before the rotation (another client, a wider scope) leave the token usable.
    expect((await token(refreshForm(r1.body.refresh_token).replace('client_id=openziti', 'client_id=native'))).body.error).toBe('invalid_grant');
    expect((await token(`${refreshForm(r1.body.refresh_token)}&scope=openid%20extra`)).body.error).toBe('invalid_scope');
    const narrowed = await token(`${refreshForm(r1.body.refresh_token)}&scope=offline_access`);
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.id_token).toBeUndefined();
    expect(claims(narrowed.body.access_token).scopes).toEqual(['offline_access']);
    // The first refresh token, rotated away, comes back: refused, and its whole family (the API session) ends.
    const again = await token(refreshForm(t.body.refresh_token), basic);
    expect(again.body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
    expect(await h.sql('SELECT id FROM api_sessions WHERE id = $1', [access.z_asid])).toEqual([]);
    expect((await token(refreshForm(narrowed.body.refresh_token), basic)).body.error).toBe('invalid_grant');
    expect(await h.sql(`SELECT type FROM revocations WHERE id = $1`, [access.z_asid])).toEqual([{ type: 'API_SESSION' }]);
  });

});
