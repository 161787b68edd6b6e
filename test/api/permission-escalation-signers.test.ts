import { type EdgeApi, uniqueName } from '../support/clients.js';
import { authPolicyBody, createUser, extJwtLogin, loginAs, nowSeconds, selfSignedCert, signJwt, withHeaders } from '../support/clients-identity.js';
import { certLogin } from '../support/clients-cert.js';
import { verifiedCa } from '../support/clients-pki.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectEmpty, expectError, expectSuccess } from '../support/envelope.js';
import { cSdkLogin } from '../support/oidc.js';
import { thirdPartyCa } from '../support/x509.js';

/**
 * Signers and CAs a non-admin controls never log in an admin: an external JWT signer (or a CA)
 * created or last changed by a holder of `external-jwt-signer` (`ca`), who may hold its key, is
 * refused for identities that are admins or hold permissions (401 INVALID_AUTH, as any failed
 * login), by `sub` or by externalId, on `/authenticate`, the OIDC ext-jwt login and as a secondary
 * factor. It still logs in ordinary identities; an admin's create or change trusts it again.
 */

const ctl = useController();
failOnConformanceProblems();

let mgmt: EdgeApi;
let defaultAdmin: string;
let sig: EdgeApi;
beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
  defaultAdmin = (await mgmt.currentIdentity.get()).body.data.id;
  const holder = await createUser(mgmt, { permissions: ['external-jwt-signer', 'ca'] });
  const { res, session } = await loginAs(ctl().http, holder);
  expectSuccess(res);
  sig = session;
});

interface Signer {
  id: string;
  issuer: string;
  token(claims: Record<string, unknown>): Promise<string>;
}

/** A certificate signer created through `api`, with the key to sign its tokens. */
async function newSigner(api: EdgeApi, body: Record<string, unknown> = {}): Promise<Signer> {
  const cert = selfSignedCert(uniqueName('esc-signer'));
  const issuer = uniqueName('esc-iss');
  const id = expectCreated(
    await api.call('POST', '/external-jwt-signers', { name: uniqueName('esc-signer'), enabled: true, issuer, audience: 'esc-aud', certPem: cert.certPem, kid: uniqueName('kid'), ...body }),
    'external-jwt-signers',
  );
  return { id, issuer, token: (claims) => signJwt(cert.privateKey, { iss: issuer, aud: 'esc-aud', exp: nowSeconds() + 300, ...claims }) };
}

describe('primary ext-jwt through a signer a non-admin made', () => {
  let own: Signer;
  beforeAll(async () => {
    own = await newSigner(sig);
  });

  it('the default admin (sub = its id) and another admin are refused: 401 INVALID_AUTH', async () => {
    const admin = await createUser(mgmt, { isAdmin: true });
    for (const sub of [defaultAdmin, admin.id]) {
      for (const api of ['client', 'management'] as const) expectError(await extJwtLogin(ctl().http, await own.token({ sub }), api), 401, 'INVALID_AUTH');
    }
  });

  it('an identity holding permissions is refused; an ordinary identity logs in', async () => {
    const holder = await createUser(mgmt, { permissions: ['service.read'] });
    expectError(await extJwtLogin(ctl().http, await own.token({ sub: holder.id })), 401, 'INVALID_AUTH');
    const plain = await createUser(mgmt);
    const res = await extJwtLogin(ctl().http, await own.token({ sub: plain.id }));
    expectSuccess(res);
    expect(res.body.data).toMatchObject({ identityId: plain.id, authenticatorId: own.id });
  });

  it("an admin's externalId in the signer's claim is refused", async () => {
    const byEmail = await newSigner(sig, { claimsProperty: 'email', useExternalId: true });
    const externalId = `${uniqueName('boss')}@example.test`;
    expectCreated(await mgmt.identities.create({ name: uniqueName('ext-admin'), type: 'User', isAdmin: true, externalId }), 'identities');
    expectError(await extJwtLogin(ctl().http, await byEmail.token({ sub: 'anything', email: externalId })), 401, 'INVALID_AUTH');
  });

  it('the OIDC ext-jwt login refuses the admin too', async () => {
    await expect(cSdkLogin(ctl().http, { bearer: [await own.token({ sub: defaultAdmin })] })).rejects.toThrow(/^login: 401 /);
    const plain = await createUser(mgmt);
    expect((await cSdkLogin(ctl().http, { bearer: [await own.token({ sub: plain.id })] })).token.status).toBe(200);
  });
});

describe("a signer's trust follows its last writer", () => {
  it('admin-made: logs in an admin; changed by a non-admin: refused; changed by an admin again: trusted', async () => {
    const signer = await newSigner(mgmt);
    const admin = await createUser(mgmt, { isAdmin: true });
    expectSuccess(await extJwtLogin(ctl().http, await signer.token({ sub: admin.id })));
    expectEmpty(await sig.call('PATCH', `/external-jwt-signers/${signer.id}`, { tags: { touched: 'by a holder' } }));
    expectError(await extJwtLogin(ctl().http, await signer.token({ sub: admin.id })), 401, 'INVALID_AUTH');
    expectEmpty(await mgmt.call('PATCH', `/external-jwt-signers/${signer.id}`, { tags: { reviewed: 'by an admin' } }));
    expectSuccess(await extJwtLogin(ctl().http, await signer.token({ sub: admin.id })));
  });

  it('a holder replacing the key of an admin-made signer can not log in as an admin with the new key', async () => {
    const signer = await newSigner(mgmt);
    const mine = selfSignedCert(uniqueName('replaced'));
    expectEmpty(await sig.call('PATCH', `/external-jwt-signers/${signer.id}`, { certPem: mine.certPem, kid: uniqueName('kid') }));
    const forged = await signJwt(mine.privateKey, { iss: signer.issuer, aud: 'esc-aud', sub: defaultAdmin, exp: nowSeconds() + 300 });
    expectError(await extJwtLogin(ctl().http, forged), 401, 'INVALID_AUTH');
  });
});

describe('a required secondary signer a non-admin changed', () => {
  it("no longer completes an admin's session; it still completes an ordinary identity's", async () => {
    const signer = await newSigner(mgmt);
    const policy = expectCreated(await mgmt.call('POST', '/auth-policies', authPolicyBody(uniqueName('esc-ap'), { secondary: { requireExtJwtSigner: signer.id } })), 'auth-policies');
    const admin = await createUser(mgmt, { isAdmin: true, authPolicyId: policy });
    const plain = await createUser(mgmt, { authPolicyId: policy });
    const sessions = { admin: (await loginAs(ctl().http, admin)).session, plain: (await loginAs(ctl().http, plain)).session };
    const complete = async (who: 'admin' | 'plain', sub: string) => withHeaders(sessions[who], { authorization: `Bearer ${await signer.token({ sub })}` }).call('GET', '/identities');
    expectSuccess(await complete('admin', admin.id));
    expectEmpty(await sig.call('PATCH', `/external-jwt-signers/${signer.id}`, { tags: { touched: 'by a holder' } }));
    expectError(await complete('admin', admin.id), 401, 'UNAUTHORIZED');
    expectError(await sessions.plain.call('GET', '/current-identity'), 401, 'UNAUTHORIZED');
    expectSuccess(await withHeaders(sessions.plain, { authorization: `Bearer ${await signer.token({ sub: plain.id })}` }).call('GET', '/current-identity'));
  });
});

describe('a CA a non-admin made', () => {
  const spiffe = { location: 'SAN_URI', matcher: 'SCHEME', matcherCriteria: 'spiffe', parser: 'NONE', parserCriteria: '', index: 0 };

  it("does not log in an admin by externalId; an admin-made CA does; an ordinary identity logs in through either", async () => {
    const adminId = `spiffe://esc.test/admin/${uniqueName('a')}`;
    const plainId = `spiffe://esc.test/user/${uniqueName('u')}`;
    const admin = expectCreated(await mgmt.identities.create({ name: uniqueName('ca-admin'), type: 'User', isAdmin: true, externalId: adminId }), 'identities');
    const plain = expectCreated(await mgmt.identities.create({ name: uniqueName('ca-user'), type: 'User', isAdmin: false, externalId: plainId }), 'identities');
    const theirs = thirdPartyCa('Holder CA');
    await verifiedCa(sig, theirs, { isAutoCaEnrollmentEnabled: false, externalIdClaim: spiffe });
    expectError(await certLogin(ctl().http, theirs.issue('boss', { uris: [adminId] })), 401, 'INVALID_AUTH');
    expect((await certLogin(ctl().http, theirs.issue('user', { uris: [plainId] }))).body.data).toMatchObject({ identityId: plain });
    const ours = thirdPartyCa('Admin CA');
    await verifiedCa(mgmt, ours, { isAutoCaEnrollmentEnabled: false, externalIdClaim: spiffe });
    expect((await certLogin(ctl().http, ours.issue('boss', { uris: [adminId] }))).body.data).toMatchObject({ identityId: admin });
  });
});
