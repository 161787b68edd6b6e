import { X509Certificate, verify } from 'node:crypto';
import { BASE } from '../support/clients.js';
import { caCerts, jose, withClientCert } from '../support/clients-pki.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectError, expectList, expectSuccess } from '../support/envelope.js';
import { certificates, chainsTo, fingerprintOf, pkcs7Certificates, servedCertificate, thirdPartyCa } from '../support/x509.js';

/** Trust material: EST cacerts (§6.6), network JWTs (§6.7), JWKS and the challenge, /controllers, mTLS. */

const ctl = useController();
failOnConformanceProblems();

let served: X509Certificate;
let host: string;
let port: number;
beforeAll(async () => {
  const url = new URL(ctl().url);
  host = url.hostname;
  port = Number(url.port);
  served = await servedCertificate(host, port);
});

describe('GET /.well-known/est/cacerts', () => {
  it.each(['/.well-known/est/cacerts', `${BASE.client}/.well-known/est/cacerts`, `${BASE.management}/.well-known/est/cacerts`])(
    '%s: base64 PKCS#7 certs-only in 64-character lines, holding the roots of the served certificate',
    async (path) => {
      const res = await caCerts(ctl().http, path);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/pkcs7-mime');
      expect(res.headers['content-transfer-encoding']).toBe('base64');
      const lines = res.text.split('\n');
      expect(lines.length).toBeGreaterThan(1);
      expect(lines.slice(0, -1).every((l) => l.length === 64)).toBe(true);
      expect(lines.every((l) => /^[A-Za-z0-9+/=]+$/.test(l))).toBe(true);
      const certs = pkcs7Certificates(res.text);
      expect(certs.length).toBe(2);
      expect(certs.every((c) => c.ca)).toBe(true);
      const [root, intermediate] = certs;
      expect(chainsTo(served, [intermediate!], root!)).toBe(true);
      expect(root!.verify(root!.publicKey)).toBe(true);
    },
  );

  it('is the trust the test client already uses (the root it was given)', async () => {
    const res = await caCerts(ctl().http, '/.well-known/est/cacerts');
    expect(pkcs7Certificates(res.text)[0]!.raw).toEqual(certificates(ctl().running.caCertPem)[0]!.raw);
  });
});

describe('GET /network-jwts', () => {
  it.each([['/network-jwts'], [`${BASE.client}/network-jwts`], [`${BASE.management}/network-jwts`]])('%s: one "default" JWT with the claims of §6.7, signed by the served TLS certificate', async (path) => {
    const res = await ctl().http.get(path);
    expectSuccess(res);
    expect(res.body.data).toEqual([{ name: 'default', token: expect.any(String) }]);
    const token = res.body.data[0].token as string;
    const { jwtVerify, decodeProtectedHeader } = await jose();
    const iss = `https://${host}:${port}/`;
    const { payload } = await jwtVerify(token, served.publicKey, { issuer: iss, audience: 'openziti-enroller' });
    expect(payload).toEqual({ iss, sub: iss, aud: ['openziti-enroller'], jti: expect.stringMatching(/^[0-9a-f-]{36}$/), em: 'network' });
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES256', kid: fingerprintOf(served), typ: 'JWT' });
  });

  it('needs no session and ignores a bad token', async () => {
    const res = await ctl().http.get(`${BASE.client}/network-jwts`, 'not-a-session');
    expectSuccess(res);
    expect(res.headers['www-authenticate']).toBeUndefined();
  });
});

describe('GET /enroll/jwks and POST /enroll/challenge', () => {
  it('publishes the signing key of enrollment JWTs, with its certificate', async () => {
    const res = await ctl().http.get(`${BASE.client}/enroll/jwks`);
    expect(res.status).toBe(200);
    const [key] = res.body.keys;
    expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', kid: fingerprintOf(served), alg: 'ES256', use: 'sig' });
    expect(Buffer.from(key.x5c[0], 'base64')).toEqual(served.raw);
    const network = (await ctl().http.get('/network-jwts')).body.data[0].token;
    expect((await jose()).decodeProtectedHeader(network).kid).toBe(key.kid);
  });

  it('signs the caller\'s nonce with the named key; an unknown key is a field error', async () => {
    const nonce = '6f1c2b9e-0d1a-4c55-9e1f-0a1b2c3d4e5f';
    const res = await ctl().http.post(`${BASE.client}/enroll/challenge`, { nonce, keyId: fingerprintOf(served) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ algorithm: 'ES256', kid: fingerprintOf(served) });
    expect(verify('sha256', Buffer.from(nonce), served.publicKey, Buffer.from(res.body.signature, 'base64'))).toBe(true);
    expect(certificates(res.body.caPool)).toHaveLength(2);
    const unknown = await ctl().http.post(`${BASE.client}/enroll/challenge`, { nonce, keyId: 'nope' });
    expectError(unknown, 400, 'COULD_NOT_VALIDATE');
    const missing = await ctl().http.post(`${BASE.client}/enroll/challenge`, { keyId: 'nope' });
    expectError(missing, 400, 'COULD_NOT_VALIDATE');
  });
});

describe('GET /controllers', () => {
  it.each(['client', 'management'] as const)('%s API: this controller with the addresses of both edge APIs', async (api) => {
    const session = await ctl().adminSession(api);
    const res = await session.call('GET', '/controllers');
    expectList(res);
    expect(res.body.meta.pagination).toEqual({ limit: 10, offset: 0, totalCount: 1 });
    const [c] = res.body.data;
    expect(c).toMatchObject({
      isOnline: true,
      fingerprint: fingerprintOf(served),
      apiAddresses: {
        'edge-client': [{ url: `https://${host}:${port}${BASE.client}`, version: 'v1' }],
        'edge-management': [{ url: `https://${host}:${port}${BASE.management}`, version: 'v1' }],
      },
    });
    expect(new X509Certificate(c.certPem).raw).toEqual(served.raw);
  });

  it('needs a session', async () => {
    expectError(await ctl().http.get(`${BASE.client}/controllers`), 401, 'UNAUTHORIZED');
  });
});

describe('mutual TLS', () => {
  it('accepts a handshake with a client certificate (any issuer) on any route', async () => {
    const device = thirdPartyCa().issue('mtls-device');
    const res = await withClientCert(ctl().http, device, 'GET', '/version');
    expectSuccess(res);
    const jwts = await withClientCert(ctl().http, device, 'GET', '/network-jwts');
    expectSuccess(jwts);
  });

  it('carries the presented chain to the enroll flows (a foreign certificate fails validation, no certificate too)', async () => {
    const device = thirdPartyCa().issue('foreign');
    const withCert = await withClientCert(ctl().http, device, 'POST', '/enroll/ottca', { token: '6f1c2b9e-0d1a-4c55-9e1f-0a1b2c3d4e5f' });
    expectError(withCert, 400, 'INVALID_ENROLLMENT_TOKEN');
    const ca = await withClientCert(ctl().http, device, 'POST', '/enroll/ca');
    expect(ca.status).toBe(400);
    expect(['CERT_FAILED_VALIDATION', 'ENROLLMENT_NO_VALID_CAS']).toContain(ca.body.error.code);
  });
});
