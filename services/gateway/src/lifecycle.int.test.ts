import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInProcessBus, createMemoryCache } from '@ziti/messaging';
import { startGateway } from './index.js';
import { SECRET, call, startFakeIdentityAuth, startFakeUpstream } from './testing/harness.js';

const ERROR_META = { apiEnrollmentVersion: '0.0.1', apiVersion: '0.0.1' };

describe('gateway without a reachable upstream', () => {
  let dataDir: string;
  let identityAuth: Awaited<ReturnType<typeof startFakeIdentityAuth>>;
  const bus = createInProcessBus();
  const cache = createMemoryCache();

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'gw-int2-'));
    identityAuth = await startFakeIdentityAuth();
  });
  afterAll(async () => {
    await identityAuth.close();
    await bus.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const start = (upstreams: Record<string, string>) =>
    startGateway({
      bus, cache, internalSecret: SECRET, listen: { host: '127.0.0.1', port: 0 }, dataDir, upstreams,
      identityAuthGrpc: identityAuth.address, log: () => undefined,
    });

  it('answers 503 in the envelope for a context without an upstream', async () => {
    const gw = await start({});
    try {
      const r = await call(gw, { method: 'POST', path: '/authenticate?method=password', body: '{}' });
      expect(r.status).toBe(503);
      expect(r.json.error).toMatchObject({ code: 'UNHANDLED', requestId: expect.any(String) });
      expect(r.json.meta).toEqual(ERROR_META);
    } finally {
      await gw.stop();
    }
  });

  it('answers 503 SERVICE_UNAVAILABLE when the upstream refuses connections', async () => {
    const gw = await start({ 'identity-auth': 'https://127.0.0.1:1' });
    try {
      const r = await call(gw, { method: 'POST', path: '/authenticate?method=password', body: '{}' });
      expect(r.status).toBe(503);
      expect(r.json.error.code).toBe('SERVICE_UNAVAILABLE');
    } finally {
      await gw.stop();
    }
  });

  it('answers 503 SERVICE_UNAVAILABLE when identity-auth is unreachable', async () => {
    const gw = await startGateway({
      bus, cache, internalSecret: SECRET, listen: { host: '127.0.0.1', port: 0 }, dataDir, upstreams: {},
      identityAuthGrpc: '127.0.0.1:1', log: () => undefined,
    });
    try {
      const r = await call(gw, { path: '/current-identity', headers: { 'zt-session': 'good' } });
      expect(r.status).toBe(503);
      expect(r.json.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(r.headers['www-authenticate']).toBeUndefined();
    } finally {
      await gw.stop();
    }
  });
});

describe('graceful shutdown', () => {
  it('lets an in-flight request finish, then refuses new connections', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-int3-'));
    const upstream = await startFakeUpstream();
    const identityAuth = await startFakeIdentityAuth();
    const bus = createInProcessBus();
    const gw = await startGateway({
      bus, cache: createMemoryCache(), internalSecret: SECRET, listen: { host: '127.0.0.1', port: 0 }, dataDir,
      upstreams: { 'identity-auth': upstream.url }, identityAuthGrpc: identityAuth.address, log: () => undefined,
    });
    try {
      const release = upstream.gate();
      const inFlight = call(gw, { method: 'POST', path: '/authenticate?method=password', body: '{}' });
      while (upstream.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
      const stopped = gw.stop();
      await new Promise((r) => setTimeout(r, 20));
      release();
      expect((await inFlight).status).toBe(200);
      await stopped;
      await expect(call(gw, { path: '/version' })).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      await upstream.close();
      await identityAuth.close();
      await bus.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
