import type { EdgeApi } from '../support/clients.js';
import { uniqueName } from '../support/clients.js';
import { createUser, loginAs, selfSignedCert } from '../support/clients-identity.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectEmpty, expectError, expectFieldError, expectList, expectSuccess } from '../support/envelope.js';
import { expectValid } from '../support/spec-validator.js';

/** `/authenticators`, `/identities/{id}/authenticators` and `/current-identity/authenticators` (authenticator_test.go). */

const ctl = useController();
failOnConformanceProblems();

let mgmt: EdgeApi;
beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
});

const newIdentity = async () => expectCreated(await mgmt.identities.create({ name: uniqueName('authn'), type: 'Device', isAdmin: false }), 'identities');

describe('management', () => {
  it('creates a updb authenticator that logs in; hashes and salts are never shown', async () => {
    const id = await newIdentity();
    const username = uniqueName('updb');
    const aid = expectCreated(await mgmt.call('POST', '/authenticators', { method: 'updb', identityId: id, username, password: 'first-pass' }), 'authenticators');
    expectSuccess((await loginAs(ctl().http, { username, password: 'first-pass' })).res);
    const res = await mgmt.call('GET', `/authenticators/${aid}`);
    expectValid('management', 'GET', '/authenticators/{id}', 200, res.body);
    expect(res.body.data).toMatchObject({ id: aid, method: 'updb', username, identityId: id, identity: { id, entity: 'identities' }, _links: { self: { href: `./authenticators/${aid}` }, identities: { href: `./identities/${id}` } } });
    expect(res.text).not.toMatch(/"password"|"salt"/);
    const list = await mgmt.call('GET', `/authenticators?filter=${encodeURIComponent(`identity = "${id}"`)}`);
    expectList(list);
    expect(list.body.data).toHaveLength(1);
    expect(list.text).not.toMatch(/"password"|"salt"/);
  });

  it('a second updb authenticator for one identity → 409 MAX_AUTHENTICATOR_METHODS_REACHED', async () => {
    const user = await createUser(mgmt);
    expectError(await mgmt.call('POST', '/authenticators', { method: 'updb', identityId: user.id, username: uniqueName('second'), password: 'second-pass' }), 409, 'MAX_AUTHENTICATOR_METHODS_REACHED');
  });

  it('creates a cert authenticator: fingerprint = SHA-1 of the DER; a certificate in use is 409', async () => {
    const id = await newIdentity();
    const cert = selfSignedCert('authn-cert');
    const aid = expectCreated(await mgmt.call('POST', '/authenticators', { method: 'cert', identityId: id, certPem: cert.certPem }), 'authenticators');
    const d = (await mgmt.call('GET', `/authenticators/${aid}`)).body.data;
    expect(d).toMatchObject({ method: 'cert', certPem: cert.certPem, fingerprint: cert.fingerprint, isIssuedByNetwork: false });
    expect((await mgmt.identities.get(id)).body.data.authenticators).toEqual({ cert: { id: aid, fingerprint: cert.fingerprint } });
    expectError(await mgmt.call('POST', '/authenticators', { method: 'cert', identityId: await newIdentity(), certPem: cert.certPem }), 409, 'CERT_IN_USE');
    expectError(await mgmt.call('POST', '/authenticators', { method: 'cert', identityId: await newIdentity(), certPem: 'not a certificate' }), 400, 'INVALID_CERT_PEM');
    expectError(await mgmt.call('PATCH', `/authenticators/${aid}`, { password: 'new-pass' }), 409, 'CAN_NOT_UPDATE_AUTHENTICATOR');
  });

  it('validates the method and the identity', async () => {
    expectFieldError(await mgmt.call('POST', '/authenticators', { method: 'magic', identityId: await newIdentity() }), 'method');
    expectFieldError(await mgmt.call('POST', '/authenticators', { identityId: 'x' }), 'method');
    expectError(await mgmt.call('POST', '/authenticators', { method: 'updb', identityId: 'does-not-exist', username: uniqueName('u'), password: 'some-pass' }), 404, 'NOT_FOUND');
  });

  it('PUT and PATCH change the credentials; DELETE removes the login', async () => {
    const user = await createUser(mgmt);
    const aid = (await mgmt.call('GET', `/identities/${user.id}/authenticators`)).body.data[0].id;
    expectEmpty(await mgmt.call('PATCH', `/authenticators/${aid}`, { password: 'patched-pass' }));
    expectSuccess((await loginAs(ctl().http, { username: user.username, password: 'patched-pass' })).res);
    const renamed = uniqueName('renamed');
    expectEmpty(await mgmt.call('PUT', `/authenticators/${aid}`, { username: renamed, password: 'put-pass1' }));
    expectSuccess((await loginAs(ctl().http, { username: renamed, password: 'put-pass1' })).res);
    expectEmpty(await mgmt.call('DELETE', `/authenticators/${aid}`));
    expectError((await loginAs(ctl().http, { username: renamed, password: 'put-pass1' })).res, 401, 'INVALID_AUTH');
    expectError(await mgmt.call('GET', `/authenticators/${aid}`), 404, 'NOT_FOUND');
  });

  it('/identities/{id}/authenticators lists all of one identity; an unknown identity is 404', async () => {
    const user = await createUser(mgmt);
    await mgmt.call('POST', '/authenticators', { method: 'cert', identityId: user.id, certPem: selfSignedCert('two').certPem });
    const res = await mgmt.call('GET', `/identities/${user.id}/authenticators`);
    expectList(res);
    expect(res.body.data.map((a: { method: string }) => a.method).sort()).toEqual(['cert', 'updb']);
    expect(res.body.meta.pagination).toEqual({ limit: 2, offset: 0, totalCount: 2 });
    expectError(await mgmt.call('GET', '/identities/does-not-exist/authenticators'), 404, 'NOT_FOUND');
  });

  it('a non-admin is refused every write with 401', async () => {
    const user = await createUser(mgmt);
    const { session } = await loginAs(ctl().http, user);
    const other = await createUser(mgmt);
    expectError(await session.call('GET', '/authenticators'), 401, 'UNAUTHORIZED');
    expectError(await session.call('POST', '/authenticators', { method: 'updb', identityId: other.id, username: uniqueName('x'), password: 'x-pass1' }), 401, 'UNAUTHORIZED');
    expectError(await session.call('PUT', '/authenticators/x', { username: 'abcde', password: 'abcde' }), 401, 'UNAUTHORIZED');
    expectError(await session.call('PATCH', '/authenticators/x', { password: 'abcde' }), 401, 'UNAUTHORIZED');
    expectError(await session.call('DELETE', '/authenticators/x'), 401, 'UNAUTHORIZED');
  });
});

describe.each(['client', 'management'] as const)('self-service on the %s API', (api) => {
  it('lists and shows only the own authenticators', async () => {
    const user = await createUser(mgmt);
    const other = await createUser(mgmt);
    const { session } = await loginAs(ctl().http, user, api);
    const res = await session.call('GET', '/current-identity/authenticators');
    expectList(res);
    expect(res.body.data).toHaveLength(1);
    expect(res.body.data[0]).toMatchObject({ method: 'updb', identityId: user.id, username: user.username });
    const aid = res.body.data[0].id;
    expectSuccess(await session.call('GET', `/current-identity/authenticators/${aid}`));
    const otherAid = (await mgmt.call('GET', `/identities/${other.id}/authenticators`)).body.data[0].id;
    expectError(await session.call('GET', `/current-identity/authenticators/${otherAid}`), 404, 'NOT_FOUND');
    expectError(await session.call('PUT', `/current-identity/authenticators/${otherAid}`, { currentPassword: user.password, username: 'whatever1', password: 'whatever1' }), 404, 'NOT_FOUND');
  });

  it('PUT/PATCH need the current password (a wrong one is 401)', async () => {
    const user = await createUser(mgmt);
    const { session } = await loginAs(ctl().http, user, api);
    const aid = (await session.call('GET', '/current-identity/authenticators')).body.data[0].id;
    expectError(await session.call('PATCH', `/current-identity/authenticators/${aid}`, { currentPassword: 'wrong-password', password: 'new-pass-1' }), 401, 'UNAUTHORIZED');
    expectFieldError(await session.call('PATCH', `/current-identity/authenticators/${aid}`, { password: 'new-pass-1' }), 'currentPassword');
    expectEmpty(await session.call('PATCH', `/current-identity/authenticators/${aid}`, { currentPassword: user.password, password: 'new-pass-1' }));
    expectSuccess((await loginAs(ctl().http, { username: user.username, password: 'new-pass-1' }, api)).res);
    const renamed = uniqueName('self');
    expectEmpty(await session.call('PUT', `/current-identity/authenticators/${aid}`, { currentPassword: 'new-pass-1', username: renamed, password: 'new-pass-2' }));
    expectSuccess((await loginAs(ctl().http, { username: renamed, password: 'new-pass-2' }, api)).res);
  });

  it('DELETE and POST are not allowed (405)', async () => {
    const user = await createUser(mgmt);
    const { session } = await loginAs(ctl().http, user, api);
    const aid = (await session.call('GET', '/current-identity/authenticators')).body.data[0].id;
    expectError(await session.call('DELETE', `/current-identity/authenticators/${aid}`), 405, 'METHOD_NOT_ALLOWED');
    expectError(await session.call('POST', '/current-identity/authenticators', {}), 405, 'METHOD_NOT_ALLOWED');
  });
});
