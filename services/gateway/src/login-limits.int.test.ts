import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Cache, type EventBus, createInProcessBus, createRedisCache } from '@ziti/messaging';
import { testInfra } from '@ziti/test-kit';
import { type GatewayDeps, type RunningGateway, startGateway } from './index.js';
import { SECRET, call, startFakeIdentityAuth, startFakeLoginContext } from './testing/harness.js';

/**
 * The gateway's login limits and client address through real gateways on the real Redis, in front
 * of a fake identity-auth `/authenticate` (password `right` logs in, anything else is 401).
 */
describe('login limits and client addresses on real Redis', () => {
  let dataDir: string;
  let login: Awaited<ReturnType<typeof startFakeLoginContext>>;
  let identityAuth: Awaited<ReturnType<typeof startFakeIdentityAuth>>;
  const opened: { gw: RunningGateway; bus: EventBus; cache: Cache }[] = [];
  // One key space per run: the counters of earlier runs are not this run's.
  const keyPrefix = `ziti:test:limits:${randomUUID()}:`;
  const run = randomUUID().slice(0, 8);

  async function gateway(extra: Partial<GatewayDeps>): Promise<RunningGateway> {
    const bus = createInProcessBus();
    const cache = await createRedisCache((await testInfra()).redisUrl, { keyPrefix });
    const gw = await startGateway({
      bus, cache, internalSecret: SECRET, listen: { host: '127.0.0.1', port: 0 }, dataDir,
      upstreams: { 'identity-auth': login.url }, identityAuthGrpc: identityAuth.address, log: () => undefined, ...extra,
    });
    opened.push({ gw, bus, cache });
    return gw;
  }

  /** A password login through `gw` as `client` (an x-forwarded-for hop; believed only behind a trusted proxy). */
  const authenticate = (gw: RunningGateway, username: string, password: string, client?: string) =>
    call(gw, {
      method: 'POST',
      path: '/edge/client/v1/authenticate?method=password',
      headers: { 'content-type': 'application/json', ...(client ? { 'x-forwarded-for': client } : {}) },
      body: JSON.stringify({ username, password }),
    });
  const reached = (username: string) => login.logins.filter((l) => l.username === username).length;

  let direct: RunningGateway; // no trusted proxy, default limits
  let a: RunningGateway; // behind a trusted proxy (127.0.0.1), default limits
  let b: RunningGateway; // a second replica of a, same Redis

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'gw-limits-'));
    login = await startFakeLoginContext();
    identityAuth = await startFakeIdentityAuth();
    direct = await gateway({});
    a = await gateway({ trustedProxies: ['127.0.0.1'] });
    b = await gateway({ trustedProxies: ['127.0.0.0/8'] });
  });

  afterAll(async () => {
    for (const { gw, bus, cache } of opened) {
      await gw.stop();
      await bus.close();
      await cache.close();
    }
    await login?.close();
    await identityAuth?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describe('client address', () => {
    it('a direct client’s x-forwarded-for is dropped: the context sees the socket’s address', async () => {
      const r = await authenticate(direct, `spoof-${run}`, 'right', '203.0.113.7');
      expect(r.status).toBe(200);
      expect(r.json.data.ipAddress).toBe('127.0.0.1');
      expect(login.logins.at(-1)!.forwardedFor).toBe('127.0.0.1');
    });

    it('behind a trusted proxy the first untrusted forwarded hop from the right is the client', async () => {
      const r = await authenticate(a, `proxied-${run}`, 'right', '198.51.100.99, 203.0.113.7');
      expect(r.status).toBe(200);
      expect(r.json.data.ipAddress).toBe('203.0.113.7');
    });
  });

  describe('failed-login limits', () => {
    it('a burst of wrong passwords for one user meets 429 SERVER_TOO_MANY_REQUESTS, which never reaches identity-auth; another user gets in meanwhile', async () => {
      const alice = `alice-${run}`;
      const statuses: number[] = [];
      for (let i = 1; i <= 14; i++) {
        const r = await authenticate(a, alice, `wrong-${i}`, `198.51.100.${i}`);
        statuses.push(r.status);
        if (r.status === 429) {
          expect(r.json).toEqual({
            error: { code: 'SERVER_TOO_MANY_REQUESTS', message: expect.any(String), requestId: expect.any(String) },
            meta: { apiVersion: '0.0.1', apiEnrollmentVersion: '0.0.1' },
          });
        }
      }
      expect(statuses).toEqual([...Array<number>(10).fill(401), 429, 429, 429, 429]);
      expect(reached(alice)).toBe(10);
      expect((await authenticate(a, alice, 'right', '198.51.100.50')).status).toBe(429); // even the right password, until the window ends
      expect((await authenticate(a, `bob-${run}`, 'right', '203.0.113.20')).status).toBe(200);
    });

    it('a concurrent burst ends refused too, with nothing but 401 and 429 on the way', async () => {
      const carol = `carol-${run}`;
      const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => authenticate(a, carol, `wrong-${i}`, `192.0.2.${i + 1}`)));
      for (const r of burst) expect([401, 429]).toContain(r.status);
      expect((await authenticate(a, carol, 'wrong-again', '192.0.2.100')).status).toBe(429);
    });

    it('counts per client address across usernames', async () => {
      const from = '198.51.100.200';
      for (let i = 0; i < 30; i++) expect((await authenticate(a, `sprayed-${run}-${i}`, 'wrong', from)).status).toBe(401);
      expect((await authenticate(a, `sprayed-${run}-new`, 'right', from)).status).toBe(429);
      expect((await authenticate(a, `sprayed-${run}-new`, 'right', '198.51.100.201')).status).toBe(200);
    });

    it('two gateway replicas share the counts through Redis', async () => {
      const dave = `dave-${run}`;
      for (let i = 0; i < 6; i++) expect((await authenticate(a, dave, 'wrong', `203.0.113.${100 + i}`)).status).toBe(401);
      for (let i = 0; i < 4; i++) expect((await authenticate(b, dave, 'wrong', `203.0.113.${110 + i}`)).status).toBe(401);
      expect((await authenticate(b, dave, 'wrong', '203.0.113.120')).status).toBe(429);
      expect((await authenticate(a, dave, 'wrong', '203.0.113.121')).status).toBe(429);
      expect(reached(dave)).toBe(10);
    });

    it('with the limits and the limiter off nothing is refused', async () => {
      const off = await gateway({ loginFailureLimits: { perUsername: 0, perAddress: 0 }, authRateLimiter: { enabled: false } });
      const erin = `erin-${run}`;
      for (let i = 0; i < 40; i++) expect((await authenticate(off, erin, 'wrong')).status).toBe(401);
      expect((await authenticate(off, erin, 'right')).status).toBe(200);
    });
  });

  describe('auth rate limiter', () => {
    it('refuses logins beyond the window of outstanding ones with 429 in the envelope, and admits again once they are answered', async () => {
      const small = await gateway({ authRateLimiter: { minSize: 5, maxSize: 5 }, loginFailureLimits: { perUsername: 0, perAddress: 0 } });
      const release = login.gate();
      const held = Array.from({ length: 5 }, (_, i) => authenticate(small, `held-${run}-${i}`, 'right'));
      const waitFor = async (n: number) => {
        while (login.logins.filter((l) => l.username?.startsWith(`held-${run}`)).length < n) await new Promise((r) => setTimeout(r, 10));
      };
      await waitFor(5);
      const refused = await authenticate(small, `late-${run}`, 'right');
      expect(refused.status).toBe(429);
      expect(refused.json.error.code).toBe('SERVER_TOO_MANY_REQUESTS');
      expect(reached(`late-${run}`)).toBe(0);
      release();
      expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      expect((await authenticate(small, `late-${run}`, 'right')).status).toBe(200);
    });
  });
});
