import { X509Certificate } from 'node:crypto';
import { BASE, type EdgeApi, uniqueName } from '../support/clients.js';
import { certLogin } from '../support/clients-cert.js';
import { authPolicyBody, extJwtLogin, nowSeconds, selfSignedCert, signJwt, startJwksServer } from '../support/clients-identity.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectEmpty, expectError, expectFieldError, expectSuccess } from '../support/envelope.js';
import type { HttpResponse } from '../support/http.js';
import { certificates, csrPem, ecKeys, keyPem } from '../support/x509.js';

/**
 * `POST /edge/client/v1/enroll/token` (client.yml `enrollToken`; the controller's
 * `EnrollModuleToken`, enrollment_token_to_cert_test.go and enrollment_token_to_token_test.go):
 * an external JWT of an enabled signer that allows it creates an identity, to a certificate (with
 * a CSR) or to ext-jwt login (without). Every refusal is checked to create nothing.
 */

// The JWKS server listens on loopback, which the controller reaches only with the setting on.
const ctl = useController({ outboundAllowPrivate: true });
failOnConformanceProblems();

let mgmt: EdgeApi;
let jwks: Awaited<ReturnType<typeof startJwksServer>>;
/** Auth policies: certificates only; ext-jwt only (every signer). */
let certPolicy: string;
let extJwtPolicy: string;

beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
  jwks = await startJwksServer('enroll-key');
  const onlyCert = authPolicyBody(uniqueName('ap-cert'), { extJwt: { allowed: false }, updb: { allowed: false } });
  certPolicy = expectCreated(await mgmt.call('POST', '/auth-policies', onlyCert), 'auth-policies');
  const onlyExtJwt = authPolicyBody(uniqueName('ap-extjwt'), { updb: { allowed: false } });
  onlyExtJwt.primary.cert.allowed = false;
  extJwtPolicy = expectCreated(await mgmt.call('POST', '/auth-policies', onlyExtJwt), 'auth-policies');
});
afterAll(async () => {
  await jwks?.close();
});

interface Signer {
  id: string;
  issuer: string;
  audience: string;
  kid: string;
  sign(claims: Record<string, unknown>, header?: Record<string, unknown>): Promise<string>;
}

/** A signer with its own certificate (RS256), `useExternalId` as the controller's tests create them; `body` overrides. */
async function certSigner(body: Record<string, unknown>): Promise<Signer> {
  const cert = selfSignedCert(uniqueName('enroll-signer'));
  const issuer = uniqueName('enroll-iss');
  const audience = uniqueName('enroll-aud');
  const kid = uniqueName('kid');
  const id = expectCreated(
    await mgmt.call('POST', '/external-jwt-signers', { name: uniqueName('enroll-signer'), enabled: true, issuer, audience, certPem: cert.certPem, kid, useExternalId: true, ...body }),
    'external-jwt-signers',
  );
  return { id, issuer, audience, kid, sign: (claims, header = {}) => signJwt(cert.privateKey, claims, { kid, ...header }) };
}

/** The standard claims of a token of `s` for subject `sub`, valid for five minutes. */
const claimsOf = (s: Signer, sub: string, more: Record<string, unknown> = {}) => ({
  iss: s.issuer, aud: [s.audience], sub, iat: nowSeconds(), nbf: nowSeconds() - 5, exp: nowSeconds() + 300, jti: uniqueName('jti'), ...more,
});

function enrollToken(token: string | undefined, body: unknown = {}, headers: Record<string, string | string[]> = {}): Promise<HttpResponse> {
  return ctl().http.request({
    method: 'POST',
    path: `${BASE.client}/enroll/token`,
    json: body,
    headers: { ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}), ...headers },
  });
}

async function identityCount(): Promise<number> {
  const res = await mgmt.call('GET', '/identities?limit=1');
  expectSuccess(res);
  return res.body.meta.pagination.totalCount as number;
}

async function byExternalId(externalId: string): Promise<Record<string, any> | undefined> {
  const res = await mgmt.call('GET', `/identities?filter=${encodeURIComponent(`externalId = "${externalId}"`)}`);
  expectSuccess(res);
  return (res.body.data as Record<string, any>[])[0];
}

/** Runs a refused enrollment and checks it left no identity behind (none for `externalId`, the same total). */
async function refused(externalId: string, run: () => Promise<HttpResponse>, status: number, code: string): Promise<HttpResponse> {
  const before = await identityCount();
  const res = await run();
  expectError(res, status, code);
  expect(await byExternalId(externalId)).toBeUndefined();
  expect(await identityCount()).toBe(before);
  return res;
}

describe('enroll to a certificate (with a CSR)', () => {
  let signer: Signer;
  beforeAll(async () => {
    signer = await certSigner({ enrollToCertEnabled: true, enrollAuthPolicyId: certPolicy });
  });

  it('returns the signed chain and the CA bundle; the identity logs in with that certificate', async () => {
    const sub = uniqueName('cert-sub');
    const token = await signer.sign(claimsOf(signer, sub));
    const keys = ecKeys();
    const res = await enrollToken(token, { clientCsr: csrPem(keys, { commonName: 'enroll-token-device' }) });
    expectSuccess(res);
    const data = res.body.data as { cert: string; ca: string };
    const chain = certificates(data.cert);
    expect(chain.length).toBeGreaterThanOrEqual(2); // leaf and the issuing intermediate
    expect(chain[0]!.publicKey.export({ format: 'jwk' })).toEqual(keys.publicKey.export({ format: 'jwk' }));
    expect(chain[0]!.checkIssued(chain[1]!)).toBe(true);
    const ca = certificates(data.ca);
    expect(ca.length).toBeGreaterThanOrEqual(1);
    expect(ca.some((c) => c.fingerprint256 === chain[1]!.fingerprint256)).toBe(true);

    const identity = await byExternalId(sub);
    expect(identity).toMatchObject({ name: sub, externalId: sub, authPolicyId: certPolicy, roleAttributes: [], isAdmin: false, type: { name: 'Default' } });
    expect(chain[0]!.subjectAltName).toContain(`/identity/${identity!.id}`);
    expect(identity!.authenticators.cert).toMatchObject({ fingerprint: chain[0]!.fingerprint.replace(/:/g, '').toLowerCase() });

    const login = await certLogin(ctl().http, { certPem: data.cert, keyPem: keyPem(keys) });
    expectSuccess(login);
    expect(login.body.data.identityId).toBe(identity!.id);
  });

  it('a second enrollment of the same subject → 409 ENROLLMENT_IDENTITY_ALREADY_ENROLLED, nothing created', async () => {
    const sub = uniqueName('twice');
    const csr = csrPem(ecKeys());
    expectSuccess(await enrollToken(await signer.sign(claimsOf(signer, sub)), { clientCsr: csr }));
    const first = await byExternalId(sub);
    const before = await identityCount();
    expectError(await enrollToken(await signer.sign(claimsOf(signer, sub)), { clientCsr: csrPem(ecKeys()) }), 409, 'ENROLLMENT_IDENTITY_ALREADY_ENROLLED');
    expect(await identityCount()).toBe(before);
    expect((await byExternalId(sub))!.id).toBe(first!.id);
  });

  it('an identity that already has the externalId (made by management) → 409 ENROLLMENT_IDENTITY_ALREADY_ENROLLED', async () => {
    const sub = uniqueName('existing');
    expectCreated(await mgmt.identities.create({ name: uniqueName('pre'), type: 'User', isAdmin: false, externalId: sub }), 'identities');
    const before = await identityCount();
    expectError(await enrollToken(await signer.sign(claimsOf(signer, sub)), { clientCsr: csrPem(ecKeys()) }), 409, 'ENROLLMENT_IDENTITY_ALREADY_ENROLLED');
    expect(await identityCount()).toBe(before);
  });

  it('two concurrent enrollments of one subject: one identity, the other 409', async () => {
    const sub = uniqueName('race');
    const before = await identityCount();
    const results = await Promise.all([0, 1, 2].map(async () => enrollToken(await signer.sign(claimsOf(signer, sub)), { clientCsr: csrPem(ecKeys()) })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) expectError(r, 409, 'ENROLLMENT_IDENTITY_ALREADY_ENROLLED');
    expect(await identityCount()).toBe(before + 1);
  });

  it('a CSR that does not parse → 400 COULD_NOT_PROCESS_CSR', async () => {
    const sub = uniqueName('bad-csr');
    const token = await signer.sign(claimsOf(signer, sub));
    await refused(sub, () => enrollToken(token, { clientCsr: '-----BEGIN CERTIFICATE REQUEST-----\nbm90IGEgQ1NS\n-----END CERTIFICATE REQUEST-----\n' }), 400, 'COULD_NOT_PROCESS_CSR');
    await refused(sub, () => enrollToken(token, { clientCsr: 'not a pem at all' }), 400, 'COULD_NOT_PROCESS_CSR');
  });

  it('the signer allows certificates but not tokens: no CSR → 409 INVALID_ENROLLMENT_NOT_ALLOWED', async () => {
    const sub = uniqueName('no-token-mode');
    const token = await signer.sign(claimsOf(signer, sub));
    await refused(sub, () => enrollToken(token, {}), 409, 'INVALID_ENROLLMENT_NOT_ALLOWED');
    await refused(sub, () => enrollToken(token, { clientCsr: '' }), 409, 'INVALID_ENROLLMENT_NOT_ALLOWED');
  });

  it('the enrollment auth policy no longer allows certificates → 409 INVALID_ENROLLMENT_NOT_ALLOWED', async () => {
    const policy = expectCreated(await mgmt.call('POST', '/auth-policies', authPolicyBody(uniqueName('ap-then-no'))), 'auth-policies');
    const s = await certSigner({ enrollToCertEnabled: true, enrollAuthPolicyId: policy });
    expectEmpty(await mgmt.call('PATCH', `/auth-policies/${policy}`, { primary: { cert: { allowed: false } } }));
    const sub = uniqueName('policy-no-cert');
    await refused(sub, async () => enrollToken(await s.sign(claimsOf(s, sub)), { clientCsr: csrPem(ecKeys()) }), 409, 'INVALID_ENROLLMENT_NOT_ALLOWED');
  });
});

describe('enroll to token authentication (no CSR)', () => {
  it('with a JWKS signer: 200 with an empty enrollmentCerts; then ext-jwt login with the signer\'s tokens works', async () => {
    const issuer = uniqueName('jwks-enroll-iss');
    const signer = expectCreated(
      await mgmt.call('POST', '/external-jwt-signers', {
        name: uniqueName('jwks-enroll'), enabled: true, issuer, audience: 'jwks-enroll-aud', jwksEndpoint: jwks.url, useExternalId: true,
        enrollToTokenEnabled: true, enrollAuthPolicyId: extJwtPolicy,
      }),
      'external-jwt-signers',
    );
    const sub = uniqueName('token-sub');
    const token = () => signJwt(jwks.privateKey, { iss: issuer, aud: 'jwks-enroll-aud', sub, exp: nowSeconds() + 300, jti: uniqueName('j') }, { kid: jwks.kid });

    // Before enrolling, the token names no identity, and the login creates none.
    expectError(await extJwtLogin(ctl().http, await token()), 401, 'INVALID_AUTH');
    expect(await byExternalId(sub)).toBeUndefined();

    const res = await enrollToken(await token());
    expectSuccess(res);
    expect(res.body.data).toEqual({});
    const identity = await byExternalId(sub);
    expect(identity).toMatchObject({ name: sub, externalId: sub, authPolicyId: extJwtPolicy, roleAttributes: [] });
    expect(identity!.authenticators).toEqual({});

    const login = await extJwtLogin(ctl().http, await token());
    expectSuccess(login);
    expect(login.body.data).toMatchObject({ identityId: identity!.id, authenticatorId: signer });

    expectError(await enrollToken(await token()), 409, 'ENROLLMENT_IDENTITY_ALREADY_ENROLLED');
  });

  it('the signer allows tokens but not certificates: a CSR → 409 INVALID_ENROLLMENT_NOT_ALLOWED', async () => {
    const s = await certSigner({ enrollToTokenEnabled: true, enrollAuthPolicyId: extJwtPolicy });
    const sub = uniqueName('no-cert-mode');
    await refused(sub, async () => enrollToken(await s.sign(claimsOf(s, sub)), { clientCsr: csrPem(ecKeys()) }), 409, 'INVALID_ENROLLMENT_NOT_ALLOWED');
  });

  it('the auth policy does not allow ext-jwt, or not this signer → 409 INVALID_ENROLLMENT_NOT_ALLOWED', async () => {
    const policy = expectCreated(await mgmt.call('POST', '/auth-policies', authPolicyBody(uniqueName('ap-tokens-then-no'))), 'auth-policies');
    const s = await certSigner({ enrollToTokenEnabled: true, enrollAuthPolicyId: policy });
    const other = await certSigner({});
    const sub = uniqueName('policy-no-token');
    expectEmpty(await mgmt.call('PATCH', `/auth-policies/${policy}`, { primary: { extJwt: { allowedSigners: [other.id] } } }));
    await refused(sub, async () => enrollToken(await s.sign(claimsOf(s, sub))), 409, 'INVALID_ENROLLMENT_NOT_ALLOWED');
    expectEmpty(await mgmt.call('PATCH', `/auth-policies/${policy}`, { primary: { extJwt: { allowed: false, allowedSigners: [] } } }));
    await refused(sub, async () => enrollToken(await s.sign(claimsOf(s, sub))), 409, 'INVALID_ENROLLMENT_NOT_ALLOWED');
    expectEmpty(await mgmt.call('PATCH', `/auth-policies/${policy}`, { primary: { extJwt: { allowed: true, allowedSigners: [s.id] } } }));
    expectSuccess(await enrollToken(await s.sign(claimsOf(s, sub))));
    expect((await byExternalId(sub))!.authPolicyId).toBe(policy);
  });

  it('a signer without enrollAuthPolicyId enrolls into the default auth policy', async () => {
    const s = await certSigner({ enrollToTokenEnabled: true });
    const sub = uniqueName('default-policy');
    expectSuccess(await enrollToken(await s.sign(claimsOf(s, sub))));
    expect((await byExternalId(sub))!.authPolicyId).toBe('default');
    expectSuccess(await extJwtLogin(ctl().http, await s.sign(claimsOf(s, sub))));
  });
});

describe('claim selectors', () => {
  const custom = (s: Signer, more: Record<string, unknown>) => claimsOf(s, uniqueName('ignored-sub'), more);

  it('claimsProperty, enrollNameClaimsSelector and an array attribute selector give externalId, name and role attributes', async () => {
    const s = await certSigner({
      enrollToTokenEnabled: true, enrollAuthPolicyId: extJwtPolicy, claimsProperty: 'customId', enrollNameClaimsSelector: 'customName', enrollAttributeClaimsSelector: 'attributeArray',
    });
    const customId = uniqueName('custom-id');
    const customName = uniqueName('custom-name');
    expectSuccess(await enrollToken(await s.sign(custom(s, { customId, customName, attributeArray: ['attr-1', 'attr-2', '', 'attr-1'], attributeString: 'attr-3' }))));
    const identity = await byExternalId(customId);
    expect(identity).toMatchObject({ name: customName, externalId: customId, authPolicyId: extJwtPolicy });
    expect([...identity!.roleAttributes].sort()).toEqual(['attr-1', 'attr-2']);
    // The identity claim (customId) is what ext-jwt login maps through externalId.
    const login = await extJwtLogin(ctl().http, await s.sign(custom(s, { customId })));
    expectSuccess(login);
    expect(login.body.data.identityId).toBe(identity!.id);
  });

  it('a string attribute claim is one role attribute; JSON pointers reach nested claims', async () => {
    const s = await certSigner({
      enrollToTokenEnabled: true, enrollAuthPolicyId: extJwtPolicy, claimsProperty: '/ids/primary', enrollNameClaimsSelector: '/profile/name', enrollAttributeClaimsSelector: '/attributeString',
    });
    const id = uniqueName('nested-id');
    const name = uniqueName('nested-name');
    expectSuccess(await enrollToken(await s.sign(custom(s, { ids: { primary: id }, profile: { name }, attributeString: 'attr-3', attributeArray: ['x'] }))));
    expect(await byExternalId(id)).toMatchObject({ name, roleAttributes: ['attr-3'] });
  });

  it('an attribute claim that is absent or null gives no role attributes', async () => {
    const s = await certSigner({ enrollToTokenEnabled: true, enrollAuthPolicyId: extJwtPolicy, enrollAttributeClaimsSelector: 'groups' });
    const absent = uniqueName('absent');
    expectSuccess(await enrollToken(await s.sign(claimsOf(s, absent))));
    expect((await byExternalId(absent))!.roleAttributes).toEqual([]);
    const nulled = uniqueName('nulled');
    expectSuccess(await enrollToken(await s.sign(claimsOf(s, nulled, { groups: null }))));
    expect((await byExternalId(nulled))!.roleAttributes).toEqual([]);
  });

  it('no identity claim, no usable name, or attributes that are not strings → 400 INVALID_ENROLLMENT_TOKEN', async () => {
    const s = await certSigner({
      enrollToTokenEnabled: true, enrollAuthPolicyId: extJwtPolicy, claimsProperty: 'customId', enrollNameClaimsSelector: 'customName', enrollAttributeClaimsSelector: 'groups',
    });
    const customId = uniqueName('bad-claims');
    const ok = { customId, customName: uniqueName('n'), groups: ['g'] };
    await refused(customId, async () => enrollToken(await s.sign(custom(s, { ...ok, customId: undefined }))), 400, 'INVALID_ENROLLMENT_TOKEN');
    await refused(customId, async () => enrollToken(await s.sign(custom(s, { ...ok, customId: 42 }))), 400, 'INVALID_ENROLLMENT_TOKEN');
    await refused(customId, async () => enrollToken(await s.sign(custom(s, { ...ok, customName: undefined }))), 400, 'INVALID_ENROLLMENT_TOKEN');
    await refused(customId, async () => enrollToken(await s.sign(custom(s, { ...ok, customName: null }))), 400, 'INVALID_ENROLLMENT_TOKEN');
    await refused(customId, async () => enrollToken(await s.sign(custom(s, { ...ok, customName: 7 }))), 400, 'INVALID_ENROLLMENT_TOKEN');
    await refused(customId, async () => enrollToken(await s.sign(custom(s, { ...ok, customName: 'a\u0000b' }))), 400, 'INVALID_ENROLLMENT_TOKEN');
    await refused(customId, async () => enrollToken(await s.sign(custom(s, { ...ok, groups: 12 }))), 400, 'INVALID_ENROLLMENT_TOKEN');
    await refused(customId, async () => enrollToken(await s.sign(custom(s, { ...ok, groups: ['g', 3] }))), 400, 'INVALID_ENROLLMENT_TOKEN');
    await refused(customId, async () => enrollToken(await s.sign(custom(s, { ...ok, groups: ['#all'] }))), 400, 'INVALID_ENROLLMENT_TOKEN');
    expectSuccess(await enrollToken(await s.sign(custom(s, ok))));
  });

  it('a name another identity has → 400 COULD_NOT_VALIDATE on name, nothing created', async () => {
    const s = await certSigner({ enrollToTokenEnabled: true, enrollAuthPolicyId: extJwtPolicy, enrollNameClaimsSelector: 'customName' });
    const taken = uniqueName('taken');
    expectCreated(await mgmt.identities.create({ name: taken, type: 'User', isAdmin: false }), 'identities');
    const sub = uniqueName('name-clash');
    const before = await identityCount();
    expectFieldError(await enrollToken(await s.sign(claimsOf(s, sub, { customName: taken }))), 'name');
    expect(await identityCount()).toBe(before);
    expect(await byExternalId(sub)).toBeUndefined();
  });
});

describe('tokens that do not enroll', () => {
  let s: Signer;
  beforeAll(async () => {
    s = await certSigner({ enrollToTokenEnabled: true, enrollToCertEnabled: true, enrollAuthPolicyId: 'default' });
  });

  it('bad signature, wrong iss, wrong aud, expired, not yet valid → 400 INVALID_ENROLLMENT_TOKEN', async () => {
    const sub = uniqueName('bad-token');
    const forger = selfSignedCert('forger');
    const cases: Promise<string>[] = [
      signJwt(forger.privateKey, claimsOf(s, sub), { kid: s.kid }),
      s.sign(claimsOf(s, sub, { iss: uniqueName('nobody') })),
      s.sign(claimsOf(s, sub, { aud: ['someone-else'] })),
      s.sign(claimsOf(s, sub, { exp: nowSeconds() - 3600 })),
      s.sign(claimsOf(s, sub, { nbf: nowSeconds() + 3600 })),
    ];
    for (const token of await Promise.all(cases)) {
      await refused(sub, () => enrollToken(token), 400, 'INVALID_ENROLLMENT_TOKEN');
      await refused(sub, () => enrollToken(token, { clientCsr: csrPem(ecKeys()) }), 400, 'INVALID_ENROLLMENT_TOKEN');
    }
  });

  it('a token of a signer that does not exist, or is disabled → 400 INVALID_ENROLLMENT_TOKEN', async () => {
    const sub = uniqueName('unknown-signer');
    const cert = selfSignedCert('never-registered');
    const unregistered = await signJwt(cert.privateKey, { iss: uniqueName('unregistered-iss'), aud: 'a', sub, exp: nowSeconds() + 300 }, { kid: 'k' });
    await refused(sub, () => enrollToken(unregistered), 400, 'INVALID_ENROLLMENT_TOKEN');
    const off = await certSigner({ enrollToTokenEnabled: true, enabled: false });
    await refused(sub, async () => enrollToken(await off.sign(claimsOf(off, sub))), 400, 'INVALID_ENROLLMENT_TOKEN');
  });

  it('malformed, empty or non-bearer credentials → 400 INVALID_ENROLLMENT_TOKEN; no Authorization header → 400 COULD_NOT_VALIDATE', async () => {
    const sub = uniqueName('malformed');
    await refused(sub, () => enrollToken('eYsdfgsdgfd.dfgsfdgfds.sdfgsdfg'), 400, 'INVALID_ENROLLMENT_TOKEN');
    await refused(sub, () => enrollToken('fjgneonberoinoeribnreoinerboerinobianroiban'), 400, 'INVALID_ENROLLMENT_TOKEN');
    await refused(sub, () => enrollToken(undefined, {}, { authorization: 'Bearer ' }), 400, 'INVALID_ENROLLMENT_TOKEN');
    const good = await s.sign(claimsOf(s, sub));
    await refused(sub, () => enrollToken(undefined, {}, { authorization: `Basic ${good}` }), 400, 'INVALID_ENROLLMENT_TOKEN');
    const missing = await refused(sub, () => enrollToken(undefined, {}), 400, 'COULD_NOT_VALIDATE');
    expect(missing.body.error.cause.field).toBe('Authorization');
  });

  it('ziti-token-issuer-id: the named signer verifies the token; another or an unknown id → 400 INVALID_ENROLLMENT_TOKEN', async () => {
    const other = await certSigner({ enrollToTokenEnabled: true });
    const sub = uniqueName('issuer-id');
    const token = await s.sign(claimsOf(s, sub));
    await refused(sub, () => enrollToken(token, {}, { 'ziti-token-issuer-id': other.id }), 400, 'INVALID_ENROLLMENT_TOKEN');
    await refused(sub, () => enrollToken(token, {}, { 'ziti-token-issuer-id': 'no-such-signer' }), 400, 'INVALID_ENROLLMENT_TOKEN');
    expectSuccess(await enrollToken(token, {}, { 'ziti-token-issuer-id': s.id }));
    expect(await byExternalId(sub)).toBeDefined();
  });

  it('a token after a bad one on another Authorization line enrolls (the first that verifies counts)', async () => {
    const sub = uniqueName('second-line');
    const bad = await signJwt(selfSignedCert('forger-2').privateKey, claimsOf(s, sub), { kid: s.kid });
    const res = await enrollToken(undefined, {}, { authorization: [`Bearer ${bad}`, `Bearer ${await s.sign(claimsOf(s, sub))}`] });
    expectSuccess(res);
    expect(await byExternalId(sub)).toBeDefined();
  });

  it('a body field of the wrong type → 400 COULD_NOT_VALIDATE; unknown fields are ignored', async () => {
    const sub = uniqueName('body-type');
    const token = await s.sign(claimsOf(s, sub));
    const before = await identityCount();
    expectFieldError(await enrollToken(token, { clientCsr: 42 }), 'clientCsr');
    expect(await identityCount()).toBe(before);
    expectSuccess(await enrollToken(token, { somethingElse: true }));
    expect(await byExternalId(sub)).toBeDefined();
  });

  it('the enrollment refusals do not authenticate: the route stays anonymous and answers no challenge', async () => {
    const res = await enrollToken('eYsdfgsdgfd.dfgsfdgfds.sdfgsdfg');
    expectError(res, 400, 'INVALID_ENROLLMENT_TOKEN');
    expect(res.headers['www-authenticate']).toBeUndefined();
  });
});

describe('the issued certificate', () => {
  it('is a client certificate of the network with the identity\'s SPIFFE id', async () => {
    const s = await certSigner({ enrollToCertEnabled: true, enrollAuthPolicyId: certPolicy });
    const sub = uniqueName('spiffe');
    const res = await enrollToken(await s.sign(claimsOf(s, sub)), { clientCsr: csrPem(ecKeys()) });
    expectSuccess(res);
    const leaf = new X509Certificate(certificates(res.body.data.cert)[0]!.raw);
    const identity = await byExternalId(sub);
    expect(leaf.subjectAltName).toMatch(new RegExp(`URI:spiffe://[^/]+/identity/${identity!.id}$`));
    expect(leaf.ca).toBe(false);
  });
});
