import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RequestPrincipal } from '@ziti/http-kit';
import { signJwt } from './testing/certs.js';
import { C, Harness, M } from './testing/harness.js';
import { METADATA_URLS } from './testing/outbound-spellings.js';

const now = () => Math.floor(Date.now() / 1000);

/** Where a signer's jwksEndpoint may point: checked when it is written and again on every fetch. */
describe('external JWT signers: outbound address checks', () => {
  let h: Harness;
  let admin: RequestPrincipal;
  let jwks: http.Server;
  let port: number;
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = { ...ec.publicKey.export({ format: 'jwk' }), kid: 'loop-1', use: 'sig' };

  beforeAll(async () => {
    h = await Harness.start(); // private addresses not allowed: the default
    admin = (await h.login()).principal;
    jwks = http.createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
    port = (jwks.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await h?.close();
    await new Promise((r) => jwks?.close(r));
  });

  const call = (method: string, url: string, body?: unknown) => h.call(method, url, { principal: admin, body });
  const signerRows = async () => h.sql<{ id: string; jwks_endpoint: string | null; name: string }>('SELECT id, jwks_endpoint, name FROM external_jwt_signers ORDER BY id');
  const refusal = (r: { status: number; body: any }) => [r.status, r.body?.error?.code, r.body?.error?.cause?.field];
  const REFUSED = [400, 'COULD_NOT_VALIDATE', 'jwksEndpoint'];
  let n = 0;
  const signerBody = (jwksEndpoint: string) => ({ name: `s-${++n}`, enabled: true, issuer: `iss-${n}`, audience: 'aud', jwksEndpoint });

  it.each(METADATA_URLS)('a create with %s is refused and writes nothing', async (url) => {
    const before = await signerRows();
    const r = await call('POST', `${M}/external-jwt-signers`, signerBody(url));
    expect(refusal(r)).toEqual(REFUSED);
    expect(r.body.error.cause.value).toBe(url);
    expect(await signerRows()).toEqual(before);
  });

  it('an update or a patch to any spelling of the metadata address is refused and changes nothing', async () => {
    const created = await call('POST', `${M}/external-jwt-signers`, signerBody('https://idp.example.com/jwks'));
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    const before = await signerRows();
    for (const url of METADATA_URLS) {
      expect([url, refusal(await call('PUT', `${M}/external-jwt-signers/${id}`, { ...signerBody(url), name: 'renamed' }))]).toEqual([url, REFUSED]);
      expect([url, refusal(await call('PATCH', `${M}/external-jwt-signers/${id}`, { jwksEndpoint: url, name: 'renamed' }))]).toEqual([url, REFUSED]);
    }
    expect(await signerRows()).toEqual(before);
    expect((await call('PATCH', `${M}/external-jwt-signers/${id}`, { jwksEndpoint: 'https://idp.example.com/jwks2' })).status).toBe(200);
  });

  it('a loopback JWKS endpoint works only with ZITI_OUTBOUND_ALLOW_PRIVATE', async () => {
    const user = await h.createUser(admin);
    const login = async () => {
      const token = await signJwt(ec.privateKey, { iss: 'iss-loop', aud: 'aud-loop', sub: user.id, exp: now() + 600 }, { kid: 'loop-1' });
      return h.call('POST', `${C}/authenticate?method=ext-jwt`, { body: {}, headers: { authorization: `Bearer ${token}` } });
    };
    const body = { name: 'loop', enabled: true, issuer: 'iss-loop', audience: 'aud-loop', jwksEndpoint: `http://127.0.0.1:${port}/jwks` };
    for (const jwksEndpoint of [body.jwksEndpoint, `http://localhost:${port}/jwks`, `http://[::1]:${port}/jwks`, `http://0x7f.1:${port}/jwks`]) {
      const r = await call('POST', `${M}/external-jwt-signers`, { ...body, jwksEndpoint });
      expect([jwksEndpoint, refusal(r)]).toEqual([jwksEndpoint, REFUSED]);
      expect(r.body.error.cause.reason).toContain('ZITI_OUTBOUND_ALLOW_PRIVATE');
    }

    await h.restart({ outboundAllowPrivate: true });
    const created = await call('POST', `${M}/external-jwt-signers`, body);
    expect(created.status).toBe(201);
    expect((await login()).status).toBe(200);

    // The stored endpoint is checked again on every fetch: with the setting off, no key is fetched.
    await h.restart({ outboundAllowPrivate: false });
    const refused = await login();
    expect([refused.status, refused.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
    expect(refused.headers.get('www-authenticate')).toContain('openziti-primary-ext-jwt');
    expect(h.logs.some((m) => m.includes(`fetching JWKS http://127.0.0.1:${port}/jwks failed`) && m.includes('loopback'))).toBe(true);
    // ... and so is a patch that leaves the endpoint as it is
    expect(refusal(await call('PATCH', `${M}/external-jwt-signers/${created.body.data.id}`, { name: 'loop-renamed' }))).toEqual(REFUSED);
  });
});
