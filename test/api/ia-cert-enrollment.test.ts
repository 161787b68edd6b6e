import { BASE, type EdgeApi, uniqueName } from '../support/clients.js';
import { authenticatorOf, certLogin, enrollOtt } from '../support/clients-cert.js';
import { authPolicyBody, createUser } from '../support/clients-identity.js';
import { enrollments, inMinutes, jose, verifiedCa, withClientCert } from '../support/clients-pki.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectError, expectFieldError, expectList, expectSuccess } from '../support/envelope.js';
import { csrPem, ecKeys, thirdPartyCa } from '../support/x509.js';

/**
 * Identities and their enrollments as identity-auth serves them (§6.5, §1.2 identities): create
 * with `enrollment: {ott | ottca | updb}` (nothing half-written when an enrollment is refused), the
 * `enrollment` block of detail, list and current identity, and the authenticators pki-enrollment's
 * enroll flows ask identity-auth to create (password rules, unique usernames and fingerprints).
 */

const ctl = useController();
failOnConformanceProblems();

let mgmt: EdgeApi;
beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
});

const byName = (name: string) => mgmt.call('GET', `/identities?filter=${encodeURIComponent(`name = "${name}"`)}`);

describe('identity create with enrollments', () => {
  it('ott and updb together: both blocks in the detail and in the list (with JWT claims of §6.5)', async () => {
    const name = uniqueName('both');
    const id = expectCreated(await mgmt.identities.create({ name, type: 'User', isAdmin: false, enrollment: { ott: true, updb: name } }), 'identities');
    const detail = (await mgmt.identities.get(id)).body.data;
    expect(Object.keys(detail.enrollment).sort()).toEqual(['ott', 'updb']);
    const { decodeJwt } = await jose();
    expect(decodeJwt(detail.enrollment.ott.jwt)).toMatchObject({ sub: id, em: 'ott', jti: detail.enrollment.ott.token });
    expect(decodeJwt(detail.enrollment.updb.jwt)).toMatchObject({ sub: id, em: 'updb', jti: detail.enrollment.updb.token });
    const list = await byName(name);
    expectList(list);
    expect(list.body.data[0].enrollment).toEqual(detail.enrollment);
    const own = (await enrollments(mgmt).list({ filter: `identity = "${id}"` })).body.data.map((e: { method: string }) => e.method).sort();
    expect(own).toEqual(['ott', 'updb']);
  });

  it('ottca: the block names its CA (entityRef to ./cas/<id>)', async () => {
    const caName = uniqueName('Enroll CA');
    const caId = await verifiedCa(mgmt, thirdPartyCa(), { name: caName });
    const id = expectCreated(await mgmt.identities.create({ name: uniqueName('ottca'), type: 'Device', isAdmin: false, enrollment: { ottca: caId } }), 'identities');
    expect((await mgmt.identities.get(id)).body.data.enrollment.ottca).toMatchObject({
      caId, ca: { id: caId, name: caName, entity: 'cas', _links: { self: { href: `./cas/${caId}` } } }, jwt: expect.any(String), token: expect.any(String),
    });
  });

  it('an enrollment refused (unknown CA) fails the create and leaves nothing behind', async () => {
    const name = uniqueName('half');
    const count = async () => (await enrollments(mgmt).list({ limit: 1 })).body.meta.pagination.totalCount as number;
    const before = await count();
    expectFieldError(await mgmt.identities.create({ name, type: 'Device', isAdmin: false, enrollment: { ott: true, ottca: 'no-such-ca' } }), 'caId');
    expect((await byName(name)).body.data).toEqual([]);
    expect(await count()).toBe(before); // the ott enrollment made before the ottca one was refused is gone too
    const again = expectCreated(await mgmt.identities.create({ name, type: 'Device', isAdmin: false, enrollment: { ott: true } }), 'identities');
    expect((await enrollments(mgmt).list({ filter: `identity = "${again}"` })).body.data).toHaveLength(1);
  });

  it('a second ott enrollment of the identity is 409 ENROLLMENT_EXISTS; without enrollments the block is {}', async () => {
    const id = expectCreated(await mgmt.identities.create({ name: uniqueName('dup'), type: 'Device', isAdmin: false, enrollment: { ott: true } }), 'identities');
    expectError(await enrollments(mgmt).create({ method: 'ott', identityId: id, expiresAt: inMinutes(30) }), 409, 'ENROLLMENT_EXISTS');
    const plain = expectCreated(await mgmt.identities.create({ name: uniqueName('plain'), type: 'Device', isAdmin: false, enrollment: {} }), 'identities');
    expect((await mgmt.identities.get(plain)).body.data.enrollment).toEqual({});
  });
});

describe('the authenticators the enroll flows create', () => {
  it('updb: the password must follow the identity\'s auth policy; the enrollment survives a refused password', async () => {
    const policy = expectCreated(await mgmt.call('POST', '/auth-policies', authPolicyBody(uniqueName('strict'), { updb: { minPasswordLength: 12, requireNumberChar: true } })), 'auth-policies');
    const username = uniqueName('strict-user');
    const id = expectCreated(await mgmt.identities.create({ name: username, type: 'User', isAdmin: false, authPolicyId: policy, enrollment: { updb: username } }), 'identities');
    const token = (await mgmt.identities.get(id)).body.data.enrollment.updb.token as string;
    expectFieldError(await ctl().http.post(`${BASE.client}/enroll?method=updb&token=${token}`, { password: 'short1' }), 'password');
    expectFieldError(await ctl().http.post(`${BASE.client}/enroll?method=updb&token=${token}`, { password: 'long-enough-but-no-digit' }), 'password');
    expectSuccess(await ctl().http.post(`${BASE.client}/enroll?method=updb&token=${token}`, { password: 'long-enough-4-sure' }));
    expect((await mgmt.identities.get(id)).body.data.authenticators.updb).toMatchObject({ username });
  });

  it('updb: a username another authenticator has is refused (400 username)', async () => {
    const taken = await createUser(mgmt);
    const id = expectCreated(await mgmt.identities.create({ name: uniqueName('clash'), type: 'User', isAdmin: false, enrollment: { updb: taken.username } }), 'identities');
    const token = (await mgmt.identities.get(id)).body.data.enrollment.updb.token as string;
    expectFieldError(await ctl().http.post(`${BASE.client}/enroll?method=updb&token=${token}`, { password: 'Some-Password-1' }), 'username');
  });

  it('ott: an identity that already has a cert authenticator cannot enroll a second (409 MAX_AUTHENTICATOR_METHODS_REACHED)', async () => {
    const { id } = await enrollOtt(ctl().http, mgmt);
    const e = await enrollments(mgmt).create({ method: 'ott', identityId: id, expiresAt: inMinutes(30) });
    const token = (await enrollments(mgmt).get(expectCreated(e, 'enrollments'))).body.data.token as string;
    const res = await ctl().http.request({ method: 'POST', path: `${BASE.client}/enroll?method=ott&token=${token}`, raw: csrPem(ecKeys()), headers: { 'content-type': 'application/x-pem-file' } });
    expectError(res, 409, 'MAX_AUTHENTICATOR_METHODS_REACHED');
    expect((await authenticatorOf(mgmt, id)).isIssuedByNetwork).toBe(true);
  });

  it('ottca: a certificate that already authenticates someone is 409 CERT_IN_USE', async () => {
    const ca = thirdPartyCa();
    const caId = await verifiedCa(mgmt, ca);
    const device = ca.issue(uniqueName('shared'));
    expectSuccess(await certLogin(ctl().http, device)); // auto-enrolled: the fingerprint now belongs to that identity
    const id = expectCreated(await mgmt.identities.create({ name: uniqueName('second'), type: 'Device', isAdmin: false, enrollment: { ottca: caId } }), 'identities');
    const token = (await mgmt.identities.get(id)).body.data.enrollment.ottca.token as string;
    expectError(await withClientCert(ctl().http, device, 'POST', '/enroll/ottca', { token }), 409, 'CERT_IN_USE');
    expect((await mgmt.identities.get(id)).body.data.enrollment.ottca.token).toBe(token);
  });
});
