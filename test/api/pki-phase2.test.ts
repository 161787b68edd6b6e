// Issue 4 end to end: identity-auth's side of certificate authentication and enrollment
// (services/pki-enrollment/README.md, "Phase 2") driven as an SDK would, through the gateway:
// an enrollment JWT verified with the TLS certificate served at its issuer, a CSR enrolled, then
// `method=cert` over a fresh mTLS connection; third-party CAs (verify, ottca, auto-enrollment);
// extend / extend-verify, request-extend and re-enroll; routers (policy's /edge-routers).
import { X509Certificate } from 'node:crypto';
import { BASE, EdgeApi, uniqueName } from '../support/clients.js';
import {
  cas, caBody, caCerts, deviceKeys, enrollPem, enrollments, jose, newEnrollment, newIdentity, verifiedCa, withClientCert,
} from '../support/clients-pki.js';
import { authPolicyBody } from '../support/clients-identity.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectEmpty, expectError, expectFieldError, expectList, expectSuccess } from '../support/envelope.js';
import type { HttpResponse } from '../support/http.js';
import { certificates, chainsTo, csrPem, ecKeys, fingerprintOf, keyPem, pkcs7Certificates, servedCertificate, thirdPartyCa } from '../support/x509.js';

const ctl = useController();
failOnConformanceProblems();

let mgmt: EdgeApi;
let served: X509Certificate;
beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
  const url = new URL(ctl().url);
  served = await servedCertificate(url.hostname, Number(url.port));
});

interface Credential {
  certPem: string;
  keyPem: string;
}

/** `POST /authenticate?method=cert` presenting `cert` (default: the client API base; `root` = un-prefixed, as the C SDK does). */
function certLogin(cred: Credential | undefined, o: { root?: boolean; api?: 'client' | 'management' } = {}): Promise<HttpResponse> {
  const path = o.root ? '/authenticate?method=cert' : `${BASE[o.api ?? 'client']}/authenticate?method=cert`;
  return ctl().http.request({ method: 'POST', path, json: { sdkInfo: { type: 'phase2-test' } }, clientCert: cred });
}

/**
 * What an SDK does with an enrollment JWT (sdk-golang `ziti/enroll`): fetch the TLS certificate
 * served at the JWT's issuer and verify the JWT with it, fetch the CAs, enroll a CSR.
 */
async function sdkEnroll(jwt: string): Promise<Credential & { leaf: X509Certificate }> {
  const { jwtVerify, decodeJwt } = await jose();
  const claims = decodeJwt(jwt);
  const iss = new URL(claims.iss as string);
  const atIssuer = await servedCertificate(iss.hostname, Number(iss.port || 443));
  expect(atIssuer.fingerprint256).toBe(served.fingerprint256);
  await jwtVerify(jwt, atIssuer.publicKey, { issuer: claims.iss as string, audience: '' });
  const cacerts = pkcs7Certificates((await caCerts(ctl().http, `${BASE.client}/.well-known/est/cacerts`)).text);
  expect(cacerts.length).toBeGreaterThan(0);
  const keys = ecKeys();
  const res = await enrollPem(ctl().http, claims.jti as string, csrPem(keys, { commonName: uniqueName('sdk') }), { method: claims.em as string });
  expectSuccess(res);
  const chain = certificates(res.body.data.cert);
  expect(chainsTo(chain[0]!, chain.slice(1), cacerts[0]!)).toBe(true);
  return { certPem: res.body.data.cert, keyPem: keyPem(keys), leaf: chain[0]! };
}

describe('OTT enrollment to certificate authentication (the "done when" of issue 4)', () => {
  it('identity create with enrollment {ott: true} → detail enrollment.ott → enroll → authenticate with the certificate over mTLS', async () => {
    const name = uniqueName('ott-device');
    const id = expectCreated(await mgmt.identities.create({ name, type: 'Device', isAdmin: false, enrollment: { ott: true } }), 'identities');
    const detail = (await mgmt.identities.get(id)).body.data;
    expect(detail.enrollment.ott).toMatchObject({ id: expect.any(String), jwt: expect.any(String), token: expect.any(String), expiresAt: expect.any(String) });
    const { decodeJwt } = await jose();
    expect(decodeJwt(detail.enrollment.ott.jwt)).toMatchObject({ sub: id, em: 'ott', jti: detail.enrollment.ott.token, aud: [''] });

    const cred = await sdkEnroll(detail.enrollment.ott.jwt);
    expect(cred.leaf.subjectAltName).toMatch(new RegExp(`URI:spiffe://[^/]+/identity/${id}$`));

    const login = await certLogin(cred);
    expectSuccess(login);
    expect(login.body.data).toMatchObject({ identityId: id, identity: { id, name }, improperClientCertChain: false });
    expect(login.headers['zt-session']).toBe(login.body.data.token);

    const after = (await mgmt.identities.get(id)).body.data;
    expect(after.enrollment).toEqual({});
    expect(after.authenticators.cert).toMatchObject({ fingerprint: fingerprintOf(cred.leaf) });
    expectError(await enrollPem(ctl().http, detail.enrollment.ott.token, deviceKeys().csr), 400, 'INVALID_ENROLLMENT_TOKEN');

    expectSuccess(await certLogin(cred, { root: true }));
    expectSuccess(await certLogin(cred, { api: 'management' }));
  });

  it('a leaf presented without its intermediate still authenticates, flagged improperClientCertChain', async () => {
    const identity = await newIdentity(mgmt);
    const e = await newEnrollment(mgmt, { method: 'ott', identityId: identity.id });
    const cred = await sdkEnroll(e.jwt);
    const login = await certLogin({ certPem: cred.leaf.toString(), keyPem: cred.keyPem });
    expectSuccess(login);
    expect(login.body.data.improperClientCertChain).toBe(true);
  });

  it('refuses no certificate, a forged one (same subject, other key), and one from an unverified CA', async () => {
    expectError(await certLogin(undefined), 401, 'INVALID_AUTH');
    const identity = await newIdentity(mgmt);
    const e = await newEnrollment(mgmt, { method: 'ott', identityId: identity.id });
    const cred = await sdkEnroll(e.jwt);
    const forgerCa = thirdPartyCa(cred.leaf.issuer.replace(/^.*CN=/s, ''));
    expectError(await certLogin(forgerCa.issue(cred.leaf.subject.replace(/^.*CN=/s, ''))), 401, 'INVALID_AUTH');
    const unverified = thirdPartyCa();
    expectCreated(await cas(mgmt).create(caBody(unverified)), 'cas');
    expectError(await certLogin(unverified.issue('x')), 401, 'INVALID_AUTH');
  });

  it('an enrollment for an unknown identity is refused (400 identityId), and /identities/{unknown}/enrollments is 404', async () => {
    expectFieldError(await enrollments(mgmt).create({ method: 'ott', identityId: 'no-such-identity', expiresAt: new Date(Date.now() + 60_000).toISOString() }), 'identityId');
    expectError(await mgmt.call('GET', '/identities/no-such-identity/enrollments'), 404, 'NOT_FOUND');
  });

  it('deleting an identity deletes its outstanding enrollments at once', async () => {
    const identity = await newIdentity(mgmt);
    const e = await newEnrollment(mgmt, { method: 'ott', identityId: identity.id });
    expectEmpty(await mgmt.identities.delete(identity.id));
    expectError(await enrollments(mgmt).get(e.id), 404, 'NOT_FOUND');
  });
});

describe('UPDB enrollment', () => {
  it('identity create with enrollment {updb: username} → enroll a password → password login', async () => {
    const username = uniqueName('updb');
    const id = expectCreated(await mgmt.identities.create({ name: username, type: 'User', isAdmin: false, enrollment: { updb: username } }), 'identities');
    const e = (await mgmt.identities.get(id)).body.data.enrollment.updb;
    expect((await jose()).decodeJwt(e.jwt).em).toBe('updb');
    const res = await ctl().http.post(`${BASE.client}/enroll?method=updb&token=${e.token}`, { password: 'Phase2-Secret!' });
    expectSuccess(res);
    expect(res.body.data.username).toBe(username);
    const login = await ctl().http.post(`${BASE.client}/authenticate?method=password`, { username, password: 'Phase2-Secret!' });
    expectSuccess(login);
  });
});

describe('third-party CAs', () => {
  it('OTT-CA: identity create with enrollment {ottca: caId} → enroll with the CA certificate → authenticate with it', async () => {
    const ca = thirdPartyCa();
    const caId = await verifiedCa(mgmt, ca);
    const id = expectCreated(await mgmt.identities.create({ name: uniqueName('ottca'), type: 'Device', isAdmin: false, enrollment: { ottca: caId } }), 'identities');
    const e = (await mgmt.identities.get(id)).body.data.enrollment.ottca;
    expect(e).toMatchObject({ caId, jwt: expect.any(String) });
    const device = ca.issue(uniqueName('dev'));
    expectSuccess(await withClientCert(ctl().http, device, 'POST', '/enroll/ottca', { token: e.token }));
    const login = await certLogin(device);
    expectSuccess(login);
    expect(login.body.data.identityId).toBe(id);
  });

  it('auto-enrollment: the device gets an identity named by the CA format, with the CA roles, and authenticates', async () => {
    const ca = thirdPartyCa();
    const name = uniqueName('Auto CA');
    await verifiedCa(mgmt, ca, { name, identityRoles: ['auto', 'iot'] });
    const cn = uniqueName('sensor');
    const device = ca.issue(cn);
    expectSuccess(await withClientCert(ctl().http, device, 'POST', '/enroll/ca'));
    const login = await certLogin(device);
    expectSuccess(login);
    const identity = (await mgmt.identities.get(login.body.data.identityId)).body.data;
    expect(identity).toMatchObject({ name: `${name}-${cn}`, roleAttributes: ['auto', 'iot'] });
    expect(identity.authenticators.cert.fingerprint).toBe(fingerprintOf(new X509Certificate(device.certPem)));
  });

  it('auto-enrollment with an externalId claim: the identity carries the externalId and authenticates by it', async () => {
    const ca = thirdPartyCa();
    await verifiedCa(mgmt, ca, { externalIdClaim: { location: 'SAN_URI', matcher: 'SCHEME', matcherCriteria: 'spiffe', parser: 'NONE', parserCriteria: '', index: 0 } });
    const externalId = `spiffe://example.test/device/${uniqueName('d')}`;
    const device = ca.issue('with-claim', { uris: [externalId] });
    expectSuccess(await withClientCert(ctl().http, device, 'POST', '/enroll/ca'));
    const login = await certLogin(device);
    expectSuccess(login);
    expect((await mgmt.identities.get(login.body.data.identityId)).body.data.externalId).toBe(externalId);
  });

  it('an expired certificate authenticates only while the auth policy allows expired certificates', async () => {
    const ca = thirdPartyCa();
    await verifiedCa(mgmt, ca, { isAutoCaEnrollmentEnabled: false });
    const expired = ca.issue(uniqueName('old'), { notAfter: new Date(Date.now() - 60_000) });
    expect(Date.parse(new X509Certificate(expired.certPem).validTo)).toBeLessThan(Date.now());
    const policy = authPolicyBody(uniqueName('no-expired'));
    const strict = expectCreated(await mgmt.call('POST', '/auth-policies', { ...policy, primary: { ...policy.primary, cert: { allowed: true, allowExpiredCerts: false } } }), 'auth-policies');
    const identity = await newIdentity(mgmt);
    expectCreated(await mgmt.call('POST', '/authenticators', { method: 'cert', identityId: identity.id, certPem: expired.certPem }), 'authenticators');
    expectSuccess(await certLogin(expired)); // the default policy allows expired certificates
    expectEmpty(await mgmt.identities.patch(identity.id, { authPolicyId: strict }));
    expectError(await certLogin(expired), 401, 'INVALID_AUTH');
  });

  it('deleting a CA deletes its certificate authenticators: its devices can no longer authenticate', async () => {
    const ca = thirdPartyCa();
    const caId = await verifiedCa(mgmt, ca);
    const device = ca.issue(uniqueName('gone'));
    expectSuccess(await withClientCert(ctl().http, device, 'POST', '/enroll/ca'));
    expectSuccess(await certLogin(device));
    expectEmpty(await cas(mgmt).delete(caId));
    expectError(await certLogin(device), 401, 'INVALID_AUTH');
  });
});

describe('certificate lifecycle', () => {
  async function enrolled(): Promise<{ id: string; cred: Credential & { leaf: X509Certificate }; session: EdgeApi }> {
    const identity = await newIdentity(mgmt);
    const e = await newEnrollment(mgmt, { method: 'ott', identityId: identity.id });
    const cred = await sdkEnroll(e.jwt);
    const login = await certLogin(cred);
    expectSuccess(login);
    return { id: identity.id, cred, session: new EdgeApi(ctl().http, 'client', login.body.data.token) };
  }

  it('extend issues a new certificate while the old one works; extend-verify switches to the new one', async () => {
    const { cred, session: client } = await enrolled();
    const list = await client.call('GET', '/current-identity/authenticators');
    expectList(list);
    const authId = list.body.data.find((a: { method: string }) => a.method === 'cert').id as string;
    const keys = ecKeys();
    const extendPath = `${BASE.client}/current-identity/authenticators/${authId}/extend`;
    const csr = csrPem(keys, { commonName: 'extended' });
    // The SDK extends over its current mTLS connection: without the current certificate it is refused.
    expectError(await client.call('POST', `/current-identity/authenticators/${authId}/extend`, { clientCertCsr: csr }), 401, 'UNAUTHORIZED');
    const ext = await ctl().http.request({ method: 'POST', path: extendPath, json: { clientCertCsr: csr }, token: client.token, clientCert: cred });
    expectSuccess(ext);
    const issued = certificates(ext.body.data.clientCert)[0]!;
    const bundle = certificates(ext.body.data.ca);
    const root = bundle.find((c) => c.checkIssued(c) && c.verify(c.publicKey))!;
    expect(chainsTo(issued, bundle.filter((c) => c !== root), root)).toBe(true);
    expect(issued.publicKey.export({ type: 'spki', format: 'der' })).toEqual(keys.publicKey.export({ type: 'spki', format: 'der' }));
    expectError(await certLogin({ certPem: ext.body.data.clientCert, keyPem: keyPem(keys) }), 401, 'INVALID_AUTH');
    const fresh = { certPem: ext.body.data.clientCert, keyPem: keyPem(keys) };
    expectSuccess(await certLogin(cred));
    expectEmpty(await client.call('POST', `/current-identity/authenticators/${authId}/extend-verify`, { clientCert: ext.body.data.clientCert }));
    expectError(await certLogin(cred), 401, 'INVALID_AUTH');
    expectSuccess(await certLogin(fresh));
  });

  it('admin request-extend surfaces on the next certificate session and its ziti-authenticator-extend-requested header', async () => {
    const { id, cred } = await enrolled();
    const auths = await mgmt.call('GET', `/identities/${id}/authenticators`);
    const authId = auths.body.data.find((a: { method: string }) => a.method === 'cert').id as string;
    expectSuccess(await mgmt.call('POST', `/authenticators/${authId}/request-extend`, { rollKeys: false }));
    const login = await certLogin(cred);
    expectSuccess(login);
    expect(login.headers['ziti-authenticator-extend-requested']).toBe('true');
    expect(login.body.data).toMatchObject({ isCertExtendRequested: true });
  });

  it('re-enroll turns the certificate authenticator into an OTT enrollment: the old certificate stops working', async () => {
    const { id, cred } = await enrolled();
    const auths = await mgmt.call('GET', `/identities/${id}/authenticators`);
    const authId = auths.body.data.find((a: { method: string }) => a.method === 'cert').id as string;
    const res = await mgmt.call('POST', `/authenticators/${authId}/re-enroll`, { expiresAt: new Date(Date.now() + 3600_000).toISOString() });
    expectCreated(res, 'enrollments');
    expectError(await certLogin(cred), 401, 'INVALID_AUTH');
    const e = (await enrollments(mgmt).get(res.body.data.id)).body.data;
    expect(e).toMatchObject({ method: 'ott', identityId: id });
    expectSuccess(await certLogin(await sdkEnroll(e.jwt)));
  });
});

describe('routers (policy context: /edge-routers)', () => {
  it('edge router: enroll with its JWT (erott), extend with the current certificate, re-enroll invalidates the old JWT', async () => {
    const created = await mgmt.call('POST', '/edge-routers', { name: uniqueName('er'), isTunnelerEnabled: false });
    const routerId = expectCreated(created, 'edge-routers');
    const er = (await mgmt.call('GET', `/edge-routers/${routerId}`)).body.data;
    const { decodeJwt } = await jose();
    const claims = decodeJwt(er.enrollmentJwt);
    expect(claims).toMatchObject({ em: 'erott', sub: routerId, jti: er.enrollmentToken, aud: [''] });
    // The outstanding enrollment's creation time, as the controller renders it (ZAC shows it).
    expect(Date.parse(er.enrollmentCreatedAt)).toBeGreaterThanOrEqual(Date.parse(er.createdAt));
    expect(Date.parse(er.enrollmentCreatedAt)).toBeLessThan(Date.parse(er.enrollmentExpiresAt));
    const clientKeys = ecKeys();
    const res = await ctl().http.post(`${BASE.client}/enroll?method=erott&token=${er.enrollmentToken}`, {
      certCsr: csrPem(clientKeys, { commonName: routerId }),
      serverCertCsr: csrPem(ecKeys(), { commonName: routerId, dns: ['er.example.test'] }),
    });
    expectSuccess(res);
    const after = (await mgmt.call('GET', `/edge-routers/${routerId}`)).body.data;
    expect(after).toMatchObject({ isVerified: true, fingerprint: fingerprintOf(new X509Certificate(res.body.data.cert)), enrollmentCreatedAt: null });

    const current = { certPem: res.body.data.cert, keyPem: keyPem(clientKeys) };
    const extendBody = () => ({ certCsr: csrPem(ecKeys(), { commonName: routerId }), serverCertCsr: csrPem(ecKeys(), { commonName: routerId }) });
    expectSuccess(await withClientCert(ctl().http, current, 'POST', '/enroll/extend/router', extendBody()));
    expectError(await withClientCert(ctl().http, current, 'POST', '/enroll/extend/router', extendBody()), 401, 'UNAUTHORIZED');

    expectSuccess(await mgmt.call('POST', `/edge-routers/${routerId}/re-enroll`));
    const reenrolled = (await mgmt.call('GET', `/edge-routers/${routerId}`)).body.data;
    expect(reenrolled.enrollmentToken).not.toBe(er.enrollmentToken);
    expectError(await ctl().http.post(`${BASE.client}/enroll/erott`, { token: er.enrollmentToken, clientCsr: 'x', serverCsr: 'y' }), 400, 'INVALID_ENROLLMENT_TOKEN');
  });
});
