import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RequestPrincipal } from '@ziti/http-kit';
import { selfSignedCert, signJwt } from './testing/certs.js';
import { C, Harness, M } from './testing/harness.js';

const now = () => Math.floor(Date.now() / 1000);

describe('external JWT signers and ext-jwt authentication', () => {
  let h: Harness;
  let admin: RequestPrincipal;
  let jwks: http.Server;
  let jwksUrl: string;
  let jwksHits = 0;
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = { ...ec.publicKey.export({ format: 'jwk' }), kid: 'ec-1', use: 'sig' };

  beforeAll(async () => {
    // The JWKS server of these tests is on loopback: private addresses are allowed explicitly.
    h = await Harness.start({ outboundAllowPrivate: true });
    admin = (await h.login()).principal;
    jwks = http.createServer((_req, res) => {
      jwksHits++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
    jwksUrl = `http://localhost:${(jwks.address() as AddressInfo).port}/jwks`;
  });
  afterAll(async () => {
    await h?.close();
    await new Promise((r) => jwks?.close(r));
  });

  const call = (method: string, url: string, body?: unknown) => h.call(method, url, { principal: admin, body });
  const extJwt = (token?: string) =>
    h.call('POST', `${C}/authenticate?method=ext-jwt`, { body: {}, headers: token ? { authorization: `Bearer ${token}` } : {} });

  it('CRUD and validation of signers; the client list is anonymous and shows enabled signers', async () => {
    const cert = selfSignedCert('crud-signer');
    const r = await call('POST', `${M}/external-jwt-signers`, {
      name: 'crud', enabled: true, issuer: 'iss-crud', audience: 'aud-crud', certPem: cert.certPem, kid: 'kid-crud',
      externalAuthUrl: 'https://idp.example.com/auth', clientId: 'cid', scopes: ['openid'], claimsProperty: 'email', useExternalId: true,
    });
    expect(r.status).toBe(201);
    const d = (await call('GET', `${M}/external-jwt-signers/${r.body.data.id}`)).body.data;
    expect(d).toMatchObject({
      name: 'crud', enabled: true, issuer: 'iss-crud', audience: 'aud-crud', certPem: cert.certPem, kid: 'kid-crud', fingerprint: cert.fingerprint,
      commonName: 'crud-signer', externalAuthUrl: 'https://idp.example.com/auth', clientId: 'cid', scopes: ['openid'], claimsProperty: 'email',
      useExternalId: true, targetToken: 'ACCESS', jwksEndpoint: null,
    });
    const only = await call('POST', `${M}/external-jwt-signers`, { name: 'only', enabled: false, issuer: 'iss-only', audience: 'aud', jwksEndpoint: 'https://idp.example.com/jwks' });
    const od = (await call('GET', `${M}/external-jwt-signers/${only.body.data.id}`)).body.data;
    expect(od).toMatchObject({ claimsProperty: 'sub', useExternalId: false, externalAuthUrl: null, kid: null, fingerprint: null, certPem: null, commonName: '', notAfter: '0001-01-01T00:00:00.000Z' });

    const dupIssuer = await call('POST', `${M}/external-jwt-signers`, { name: 'dup', enabled: true, issuer: 'iss-crud', audience: 'a', jwksEndpoint: 'https://x.example/jwks' });
    expect([dupIssuer.status, dupIssuer.body.error.cause.field]).toEqual([400, 'issuer']);
    const dupCert = await call('POST', `${M}/external-jwt-signers`, { name: 'dup2', enabled: true, issuer: 'iss-2', audience: 'a', certPem: cert.certPem, kid: 'kid-2' });
    expect([dupCert.status, dupCert.body.error.cause.field]).toEqual([400, 'fingerprint']);
    const metadata = await call('POST', `${M}/external-jwt-signers`, { name: 'm', enabled: true, issuer: 'iss-m', audience: 'a', jwksEndpoint: 'http://169.254.169.254/latest/meta-data/' });
    expect([metadata.status, metadata.body.error.code, metadata.body.error.cause.field]).toEqual([400, 'COULD_NOT_VALIDATE', 'jwksEndpoint']);
    const file = await call('POST', `${M}/external-jwt-signers`, { name: 'f', enabled: true, issuer: 'iss-f', audience: 'a', jwksEndpoint: 'file:///etc/passwd' });
    expect(file.status).toBe(400);
    const noKid = await call('POST', `${M}/external-jwt-signers`, { name: 'k', enabled: true, issuer: 'iss-k', audience: 'a', certPem: selfSignedCert('k').certPem });
    expect([noKid.status, noKid.body.error.cause.field]).toEqual([400, 'kid']);
    expect((await call('POST', `${M}/external-jwt-signers`, { name: 'x', issuer: 'i', audience: 'a' })).status).toBe(400);

    const client = await h.call('GET', `${C}/external-jwt-signers`);
    expect(client.status).toBe(200);
    const names = client.body.data.map((s: { name: string }) => s.name);
    expect(names).toContain('crud');
    expect(names).not.toContain('only');
    expect(client.body.data.find((s: { name: string }) => s.name === 'crud')).toEqual(
      expect.objectContaining({ externalAuthUrl: 'https://idp.example.com/auth', clientId: 'cid', audience: 'aud-crud', scopes: ['openid'], targetToken: 'ACCESS' }),
    );
    expect(client.body.data[0].certPem).toBeUndefined();
    expect((await h.call('GET', `${M}/external-jwt-signers`)).status).toBe(401);

    expect((await call('PATCH', `${M}/external-jwt-signers/${only.body.data.id}`, { enabled: true, clientId: 'c2' })).status).toBe(200);
    expect((await call('GET', `${M}/external-jwt-signers/${only.body.data.id}`)).body.data).toMatchObject({ enabled: true, clientId: 'c2', name: 'only' });
    expect((await call('DELETE', `${M}/external-jwt-signers/${only.body.data.id}`)).status).toBe(200);
    expect((await call('DELETE', `${M}/external-jwt-signers/${only.body.data.id}`)).status).toBe(404);
  });

  it('authenticates with a certificate signer; expired, forged and unknown tokens get the primary challenge', async () => {
    const cert = selfSignedCert('primary');
    const signer = (await call('POST', `${M}/external-jwt-signers`, { name: 'primary', enabled: true, issuer: 'iss-primary', audience: 'aud-primary', certPem: cert.certPem, kid: 'kid-primary' })).body.data.id;
    const user = await h.createUser(admin);
    const claims = { iss: 'iss-primary', aud: 'aud-primary', sub: user.id, exp: now() + 600 };
    const ok = await extJwt(await signJwt(cert.privateKey, claims, { kid: 'kid-primary' }));
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ identityId: user.id, authenticatorId: signer, authQueries: [] });
    await h.settle();
    expect(h.events.filter((e) => e.type === 'api-session.created' && (e.data as { id: string }).id === ok.body.data.id).map((e) => e.data)).toEqual([
      { id: ok.body.data.id, apiSessionId: ok.body.data.id, identityId: user.id },
    ]);

    const challenge = (r: { headers: Headers }) => r.headers.get('www-authenticate') ?? '';
    const expired = await extJwt(await signJwt(cert.privateKey, { ...claims, exp: now() - 60 }));
    expect([expired.status, expired.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
    expect(challenge(expired)).toMatch(/^Bearer realm="openziti-primary-ext-jwt" error="expired" error_description="token expired" id="[^"]*" issuer="[^"]*"$/);
    expect(challenge(expired)).toContain(signer);
    expect(challenge(expired)).toContain('iss-primary');
    const forged = await extJwt(await signJwt(selfSignedCert('other').privateKey, claims));
    expect(challenge(forged)).toContain('error="invalid"');
    const wrongAud = await extJwt(await signJwt(cert.privateKey, { ...claims, aud: 'other' }));
    expect(challenge(wrongAud)).toContain('error="invalid"');
    expect(challenge(await extJwt('not.a.jwt'))).toContain('error="missing"');
    expect(challenge(await extJwt())).toContain('error="missing"');
    const unknownSub = await extJwt(await signJwt(cert.privateKey, { ...claims, sub: 'nobody' }));
    expect([unknownSub.status, unknownSub.body.error.code]).toEqual([401, 'INVALID_AUTH']);
    await call('POST', `${M}/identities/${user.id}/disable`, { durationMinutes: 0 });
    expect((await extJwt(await signJwt(cert.privateKey, claims))).body.error.code).toBe('INVALID_AUTH');
  });

  it('keys from a JWKS endpoint (fetched, cached), the externalId claim and the allowed signers of the policy', async () => {
    const signer = (await call('POST', `${M}/external-jwt-signers`, {
      name: 'jwks', enabled: true, issuer: 'iss-jwks', audience: 'aud-jwks', jwksEndpoint: jwksUrl, useExternalId: true, claimsProperty: '/ext/id',
    })).body.data.id;
    const user = await h.createUser(admin, { externalId: 'ext-jwks-user' });
    const token = () => signJwt(ec.privateKey, { iss: 'iss-jwks', aud: ['aud-jwks', 'x'], ext: { id: 'ext-jwks-user' }, exp: now() + 600 }, { kid: 'ec-1' });
    const before = jwksHits;
    expect((await extJwt(await token())).body.data.identityId).toBe(user.id);
    expect((await extJwt(await token())).status).toBe(200);
    expect(jwksHits - before).toBe(1);
    const unknownKid = await extJwt(await signJwt(ec.privateKey, { iss: 'iss-jwks', aud: 'aud-jwks', ext: { id: 'ext-jwks-user' }, exp: now() + 600 }, { kid: 'nope' }));
    expect(unknownKid.headers.get('www-authenticate')).toContain('error="invalid"');

    const body = {
      name: 'only-other-signer',
      primary: { cert: { allowed: true, allowExpiredCerts: true }, extJwt: { allowed: true, allowedSigners: ['nope'] }, updb: { allowed: true, minPasswordLength: 5, requireSpecialChar: false, requireNumberChar: false, requireMixedCase: false, maxAttempts: 0, lockoutDurationMinutes: 0 } },
      secondary: { requireTotp: false },
    };
    expect((await call('POST', `${M}/auth-policies`, body)).status).toBe(404);
    const other = selfSignedCert('other-allowed');
    const otherSigner = (await call('POST', `${M}/external-jwt-signers`, { name: 'other-allowed', enabled: true, issuer: 'iss-other', audience: 'a', certPem: other.certPem, kid: 'k-other' })).body.data.id;
    body.primary.extJwt.allowedSigners = [otherSigner];
    const policy = (await call('POST', `${M}/auth-policies`, body)).body.data.id;
    await call('PATCH', `${M}/identities/${user.id}`, { authPolicyId: policy });
    expect((await extJwt(await token())).body.error.code).toBe('INVALID_AUTH');
    const ref = await call('DELETE', `${M}/external-jwt-signers/${otherSigner}`);
    expect([ref.status, ref.body.error.code]).toEqual([409, 'CAN_NOT_DELETE_REFERENCED_ENTITY']);
    void signer;
  });

  it('a required secondary signer keeps the session partial until its token comes with the request', async () => {
    const cert = selfSignedCert('secondary');
    const signer = (await call('POST', `${M}/external-jwt-signers`, { name: 'secondary', enabled: true, issuer: 'iss-sec', audience: 'aud-sec', certPem: cert.certPem, kid: 'kid-sec', externalAuthUrl: 'https://idp.example.com/login' })).body.data.id;
    const body = {
      name: 'needs-secondary',
      primary: { cert: { allowed: true, allowExpiredCerts: true }, extJwt: { allowed: true, allowedSigners: [] }, updb: { allowed: true, minPasswordLength: 5, requireSpecialChar: false, requireNumberChar: false, requireMixedCase: false, maxAttempts: 0, lockoutDurationMinutes: 0 } },
      secondary: { requireTotp: false, requireExtJwtSigner: signer },
    };
    const policy = (await call('POST', `${M}/auth-policies`, body)).body.data.id;
    const user = await h.createUser(admin, { authPolicyId: policy }, 'sec-pass1');
    const login = await h.call('POST', `${C}/authenticate?method=password`, { body: { username: user.username, password: 'sec-pass1' } });
    expect(login.status).toBe(200);
    expect(login.headers.get('www-authenticate')).toBe(
      `Bearer realm="openziti-secondary-ext-jwt" error="missing" error_description="no matching token was provided" id="${signer}" issuer="iss-sec"`,
    );
    expect(login.body.data.authQueries).toEqual([{ typeId: 'EXT-JWT', provider: 'url', id: signer, httpUrl: 'https://idp.example.com/login', clientId: '', scopes: [] }]);
    const token = login.headers.get('zt-session')!;
    const partial = await h.resolve(token);
    expect(partial.principal!.isFullyAuthenticated).toBe(false);
    expect(partial.cacheTtlSeconds).toBe(0);
    expect(partial.wwwAuthenticate).toContain('openziti-secondary-ext-jwt');
    const good = await signJwt(cert.privateKey, { iss: 'iss-sec', aud: 'aud-sec', sub: user.id, exp: now() + 600 });
    const full = await h.resolve(token, [good]);
    expect([full.principal!.isFullyAuthenticated, full.wwwAuthenticate]).toEqual([true, '']);
    const expired = await h.resolve(token, [await signJwt(cert.privateKey, { iss: 'iss-sec', aud: 'aud-sec', sub: user.id, exp: now() - 5 })]);
    expect(expired.wwwAuthenticate).toContain('error="expired"');
    const someoneElse = await h.resolve(token, [await signJwt(cert.privateKey, { iss: 'iss-sec', aud: 'aud-sec', sub: admin.identityId, exp: now() + 600 })]);
    expect([someoneElse.principal!.isFullyAuthenticated, someoneElse.wwwAuthenticate]).toEqual([false, expect.stringContaining('error="invalid"')]);
    const withToken = await h.call('POST', `${C}/authenticate?method=password`, {
      body: { username: user.username, password: 'sec-pass1' },
      headers: { authorization: `Bearer ${good}` },
    });
    expect([withToken.headers.get('www-authenticate'), withToken.body.data.authQueries]).toEqual([null, []]);
    const current = await h.call('GET', `${C}/current-api-session`, { principal: partial.principal as RequestPrincipal, headers: { authorization: `Bearer ${good}` } });
    expect(current.body.data.authQueries).toEqual([]);
  });
});
