import { BASE, EdgeApi, auth, uniqueName } from '../support/clients.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { strongPassword, useController } from '../support/controller.js';
import { expectCreated, expectError, expectSuccess } from '../support/envelope.js';
import { HttpClient, type HttpResponse } from '../support/http.js';
import { type SecondGateway, startSecondGateway } from '../support/second-gateway.js';

/**
 * Client addresses and login limits through the whole controller: the address an API session
 * records is the TLS peer's unless the peer is a trusted proxy; a burst of wrong passwords meets
 * 429 `SERVER_TOO_MANY_REQUESTS` (reference §2.2) while other users still log in; the counts are
 * shared by gateway replicas through Redis; with the limits off nothing is refused.
 *
 * The controller's own gateway runs with the defaults (no trusted proxy; 10 failures per username
 * and 30 per address per minute). The extra replicas started here share its Redis key space.
 */

const ctl = useController();
failOnConformanceProblems();

let admin: EdgeApi;
let behindProxy: SecondGateway; // trusts 127.0.0.1 as a proxy: the test names the client in x-forwarded-for
let unlimited: SecondGateway; // failed-login limits and the auth rate limiter off
beforeAll(async () => {
  admin = await ctl().adminSession('management');
  behindProxy = await startSecondGateway(ctl(), { name: 'gateway-behind-proxy', nearCache: true, extra: { trustedProxies: ['127.0.0.1'] } });
  unlimited = await startSecondGateway(ctl(), {
    name: 'gateway-unlimited',
    nearCache: true,
    extra: { loginFailureLimits: { perUsername: 0, perAddress: 0 }, authRateLimiter: { enabled: false } },
  });
}, 60_000);
afterAll(async () => {
  await behindProxy?.stop();
  await unlimited?.stop();
});

/** A user identity with a password; answers its credentials. */
async function newUser(): Promise<{ username: string; password: string }> {
  const name = uniqueName('limits');
  const id = expectCreated(await admin.identities.create({ name, type: 'User', isAdmin: false }), 'identities');
  const password = strongPassword();
  expectCreated(await admin.call('POST', '/authenticators', { method: 'updb', identityId: id, username: name, password }), 'authenticators');
  return { username: name, password };
}

/** `POST /authenticate?method=password` through `http`, claiming `forwardedFor` when given. */
function login(http: HttpClient, username: string, password: string, forwardedFor?: string): Promise<HttpResponse> {
  return http.request({
    method: 'POST',
    path: `${BASE.client}/authenticate?method=password`,
    json: { username, password },
    ...(forwardedFor ? { headers: { 'x-forwarded-for': forwardedFor } } : {}),
  });
}

describe('client address', () => {
  it('a direct client’s X-Forwarded-For is ignored: the session records the socket’s address', async () => {
    const res = await login(ctl().http, ctl().admin.username, ctl().admin.password, '203.0.113.7');
    expectSuccess(res);
    expect(res.body.data.ipAddress).toBe('127.0.0.1');
    const stored = await admin.apiSessions.get(res.body.data.id);
    expectSuccess(stored);
    expect(stored.body.data.ipAddress).toBe('127.0.0.1');
  });

  it('behind a trusted proxy the forwarded client is recorded (the first untrusted hop from the right)', async () => {
    const res = await login(behindProxy.http, ctl().admin.username, ctl().admin.password, '192.0.2.1, 203.0.113.7');
    expectSuccess(res);
    expect(res.body.data.ipAddress).toBe('203.0.113.7');
    const mine = new EdgeApi(behindProxy.http, 'client', res.body.data.token);
    const current = await mine.currentApiSession.get();
    expectSuccess(current);
    expect(current.body.data.ipAddress).toBe('203.0.113.7');
    const stored = await admin.apiSessions.get(res.body.data.id);
    expect(stored.body.data.ipAddress).toBe('203.0.113.7');
  });
});

describe('failed-login limits', () => {
  it('a burst of wrong passwords for one user meets 429 SERVER_TOO_MANY_REQUESTS; another user logs in meanwhile', async () => {
    const victim = await newUser();
    const other = await newUser();
    const answers: number[] = [];
    for (let i = 0; i < 13; i++) {
      const res = await login(ctl().http, victim.username, `Wrong-${i}-password`);
      answers.push(res.status);
      if (i < 10) expectError(res, 401, 'INVALID_AUTH');
      else expectError(res, 429, 'SERVER_TOO_MANY_REQUESTS');
    }
    expect(answers).toEqual([...Array<number>(10).fill(401), 429, 429, 429]);
    // The right password too is refused until the window ends: the throttle comes before the check.
    expectError(await login(ctl().http, victim.username, victim.password), 429, 'SERVER_TOO_MANY_REQUESTS');
    // Another user, from the same address (10 failures of 30) and from another one, gets in.
    expectSuccess(await login(ctl().http, other.username, other.password));
    expectSuccess(await login(behindProxy.http, other.username, other.password, '198.51.100.23'));
  });

  it('two gateway replicas share the count through Redis', async () => {
    // Failures through both: the replica that saw only 4 of them refuses the next attempt.
    const mixed = await newUser();
    for (let i = 0; i < 6; i++) expectError(await login(ctl().http, mixed.username, 'Wrong-password-1'), 401, 'INVALID_AUTH');
    for (let i = 0; i < 4; i++) expectError(await login(behindProxy.http, mixed.username, 'Wrong-password-1', `198.51.100.${i + 1}`), 401, 'INVALID_AUTH');
    expectError(await login(behindProxy.http, mixed.username, mixed.password, '198.51.100.99'), 429, 'SERVER_TOO_MANY_REQUESTS');
    // Every failure through the replica: the controller's gateway, which counted none, refuses.
    const elsewhere = await newUser();
    for (let i = 0; i < 10; i++) expectError(await login(behindProxy.http, elsewhere.username, 'Wrong-password-1', `198.51.100.${i + 1}`), 401, 'INVALID_AUTH');
    expectError(await login(ctl().http, elsewhere.username, elsewhere.password), 429, 'SERVER_TOO_MANY_REQUESTS');
  });

  it('counts per client address across usernames', async () => {
    const user = await newUser();
    const from = '203.0.113.77';
    for (let i = 0; i < 30; i++) expectError(await login(behindProxy.http, uniqueName('nobody'), 'Wrong-password-1', from), 401, 'INVALID_AUTH');
    expectError(await login(behindProxy.http, user.username, user.password, from), 429, 'SERVER_TOO_MANY_REQUESTS');
    expectSuccess(await login(behindProxy.http, user.username, user.password, '203.0.113.78'));
  });

  it('with the limits off no burst is refused', async () => {
    const user = await newUser();
    for (let i = 0; i < 40; i++) expectError(await login(unlimited.http, user.username, `Wrong-${i}-password`), 401, 'INVALID_AUTH');
    const ok = await auth.login(unlimited.http, user.username, user.password, 'client');
    expectSuccess(ok.res);
  });
});
