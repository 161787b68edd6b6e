import type { EdgeApi } from '../support/clients.js';
import { type User, createUser, loginAs } from '../support/clients-identity.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectEmpty, expectError, expectList, expectSuccess } from '../support/envelope.js';
import { bearerApi, locationPath, relyingParty, rpRequest } from '../support/oidc.js';
import { type SecondGateway, startSecondGateway } from '../support/second-gateway.js';

/**
 * A change of an identity's admin flag or permissions takes effect on the very next request, with
 * every kind of credential and on every gateway replica: an OIDC access token whose principal a
 * replica cached (up to 30 s) is resolved again, as a legacy `zt-session` is.
 */

const ctl = useController();
failOnConformanceProblems();

let mgmt: EdgeApi;
let b: SecondGateway;
beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
  b = await startSecondGateway(ctl());
}, 60_000);
afterAll(async () => {
  await b?.stop();
});

/** An OIDC password login through openid-client on gateway A: the access token. */
async function accessToken(user: User): Promise<string> {
  const { client, redirectUri } = await relyingParty(ctl().url, ctl().running.caCertPem);
  const r = rpRequest();
  const url = new URL(client.authorizationUrl({ scope: 'openid offline_access', code_challenge: r.challenge, code_challenge_method: 'S256', state: r.state, nonce: r.nonce }));
  const authorize = await ctl().http.request({ method: 'GET', path: url.pathname + url.search, validate: false });
  const done = await ctl().http.request({ method: 'POST', path: locationPath(authorize), json: { username: user.username, password: user.password }, validate: false });
  expect(done.status).toBe(302);
  const callback = await ctl().http.request({ method: 'GET', path: locationPath(done), validate: false });
  const tokens = await client.callback(redirectUri, client.callbackParams(String(callback.headers.location)), { code_verifier: r.verifier, state: r.state, nonce: r.nonce });
  return tokens.access_token!;
}

/** Management `GET /identities` with the access token, through gateway A and through B. */
const listBoth = (access: string) => Promise.all([bearerApi(ctl().http, access).management('GET', '/identities'), bearerApi(b.http, access).management('GET', '/identities')]);

/** Requests through both replicas, so both hold the principal in the shared cache (B's first request caches it). */
async function warm(access: string): Promise<void> {
  for (let i = 0; i < 3; i++) {
    expectSuccess(await bearerApi(b.http, access).client('GET', '/current-identity'));
    expectSuccess(await bearerApi(ctl().http, access).client('GET', '/current-identity'));
  }
}

describe('OIDC bearer principals follow the identity at once', () => {
  it('an admin demoted (isAdmin false) is refused on the next request, on both replicas', async () => {
    const user = await createUser(mgmt, { isAdmin: true });
    const access = await accessToken(user);
    await warm(access);
    for (const res of await listBoth(access)) expectList(res);
    expectEmpty(await mgmt.identities.patch(user.id, { isAdmin: false }));
    for (const res of await listBoth(access)) expectError(res, 401, 'UNAUTHORIZED');
    expect((await bearerApi(b.http, access).client('GET', '/current-identity')).body.data).toMatchObject({ id: user.id, isAdmin: false });
  });

  it('a permission removed (PATCH, and PUT) stops working on the next request', async () => {
    const user = await createUser(mgmt, { permissions: ['identity'] });
    const access = await accessToken(user);
    await warm(access);
    for (const res of await listBoth(access)) expectList(res);
    expectEmpty(await mgmt.identities.patch(user.id, { permissions: ['service.read'] }));
    for (const res of await listBoth(access)) expectError(res, 401, 'UNAUTHORIZED');
    expectEmpty(await mgmt.identities.patch(user.id, { permissions: ['identity'] }));
    for (const res of await listBoth(access)) expectList(res);
    expectEmpty(await mgmt.identities.update(user.id, { name: user.name, type: 'User', isAdmin: false }));
    for (const res of await listBoth(access)) expectError(res, 401, 'UNAUTHORIZED');
  });

  it('a promotion takes effect on the next request too', async () => {
    const user = await createUser(mgmt);
    const access = await accessToken(user);
    await warm(access);
    for (const res of await listBoth(access)) expectError(res, 401, 'UNAUTHORIZED');
    expectEmpty(await mgmt.identities.patch(user.id, { isAdmin: true }));
    for (const res of await listBoth(access)) expectList(res);
  });
});

describe('legacy zt-session principals', () => {
  it('an admin demoted is refused on the next request through the other replica', async () => {
    const user = await createUser(mgmt, { isAdmin: true });
    const { res, session } = await loginAs(ctl().http, user);
    expectSuccess(res);
    const token = session.token;
    expectList(await b.http.request({ method: 'GET', path: '/edge/management/v1/identities', token }));
    expectList(await b.http.request({ method: 'GET', path: '/edge/management/v1/identities', token }));
    expectEmpty(await mgmt.identities.patch(user.id, { isAdmin: false }));
    expectError(await b.http.request({ method: 'GET', path: '/edge/management/v1/identities', token }), 401, 'UNAUTHORIZED');
    expectError(await ctl().http.request({ method: 'GET', path: '/edge/management/v1/identities', token }), 401, 'UNAUTHORIZED');
  });
});
