import { createPrivateKey } from 'node:crypto';
import { BASE, type EdgeApi, uniqueName } from '../support/clients.js';
import { authenticatorOf, certLogin, certSession, enrollOtt, withSessionAndCert } from '../support/clients-cert.js';
import { createUser, loginAs } from '../support/clients-identity.js';
import { enrollments, inMinutes, verifiedCa, withClientCert } from '../support/clients-pki.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectEmpty, expectError, expectFieldError, expectSuccess } from '../support/envelope.js';
import { certificates, csrPem, ecKeys, fingerprintOf, keyPem, thirdPartyCa } from '../support/x509.js';

/**
 * The certificate lifecycle of identity-auth (§1.2 authenticators, §6.7): admin `request-extend`
 * (one authenticator, or every one of an identity) and `re-enroll`, self-service `extend` and
 * `extend-verify`, with the controller's refusals (its 403s are 401s, §3.3).
 */

const ctl = useController();
failOnConformanceProblems();

let mgmt: EdgeApi;
let client: EdgeApi;
beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
  client = await ctl().adminSession('client');
});

describe('request-extend', () => {
  it('flags a network-issued cert authenticator (with key rolling when asked); the detail shows it', async () => {
    const { id } = await enrollOtt(ctl().http, mgmt);
    const authId = (await authenticatorOf(mgmt, id)).id as string;
    expectSuccess(await mgmt.call('POST', `/authenticators/${authId}/request-extend`, { rollKeys: false }));
    let a = (await mgmt.call('GET', `/authenticators/${authId}`)).body.data;
    expect(a).toMatchObject({ isExtendRequested: true, isKeyRollRequested: false, extendRequestedAt: expect.any(String) });
    expectSuccess(await mgmt.call('POST', `/authenticators/${authId}/request-extend`, { rollKeys: true }));
    a = (await mgmt.call('GET', `/authenticators/${authId}`)).body.data;
    expect(a).toMatchObject({ isExtendRequested: true, isKeyRollRequested: true });
  });

  it('refuses updb and third-party certificate authenticators (401), unknown ids (404) and non-admins (401)', async () => {
    const user = await createUser(mgmt);
    expectError(await mgmt.call('POST', `/authenticators/${(await authenticatorOf(mgmt, user.id, 'updb')).id}/request-extend`, { rollKeys: false }), 401, 'UNAUTHORIZED');
    const ca = thirdPartyCa();
    await verifiedCa(mgmt, ca);
    const device = ca.issue(uniqueName('tp'));
    const login = await certLogin(ctl().http, device);
    expectSuccess(login);
    const tpAuth = (await authenticatorOf(mgmt, login.body.data.identityId)).id as string;
    expectError(await mgmt.call('POST', `/authenticators/${tpAuth}/request-extend`, {}), 401, 'UNAUTHORIZED');
    expectError(await mgmt.call('POST', '/authenticators/nope/request-extend', {}), 404, 'NOT_FOUND');
    const { id } = await enrollOtt(ctl().http, mgmt);
    const limited = await createUser(mgmt, { permissions: ['identity'] });
    const { session } = await loginAs(ctl().http, limited);
    expectError(await session.call('POST', `/authenticators/${(await authenticatorOf(mgmt, id)).id}/request-extend`, {}), 401, 'UNAUTHORIZED');
  });

  it('identity-wide: flags every network-issued cert authenticator of the identity; one without any is refused', async () => {
    const { id, cred } = await enrollOtt(ctl().http, mgmt);
    expectSuccess(await mgmt.call('POST', `/identities/${id}/request-extend`, { rollKeys: true }));
    expect(await authenticatorOf(mgmt, id)).toMatchObject({ isExtendRequested: true, isKeyRollRequested: true });
    expect((await certLogin(ctl().http, cred)).body.data).toMatchObject({ isCertExtendRequested: true, isCertKeyRollRequested: true });
    const user = await createUser(mgmt);
    expectError(await mgmt.call('POST', `/identities/${user.id}/request-extend`, {}), 401, 'UNAUTHORIZED');
    expectError(await mgmt.call('POST', '/identities/nope/request-extend', {}), 404, 'NOT_FOUND');
  });
});

describe('re-enroll', () => {
  it('a updb authenticator becomes a updb enrollment of its username: the password stops working, the new one is enrolled', async () => {
    const user = await createUser(mgmt);
    const authId = (await authenticatorOf(mgmt, user.id, 'updb')).id as string;
    const res = await mgmt.call('POST', `/authenticators/${authId}/re-enroll`, { expiresAt: inMinutes(30) });
    const enrollmentId = expectCreated(res, 'enrollments');
    expect((await loginAs(ctl().http, user)).res.status).toBe(401);
    const e = (await enrollments(mgmt).get(enrollmentId)).body.data;
    expect(e).toMatchObject({ method: 'updb', identityId: user.id, username: user.username });
    expectSuccess(await ctl().http.post(`${BASE.client}/enroll?method=updb&token=${e.token}`, { password: 'Re-Enrolled-1!' }));
    expect((await loginAs(ctl().http, { username: user.username, password: 'Re-Enrolled-1!' })).res.status).toBe(200);
  });

  it('a certificate of a third-party CA becomes an ottca enrollment of that CA', async () => {
    const ca = thirdPartyCa();
    const caId = await verifiedCa(mgmt, ca);
    const login = await certLogin(ctl().http, ca.issue(uniqueName('tp')));
    const identityId = login.body.data.identityId as string;
    const res = await mgmt.call('POST', `/authenticators/${(await authenticatorOf(mgmt, identityId)).id}/re-enroll`, { expiresAt: inMinutes(30) });
    const e = (await enrollments(mgmt).get(expectCreated(res, 'enrollments'))).body.data;
    expect(e).toMatchObject({ method: 'ottca', caId, identityId });
  });

  it('an expiry in the past is refused and the authenticator stays; unknown ids are 404', async () => {
    const { id, cred } = await enrollOtt(ctl().http, mgmt);
    const authId = (await authenticatorOf(mgmt, id)).id as string;
    const res = await mgmt.call('POST', `/authenticators/${authId}/re-enroll`, { expiresAt: new Date(Date.now() - 60_000).toISOString() });
    expectFieldError(res, 'expiresAt');
    expectSuccess(await mgmt.call('GET', `/authenticators/${authId}`));
    expectSuccess(await certLogin(ctl().http, cred));
    expectError(await mgmt.call('POST', '/authenticators/nope/re-enroll', { expiresAt: inMinutes(5) }), 404, 'NOT_FOUND');
  });
});

describe('extend and extend-verify', () => {
  it('a new key: the new certificate authenticates only after verify, the flags clear and lastExtendRolledKeys is set', async () => {
    const { id, cred } = await enrollOtt(ctl().http, mgmt);
    const authId = (await authenticatorOf(mgmt, id)).id as string;
    expectSuccess(await mgmt.call('POST', `/authenticators/${authId}/request-extend`, { rollKeys: true }));
    const session = await certSession(ctl().http, cred, client);
    const keys = ecKeys();
    const ext = await withSessionAndCert(ctl().http, session, cred, 'POST', `/current-identity/authenticators/${authId}/extend`, { clientCertCsr: csrPem(keys) });
    expectSuccess(ext);
    const fresh = { certPem: ext.body.data.clientCert as string, keyPem: keyPem(keys) };
    expectError(await withSessionAndCert(ctl().http, session, cred, 'POST', `/current-identity/authenticators/${authId}/extend-verify`, { clientCert: cred.certPem }), 400, 'INVALID_CLIENT_CERT');
    expectEmpty(await session.call('POST', `/current-identity/authenticators/${authId}/extend-verify`, { clientCert: fresh.certPem }));
    const a = await authenticatorOf(mgmt, id);
    expect(a).toMatchObject({
      fingerprint: fingerprintOf(certificates(fresh.certPem)[0]!), isExtendRequested: false, isKeyRollRequested: false, lastExtendRolledKeys: true,
    });
    expectError(await certLogin(ctl().http, cred), 401, 'INVALID_AUTH');
    expectSuccess(await certLogin(ctl().http, fresh));
    expectError(await session.call('POST', `/current-identity/authenticators/${authId}/extend-verify`, { clientCert: fresh.certPem }), 409, 'CAN_NOT_UPDATE_AUTHENTICATOR');
  });

  it('the same key: lastExtendRolledKeys stays false', async () => {
    const { id, cred } = await enrollOtt(ctl().http, mgmt);
    const authId = (await authenticatorOf(mgmt, id)).id as string;
    const session = await certSession(ctl().http, cred, client);
    const sameKey = csrPem({ privateKey: createPrivateKey(cred.keyPem), publicKey: cred.leaf.publicKey });
    const ext = await withSessionAndCert(ctl().http, session, cred, 'POST', `/current-identity/authenticators/${authId}/extend`, { clientCertCsr: sameKey });
    expectSuccess(ext);
    expectEmpty(await session.call('POST', `/current-identity/authenticators/${authId}/extend-verify`, { clientCert: ext.body.data.clientCert }));
    expect(await authenticatorOf(mgmt, id)).toMatchObject({ lastExtendRolledKeys: false });
  });

  it('refusals: another identity\'s authenticator (401), a updb or third-party authenticator (409), unknown (404), a bad CSR (400)', async () => {
    const mine = await enrollOtt(ctl().http, mgmt);
    const other = await enrollOtt(ctl().http, mgmt);
    const session = await certSession(ctl().http, mine.cred, client);
    const myAuth = (await authenticatorOf(mgmt, mine.id)).id as string;
    const extend = (authId: string, csr = csrPem(ecKeys())) =>
      withSessionAndCert(ctl().http, session, mine.cred, 'POST', `/current-identity/authenticators/${authId}/extend`, { clientCertCsr: csr });
    expectError(await extend((await authenticatorOf(mgmt, other.id)).id), 401, 'UNAUTHORIZED');
    expectError(await extend('nope'), 404, 'NOT_FOUND');
    expectError(await extend(myAuth, 'not a csr'), 400, 'COULD_NOT_PROCESS_CSR');
    expectError(await withSessionAndCert(ctl().http, session, other.cred, 'POST', `/current-identity/authenticators/${myAuth}/extend`, { clientCertCsr: csrPem(ecKeys()) }), 401, 'UNAUTHORIZED');

    const user = await createUser(mgmt);
    const { session: pw } = await loginAs(ctl().http, user, 'client');
    const updbAuth = (await authenticatorOf(mgmt, user.id, 'updb')).id as string;
    expectError(await pw.call('POST', `/current-identity/authenticators/${updbAuth}/extend`, { clientCertCsr: csrPem(ecKeys()) }), 409, 'CAN_NOT_UPDATE_AUTHENTICATOR');

    const ca = thirdPartyCa();
    await verifiedCa(mgmt, ca);
    const device = ca.issue(uniqueName('tp'));
    const login = await certLogin(ctl().http, device);
    const tpAuth = (await authenticatorOf(mgmt, login.body.data.identityId)).id as string;
    const res = await withClientCert(ctl().http, device, 'POST', `/current-identity/authenticators/${tpAuth}/extend`, { clientCertCsr: csrPem(ecKeys()) });
    expectError(res, 401, 'UNAUTHORIZED'); // no session token
    const tpSession = client.withToken(login.body.data.token);
    expectError(await withSessionAndCert(ctl().http, tpSession, device, 'POST', `/current-identity/authenticators/${tpAuth}/extend`, { clientCertCsr: csrPem(ecKeys()) }), 409, 'CAN_NOT_UPDATE_AUTHENTICATOR');
  });
});
