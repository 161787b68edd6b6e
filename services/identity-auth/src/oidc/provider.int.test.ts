import { internalFetch, internalTestClient } from '@ziti/service-kit';
import { X509Certificate, createHash, randomBytes } from 'node:crypto';
import { type ServiceError } from '@grpc/grpc-js';
import { fromGrpcError } from '@ziti/errors';
import { CLIENT_CERT_HEADER, type RequestPrincipal, signClientCertChain } from '@ziti/http-kit';
import { IdentityAuthServiceClient } from '@ziti/proto';
import { type TestCert, selfSignedCert, signJwt } from '../testing/certs.js';
import { type FakePki, startFakePki } from '../testing/fake-pki.js';
import { C, Harness, M, SECRET } from '../testing/harness.js';
import { totpCodes, wrongTotpCodes } from '../testing/totp-codes.js';
import { decodeJwt } from './jwt.js';

const HOST = 'ctrl.example.com:1280';
const ISSUER = `https://${HOST}/oidc`;
/** The C SDK's redirect URI (`default_cb_url` of library/oidc.c). */
const CB = 'http://localhost:20314/auth/callback';
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const now = () => Math.floor(Date.now() / 1000);

interface Raw {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/** identity-auth's `/oidc` provider, driven as the gateway passes an SDK's requests through. */
describe('OIDC provider', () => {
  let h: Harness;
  let pki: FakePki;
  let admin: RequestPrincipal;
  let grpc: IdentityAuthServiceClient;

  beforeAll(async () => {
    pki = await startFakePki();
    h = await Harness.start({ pkiEnrollmentGrpc: pki.address });
    admin = (await h.login()).principal;
    grpc = internalTestClient(IdentityAuthServiceClient, h.service.grpcAddress, 'identity-auth');
  });
  afterAll(async () => {
    grpc?.close();
    await h?.close();
    await pki?.stop();
  });

  /** A request to `/oidc…` without following redirects, with the forwarded public host. */
  async function oidc(method: string, path: string, opts: { headers?: Record<string, string>; body?: string; json?: unknown; form?: string } = {}): Promise<Raw> {
    const headers: Record<string, string> = { 'x-forwarded-host': HOST, 'x-forwarded-proto': 'https', ...opts.headers };
    let body = opts.body;
    if (opts.json !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(opts.json);
    }
    if (opts.form !== undefined) {
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
      body = opts.form;
    }
    const res = await internalFetch(h.service.httpUrl + path, { method, headers, body, redirect: 'manual' });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, text, body: parsed };
  }

  const certHeader = (cert: TestCert) => ({ [CLIENT_CERT_HEADER]: signClientCertChain(SECRET, [new X509Certificate(cert.certPem).raw], 'r1') });

  /** The PKCE pair and state of one login, as oidc.c makes them. */
  function newAuth() {
    const verifier = randomBytes(32).toString('base64url');
    return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url'), state: randomBytes(30).toString('base64url') };
  }
  type Auth = ReturnType<typeof newAuth>;

  /** `POST /oidc/authorize` with every parameter in the query and `Accept: application/json` (oidc_client_start). */
  async function authorize(auth: Auth, headers: Record<string, string> = {}, extra = ''): Promise<{ res: Raw; id: string; path: string }> {
    const q = new URLSearchParams({
      client_id: 'openziti', scope: 'openid offline_access', response_type: 'code', redirect_uri: CB,
      code_challenge: auth.challenge, code_challenge_method: 'S256', state: auth.state, audience: 'openziti',
    });
    const res = await oidc('POST', `/oidc/authorize?${q}${extra}`, { headers: { accept: 'application/json', ...headers } });
    const location = res.headers.get('location') ?? '';
    // auth_cb: the id is what follows `authRequestID=` up to the next `&`.
    const p = location.indexOf('authRequestID=');
    const tail = p < 0 ? '' : location.slice(p + 'authRequestID='.length);
    return { res, id: tail.split('&')[0]!, path: location };
  }

  /** code_cb: GET the callback path, then the code is everything after `code=` in the redirect. */
  async function codeTail(callbackLocation: string): Promise<{ res: Raw; tail: string }> {
    const u = new URL(callbackLocation);
    expect(u.origin).toBe(`https://${HOST}`);
    const res = await oidc('GET', u.pathname + u.search);
    expect(res.status).toBe(302);
    const location = res.headers.get('location')!;
    const i = location.indexOf('code=');
    return { res, tail: location.slice(i + 'code='.length) };
  }

  /** request_token: the form exactly as oidc.c sends it, the code tail (`<code>&state=...`) unescaped. */
  const tokenForm = (auth: Auth, tail: string, over: { verifier?: string; redirect?: string; clientId?: string } = {}) =>
    `state=${auth.state}&code=${tail}&grant_type=authorization_code&code_verifier=${over.verifier ?? auth.verifier}` +
    `&client_id=${over.clientId ?? 'openziti'}&redirect_uri=${encodeURIComponent(over.redirect ?? CB)}`;

  const token = (form: string, headers: Record<string, string> = {}) => oidc('POST', '/oidc/oauth/token', { form, headers });
  const claims = (jwt: string) => decodeJwt(jwt)!.claims as Record<string, any>;
  const refreshForm = (refresh: string) => `client_id=openziti&grant_type=refresh_token&refresh_token=${refresh}`;
  const basic = { authorization: `Basic ${Buffer.from('openziti:').toString('base64')}` };

  /** A full password login through the endpoints; the token answer. */
  async function passwordLogin(user: { username: string; password: string }): Promise<{ auth: Auth; tokens: any }> {
    const auth = newAuth();
    const { id } = await authorize(auth);
    const login = await oidc('POST', '/oidc/login/password', { form: `id=${id}&username=${encodeURIComponent(user.username)}&password=${encodeURIComponent(user.password)}` });
    expect(login.status).toBe(302);
    const { tail } = await codeTail(login.headers.get('location')!);
    const res = await token(tokenForm(auth, tail));
    expect(res.status).toBe(200);
    return { auth, tokens: res.body };
  }

  const rpc = <T>(method: string, req: object): Promise<T> =>
    new Promise((resolve, reject) =>
      (grpc as unknown as Record<string, (r: object, cb: (e: ServiceError | null, r: T) => void) => void>)[method]!.call(grpc, req, (err, res) =>
        err ? reject(fromGrpcError(err)) : resolve(res),
      ),
    );

  async function certIdentity(): Promise<{ id: string; cert: TestCert; authenticatorId: string }> {
    const created = await h.call('POST', `${M}/identities`, { principal: admin, body: { name: `dev-${randomBytes(4).toString('hex')}`, type: 'Device', isAdmin: false } });
    const id = created.body.data.id as string;
    const cert = selfSignedCert('oidc-device');
    const a = await rpc<{ id: string }>('createCertAuthenticator', { identityId: id, certPem: cert.certPem, fingerprint: '', isIssuedByNetwork: true, caId: '' });
    pki.verdicts.set(cert.fingerprint, { verified: true, leafPem: cert.certPem });
    return { id, cert, authenticatorId: a.id };
  }

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
