import { X509Certificate } from 'node:crypto';
import { BASE, type EdgeApi, uniqueName } from '../support/clients.js';
import { authenticatorOf, certLogin, enrollOtt } from '../support/clients-cert.js';
import { authPolicyBody } from '../support/clients-identity.js';
import { cas, caBody, verifiedCa, withClientCert } from '../support/clients-pki.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectEmpty, expectError, expectFieldError, expectSuccess } from '../support/envelope.js';
import { fingerprintOf, thirdPartyCa } from '../support/x509.js';

/**
 * `POST /authenticate?method=cert` (reference §2.2 cert, §11.2/§11.7: the C SDK's body-less call
 * at the root): the session's certificate flags, the auth policy's certificate rules, disabled
 * identities, and third-party CAs (auto-enrollment at login, name format and clash counter,
 * externalId claims).
 */

const ctl = useController();
failOnConformanceProblems();

let mgmt: EdgeApi;
beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
});

const login = (cred: { certPem: string; keyPem: string }, o: Parameters<typeof certLogin>[2] = {}) => certLogin(ctl().http, cred, o);
const headerValues = (rawHeaders: string[], name: string) => rawHeaders.filter((_, i) => i % 2 === 0 && rawHeaders[i]!.toLowerCase() === name).length;

describe('network-issued certificates', () => {
  it('the C SDK call: the root alias with no body at all opens a session on the cert authenticator', async () => {
    const { id, cred } = await enrollOtt(ctl().http, mgmt);
    const res = await login(cred, { root: true, body: null });
    expectSuccess(res);
    const authenticator = await authenticatorOf(mgmt, id);
    expect(res.body.data).toMatchObject({
      identityId: id, authenticatorId: authenticator.id, isCertExtendable: true, isCertExtendRequested: false, isCertKeyRollRequested: false,
      improperClientCertChain: false, isMfaRequired: false,
    });
    expect(res.headers['ziti-authenticator-extend-requested']).toBeUndefined();
    expect(authenticator).toMatchObject({ fingerprint: fingerprintOf(cred.leaf), isIssuedByNetwork: true });
    const current = await ctl().http.get(`${BASE.client}/current-identity`, res.body.data.token);
    expectSuccess(current);
    expect(current.body.data).toMatchObject({ id, authenticators: { cert: { id: authenticator.id, fingerprint: fingerprintOf(cred.leaf) } }, enrollment: {} });
  });

  it('lastAuthResolvedToRoot follows each login: the full chain resolves to the root, the bare leaf does not', async () => {
    const { id, cred } = await enrollOtt(ctl().http, mgmt);
    const authenticator = await authenticatorOf(mgmt, id);
    expect(authenticator).toMatchObject({ isIssuedByNetwork: true, lastAuthResolvedToRoot: false });
    const session = await login(cred);
    expectSuccess(session);
    const token = session.body.data.token as string;
    const detail = await mgmt.call('GET', `/authenticators/${authenticator.id}`);
    expectSuccess(detail);
    expect(detail.body.data.lastAuthResolvedToRoot).toBe(true);
    const listed = await mgmt.call('GET', `/authenticators?filter=${encodeURIComponent(`id = "${authenticator.id}"`)}`);
    expect(listed.body.data).toEqual([expect.objectContaining({ id: authenticator.id, lastAuthResolvedToRoot: true })]);
    const own = await ctl().http.get(`${BASE.client}/current-identity/authenticators/${authenticator.id}`, token);
    expectSuccess(own);
    expect(own.body.data.lastAuthResolvedToRoot).toBe(true);

    const bare = await login({ certPem: cred.leaf.toString(), keyPem: cred.keyPem });
    expectSuccess(bare);
    expect(bare.body.data.improperClientCertChain).toBe(true);
    expect((await authenticatorOf(mgmt, id)).lastAuthResolvedToRoot).toBe(false);
    expectSuccess(await login(cred));
    expect((await authenticatorOf(mgmt, id)).lastAuthResolvedToRoot).toBe(true);
  });

  it('a certificate without an authenticator, or presented on another method, does not log in', async () => {
    const { cred } = await enrollOtt(ctl().http, mgmt);
    expectFieldError(await ctl().http.request({ method: 'POST', path: `${BASE.client}/authenticate?method=password`, clientCert: cred }), 'username');
    const { id, cred: other } = await enrollOtt(ctl().http, mgmt);
    expectEmpty(await mgmt.call('DELETE', `/authenticators/${(await authenticatorOf(mgmt, id)).id}`));
    expectError(await login(other), 401, 'INVALID_AUTH');
  });

  it('extend and key-roll requests both surface: two ziti-authenticator-extend-requested headers and the session flags', async () => {
    const { id, cred } = await enrollOtt(ctl().http, mgmt);
    expectSuccess(await mgmt.call('POST', `/authenticators/${(await authenticatorOf(mgmt, id)).id}/request-extend`, { rollKeys: true }));
    const res = await login(cred, { api: 'management' });
    expectSuccess(res);
    expect(headerValues(res.rawHeaders, 'ziti-authenticator-extend-requested')).toBe(2);
    expect(res.body.data).toMatchObject({ isCertExtendRequested: true, isCertKeyRollRequested: true, isCertExtendable: true });
    const current = await ctl().http.get(`${BASE.management}/current-api-session`, res.body.data.token);
    expect(current.body.data).toMatchObject({ isCertExtendRequested: true, isCertKeyRollRequested: true });
  });

  it('the auth policy decides: certificates not allowed → 401; a disabled identity → 401 until enabled', async () => {
    const { id, cred } = await enrollOtt(ctl().http, mgmt);
    const body = authPolicyBody(uniqueName('no-cert'));
    const noCert = expectCreated(await mgmt.call('POST', '/auth-policies', { ...body, primary: { ...body.primary, cert: { allowed: false, allowExpiredCerts: true } } }), 'auth-policies');
    expectEmpty(await mgmt.identities.patch(id, { authPolicyId: noCert }));
    expectError(await login(cred), 401, 'INVALID_AUTH');
    expectEmpty(await mgmt.identities.patch(id, { authPolicyId: 'default' }));
    expectSuccess(await login(cred));
    expectEmpty(await mgmt.call('POST', `/identities/${id}/disable`, { durationMinutes: 0 }));
    expectError(await login(cred), 401, 'INVALID_AUTH');
    expectEmpty(await mgmt.call('POST', `/identities/${id}/enable`));
    expectSuccess(await login(cred));
  });
});

describe('third-party CAs at login', () => {
  it('an unknown device of an auto-enrollment CA gets its identity at login; the same common name again gets a counter', async () => {
    const ca = thirdPartyCa();
    const name = uniqueName('Login CA');
    const caId = await verifiedCa(mgmt, ca, { name, identityRoles: ['fleet'] });
    const cn = uniqueName('cam');
    const first = ca.issue(cn);
    const res = await login(first);
    expectSuccess(res);
    expect(res.body.data).toMatchObject({ isCertExtendable: false, improperClientCertChain: false });
    const identity = (await mgmt.identities.get(res.body.data.identityId)).body.data;
    expect(identity).toMatchObject({ name: `${name}-${cn}`, roleAttributes: ['fleet'], type: { id: 'Default' }, isAdmin: false, authPolicyId: 'default' });
    const authenticator = await authenticatorOf(mgmt, identity.id);
    expect(authenticator).toMatchObject({ fingerprint: fingerprintOf(new X509Certificate(first.certPem)), isIssuedByNetwork: false });
    expect(res.body.data.authenticatorId).toBe(authenticator.id);

    const second = await login(ca.issue(cn));
    expectSuccess(second);
    expect(second.body.data.identityId).not.toBe(identity.id);
    expect((await mgmt.identities.get(second.body.data.identityId)).body.data.name).toBe(`${name}-${cn}000001`);
    expect((await login(first)).body.data.identityId).toBe(identity.id);
    expectEmpty(await cas(mgmt).delete(caId));
  });

  it('the CA name format may use [identityId] and [caId]', async () => {
    const ca = thirdPartyCa();
    const caId = await verifiedCa(mgmt, ca, { identityNameFormat: 'dev-[caId]-[identityId]' });
    const res = await login(ca.issue('anything'));
    expectSuccess(res);
    const id = res.body.data.identityId as string;
    expect((await mgmt.identities.get(id)).body.data.name).toBe(`dev-${caId}-${id}`);
  });

  it('without auto-enrollment an unknown device is refused; it logs in once an administrator gives it a cert authenticator', async () => {
    const ca = thirdPartyCa();
    await verifiedCa(mgmt, ca, { isAutoCaEnrollmentEnabled: false });
    const device = ca.issue(uniqueName('manual'));
    expectError(await login(device), 401, 'INVALID_AUTH');
    const identity = expectCreated(await mgmt.identities.create({ name: uniqueName('manual'), type: 'Device', isAdmin: false }), 'identities');
    expectCreated(await mgmt.call('POST', '/authenticators', { method: 'cert', identityId: identity, certPem: device.certPem }), 'authenticators');
    const res = await login(device);
    expectSuccess(res);
    expect(res.body.data.identityId).toBe(identity);
  });

  it('a CA with an externalId claim: a certificate without the claim is refused, one with it maps to the identity of that externalId', async () => {
    const ca = thirdPartyCa();
    await verifiedCa(mgmt, ca, {
      isAutoCaEnrollmentEnabled: false,
      externalIdClaim: { location: 'SAN_URI', matcher: 'SCHEME', matcherCriteria: 'spiffe', parser: 'NONE', parserCriteria: '', index: 0 },
    });
    const externalId = `spiffe://example.test/user/${uniqueName('u')}`;
    const identity = expectCreated(await mgmt.identities.create({ name: uniqueName('ext'), type: 'User', isAdmin: false, externalId }), 'identities');
    expectError(await login(ca.issue('no-claim')), 401, 'INVALID_AUTH');
    expectError(await login(ca.issue('unknown', { uris: ['spiffe://example.test/user/nobody'] })), 401, 'INVALID_AUTH');
    const res = await login(ca.issue('with-claim', { uris: [externalId] }));
    expectSuccess(res);
    expect(res.body.data).toMatchObject({ identityId: identity, authenticatorId: 'internal', isCertExtendable: false });
  });

  it('a CA that is not auth-enabled does not authenticate its devices', async () => {
    const ca = thirdPartyCa();
    const created = await cas(mgmt).create(caBody(ca, { isAuthEnabled: false }));
    expectCreated(created, 'cas');
    expectError(await withClientCert(ctl().http, ca.issue('x'), 'POST', '/authenticate?method=cert', {}), 401, 'INVALID_AUTH');
  });
});
