import type { IncomingMessage, ServerResponse } from 'node:http';
import { internalRequest, lifecycleConfig, listenHttp, servePending, waitForDependency } from './index.js';

async function get(url: string): Promise<{ status: number; json: any; connection?: string }> {
  const res = await internalRequest(url, { as: 'gateway' });
  return { status: res.status, json: res.json, connection: res.headers.connection as string | undefined };
}

describe('lifecycleConfig', () => {
  it('defaults to a 20 s grace and a 300 s dependency wait, and bounds both', () => {
    expect(lifecycleConfig({})).toEqual({ shutdownGraceMs: 20_000, dependencyWaitMs: 300_000 });
    expect(lifecycleConfig({ ZITI_SHUTDOWN_GRACE_SECONDS: '5', ZITI_DEPENDENCY_WAIT_SECONDS: '0' })).toEqual({ shutdownGraceMs: 5_000, dependencyWaitMs: 0 });
    expect(() => lifecycleConfig({ ZITI_SHUTDOWN_GRACE_SECONDS: '-1' })).toThrow(/ZITI_SHUTDOWN_GRACE_SECONDS/);
    expect(() => lifecycleConfig({ ZITI_DEPENDENCY_WAIT_SECONDS: 'soon' })).toThrow(/ZITI_DEPENDENCY_WAIT_SECONDS/);
  });
});

describe('waitForDependency', () => {
  const fast = { firstMs: 5, maxMs: 20 };

  it('retries until the dependency answers, logging one line while down and one when it answers', async () => {
    const lines: string[] = [];
    let calls = 0;
    const value = await waitForDependency('NATS', async () => {
      calls++;
      if (calls < 5) throw new Error('connect ECONNREFUSED 127.0.0.1:4222\n    at stack line');
      return 'bus';
    }, { timeoutMs: 5_000, log: (m) => lines.push(m), delays: fast });
    expect(value).toBe('bus');
    expect(calls).toBe(5);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe('waiting for NATS: connect ECONNREFUSED 127.0.0.1:4222 at stack line (retrying for up to 5 s)');
    expect(lines[1]).toMatch(/^NATS is reachable \(waited \d+\.\d s\)$/);
  });

  it('gives up after the bound with the dependency and its last error in the message', async () => {
    const started = Date.now();
    await expect(
      waitForDependency('PostgreSQL', async () => { throw new Error('password authentication failed'); }, { timeoutMs: 200, log: () => undefined, delays: fast }),
    ).rejects.toThrow(/^PostgreSQL is not reachable after 0 s: password authentication failed$/);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('tries once when the wait is 0', async () => {
    let calls = 0;
    await expect(waitForDependency('Redis', async () => { calls++; throw new Error('ECONNREFUSED'); }, { timeoutMs: 0, log: () => undefined })).rejects.toThrow(
      'Redis is not reachable: ECONNREFUSED',
    );
    expect(calls).toBe(1);
  });
});

describe('servePending', () => {
  it('answers healthz 200, readyz and everything else 503 until closed', async () => {
    const probe = await listenHttp((_req, res) => res.end(), '127.0.0.1', 0, 'policy');
    const port = probe.port;
    await probe.close();
    const pending = await servePending('policy', '127.0.0.1', port);
    try {
      expect(await get(`https://127.0.0.1:${port}/healthz`)).toMatchObject({ status: 200, json: { service: 'policy', status: 'ok' } });
      expect(await get(`https://127.0.0.1:${port}/readyz`)).toMatchObject({ status: 503, json: { service: 'policy', ready: false } });
      const other = await get(`https://127.0.0.1:${port}/edge/management/v1/identities`);
      expect(other.status).toBe(503);
      expect(other.json.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', requestId: expect.any(String) });
    } finally {
      await pending.close();
    }
    await expect(get(`https://127.0.0.1:${port}/readyz`)).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe('listenHttp close', () => {
  it('answers new requests 503 while one is in flight, lets that one finish, then closes', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const app = (req: IncomingMessage, res: ServerResponse) => {
      if (req.url === '/slow') void held.then(() => res.end('done'));
      else res.end('{}');
    };
    const http = await listenHttp(app, '127.0.0.1', 0, 'policy');
    const slow = new Promise<string>((resolve, reject) => {
      internalRequest(`${http.url}/slow`, { as: 'gateway' }).then((r) => resolve(r.text), reject);
    });
    await new Promise((r) => setTimeout(r, 50));
    let closed = false;
    const closing = http.close().then(() => (closed = true));
    const refused = await get(`${http.url}/readyz`);
    expect(refused.status).toBe(503);
    expect(refused.connection).toBe('close');
    expect(refused.json.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(closed).toBe(false);
    release();
    expect(await slow).toBe('done');
    await closing;
    await expect(get(`${http.url}/readyz`)).rejects.toThrow(/ECONNREFUSED/);
  });
});
