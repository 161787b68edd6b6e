import { auth, BASE } from '../support/clients.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectEmpty, expectError, expectSuccess } from '../support/envelope.js';
import { HttpClient, type HttpResponse } from '../support/http.js';

/** Password login, session headers, current API session and identity, logout (reference §2, §3.4). */

const ctl = useController();
failOnConformanceProblems();

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
/** Go's time.Time.String(), e.g. `2026-01-02 15:04:05.123 +0000 UTC`. */
const GO_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)? \+0000 UTC$/;
const MISSING =
  'zt-session realm="zt-session" error="missing" error_description="no matching token was provided",' +
  'Bearer realm="openziti-oidc" error="missing" error_description="no matching token was provided"';
const INVALID = 'zt-session realm="zt-session" error="invalid" error_description="token is invalid"';

async function getRaw(path: string, token?: string): Promise<{ res: HttpResponse; wwwAuth: string[] }> {
  const res = await ctl().http.get(path, token);
  return { res, wwwAuth: HttpClient.headerLines(res, 'www-authenticate') };
}

describe('401 challenges', () => {
  it('no token → 401 UNAUTHORIZED with the "missing" challenges in one header', async () => {
    const { res, wwwAuth } = await getRaw(`${BASE.management}/identities`);
    expectError(res, 401, 'UNAUTHORIZED');
    expect(wwwAuth).toEqual([MISSING]);
  });

  it('no token on the client API → the same', async () => {
    const { res, wwwAuth } = await getRaw(`${BASE.client}/current-identity`);
    expectError(res, 401, 'UNAUTHORIZED');
    expect(wwwAuth).toEqual([MISSING]);
  });

  it('an unknown token → 401 UNAUTHORIZED with the "invalid" challenge', async () => {
    const { res, wwwAuth } = await getRaw(`${BASE.management}/identities`, '9b2e3f4a-1c2d-4e5f-8a9b-0c1d2e3f4a5b');
    expectError(res, 401, 'UNAUTHORIZED');
    expect(wwwAuth).toEqual([INVALID]);
  });

  it('a token that is not a UUID → 401 UNAUTHORIZED with the "invalid" challenge', async () => {
    const { res, wwwAuth } = await getRaw(`${BASE.management}/current-identity`, 'not-a-token');
    expectError(res, 401, 'UNAUTHORIZED');
    expect(wwwAuth).toEqual([INVALID]);
  });
});

describe.each(['management', 'client'] as const)('login on the %s API', (api) => {
  let res: HttpResponse;
  let token: string | undefined;
  beforeAll(async () => {
    ({ res, token } = await auth.login(ctl().http, ctl().admin.username, ctl().admin.password, api));
  });

  it('→ 200 with a UUIDv4 data.token, echoed in the zt-session header', () => {
    expectSuccess(res);
    expect(token).toMatch(UUID_V4);
    expect(res.headers['zt-session']).toBe(token);
  });

  it('sets expiration-seconds and expires-at (Go time format)', () => {
    expect(res.headers['expiration-seconds']).toMatch(/^\d+$/);
    expect(Number(res.headers['expiration-seconds'])).toBeGreaterThan(0);
    expect(res.headers['expires-at']).toMatch(GO_TIME);
  });

  it('data carries expiresAt, expirationSeconds and the identity', async () => {
    const d = res.body.data;
    expect(Date.parse(d.expiresAt)).toBeGreaterThan(Date.now());
    expect(Number.isInteger(d.expirationSeconds) && d.expirationSeconds > 0 && d.expirationSeconds <= 1800).toBe(true);
    expect(typeof d.identity.name).toBe('string');
    expect(d.identity.id).toBe(d.identityId);
    expect(d.identity.entity).toBe('identities');
    expect(d.isMfaRequired).toBe(false);
    expect(d.authQueries).toEqual([]);
  });

  it('GET /current-api-session → the same session', async () => {
    const cur = await ctl().http.get(`${BASE[api]}/current-api-session`, token);
    expectSuccess(cur);
    expect(cur.body.data).toMatchObject({ id: res.body.data.id, token, identityId: res.body.data.identityId });
    expect(typeof cur.body.data.expiresAt).toBe('string');
    expect(Number.isInteger(cur.body.data.expirationSeconds)).toBe(true);
    expect(cur.headers['expires-at']).toMatch(GO_TIME);
  });

  it('GET /current-identity → the default admin', async () => {
    const cur = await ctl().http.get(`${BASE[api]}/current-identity`, token);
    expectSuccess(cur);
    expect(cur.body.data).toMatchObject({ id: res.body.data.identityId, name: res.body.data.identity.name, isAdmin: true, isDefaultAdmin: true });
  });
});

describe('login failures', () => {
  it('a wrong password → 401 INVALID_AUTH', async () => {
    const { res } = await auth.login(ctl().http, ctl().admin.username, 'Wrong-password-1', 'management');
    expectError(res, 401, 'INVALID_AUTH');
  });

  it('an unknown user → 401 INVALID_AUTH', async () => {
    const { res } = await auth.login(ctl().http, 'no-such-user', 'Whatever-1', 'client');
    expectError(res, 401, 'INVALID_AUTH');
  });

  it('a missing password → 400 COULD_NOT_VALIDATE', async () => {
    const res = await ctl().http.post(`${BASE.management}/authenticate?method=password`, { username: ctl().admin.username });
    expectError(res, 400, 'COULD_NOT_VALIDATE');
  });

  it('a missing username → 400 COULD_NOT_VALIDATE', async () => {
    const res = await ctl().http.post(`${BASE.client}/authenticate?method=password`, { password: ctl().admin.password });
    expectError(res, 400, 'COULD_NOT_VALIDATE');
  });
});

describe('login body extras', () => {
  it('envInfo and sdkInfo sent at login are stored on the identity', async () => {
    const envInfo = { arch: 'amd64', os: 'linux', osRelease: '6.1', osVersion: '12', hostname: 'bbt-host', domain: 'example.test' };
    const sdkInfo = { type: 'ziti-sdk-golang', version: 'v1.2.3', revision: 'abc123', branch: 'main', appId: 'bbt', appVersion: '0.0.1' };
    const { username, password } = ctl().admin;
    const res = await ctl().http.post(`${BASE.client}/authenticate?method=password`, { username, password, envInfo, sdkInfo });
    expectSuccess(res);
    const me = await ctl().http.get(`${BASE.client}/current-identity`, res.body.data.token);
    expectSuccess(me);
    expect(me.body.data.envInfo).toMatchObject(envInfo);
    expect(me.body.data.sdkInfo).toMatchObject(sdkInfo);
  });
});

describe('sessions across APIs and logout', () => {
  it('a token from the management API works on the client API', async () => {
    const mgmt = await ctl().adminSession('management');
    const res = await ctl().http.get(`${BASE.client}/current-identity`, mgmt.token);
    expectSuccess(res);
    expect(res.body.data.isDefaultAdmin).toBe(true);
  });

  it('DELETE /current-api-session logs out: the token then gets 401', async () => {
    const session = await ctl().adminSession('client');
    expectSuccess(await session.currentIdentity.get());
    expectEmpty(await session.currentApiSession.delete());
    const after = await session.currentIdentity.get();
    expectError(after, 401, 'UNAUTHORIZED');
    expect(after.headers['www-authenticate']).toBe(INVALID);
    expectError(await session.withToken(session.token).currentApiSession.get(), 401, 'UNAUTHORIZED');
  });
});
