import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALL_ROUTES } from '@ziti/api-contract';
import { principalCacheKey, tokenHash } from '@ziti/http-kit';
import { type InProcessEventBus, createInProcessBus, createMemoryCache } from '@ziti/messaging';
import yaml from 'js-yaml';
import { type RunningGateway, startGateway } from './index.js';
import { SECRET, call, startFakeIdentityAuth, startFakeUpstream } from './testing/harness.js';

const MISSING =
  'zt-session realm="zt-session" error="missing" error_description="no matching token was provided",Bearer realm="openziti-oidc" error="missing" error_description="no matching token was provided"';
const INVALID = 'zt-session realm="zt-session" error="invalid" error_description="token is invalid"';
const ERROR_META = { apiEnrollmentVersion: '0.0.1', apiVersion: '0.0.1' };
const MiB = 1024 * 1024;

describe('gateway (HTTPS, fake upstream and identity-auth)', () => {
  let dataDir: string;
  let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
  let identityAuth: Awaited<ReturnType<typeof startFakeIdentityAuth>>;
  let bus: InProcessEventBus;
  let cache: ReturnType<typeof createMemoryCache>;
  let gw: RunningGateway;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'gw-int-'));
    upstream = await startFakeUpstream();
    identityAuth = await startFakeIdentityAuth();
    bus = createInProcessBus();
    cache = createMemoryCache();
    gw = await startGateway({
      bus, cache, internalSecret: SECRET, listen: { host: '127.0.0.1', port: 0 }, dataDir,
      upstreams: { 'identity-auth': upstream.url }, identityAuthGrpc: identityAuth.address,
      instanceId: 'gw-test', version: 'v1.2.3', log: () => undefined,
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

  describe('TLS and startup', () => {
    it('serves HTTPS with a certificate chaining to the generated CA, advertised on localhost', () => {
      expect(gw.url).toBe(`https://127.0.0.1:${gw.port}`);
      expect(new X509Certificate(gw.caCertPem).ca).toBe(true);
    });

    it('reuses the PKI on the next start', async () => {
      const again = await startGateway({
        bus, cache, internalSecret: SECRET, listen: { host: '127.0.0.1', port: 0 }, dataDir, upstreams: {},
        identityAuthGrpc: identityAuth.address, log: () => undefined,
      });
      try {
        expect(again.caCertPem).toBe(gw.caCertPem);
      } finally {
        await again.stop();
      }
    });
  });

  describe('version and aliases', () => {
    it.each(['/', '/version', '//version', '/edge/client/v1', '/edge/client/v1/', '/edge/client/v1/version', '/edge/v1/version', '/edge/v1'])(
      'GET %s is the version',
      async (path) => {
        const r = await call(gw, { path });
        expect(r.status).toBe(200);
        expect(r.headers['content-type']).toMatch(/^application\/json/);
        const base = `https://127.0.0.1:${gw.port}`;
        expect(r.json).toEqual({
          data: {
            apiVersions: {
              edge: { v1: { path: '/edge/client/v1', apiBaseUrls: [`${base}/edge/client/v1`] } },
              'edge-client': { v1: { path: '/edge/client/v1', apiBaseUrls: [`${base}/edge/client/v1`] } },
              'edge-management': { v1: { path: '/edge/management/v1', apiBaseUrls: [`${base}/edge/management/v1`] } },
              'edge-oidc': { v1: { path: '/oidc', apiBaseUrls: [`${base}/oidc`] } },
            },
            buildDate: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
            capabilities: ['OIDC_AUTH', 'OIDC_AUTH_WITH_CSR'],
            revision: expect.any(String),
            runtimeVersion: process.version,
            version: 'v1.2.3',
          },
          meta: {},
        });
      },
    );

    it.each(['/edge/management/v1', '/edge/management/v1/', '/edge/management/v1/version'])('GET %s is the version', async (path) => {
      const r = await call(gw, { path });
      expect(r.status).toBe(200);
      expect(r.json.data.apiVersions.edge.v1.path).toBe('/edge/client/v1');
    });

    it('sets ziti-instance-id and server on every response, errors included', async () => {
      for (const path of ['/version', '/nope']) {
        const r = await call(gw, { path });
        expect(r.headers['ziti-instance-id']).toBe('gw-test');
        expect(r.headers.server).toBe('ziti-controller/v1.2.3');
      }
    });

    it('ignores tokens on anonymous routes: no lookup, no challenge', async () => {
      const before = identityAuth.calls.length;
      for (const headers of [{ authorization: 'Bearer whatever' }, { 'zt-session': 'bad-token' }] as Record<string, string>[]) {
        const r = await call(gw, { path: '/edge/management/v1/version', headers });
        expect(r.status).toBe(200);
        expect(r.headers['www-authenticate']).toBeUndefined();
        expect(r.headers['expires-at']).toBeUndefined();
      }
      expect(identityAuth.calls.length).toBe(before);
    });
  });

  describe('routing errors', () => {
    it.each(['/nope', '/edge/client/v1/nope', '/fabric/v1/nope', '/.well-known/openid-configuration', '/edge/management/v1/protocols'])(
      'GET %s is 404 NOT_FOUND in the envelope',
      async (path) => {
        const r = await call(gw, { path });
        expect(r.status).toBe(404);
        expect(r.json).toEqual({
          error: { code: 'NOT_FOUND', message: 'The resource requested was not found or is no longer available', requestId: expect.any(String) },
          meta: ERROR_META,
        });
      },
    );

    it('a known path with another verb is 405 METHOD_NOT_ALLOWED', async () => {
      const r = await call(gw, { method: 'DELETE', path: '/version' });
      expect(r.status).toBe(405);
      expect(r.json.error.code).toBe('METHOD_NOT_ALLOWED');
      expect(r.json.error.requestId).toMatch(/^[0-9a-zA-Z][0-9a-zA-Z.-]{8}$/);
    });
  });

  describe('body limit', () => {
    const big = JSON.stringify({ username: 'x', password: 'y'.repeat(MiB) });

    it('answers 413 to a declared body over 1 MiB, before authentication, without forwarding it', async () => {
      const before = upstream.requests.length;
      for (const path of ['/authenticate?method=password', '/edge/management/v1/identities']) {
        const r = await call(gw, { method: 'POST', path, body: big, headers: { 'content-type': 'application/json' } });
        expect(r.status).toBe(413);
        expect(r.headers['www-authenticate']).toBeUndefined();
        expect(r.json).toEqual({
          error: { code: 'REQUEST_ENTITY_TOO_LARGE', message: 'The request body is too large', requestId: expect.any(String) },
          meta: ERROR_META,
        });
      }
      expect(upstream.requests.length).toBe(before);
    });

    it('answers 413 to a chunked body that grows over 1 MiB', async () => {
      const before = upstream.requests.length;
      const r = await call(gw, { method: 'POST', path: '/authenticate?method=password', body: big, chunkSize: 64 * 1024, headers: { 'content-type': 'application/json' } });
      expect(r.status).toBe(413);
      expect(r.json.error.code).toBe('REQUEST_ENTITY_TOO_LARGE');
      expect(upstream.requests.length).toBe(before);
    });

    it('forwards a chunked body within the limit with its length', async () => {
      const body = JSON.stringify({ username: 'admin', password: 'p'.repeat(200_000) });
      const r = await call(gw, { method: 'POST', path: '/authenticate?method=password', body, chunkSize: 16 * 1024, headers: { 'content-type': 'application/json' } });
      expect(r.status).toBe(200);
      expect(last().body.toString()).toBe(body);
      expect(last().headers['content-length']).toBe(String(body.length));
      expect(last().headers['transfer-encoding']).toBeUndefined();
    });

    it('accepts a body of exactly 1 MiB', async () => {
      const body = 'x'.repeat(MiB);
      const r = await call(gw, { method: 'POST', path: '/authenticate?method=password', body, headers: { 'content-type': 'application/json' } });
      expect(r.status).toBe(200);
      expect(last().body.length).toBe(MiB);
    });
  });

  describe('CORS', () => {
    it('echoes the origin with credentials and exposes the session headers', async () => {
      const r = await call(gw, { path: '/version', headers: { origin: 'https://zac.example' } });
      expect(r.headers['access-control-allow-origin']).toBe('https://zac.example');
      expect(r.headers['access-control-allow-credentials']).toBe('true');
      const exposed = String(r.headers['access-control-expose-headers']).split(/,\s*/);
      expect(exposed).toEqual(expect.arrayContaining(['zt-session', 'expiration-seconds', 'expires-at']));
    });

    it('answers a preflight directly, even for a path that needs a session', async () => {
      const r = await call(gw, {
        method: 'OPTIONS', path: '/edge/management/v1/identities',
        headers: { origin: 'https://zac.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'zt-session, content-type' },
      });
      expect(r.status).toBe(200);
      expect(r.text).toBe('');
      expect(r.headers['access-control-allow-origin']).toBe('https://zac.example');
      expect(r.headers['access-control-allow-credentials']).toBe('true');
      expect(r.headers['access-control-allow-methods']).toBe('GET, HEAD, POST, PUT, PATCH, DELETE');
      expect(r.headers['access-control-allow-headers']).toBe('content-type, accept, authorization, zt-session');
      expect(r.headers['www-authenticate']).toBeUndefined();
    });
  });

  describe('authentication', () => {
    it.each([
      ['no header', {}],
      ['an empty bearer token', { authorization: 'Bearer ' }],
      ['an empty zt-session', { 'zt-session': '  ' }],
    ])('with %s, a session route is 401 with both challenges', async (_label, headers) => {
      const r = await call(gw, { path: '/current-identity', headers });
      expect(r.status).toBe(401);
      expect(r.headers['www-authenticate']).toBe(MISSING);
      expect(r.json.error.code).toBe('UNAUTHORIZED');
      expect(r.json.meta).toEqual(ERROR_META);
    });

    it('a bad token is 401 with the invalid-token challenge', async () => {
      const r = await call(gw, { path: '/current-identity', headers: { 'zt-session': 'nope' } });
      expect(r.status).toBe(401);
      expect(r.headers['www-authenticate']).toBe(INVALID);
      expect(r.json.error.code).toBe('UNAUTHORIZED');
    });

    it('a 401 from identity-auth without a challenge gets the invalid-token one', async () => {
      const r = await call(gw, { path: '/current-identity', headers: { 'ZT-Session': 'bare' } });
      expect(r.status).toBe(401);
      expect(r.headers['www-authenticate']).toBe(INVALID);
    });

    it('forwards a signed principal, strips inbound x-ziti-* headers and keeps the normalised path and query', async () => {
      const r = await call(gw, {
        path: '//current-identity?configTypes=all&x=1',
        headers: { 'zt-session': ' good ', 'x-ziti-principal': 'forged.sig', 'X-Ziti-Request-Id': 'forged', 'x-ziti-anything': '1' },
      });
      expect(r.status).toBe(200);
      const got = last();
      expect(got.url).toBe('/edge/client/v1/current-identity?configTypes=all&x=1');
      expect(got.principalError).toBeUndefined();
      expect(got.principal).toMatchObject({ identityId: 'id-good', apiSessionId: 'as-good' });
      expect(got.headers['x-ziti-anything']).toBeUndefined();
      expect(got.headers['x-ziti-request-id']).toMatch(/^[0-9a-zA-Z][0-9a-zA-Z.-]{8}$/);
      expect(got.headers['x-forwarded-proto']).toBe('https');
      expect(got.headers['x-forwarded-for']).toMatch(/127\.0\.0\.1/);
      expect(r.headers['x-ziti-internal-debug']).toBeUndefined();
      expect(Number(r.headers['expiration-seconds'])).toBeGreaterThan(1790);
      expect(r.headers['expires-at']).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,3})? \+0000 UTC$/);
    });

    it('does not forward a principal on anonymous routes', async () => {
      await call(gw, { method: 'POST', path: '/edge/management/v1/authenticate?method=password', body: '{}', headers: { 'zt-session': 'good', 'content-type': 'application/json' } });
      expect(last().url).toBe('/edge/management/v1/authenticate?method=password');
      expect(last().headers['x-ziti-principal']).toBeUndefined();
      expect(last().body.toString()).toBe('{}');
    });

    it('caches the principal, and an api-session.deleted event drops it', async () => {
      const token = 'good';
      await cache.del(principalCacheKey(token));
      const start = identityAuth.calls.length;
      expect((await call(gw, { path: '/current-api-session', headers: { 'zt-session': token } })).status).toBe(200);
      expect((await call(gw, { path: '/current-api-session', headers: { 'zt-session': token } })).status).toBe(200);
      expect(identityAuth.calls.length).toBe(start + 1);
      expect(await cache.get(principalCacheKey(token))).not.toBeNull();

      await bus.publish({
        id: 'evt-1', type: 'api-session.deleted', source: 'identity-auth', occurredAt: new Date().toISOString(),
        data: { apiSessionId: 'as-good', identityId: 'id-good', tokenHashes: [tokenHash(token)] },
      });
      await bus.idle();
      expect(await cache.get(principalCacheKey(token))).toBeNull();

      expect((await call(gw, { path: '/current-api-session', headers: { 'zt-session': token } })).status).toBe(200);
      expect(identityAuth.calls.length).toBe(start + 2);
    });
  });

  describe('informational endpoints', () => {
    it('lists the enumerated capabilities on both APIs', async () => {
      for (const path of ['/enumerated-capabilities', '/edge/management/v1/enumerated-capabilities']) {
        const r = await call(gw, { path });
        expect(r.json).toEqual({ data: ['OIDC_AUTH', 'HA_CONTROLLER', 'OIDC_AUTH_WITH_CSR'], meta: {} });
      }
    });

    it('lists the https protocol on the client API', async () => {
      const r = await call(gw, { path: '/edge/client/v1/protocols' });
      expect(r.json).toEqual({ data: { https: { address: `127.0.0.1:${gw.port}` } }, meta: {} });
    });

    it('lists each API its own spec, and details either', async () => {
      const client = await call(gw, { path: '/edge/client/v1/specs' });
      expect(client.json.data).toEqual([
        {
          _links: { self: { href: './specs/edge-client' }, spec: { href: './specs/edge-client/spec' } },
          createdAt: expect.stringMatching(/Z$/), id: 'edge-client', name: 'edge-client', tags: {}, updatedAt: expect.stringMatching(/Z$/),
        },
      ]);
      const management = await call(gw, { path: '/edge/management/v1/specs' });
      expect(management.json.data.map((s: { id: string }) => s.id)).toEqual(['edge-management']);
      const detail = await call(gw, { path: '/edge/client/v1/specs/edge-management' });
      expect(detail.json.data.name).toBe('edge-management');
      const missing = await call(gw, { path: '/edge/client/v1/specs/nope' });
      expect([missing.status, missing.json.error.code]).toEqual([404, 'NOT_FOUND']);
      expect((await call(gw, { path: '/edge/client/v1/specs/nope/spec' })).status).toBe(404);
    });

    it('serves the generated spec with every route of the API, as JSON and as YAML', async () => {
      const r = await call(gw, { path: '/edge/management/v1/specs/edge-management/spec' });
      expect(r.status).toBe(200);
      // The controller produces the document itself, not an envelope.
      expect(r.headers['content-type']).toMatch(/^application\/json/);
      const doc = r.json;
      expect(doc.data).toBeUndefined();
      expect(doc).toMatchObject({ swagger: '2.0', basePath: '/edge/management/v1', host: `127.0.0.1:${gw.port}` });
      for (const route of ALL_ROUTES.filter((x) => x.apis.includes('management'))) {
        expect(doc.paths[route.path][route.method.toLowerCase()].operationId).toBe(route.operationId);
      }

      const y = await call(gw, { path: '/edge/management/v1/specs/edge-management/spec', headers: { accept: 'text/yaml' } });
      expect(y.status).toBe(200);
      expect(y.headers['content-type']).toMatch(/^text\/yaml/);
      expect(yaml.load(y.text)).toEqual(doc);

      const raw = await call(gw, { path: '/edge/management/v1/swagger.json' });
      expect(raw.headers['content-type']).toMatch(/^application\/json/);
      expect(raw.json).toEqual(doc);
      const client = await call(gw, { path: '/edge/client/v1/swagger.json' });
      expect(client.json.basePath).toBe('/edge/client/v1');
      expect(client.json.paths['/protocols'].get.operationId).toBe('listProtocols');
    });
  });

  describe('health', () => {
    it('answers liveness and readiness under /ziti-internal', async () => {
      expect((await call(gw, { path: '/ziti-internal/healthz' })).json).toEqual({ service: 'gateway', status: 'ok' });
      expect((await call(gw, { path: '/ziti-internal/readyz' })).json).toEqual({ service: 'gateway', ready: true });
    });
  });
});
