import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { BASE, type EdgeApi, auth } from '../support/clients.js';
import { createUser, totpCodes } from '../support/clients-identity.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectEmpty, expectError, expectFieldError, expectList, expectSuccess } from '../support/envelope.js';
import { networkBuilder } from '../support/clients-session.js';
import { bearerApi, claimsOf, headerOf, locationPath, locationQuery, refreshAsCSdk, relyingParty, rpRequest } from '../support/oidc.js';
import { type SecondGateway, startSecondGateway } from '../support/second-gateway.js';

/**
 * Revocations of OIDC tokens (OIDC.md "Revocations"): each type refuses the token on another
 * gateway replica at once, even where that replica had the principal cached; identity disable and
 * delete revoke; a key rotation logs nobody out; the TOTP token and the MFA posture check.
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

/** A password login through openid-client on gateway A (TOTP when `totp` is given). */
async function oidcLogin(user: { username: string; password: string }, totp?: () => string) {
  const { client, redirectUri } = await relyingParty(ctl().url, ctl().running.caCertPem);
  const r = rpRequest();
  const url = new URL(client.authorizationUrl({ scope: 'openid offline_access', code_challenge: r.challenge, code_challenge_method: 'S256', state: r.state, nonce: r.nonce }));
  const authorize = await ctl().http.request({ method: 'GET', path: url.pathname + url.search, validate: false });
  let done = await ctl().http.request({ method: 'POST', path: locationPath(authorize), json: { username: user.username, password: user.password }, validate: false });
  if (done.status === 200 && totp) {
    done = await ctl().http.request({ method: 'POST', path: '/oidc/login/totp', json: { id: locationQuery(authorize).get('authRequestID'), code: totp() }, validate: false });
  }
  expect(done.status).toBe(302);
  const callback = await ctl().http.request({ method: 'GET', path: locationPath(done), validate: false });
  const tokens = await client.callback(redirectUri, client.callbackParams(String(callback.headers.location)), { code_verifier: r.verifier, state: r.state, nonce: r.nonce });
  return { access: tokens.access_token!, refresh: tokens.refresh_token! };
}

/** The token works through gateway B three times (so B caches the principal). */
async function warmOnB(access: string): Promise<void> {
  for (let i = 0; i < 3; i++) expectSuccess(await bearerApi(b.http, access).client('GET', '/current-identity'));
}

const refusedOnB = async (access: string) => {
  const res = await bearerApi(b.http, access).client('GET', '/current-identity');
  expectError(res, 401, 'UNAUTHORIZED');
  expect(String(res.headers['www-authenticate'])).toContain('Bearer realm="openziti-oidc"');
};

const nextSecond = () => new Promise((r) => setTimeout(r, 1100 - (Date.now() % 1000)));

describe('POST /revocations refuses the token on the other replica at once', () => {
  it('JTI: that access token only; the session\'s other tokens keep working', async () => {
    const user = await createUser(mgmt);
    const { access, refresh } = await oidcLogin(user);
    await warmOnB(access);
    const jti = claimsOf(access).jti;
    const created = await mgmt.call('POST', '/revocations', { id: jti, type: 'JTI' });
    expect(expectCreated(created, 'revocations')).toBe(jti);
    await refusedOnB(access);
    const next = await refreshAsCSdk(ctl().http, refresh);
    expect(next.status).toBe(200);
    expectSuccess(await bearerApi(b.http, next.body.access_token).client('GET', '/current-identity'));
    const detail = await mgmt.call('GET', `/revocations/${jti}`);
    expectSuccess(detail);
    expect(detail.body.data).toMatchObject({ id: jti, type: 'JTI', expiresAt: expect.any(String) });
    expect(Date.parse(detail.body.data.expiresAt) - Date.now()).toBeGreaterThan(23 * 3600_000);
    const listed = await mgmt.call('GET', `/revocations?filter=${encodeURIComponent(`id = "${jti}"`)}`);
    expectList(listed);
    expect(listed.body.data).toEqual([expect.objectContaining({ id: jti, type: 'JTI' })]);
  });

  it('API_SESSION: every token of the session, and its refresh', async () => {
    const user = await createUser(mgmt);
    const { access, refresh } = await oidcLogin(user);
    await warmOnB(access);
    expectCreated(await mgmt.call('POST', '/revocations', { id: claimsOf(access).z_asid, type: 'API_SESSION' }), 'revocations');
    await refusedOnB(access);
    expect((await refreshAsCSdk(ctl().http, refresh)).body).toMatchObject({ error: 'invalid_grant' });
  });

  it('IDENTITY: tokens issued before it; a login after it works', async () => {
    const user = await createUser(mgmt);
    const { access } = await oidcLogin(user);
    await warmOnB(access);
    expectCreated(await mgmt.call('POST', '/revocations', { id: user.id, type: 'IDENTITY' }), 'revocations');
    await refusedOnB(access);
    await nextSecond(); // `iat` has a resolution of one second
    const fresh = await oidcLogin(user);
    expectSuccess(await bearerApi(b.http, fresh.access).client('GET', '/current-identity'));
  });

  it('validation: JTI and API_SESSION ids are UUIDs, IDENTITY names an identity', async () => {
    expectFieldError(await mgmt.call('POST', '/revocations', { id: 'not-a-valid-uuid', type: 'JTI' }), 'id');
    expectFieldError(await mgmt.call('POST', '/revocations', { id: 'not-a-valid-uuid', type: 'API_SESSION' }), 'id');
    expectError(await mgmt.call('POST', '/revocations', { id: '0b7c3b8e-3c7e-4a8c-9d64-0d3f8c1f5a11', type: 'IDENTITY' }), 404, 'NOT_FOUND');
    expectFieldError(await mgmt.call('POST', '/revocations', { id: '0b7c3b8e-3c7e-4a8c-9d64-0d3f8c1f5a11', type: 'EVERYTHING' }), 'type');
    const user = await createUser(mgmt);
    const { session } = await auth.login(ctl().http, user.username, user.password, 'client');
    expectError(await ctl().http.request({ method: 'GET', path: `${BASE.management}/revocations`, token: session.token }), 401, 'UNAUTHORIZED');
  });
});

describe('identity changes revoke', () => {
  it('disabling an identity refuses its tokens on the other replica at once', async () => {
    const user = await createUser(mgmt);
    const { access, refresh } = await oidcLogin(user);
    await warmOnB(access);
    expectEmpty(await mgmt.call('POST', `/identities/${user.id}/disable`, { durationMinutes: 0 }));
    await refusedOnB(access);
    expect((await refreshAsCSdk(ctl().http, refresh)).body).toMatchObject({ error: 'invalid_grant' });
    const revocation = await mgmt.call('GET', `/revocations/${user.id}`);
    expectSuccess(revocation);
    expect(revocation.body.data.type).toBe('IDENTITY');
  });

  it('deleting an identity refuses its tokens on the other replica at once', async () => {
    const user = await createUser(mgmt);
    const { access } = await oidcLogin(user);
    await warmOnB(access);
    expectEmpty(await mgmt.identities.delete(user.id));
    await refusedOnB(access);
  });
});

describe('key rotation', () => {
  it('a new key is published beside the old one; tokens signed by the old key and their refresh keep working', async () => {
    const user = await createUser(mgmt);
    const { access, refresh } = await oidcLogin(user);
    const oldKid = headerOf(access).kid;
    const cli = path.resolve(__dirname, '../../services/identity-auth/dist/rotate-oidc-key.js');
    const { stdout } = await promisify(execFile)(process.execPath, [cli], {
      env: { ...process.env, DATABASE_URL: ctl().options.databaseUrl!, ZITI_INTERNAL_SECRET: ctl().options.internalSecret! },
    });
    const newKid = /new OIDC signing key (\S+);/.exec(stdout)?.[1];
    expect(newKid).toBeTruthy();
    expect(newKid).not.toBe(oldKid);
    // The published set is at most a second old: the new key shows within that.
    const published = async () => ((await ctl().http.request({ method: 'GET', path: '/oidc/keys', validate: false })).body.keys as { kid: string }[]).map((k) => k.kid).sort();
    let kids = await published();
    for (const until = Date.now() + 1500; !kids.includes(newKid!) && Date.now() < until; kids = await published()) await new Promise((r) => setTimeout(r, 100));
    expect(kids).toEqual([oldKid, newKid].sort());
    expectSuccess(await bearerApi(ctl().http, access).client('GET', '/current-identity'));
    expectSuccess(await bearerApi(b.http, access).client('GET', '/current-identity'));
    const next = await refreshAsCSdk(ctl().http, refresh);
    expect(next.status).toBe(200);
    expectSuccess(await bearerApi(b.http, next.body.access_token).client('GET', '/current-identity'));
  });
});

describe('the TOTP token', () => {
  it('an OIDC session gets a signed TOTP token for a current code; it renews what the MFA posture check accepts', async () => {
    const net = networkBuilder(mgmt);
    const tag = net.unique('totp-token');
    await net.postureCheck('MFA', { timeoutSeconds: 3 }, [tag]);
    const serviceId = await net.service([tag]);
    const later = await net.service([tag]);
    await net.servicePolicy('Dial', [`#${tag}`], [`#${tag}`], [`#${tag}`]);
    await net.edgeRouter([tag]);
    await net.edgeRouterPolicy([`#${tag}`], [`#${tag}`]);
    await net.serviceEdgeRouterPolicy([`#${tag}`], [`#${tag}`]);
    const identity = await net.identity([tag]);
    const legacy = await auth.login(ctl().http, identity.username, identity.password, 'client');
    expectSuccess(await legacy.session.call('POST', '/current-identity/mfa'), 201);
    const secret = new URL((await legacy.session.call('GET', '/current-identity/mfa')).body.data.provisioningUrl).searchParams.get('secret')!;
    const codes = totpCodes(secret);
    expectSuccess(await legacy.session.call('POST', '/current-identity/mfa/verify', { code: codes() }));
    expectError(await legacy.session.call('POST', '/current-api-session/totp-token', { code: codes() }), 400, 'INVALID_BACKING_TOKEN_TYPE');

    const { access } = await oidcLogin(identity, codes);
    const api = bearerApi(ctl().http, access);
    expectSuccess(await api.client('POST', '/sessions', { serviceId, type: 'Dial' }), 201);
    await new Promise((r) => setTimeout(r, 3_500)); // the check's 3 s lapse
    expectError(await api.client('POST', '/sessions', { serviceId: later, type: 'Dial' }), 409, 'INVALID_POSTURE');

    expectError(await api.client('POST', '/current-api-session/totp-token', { code: '000000' }), 400, 'MFA_INVALID_TOKEN');
    const res = await api.client('POST', '/current-api-session/totp-token', { code: codes() });
    expectSuccess(res);
    const token = res.body.data.token as string;
    expect(headerOf(token)).toMatchObject({ alg: 'ES256', kid: expect.any(String) });
    const claims = claimsOf(token);
    expect(claims).toMatchObject({ sub: identity.id, z_asid: claimsOf(access).z_asid, z_t: 't', iss: ctl().url });
    expect(claims.exp).toBeUndefined();
    expect(Math.abs(Date.parse(res.body.data.issuedAt) - claims.iat * 1000)).toBeLessThan(1000);
    expectSuccess(await api.client('POST', '/sessions', { serviceId: later, type: 'Dial' }), 201);
  });
});
