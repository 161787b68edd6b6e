import { createPublicKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CLIENT_CERT_HEADER, handedOverPrincipal, principalCacheKey, readBody, revocationMarkerKey, sendJson, verifyClientCertChain } from '@ziti/http-kit';
import { type InProcessEventBus, createInProcessBus, createMemoryCache } from '@ziti/messaging';
import { listenHttp } from '@ziti/service-kit';
import { type RunningGateway, startGateway } from './index.js';
import { issueCertificate } from './pki/x509.js';
import { SECRET, call, startFakeIdentityAuth, startFakeUpstream } from './testing/harness.js';

const INVALID_BEARER = 'Bearer realm="openziti-oidc" error="invalid" error_description="token is invalid"';
const MiB = 1024 * 1024;

/** A self-signed client CA and a leaf it issued (PEM chain, leaf first), as an SDK presents it. */
function clientCertificate() {
  const caKeys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const now = Date.now();
  const caPem = issueCertificate({ commonName: 'Client CA', publicKey: caKeys.publicKey, selfPrivateKey: caKeys.privateKey, notBefore: new Date(now - 60_000), notAfter: new Date(now + 86_400_000), isCa: true });
  const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const certPem = issueCertificate({
    commonName: 'device', publicKey: keys.publicKey, notBefore: new Date(now - 60_000), notAfter: new Date(now + 86_400_000), isCa: false,
    issuer: { commonName: 'Client CA', privateKey: caKeys.privateKey, publicKey: createPublicKey(caKeys.privateKey) },
  });
  return { certPem: certPem + caPem, keyPem: keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), leaf: new X509Certificate(certPem) };
}

/** An access token as identity-auth issues it (the gateway reads its claims; the fake identity-auth accepts signature `good`). */
function accessToken(over: Record<string, unknown> = {}, signature = 'good'): string {
  const sec = Math.floor(Date.now() / 1000);
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const claims = { iss: 'https://localhost/oidc', sub: 'id-good', aud: ['openziti'], iat: sec - 5, nbf: sec - 5, exp: sec + 1800, jti: `jti-${Math.random()}`, z_asid: 'as-oidc', z_t: 'a', ...over };
  return `${part({ alg: 'ES256', kid: 'k1', typ: 'JWT' })}.${part(claims)}.${signature}`;
}

describe('gateway: OIDC pass-through, bearer sessions and advertising', () => {
  let dataDir: string;
  let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
  let identityAuth: Awaited<ReturnType<typeof startFakeIdentityAuth>>;
  let bus: InProcessEventBus;
  let cache: ReturnType<typeof createMemoryCache>;
  let gw: RunningGateway;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'gw-oidc-'));
    upstream = await startFakeUpstream();
    identityAuth = await startFakeIdentityAuth();
    bus = createInProcessBus();
    cache = createMemoryCache();
    gw = await startGateway({
      bus, cache, internalSecret: SECRET, listen: { host: '127.0.0.1', port: 0 }, dataDir,
      upstreams: { 'identity-auth': upstream.url }, identityAuthGrpc: identityAuth.address,
      authRateLimiter: { minSize: 5, maxSize: 5 }, loginFailureLimits: { perUsername: 0, perAddress: 0 },
      instanceId: 'gw-oidc', version: 'v1.2.3', log: () => undefined,
    });
  });

  afterAll(async () => {
    await gw?.stop();
    await upstream?.close();
    await identityAuth?.close();
    await bus?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const last = () => upstream.requests[upstream.requests.length - 1]!;

  describe('/oidc pass-through', () => {
    it('forwards /oidc paths to identity-auth unchanged, with query, body, the public Host and no principal', async () => {
      const body = 'username=alice&password=secret';
      const r = await call(gw, {
        method: 'POST',
        path: '//oidc//login/password?authRequestID=abc_-1&x=%2F',
        headers: { host: 'ctrl.example:8441', 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http', 'zt-session': 'good' },
        body,
      });
      expect(r.status).toBe(200);
      const got = last();
      expect([got.method, got.url]).toEqual(['POST', '/oidc/login/password?authRequestID=abc_-1&x=%2F']);
      expect(got.body.toString()).toBe(body);
      expect(got.headers['content-length']).toBe(String(body.length));
      expect(got.headers['x-forwarded-host']).toBe('ctrl.example:8441');
      expect(got.headers['x-forwarded-proto']).toBe('https');
      expect(got.headers['x-forwarded-for']).toMatch(/127\.0\.0\.1/);
      expect(got.headers['x-ziti-request-id']).toBe(r.headers['x-request-id']);
      expect(got.headers['x-ziti-principal']).toBeUndefined();
      expect(got.headers[CLIENT_CERT_HEADER]).toBeUndefined();
      expect(r.headers['x-ziti-internal-debug']).toBeUndefined();
    });

    it.each(['/oidc', '/oidc/', '/oidc/.well-known/openid-configuration', '/oidc/keys', '/oidc/not-an-edge-route'])('GET %s reaches identity-auth without a session', async (path) => {
      const before = identityAuth.calls.length + identityAuth.accessTokens.length;
      const r = await call(gw, { path });
      expect(r.status).toBe(200);
      expect(last().url).toBe(path);
      expect(identityAuth.calls.length + identityAuth.accessTokens.length).toBe(before);
    });

    it('forwards the signed client certificate chain when the TLS handshake carried one, and strips a forged one', async () => {
      const client = clientCertificate();
      const r = await call(gw, { method: 'POST', path: '/oidc/login/cert', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: '{}', clientCert: client });
      expect(r.status).toBe(200);
      const chain = verifyClientCertChain(SECRET, last().headers[CLIENT_CERT_HEADER] as string, last().headers['x-ziti-request-id'] as string);
      expect(new X509Certificate(chain[0]!).fingerprint256).toBe(client.leaf.fingerprint256);

      await call(gw, { method: 'POST', path: '/oidc/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded', [CLIENT_CERT_HEADER]: 'forged.value' }, body: 'grant_type=refresh_token' });
      expect(last().url).toBe('/oidc/oauth/token');
      expect(last().headers[CLIENT_CERT_HEADER]).toBeUndefined();
    });

    it('answers 413 to a body over 1 MiB without forwarding it', async () => {
      const before = upstream.requests.length;
      const r = await call(gw, { method: 'POST', path: '/oidc/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: Buffer.alloc(MiB + 1, 0x61) });
      expect(r.status).toBe(413);
      expect(upstream.requests.length).toBe(before);
    });

    it('leaves root /.well-known/openid-configuration 404, as OpenZiti does', async () => {
      const before = upstream.requests.length;
      const r = await call(gw, { path: '/.well-known/openid-configuration' });
      expect(r.status).toBe(404);
      expect(r.json.error.code).toBe('NOT_FOUND');
      expect(upstream.requests.length).toBe(before);
    });

    it('refuses OIDC logins beyond the auth limiter\'s window with 429, and admits again once they are answered', async () => {
      const release = upstream.gate();
      const start = upstream.requests.length;
      const held = Array.from({ length: 5 }, () => call(gw, { method: 'POST', path: '/oidc/login/password', headers: { 'content-type': 'application/json' }, body: '{"username":"u","password":"p"}' }));
      while (upstream.requests.length < start + 5) await new Promise((r) => setTimeout(r, 10));
      const refused = await call(gw, { method: 'POST', path: '/oidc/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code' });
      expect(refused.status).toBe(429);
      expect(refused.json.error.code).toBe('SERVER_TOO_MANY_REQUESTS');
      expect(upstream.requests.length).toBe(start + 5);
      // discovery and the rest of the provider are never limited
      const discovery = call(gw, { path: '/oidc/.well-known/openid-configuration' });
      while (upstream.requests.length < start + 6) await new Promise((r) => setTimeout(r, 10));
      release();
      expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      expect((await discovery).status).toBe(200);
      expect((await call(gw, { method: 'POST', path: '/oidc/oauth/token', body: 'grant_type=authorization_code' })).status).toBe(200);
    });

    it('hands /oidc requests to an identity-auth app in the same process (all-in-one) exactly as through the proxy', async () => {
      const seen: { url?: string; body: string; headers: IncomingMessage['headers']; handedOver: boolean }[] = [];
      const app = (req: IncomingMessage, res: ServerResponse) => {
        void readBody(req, MiB).then((body) => {
          seen.push({ url: req.url, body: body.toString(), headers: req.headers, handedOver: handedOverPrincipal(req) !== undefined });
          sendJson(res, { ok: true });
        });
      };
      const listener = await listenHttp(app, '127.0.0.1', 0, 'identity-auth');
      const local = await startGateway({
        bus, cache, internalSecret: SECRET, listen: { host: '127.0.0.1', port: 0 }, dataDir, upstreams: { 'identity-auth': listener.url },
        identityAuthGrpc: identityAuth.address, log: () => undefined,
      });
      try {
        const client = clientCertificate();
        const r = await call(local, {
          method: 'POST', path: '/oidc/login/cert?authRequestID=r1', body: '{"id":"r1"}', clientCert: client,
          headers: { host: 'ctrl.example', 'content-type': 'application/json', 'x-forwarded-host': 'evil.example' },
        });
        expect(r.status).toBe(200);
        expect(seen).toHaveLength(1);
        const got = seen[0]!;
        expect([got.url, got.body, got.handedOver]).toEqual(['/oidc/login/cert?authRequestID=r1', '{"id":"r1"}', false]);
        expect(got.headers['x-forwarded-host']).toBe('ctrl.example');
        expect(got.headers['x-forwarded-proto']).toBe('https');
        const chain = verifyClientCertChain(SECRET, got.headers[CLIENT_CERT_HEADER] as string, got.headers['x-ziti-request-id'] as string);
        expect(new X509Certificate(chain[0]!).fingerprint256).toBe(client.leaf.fingerprint256);
      } finally {
        await local.stop();
        await listener.close();
      }
    });

    it('is 503 when no identity-auth upstream is configured', async () => {
      const bare = await startGateway({
        bus, cache, internalSecret: SECRET, listen: { host: '127.0.0.1', port: 0 }, dataDir, upstreams: {},
        identityAuthGrpc: identityAuth.address, log: () => undefined,
      });
      try {
        const r = await call(bare, { path: '/oidc/keys' });
        expect(r.status).toBe(503);
        expect(r.json.error.code).toBe('UNHANDLED');
      } finally {
        await bare.stop();
      }
    });
  });

  describe('bearer sessions', () => {
    it('authenticates a request by its access token: the principal is forwarded, no session expiry headers', async () => {
      const token = accessToken();
      const r = await call(gw, { path: '/current-identity', headers: { authorization: `Bearer ${token}` } });
      expect(r.status).toBe(200);
      expect(last().principal).toMatchObject({ identityId: 'id-good', apiSessionId: 'as-oidc' });
      expect(r.headers['expiration-seconds']).toBeUndefined();
      expect(r.headers['expires-at']).toBeUndefined();
      expect(r.headers['zt-session']).toBeUndefined();
      expect(identityAuth.accessTokens).toContain(token);
      expect(await cache.get(principalCacheKey(token))).not.toBeNull();
    });

    it('uses only the first bearer token; with a zt-session, bearer tokens stay secondary factors', async () => {
      const token = accessToken();
      const other = accessToken({}, 'bad');
      const r = await call(gw, { path: '/current-identity', headers: { authorization: [`Bearer ${token}`, `Bearer ${other}`] } });
      expect(r.status).toBe(200);
      expect(identityAuth.accessTokens).not.toContain(other);

      const legacy = await call(gw, { path: '/current-identity', headers: { 'zt-session': 'good-legacy', authorization: `Bearer ${token}` } });
      expect(legacy.status).toBe(200);
      expect(identityAuth.calls).toContain('good-legacy');
      expect(Number(legacy.headers['expiration-seconds'])).toBeGreaterThan(0);
    });

    it('a malformed or invalid access token is 401 with the invalid bearer challenge', async () => {
      for (const token of ['abc.def.ghi', 'opaque', accessToken({}, 'bad')]) {
        const r = await call(gw, { path: '/current-identity', headers: { authorization: `Bearer ${token}` } });
        expect(r.status).toBe(401);
        expect(r.json.error.code).toBe('UNAUTHORIZED');
        expect(r.headers['www-authenticate']).toBe(INVALID_BEARER);
      }
    });

    it.each([
      ['JTI', (c: { jti: string }) => c.jti],
      ['API_SESSION', () => 'as-oidc'],
    ] as const)('a %s revocation marker refuses a cached token at once', async (type, idOf) => {
      const jti = `jti-${type}-${Date.now()}`;
      const token = accessToken({ jti });
      expect((await call(gw, { path: '/current-identity', headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
      await cache.set(revocationMarkerKey(type, idOf({ jti })), String(Date.now()), 60);
      try {
        const r = await call(gw, { path: '/current-identity', headers: { authorization: `Bearer ${token}` } });
        expect(r.status).toBe(401);
        expect(r.headers['www-authenticate']).toBe(INVALID_BEARER);
        expect(await cache.get(principalCacheKey(token))).toBeNull();
      } finally {
        await cache.del(revocationMarkerKey(type, idOf({ jti })));
      }
    });

    it('an IDENTITY revocation marker refuses tokens issued before it, not those issued after', async () => {
      const sec = Math.floor(Date.now() / 1000);
      const old = accessToken({ iat: sec - 120 });
      const fresh = accessToken({ iat: sec + 1 });
      await cache.set(revocationMarkerKey('IDENTITY', 'id-good'), String((sec - 60) * 1000), 60);
      try {
        expect((await call(gw, { path: '/current-identity', headers: { authorization: `Bearer ${old}` } })).status).toBe(401);
        expect((await call(gw, { path: '/current-identity', headers: { authorization: `Bearer ${fresh}` } })).status).toBe(200);
      } finally {
        await cache.del(revocationMarkerKey('IDENTITY', 'id-good'));
      }
    });
  });

  describe('/version', () => {
    it('advertises OIDC: the capabilities and the edge-oidc API', async () => {
      for (const path of ['/version', '/edge/management/v1/version']) {
        const r = await call(gw, { path });
        expect(r.status).toBe(200);
        expect(r.json.data.capabilities).toEqual(['OIDC_AUTH', 'OIDC_AUTH_WITH_CSR']);
        expect(r.json.data.apiVersions['edge-oidc']).toEqual({ v1: { path: '/oidc', apiBaseUrls: [`https://127.0.0.1:${gw.port}/oidc`] } });
      }
    });
  });
});
