import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dependencies } from '@ziti/errors';
import { type OwnServer, startOwnNats, startOwnPostgres, startOwnRedis } from '@ziti/test-kit';
import { type RunningController, startController } from './controller.js';
import { ADMIN_PASSWORD, api, identityNames, login } from './testing/controller-process.js';

// The all-in-one controller on a PostgreSQL, NATS and Redis of this file alone, whose PostgreSQL
// is stopped and started again under it.
jest.setTimeout(180_000);

let pg: OwnServer;
let nats: OwnServer;
let redis: OwnServer;
let ctrl: RunningController;
let dataDir: string;
const lines: string[] = [];

async function waitFor(done: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const readiness = async () => (await api(ctrl.port, 'GET', '/ziti-internal/readyz')).status;

beforeAll(async () => {
  [pg, nats, redis] = await Promise.all([startOwnPostgres(), startOwnNats(), startOwnRedis()]);
  dataDir = mkdtempSync(join(tmpdir(), 'ziti-outage-'));
  dependencies.setLog((l) => lines.push(l));
  ctrl = await startController({
    dataDir,
    databaseUrl: pg.url,
    natsUrl: nats.url,
    redisUrl: redis.url,
    listenHost: '127.0.0.1',
    port: 0, routerCtrlPort: 0,
    adminPassword: ADMIN_PASSWORD,
    internalSecret: 'outage-test-secret',
    log: () => undefined,
  });
});

afterAll(async () => {
  await ctrl?.stop();
  await Promise.all([pg?.close(), nats?.close(), redis?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('all-in-one controller losing its PostgreSQL', () => {
  it('answers 503 SERVICE_UNAVAILABLE without internal text, is not ready, logs the outage once, and serves again once it is back', async () => {
    const token = await login(ctrl.port);
    const kept = await api(ctrl.port, 'POST', '/edge/management/v1/identities', { token, body: { name: 'acknowledged-before', type: 'Device', isAdmin: false } });
    expect(kept.status).toBe(201);
    // The router control plane loads its data model in the background after the start: ready within moments.
    await waitFor(async () => (await readiness()) === 200, 'the gateway to report ready', 10_000);

    await pg.stop();
    await waitFor(async () => (await readiness()) === 503, 'the gateway to report not ready');

    const read = await api(ctrl.port, 'GET', '/edge/management/v1/identities', { token });
    const write = await api(ctrl.port, 'POST', '/edge/management/v1/identities', { token, body: { name: 'refused-during', type: 'Device', isAdmin: false } });
    const anonymousLogin = await api(ctrl.port, 'POST', '/edge/management/v1/authenticate?method=password', { body: { username: 'admin', password: ADMIN_PASSWORD } });
    for (const res of [read, write, anonymousLogin]) {
      expect(res.status).toBe(503);
      expect(res.body.error).toEqual({ code: 'SERVICE_UNAVAILABLE', message: 'The service is unavailable, try again later', requestId: expect.any(String) });
      const text = JSON.stringify(res.body);
      for (const internal of ['127.0.0.1', String(pg.port), 'ECONN', 'postgres', 'Connection', 'at ']) expect(text).not.toContain(internal);
    }

    await pg.start();
    await waitFor(async () => (await readiness()) === 200, 'the gateway to report ready again');
    const again = await login(ctrl.port);
    expect(await identityNames(ctrl.port, again, 'acknowledged-before')).toEqual(['acknowledged-before']);
    // The refused write left nothing behind.
    expect(await identityNames(ctrl.port, again, 'refused-during')).toEqual([]);

    const pgLines = lines.filter((l) => l.startsWith('dependency postgres'));
    expect(pgLines).toHaveLength(2);
    expect(pgLines[0]).toMatch(/^dependency postgres lost: /);
    const back = /^dependency postgres back after \d+\.\d s; (\d+) failed or held back meanwhile$/.exec(pgLines[1]!);
    expect(back).not.toBeNull();
    expect(Number(back![1])).toBeGreaterThanOrEqual(3);
    // Each context the gateway polls: one line when it stopped serving, one when it was back.
    const identityAuth = lines.filter((l) => l.startsWith('dependency context identity-auth'));
    expect(identityAuth).toHaveLength(2);
    expect(identityAuth[0]).toMatch(/^dependency context identity-auth lost: /);
    expect(identityAuth[1]).toMatch(/^dependency context identity-auth back after /);
  });
});
