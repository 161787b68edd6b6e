import { BASE, type EdgeApi, uniqueName } from '../support/clients.js';
import {
  authPolicyBody, createUser, extJwtLogin, loginAs, nowSeconds, selfSignedCert, signJwt, startJwksServer, withHeaders,
} from '../support/clients-identity.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectEmpty, expectError, expectFieldError, expectList, expectSuccess } from '../support/envelope.js';
import { HttpClient } from '../support/http.js';
import { expectValid } from '../support/spec-validator.js';

/**
 * External JWT signers and `method=ext-jwt` (reference §2.2, §3.4; external_jwt_signer*_test.go,
 * auth_external_jwt_signer_test.go, auth_headers_legacy_test.go).
 */

// The test's JWKS server listens on loopback, which the controller reaches only with the setting on.
const ctl = useController({ outboundAllowPrivate: true });
failOnConformanceProblems();

let mgmt: EdgeApi;
let jwks: Awaited<ReturnType<typeof startJwksServer>>;
beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
  jwks = await startJwksServer();
});
afterAll(async () => {
  await jwks?.close();
});

const newSigner = async (body: Record<string, unknown>) =>
  expectCreated(await mgmt.call('POST', '/external-jwt-signers', { name: uniqueName('signer'), enabled: true, issuer: uniqueName('iss'), audience: 'aud', ...body }), 'external-jwt-signers');
const challenge = (res: Parameters<typeof HttpClient.headerLines>[0]) => HttpClient.headerLines(res, 'www-authenticate');

describe('signers', () => {
  it('create with a certificate: detail shows the certificate facts', async () => {
    const cert = selfSignedCert('so-common');
    const id = await newSigner({ certPem: cert.certPem, kid: 'kid-1', claimsProperty: 'someClaim', useExternalId: true, externalAuthUrl: 'https://idp.example.com/auth', clientId: 'cid', scopes: ['s1', 's2'], targetToken: 'ID' });
    const res = await mgmt.call('GET', `/external-jwt-signers/${id}`);
    expectSuccess(res);
    expect(res.body.data).toMatchObject({
      certPem: cert.certPem, commonName: 'so-common', fingerprint: cert.fingerprint, kid: 'kid-1', enabled: true, claimsProperty: 'someClaim',
      useExternalId: true, externalAuthUrl: 'https://idp.example.com/auth', clientId: 'cid', scopes: ['s1', 's2'], targetToken: 'ID', jwksEndpoint: null,
    });
    expect(Date.parse(res.body.data.notAfter)).toBeGreaterThan(Date.parse(res.body.data.notBefore));
  });

  it('defaults: claimsProperty sub, useExternalId false, targetToken ACCESS, no externalAuthUrl', async () => {
    const id = await newSigner({ jwksEndpoint: 'https://idp.example.com/.well-known/jwks.json' });
    expect((await mgmt.call('GET', `/external-jwt-signers/${id}`)).body.data).toMatchObject({ claimsProperty: 'sub', useExternalId: false, targetToken: 'ACCESS', externalAuthUrl: null, certPem: null });
  });

  it('validation: missing fields, unparseable or reused certificates, missing kid, one key source only', async () => {
    const cert = selfSignedCert('dupe');
    await newSigner({ certPem: cert.certPem, kid: uniqueName('kid') });
    expectFieldError(await mgmt.call('POST', '/external-jwt-signers', { name: uniqueName('n'), issuer: 'i', audience: 'a' }), 'enabled');
    expectFieldError(await mgmt.call('POST', '/external-jwt-signers', { enabled: true, issuer: 'i', audience: 'a', jwksEndpoint: 'https://x.example/j' }), 'name');
    expectError(await mgmt.call('POST', '/external-jwt-signers', { name: uniqueName('n'), enabled: true, issuer: uniqueName('i'), audience: 'a', certPem: 'probably will not parse', kid: 'k' }), 400, 'INVALID_CERT_PEM');
    expectFieldError(await mgmt.call('POST', '/external-jwt-signers', { name: uniqueName('n'), enabled: true, issuer: uniqueName('i'), audience: 'a', certPem: cert.certPem, kid: uniqueName('k') }), 'fingerprint');
    expectFieldError(await mgmt.call('POST', '/external-jwt-signers', { name: uniqueName('n'), enabled: true, issuer: uniqueName('i'), audience: 'a', certPem: selfSignedCert('x').certPem }), 'kid');
    expectFieldError(await mgmt.call('POST', '/external-jwt-signers', { name: uniqueName('n'), enabled: true, issuer: uniqueName('i'), audience: 'a' }), 'certPem');
  });

  it('a JWKS URL at the metadata address or with another scheme is refused; a host name is accepted', async () => {
    expectFieldError(await mgmt.call('POST', '/external-jwt-signers', { name: uniqueName('m'), enabled: true, issuer: uniqueName('i'), audience: 'a', jwksEndpoint: 'http://169.254.169.254/latest/meta-data/' }), 'jwksEndpoint');
    expectFieldError(await mgmt.call('POST', '/external-jwt-signers', { name: uniqueName('m'), enabled: true, issuer: uniqueName('i'), audience: 'a', jwksEndpoint: 'file:///etc/passwd' }), 'jwksEndpoint');
    await newSigner({ jwksEndpoint: 'https://idp.example.com/.well-known/jwks.json' });
  });

  it('update, patch, delete; gone is 404', async () => {
    const id = await newSigner({ jwksEndpoint: 'https://idp.example.com/jwks' });
    expectEmpty(await mgmt.call('PATCH', `/external-jwt-signers/${id}`, { enabled: false, clientId: 'patched' }));
    expect((await mgmt.call('GET', `/external-jwt-signers/${id}`)).body.data).toMatchObject({ enabled: false, clientId: 'patched' });
    expectEmpty(await mgmt.call('PUT', `/external-jwt-signers/${id}`, { name: uniqueName('put'), enabled: true, issuer: uniqueName('i'), audience: 'b', jwksEndpoint: 'https://idp.example.com/jwks2' }));
    expect((await mgmt.call('GET', `/external-jwt-signers/${id}`)).body.data).toMatchObject({ enabled: true, audience: 'b', clientId: null });
    expectEmpty(await mgmt.call('DELETE', `/external-jwt-signers/${id}`));
    expectError(await mgmt.call('DELETE', `/external-jwt-signers/${id}`), 404, 'NOT_FOUND');
    expectError(await mgmt.call('GET', `/external-jwt-signers/${id}`), 404, 'NOT_FOUND');
    expectError(await mgmt.call('PATCH', `/external-jwt-signers/${id}`, { enabled: true }), 404, 'NOT_FOUND');
  });

  it('the management list needs a session; the client list is anonymous', async () => {
    expectError(await ctl().http.get(`${BASE.management}/external-jwt-signers`), 401, 'UNAUTHORIZED');
    expectList(await mgmt.call('GET', '/external-jwt-signers'));
    const res = await ctl().http.get(`${BASE.client}/external-jwt-signers`);
    expectList(res);
    expectValid('client', 'GET', '/external-jwt-signers', 200, res.body);
    expect(res.body.data.length).toBeGreaterThan(0);
    expect(res.body.data[0].certPem).toBeUndefined();
  });
});

describe('method=ext-jwt', () => {
  let certSigner: { id: string; issuer: string; cert: ReturnType<typeof selfSignedCert> };
  beforeAll(async () => {
    const cert = selfSignedCert('ext-jwt-primary');
    const issuer = uniqueName('primary-iss');
    certSigner = { id: await newSigner({ issuer, audience: 'primary-aud', certPem: cert.certPem, kid: uniqueName('kid') }), issuer, cert };
  });

  it('authenticates with a valid token (sub = identity id) and names the signer as authenticator', async () => {
    const user = await createUser(mgmt);
    const token = await signJwt(certSigner.cert.privateKey, { iss: certSigner.issuer, aud: 'primary-aud', sub: user.id, exp: nowSeconds() + 300 });
    const res = await extJwtLogin(ctl().http, token);
    expectSuccess(res);
    expect(res.body.data).toMatchObject({ identityId: user.id, authenticatorId: certSigner.id, isMfaRequired: false });
    expect(res.headers['zt-session']).toBe(res.body.data.token);
  });

  it.each([
    ['missing', undefined],
    ['missing', 'ey23849384932.234238434928.a9e8hg4928h2'],
  ])('no usable token → 401 with the primary challenge (error="%s")', async (error, token) => {
    const res = await extJwtLogin(ctl().http, token);
    expectError(res, 401, 'UNAUTHORIZED');
    const [value] = challenge(res);
    expect(value).toMatch(new RegExp(`^Bearer realm="openziti-primary-ext-jwt" error="${error}" error_description="no matching token was provided" id="[^"]+" issuer="[^"]+"$`));
    expect(value!.split('id="')[1]!.split('"')[0]!.split('|')).toContain(certSigner.id);
  });

  it('expired and forged tokens → 401 with error="expired" / "invalid"', async () => {
    const user = await createUser(mgmt);
    const claims = { iss: certSigner.issuer, aud: 'primary-aud', sub: user.id, exp: nowSeconds() + 300 };
    const expired = await extJwtLogin(ctl().http, await signJwt(certSigner.cert.privateKey, { ...claims, exp: nowSeconds() - 3600 }));
    expectError(expired, 401, 'UNAUTHORIZED');
    expect(challenge(expired)[0]).toContain('error="expired" error_description="token expired"');
    const forged = await extJwtLogin(ctl().http, await signJwt(selfSignedCert('forger').privateKey, claims));
    expect(challenge(forged)[0]).toContain('error="invalid" error_description="token is invalid"');
    const wrongAudience = await extJwtLogin(ctl().http, await signJwt(certSigner.cert.privateKey, { ...claims, aud: 'someone-else' }));
    expect(challenge(wrongAudience)[0]).toContain('error="invalid"');
  });

  it('with keys from a JWKS endpoint and the identity found by externalId', async () => {
    const issuer = uniqueName('jwks-iss');
    await newSigner({ issuer, audience: 'jwks-aud', jwksEndpoint: jwks.url, useExternalId: true });
    const externalId = uniqueName('ext');
    const user = await createUser(mgmt, { externalId });
    const token = await signJwt(jwks.privateKey, { iss: issuer, aud: ['jwks-aud'], sub: externalId, exp: nowSeconds() + 300 }, { kid: jwks.kid });
    const res = await extJwtLogin(ctl().http, token);
    expectSuccess(res);
    expect(res.body.data.identityId).toBe(user.id);
    const unknownKid = await extJwtLogin(ctl().http, await signJwt(jwks.privateKey, { iss: issuer, aud: 'jwks-aud', sub: externalId, exp: nowSeconds() + 300 }, { kid: 'unknown' }));
    expectError(unknownKid, 401, 'UNAUTHORIZED');
  });

  it('the auth policy decides: ext-jwt not allowed, or not this signer → 401 INVALID_AUTH; disabled signer → 401', async () => {
    const other = await newSigner({ jwksEndpoint: 'https://idp.example.com/jwks-other' });
    const policy = expectCreated(await mgmt.call('POST', '/auth-policies', authPolicyBody(uniqueName('ap'), { extJwt: { allowedSigners: [other] } })), 'auth-policies');
    const user = await createUser(mgmt, { authPolicyId: policy });
    const token = () => signJwt(certSigner.cert.privateKey, { iss: certSigner.issuer, aud: 'primary-aud', sub: user.id, exp: nowSeconds() + 300 });
    expectError(await extJwtLogin(ctl().http, await token()), 401, 'INVALID_AUTH');
    expectEmpty(await mgmt.call('PATCH', `/auth-policies/${policy}`, { primary: { extJwt: { allowed: false, allowedSigners: [] } } }));
    expectError(await extJwtLogin(ctl().http, await token()), 401, 'INVALID_AUTH');
    expectEmpty(await mgmt.call('PATCH', `/auth-policies/${policy}`, { primary: { extJwt: { allowed: true } } }));
    expectSuccess(await extJwtLogin(ctl().http, await token()));
    expectEmpty(await mgmt.call('PATCH', `/external-jwt-signers/${certSigner.id}`, { enabled: false }));
    expectError(await extJwtLogin(ctl().http, await token()), 401, 'UNAUTHORIZED');
    expectEmpty(await mgmt.call('PATCH', `/external-jwt-signers/${certSigner.id}`, { enabled: true }));
  });
});

describe('a required secondary ext-jwt signer', () => {
  it('keeps the session partial until a valid token of that signer comes with each request', async () => {
    const cert = selfSignedCert('secondary');
    const issuer = uniqueName('sec-iss');
    const signer = await newSigner({ issuer, audience: 'sec-aud', certPem: cert.certPem, kid: uniqueName('kid'), externalAuthUrl: 'https://idp.example.com/login' });
    const policy = expectCreated(await mgmt.call('POST', '/auth-policies', authPolicyBody(uniqueName('ap-sec'), { secondary: { requireExtJwtSigner: signer } })), 'auth-policies');
    const user = await createUser(mgmt, { authPolicyId: policy });

    const { res, session } = await loginAs(ctl().http, user, 'client');
    expectSuccess(res);
    expect(challenge(res)).toEqual([
      `Bearer realm="openziti-secondary-ext-jwt" error="missing" error_description="no matching token was provided" id="${signer}" issuer="${issuer}"`,
    ]);
    expect(res.body.data.authQueries).toEqual([expect.objectContaining({ typeId: 'EXT-JWT', provider: 'url', id: signer, httpUrl: 'https://idp.example.com/login' })]);

    expectSuccess(await session.currentApiSession.get()); // partial sessions reach their own session
    expectError(await session.currentIdentity.get(), 401, 'UNAUTHORIZED');
    const good = await signJwt(cert.privateKey, { iss: issuer, aud: 'sec-aud', sub: user.id, exp: nowSeconds() + 300 });
    const withToken = withHeaders(session, { authorization: `Bearer ${good}` });
    expectSuccess(await withToken.call('GET', '/current-identity'));
    const current = await withToken.call('GET', '/current-api-session');
    expect(current.body.data.authQueries).toEqual([]);
    const expired = await signJwt(cert.privateKey, { iss: issuer, aud: 'sec-aud', sub: user.id, exp: nowSeconds() - 60 });
    expectError(await withHeaders(session, { authorization: `Bearer ${expired}` }).call('GET', '/current-identity'), 401, 'UNAUTHORIZED');
    expectError(await session.currentIdentity.get(), 401, 'UNAUTHORIZED'); // each request needs its token
  });

  it('a login that brings the primary and the secondary token as two Authorization lines is complete at once', async () => {
    const primaryCert = selfSignedCert('both-primary');
    const secondaryCert = selfSignedCert('both-secondary');
    const primaryIssuer = uniqueName('both-p-iss');
    const secondaryIssuer = uniqueName('both-s-iss');
    await newSigner({ issuer: primaryIssuer, audience: 'p-aud', certPem: primaryCert.certPem, kid: uniqueName('kid') });
    const signer = await newSigner({ issuer: secondaryIssuer, audience: 's-aud', certPem: secondaryCert.certPem, kid: uniqueName('kid') });
    const policy = expectCreated(await mgmt.call('POST', '/auth-policies', authPolicyBody(uniqueName('ap-both'), { secondary: { requireExtJwtSigner: signer } })), 'auth-policies');
    const user = await createUser(mgmt, { authPolicyId: policy });
    const exp = nowSeconds() + 300;
    const primary = await signJwt(primaryCert.privateKey, { iss: primaryIssuer, aud: 'p-aud', sub: user.id, exp });
    const secondary = await signJwt(secondaryCert.privateKey, { iss: secondaryIssuer, aud: 's-aud', sub: user.id, exp });
    const login = (authorization: string[]) =>
      ctl().http.request({ method: 'POST', path: '/edge/client/v1/authenticate?method=ext-jwt', json: {}, headers: { authorization } });

    const both = await login([`Bearer ${primary}`, `Bearer ${secondary}`]);
    expectSuccess(both);
    expect(both.body.data).toMatchObject({ identityId: user.id, authQueries: [] });
    expect(challenge(both)).toEqual([]);

    const primaryOnly = await login([`Bearer ${primary}`]);
    expectSuccess(primaryOnly);
    expect(primaryOnly.body.data.authQueries).toEqual([expect.objectContaining({ typeId: 'EXT-JWT', id: signer })]);
    expect(challenge(primaryOnly)[0]).toContain('realm="openziti-secondary-ext-jwt" error="missing"');
  });
});
